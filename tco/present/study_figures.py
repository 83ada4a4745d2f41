"""Plotly figures of the study results: axis titles carry units; colours are colour-blind safe.

Palette: Okabe & Ito (2008), "Color Universal Design"; sequential maps use viridis.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from tco.foundation.formatting import sig
from tco.foundation.labels import param_label
from tco.present.figure_style import PALETTE, style
from tco.present.study_findings import stretch_words
from tco.studies.gridmap import GridMap
from tco.studies.metrics import Metric
from tco.studies.montecarlo import MonteCarloResult
from tco.studies.sensitivity import Sensitivity

LOW_COLOUR, HIGH_COLOUR, LINE_COLOUR = PALETTE[0], PALETTE[1], PALETTE[7]


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str, height: int | None = None) -> go.Figure:
    return style(fig, title, x_title, y_title, height)


def _label(name: str, unit: str = "") -> str:
    """A parameter's human label with its unit: ``groq-lpu unit price [USD]``."""
    return f"{param_label(name)} [{unit}]" if unit else param_label(name)


def _mark_threshold(fig: go.Figure, metric: Metric, vertical: bool, position: str = "bottom left") -> None:
    if np.isfinite(metric.threshold):
        mark = fig.add_vline if vertical else fig.add_hline
        mark(metric.threshold, line_dash="dash", line_color=LINE_COLOUR, annotation_text="break-even",
             annotation_position=position, annotation_bgcolor="rgba(255,255,255,0.85)")


def tornado_figure(frame: pd.DataFrame, metric: Metric, top: int = 15) -> go.Figure:
    """Horizontal bars from base to the metric at each parameter's low and high; base and break-even marked.

    Parameters are named by their labels (``groq-lpu unit price``); a star marks one whose range
    makes the metric's option and the baseline swap places (the pair the tornado compares), a dagger one at whose end
    an option of the pair misses a latency target (no bar at that end). The base value is labelled at the top, the
    break-even at the bottom, so the two never collide.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`tco.studies.tornado.tornado`'s table.
    metric : Metric
        Its metric (axis title, break-even line).
    top : int [-]
        Parameters shown (largest swings).

    Returns
    -------
    plotly.graph_objects.Figure
        Bars in the metric's unit.

    References
    ----------
    [okabe-ito-2008] the colour-blind-safe palette of every study figure.
    """
    rows = frame.head(top).iloc[::-1]
    base = float(rows["metric_base"].iloc[0]) if len(rows) else np.nan
    labels = [f"{param_label(p)}{' *' if c else ''}{' †' if lo or hi else ''}"
              for p, c, lo, hi in zip(rows["param"], rows["crosses_breakeven"], rows["misses_low"], rows["misses_high"],
                                      strict=True)]
    fig = go.Figure()
    sides = (("metric_low", "input at its low value", LOW_COLOUR), ("metric_high", "input at its high value", HIGH_COLOUR))
    for column, name, colour in sides:
        fig.add_bar(y=labels, x=rows[column] - base, base=base, orientation="h", name=name, marker_color=colour,
                    customdata=np.stack([rows["low" if column == "metric_low" else "high"], rows["unit"]], axis=-1),
                    hovertemplate="%{y}<br>input %{customdata[0]:.4g} %{customdata[1]}<br>metric %{x:.4g}<extra></extra>")
    fig.update_layout(barmode="overlay", bargap=0.25)
    fig.add_vline(base, line_color=LINE_COLOUR, annotation_text=f"base {base:.4g}", annotation_position="top right",
                  annotation_bgcolor="rgba(255,255,255,0.85)")
    _mark_threshold(fig, metric, vertical=True, position="bottom right")
    fig.update_yaxes(automargin=True, tickfont={"size": 11})
    return _layout(fig, f"Tornado: {metric.label} (* {metric.option} and the baseline swap places within the range; "
                        "† an option misses a latency target at an end: no bar there)", metric.label, "",
                   height=max(360, 26 * len(rows) + 140))


