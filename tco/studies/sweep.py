"""1-D sweep: metrics along one parameter's range, with every break-even point on it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tco.analysis.breakeven import Breakeven, breakeven
from tco.analysis.evaluation import evaluate_scenario
from tco.analysis.solvers import CROSSES, STATUS_NAMES, grid
from tco.foundation import limits
from tco.inputs.scenario import Scenario
from tco.studies.metrics import Metric, contour_option, metric_table, parse_metric


def check_points(points: int) -> None:
    """Refuse a sweep of more points than memory holds at once (:mod:`tco.foundation.limits`).

    Parameters
    ----------
    points : int [-]
        Points asked for.
    """
    limits.check_memory("points", points, "sweep points", points * limits.BYTES_PER_SWEEP_POINT)


def sweep_points(scenario: Scenario, param: str, low: float, high: float, points: int, log: bool) -> np.ndarray:
    """The swept values: linear or geometric; whole numbers for integer fields, within ``[low, high]`` as given (never
    narrowed to the parameter's sourced range: a study marks points beyond it, :func:`tco.studies.spec.outside_sourced`).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
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
        The values, increasing (an integer field keeps each whole number of ``[low, high]`` once).
    """
    spec = scenario.params[param]
    check_points(points)
    xs = grid(float(low), float(high), int(points), bool(log))
    if not spec.field.integer:
        return xs
    return np.unique(np.clip(np.round(xs), np.ceil(float(low)), np.floor(float(high))))


def sweep(scenario: Scenario, param: str, low: float, high: float, points: int = 50, log: bool = False,
          metrics: Sequence[Metric | str] | None = None) -> pd.DataFrame:
    """Metrics along ``param`` from ``low`` to ``high`` (one core call for the grid), and where each challenger wins.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
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
        ``frame.attrs["breakevens"]`` lists every crossing per challenger the metrics name, ``{option, param, value,
        unit, wins_above, status}``, and ``frame.attrs["windows"]`` every stretch where a challenger wins, ``{option,
        param, unit, from, to, baseline_misses_targets}`` (:func:`winning_stretches`): both from the break-even
        solver (:func:`tco.analysis.breakeven.breakeven`, adaptive refinement on its own grid), not from the sweep's points, so a
        window narrower than their spacing is found as ``tco breakeven`` finds it.
    """
    parsed = [m if isinstance(m, Metric) else parse_metric(scenario, m) for m in (metrics or ["ratio"])]
    xs = sweep_points(scenario, param, low, high, points, log)
    results, _ = evaluate_scenario(scenario, {param: xs})
    frame = pd.DataFrame({param: xs, **metric_table(scenario, parsed, {param: xs}, results)})
    breakevens, windows = [], []
    options = list(dict.fromkeys(contour_option(scenario, m) for m in parsed))
    one = options[0] if len(options) == 1 else None  # else one search of every challenger, the named ones kept
    solved = {b.option: b for b in breakeven(scenario, param, float(xs[0]), float(xs[-1]), metric="npv", option=one)
              } if xs[-1] > xs[0] else {}  # one point: no range to search
    for option in (o for o in options if o in solved):
        found, stretches = winning_stretches(scenario, solved[option])
        breakevens += found
        windows += stretches
    frame.attrs["breakevens"] = breakevens
    frame.attrs["windows"] = windows
    frame.attrs["param"] = param
    frame.attrs["unit"] = scenario.params[param].unit
    return frame


def winning_stretches(scenario: Scenario, solved: Breakeven) -> tuple[list, list]:
    """Every crossing of a challenger's NPV against the baseline's, and every stretch where it wins with whether the
    baseline misses a latency target there (then the targets decide, not the costs).

    The changes are :func:`tco.analysis.breakeven.breakeven`'s (the NPV of choosing the challenger crossing 0;
    :func:`tco.analysis.solvers.scan`): a stretch where neither option meets its targets is nobody's win. Neighbouring stretches
    that differ only in where the challenger itself meets its targets are one stretch.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario (the parameter's unit).
    solved : tco.analysis.breakeven.Breakeven
        One challenger's search along one parameter (``metric="npv"``).

    Returns
    -------
    crossings : list[dict]
        ``{option, param, value [unit of the parameter], unit, wins_above, status}`` per crossing, in order.
    stretches : list[dict]
        ``{option, param, unit, from, to [unit of the parameter], baseline_misses_targets}`` per stretch, in order.
    """
    option, param = solved.option, solved.param
    unit = scenario.params[param].unit
    crossings = [{"option": option, "param": param, "value": float(c["value"]), "unit": unit,
                  "wins_above": bool(c["wins_above"]), "status": STATUS_NAMES[CROSSES]}
                 for c in solved.crossings if c["flips"]]
    stretches: list[dict] = []
    for w in (w for w in solved.windows if w["option_wins"]):
        misses = not w["baseline_feasible"]
        if stretches and stretches[-1]["to"] == w["from"] and stretches[-1]["baseline_misses_targets"] == misses:
            stretches[-1]["to"] = float(w["to"])
        else:
            stretches.append({"option": option, "param": param, "unit": unit, "from": float(w["from"]),
                              "to": float(w["to"]), "baseline_misses_targets": misses})
    return crossings, stretches
