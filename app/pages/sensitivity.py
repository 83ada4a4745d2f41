"""Break-even and sensitivity: the chip program panel (:mod:`tco_app.program_panel`), every crossing of any parameter,
tornado, 1-D sweep, 2-D map with the break-even contour, and the parametric table (:mod:`tco_app.parametric`).

The break-evens come from :func:`tco.breakeven` (every crossing and feasibility window in the
range); tornado, sweep and map from :mod:`tco.studies`, one vectorized core call per chart.
Each control sits right above the chart it drives.
"""

from __future__ import annotations

from dash import Input, Output, State, html, no_update

from tco import studies
from tco.analysis.breakeven import breakeven
from tco.analysis.solvers import BREAKEVEN_METRICS, spans_decades
from tco.foundation.errors import InputError, shown_lines
from tco.foundation.formatting import NONE, quantity
from tco.foundation.user_numbers import read_number
from tco.present import study_figures as figures

from .. import parametric, program_panel
from ..callbacks import refill_on_scenario
from ..charts import chart, chart_id, for_app, message_figure
from ..context import SCENARIO, AppContext, bounded_int, error_list, view_state
from ..controls import dropdown, keep, number, param_options
from ..glossary import terms_line
from ..tables import table_block

ID = "sensitivity"
LABEL = "Break-even & sensitivity"

#: cells per axis of the map the app draws (a 150 x 150 map is ~1 MB in the browser; the server refuses more)
MAP_CELLS = (5, 150)

METRIC_LABELS = {"ratio": "cost ratio to the baseline", "npv": "NPV over the baseline", "lcot": "cost per million output tokens"}
CRITERIA = {"lcot": "equal cost per output token", "npv": "NPV of choosing it = target (0)",
            "ratio": "cost ratio to the baseline = target (1)"}


def metric_options(scenario) -> list[dict]:
    """Study metrics (``ratio:<option>`` ...) for every challenger; none for a training scenario
    (its verdict, flip conditions and cascade study live on Compare, Lifecycle and ``tco study``)."""
    if getattr(scenario, "kind", "inference") == "training":
        return []
    return [{"label": f"{METRIC_LABELS[m]}: {o.name}", "value": f"{m}:{o.name}"}
            for o in scenario.structure.challengers for m in METRIC_LABELS]


def breakeven_view(scenario, param, metric, low, high):
    """Every crossing of ``param`` for every challenger: one sentence and one table of windows per option."""
    if getattr(scenario, "kind", "inference") == "training":
        raise InputError.one("scenario", scenario.name, "is a training scenario: its flip conditions (the break-even of "
                             "every input) are listed on the Compare tab")
    field = scenario.params[param].field
    lo = None if low in (None, "") else read_number(low, field, "search from", check_domain=False)
    hi = None if high in (None, "") else read_number(high, field, "to", check_domain=False)
    results = breakeven(scenario, param, lo, hi, metric=metric)
    blocks = []
    for r in results:
        rows = [[quantity(w["from"], r.unit, 4), quantity(w["to"], r.unit, 4),
                 (r.option if w["option_wins"] else (r.baseline if w["baseline_feasible"] else NONE)),
                 "yes" if w["option_feasible"] else "no", "yes" if w["baseline_feasible"] else "no"] for w in r.windows]
        blocks += [html.Li(r.sentence(), className=f"breakeven-{r.status}"),
                   table_block(f"breakeven-windows-{len(blocks) // 2}",
                               ["from", "to", "wins" if metric == "lcot" else "meets the criterion",
                                f"{r.option} meets the targets", f"{r.baseline} meets the targets"], rows, row_header=False)]
    return html.Ul(blocks, id="breakeven-list")


def layout(ctx: AppContext):
    return html.Div([
        html.H3("The chip program"),
        program_panel.panel(),
        html.H3("Break-even: every crossing in a range"),
        html.P("Where an option starts or stops beating the baseline as one input moves, and where either stops meeting "
               "its latency targets (feasibility windows).", className="hint"),
        html.Div(className="controls", children=[
            dropdown("be-param", "input", width="380px"),
            dropdown("be-metric", "criterion", width="300px", value="lcot",
                     options=[{"label": v, "value": k} for k, v in CRITERIA.items() if k in BREAKEVEN_METRICS]),
            number("be-low", "search from"), number("be-high", "to")]),
        html.Div(id="breakeven-result", className="result-box"),
        terms_line("break-even", "flip condition"),
        html.H3("Sensitivity"),
        html.Div(className="controls", children=[dropdown("sens-metric", "metric (tornado, sweep and map)", width="380px")]),
        chart("tornado"),
        html.Div(className="controls", children=[dropdown("sweep-param", "sweep this input over its range")]),
        chart("sweep"),
        html.Div(className="controls", children=[
            dropdown("map-x", "map x axis", width="340px"), dropdown("map-y", "map y axis", width="340px"),
            number("map-n", "cells per axis", value="40", width="90px")]),
        chart("map"),
        parametric.section(),
    ])