def sweep_figure(frame: pd.DataFrame, metrics: list[Metric]) -> go.Figure:
    """One line per metric along the swept parameter, one y-axis per unit; break-even points marked.

    A ratio and USD never share an axis; a third unit gets its own row.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`tco.studies.sweep.sweep`'s table (its ``attrs`` give the parameter, unit and break-evens).
    metrics : list[Metric]
        The metrics drawn.

    Returns
    -------
    plotly.graph_objects.Figure
        The metrics [their units] against the parameter [its unit].
    """
    from plotly.subplots import make_subplots

    param, unit = frame.attrs.get("param", frame.columns[0]), frame.attrs.get("unit", "")
    units = list(dict.fromkeys(m.unit for m in metrics))
    rows = 1 if len(units) <= 2 else len(units)
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        specs=[[{"secondary_y": len(units) == 2}] for _ in range(rows)])
    for i, m in enumerate(metrics):
        k = units.index(m.unit)
        fig.add_scatter(x=frame[param], y=frame[m.name], mode="lines", name=m.label, line_color=PALETTE[i % len(PALETTE)],
                        row=k + 1 if rows > 1 else 1, col=1, secondary_y=(k == 1 and rows == 1))
    for k, u in enumerate(units):
        titles = " / ".join(m.label.rsplit(" [", 1)[0] for m in metrics if m.unit == u)
        fig.update_yaxes(title_text=f"{titles} [{u}]", row=k + 1 if rows > 1 else 1, col=1,
                         secondary_y=(k == 1 and rows == 1))
    for b in frame.attrs.get("breakevens", []):
        fig.add_vline(b["value"], line_dash="dot", line_color=LINE_COLOUR)
    _label_stretches(fig, frame[param].to_numpy(), frame.attrs.get("windows", []))
    first = next(m for m in metrics if m.unit == units[0])
    if np.isfinite(first.threshold):
        fig.add_hline(first.threshold, line_dash="dash", line_color=LINE_COLOUR, row=1, col=1)
    if _geometric(frame[param].to_numpy()):
        fig.update_xaxes(type="log")
    fig = _layout(fig, f"Sweep of {param_label(param)}", None, None, height=420 if rows == 1 else 260 * rows)
    fig.update_xaxes(title_text=_label(param, unit), row=rows, col=1)
    return fig


#: the height of one stacked stretch label, as a share of the plot [-]
STRETCH_LABEL_STEP = 0.075


def _label_stretches(fig: go.Figure, xs: np.ndarray, windows: list[dict]) -> None:
    """One label per stretch where a challenger wins (``wins from 4,365 to 4,412``, ``below``, ``above``), each on
    its own line from the top, so crossings a few units apart never print over each other; a label starts at its
    stretch and runs right in the left half of the axis, ends at it and runs left in the right half."""
    geometric = _geometric(xs)
    scale = np.log10 if geometric else (lambda v: v)
    low, high = float(xs[0]), float(xs[-1])
    for i, w in enumerate(windows):
        a, b = w["from"], w["to"]
        text = f"{w['option']} wins {stretch_words(a, b, low, high, lambda v: f'{v:.4g}')}"
        if w.get("baseline_misses_targets"):
            text += " (the baseline misses a target)"
        anchor = b if a <= low and b < high else a  # a stretch from the range's low end is labelled at its end
        left_half = scale(anchor) - scale(low) <= 0.5 * (scale(high) - scale(low))
        fig.add_annotation(x=scale(anchor), y=1 - STRETCH_LABEL_STEP * i, xref="x", yref="paper", text=text,
                           showarrow=False, xanchor="left" if left_half else "right", yanchor="top", textangle=0,
                           bgcolor="rgba(255,255,255,0.85)")


def _geometric(x: np.ndarray) -> bool:
    return len(x) > 2 and x.min() > 0 and np.allclose(np.diff(np.log(x)), np.log(x[1] / x[0]), rtol=1e-6)


#: the wash over the map's cells where the option or the baseline misses a latency target
MISSED_WASH = "rgba(255,255,255,0.6)"


