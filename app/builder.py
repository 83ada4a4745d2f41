"""The options builder on the Compare page: add an option (colocated on a device, or prefill on one device, decode on
another and a KV link), remove or rename one, choose the baseline and the model, download the built scenario as YAML.

The panel only asks. Each click is the text of an edit (:mod:`tco.inputs.option_edits`, the same text as the command
line's flags and the shared link's ``option=``), which the controller (:mod:`tco_app.controller`, the one owner of the
state) appends to the state's ``options`` list and reads through :func:`tco.inputs.option_edits.edited_scenario`; an
edit the built scenario refuses is named under the panel and not applied. The state in the browser holds the edits,
never the built scenario, and every view rebuilds it from them (:func:`tco_app.state.base_scenario`).
"""

from __future__ import annotations

from dataclasses import dataclass

from dash import Input, Output, State, dcc, html, no_update

from tco.foundation.errors import FieldError, InputError
from tco.inputs.option_edits import (
    RemoveOption,
    RenameOption,
    SetBaseline,
    SetModel,
    added_option_text,
    builder_choices,
    edit_text,
)
from tco.inputs.variants import placement_name, scenario_link

from .context import SCENARIO, AppContext
from .controls import dropdown, keep
from .state import base_scenario, validated_edits
from .tables import scenario_download


@dataclass(frozen=True)
class BuilderForm:
    """What the panel's fields hold when a button is clicked or a picker changed (the controller's ``State``\\ s)."""

    kind: str | None = None
    device: str | None = None
    prefill: str | None = None
    decode: str | None = None
    link: str | None = None
    name: str | None = None
    option: str | None = None
    new_name: str | None = None
    #: the "rent the devices" box: ``["rented"]`` when ticked
    rented: list | None = None
    baseline: str | None = None
    model: str | None = None


#: the panel's fields the controller reads when a button is clicked (its ``State``\\ s), in :class:`BuilderForm`'s order
FIELDS = ("builder-kind", "builder-device", "builder-prefill", "builder-decode", "builder-link", "builder-name",
          "builder-option", "builder-new-name", "builder-rented")
#: the buttons and the pickers whose click or change is an option edit (the controller's ``Input``\\ s); the pickers'
#: values are the last two of :class:`BuilderForm`
BUTTONS = ("option-add", "option-remove", "option-rename")
PICKERS = ("baseline-picker", "model-picker")
TRIGGERS = BUTTONS + PICKERS


def requested_edit(trigger: str, form: BuilderForm, scenario) -> str | None:
    """The text of the edit ``trigger`` asks for with the fields of ``form``; None when it changes nothing (a picker
    set to what the scenario has, a button with no option chosen)."""
    if trigger == "option-add":
        if form.kind == "split":
            devices, link = {"prefill": form.prefill or "", "decode": form.decode or ""}, form.link
        else:
            devices, link = {"colocated": form.device or ""}, None
        name = (form.name or "").strip() or placement_name(devices.get("prefill", form.device or ""),
                                                           devices.get("decode", form.device or ""))
        rented = "rented" in (form.rented or [])
        return added_option_text(f"{name}-rented" if rented and not (form.name or "").strip() else name, devices, link,
                                 rented)
    if trigger == "option-remove":
        return edit_text(RemoveOption(form.option)) if form.option else None
    if trigger == "option-rename":
        return edit_text(RenameOption(form.option, (form.new_name or "").strip())) if form.option else None
    if trigger == "baseline-picker":
        return edit_text(SetBaseline(form.baseline)) if form.baseline and form.baseline != scenario.structure.baseline \
            else None
    if trigger == "model-picker":
        return edit_text(SetModel(form.model)) if form.model and form.model != scenario.structure.model else None
    return None


def appended(texts: list[str], text: str) -> list[str]:
    """``texts`` with the edit ``text`` after them; a baseline, model or node edit right after another of its kind
    replaces it (picking three baselines in a row is one edit)."""
    kind = text.partition(":")[0]
    if texts and kind in ("baseline", "model", "node") and texts[-1].partition(":")[0] == kind:
        return [*texts[:-1], text]
    return [*texts, text]


def with_option_edit(state: dict, text: str, choices) -> tuple[dict, list[FieldError]]:
    """The state with the option edit ``text`` applied, and what it refused or dropped.

    Parameters
    ----------
    state : dict
        The user's state (``scenario``, ``upload``, ``set``, ``options``).
    text : str
        The edit (:func:`requested_edit`).
    choices : Mapping[str, str]
        The app's scenario choices.

    Returns
    -------
    state : dict
        The new state; the same state when the built scenario refuses the edit.
    errors : list of FieldError
        The rules the edit breaks (it is not applied), or the parameter edits the built scenario no longer has (they
        are dropped: an edit of a removed option's device price).
    """
    candidate = {**state, "options": appended(list(state.get("options") or []), text)}
    try:
        base = base_scenario(candidate, choices)
    except InputError as exc:
        return state, exc.errors
    accepted, refused, _warnings = validated_edits(base, state.get("set") or {})
    return {**candidate, "set": accepted}, [FieldError(e.path, e.value, f"{e.rule}; this value edit is dropped with the "
                                                                         "options changed") for e in refused]


