"""The chip program panel on the Break-even tab: the program's total NRE (split over the node's five sourced parts by
their shares), the process node, the respin probability and the slip a respin costs, the units sold to others; and the
program's break-evens beside them (volume, external sales, demand), read off the core
(:func:`tco.analysis.program_views.program_view`), never recomputed here.

The panel only asks, as the options builder does (:mod:`tco_app.builder`): "Apply" hands its fields to the controller
(:mod:`tco_app.controller`, the one owner of the state), which turns a new node into the edit ``node:NODE``
(:class:`tco.inputs.option_edits.SetNode`) and the numbers into value edits (``program.nre_scale``,
``program.respin_probability``, ``program.respin_slip_years``, ``program.external_units``) checked like every other
edit; a field left at the scenario's figure asks for nothing. The URL, the banner and the Assumptions tab follow.
"""

from __future__ import annotations

from dataclasses import dataclass

from dash import Output, html

from tco.analysis.evaluation import analyse_scenario
from tco.analysis.program_views import PROGRAM_FIELDS, nre_scale_for_total, planned_nre_usd, program_view
from tco.core import names as named
from tco.core.outputs import COMPARISON_OUTPUTS, OPTION_OUTPUTS
from tco.foundation.errors import FieldError, InputError
from tco.foundation.fields import Field
from tco.foundation.formatting import quantity
from tco.foundation.labels import field_label
from tco.foundation.plain_values import scalar
from tco.foundation.user_numbers import read_number
from tco.inputs.option_edits import SetNode, builder_choices, edit_text

from .builder import with_option_edit
from .context import AppContext, view_state
from .controls import dropdown, number
from .glossary import terms_line
from .state import base_scenario, current_scenario, validated_edits
from .tables import table_block

#: the panel's fields the controller reads when "Apply" is clicked (its ``State``\\ s), in :class:`ProgramForm`'s order
FIELDS = ("program-total", "program-node", "program-respin", "program-slip", "program-external")
BUTTON = "program-apply"
#: the total NRE as typed (not a parameter: it sets ``program.nre_scale``); the domain of the NRE parts
TOTAL_NRE = Field("USD", 0.0, 5e12, description="the program's NRE, split over the node's parts by their shares")
#: the value edits the numeric fields ask for, by field
EDITED = {"program-respin": named.program.respin_probability, "program-slip": named.program.respin_slip_years,
          "program-external": named.program.external_units}


@dataclass(frozen=True)
class ProgramForm:
    """What the panel's fields hold when "Apply" is clicked."""

    total: str | None = None
    node: str | None = None
    respin: str | None = None
    slip: str | None = None
    external: str | None = None


def builds_chip(scenario) -> bool:
    """Whether ``scenario`` builds its own chip (an inference scenario with a ``program:`` block)."""
    return getattr(scenario, "kind", "inference") == "inference" and scenario.structure.program_device is not None


@dataclass(frozen=True)
class ProgramRequest:
    """What "Apply" asks of a scenario: the node edit's text (None: the same node), value edits as typed, the program's
    total NRE (None: unchanged; the controller turns it into ``program.nre_scale`` at the node it ends on) and the
    fields refused."""

    node_edit: str | None
    edits: dict[str, object]
    total_usd: float | None
    errors: list[FieldError]


def requested_edits(form: ProgramForm, scenario) -> ProgramRequest:
    """What ``form`` asks of ``scenario``; a field at the scenario's own figure asks for nothing."""
    if not builds_chip(scenario):
        return ProgramRequest(None, {}, None, [FieldError("program", scenario.name,
                                                          "this scenario builds no chip (no program: block)")])
    values = scenario.values()
    node = form.node if form.node and form.node != scenario.spec.program.node else None
    edits: dict[str, object] = {}
    for ident, name in EDITED.items():
        raw = getattr(form, ident.removeprefix("program-"))
        if raw not in (None, "") and str(raw).strip() != shown_value(values[name], scenario.params[name].unit):
            edits[name] = raw
    total, errors = None, []
    if form.total not in (None, "") and str(form.total).strip() != shown_total(values):
        try:
            total = float(read_number(form.total, TOTAL_NRE, "total NRE"))
        except InputError as exc:
            errors = exc.errors
    return ProgramRequest(edit_text(SetNode(node)) if node else None, edits, total, errors)


def shown_value(value, unit: str) -> str:
    """A parameter's value as its field shows it (``0.76``, ``0.5``, ``120,000``)."""
    return f"{float(value):,.6g}" if unit != "fraction" else f"{float(value):.6g}"