#: the map legend's background: dark enough for the white line and the pale wash to show as keys
MAP_LEGEND_BACKGROUND = "rgba(80,80,80,0.85)"


def _legend_key(fig: go.Figure, name: str, **style) -> None:
    """A legend entry for a heatmap or contour trace of the same ``name`` (plotly draws none for them): an empty
    scatter trace in its style, in its legend group (clicking the key hides the trace too)."""
    fig.add_scatter(x=[None], y=[None], mode="lines" if "line" in style else "markers", name=name, legendgroup=name,
                    hoverinfo="skip", **style)


def map_figure(grid: GridMap) -> go.Figure:
    """Heatmap of the metric with the contour where the winner changes (the option's gap is zero), washed pale where
    the option or the baseline misses a latency target.

    The winner there is the one that meets its targets, whatever the metric's colour says (the default's cost ratio of
    Groq over H100 stays above 3 at prompts beyond ~4,300 tokens, where H100 misses its TTFT target and Groq wins): the
    wash and the hover say so.

    Parameters
    ----------
    grid : GridMap
        :func:`tco.studies.gridmap.grid_map`'s result.

    Returns
    -------
    plotly.graph_objects.Figure
        The metric [its unit] over the two parameters (log axes where the grid is geometric),
        the winner's changes in white, the cells that miss a latency target pale.
    """
    fig = go.Figure()
    missed = np.asarray(grid.missed, bool)
    fig.add_heatmap(x=grid.x, y=grid.y, z=grid.z, colorscale="Viridis", customdata=np.where(
                        missed, "<br>a latency target missed: the winner is who meets the targets", ""),
                    colorbar={"title": {"text": grid.metric.label, "side": "right"}, "thickness": 14},
                    hovertemplate=f"{param_label(grid.x_param)} %{{x:.4g}}<br>{param_label(grid.y_param)} %{{y:.4g}}"
                                  f"<br>%{{z:.4g}}%{{customdata}}<extra></extra>")
    if missed.any():
        name = "a latency target missed (pale)"
        fig.add_heatmap(x=grid.x, y=grid.y, z=np.where(missed, 1.0, np.nan), colorscale=[[0, MISSED_WASH], [1, MISSED_WASH]],
                        showscale=False, hoverinfo="skip", name=name, legendgroup=name, showlegend=False)
        _legend_key(fig, name, marker={"symbol": "square", "size": 14, "color": MISSED_WASH})
    name = "the winner changes (white line)"
    fig.add_contour(x=grid.x, y=grid.y, z=grid.gap, contours={"start": 0, "end": 0, "size": 1, "coloring": "none",
                                                              "showlabels": False},
                    line={"color": "white", "width": 3}, showscale=False, name=name, legendgroup=name, hoverinfo="skip",
                    showlegend=False)
    _legend_key(fig, name, line={"color": "white", "width": 3})
    for axis, values in (("xaxis", grid.x), ("yaxis", grid.y)):
        if _geometric(values):
            fig.update_layout({axis: {"type": "log"}})
    wins = grid.wins.mean()
    fig.update_layout(legend={"bgcolor": MAP_LEGEND_BACKGROUND, "font": {"color": "white"}})
    pale = "; pale: a latency target missed" if missed.any() else ""
    return _layout(fig, f"{grid.metric.label}: {grid.metric.option} wins in {wins:.0%} of the map (white: the winner "
                        f"changes{pale})", _label(grid.x_param, grid.x_unit), _label(grid.y_param, grid.y_unit), height=520)


def _finite_draws(result: MonteCarloResult, metric: Metric) -> np.ndarray:
    values = result.samples[metric.name].to_numpy(float)
    return values[np.isfinite(values)]