def register(app, ctx: AppContext) -> None:
    refill_on_scenario(app, ctx, "be-param", param_options)
    parametric.register(app, ctx)
    program_panel.register(app, ctx)

    @app.callback(Output("be-low", "value"), Output("be-high", "value"), Input("be-param", "value"), State("state", "data"),
                  prevent_initial_call=True)
    def be_range(param, state):
        if not param:
            return no_update, no_update
        p = ctx.scenario(state).params[param]
        return f"{p.low:.6g}", f"{p.high:.6g}"

    @app.callback(Output("breakeven-result", "children"), Input("be-param", "value"), Input("be-metric", "value"),
                  Input("be-low", "value"), Input("be-high", "value"), view_state(ID), prevent_initial_call=True)
    def be_result(param, metric, low, high, state):
        if not param:
            return html.P("Pick an input and a search range.")
        try:
            return breakeven_view(ctx.scenario(state), param, metric, low, high)
        except InputError as exc:
            return error_list(exc)

    @app.callback(Output("sens-metric", "options"), Output("sens-metric", "value"),
                  Output("sweep-param", "options"), Output("sweep-param", "value"),
                  Output("map-x", "options"), Output("map-x", "value"), Output("map-y", "options"), Output("map-y", "value"),
                  SCENARIO, State("state", "data"), State("sens-metric", "value"), State("sweep-param", "value"),
                  State("map-x", "value"), State("map-y", "value"), prevent_initial_call=True)
    def choices(_key, state, metric, sweep_param, x, y):
        scenario = ctx.scenario(state)
        metrics, ranged = metric_options(scenario), param_options(scenario, ranged_only=True)
        return (metrics, keep(metric, metrics), ranged, keep(sweep_param, ranged), ranged, keep(x, ranged),
                ranged, keep(y, ranged, 1))

    @app.callback(Output(chart_id("tornado"), "figure"), Input("sens-metric", "value"), view_state(ID),
                  prevent_initial_call=True)
    def tornado(metric, state):
        if not metric:
            return message_figure("pick a metric")
        try:
            scenario = ctx.scenario(state)
            parsed = studies.parse_metric(scenario, metric)
            return for_app(figures.tornado_figure(studies.tornado(scenario, parsed), parsed))
        except InputError as exc:
            return message_figure("; ".join(shown_lines(exc.errors)))

    @app.callback(Output(chart_id("sweep"), "figure"), Input("sweep-param", "value"), Input("sens-metric", "value"),
                  view_state(ID), prevent_initial_call=True)
    def sweep(param, metric, state):
        if not param or not metric:
            return message_figure("pick an input and a metric")
        try:
            return sweep_view(ctx.scenario(state), param, metric)
        except InputError as exc:
            return message_figure("; ".join(shown_lines(exc.errors)))

    @app.callback(Output(chart_id("map"), "figure"), Input("map-x", "value"), Input("map-y", "value"),
                  Input("map-n", "value"), Input("sens-metric", "value"), view_state(ID),
                  prevent_initial_call=True)
    def grid(x, y, n, metric, state):
        if not (x and y and metric) or x == y:
            return message_figure("pick two different inputs and a metric")
        try:
            cells = bounded_int(n, "cells per axis", MAP_CELLS[0], MAP_CELLS[1])
            return map_view(ctx.scenario(state), x, y, cells, metric)
        except InputError as exc:
            return message_figure("; ".join(shown_lines(exc.errors)))


def sweep_view(scenario, param, metric):
    """A 1-D sweep of ``param`` over its range (geometric when it spans decades)."""
    p, parsed = scenario.params[param], studies.parse_metric(scenario, metric)
    frame = studies.sweep(scenario, param, p.low, p.high, points=60, log=spans_decades(p.low, p.high), metrics=[parsed])
    return for_app(figures.sweep_figure(frame, [parsed]))


def map_view(scenario, x, y, n, metric):
    """An n x n map of ``metric`` over the ranges of ``x`` and ``y``, with the break-even contour."""
    px, py = scenario.params[x], scenario.params[y]
    grid = studies.grid_map(scenario, x, y, (px.low, px.high), (py.low, py.high), n, n, metric,
                            x_log=spans_decades(px.low, px.high), y_log=spans_decades(py.low, py.high))
    return for_app(figures.map_figure(grid))