def builder_view(scenario) -> tuple:
    """``(baseline options, baseline, model options, model, option options, option, panel hidden)`` for ``scenario``:
    the pickers follow the built scenario; the panel is hidden on a training scenario."""
    if getattr(scenario, "kind", "inference") != "inference":
        return [], None, [], None, [], None, True
    names = [o.name for o in scenario.structure.options]
    general = [o.name for o in scenario.structure.options if not o.specialized]
    models = builder_choices(scenario).models
    return ([{"label": n, "value": n} for n in general], scenario.structure.baseline,
            [{"label": m, "value": m} for m in models], scenario.structure.model,
            [{"label": n, "value": n} for n in names], names[-1], False)


def builder_panel() -> html.Details:
    """The panel's controls (filled by :func:`register`'s callbacks and the controller)."""
    return html.Details(id="builder", className="builder", open=True, children=[
        html.Summary("Build the options: add a device or a split, remove, rename, choose the baseline and the model"),
        html.Div(className="controls", children=[
            html.Div(className="control", children=[
                html.Label("add an option", htmlFor="builder-kind"),
                dcc.RadioItems(id="builder-kind", value="colocated", inline=True, className="radio",
                               options=[{"label": "colocated", "value": "colocated"},
                                        {"label": "prefill / decode split", "value": "split"}])]),
            html.Div(id="builder-colocated", className="controls tight", children=[
                dropdown("builder-device", "device", "190px", options=[])]),
            html.Div(id="builder-split", className="controls tight", style={"display": "none"}, children=[
                dropdown("builder-prefill", "prefill on", "170px", options=[]),
                dropdown("builder-decode", "decode on", "170px", options=[]),
                dropdown("builder-link", "KV link", "130px", options=[])]),
            dcc.Checklist(id="builder-rented", className="radio", value=[],
                          options=[{"label": "rent the devices (per device-hour)", "value": "rented"}],
                          inputStyle={"marginRight": "4px"}),
            html.Div(className="control", children=[
                html.Label("name (empty: the device)", htmlFor="builder-name"),
                dcc.Input(id="builder-name", type="text", placeholder="b200", style={"width": "150px"})]),
            html.Button("Add option", id="option-add", title="an existing name is replaced by the new option (a swap)"),
        ]),
        html.Div(className="controls", children=[
            dropdown("builder-option", "option", "210px", options=[]),
            html.Button("Remove", id="option-remove"),
            html.Div(className="control", children=[
                html.Label("rename to", htmlFor="builder-new-name"),
                dcc.Input(id="builder-new-name", type="text", style={"width": "150px"})]),
            html.Button("Rename", id="option-rename"),
            dropdown("baseline-picker", "baseline (general-purpose)", "210px", options=[]),
            dropdown("model-picker", "model", "190px", options=[]),
            html.Button("Download scenario YAML", id="builder-download-button",
                        title="the scenario as built and edited: `tco compare FILE` reads it"),
            dcc.Download(id="builder-download"),
        ]),
        html.Div(id="builder-messages", className="errors-box"),
    ])


def default_devices(scenario) -> tuple[str | None, str | None, str | None]:
    """``(device, prefill device, decode device)`` the panel proposes: the first catalog device no option uses, the
    baseline's device, and the first specialized device of the scenario (else the first other device)."""
    used = [p.device for o in scenario.structure.options for p in o.pools]
    devices = builder_choices(scenario).devices
    baseline = scenario.structure.option(scenario.structure.baseline).pools[0].device
    special = next((p.device for o in scenario.structure.options for p in o.pools if p.specialized), None)
    return (next((d for d in devices if d not in used), devices[0]), baseline,
            special or next((d for d in devices if d != baseline), baseline))


def register(app, ctx: AppContext) -> None:
    app.clientside_callback(
        "function (kind) { return [{display: kind === 'split' ? 'none' : 'flex'}, "
        "{display: kind === 'split' ? 'flex' : 'none'}]; }",
        Output("builder-colocated", "style"), Output("builder-split", "style"), Input("builder-kind", "value"))

    @app.callback(*[Output(ident, prop) for ident in ("builder-device", "builder-prefill", "builder-decode", "builder-link")
                    for prop in ("options", "value")],
                  SCENARIO, State("state", "data"),
                  *[State(ident, "value") for ident in ("builder-device", "builder-prefill", "builder-decode", "builder-link")],
                  prevent_initial_call=True)
    def refill(_key, state, device, prefill, decode, link):
        scenario = ctx.scenario(state)
        if getattr(scenario, "kind", "inference") != "inference":
            return (no_update,) * 8
        choices = builder_choices(scenario)
        devices = [{"label": d, "value": d} for d in choices.devices]
        links = [{"label": x, "value": x} for x in choices.links]
        proposed = default_devices(scenario)
        picked = [keep(v, devices) if v else p for v, p in zip((device, prefill, decode), proposed, strict=True)]
        return (devices, picked[0], devices, picked[1], devices, picked[2], links,
                keep(link, links) if link else scenario_link(scenario))

    @app.callback(Output("builder-download", "data"), Input("builder-download-button", "n_clicks"), State("state", "data"),
                  prevent_initial_call=True)
    def download(_clicks, state):
        return scenario_download(ctx.scenario(state))
