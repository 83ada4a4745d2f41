"""1-D sweep: metrics along one parameter's range, with every break-even point on it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .. import limits
from ..api import evaluate_scenario
from ..scenario import Scenario
from ..solvers import STATUS_NAMES, find_crossing, grid
from .metrics import Metric, contour_option, gap_values, metric_table, parse_metric
from .sampling import round_integers


def check_points(points: int) -> None:
    """Refuse a sweep of more points than memory holds at once (:mod:`tco.limits`).

    Parameters
    ----------
    points : int [-]
        Points asked for.
    """
    limits.check_memory("points", points, "sweep points", points * limits.BYTES_PER_SWEEP_POINT)


def sweep_points(scenario: Scenario, param: str, low: float, high: float, points: int, log: bool) -> np.ndarray:
    """The swept values: linear or geometric; whole numbers for integer fields.

    Parameters
    ----------
    scenario : tco.scenario.Scenario
        Its parameter ``param`` gives the field (integer or not).
    param : str
        Parameter name.
    low, high : float [unit of the parameter]
        The ends.
    points : int [-]
        Points asked for (an integer field keeps each whole number once).
    log : bool
        Geometric spacing.

    Returns
    -------
    numpy.ndarray [unit of the parameter]
        The values, increasing.
    """
    spec = scenario.params[param]
    check_points(points)
    xs = grid(float(low), float(high), int(points), bool(log))
    return np.unique(round_integers(spec, xs)) if spec.field.integer else xs


def sweep(scenario: Scenario, param: str, low: float, high: float, points: int = 50, log: bool = False,
          metrics: Sequence[Metric | str] | None = None) -> pd.DataFrame:
    """Metrics along ``param`` from ``low`` to ``high`` (one core call for the grid).

    Parameters
    ----------
    scenario : tco.scenario.Scenario
        The scenario; every other parameter stays at its base value.
    param : str
        The swept parameter.
    low, high : float [unit of the parameter]
        The ends.
    points : int [-]
        Grid points.
    log : bool
        Geometric grid.
    metrics : Sequence[Metric or str], optional
        Columns to compute (default ``ratio``).

    Returns
    -------
    pandas.DataFrame
        A column ``param`` [unit of the parameter] and one per metric [its unit].
        ``frame.attrs["breakevens"]`` lists every crossing per challenger the metrics name:
        ``{option, param, value, unit, wins_above, status}``, refined between the grid points
        that bracket a sign change (:func:`tco.solvers.find_crossing`); ``frame.attrs["windows"]``
        every stretch where a challenger wins, ``{option, param, unit, from, to,
        baseline_misses_targets}`` (:func:`winning_windows`).
    """
    parsed = [m if isinstance(m, Metric) else parse_metric(scenario, m) for m in (metrics or ["ratio"])]
    xs = sweep_points(scenario, param, low, high, points, log)
    results, _ = evaluate_scenario(scenario, {param: xs})
    frame = pd.DataFrame({param: xs, **metric_table(scenario, parsed, {param: xs}, results)})
    breakevens, windows = [], []
    for option in dict.fromkeys(contour_option(scenario, m) for m in parsed):
        metric = Metric("npv", option, None, "USD")
        gap = np.broadcast_to(gap_values(scenario, metric, results), np.shape(xs))  # a parameter the costs ignore
        found = crossings(scenario, param, xs, gap, metric, log)
        breakevens += found
        windows += winning_windows(scenario, param, xs, bool(gap[0] < 0), found, option, log)
    frame.attrs["breakevens"] = breakevens
    frame.attrs["windows"] = windows
    frame.attrs["param"] = param
    frame.attrs["unit"] = scenario.params[param].unit
    return frame


def crossings(scenario: Scenario, param: str, xs: np.ndarray, gap: np.ndarray, metric: Metric, log: bool) -> list[dict]:
    """Every sign change of ``gap`` along ``xs``, refined by bisection within its bracket.

    Parameters
    ----------
    scenario : tco.scenario.Scenario
        The scenario re-evaluated inside each bracket.
    param : str
        The swept parameter.
    xs : numpy.ndarray [unit of the parameter]
        The grid.
    gap : numpy.ndarray [unit of the metric's gap]
        The gap on the grid (negative where the option wins).
    metric : Metric
        The metric whose gap is refined.
    log : bool
        Geometric bisection.

    Returns
    -------
    list[dict]
        ``{option, param, value [unit of the parameter], unit, wins_above, status}`` per crossing.
    """
    negative = gap < 0
    out = []
    for i in np.flatnonzero(negative[1:] != negative[:-1]):
        def gap_at(values):
            results, _ = evaluate_scenario(scenario, {param: values})
            return gap_values(scenario, metric, results)

        x, status, above = find_crossing(gap_at, float(xs[i]), float(xs[i + 1]), points=3, log=log)
        out.append({"option": metric.option, "param": param, "value": float(x), "unit": scenario.params[param].unit,
                    "wins_above": bool(above), "status": STATUS_NAMES[int(status)]})
    return out


def winning_windows(scenario: Scenario, param: str, xs: np.ndarray, wins_at_low: bool, found: Sequence[dict], option: str,
                    log: bool) -> list[dict]:
    """Every stretch of the sweep where ``option`` wins, from its crossings, and whether the baseline misses a latency
    target there (at the stretch's middle; one evaluation of every stretch): then the targets decide, not the costs.

    Parameters
    ----------
    scenario : tco.scenario.Scenario
        The scenario swept.
    param : str
        The swept parameter.
    xs : numpy.ndarray [unit of the parameter]
        The grid (its ends are the sweep's).
    wins_at_low : bool
        Whether the option wins at the grid's first point.
    found : Sequence[dict]
        The option's crossings, in increasing order (:func:`crossings`).
    option : str
        The challenger.
    log : bool
        Geometric middles.

    Returns
    -------
    list[dict]
        ``{option, param, unit, from, to [unit of the parameter], baseline_misses_targets}`` per stretch, in order.
    """
    edges = [float(xs[0]), *(c["value"] for c in found), float(xs[-1])]
    regimes = [wins_at_low, *(c["wins_above"] for c in found)]
    spans = [(a, b) for a, b, wins in zip(edges[:-1], edges[1:], regimes, strict=True) if wins and b > a]
    if not spans:
        return []
    middles = np.array([np.sqrt(a * b) if log and a > 0 else 0.5 * (a + b) for a, b in spans])
    results, _ = evaluate_scenario(scenario, {param: middles})
    missed = np.broadcast_to(np.asarray(results[scenario.structure.baseline].feasible) <= 0, (len(spans),))
    unit = scenario.params[param].unit
    return [{"option": option, "param": param, "unit": unit, "from": a, "to": b, "baseline_misses_targets": bool(m)}
            for (a, b), m in zip(spans, missed, strict=True)]
