"""The one callback that owns a user's state: URL, scenario picker, upload, table edits, the options builder, reset.

Every way of changing the scenario goes through here, so the state in the browser's
``dcc.Store``, the shareable URL, the picker and the assumptions table always agree.
"""

from __future__ import annotations

import base64
import hashlib
from typing import NamedTuple

from dash import Input, Output, State, ctx, html, no_update

from tco.foundation.errors import FieldError, FieldWarning, InputError, shown_lines
from tco.foundation.files import slug
from tco.foundation.formatting import quantity
from tco.foundation.labels import param_label
from tco.inputs.parameters import MAX_EDITS
from tco.inputs.yaml_files import MAX_YAML_BYTES
from tco.present.comparison import compare
from tco.present.training_comparison import compare_training

from .builder import BUTTONS, FIELDS, PICKERS, TRIGGERS, BuilderForm, builder_view, requested_edit, with_option_edit
from .context import AppContext
from .pages.assumptions import table_rows, tooltips
from .program_panel import BUTTON as PROGRAM_BUTTON
from .program_panel import FIELDS as PROGRAM_FIELDS
from .program_panel import ProgramForm, with_program_edits
from .state import UPLOAD, _load_upload, base_scenario, current_scenario, query_from_state, state_from_query, validated_edits


def _messages(errors: list[FieldError], warnings: list[FieldWarning] = ()):
    """Broken rules, then warnings (accepted values outside their sourced range), each as a list item."""
    if not errors and not warnings:
        return None
    return html.Div([html.Ul([html.Li(line) for line in shown_lines(errors)], className="errors") if errors else None,
                     html.Ul([html.Li(f"warning: {line}") for line in shown_lines(list(warnings))], className="warnings")
                     if warnings else None])


#: largest upload read (base64 text of a YAML file at the YAML reader's size limit)
MAX_UPLOAD_CHARS = MAX_YAML_BYTES * 4 // 3 + 1024


class StateUpdate(NamedTuple):
    """What one run of the controller answers: the new state and everything that shows it."""

    state: dict
    search: str
    picked: str
    picker_options: list[dict]
    rows: list[dict]
    #: a value refused in the table, a warning (on the Assumptions tab)
    edit_messages: object
    #: a broken shared link, an upload refused or with warnings (under the header, on every tab)
    messages: object
    #: an option edit refused, or value edits dropped with it (under the options builder)
    builder_messages: object
    #: a chip program edit refused (under the chip program panel, on the Break-even tab)
    program_messages: object = None


