"""Compare: each option's cost per token, efficiency, latency, sizing and the verdict."""

from __future__ import annotations

import plotly.graph_objects as go
from dash import Input, Output, html

from tco.api import compare

from ..charts import OKABE_ITO, chart, chart_id, styled
from ..context import AppContext
from ..tables import number, versus_table
from ..training_views import training_compare_view

ID = "compare"
LABEL = "Compare"

#: cost lines of ``cost_breakdown_pv_usd``, in stacking order, with their labels
COST_LINES = {"capex_usd": "hardware capex", "nre_usd": "NRE share", "energy_usd": "energy", "facility_usd": "facility",
              "maintenance_usd": "maintenance", "links_usd": "KV links", "reauthoring_usd": "re-authoring",
              "workload_shift_usd": "workload shift", "residual_usd": "residual value (credit)"}


def _by_role(values: dict, fmt: str, scale: float = 1.0) -> str:
    if len(values) == 1:
        return number(next(iter(values.values())), fmt, scale)
    return ", ".join(f"{role} {number(v, fmt, scale)}" for role, v in values.items())


OPTION_ROWS = [
    ("placement", "placement", lambda d: d["placement"]),
    ("lcot", "cost, USD per million output tokens", lambda d: number(d["lcot_usd_per_mtok"], ",.3f")),
    ("lcot-all", "cost, USD per million input+output tokens", lambda d: number(d["lcot_usd_per_mtok_all_tokens"], ",.3f")),
    ("tpj", "output tokens per joule", lambda d: number(d["tokens_per_joule"], ",.3g")),
    ("ttft", "time to first token, ms", lambda d: number(d["ttft_s"], ",.0f", 1e3)),
    ("tpot", "time per output token, ms", lambda d: number(d["tpot_s"], ",.1f", 1e3)),
    ("devices", "devices (fleet)", lambda d: _by_role(d["devices"], ",.0f")),
    ("util", "utilization, %", lambda d: _by_role(d["utilization"], ".0f", 100)),
    ("bound", "bound by", lambda d: ", ".join(f"{k}: {v}" for k, v in d["bound"].items())),
    ("spilled", "bytes spilled below the fastest tier, GB", lambda d: number(d["spilled_bytes"], ",.2f", 1e-9)),
    ("batch", "decode batch, sequences", lambda d: number(d["batch"], ",.0f")),
    ("feasible", "meets latency targets", lambda d: "yes" if d["feasible"] else "no: " + "; ".join(d["infeasible_reasons"])),
]

CHALLENGER_ROWS = [
    ("npv_usd", "NPV of choosing it over the baseline, M USD", ",.2f", 1e-6),
    ("cost_ratio", "cost ratio to the baseline (wins below 1)", ".3f", 1.0),
    ("life_over_half_life", "L/H: useful life / workload half-life", ".2f", 1.0),
    ("payback_year", "discounted payback, year", ".0f", 1.0),
    ("breakeven_volume_units", "break-even volume, units", ",.0f", 1.0),
]


def options_table(result) -> html.Table:
    names = [d["name"] for d in result.details]
    base = result.scenario.structure.baseline
    head = html.Tr([html.Th("")] + [html.Th(n + (" (baseline)" if n == base else "")) for n in names])
    rows = [html.Tr([html.Th(label)] + [html.Td(fn(d), id=f"cell-{key}-{i}") for i, d in enumerate(result.details)])
            for key, label, fn in OPTION_ROWS]
    return html.Table([html.Thead(head), html.Tbody(rows)], className="results", id="options-table")


def challengers_table(result) -> html.Table | html.P:
    return versus_table(result.challengers, result.scenario.structure.baseline, CHALLENGER_ROWS)


def breakdown_figure(result) -> go.Figure:
    """Stacked PV of each cost line per option, million USD (residual value is a credit, below 0)."""
    names = [d["name"] for d in result.details]
    fig = go.Figure()
    for i, (key, label) in enumerate(COST_LINES.items()):
        ys = [d["cost_breakdown_pv_usd"].get(key, 0.0) / 1e6 for d in result.details]
        if any(abs(y) > 0 for y in ys):
            colour = "#999999" if key == "residual_usd" else OKABE_ITO[i % len(OKABE_ITO)]
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
