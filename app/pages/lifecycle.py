"""Lifecycle: L/H and years of advantage, the program timeline against the general-purpose roadmap, cumulative
discounted cost per option over time, the workload half-life curve, and the year-by-year cash flows of each option
(a table with its CSV, the rows of the workbook's Cash flows sheet)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from dash import Input, Output, State, html

from tco.analysis import program_views
from tco.analysis.evaluation import analyse_scenario
from tco.core import names as named
from tco.core.money import lifecycle
from tco.core.names import device_param
from tco.core.outputs import COMPARISON_OUTPUTS, COST_LINES
from tco.foundation.plain_values import scalar

from ..charts import COST_LINE_COLOURS, PALETTE, chart, chart_id, message_figure, styled
from ..context import SCENARIO, AppContext, view_state
from ..controls import dropdown, keep
from ..tables import table_block
from ..training_views import training_lifecycle_view

ID = "lifecycle"
LABEL = "Lifecycle"


def cumulative_cost_figure(analysis) -> go.Figure:
    """Cumulative discounted cost ``sum_{y'<=y} flow_y' (1+r)^-y'`` per option, million USD."""
    fig = go.Figure()
    for i, option in enumerate(analysis.structure.options):
        flows = analysis.flows[option.name]
        pv = np.cumsum(flows.total_usd * flows.discount_factor, axis=-1).reshape(-1) / 1e6
        fig.add_scatter(x=np.arange(pv.size), y=pv, mode="lines+markers", name=option.name,
                        line={"color": PALETTE[i % len(PALETTE)], "dash": ["solid", "dash", "dot", "dashdot"][i % 4]},
                        hovertemplate=f"{option.name}<br>year %{{x}}: %{{y:,.2f}} M USD (PV, cumulative)<extra></extra>")
    return styled(fig, "Cumulative discounted cost (residual value credited at end of life)", "year",
                  "cumulative present value of costs, million USD", height=420)


#: how the program timeline groups the cash-flow lines: (title, lines)
TIMELINE_GROUPS = (("NRE (design)", ("nre_usd",)), ("bridge on the baseline", ("bridge_usd",)),
                   ("hardware bought", ("capex_usd",)),
                   ("running (energy, data hall, maintenance, links)", ("energy_usd", "facility_usd", "maintenance_usd",
                                                                        "links_usd")),
                   ("software and workload shifts", ("porting_usd", "reauthoring_usd", "workload_shift_usd")),
                   ("residual value (credit)", ("residual_usd",)))


def timeline_option(analysis) -> str | None:
    """The option the timeline follows: the first on the scenario's own chip, else the first specialized one."""
    challengers = analysis.structure.challengers
    built = [o.name for o in challengers if any(p.built for p in o.pools)]
    specialized = [o.name for o in challengers if o.specialized]
    return (built or specialized or [o.name for o in challengers] or [None])[0]


def timeline_figure(analysis):
    """Year by year, undiscounted: the option's cost lines stacked (NRE during design, the bridge until its chip
    is in service, then its fleet), the baseline's total as a line labelled with the general-purpose generation
    it runs on, and the deployment year marked (DESIGN.md section 9)."""
    name = timeline_option(analysis)
    if name is None:
        return message_figure("The scenario has no option besides the baseline.")
    flows, base = analysis.flows[name], analysis.flows[analysis.structure.baseline]
    fig = go.Figure()
    for title, lines in TIMELINE_GROUPS:
        ys = sum(flows.lines[line] for line in lines).reshape(-1, flows.total_usd.shape[-1])[0] / 1e6
        if np.any(ys != 0):  # a group takes its first line's colour (the one it has in Compare's present values)
            fig.add_bar(x=np.arange(ys.size), y=ys, name=title, marker_color=COST_LINE_COLOURS[lines[0]],
                        hovertemplate=f"{title}<br>year %{{x}}: %{{y:,.2f}} M USD<extra></extra>")
    total = base.total_usd.reshape(-1, base.total_usd.shape[-1])[0] / 1e6
    generations = program_views.baseline_generations(analysis).get("by_year")
    hover = [f"<br>on {g}" for g in generations] if generations else [""] * total.size
    fig.add_scatter(x=np.arange(total.size), y=total, mode="lines+markers", customdata=hover,
                    name=f"baseline {analysis.structure.baseline} (total)", line={"color": "#000000", "dash": "dash"},
                    hovertemplate="baseline%{customdata}<br>year %{x}: %{y:,.2f} M USD<extra></extra>")
    if generations:  # one label where the baseline moves to another generation
        for year, device in enumerate(generations):
            if year == 0 or generations[year - 1] != device:
                fig.add_annotation(x=year, y=total[year], text=device, showarrow=True, arrowhead=0, ax=0, ay=-28,
                                   bgcolor="rgba(255,255,255,0.85)", font={"size": 11})
    deployment = scalar(analysis.options[name].deployment_year)
    if deployment > 0:
        fig.add_vline(x=deployment - 0.5, line_dash="dot", line_color="#555555")
        fig.add_annotation(x=deployment - 0.5, y=0.95, xref="x", yref="paper", text=f"{name} in service from year "
                           f"{deployment:.0f}", showarrow=False, xanchor="left", yanchor="top",
                           bgcolor="rgba(255,255,255,0.85)")
    fig.update_layout(barmode="relative")
    return styled(fig, f"Program timeline: {name} by year against the baseline (labels: its general-purpose generation)",
                  "year (t = 0: the decision)", "cost in the year, million USD (undiscounted)", height=420)


def half_life_figure(scenario) -> go.Figure:
    """Share of demand still served at designed efficiency, ``2^(-t/H)``, with each specialized life L."""
    values = scenario.values()
    h = float(values[named.workload.half_life_years])
    horizon = float(values[named.economics.horizon_years])
    t = np.linspace(0.0, max(horizon, 2 * h), 200)
    fig = go.Figure(go.Scatter(x=t, y=lifecycle.designed_share_at(t, h), mode="lines", name="2^(-t/H)",
                               line={"color": PALETTE[0]},
                               hovertemplate="t = %{x:.2f} yr<br>designed share %{y:.1%}<extra></extra>"))
    devices = sorted({p.device for o in scenario.structure.options for p in o.pools if p.specialized})
    for i, device in enumerate(devices):
        life = float(values[device_param(device, "useful_life_years")])
        fig.add_vline(x=life, line_dash="dash", line_color=PALETTE[(i + 1) % len(PALETTE)])
        text = f"L {device} = {life:g} yr (L/H {life / h:.2f})"
        fig.add_annotation(x=life, y=0.95 - 0.1 * i, xref="x", yref="paper", text=text, showarrow=False, xanchor="right",
                           yanchor="top", bgcolor="rgba(255,255,255,0.85)")
    fig.add_vline(x=h, line_dash="dot", line_color="#555555")
    fig.add_annotation(x=h, y=0.05, xref="x", yref="paper", text=f"H = {h:g} yr", showarrow=False, xanchor="left",
                       yanchor="bottom", bgcolor="rgba(255,255,255,0.85)")
    fig.update_yaxes(tickformat=".0%", range=[0, 1.05])
    return styled(fig, "Workload half-life: share of demand the specialized design still targets", "time since deployment, years",
                  "share of demand at designed efficiency", height=420)


#: comparison outputs of the life table, beside the option's name
LIFE_COLUMNS = ("life_over_half_life", "effective_life_years", "years_of_advantage", "hardware_cycle_years",
                "software_payback_years", "cycle_over_payback")


def life_table(analysis):
    rows = [(name, c) for name, c in analysis.challengers.items()
            if c.life_over_half_life is not None or c.software_payback_years is not None]
    if not rows:
        return html.P("No option uses specialized devices or new hardware: the workload half-life and the software "
                      "amortisation do not apply.")
    specs = [COMPARISON_OUTPUTS[k] for k in LIFE_COLUMNS]

    def cell(c, spec):
        value = getattr(c, spec.name)
        return spec.format(None if value is None else scalar(value))

    header = ["option", *(s.title for s in specs)]
    return table_block("life-table", header, [[n, *(cell(c, s) for s in specs)] for n, c in rows])


def cash_flow_table(analysis, option: str):
    """One option's cash flows by year [M USD]: each cost line (the workbook's Cash flows rows), the total, the
    discount factor, the discounted total and the output tokens served."""
    flows = analysis.flows[option]
    years = flows.total_usd.reshape(-1).size
    header = ["line", *(f"year {y}" for y in range(years)), "PV"]
    rows = []
    for spec in COST_LINES:
        values = flows.lines[spec.line].reshape(-1)
        if abs(values).max() > 0:
            rows.append([f"{spec.label}, M USD", *(f"{v / 1e6:,.3f}" for v in values),
                         f"{flows.present_value(flows.lines[spec.line]).reshape(-1)[0] / 1e6:,.3f}"])
    total = flows.total_usd.reshape(-1)
    factor = flows.discount_factor.reshape(-1)
    rows += [["total, M USD", *(f"{v / 1e6:,.3f}" for v in total), f"{(total * factor).sum() / 1e6:,.3f}"],
             ["discount factor (1+r)^-y", *(f"{v:.4f}" for v in factor), ""],
             ["discounted total, M USD", *(f"{v / 1e6:,.3f}" for v in total * factor), ""],
             ["output tokens served, billions", *(f"{v / 1e9:,.1f}" for v in flows.output_tokens.reshape(-1)),
              f"{(flows.output_tokens.reshape(-1) * factor).sum() / 1e9:,.1f}"]]
    return table_block("cash-flow-table", header, rows)


def layout(ctx: AppContext):
    return html.Div([
        html.P("L/H is hardware useful life over workload half-life: above 1 the design outlives the workload it "
               "was built for. Effective life (years of service at designed efficiency) L_eff = H/ln2 (1 - 2^(-L/H)). "
               "Years of advantage: how long after it enters service an option stays cheaper than the best "
               "general-purpose generation (negative: the roadmap was cheaper that many years before; — without a roadmap "
               "block, where the baseline stays on one generation). Hardware cycle "
               "over software payback above 1: the software rewrite pays back before the hardware is replaced.",
               className="hint"),
        html.Div(id="life-table-box"),
        chart("lifecycle-timeline"),
        html.Div(className="two-charts", children=[chart("lifecycle-cumulative"), chart("lifecycle-half-life")]),
        html.H3("Cash flows by year"),
        html.P("Costs paid in each year (year 0: purchases), the residual value credited at the end, discounted at the "
               "scenario's rate: the rows of the workbook's Cash flows sheet.", className="hint"),
        html.Div(className="controls", children=[dropdown("cash-flow-option", "option", width="320px")]),
        html.Div(id="cash-flow-box"),
    ])


def register(app, ctx: AppContext) -> None:
    @app.callback(Output("life-table-box", "children"), Output(chart_id("lifecycle-cumulative"), "figure"),
                  Output(chart_id("lifecycle-half-life"), "figure"), Output(chart_id("lifecycle-timeline"), "figure"),
                  view_state(ID), prevent_initial_call=True)
    def show(state):
        return lifecycle_view(ctx.scenario(state))

    @app.callback(Output("cash-flow-option", "options"), Output("cash-flow-option", "value"), SCENARIO,
                  State("state", "data"), State("cash-flow-option", "value"), prevent_initial_call=True)
    def options(_key, state, current):
        scenario = ctx.scenario(state)
        if getattr(scenario, "kind", "inference") == "training":
            return [], None
        names = [{"label": o.name, "value": o.name} for o in scenario.structure.options]
        return names, keep(current, names)

    @app.callback(Output("cash-flow-box", "children"), Input("cash-flow-option", "value"), view_state(ID),
                  prevent_initial_call=True)
    def flows(option, state):
        scenario = ctx.scenario(state)
        if getattr(scenario, "kind", "inference") == "training" or not option:
            return html.P("A training run has no yearly cash flows: its cost per run is on the Compare tab.")
        return cash_flow_table(analyse_scenario(scenario), option)


def lifecycle_view(scenario):
    """Everything the Lifecycle page shows, for one scenario (the callback body; benchmarked)."""
    if getattr(scenario, "kind", "inference") == "training":
        return (*training_lifecycle_view(scenario), message_figure("A training run has no chip program timeline."))
    analysis = analyse_scenario(scenario)
    return life_table(analysis), cumulative_cost_figure(analysis), half_life_figure(scenario), timeline_figure(analysis)
