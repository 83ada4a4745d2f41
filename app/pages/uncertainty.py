"""Uncertainty: Monte Carlo distribution, exceedance curve and P(win); Sobol indices; run as background jobs.

Both are the package's one Monte Carlo and one Sobol (:func:`tco.studies.monte_carlo`,
:func:`tco.studies.sobol`) with the defaults of a study file, so the same seed gives the numbers
``tco study`` writes; the runs are Dash background callbacks (DiskcacheManager) with a
progress line (reset when a new run starts) and a cancel button, so a long run never blocks the server.

The distribution of any input can be set for both runs (its distribution, low and high: the rules of a scenario file's
``uncertainty:``, :meth:`tco.inputs.scenario.Scenario.with_spreads`); the choices are kept in the browser (a
``dcc.Store``), cleared when the scenario changes, and checked on the server at each run like every edit. They ride in
the link's fragment (``#spreads=...``, :func:`spreads_fragment`), tagged with the scenario and option edits they were
made for, so a shared link draws the same inputs; the controller, which owns the link's query, never reads it.
"""

from __future__ import annotations

import hashlib
import json
from urllib.parse import quote, unquote

from dash import Input, Output, State, dcc, html, no_update
from dash import ctx as triggered

from tco import studies
from tco.foundation.errors import FieldError, InputError, shown_lines
from tco.foundation.formatting import sig
from tco.foundation.labels import param_label
from tco.inputs.parameters import DISTRIBUTIONS
from tco.present import study_figures as figures
from tco.studies.sensitivity import unconverged_indices

from ..callbacks import background_run, refill_on_scenario
from ..charts import chart, chart_id, for_app, message_figure
from ..context import SCENARIO, AppContext, bounded_int, error_list
from ..controls import dropdown, number, param_options
from ..glossary import terms_line
from ..tables import table_block
from .sensitivity import metric_options

ID = "uncertainty"
LABEL = "Uncertainty"

#: Monte Carlo draws the app runs (2e6 draws: ~7 s and ~0.6 GB here; the server refuses more)
MC_SAMPLES = (100, 2_000_000)
#: seeds numpy's generators take
SEEDS = (0, 2**32 - 1)
#: Sobol base samples offered (powers of two; 2,048 over 49 parameters is ~104,000 model runs, a few seconds here)
SOBOL_N = tuple(2**k for k in range(4, 12))


def layout(ctx: AppContext):
    return html.Div([
        html.P("Every input with a sourced range is drawn from its distribution at once (rank correlations where the "
               "scenario gives them): the spread of the metric, how often the option wins, and which inputs carry the "
               "variance (Sobol). Any input can be drawn from another distribution or range: pick it below, then run.",
               className="hint"),
        html.Div(className="controls", children=[
            dropdown("mc-metric", "metric", width="380px"),
            number("mc-samples", "draws", value="2,000", width="110px"),
            number("mc-seed", "seed", value="1", width="90px"),
            html.Button("Run Monte Carlo", id="mc-run"), html.Button("Cancel", id="mc-cancel")]),
        html.Div(className="controls", children=[
            dropdown("mc-spread-param", "draw an input from", width="380px"),
            dropdown("mc-spread-distribution", "distribution", width="140px", value="uniform",
                     options=[{"label": d, "value": d} for d in DISTRIBUTIONS]),
            number("mc-spread-low", "low", width="100px", placeholder="its own"),
            number("mc-spread-high", "high", width="100px", placeholder="its own"),
            html.Button("Set distribution", id="mc-spread-set"), html.Button("Clear distributions", id="mc-spread-clear")]),
        dcc.Store(id="mc-spreads", storage_type="memory", data={}),
        html.Div(id="mc-spreads-shown"),
        html.Div(id="mc-status", className="hint"),
        html.Div(id="mc-progress", className="hint"),
        html.Div(id="mc-summary"),
        html.Div(className="two-charts", children=[chart("monte-carlo", "Run Monte Carlo to draw the distribution"),
                                                    chart("exceedance", "Run Monte Carlo to draw the exceedance curve")]),
        html.Div(className="controls", children=[
            dropdown("sobol-n", "Sobol base samples N (a power of 2)", width="160px",
                     value=256, options=[{"label": f"{n:,}", "value": n} for n in SOBOL_N]),
            html.Button("Run Sobol", id="sobol-run"), html.Button("Cancel", id="sobol-cancel")]),
        html.Div(id="sobol-status", className="hint"),
        html.Div(id="sobol-progress", className="hint"),
        chart("sobol", "Run Sobol to rank the inputs by their share of the variance"),
        terms_line("S1 / ST", "P10 – P90"),
    ])


def progress_reporter(set_progress, unit: str):
    """A ``tco.studies`` progress callback that shows ``done / total`` in the page, after each chunk."""
    def report(done: int, total: int) -> None:
        set_progress(f"{done / total:.0%} done: {done:,} of {total:,} {unit}")
    return report


