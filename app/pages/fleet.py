"""Fleet: does a fleet split across chip types pay in a live fleet, not only on a datasheet?

The tab opens with a summary: one card per analysis of :mod:`tco.dynamics` (KV transfer wall,
stranded capacity, coordination, Pareto frontier, throughput against interactivity, specialization tree,
routing, tokens-per-watt roadmap) with its headline figure, and a table saying why the split's cost per token differs
from the Compare tab's. Each analysis has its own section (a sub-tab, computed when opened).

The stranded-capacity settings start from the scenario's ``fleet_dynamics`` block and are
reset to it when the user picks another scenario; edits there are local to this tab.
"""

from __future__ import annotations

from dash import Input, Output, State, dcc, html, no_update
from dash.exceptions import PreventUpdate

from tco.analysis.training import serving_scenario
from tco.foundation.errors import InputError
from tco.foundation.user_numbers import read_number
from tco.inputs.catalog import load_catalog
from tco.inputs.fleet_settings import POLICIES, fleet_config

from ..callbacks import open_tab_on_click
from ..charts import chart, chart_id
from ..context import SCENARIO, AppContext, view_state
from ..controls import number
from ..fleet_views import (
    STRANDED_INPUTS,
    coordination_view,
    interactivity_view,
    kv_view,
    pareto_view,
    roadmap_view,
    routing_view,
    stranded_view,
    summary_view,
    tree_view,
)
from ..glossary import terms_line

ID = "fleet"
LABEL = "Fleet"

POLICY_LABELS = {"today": "today: sized for today's mix", "peak": "peak: sized for the quarter's peak load",
                 "flex": "flex: today + a flexible GPU buffer"}
SECTIONS = (("summary", "Summary"), ("kv", "KV transfer wall"), ("stranded", "Stranded capacity"),
            ("pareto", "Pareto frontier"), ("interactivity", "Throughput vs interactivity"),
            ("coordination", "Coordination & tree"), ("routing", "Routing & roadmap"))
#: the y axes of the interactivity view (tco.present.fleet_figures.INTERACTIVITY_AXES)
INTERACTIVITY_Y = (("tokens_per_s_per_device", " output tokens/s per device  "),
                   ("usd_per_mtok", " cost per million output tokens  "),
                   ("tokens_per_s_per_mw", " output tokens/s per provisioned MW"))


def _drift_id(field: str) -> str:
    return "stranded-" + field.replace("_", "-")