def _view_range(values: np.ndarray, threshold: float) -> list[float]:
    """The x range that shows the draws: P0.5 to P99.5 (a few extreme draws do not squash the rest), widened to
    the break-even when it lies within half a span of them."""
    lo, hi = np.percentile(values, [0.5, 99.5]) if len(values) else (0.0, 1.0)
    span = max(hi - lo, abs(hi) * 1e-3, 1e-12)
    if np.isfinite(threshold) and lo - span / 2 <= threshold <= hi + span / 2:
        lo, hi = min(lo, threshold), max(hi, threshold)
    return [lo - 0.04 * span, hi + 0.04 * span]


def mc_figure(result: MonteCarloResult, metric: Metric, bins: int = 80) -> go.Figure:
    """Histogram of one metric's draws with P10/P50/P90 and the break-even marked.

    Labels are stacked, never overprinted; the x axis spans the draws (P0.5-P99.5), not the outliers.

    Parameters
    ----------
    result : MonteCarloResult
        A Monte Carlo run.
    metric : Metric
        One of its metrics.
    bins : int [-]
        Histogram bins.

    Returns
    -------
    plotly.graph_objects.Figure
        Share of draws [-] against the metric [its unit].
    """
    values = _finite_draws(result, metric)
    row = result.summary.set_index("metric").loc[metric.name]
    fig = go.Figure()
    window = _view_range(values, metric.threshold)
    shown = values[(values >= window[0]) & (values <= window[1])]
    fig.add_histogram(x=shown, nbinsx=bins, histnorm="probability", marker_color=PALETTE[0], name="draws", showlegend=False)
    for k, (q, dash) in enumerate((("p10", "dot"), ("p50", "solid"), ("p90", "dot"))):
        fig.add_vline(row[q], line_dash=dash, line_color=PALETTE[1])
        fig.add_annotation(x=row[q], y=1 - 0.09 * k, xref="x", yref="paper", text=f"{q.upper()} {row[q]:.4g}",
                           showarrow=False, xanchor="left", yanchor="top", bgcolor="rgba(255,255,255,0.85)")
    _mark_threshold(fig, metric, vertical=True, position="bottom right")
    fig.update_xaxes(range=window)
    win = "" if not np.isfinite(row["p_win"]) else \
        f"; P({metric.option} wins) = {row['p_win']:.3f} ± {row['p_win_std_error']:.3f}"
    cut = len(values) - len(shown)
    note = f" ({cut:,} draws beyond the axis)" if cut else ""
    return _layout(fig, f"Monte Carlo, {int(row['n']):,} draws{win}{note}", metric.label, "share of draws", height=420)


