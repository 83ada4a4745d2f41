"""Lifecycle: cumulative discounted cost per option over time, the workload half-life curve and L/H."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from dash import Input, Output, html

from tco.api import analyse_scenario
from tco.core import lifecycle
from tco.core.outputs import COMPARISON_OUTPUTS
from tco.core.structure import device_param
from tco.util import scalar

from ..charts import OKABE_ITO, chart, chart_id, styled
from ..context import TAB, AppContext, shown
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
                        line={"color": OKABE_ITO[i % len(OKABE_ITO)], "dash": ["solid", "dash", "dot", "dashdot"][i % 4]},
                        hovertemplate=f"{option.name}<br>year %{{x}}: %{{y:,.2f}} M USD (PV, cumulative)<extra></extra>")
    return styled(fig, "Cumulative discounted cost (residual value credited at end of life)", "year",
                  "cumulative present value of costs, million USD")


def half_life_figure(scenario) -> go.Figure:
    """Share of demand still served at designed efficiency, ``2^(-t/H)``, with each specialized life L."""
    values = scenario.values()
    h = float(values["workload.half_life_years"])
    horizon = float(values["economics.horizon_years"])
    t = np.linspace(0.0, max(horizon, 2 * h), 200)
    fig = go.Figure(go.Scatter(x=t, y=lifecycle.designed_share_at(t, h), mode="lines", name="2^(-t/H)",
                               line={"color": OKABE_ITO[0]},
                               hovertemplate="t = %{x:.2f} yr<br>designed share %{y:.1%}<extra></extra>"))
    devices = sorted({p.device for o in scenario.structure.options for p in o.pools if p.specialized})
    for i, device in enumerate(devices):
        life = float(values[device_param(device, "useful_life_years")])
        fig.add_vline(x=life, line_dash="dash", line_color=OKABE_ITO[(i + 1) % len(OKABE_ITO)],
                      annotation_text=f"L {device} = {life:g} yr (L/H = {life / h:.2f})")
    fig.add_vline(x=h, line_dash="dot", line_color="#555555", annotation_text=f"H = {h:g} yr", annotation_position="top left")
    fig.update_yaxes(tickformat=".0%", range=[0, 1.05])
    return styled(fig, "Workload half-life: share of demand the specialized design still targets", "time since deployment, years",
                  "share of demand at designed efficiency")


def life_table(analysis) -> html.Table | html.P:
    lines = [(name, c.life_over_half_life, c.effective_life_years) for name, c in analysis.challengers.items()
             if c.life_over_half_life is not None]
    if not lines:
        return html.P("No option uses specialized devices: the workload half-life does not apply.")
    ratio, life = COMPARISON_OUTPUTS["life_over_half_life"], COMPARISON_OUTPUTS["effective_life_years"]
    head = html.Tr([html.Th("option"), html.Th("L/H"), html.Th(f"effective life L_eff, {life.display_unit}")])
    body = [html.Tr([html.Td(n), html.Td(ratio.format(scalar(lh))), html.Td(life.format(scalar(el)))])
            for n, lh, el in lines]
    return html.Table([html.Thead(head), html.Tbody(body)], className="results", id="life-table")


def layout(ctx: AppContext):
    return html.Div([
        html.P("L/H is hardware useful life over workload half-life: above 1 the design outlives the workload it "
               "was built for. Effective life (years of service at designed efficiency) L_eff = H/ln2 (1 - 2^(-L/H)).",
               className="hint"),
        html.Div(id="life-table-box", className="table-box"),
        html.Div(className="two-charts", children=[chart("lifecycle-cumulative"), chart("lifecycle-half-life")]),
    ])


def register(app, ctx: AppContext) -> None:
    @app.callback(Output("life-table-box", "children"), Output(chart_id("lifecycle-cumulative"), "figure"),
                  Output(chart_id("lifecycle-half-life"), "figure"), Input("state", "data"), TAB, prevent_initial_call=True)
    def show(state, tab):
        shown(tab, ID)
        return lifecycle_view(ctx.scenario(state))


def lifecycle_view(scenario):
    """Everything the Lifecycle page shows, for one scenario (the callback body; benchmarked)."""
    if getattr(scenario, "kind", "inference") == "training":
        return training_lifecycle_view(scenario)
    analysis = analyse_scenario(scenario)
    return life_table(analysis), cumulative_cost_figure(analysis), half_life_figure(scenario)