def _section(value: str) -> html.Div:
    if value == "summary":
        return html.Div([
            html.Div(id="fleet-summary"),
            html.H3("The split's cost per token in each view"),
            html.P("Compare and the Fleet analyses answer different questions, so the same option has different costs "
                   "per million output tokens; this table says why.", className="hint"),
            html.Div(id="fleet-reconciliation")])
    if value == "kv":
        return html.Div([
            html.Div(className="controls", children=[number("kv-bandwidth", "KV link bandwidth [GB/s] (empty: the "
                                                                             "scenario's)", width="120px")]),
            html.Div(id="kv-notice", className="errors-box"),
            html.Div(id="kv-summary", className="result-box"),
            html.Div(className="two-charts", children=[chart("fleet-kv-wall"), chart("fleet-kv-gain")])])
    if value == "stranded":
        return html.Div([
            html.Div(className="controls", children=[
                html.Div(className="control", children=[
                    html.Label("sizing policy (hourly chart)", htmlFor="stranded-policy"),
                    dcc.Dropdown(id="stranded-policy", options=[{"label": POLICY_LABELS[p], "value": p} for p in POLICIES],
                                 value=POLICIES[0], clearable=False, style={"width": "300px"})]),
                *[number(_drift_id(field), label, width="110px") for field, label in STRANDED_INPUTS.items()]]),
            html.Div(id="stranded-notice", className="errors-box"),
            html.P("Stranded share: specialized device-hours idle while the other pool's queue waits. Every policy of "
                   "the split fleet beside the homogeneous GPU fleet sized by the same rule.", className="hint"),
            html.Div(id="stranded-table-box"),
            terms_line("stranded capacity", "disaggregated / split"),
            html.Div(className="two-charts", children=[chart("fleet-stranded"), chart("fleet-stranded-hourly")])])
    if value == "pareto":
        return html.Div([
            html.Div(className="controls", children=[
                dcc.RadioItems(id="pareto-latency", value="tpot_s", inline=True,
                               options=[{"label": " time per output token (TPOT)  ", "value": "tpot_s"},
                                        {"label": " time to first token (TTFT)", "value": "ttft_s"}]),
                dcc.RadioItems(id="pareto-y", value="usd_per_mtok", inline=True,
                               options=[{"label": " cost per million output tokens  ", "value": "usd_per_mtok"},
                                        {"label": " output per provisioned MW (fixed power, against TPOT)",
                                         "value": "tokens_per_s_per_mw"}])]),
            html.Div(id="pareto-notice", className="errors-box"),
            chart("fleet-pareto"),
            html.P("Points on the frontier (no other point is both better on the quantity shown and faster):",
                   className="hint"),
            html.Div(id="frontier-table-box")])
    if value == "interactivity":
        return html.Div([
            html.Div(className="controls", children=[
                dcc.RadioItems(id="interactivity-y", value=INTERACTIVITY_Y[0][0], inline=True,
                               options=[{"label": label, "value": v} for v, label in INTERACTIVITY_Y]),
                html.Div(className="control", children=[
                    html.Label("devices (empty: the scenario's)", htmlFor="interactivity-devices"),
                    dcc.Dropdown(id="interactivity-devices", options=sorted(load_catalog().devices), value=[],
                                 multi=True, placeholder="the scenario's devices", style={"width": "420px"})])]),
            html.P("Each device runs the layout the shape search picks (solid) and each tensor-parallel layout of 1 to 8 "
                   "devices that holds the model, at 1 to 512 sequences in flight per replica, with the scenario's model "
                   "and prompt and output lengths; a point is one concurrency. Stars: the scenario's options at their "
                   "peak operating point.", className="hint"),
            html.Div(id="interactivity-notice", className="errors-box"),
            chart("fleet-interactivity"),
            terms_line("interactivity", "replica shape", "TPOT"),
            html.Div(id="interactivity-table-box")])
    if value == "coordination":
        return html.Div([
            html.H3("Coordination break-even"),
            html.P("The specialized pool's utilization at which coordinating two pools (scheduling overhead, slack held "
                   "idle) erases its perf-per-watt and cost edge over the homogeneous GPU fleet.", className="hint"),
            html.Div(id="coordination-notice", className="errors-box"),
            html.Div(id="coordination-table-box"),
            html.H3("Specialization tree"),
            html.P("Which device wins each serving leaf, and by what margin: on the datasheet (no NRE, a workload that "
                   "never shifts) and with NRE and the workload half-life. Costs per million output tokens; 'prefill "
                   "only' per million prompt tokens.", className="hint"),
            html.Div(id="tree-notice", className="errors-box"),
            html.Div(id="tree-table-box")])
    return html.Div([
        html.H3("Routing easy queries to a small model"),
        html.P("A router sends a share of requests to a small model; hard requests it misroutes cost a retry on the large "
               "model (or a penalty in dollars). Settings: the scenario's fleet_dynamics.routing block.", className="hint"),
        html.Div(id="routing-notice", className="errors-box"),
        html.Div(className="two-charts", children=[html.Div(id="routing-table-box"), chart("fleet-routing")]),
        html.H3("Tokens per watt: what each lever gives"),
        html.P("Toward a target such as 12x output tokens per joule (24x tokens for 2x power): each lever applied in turn "
               "and its factor computed by the model. Settings: fleet_dynamics.roadmap.", className="hint"),
        html.Div(id="roadmap-notice", className="errors-box"),
        html.Div(id="roadmap-table-box"),
        chart("fleet-roadmap")])


def layout(ctx_: AppContext):
    return html.Div([
        html.P("Does a fleet split across chip types pay in a live fleet, not only on a datasheet? Each analysis runs "
               "tco.dynamics on the scenario chosen above, with its edits (docs/fleet-dynamics.md).", className="hint"),
        dcc.Store(id="stranded-defaults-of"),
        dcc.Store(id="stranded-settings", data={}),
        dcc.Tabs(id="fleet-tabs", value="summary", className="subtabs", children=[
            dcc.Tab(label=label, value=value, id=f"fleet-tab-{value}", children=_section(value))
            for value, label in SECTIONS]),
    ])


def stranded_defaults(scenario) -> list:
    """The scenario's stranded-capacity settings (empty where its block breaks a rule: the views show the rule)."""
    try:
        if getattr(scenario, "kind", "inference") == "training":  # the views run on its serving fleet
            scenario = serving_scenario(scenario)
        cfg = fleet_config(scenario).stranded
    except InputError:
        return [""] * len(STRANDED_INPUTS)
    return [f"{getattr(cfg, field):g}" for field in STRANDED_INPUTS]


