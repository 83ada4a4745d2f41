"""Compare: each option's cost per token, efficiency, latency, sizing and the verdict."""

from __future__ import annotations

import plotly.graph_objects as go
from dash import Input, Output, html

from tco.api import compare
from tco.core.outputs import COMPARISON_OUTPUTS, COST_LINES, OPTION_OUTPUTS, POOL_OUTPUTS, OutputSpec

from ..charts import OKABE_ITO, chart, chart_id, styled
from ..context import AppContext
from ..tables import versus_table
from ..training_views import training_compare_view

ID = "compare"
LABEL = "Compare"


def _by_role(values: dict, spec: OutputSpec) -> str:
    if len(values) == 1:
        return spec.format(next(iter(values.values())))
    return ", ".join(f"{role} {spec.format(v)}" for role, v in values.items())


def _output_row(ident: str, name: str):
    """A row showing option output ``name`` as the output table says (title, scale, format)."""
    spec = OPTION_OUTPUTS[name]
    return ident, spec.title, lambda d: spec.format(d[name])


def _pool_row(ident: str, name: str, title: str):
    """A row showing pool output ``name`` per role (``{role: value}`` in the JSON details)."""
    spec = POOL_OUTPUTS[name]
    return ident, title, lambda d: _by_role(d[name], spec)


OPTION_ROWS = [
    ("placement", "placement", lambda d: d["placement"]),
    _output_row("lcot", "lcot_usd_per_mtok"),
    _output_row("lcot-all", "lcot_usd_per_mtok_all_tokens"),
    _output_row("tpj", "tokens_per_joule"),
    _output_row("ttft", "ttft_s"),
    _output_row("tpot", "tpot_s"),
    _pool_row("devices", "devices", OPTION_OUTPUTS["devices"].title),
    _pool_row("util", "utilization", POOL_OUTPUTS["utilization"].title),
    ("bound", "bound by", lambda d: ", ".join(f"{k}: {v}" for k, v in d["bound"].items())),
    _output_row("spilled", "spilled_bytes"),
    _output_row("batch", "batch"),
    ("feasible", OPTION_OUTPUTS["feasible"].title,
     lambda d: "yes" if d["feasible"] else "no: " + "; ".join(d["infeasible_reasons"])),
]

#: comparison outputs shown against the baseline, in order
CHALLENGER_ROWS = [COMPARISON_OUTPUTS[k] for k in ("npv_usd", "cost_ratio", "life_over_half_life", "payback_year",
                                                   "breakeven_volume_units")]


def options_table(result) -> html.Table:
    names = [d["name"] for d in result.details]
    base = result.scenario.structure.baseline
    head = html.Tr([html.Th("")] + [html.Th(n + (" (baseline)" if n == base else "")) for n in names])
    rows = [html.Tr([html.Th(label)] + [html.Td(fn(d), id=f"cell-{key}-{i}") for i, d in enumerate(result.details)])
            for key, label, fn in OPTION_ROWS]
    return html.Table([html.Thead(head), html.Tbody(rows)], className="results", id="options-table")


def challengers_table(result) -> html.Table | html.P:
    return versus_table(result.challengers, result.scenario.structure.baseline,
                        [(s.name, s.title, s.fmt, s.scale) for s in CHALLENGER_ROWS])


def breakdown_figure(result) -> go.Figure:
    """Stacked PV of each cost line per option, million USD (residual value is a credit, below 0)."""
    names = [d["name"] for d in result.details]
    fig = go.Figure()
    for i, line in enumerate(COST_LINES):
        ys = [d["cost_breakdown_pv_usd"].get(line.line, 0.0) / 1e6 for d in result.details]
        if any(abs(y) > 0 for y in ys):
            colour = "#999999" if line.line == "residual_usd" else OKABE_ITO[i % len(OKABE_ITO)]
            label = line.label
            fig.add_bar(x=names, y=ys, name=label, marker_color=colour,
                        hovertemplate=f"{label}<br>%{{x}}: %{{y:,.2f}} M USD (PV)<extra></extra>")
    fig.update_layout(barmode="relative")
    return styled(fig, "Present value of costs over the horizon, by line", "fleet option", "present value, million USD")


def lcot_figure(result) -> go.Figure:
    """Cost per million output tokens per option, with the baseline as a reference line."""
    d = result.details
    base = result.options.loc[result.scenario.structure.baseline, "lcot_usd_per_mtok"]
    colours = [OKABE_ITO[0] if x["feasible"] else "#999999" for x in d]
    fig = go.Figure(go.Bar(x=[x["name"] for x in d], y=[x["lcot_usd_per_mtok"] for x in d], marker_color=colours,
                           text=[f"${x['lcot_usd_per_mtok']:,.3g}" for x in d], textposition="outside",
                           hovertemplate="%{x}<br>%{y:,.4g} USD per million output tokens<extra></extra>"))
    fig.add_hline(y=base, line_dash="dash", line_color=OKABE_ITO[5], annotation_text="baseline")
    return styled(fig, "Levelized cost per million output tokens (grey: misses a latency target)", "fleet option",
                  "USD per million output tokens")


def layout(ctx: AppContext):
    return html.Div([
        html.H2(id="scenario-title"),
        html.P(id="scenario-question", className="hint"),
        html.P(id="verdict", className="verdict"),
        html.Div(id="options-table-box", className="table-box"),
        html.H3("Against the baseline"),
        html.Div(id="challengers-box", className="table-box"),
        html.Div(className="two-charts", children=[chart("compare-lcot"), chart("compare-breakdown")]),
    ])


def register(app, ctx: AppContext) -> None:
    @app.callback(Output("scenario-title", "children"), Output("scenario-question", "children"),
                  Output("verdict", "children"), Output("options-table-box", "children"),
                  Output("challengers-box", "children"), Output(chart_id("compare-lcot"), "figure"),
                  Output(chart_id("compare-breakdown"), "figure"), Input("state", "data"), prevent_initial_call=True)
    def show(state):
        return compare_view(ctx.scenario(state))


def compare_view(scenario):
    """Everything the Compare page shows, for one scenario (the callback body; benchmarked)."""
    if getattr(scenario, "kind", "inference") == "training":
        return training_compare_view(scenario)
    result = compare(scenario)
    return (scenario.title or scenario.name, scenario.question, result.verdict, options_table(result),
            challengers_table(result), lcot_figure(result), breakdown_figure(result))
