"""Compare: the verdict (winner, margin, driver, what flips it, what it rests on), each option's cost per token,
efficiency, latency and sizing, each challenger against the baseline (with the chip program: the fleet's own
units against the volume assumed, whether the win needs external sales, the break-even demand and external
sales), and two charts.

The rows are :mod:`tco.present.tables`' (the same as ``tco compare``'s), the verdict
:func:`tco.analysis.verdict.decide`'s (the same sentence as the CLI, the JSON and the workbook Cover).
"""

from __future__ import annotations

import plotly.graph_objects as go
from dash import Input, Output, dcc, html

from tco.analysis.verdict import DEFAULT_TIE_TOLERANCE, TIE_TOLERANCE
from tco.core.outputs import COST_LINES
from tco.foundation.errors import InputError
from tco.foundation.user_numbers import read_number
from tco.present import program_text
from tco.present.comparison import compare
from tco.present.flip_text import describe_flip
from tco.present.market_text import market_sentences
from tco.present.tables import challenger_rows, option_rows
from tco.present.verdict_text import near_tie

from ..builder import builder_panel
from ..charts import COST_LINE_COLOURS, PALETTE, chart, chart_id, styled
from ..context import AppContext, view_state
from ..glossary import terms_line
from ..tables import table_block
from ..training_views import training_compare_view

ID = "compare"
LABEL = "Compare"
#: flip conditions listed under the verdict (all of them are in the JSON and on the Decide tab)
LISTED_FLIPS = 6


def verdict_card(decision) -> list:
    """The verdict as a card: the headline, what flips it (a list), and what the win rests on."""
    flips = decision.flips[:LISTED_FLIPS]
    more = len(decision.flips) - len(flips)
    parts = [html.P(decision.headline or decision.text, className="verdict-headline")]
    if flips:
        title = "What decides it" if decision.kind == "tie" else "It flips if (each input alone, within its sourced range)"
        parts += [html.H4(title), html.Ul([html.Li(describe_flip(f)) for f in flips], id="flip-list")]
        if more:
            parts.append(html.P(f"and {more} more (Decide tab, or tco compare --format json)", className="hint"))
    elif decision.kind in ("win", "only", "tie"):
        parts.append(html.P("No single input moved within its sourced range changes the winner.", id="flip-list"))
    if decision.ties:
        parts += [html.H4("Near-ties, not flips (windows narrower than the search resolves)"),
                  html.Ul([html.Li(near_tie(t, decision)) for t in decision.ties[:LISTED_FLIPS]], id="near-ties")]
    if decision.rests_on:
        parts += [html.H4("The win rests on" if decision.kind != "tie" else "The lead rests on"),
                  html.Ul([html.Li(r) for r in decision.rests_on], id="rests-on")]
    return parts


def options_block(result) -> html.Div:
    base = result.scenario.structure.baseline
    names = list(result.results)
    header = ["", *(f"{n} (baseline)" if n == base else n for n in names)]
    rows = [[r.key, r.title, *r.cells] for r in option_rows(result.results)]
    return table_block("options-table", header, rows, cell_ids=True)


def challengers_block(result):
    challengers = result.challengers.to_dict(orient="index")
    if not challengers:
        return html.P("The scenario has no option besides the baseline.")
    base = result.scenario.structure.baseline
    header = ["", *(f"{n} vs {base}" for n in challengers)]
    block = table_block("challengers-table", header, [[r.title, *r.cells] for r in challenger_rows(challengers)])
    notes = []
    if result.baseline_roadmap:  # the generations the baseline runs, and a refresh plan that would cost less
        notes += [html.H4("The baseline's refresh plan"),
                  html.P(program_text.roadmap_sentence(result.baseline_roadmap), id="roadmap-note")]
    if result.program:
        wins = {name: challengers[name]["npv_usd"] > 0 for name in result.program}
        notes += [html.H4("The chip program"),
                  html.Ul([html.Li(s) for s in program_text.program_sentences(result.program, wins)], id="program-notes")]
    market = market_sentences(result.market, result.results, result.decision.winner) if result.market else []
    if market:  # buying the tokens from an API, renting the fleet (tco.analysis.market)
        notes += [html.H4("Against the market"), html.Ul([html.Li(s) for s in market], id="market-notes")]
    return html.Div([block, *notes]) if notes else block


def breakdown_figure(result) -> go.Figure:
    """Stacked PV of each cost line per option, million USD (residual value is a credit, below 0)."""
    names = [d["name"] for d in result.details]
    fig = go.Figure()
    for line in COST_LINES:
        ys = [d["cost_breakdown_pv_usd"].get(line.line, 0.0) / 1e6 for d in result.details]
        if any(abs(y) > 0 for y in ys):
            fig.add_bar(x=names, y=ys, name=line.label, marker_color=COST_LINE_COLOURS[line.line],
                        hovertemplate=f"{line.label}<br>%{{x}}: %{{y:,.2f}} M USD (PV)<extra></extra>")
    fig.update_layout(barmode="relative")
    return styled(fig, "Present value of costs over the horizon, by line", "fleet option", "present value, million USD",
                  height=420)