def stranded_settings(values) -> dict:
    """The stranded-capacity fields the user filled in, read as numbers ('1.5', '20%' is not a rate here); text that
    is no number is passed on for the settings' validator to name with its field."""
    out = {}
    for field, raw in zip(STRANDED_INPUTS, values, strict=True):
        if raw in (None, ""):
            continue
        try:
            out[field] = read_number(raw, None, f"fleet_dynamics.stranded.{field}")
        except InputError:
            out[field] = raw
    return out


def _open(section: str, wanted: str) -> None:
    """Skip a section's view while another section is shown (it is computed when opened)."""
    if section != wanted:
        raise PreventUpdate


def register(app, ctx_: AppContext) -> None:
    drift_inputs = [Input(_drift_id(field), "value") for field in STRANDED_INPUTS]
    fleet_tab = Input("fleet-tabs", "value")

    @app.callback(Output("fleet-summary", "children"), Output("fleet-reconciliation", "children"), view_state(ID),
                  fleet_tab, prevent_initial_call=True)
    def summary(state, section):
        _open(section, "summary")
        return summary_view(ctx_.scenario(state))

    open_tab_on_click(app, "fleet-tabs", "fleet-goto", "section", "card")

    @app.callback(Output("kv-notice", "children"), Output("kv-summary", "children"),
                  Output(chart_id("fleet-kv-wall"), "figure"), Output(chart_id("fleet-kv-gain"), "figure"),
                  view_state(ID), Input("kv-bandwidth", "value"), fleet_tab, prevent_initial_call=True)
    def kv(state, bandwidth, section):
        _open(section, "kv")
        return kv_view(ctx_.scenario(state), bandwidth)

    @app.callback(*[Output(_drift_id(field), "value") for field in STRANDED_INPUTS], Output("stranded-defaults-of", "data"),
                  SCENARIO, fleet_tab, State("state", "data"), State("stranded-defaults-of", "data"), prevent_initial_call=True)
    def defaults(key, section, state, shown_for):
        if section != "stranded" or key == shown_for:
            return [no_update] * (len(STRANDED_INPUTS) + 1)
        return *stranded_defaults(ctx_.scenario(state)), key

    @app.callback(Output("stranded-notice", "children"), Output("stranded-table-box", "children"),
                  Output(chart_id("fleet-stranded"), "figure"), Output(chart_id("fleet-stranded-hourly"), "figure"),
                  view_state(ID), Input("stranded-policy", "value"), fleet_tab, *drift_inputs,
                  prevent_initial_call=True)
    def stranded(state, policy, section, *values):
        _open(section, "stranded")
        return stranded_view(ctx_.scenario(state), policy, stranded_settings(values))

    @app.callback(Output("pareto-notice", "children"), Output("frontier-table-box", "children"),
                  Output(chart_id("fleet-pareto"), "figure"), view_state(ID), Input("pareto-latency", "value"),
                  Input("pareto-y", "value"), fleet_tab, prevent_initial_call=True)
    def frontier(state, latency, y, section):
        _open(section, "pareto")
        return pareto_view(ctx_.scenario(state), latency, y)

    @app.callback(Output("interactivity-notice", "children"), Output("interactivity-table-box", "children"),
                  Output(chart_id("fleet-interactivity"), "figure"), view_state(ID), Input("interactivity-y", "value"),
                  Input("interactivity-devices", "value"), fleet_tab, prevent_initial_call=True)
    def interactivity(state, y, devices, section):
        _open(section, "interactivity")
        return interactivity_view(ctx_.scenario(state), y, devices or [])

    @app.callback(Output("coordination-notice", "children"), Output("coordination-table-box", "children"),
                  Output("tree-notice", "children"), Output("tree-table-box", "children"), view_state(ID),
                  fleet_tab, prevent_initial_call=True)
    def tables(state, section):
        _open(section, "coordination")
        scenario = ctx_.scenario(state)
        return *coordination_view(scenario), *tree_view(scenario)

    @app.callback(Output("routing-notice", "children"), Output("routing-table-box", "children"),
                  Output(chart_id("fleet-routing"), "figure"), Output("roadmap-notice", "children"),
                  Output("roadmap-table-box", "children"), Output(chart_id("fleet-roadmap"), "figure"),
                  view_state(ID), fleet_tab, prevent_initial_call=True)
    def orchestration(state, section):
        _open(section, "routing")
        scenario = ctx_.scenario(state)
        return *routing_view(scenario), *roadmap_view(scenario)
