"""Plotly figures of the study results: axis titles carry units; colours are colour-blind safe.

Palette: Okabe & Ito (2008), "Color Universal Design"; sequential maps use viridis.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .gridmap import GridMap
from .metrics import Metric
from .montecarlo import MonteCarloResult

#: Okabe-Ito colours: blue, orange, bluish green, vermillion, sky blue, reddish purple, yellow, black
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000")
LOW_COLOUR, HIGH_COLOUR, LINE_COLOUR = PALETTE[0], PALETTE[1], PALETTE[7]


def _layout(fig: go.Figure, title: str, x_title: str, y_title: str) -> go.Figure:
    fig.update_layout(title=title, template="plotly_white", xaxis_title=x_title, yaxis_title=y_title,
                      legend={"orientation": "h", "y": -0.15})
    return fig


def _mark_threshold(fig: go.Figure, metric: Metric, vertical: bool) -> None:
    if np.isfinite(metric.threshold):
        mark = fig.add_vline if vertical else fig.add_hline
        mark(metric.threshold, line_dash="dash", line_color=LINE_COLOUR, annotation_text="break-even")


def tornado_figure(frame: pd.DataFrame, metric: Metric, top: int = 20) -> go.Figure:
    """Horizontal bars from base to the metric at each parameter's low and high; base marked."""
    rows = frame.head(top).iloc[::-1]
    base = float(rows["metric_base"].iloc[0]) if len(rows) else np.nan
    labels = [f"{p}{' *' if c else ''}" for p, c in zip(rows["param"], rows["crosses_breakeven"], strict=True)]
    fig = go.Figure()
    sides = (("metric_low", "parameter at low", LOW_COLOUR), ("metric_high", "parameter at high", HIGH_COLOUR))
    for column, name, colour in sides:
        fig.add_bar(y=labels, x=rows[column] - base, base=base, orientation="h", name=name, marker_color=colour,
                    customdata=np.stack([rows["low" if column == "metric_low" else "high"], rows["unit"]], axis=-1),
                    hovertemplate="%{y}<br>value %{customdata[0]:.4g} %{customdata[1]}<br>metric %{x:.4g}<extra></extra>")
    fig.update_layout(barmode="overlay", height=max(400, 28 * len(rows) + 150))
    fig.add_vline(base, line_color=LINE_COLOUR, annotation_text="base")
    _mark_threshold(fig, metric, vertical=True)
    return _layout(fig, f"Tornado: {metric.name} (* the winner flips within the range)", metric.label, "parameter")


def sweep_figure(frame: pd.DataFrame, metrics: list[Metric]) -> go.Figure:
    """One line per metric along the swept parameter; break-even points marked as vertical lines."""
    param, unit = frame.attrs.get("param", frame.columns[0]), frame.attrs.get("unit", "")
    fig = go.Figure()
    for i, m in enumerate(metrics):
        fig.add_scatter(x=frame[param], y=frame[m.name], mode="lines", name=m.label, line_color=PALETTE[i % len(PALETTE)],
                        yaxis="y" if i == 0 else "y2")
    for b in frame.attrs.get("breakevens", []):
        side = "above" if b["wins_above"] else "below"
        fig.add_vline(b["value"], line_dash="dot", line_color=LINE_COLOUR,
                      annotation_text=f"{b['option']} wins {side} {b['value']:.4g}")
    if len(metrics) > 1:
        fig.update_layout(yaxis2={"overlaying": "y", "side": "right", "title": metrics[1].label})
    _mark_threshold(fig, metrics[0], vertical=False)
    if _geometric(frame[param].to_numpy()):
        fig.update_xaxes(type="log")
    return _layout(fig, f"Sweep of {param}", f"{param} [{unit}]", metrics[0].label)


def _geometric(x: np.ndarray) -> bool:
    return len(x) > 2 and x.min() > 0 and np.allclose(np.diff(np.log(x)), np.log(x[1] / x[0]), rtol=1e-6)