def exceedance_figure(result: MonteCarloResult, metric: Metric) -> go.Figure:
    """The exceedance curve of one metric: the share of draws above each value (1 - CDF), with the break-even marked.

    Read off "how likely is the ratio above 1" directly.

    Parameters
    ----------
    result : MonteCarloResult
        A Monte Carlo run (the curve covers its kept draws).
    metric : Metric
        The metric whose exceedance is drawn.

    Returns
    -------
    plotly.graph_objects.Figure
        Share of draws above [-] against the metric [its unit] (at most ~2,000 points drawn).
    """
    values = np.sort(_finite_draws(result, metric))
    n = len(values)
    step = max(1, n // 2000)  # at most ~2,000 points drawn
    x = values[::step]
    share_above = 1.0 - (np.arange(0, n, step) + 1) / n
    fig = go.Figure(go.Scatter(x=x, y=share_above, mode="lines", line={"color": PALETTE[0]}, name="share of draws above",
                               hovertemplate="P(metric > %{x:.4g}) = %{y:.3f}<extra></extra>"))
    _mark_threshold(fig, metric, vertical=True, position="top right")
    fig.update_xaxes(range=_view_range(values, metric.threshold))
    fig.update_yaxes(range=[0, 1.02], tickformat=".0%")
    return _layout(fig, f"Exceedance: share of draws above each value of the {metric.kind} metric", metric.label,
                   "share of draws above the value", height=420)


def portfolio_figure(frame: pd.DataFrame) -> go.Figure:
    """P(challenger wins over the baseline) per cell: model / workload down, device and shape across.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`tco.studies.portfolio.portfolio`'s table.

    Returns
    -------
    plotly.graph_objects.Figure
        A heatmap of ``p_win`` [-]; the hover adds how often each side meets its latency targets.
    """
    table = frame.assign(row=frame["model"] + " / " + frame["workload"], column=frame["device"] + " " + frame["shape"])

    def pivot(values: str) -> pd.DataFrame:
        return table.pivot(index="row", columns="column", values=values).reindex(
            index=table["row"].unique(), columns=table["column"].unique())

    grid = pivot("p_win")
    # a win also counts where the baseline misses a latency target: the hover says how often each side meets them
    feasible = np.dstack([pivot("p_feasible").to_numpy(), pivot("p_baseline_feasible").to_numpy()])
    fig = go.Figure(go.Heatmap(z=grid.to_numpy(), x=list(grid.columns), y=list(grid.index), zmin=0, zmax=1,
                               colorscale="Viridis", colorbar={"title": "P(wins)"},
                               text=np.round(grid.to_numpy(), 2), texttemplate="%{text}", customdata=feasible,
                               hovertemplate="%{y}, %{x}<br>P(wins) %{z:.3f}<br>P(meets latency targets): option "
                                             "%{customdata[0]:.3f}, baseline %{customdata[1]:.3f}<extra></extra>"))
    fig.update_layout(height=max(400, 40 * len(grid) + 200))
    return _layout(fig, "Portfolio: probability that each option costs less than the baseline per output token",
                   "challenger device and fleet shape", "model / workload")


def sobol_figure(frame: pd.DataFrame, top: int = 15, title: str = "Sobol indices") -> go.Figure:
    """First-order (S1) and total (ST) indices with 95 % confidence intervals, top parameters by their labels.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`tco.studies.sensitivity.sobol`'s table.
    top : int [-]
        Parameters shown.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        Bars of shares of output variance [-].
    """
    rows = frame.head(top).iloc[::-1]
    labels = [param_label(p) for p in rows["param"]]
    fig = go.Figure()
    for column, colour, name in (("S1", PALETTE[0], "first order S1 (the input alone)"),
                                 ("ST", PALETTE[1], "total ST (with its interactions)")):
        fig.add_bar(y=labels, x=rows[column], orientation="h", name=name, marker_color=colour,
                    error_x={"type": "data", "array": rows[f"{column}_conf"], "thickness": 1},
                    hovertemplate="%{y}<br>" + column + " %{x:.3f}<extra></extra>")
    fig.update_layout(barmode="group", bargap=0.2)
    fig.update_xaxes(rangemode="tozero")
    fig.update_yaxes(tickfont={"size": 11})
    return _layout(fig, title, "share of output variance [-]", "", height=max(360, 30 * len(rows) + 140))


#: most lines a parametric chart draws (one per option and combination of the other inputs' values)
PARAMETRIC_LINES = 24
#: a line's dash by the combination of the other inputs' values (its colour is its option's)
PARAMETRIC_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


def parametric_figure(frame: pd.DataFrame, inputs: Sequence[str], output: str, label: str) -> go.Figure:
    """One output of a parametric table against its first input, one line per option and combination of the other
    inputs' values (the first :data:`PARAMETRIC_LINES`; the table holds them all).

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`tco.studies.parametric.parametric`'s table.
    inputs : Sequence[str]
        Its input columns, the first on the x axis.
    output : str
        The output column drawn.
    label : str
        The output's label with its unit (the y axis).

    Returns
    -------
    plotly.graph_objects.Figure
        ``output`` [its unit] against ``inputs[0]`` [its unit].
    """
    fig = go.Figure()
    others = list(inputs[1:])
    groups = list(frame.groupby(["option", *others], sort=False))
    options = list(dict.fromkeys(frame["option"]))
    combinations: list[tuple] = []
    for (key, rows) in groups[:PARAMETRIC_LINES]:
        option, *values = key if isinstance(key, tuple) else (key,)
        combinations += [] if tuple(values) in combinations else [tuple(values)]
        name = ", ".join([option, *(f"{param_label(p)} {sig(v, 4)}" for p, v in zip(others, values, strict=True))])
        fig.add_scatter(x=rows[inputs[0]], y=rows[output], mode="lines+markers", name=name,
                        line={"color": PALETTE[options.index(option) % len(PALETTE)],
                              "dash": PARAMETRIC_DASHES[combinations.index(tuple(values)) % len(PARAMETRIC_DASHES)]},
                        hovertemplate=name + "<br>%{x:,.4g}: %{y:,.4g}<extra></extra>")
    shown = min(len(groups), PARAMETRIC_LINES)
    more = f" (the first {shown} of {len(groups)} lines: the table has all)" if len(groups) > shown else ""
    return _layout(fig, f"{label} against {param_label(inputs[0])}{more}", param_label(inputs[0]), label)


def missing_note(result: Sensitivity) -> str:
    """A Sobol or Morris title's note on the model runs where a fleet its metric compares misses a latency target
    ("" where none does): the indices there mix in the cost of fleets that do not serve the workload.

    Parameters
    ----------
    result : tco.studies.sensitivity.Sensitivity
        The analysis.

    Returns
    -------
    str
        E.g. ``<br>in 9.4% of its runs groq or h100 misses a latency target`` (a second line of the title).
    """
    share = result.share_missing_a_target
    if not result.compares or not share > 0:
        return ""
    return f"<br>in {sig(100 * share, 2)}% of its runs {' or '.join(result.compares)} misses a latency target"


def morris_figure(frame: pd.DataFrame, metric: Metric, note: str = "") -> go.Figure:
    """Morris mu* against sigma: far right is influential, high up is non-linear or interacting.

    Parameters
    ----------
    frame : pandas.DataFrame
        :func:`tco.studies.sensitivity.morris`'s table.
    metric : Metric
        Its metric (axis units).
    note : str
        Appended to the title (:func:`missing_note`).

    Returns
    -------
    plotly.graph_objects.Figure
        mu* and sigma [unit of the metric per full parameter range], one labelled point per parameter.
    """
    fig = go.Figure()
    fig.add_scatter(x=frame["mu_star"], y=frame["sigma"], mode="markers+text", text=[param_label(p) for p in frame["param"]],
                    textposition="top center",
                    marker_color=PALETTE[2], error_x={"type": "data", "array": frame["mu_star_conf"]}, name="parameters")
    return _layout(fig, f"Morris screening of {metric.label}{note}", f"mu* [{metric.unit} per full parameter range]",
                   f"sigma [{metric.unit} per full parameter range]")


def cascade_figure(frame: pd.DataFrame) -> go.Figure:
    """Second-life premium per device (P5, median, P95) and how often cascading wins.

    Parameters
    ----------
    frame : pandas.DataFrame
        Per device: ``premium_p5_usd``, ``premium_p50_usd``, ``premium_p95_usd`` [USD per device]
        and ``p_cascade_best`` [-] (:func:`tco.studies.cascade.cascade_under_uncertainty`).

    Returns
    -------
    plotly.graph_objects.Figure
        Bars of the median premium [USD per device] with P5-P95 error bars.
    """
    fig = go.Figure()
    fig.add_bar(x=frame.index, y=frame["premium_p50_usd"], name="median premium", marker_color=PALETTE[0],
                error_y={"type": "data", "symmetric": False, "array": frame["premium_p95_usd"] - frame["premium_p50_usd"],
                         "arrayminus": frame["premium_p50_usd"] - frame["premium_p5_usd"]},
                text=[f"P(cascade) {p:.0%}" for p in frame["p_cascade_best"]],
                hovertemplate="%{x}: median %{y:,.0f} USD per device (P5-P95 bars)")
    fig.add_hline(y=0.0, line_dash="dot", line_color="grey")
    return _layout(fig, "Second life: value of cascading a retired training device to serving over selling it",
                   "device", "cascade premium over the better of selling and scrapping [USD per device]")
