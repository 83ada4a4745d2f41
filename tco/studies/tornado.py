"""Tornado: the metric with each parameter at its low and its high value, the others at base.

It answers a question about one pair, the metric's option against the baseline (``ratio:groq``: is groq cheaper than
the baseline?), not which of all options is cheapest (``tco compare``'s flips). At an end where an option of the pair
misses a latency target the metric is not a cost comparison: it is NaN there, and ``misses_low`` / ``misses_high`` name
the options that miss.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tco.analysis.evaluation import evaluate_scenario
from tco.inputs.scenario import Scenario
from tco.studies.metrics import Metric, gap_values, metric_table, parse_metric
from tco.studies.sampling import round_integers

COLUMNS = ["param", "unit", "base_value", "low", "high", "metric_low", "metric_high", "metric_base", "swing",
           "crosses_breakeven", "misses_low", "misses_high"]


def default_params(scenario: Scenario, metric: Metric) -> list[str]:
    """Every parameter with a range, except the one a break-even metric solves for.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.
    metric : Metric
        The metric (a ``breakeven`` metric names the parameter it solves for).

    Returns
    -------
    list[str]
        Parameter names, in the scenario's order.
    """
    return [p.name for p in scenario.params.uncertain() if p.name != metric.param]


def tornado(scenario: Scenario, metric: Metric | str, params: Sequence[str] | None = None) -> pd.DataFrame:
    """Each parameter at low and high (one core call for all), sorted by swing, descending.

    Row ``i`` of the evaluation grid is the base point (index 0), parameter ``i`` at its low
    (``2i+1``) or its high (``2i+2``).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.
    metric : Metric or str
        What the bars measure (``ratio``, ``lcot:<option>``, ...).
    params : Sequence[str], optional
        Parameters to move (default: :func:`default_params`).

    Returns
    -------
    pandas.DataFrame
        Per parameter: ``base_value``, ``low``, ``high`` [unit of the parameter],
        ``metric_low``, ``metric_high``, ``metric_base`` and ``swing = |metric_high -
        metric_low|`` [unit of the metric] (NaN at an end where an option of the pair misses a latency target; a row
        with such an end sorts first), ``crosses_breakeven`` (the option wins against the baseline at low or high but not
        at base, or the reverse) and ``misses_low`` / ``misses_high`` (the options of the pair that miss a latency
        target there, comma-separated; empty where both meet them).
    """
    metric = metric if isinstance(metric, Metric) else parse_metric(scenario, metric)
    names = list(params) if params is not None else default_params(scenario, metric)
    specs = [scenario.params[name] for name in names]
    points = 2 * len(specs) + 1
    updates = {}
    for i, p in enumerate(specs):
        column = np.full(points, p.value)
        column[2 * i + 1], column[2 * i + 2] = round_integers(p, np.array([p.low, p.high]))
        updates[p.name] = column
    results, _ = evaluate_scenario(scenario, updates)
    # one value per grid row even where no parameter moves the metric (the core then answers a scalar)
    values = np.broadcast_to(metric_table(scenario, [metric], updates, results)[metric.name], (points,))
    wins = np.broadcast_to(gap_values(scenario, metric, results) < 0, (points,))
    pair = list(dict.fromkeys([metric.option] if metric.kind == "lcot" else [metric.option, scenario.structure.baseline]))
    feasible = {n: np.broadcast_to(np.asarray(results[n].feasible) > 0, (points,)) for n in pair}
    missing = [", ".join(n for n in pair if not feasible[n][k]) for k in range(points)]
    shown = np.where([not m for m in missing], values, np.nan)
    rows = []
    for i, p in enumerate(specs):
        lo, hi = 2 * i + 1, 2 * i + 2
        rows.append({"param": p.name, "unit": p.unit, "base_value": p.value, "low": updates[p.name][lo],
                     "high": updates[p.name][hi], "metric_low": shown[lo], "metric_high": shown[hi],
                     "metric_base": values[0], "swing": abs(shown[hi] - shown[lo]),
                     "crosses_breakeven": bool(wins[lo] != wins[0] or wins[hi] != wins[0]),
                     "misses_low": missing[lo], "misses_high": missing[hi]})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["_misses"] = (frame["misses_low"] != "") | (frame["misses_high"] != "")
    frame = frame.sort_values(["_misses", "swing"], ascending=False, kind="stable", na_position="last")
    return frame.drop(columns="_misses").reset_index(drop=True)