def lcot_figure(result) -> go.Figure:
    """Cost per million output tokens per option, with the baseline and the model's API list prices (the same
    requests bought per token, :mod:`tco.analysis.market`) as reference lines."""
    d = result.details
    base = result.options.loc[result.scenario.structure.baseline, "lcot_usd_per_mtok"]
    colours = [PALETTE[0] if x["feasible"] else "#999999" for x in d]
    fig = go.Figure(go.Bar(x=[x["name"] for x in d], y=[x["lcot_usd_per_mtok"] for x in d], marker_color=colours,
                           text=[f"${x['lcot_usd_per_mtok']:,.3g}" for x in d], textposition="outside", cliponaxis=False,
                           hovertemplate="%{x}<br>%{y:,.4g} USD per million output tokens<extra></extra>", showlegend=False))
    names = [x["name"] for x in d]
    fig.add_scatter(x=names, y=[base] * len(names), mode="lines", line={"dash": "dash", "color": PALETTE[5]},
                    name=f"baseline {result.scenario.structure.baseline}: ${base:,.3g}", hoverinfo="skip")
    quotes = result.market.prices if result.market else ()
    for quote, colour in zip(quotes, (PALETTE[3], PALETTE[2], PALETTE[1], PALETTE[4]) * 4, strict=False):
        # what the same requests cost at an API's list prices
        fig.add_scatter(x=names, y=[quote.usd_per_mtok] * len(names), mode="lines",
                        line={"dash": "dot", "color": colour}, hoverinfo="skip",
                        name=f"{quote.provider} API list price ({quote.date}): ${quote.usd_per_mtok:,.3g}")
    fig.update_yaxes(rangemode="tozero")
    return styled(fig, "Levelized cost per million output tokens (grey: misses a latency target)", "fleet option",
                  "USD per million output tokens", height=420)


def layout(ctx: AppContext, initial: tuple | None = None):
    """The Compare page; ``initial`` (what :func:`compare_view` returns) fills it in before any callback runs."""
    title, question, verdict, options, challengers, lcot, breakdown = initial or (None,) * 7
    return html.Div([
        html.H2(title, id="scenario-title"),
        html.P(question, id="scenario-question", className="hint"),
        html.Div(verdict, id="verdict", className="verdict"),
        builder_panel(),
        html.Div(className="controls inline", children=[
            html.Label("tie within", htmlFor="tie-tolerance",
                       title="two options closer than this share of the cheaper one's cost are called a tie"),
            dcc.Input(id="tie-tolerance", type="text", value="2%", debounce=True, style={"width": "70px"}),
            html.Span(id="tie-note", className="hint")]),
        html.Div(options, id="options-table-box"),
        terms_line("LCOT", "TTFT", "TPOT", "percentile", "replica shape", "bound by", "spilled bytes",
                   "prefill interference", "prefix cache hit rate", "accepted tokens per step", "tie"),
        html.H3("Against the baseline"),
        html.Div(challengers, id="challengers-box"),
        html.Div(className="two-charts", children=[chart("compare-lcot", figure=lcot), chart("compare-breakdown",
                                                                                            figure=breakdown)]),
    ])


def register(app, ctx: AppContext) -> None:
    @app.callback(Output("scenario-title", "children"), Output("scenario-question", "children"),
                  Output("verdict", "children"), Output("options-table-box", "children"),
                  Output("challengers-box", "children"), Output(chart_id("compare-lcot"), "figure"),
                  Output(chart_id("compare-breakdown"), "figure"), Output("tie-note", "children"),
                  view_state(ID), Input("tie-tolerance", "value"), prevent_initial_call=True)
    def show(state, tolerance):
        share, note = tie_tolerance(tolerance)
        return *compare_view(ctx.scenario(state), share), note


def tie_tolerance(raw) -> tuple[float, str]:
    """The tie tolerance typed by the user ('2%', '0.02'), or the default with a note saying why not."""
    try:
        return read_number(raw, TIE_TOLERANCE, "tie tolerance"), ""
    except InputError as exc:
        return DEFAULT_TIE_TOLERANCE, f"{exc.errors[0]}: {DEFAULT_TIE_TOLERANCE:.0%} used"


def compare_view(scenario, tie: float = DEFAULT_TIE_TOLERANCE):
    """Everything the Compare page shows, for one scenario (the callback body; benchmarked)."""
    if getattr(scenario, "kind", "inference") == "training":
        return training_compare_view(scenario)
    result = compare(scenario, tie_tolerance=tie)
    return (scenario.title or scenario.name, scenario.question, verdict_card(result.decision), options_block(result),
            challengers_block(result), lcot_figure(result), breakdown_figure(result))
