"""Break-even and sensitivity: break-even of any parameter, tornado, 1-D sweep, 2-D map with the break-even contour.

The break-even comes from :func:`tco.breakeven`; tornado, sweep and map from
:mod:`tco.studies` (issue: studies), one vectorized core call per chart.
"""

from __future__ import annotations

from dash import Input, Output, State, dcc, html, no_update

from tco import studies
from tco.api import breakeven
from tco.errors import InputError, shown_lines
from tco.solvers import BREAKEVEN_METRICS, spans_decades
from tco.studies import figures

from ..charts import chart, chart_id, message_figure
from ..context import TAB, AppContext, bounded_int, error_list, shown

ID = "sensitivity"
LABEL = "Break-even & sensitivity"

#: cells per axis of the map the app draws (a 150 x 150 map is ~1 MB in the browser; the server refuses more)
MAP_CELLS = (5, 150)

METRIC_LABELS = {"ratio": "cost ratio to baseline", "npv": "NPV over baseline", "lcot": "cost per Mtok out"}


def metric_options(scenario) -> list[dict]:
    """Study metrics (``ratio:<option>`` ...) for every challenger; none for a training scenario
    (its verdict, flip conditions and cascade study live on Compare, Lifecycle and ``tco study``)."""
    if getattr(scenario, "kind", "inference") == "training":
        return []
    return [{"label": f"{METRIC_LABELS[m]}: {o.name}", "value": f"{m}:{o.name}"}
            for o in scenario.structure.challengers for m in METRIC_LABELS]


def param_options(scenario, ranged_only: bool = False) -> list[dict]:
    return [{"label": f"{p.name} [{p.unit}]", "value": p.name} for p in scenario.params.values_list()
            if p.uncertain or not ranged_only]


def _keep(value, options, fallback_index=0):
    values = [o["value"] for o in options]
    if value in values:
        return value
    return values[min(fallback_index, len(values) - 1)] if values else None


def breakeven_view(scenario, param, metric, low, high):
    """The break-even of ``param`` for every challenger, in words."""
    if getattr(scenario, "kind", "inference") == "training":
        raise InputError.one("scenario", scenario.name, "is a training scenario: its flip conditions (the break-even of "
                             "every input) are listed on the Compare tab")
    results = breakeven(scenario, param, low, high, metric=metric)
    items = []
    for r in results:
        if r.status == "crosses":
            side = "above" if r.wins_above else "below"
            text = f"{r.option} wins {side} {r.param} = {r.value:.6g} {r.unit} (base value {r.base_value:g} {r.unit})"
        else:
            text = f"{r.option}: {'wins' if r.status == 'always' else 'never wins'} across [{r.low:g}, {r.high:g}] {r.unit}"
        items.append(html.Li(text, className=f"breakeven-{r.status}"))
    return html.Ul(items, id="breakeven-list")


def _dropdown(ident, label, width="420px", **kw):
    return html.Div(className="control", children=[html.Label(label, htmlFor=ident),
                                                   dcc.Dropdown(id=ident, clearable=False, style={"width": width}, **kw)])


def _number(ident, label, **kw):
    return html.Div(className="control", children=[html.Label(label, htmlFor=ident),
                                                   dcc.Input(id=ident, type="number", debounce=True, **kw)])


def layout(ctx: AppContext):
    return html.Div([
        html.H3("Break-even"),
        html.Div(className="controls", children=[
            _dropdown("be-param", "parameter"),
            _dropdown("be-metric", "criterion", width="300px", value="lcot",
                      options=[{"label": f"{k}: {v[0]}", "value": k} for k, v in BREAKEVEN_METRICS.items()]),
            _number("be-low", "search from"), _number("be-high", "to")]),
        html.Div(id="breakeven-result", className="result-box"),
        html.H3("Sensitivity"),
        html.Div(className="controls", children=[_dropdown("sens-metric", "metric", width="380px")]),
        chart("tornado", height=520),
        html.Div(className="controls", children=[_dropdown("sweep-param", "sweep parameter")]),
        chart("sweep"),
        html.Div(className="controls", children=[
            _dropdown("map-x", "map x"), _dropdown("map-y", "map y"),
            _number("map-n", "cells per axis", value=40, min=MAP_CELLS[0], max=MAP_CELLS[1], step=1)]),
        chart("map", height=520),
    ])