def register(app, ctx: AppContext) -> None:
    refill_on_scenario(app, ctx, "mc-metric", metric_options)
    refill_on_scenario(app, ctx, "mc-spread-param", param_options)

    @app.callback(Output("mc-spreads", "data"), Output("mc-spreads-shown", "children"), Output("url", "hash"),
                  Input("mc-spread-set", "n_clicks"), Input("mc-spread-clear", "n_clicks"), SCENARIO,
                  State("state", "data"), State("mc-spreads", "data"), State("mc-spread-param", "value"),
                  State("mc-spread-distribution", "value"), State("mc-spread-low", "value"),
                  State("mc-spread-high", "value"), State("url", "hash"), prevent_initial_call=True)
    def spreads(_set, _clear, key, state, current, name, distribution, low, high, fragment):
        trigger = triggered.triggered_id
        if trigger == "mc-spread-set":
            chosen, shown = spreads_update(ctx, state, current, name, distribution, low, high)
            return chosen, shown, no_update if chosen is no_update else spreads_fragment(key, chosen)
        if trigger == "scenario-key":  # a page opened from a link, or another scenario: the link's choice if it is its
            return spreads_from_fragment(ctx, state, key, fragment)
        return {}, None, ""  # cleared

    @app.callback(Output(chart_id("monte-carlo"), "figure"), Output(chart_id("exceedance"), "figure"),
                  Output("mc-summary", "children"),
                  Input("mc-run", "n_clicks"), State("state", "data"), State("mc-metric", "value"),
                  State("mc-samples", "value"), State("mc-seed", "value"), State("mc-spreads", "data"),
                  **background_run(ctx, "mc", "running Monte Carlo..."))
    def monte_carlo(set_progress, _clicks, state, metric, samples, seed, spreads):
        return monte_carlo_view(ctx, state, metric, samples, seed, set_progress, spreads)

    @app.callback(Output(chart_id("sobol"), "figure"), Input("sobol-run", "n_clicks"), State("state", "data"),
                  State("mc-metric", "value"), State("sobol-n", "value"), State("mc-seed", "value"),
                  State("mc-spreads", "data"), **background_run(ctx, "sobol", "running Sobol (Saltelli sampling)..."))
    def sobol(set_progress, _clicks, state, metric, n, seed, spreads):
        return sobol_view(ctx, state, metric, n, seed, set_progress, spreads)


def spreads_update(ctx: AppContext, state, current, name, distribution, low, high):
    """The distributions the runs use with input ``name`` drawn from ``distribution`` on [low, high] (a blank bound
    keeps the input's own), and the table that shows them; a choice the scenario refuses is named and not kept."""
    entry = {"distribution": distribution, **{key: value for key, value in (("low", low), ("high", high))
                                             if value not in (None, "")}}
    chosen = {**(current if isinstance(current, dict) else {}), str(name): entry}
    try:
        scenario = ctx.scenario(state).with_spreads(chosen)
    except InputError as exc:
        return no_update, html.Div([error_list(exc), spreads_table(ctx, state, current)])
    return chosen, spreads_table(ctx, state, chosen, scenario)


#: longest link fragment read (a choice for every uncertain input of a large scenario is ~6 kB)
MAX_FRAGMENT_CHARS = 10_000
FRAGMENT_PREFIX = "#spreads="


def scenario_tag(key) -> str:
    """A short digest of what names a scenario apart from its value edits (:func:`tco_app.controller.scenario_key`):
    a link's distribution choice applies to the scenario it was made for only."""
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]


def spreads_fragment(key, spreads) -> str:
    """The link fragment that carries ``spreads`` for the scenario of ``key`` (empty without a choice)."""
    if not spreads:
        return ""
    return FRAGMENT_PREFIX + quote(json.dumps({"for": scenario_tag(key), "spreads": spreads}, separators=(",", ":")))


def spreads_from_fragment(ctx: AppContext, state, key, fragment):
    """``(choice, table, fragment)`` a link's fragment gives the scenario of ``key``: its choice when it was made for
    this scenario and holds (checked as a Set is), else none, the broken rules named and the fragment dropped."""
    if not isinstance(fragment, str) or not fragment.startswith(FRAGMENT_PREFIX):
        return {}, None, no_update
    try:
        if len(fragment) > MAX_FRAGMENT_CHARS:
            raise ValueError(f"is too long: at most {MAX_FRAGMENT_CHARS:,} characters")
        carried = json.loads(unquote(fragment[len(FRAGMENT_PREFIX):]))
        if not isinstance(carried, dict) or not isinstance(carried.get("spreads"), dict):
            raise ValueError("must hold a mapping of inputs to their distributions")
    except ValueError as exc:
        return {}, error_list(InputError([FieldError("shared link: spreads", f"{len(fragment):,} characters",
                                                     f"{exc}; no distribution set")])), ""
    if carried.get("for") != scenario_tag(key):  # made for another scenario (or its options): not this one's
        return {}, None, ""
    chosen = carried["spreads"]
    try:
        scenario = ctx.scenario(state).with_spreads(chosen)
    except InputError as exc:
        return {}, error_list(InputError([FieldError(f"shared link: {e.path}", e.value, f"{e.rule}; no distribution "
                                                     "set") for e in exc.errors])), ""
    return chosen, spreads_table(ctx, state, chosen, scenario), no_update


