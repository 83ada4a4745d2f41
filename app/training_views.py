"""What the Compare and Lifecycle pages show for a ``kind: training`` scenario (the callback bodies).

The objective of a training scenario is the cost of a run and the time to train, not a cost per
served token: the tables and charts say so in their titles.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from dash import html

from tco.core.training.results import TRAINING_COST_LINES
from tco.foundation.formatting import quantity
from tco.foundation.plain_values import scalar
from tco.present.flip_text import describe_flip
from tco.present.tables import cell
from tco.present.training_comparison import CHALLENGER_ROWS, OPTION_ROWS, SECOND_LIFE_COLUMNS, SITE_COLUMNS, compare_training

from .charts import COST_LINE_COLOURS, PALETTE, styled
from .tables import number, records_table, table_block, versus_table


def options_table(result) -> html.Div:
    table, base = result.options, result.scenario.structure.baseline
    header = ["", *(n + (" (baseline)" if n == base else "") for n in table.index)]
    rows = [[key, title, *(cell(table.loc[n, key], fmt, scale) for n in table.index)] for key, title, fmt, scale in OPTION_ROWS]
    return table_block("options-table", header, rows, cell_ids=True)


def challengers_table(result) -> html.Table | html.P:
    return versus_table(result.challengers, result.scenario.structure.baseline, CHALLENGER_ROWS)


def cost_figure(result) -> go.Figure:
    """Cost per run per option, stacked by line, with the time to train in the hover."""
    runs = result.results
    days = np.array([scalar(r.time_to_train_days) for r in runs.values()])
    fig = go.Figure()
    for line in TRAINING_COST_LINES:
        usd = np.array([scalar(r.flat()[line.name]) for r in runs.values()])
        fig.add_bar(x=list(runs), y=usd / 1e6, name=line.label, marker_color=COST_LINE_COLOURS[line.name], customdata=days,
                    hovertemplate=f"{line.label}<br>%{{x}}: %{{y:,.2f}} M USD (run of %{{customdata:,.1f}} days)<extra></extra>")
    fig.update_layout(barmode="stack")
    return styled(fig, "Cost per training run, by line", "cluster option", "cost per run, million USD")


def time_figure(result) -> go.Figure:
    runs = result.results
    days = np.array([scalar(r.time_to_train_days) for r in runs.values()])
    colours = [PALETTE[0] if scalar(r.feasible) > 0 else "#999999" for r in runs.values()]
    fig = go.Figure(go.Bar(x=list(runs), y=days, marker_color=colours, text=[f"{d:,.1f} d" for d in days],
                           textposition="outside", hovertemplate="%{x}<br>%{y:,.2f} days to train<extra></extra>"))
    return styled(fig, "Time to train the token budget (failures and checkpoints included)", "cluster option",
                  "time to train, days")


def flips_list(result) -> html.Ul | html.P:
    if not result.flips:
        return html.P("No single input moved across its range changes the cheapest cluster.")
    return html.Ul([html.Li(f"{describe_flip(f)}; range {quantity(f['low'], f['unit'])} to {quantity(f['high'], f['unit'])}")
                    for f in result.flips[:8]], id="flip-list")


def siting_box(result) -> html.Div:
    s = result.siting
    if not s:
        return html.Div()
    summary = (f"One combined facility at {s['combined_site']}: {number(s['combined_usd_per_year'], ',.3f', 1e-6)} M USD/yr; "
               f"split, training at {s['split_training_site']} and serving at {s['split_serving_site']}: "
               f"{number(s['split_usd_per_year'], ',.3f', 1e-6)} M USD/yr (site-dependent costs only: power, data hall, "
               f"egress; serving fleet of '{s['serving_scenario']}' on {s['serving_option']}).")
    return html.Div([html.P(summary, id="siting-summary"), records_table(s["sites"], SITE_COLUMNS, "siting-table")])


def second_life_box(result) -> html.Div:
    life = result.second_life
    if not life:
        return html.Div(html.P("No serving option meets its targets: the second life cannot be priced."))
    records = [{"device": d, **row} for d, row in life["devices"].items()]
    intro = (f"Devices retire from training after {life['retire_after_years']:g} years and serve '{life['serving_scenario']}' "
             f"for the rest of their life; their tokens are valued at what the cheapest new option "
             f"({life['priced_against']}) charges: {life['value_usd_per_mtok']:,.3g} USD per million output tokens.")
    return html.Div([html.P(intro), records_table(records, SECOND_LIFE_COLUMNS, "second-life-table")])


def training_compare_view(scenario):
    """Everything the Compare page shows for a training scenario, in the inference view's output order."""
    result = compare_training(scenario)
    details = html.Div([challengers_table(result), html.H3("What would change the cheapest cluster"), flips_list(result),
                        html.H3("Siting: one facility or two"), siting_box(result)])
    return (scenario.title or scenario.name, scenario.question, result.verdict, options_table(result), details,
            cost_figure(result), time_figure(result))


def run_cost_figure(result) -> go.Figure:
    """Cumulative cost of each cluster over the run, million USD (linear: devices are held for the run)."""
    fig = go.Figure()
    for i, (name, r) in enumerate(result.results.items()):
        run_days = scalar(r.time_to_train_days)
        days = np.linspace(0.0, run_days, 50) if scalar(r.feasible) > 0 else np.array([0.0])
        fig.add_scatter(x=days, y=scalar(r.cost_per_run_usd) / 1e6 * days / max(run_days, 1e-12),
                        mode="lines", name=name, line={"color": PALETTE[i % len(PALETTE)]},
                        hovertemplate=f"{name}<br>day %{{x:,.1f}}: %{{y:,.2f}} M USD<extra></extra>")
    return styled(fig, "Cost accumulated over the run", "days since the run started", "cumulative cost, million USD")


def second_life_figure(result) -> go.Figure:
    life = result.second_life
    fig = go.Figure()
    if life:
        devices = list(life["devices"])
        for i, (key, label) in enumerate((("cascade_usd", "cascade to serving (PV)"), ("sell_usd", "sell at retirement"))):
            fig.add_bar(x=devices, y=[life["devices"][d][key] for d in devices], name=label,
                        marker_color=PALETTE[i], hovertemplate=f"{label}<br>%{{x}}: %{{y:,.0f}} USD per device<extra></extra>")
    return styled(fig, "Second life: value of a retired training device", "device", "USD per device at retirement")


def training_lifecycle_view(scenario):
    """The Lifecycle page for a training scenario: second life table, cost over the run, second-life values."""
    result = compare_training(scenario, with_flips=False)
    return second_life_box(result), run_cost_figure(result), second_life_figure(result)