def map_figure(grid: GridMap) -> go.Figure:
    """Heatmap of the metric with the break-even contour (where the option's gap is zero)."""
    fig = go.Figure()
    fig.add_heatmap(x=grid.x, y=grid.y, z=grid.z, colorscale="Viridis", colorbar={"title": grid.metric.label},
                    hovertemplate=f"{grid.x_param} %{{x:.4g}}<br>{grid.y_param} %{{y:.4g}}<br>%{{z:.4g}}<extra></extra>")
    fig.add_contour(x=grid.x, y=grid.y, z=grid.gap, contours={"start": 0, "end": 0, "size": 1, "coloring": "none",
                                                              "showlabels": False},
                    line={"color": "white", "width": 3}, showscale=False, name="break-even", hoverinfo="skip",
                    showlegend=True)
    for axis, values in (("xaxis", grid.x), ("yaxis", grid.y)):
        if _geometric(values):
            fig.update_layout({axis: {"type": "log"}})
    wins = grid.wins.mean()
    return _layout(fig, f"{grid.metric.name}: {grid.metric.option} wins in {wins:.0%} of the map (break-even in white)",
                   f"{grid.x_param} [{grid.x_unit}]", f"{grid.y_param} [{grid.y_unit}]")


def mc_figure(result: MonteCarloResult, metric: Metric, bins: int = 80) -> go.Figure:
    """Histogram of one metric's draws with P10/P50/P90 and the break-even marked."""
    values = result.samples[metric.name].to_numpy(float)
    row = result.summary.set_index("metric").loc[metric.name]
    fig = go.Figure()
    fig.add_histogram(x=values[np.isfinite(values)], nbinsx=bins, histnorm="probability", marker_color=PALETTE[0],
                      name="draws")
    for q, dash in (("p10", "dot"), ("p50", "solid"), ("p90", "dot")):
        fig.add_vline(row[q], line_dash=dash, line_color=PALETTE[1], annotation_text=f"{q.upper()} {row[q]:.4g}")
    _mark_threshold(fig, metric, vertical=True)
    win = "" if not np.isfinite(row["p_win"]) else \
        f"; P({metric.option} wins) = {row['p_win']:.3f} ± {row['p_win_std_error']:.3f}"
    shown = f" (histogram: first {len(values):,})" if len(values) < row["n"] else ""
    return _layout(fig, f"Monte Carlo, {int(row['n']):,} draws{shown}{win}", metric.label, "share of draws")


def portfolio_figure(frame: pd.DataFrame) -> go.Figure:
    """P(challenger wins over the baseline) per cell: model / workload down, device and shape across."""
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


def sobol_figure(frame: pd.DataFrame, top: int = 20, title: str = "Sobol indices") -> go.Figure:
    """First-order (S1) and total (ST) indices with 95 % confidence intervals, top parameters."""
    rows = frame.head(top).iloc[::-1]
    fig = go.Figure()
    for column, colour in (("S1", PALETTE[0]), ("ST", PALETTE[1])):
        fig.add_bar(y=rows["param"], x=rows[column], orientation="h", name=column, marker_color=colour,
                    error_x={"type": "data", "array": rows[f"{column}_conf"]})
    fig.update_layout(barmode="group", height=max(400, 34 * len(rows) + 150))
    return _layout(fig, title, "share of output variance [-]", "parameter")


def morris_figure(frame: pd.DataFrame, metric: Metric) -> go.Figure:
    """Morris mu* against sigma: far right is influential, high up is non-linear or interacting."""
    fig = go.Figure()
    fig.add_scatter(x=frame["mu_star"], y=frame["sigma"], mode="markers+text", text=frame["param"], textposition="top center",
                    marker_color=PALETTE[2], error_x={"type": "data", "array": frame["mu_star_conf"]}, name="parameters")
    return _layout(fig, f"Morris screening of {metric.name}", f"mu* [{metric.unit} per full parameter range]",
                   f"sigma [{metric.unit} per full parameter range]")


def cascade_figure(frame: pd.DataFrame) -> go.Figure:
    """Second-life premium per device (P5, median, P95) and how often cascading wins."""
    fig = go.Figure()
    fig.add_bar(x=frame.index, y=frame["premium_p50_usd"], name="median premium", marker_color=PALETTE[0],
                error_y={"type": "data", "symmetric": False, "array": frame["premium_p95_usd"] - frame["premium_p50_usd"],
                         "arrayminus": frame["premium_p50_usd"] - frame["premium_p5_usd"]},
                text=[f"P(cascade) {p:.0%}" for p in frame["p_cascade_best"]],
                hovertemplate="%{x}: median %{y:,.0f} USD per device (P5-P95 bars)")
    fig.add_hline(y=0.0, line_dash="dot", line_color="grey")
    return _layout(fig, "Second life: value of cascading a retired training device to serving over selling it",
                   "device", "cascade premium over the better of selling and scrapping [USD per device]")