def spreads_table(ctx: AppContext, state, spreads, scenario=None):
    """The inputs whose distribution the user set, as the runs will draw them (None when there are none)."""
    if not spreads:
        return None
    try:
        scenario = scenario or ctx.scenario(state).with_spreads(spreads)
    except InputError as exc:
        return error_list(exc)
    rows = [[param_label(name), p.distribution, sig(p.low, 4), sig(p.high, 4), p.unit, name]
            for name, p in ((name, scenario.params[name]) for name in spreads)]
    return table_block("mc-spreads-table", ["input drawn", "distribution", "low", "high", "unit", "name"], rows)


def monte_carlo_view(ctx: AppContext, state, metric, samples, seed, set_progress=lambda text: None, spreads=None):
    """The Monte Carlo histogram, exceedance curve and summary table of a request (the background callback's body):
    every control is checked on the server, a refused one is named instead of run; ``spreads`` are the distributions
    the user set (:meth:`tco.inputs.scenario.Scenario.with_spreads`)."""
    try:
        scenario = ctx.scenario(state).with_spreads(spreads or {})
        parsed = studies.parse_metric(scenario, metric)
        draws = bounded_int(samples, "draws", *MC_SAMPLES)
        set_progress(f"0% done: 0 of {draws:,} draws")  # the last run's "100% done" goes at once
        result = studies.monte_carlo(scenario, [parsed], draws, bounded_int(seed, "seed", *SEEDS),
                                     progress=progress_reporter(set_progress, "draws"))
    except InputError as exc:
        return message_figure("not run: see the message above"), message_figure("not run"), error_list(exc)
    return (for_app(figures.mc_figure(result, parsed)), for_app(figures.exceedance_figure(result, parsed)),
            summary_table(result, parsed, scenario.structure.baseline))


def summary_table(result, metric, baseline: str) -> html.Div:
    """The Monte Carlo summary as a person reads it: median, P10-P90, mean, P(win), P(the option and the baseline meet
    their targets): a win counts where the baseline misses its targets whatever the metric, so a P(win) above the
    share of draws on the winning side of the break-even is read off the baseline's column."""
    rows = []
    for r in result.summary.to_dict(orient="records"):
        p_win = r.get("p_win")
        wins = "—" if p_win is None or p_win != p_win else f"{sig(100 * p_win, 3)}% ± {sig(100 * r['p_win_std_error'], 2)}%"
        rows.append([metric.label, sig(r["p50"], 4), f"{sig(r['p10'], 4)} – {sig(r['p90'], 4)}",
                     f"{sig(r['mean'], 4)} ± {sig(r['std_error'], 2)}", wins,
                     f"{sig(100 * r['p_feasible'], 3)}%", f"{sig(100 * r['p_baseline_feasible'], 3)}%", f"{int(r['n']):,}"])
    return table_block("mc-table", ["metric", "median", "P10 – P90", "mean ± std. error", f"P({metric.option} wins)",
                                    f"P({metric.option} meets the targets)", f"P(baseline {baseline} meets them)", "draws"],
                       rows)


def sobol_view(ctx: AppContext, state, metric, n, seed, set_progress=lambda text: None, spreads=None):
    """The Sobol chart of a request (the background callback's body); a refused control is named on the chart;
    ``spreads`` as for :func:`monte_carlo_view`."""
    try:
        if n not in SOBOL_N:
            raise InputError.one("Sobol base samples N", n, f"must be one of {', '.join(f'{k:,}' for k in SOBOL_N)}")
        scenario = ctx.scenario(state).with_spreads(spreads or {})
        label = studies.parse_metric(scenario, metric).label
        set_progress("starting")  # the last run's "100% done" goes at once
        result = studies.sobol(scenario, metric, n, bounded_int(seed, "seed", *SEEDS),
                               progress=progress_reporter(set_progress, "model runs"))
    except InputError as exc:
        return message_figure("; ".join(shown_lines(exc.errors)))
    frame = result.indices
    title = f"Sobol indices of the {label}{figures.missing_note(result)}"
    if unconverged_indices(frame):  # shares of variance outside [0, 1] beyond their interval: not findings yet
        title += f" (not converged at N = {n:,}: indices outside [0, 1] beyond their interval; run a larger N)"
    return for_app(figures.sobol_figure(frame, title=title))