def shown_total(values) -> str:
    """The program's total NRE as its field shows it, in million USD (``109M``)."""
    return f"{planned_nre_usd(values) / 1e6:,.6g}M"


def panel() -> html.Details:
    """The panel's controls and its results box (filled by :func:`register`)."""
    return html.Details(id="program-panel", className="builder", open=True, children=[
        html.Summary("The chip program: total NRE, process node, respin, units sold to others"),
        html.Div(id="program-controls", className="controls", children=[
            number("program-total", "total NRE, USD (split over the node's parts)", width="170px"),
            dropdown("program-node", "process node", "110px", options=[]),
            number("program-respin", "respin probability", width="110px"),
            number("program-slip", "slip a respin costs, years", width="110px"),
            number("program-external", "units sold to others", width="130px"),
            html.Button("Apply", id=BUTTON, title="edit the scenario: the URL, the banner and the Assumptions tab follow"),
        ]),
        html.Div(id="program-messages", className="errors-box"),
        html.Div(id="program-result", className="result-box"),
        terms_line("break-even", "respin"),
    ])


def program_rows(scenario) -> html.Div:
    """The program's figures per option on the built chip (the core's, :func:`program_view`), and the NRE parts its
    schedule spends (:func:`tco.core.money.costs.program_schedule`)."""
    analysis = analyse_scenario(scenario)
    view = program_view(analysis)
    schedule = analysis.options[next(iter(view))].money.program
    parts = "; ".join(f"{field_label(part)} {quantity(scalar(schedule.parts[part]), 'USD')}"
                      for part in named.program_nre.fields)
    rows = [["program-deployment_year", OPTION_OUTPUTS["deployment_year"].title,
             *(OPTION_OUTPUTS["deployment_year"].format(v["deployment_year"]) for v in view.values())]]
    rows += [[f"program-{k}", COMPARISON_OUTPUTS[k].title, *(COMPARISON_OUTPUTS[k].format(v[k]) for v in view.values())]
             for k in PROGRAM_FIELDS]
    return html.Div([
        html.P(f"Built at {scenario.spec.program.node}: {parts}; a respin's expected mask set "
               f"{quantity(scalar(schedule.parts['respin_usd']), 'USD')} (in the NRE row). Another node keeps the "
               "total's multiplier: type the total again to set it.", id="program-parts",
               className="hint"),
        table_block("program-table", ["", *view], rows, cell_ids=True)])


def with_program_edits(state: dict, form: ProgramForm, choices) -> tuple[dict, list[FieldError]]:
    """The state with what ``form`` asks applied: the node edit first (:func:`tco_app.builder.with_option_edit`), then
    the value edits against the scenario as built, the total NRE as the scale of that node's parts; and what was
    refused (a refused value edit is not applied, the others are)."""
    request = requested_edits(form, current_scenario(state, choices))
    errors = list(request.errors)
    if request.node_edit:
        state, refused = with_option_edit(state, request.node_edit, choices)
        errors += refused
    base = base_scenario(state, choices)
    edits = dict(request.edits)
    if request.total_usd is not None:
        edits[named.program.nre_scale] = nre_scale_for_total(base.with_values(state.get("set") or {}).values(),
                                                             request.total_usd)
    if not edits:
        return state, errors
    current = dict(state.get("set") or {})
    accepted, refused, _warnings = validated_edits(base, {**current, **edits})
    kept = {e.path: current[e.path] for e in refused if e.path in current}
    return {**state, "set": {**accepted, **kept}}, errors + refused


def panel_view(scenario) -> tuple:
    """``(total, node options, node, respin, slip, external, result, controls style)`` of the panel for ``scenario``."""
    if not builds_chip(scenario):
        return ("", [], None, "", "", "", html.P("This scenario builds no chip of its own (no program: block): the "
                                                  "chip program panel applies to custom-asic and the other scenarios "
                                                  "with one."), {"display": "none"})
    values = scenario.values()
    nodes = [{"label": n, "value": n} for n in builder_choices(scenario).nodes]
    shown = [shown_value(values[name], scenario.params[name].unit) for name in EDITED.values()]
    return (shown_total(values), nodes, scenario.spec.program.node, *shown, program_rows(scenario), {})


def register(app, ctx: AppContext) -> None:
    @app.callback(*[Output(ident, "value") for ident in FIELDS[:1]], Output("program-node", "options"),
                  *[Output(ident, "value") for ident in FIELDS[1:]], Output("program-result", "children"),
                  Output("program-controls", "style"), view_state("sensitivity"), prevent_initial_call=True)
    def show(state):
        return panel_view(ctx.scenario(state))
