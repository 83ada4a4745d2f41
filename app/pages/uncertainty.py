"""Uncertainty: Monte Carlo distribution and P(win), Sobol indices, run as background jobs.

Both come from :mod:`tco.studies`; the runs are Dash background callbacks (DiskcacheManager)
with a progress line and a cancel button, so a long run never blocks the server.
"""

from __future__ import annotations

from dash import Input, Output, State, dcc, html

from tco import studies
from tco.studies import figures

from ..charts import chart, chart_id
from ..context import AppContext
from .sensitivity import _dropdown, _keep, _number, metric_options

ID = "uncertainty"
LABEL = "Uncertainty"


def layout(ctx: AppContext):
    return html.Div([
        html.Div(className="controls", children=[
            _dropdown("mc-metric", "metric", width="380px"),
            _number("mc-samples", "samples", value=2000, min=100, max=2_000_000, step=100),
            _number("mc-seed", "seed", value=1, min=0, step=1),
            html.Button("Run Monte Carlo", id="mc-run"), html.Button("Cancel", id="mc-cancel")]),
        html.Div(id="mc-status", className="hint"),
        html.Div(id="mc-progress", className="hint"),
        html.Div(id="mc-summary", className="table-box"),
        chart("monte-carlo"),
        html.Div(className="controls", children=[
            _dropdown("sobol-n", "Sobol base samples N (a power of 2: the Sobol' sequence's balance)", width="140px",
                      value=256, options=[{"label": f"{2 ** k:,}", "value": 2 ** k} for k in range(4, 14)]),
            html.Button("Run Sobol", id="sobol-run"), html.Button("Cancel", id="sobol-cancel")]),
        html.Div(id="sobol-status", className="hint"),
        html.Div(id="sobol-progress", className="hint"),
        chart("sobol", height=520),
        dcc.Store(id="uncertainty-dummy"),
    ])


def progress_reporter(set_progress, unit: str):
    """A ``tco.studies`` progress callback that shows ``done / total`` in the page, after each chunk."""
    def report(done: int, total: int) -> None:
        set_progress(f"{done / total:.0%} done: {done:,} of {total:,} {unit}")
    return report


def register(app, ctx: AppContext) -> None:
    @app.callback(Output("mc-metric", "options"), Output("mc-metric", "value"), Input("state", "data"),
                  State("mc-metric", "value"), prevent_initial_call=True)
    def metrics(state, current):
        options = metric_options(ctx.scenario(state))
        return options, _keep(current, options)

    @app.callback(Output(chart_id("monte-carlo"), "figure"), Output("mc-summary", "children"),
                  Input("mc-run", "n_clicks"), State("state", "data"), State("mc-metric", "value"),
                  State("mc-samples", "value"), State("mc-seed", "value"),
                  background=True, manager=ctx.background_manager, prevent_initial_call=True,
                  running=[(Output("mc-run", "disabled"), True, False), (Output("mc-cancel", "disabled"), False, True),
                           (Output("mc-status", "children"), "running Monte Carlo...", "")],
                  cancel=[Input("mc-cancel", "n_clicks")], progress=Output("mc-progress", "children"))
    def monte_carlo(set_progress, _clicks, state, metric, samples, seed):
        scenario = ctx.scenario(state)
        parsed = studies.parse_metric(scenario, metric)
        result = studies.monte_carlo(scenario, [parsed], int(samples or 2000), int(seed or 0),
                                     progress=progress_reporter(set_progress, "samples"))
        summary = result.summary.round(4)
        table = html.Table([html.Thead(html.Tr([html.Th(c) for c in summary.columns])),
                            html.Tbody([html.Tr([html.Td(str(v)) for v in row]) for row in summary.itertuples(index=False)])],
                           className="results", id="mc-table")
        return figures.mc_figure(result, parsed), table

    @app.callback(Output(chart_id("sobol"), "figure"), Input("sobol-run", "n_clicks"), State("state", "data"),
                  State("mc-metric", "value"), State("sobol-n", "value"), State("mc-seed", "value"),
                  background=True, manager=ctx.background_manager, prevent_initial_call=True,
                  running=[(Output("sobol-run", "disabled"), True, False), (Output("sobol-cancel", "disabled"), False, True),
                           (Output("sobol-status", "children"), "running Sobol (Saltelli sampling)...", "")],
                  cancel=[Input("sobol-cancel", "n_clicks")], progress=Output("sobol-progress", "children"))
    def sobol(set_progress, _clicks, state, metric, n, seed):
        frame = studies.sobol(ctx.scenario(state), metric, int(n or 256), int(seed or 0),
                              progress=progress_reporter(set_progress, "model runs"))
        return figures.sobol_figure(frame, title=f"Sobol indices of {metric}")
