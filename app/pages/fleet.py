"""Fleet: KV transfer wall, stranded capacity over a quarter, the labelled Pareto frontier,
coordination break-even, the specialization tree, routing to a small model and the
tokens-per-watt roadmap, for the user's scenario (``tco.dynamics``).

The stranded-capacity settings start from the scenario's ``fleet_dynamics`` block and are
reset to it when the user picks another scenario; edits there are local to this tab.
"""

from __future__ import annotations

from dash import Input, Output, State, dcc, html, no_update

from tco.dynamics.config import POLICIES, fleet_config
from tco.errors import InputError
from tco.training_api import serving_scenario

from ..charts import chart, chart_id
from ..context import TAB, AppContext, shown
from ..fleet_views import (
    STRANDED_INPUTS,
    coordination_view,
    kv_view,
    pareto_view,
    roadmap_view,
    routing_view,
    stranded_view,
    tree_view,
)
from .sensitivity import _number

ID = "fleet"
LABEL = "Fleet"

POLICY_LABELS = {"today": "today: sized for today's mix", "peak": "peak: sized for the quarter's peak load",
                 "flex": "flex: today + a flexible GPU buffer"}


def _drift_id(field: str) -> str:
    return "stranded-" + field.replace("_", "-")


def layout(ctx: AppContext):
    return html.Div([
        html.P("Does a fleet split across chip types pay in a live fleet, not only on a datasheet? Each view runs "
               "tco.dynamics on the scenario chosen above, with its edits (docs/fleet-dynamics.md).", className="hint"),
        html.H3("KV transfer wall"),
        html.Div(className="controls", children=[
            _number("kv-bandwidth", "KV link bandwidth [GB/s] (empty: the scenario's)", min=0)]),
        html.Div(id="kv-notice", className="errors-box"),
        html.Div(id="kv-summary", className="result-box"),
        html.Div(className="two-charts", children=[chart("fleet-kv-wall"), chart("fleet-kv-gain")]),
        html.H3("Stranded capacity over a quarter"),
        html.Div(className="controls", children=[
            html.Div(className="control", children=[
                html.Label("sizing policy (hourly chart)", htmlFor="stranded-policy"),
                dcc.Dropdown(id="stranded-policy", options=[{"label": POLICY_LABELS[p], "value": p} for p in POLICIES],
                             value=POLICIES[0], clearable=False, style={"width": "300px"})]),
            *[_number(_drift_id(field), label) for field, label in STRANDED_INPUTS.items()],
            dcc.Store(id="stranded-defaults-of")]),
        html.Div(id="stranded-notice", className="errors-box"),
        html.P("Stranded share: specialized device-hours idle while the other pool's queue waits. Every policy of the "
               "split fleet beside the homogeneous GPU fleet sized by the same rule.", className="hint"),
        html.Div(id="stranded-table-box", className="table-box"),
        html.Div(className="two-charts", children=[chart("fleet-stranded"), chart("fleet-stranded-hourly")]),
        html.H3("Pareto frontier: cost against latency"),
        html.Div(className="controls", children=[
            dcc.RadioItems(id="pareto-latency", value="tpot_s", inline=True,
                           options=[{"label": " time per output token (TPOT)  ", "value": "tpot_s"},
                                    {"label": " time to first token (TTFT)", "value": "ttft_s"}])]),
        html.Div(id="pareto-notice", className="errors-box"),
        chart("fleet-pareto", height=480),
        html.P("Points on the frontier (no other point is both cheaper and faster):", className="hint"),
        html.Div(id="frontier-table-box", className="table-box"),
        html.H3("Coordination break-even"),
        html.P("The specialized pool's utilization at which coordinating two pools (scheduling overhead, slack held "
               "idle) erases its perf-per-watt and cost edge over the homogeneous GPU fleet.", className="hint"),
        html.Div(id="coordination-notice", className="errors-box"),
        html.Div(id="coordination-table-box", className="table-box"),
        html.H3("Specialization tree"),
        html.P("Which device wins each serving leaf, and by what margin: on the datasheet (no NRE, a workload that never "
               "shifts) and with NRE and the workload half-life. Costs per million output tokens; 'prefill only' per "
               "million prompt tokens.", className="hint"),
        html.Div(id="tree-notice", className="errors-box"),
        html.Div(id="tree-table-box", className="table-box"),
        html.H3("Routing easy queries to a small model"),
        html.P("A router sends a share of requests to a small model; hard requests it misroutes cost a retry on the large "
               "model (or a penalty in dollars). Settings: the scenario's fleet_dynamics.routing block.", className="hint"),
        html.Div(id="routing-notice", className="errors-box"),
        html.Div(className="two-charts", children=[html.Div(id="routing-table-box", className="table-box"),
                                                    chart("fleet-routing")]),
        html.H3("Tokens per watt: what each lever gives"),
        html.P("Toward a target such as 12x output tokens per joule (24x tokens for 2x power): each lever applied in turn "
               "and its factor computed by the model. Settings: fleet_dynamics.roadmap.", className="hint"),
        html.Div(id="roadmap-notice", className="errors-box"),
        html.Div(id="roadmap-table-box", className="table-box"),
        chart("fleet-roadmap"),
    ])