def register(app, ctx: AppContext) -> None:
    @app.callback(Output("be-param", "options"), Output("be-param", "value"), Input("state", "data"),
                  State("be-param", "value"), prevent_initial_call=True)
    def be_params(state, current):
        options = param_options(ctx.scenario(state))
        return options, _keep(current, options)

    @app.callback(Output("be-low", "value"), Output("be-high", "value"), Input("be-param", "value"), State("state", "data"),
                  prevent_initial_call=True)
    def be_range(param, state):
        if not param:
            return no_update, no_update
        p = ctx.scenario(state).params[param]
        return p.low, p.high

    @app.callback(Output("breakeven-result", "children"), Input("be-param", "value"), Input("be-metric", "value"),
                  Input("be-low", "value"), Input("be-high", "value"), Input("state", "data"), TAB, prevent_initial_call=True)
    def be_result(param, metric, low, high, state, tab):
        shown(tab, ID)
        if not param or low is None or high is None:
            return html.P("Pick a parameter and a search range.")
        try:
            return breakeven_view(ctx.scenario(state), param, metric, low, high)
        except InputError as exc:
            return error_list(exc)

    @app.callback(Output("sens-metric", "options"), Output("sens-metric", "value"),
                  Output("sweep-param", "options"), Output("sweep-param", "value"),
                  Output("map-x", "options"), Output("map-x", "value"), Output("map-y", "options"), Output("map-y", "value"),
                  Input("state", "data"), TAB, State("sens-metric", "value"), State("sweep-param", "value"),
                  State("map-x", "value"), State("map-y", "value"), prevent_initial_call=True)
    def choices(state, tab, metric, sweep_param, x, y):
        shown(tab, ID)
        scenario = ctx.scenario(state)
        metrics, ranged = metric_options(scenario), param_options(scenario, ranged_only=True)
        return (metrics, _keep(metric, metrics), ranged, _keep(sweep_param, ranged), ranged, _keep(x, ranged),
                ranged, _keep(y, ranged, 1))

    @app.callback(Output(chart_id("tornado"), "figure"), Input("sens-metric", "value"), State("state", "data"),
                  prevent_initial_call=True)
    def tornado(metric, state):
        if not metric:
            return message_figure("pick a metric")
        try:
            scenario = ctx.scenario(state)
            parsed = studies.parse_metric(scenario, metric)
            return figures.tornado_figure(studies.tornado(scenario, parsed), parsed)
        except InputError as exc:
            return message_figure("; ".join(shown_lines(exc.errors)))

    @app.callback(Output(chart_id("sweep"), "figure"), Input("sweep-param", "value"), Input("sens-metric", "value"),
                  State("state", "data"), prevent_initial_call=True)
    def sweep(param, metric, state):
        if not param or not metric:
            return message_figure("pick a parameter and a metric")
        try:
            return sweep_view(ctx.scenario(state), param, metric)
        except InputError as exc:
            return message_figure("; ".join(shown_lines(exc.errors)))

    @app.callback(Output(chart_id("map"), "figure"), Input("map-x", "value"), Input("map-y", "value"),
                  Input("map-n", "value"), Input("sens-metric", "value"), State("state", "data"), prevent_initial_call=True)
    def grid(x, y, n, metric, state):
        if not (x and y and metric) or x == y:
            return message_figure("pick two different parameters and a metric")
        try:
            cells = bounded_int(n, "cells per axis", MAP_CELLS[0], MAP_CELLS[1])
            return map_view(ctx.scenario(state), x, y, cells, metric)
        except InputError as exc:
            return message_figure("; ".join(shown_lines(exc.errors)))


def sweep_view(scenario, param, metric):
    """A 1-D sweep of ``param`` over its range (geometric when it spans decades)."""
    p, parsed = scenario.params[param], studies.parse_metric(scenario, metric)
    frame = studies.sweep(scenario, param, p.low, p.high, points=60, log=spans_decades(p.low, p.high), metrics=[parsed])
    return figures.sweep_figure(frame, [parsed])


def map_view(scenario, x, y, n, metric):
    """An n x n map of ``metric`` over the ranges of ``x`` and ``y``, with the break-even contour."""
    px, py = scenario.params[x], scenario.params[y]
    grid = studies.grid_map(scenario, x, y, (px.low, px.high), (py.low, py.high), n, n, metric,
                            x_log=spans_decades(px.low, px.high), y_log=spans_decades(py.low, py.high))
    return figures.map_figure(grid)
