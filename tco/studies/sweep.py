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
        that bracket a sign change (:func:`tco.solvers.find_crossing`).
    """
    parsed = [m if isinstance(m, Metric) else parse_metric(scenario, m) for m in (metrics or ["ratio"])]
    xs = sweep_points(scenario, param, low, high, points, log)
    results, _ = evaluate_scenario(scenario, {param: xs})
    frame = pd.DataFrame({param: xs, **metric_table(scenario, parsed, {param: xs}, results)})
    breakevens = []
    for option in dict.fromkeys(contour_option(scenario, m) for m in parsed):
        metric = Metric("npv", option, None, "USD")
        gap = np.broadcast_to(gap_values(scenario, metric, results), np.shape(xs))  # a parameter the costs ignore
        breakevens += crossings(scenario, param, xs, gap, metric, log)
    frame.attrs["breakevens"] = breakevens
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