def stranded_defaults(scenario) -> list:
    """The stranded-capacity settings of the scenario's ``fleet_dynamics`` block (defaults where it breaks a rule)."""
    try:
        if getattr(scenario, "kind", "inference") == "training":  # the views run on its serving fleet
            scenario = serving_scenario(scenario)
        cfg = fleet_config(scenario.spec.fleet_dynamics).stranded
    except InputError:
        cfg = fleet_config(None).stranded  # the views show the broken rule
    return [getattr(cfg, field) for field in STRANDED_INPUTS]


def register(app, ctx: AppContext) -> None:
    drift_inputs = [Input(_drift_id(field), "value") for field in STRANDED_INPUTS]

    @app.callback(Output("kv-notice", "children"), Output("kv-summary", "children"),
                  Output(chart_id("fleet-kv-wall"), "figure"), Output(chart_id("fleet-kv-gain"), "figure"),
                  Input("state", "data"), Input("kv-bandwidth", "value"), TAB, prevent_initial_call=True)
    def kv(state, bandwidth, tab):
        shown(tab, ID)
        return kv_view(ctx.scenario(state), bandwidth)

    @app.callback(*[Output(_drift_id(field), "value") for field in STRANDED_INPUTS], Output("stranded-defaults-of", "data"),
                  Input("state", "data"), State("stranded-defaults-of", "data"), prevent_initial_call=True)
    def defaults(state, shown_for):
        key = [state.get("scenario"), state.get("upload_name")]
        if key == shown_for:
            return [no_update] * (len(STRANDED_INPUTS) + 1)
        return *stranded_defaults(ctx.scenario(state)), key

    @app.callback(Output("stranded-notice", "children"), Output("stranded-table-box", "children"),
                  Output(chart_id("fleet-stranded"), "figure"), Output(chart_id("fleet-stranded-hourly"), "figure"),
                  Input("state", "data"), Input("stranded-policy", "value"), TAB, *drift_inputs, prevent_initial_call=True)
    def stranded(state, policy, tab, *values):
        shown(tab, ID)
        return stranded_view(ctx.scenario(state), policy, dict(zip(STRANDED_INPUTS, values, strict=True)))

    @app.callback(Output("pareto-notice", "children"), Output("frontier-table-box", "children"),
                  Output(chart_id("fleet-pareto"), "figure"), Input("state", "data"), Input("pareto-latency", "value"), TAB,
                  prevent_initial_call=True)
    def frontier(state, latency, tab):
        shown(tab, ID)
        return pareto_view(ctx.scenario(state), latency)

    @app.callback(Output("coordination-notice", "children"), Output("coordination-table-box", "children"),
                  Output("tree-notice", "children"), Output("tree-table-box", "children"), Input("state", "data"), TAB,
                  prevent_initial_call=True)
    def tables(state, tab):
        shown(tab, ID)
        scenario = ctx.scenario(state)
        return *coordination_view(scenario), *tree_view(scenario)

    @app.callback(Output("routing-notice", "children"), Output("routing-table-box", "children"),
                  Output(chart_id("fleet-routing"), "figure"), Output("roadmap-notice", "children"),
                  Output("roadmap-table-box", "children"), Output(chart_id("fleet-roadmap"), "figure"),
                  Input("state", "data"), TAB, prevent_initial_call=True)
    def orchestration(state, tab):
        shown(tab, ID)
        scenario = ctx.scenario(state)
        return *routing_view(scenario), *roadmap_view(scenario)