def update_state(trigger, search, picked, upload, upload_name, rows, state, ctx_: AppContext,
                 form: BuilderForm | None = None, program: ProgramForm | None = None) -> StateUpdate:
    """The new state and what shows it, after ``trigger`` (the id of the control that changed; None: the URL decides).

    ``form`` holds the options builder's fields when ``trigger`` is one of its controls
    (:data:`tco_app.builder.TRIGGERS`): the edit it asks for is applied through the one validated path, or named and
    not applied. ``program`` holds the chip program panel's fields when ``trigger`` is its "Apply" button
    (:func:`tco_app.program_panel.with_program_edits`).
    """
    state = dict(state or {"scenario": ctx_.default, "upload": None, "set": {}})
    errors: list[FieldError] = []
    notices: list[FieldError] = []
    builder_errors: list[FieldError] = []
    program_errors: list[FieldError] = []
    raw, problems = {}, {}
    try:
        current_scenario(state, ctx_.choices)
    except InputError as exc:  # a crafted or stale state: start again from the link
        trigger, notices = None, exc.errors
    if trigger in (None, "url"):
        state, link_errors = state_from_query(search, ctx_.choices, ctx_.default)
        notices = notices + [FieldError(f"shared link: {e.path}", e.value, e.rule) for e in link_errors]
    elif trigger == "scenario-picker" and picked and picked != state.get("scenario"):
        if picked == UPLOAD and not state.get("upload"):
            picked = ctx_.default
        state = {"scenario": picked, "upload": state.get("upload") if picked == UPLOAD else None, "set": {},
                 **({"upload_name": state.get("upload_name")} if picked == UPLOAD else {})}
    elif trigger == "upload" and upload:
        name = slug(upload_name or "uploaded file", "uploaded-file")
        try:
            text = uploaded_text(upload)
            scenario = _load_upload(text)
            state = {"scenario": UPLOAD, "upload": text, "set": {}, "upload_name": name}
            notices = [FieldWarning(f"{name}: {w.path}", w.value, w.message) for w in scenario.warnings]
        except InputError as exc:
            notices = [FieldError(f"{name}: {e.path}", e.value, e.rule) for e in exc.errors]
    elif trigger == "reset-edits":
        state = {**state, "set": {}, "options": []}
    elif trigger == "params-table" and rows:
        base = base_scenario(state, ctx_.choices)
        accepted, errors, _warnings = validated_edits(base, {r.get("name"): r.get("value") for r in rows[:MAX_EDITS]})
        kept = {e.path: state.get("set", {})[e.path] for e in errors if e.path in state.get("set", {})}
        state = {**state, "set": {**accepted, **kept}}
        raw = {e.path: e.value for e in errors}
        problems = {e.path: e.rule for e in errors}
    elif trigger in TRIGGERS and form is not None:
        text = requested_edit(trigger, form, base_scenario(state, ctx_.choices))
        if text is not None:
            state, builder_errors = with_option_edit(state, text, ctx_.choices)
    elif trigger == PROGRAM_BUTTON and program is not None:
        state, program_errors = with_program_edits(state, program, ctx_.choices)
    base = base_scenario(state, ctx_.choices)
    scenario = base.with_values(state["set"])
    edit_warnings = [w for w in scenario.warnings if w.path in state["set"]]
    messages = _messages([e for e in notices if isinstance(e, FieldError)], [w for w in notices if isinstance(w, FieldWarning)])
    return StateUpdate(state, query_from_state(state), state["scenario"], picker_options(ctx_, state),
                       table_rows(scenario, raw, problems, base), _messages(errors, edit_warnings), messages,
                       _messages(builder_errors), _messages(program_errors))


def picker_options(ctx_: AppContext, state) -> list[dict]:
    """The scenario picker's entries: the bundled scenarios, and the uploaded file while there is one."""
    options = [{"label": k, "value": k} for k in ctx_.choices]
    if state.get("upload"):
        options.append({"label": f"uploaded: {state.get('upload_name') or 'file'}", "value": UPLOAD})
    return options


def edit_banner(state, base, ctx_: AppContext) -> tuple[bool, str]:
    """``(hidden, text)`` of the banner that counts the edits (options built, values edited) against the scenario file."""
    edits = state.get("set") or {}
    built = state.get("options") or []
    if not edits and not built:
        return True, ""
    name = state.get("upload_name") if state.get("scenario") == UPLOAD else state.get("scenario")
    params = base.params
    shown = "; ".join(f"{param_label(k)} {quantity(v, params[k].unit)} (was {quantity(params[k].value, params[k].unit)})"
                      for k, v in list(edits.items())[:3] if k in params)
    more = f" and {len(edits) - 3} more" if len(edits) > 3 else ""
    options = (f"{len(built)} option edit{'s' if len(built) != 1 else ''} ({', '.join(built[:3])}"
               f"{f' and {len(built) - 3} more' if len(built) > 3 else ''})")
    scenario = base.with_values(edits)
    now = compare(scenario, with_flips=False).decision.headline if getattr(scenario, "kind", "inference") != "training" \
        else compare_training(scenario, with_flips=False).verdict
    outside = [w for w in scenario.warnings if w.path in edits]
    warned = (f"; {len(outside)} outside {'its' if len(outside) == 1 else 'their'} sourced range (warnings on the "
              "Assumptions tab)") if outside else ""
    counted = " and ".join(([f"{len(edits)} value{'s' if len(edits) != 1 else ''} edited"] if edits else []) +
                           ([options] if built else []))
    values = f": {shown}{more} (marked on the Assumptions tab{warned})" if edits else ""
    return False, f"{counted} from the scenario '{name}'{values}. Now: {now}"


def uploaded_text(contents: str) -> str:
    """The UTF-8 text of a ``dcc.Upload`` data URL; :class:`InputError` when too large or not text."""
    if not isinstance(contents, str) or len(contents) > MAX_UPLOAD_CHARS:
        raise InputError.one("uploaded file", f"{len(contents) if isinstance(contents, str) else 0:,} characters",
                             f"is too large: a scenario file is at most {MAX_YAML_BYTES:,} bytes")
    try:
        data = base64.b64decode(contents.split(",", 1)[-1], validate=True)
    except ValueError:
        raise InputError.one("uploaded file", None, "is not a file upload (base64 data URL)") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError.one("uploaded file", None, f"is not UTF-8 text (byte {exc.start}): is it a binary file?") from None


def register(app, ctx_: AppContext) -> None:
    @app.callback(
        Output("state", "data"), Output("url", "search"), Output("scenario-picker", "value"),
        Output("scenario-picker", "options"), Output("params-table", "data"), Output("edit-errors", "children"),
        Output("messages", "children"), Output("builder-messages", "children"), Output("program-messages", "children"),
        Output("edit-banner", "hidden"),
        Output("edit-banner-text", "children"), Output("params-table", "tooltip_data"), Output("scenario-key", "data"),
        Output("baseline-picker", "options"), Output("baseline-picker", "value"), Output("model-picker", "options"),
        Output("model-picker", "value"), Output("builder-option", "options"), Output("builder-option", "value"),
        Output("builder", "hidden"),
        Input("url", "search"), Input("scenario-picker", "value"), Input("upload", "contents"),
        Input("params-table", "data_timestamp"), Input("reset-edits", "n_clicks"),
        *[Input(ident, "n_clicks") for ident in BUTTONS], *[Input(ident, "value") for ident in PICKERS],
        Input(PROGRAM_BUTTON, "n_clicks"),
        State("upload", "filename"), State("params-table", "data"), State("state", "data"), State("scenario-key", "data"),
        *[State(ident, "value") for ident in FIELDS], *[State(ident, "value") for ident in PROGRAM_FIELDS])
    def controller(search, picked, upload, _stamp, _reset, _add, _remove, _rename, baseline, model, _apply, upload_name,
                   rows, state, shown_key, *fields):
        trigger = ctx.triggered_id if ctx.triggered else None
        if state is None:
            trigger = None  # first load: the URL decides
        builder_fields, program_fields = fields[:len(FIELDS)], fields[len(FIELDS):]
        out = update_state(trigger, search, picked, upload, upload_name, rows, state, ctx_,
                           BuilderForm(*builder_fields, baseline, model), ProgramForm(*program_fields))
        key = scenario_key(out.state)
        same = key == shown_key  # only the edits changed: the sources (tooltips) and the option lists stay
        base = base_scenario(out.state, ctx_.choices)
        return (*out, *edit_banner(out.state, base, ctx_), no_update if same else tooltips(out.rows),
                no_update if same else key, *builder_view(base))


def scenario_key(state) -> dict:
    """What names the scenario apart from its value edits (the file and the options built): the views that list its
    options and parameters (dropdowns) follow this, not every edit."""
    upload = state.get("upload") or ""
    return {"scenario": state.get("scenario"), "upload": state.get("upload_name"), "size": len(upload),
            "hash": hashlib.sha256(upload.encode()).hexdigest()[:16] if upload else "", "options": state.get("options") or []}
