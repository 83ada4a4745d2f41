"""Study metrics: named outputs of a scenario that sensitivity studies address.

A metric is a string:

- ``lcot:<option>``  levelized cost of the option [USD per million output tokens]
- ``ratio:<option>`` option LCOT / baseline LCOT [-]; break-even at 1, the option wins below 1
- ``npv:<option>``   NPV of choosing the option over the baseline [USD]; wins above 0
- ``advantage:<option>`` years after deployment an option with specialized devices stays cheaper
  than the best general-purpose generation [yr] (:func:`tco.core.comparison.years_of_advantage`)
- ``breakeven:<option>:<param>`` the value of ``param`` at which the option ties the baseline
  on cost per output token [unit of ``param``], solved with :func:`tco.analysis.solvers.find_crossing`
  over the parameter's low..high range

``<option>`` may be omitted (``ratio``): the first non-baseline option.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tco.analysis.solvers import find_crossing
from tco.core.comparison import cost_ratio, gap_from_results, npv_usd, years_of_advantage
from tco.core.outputs import COMPARISON_OUTPUTS, OPTION_OUTPUTS, OptionResult
from tco.core.structure import Structure
from tco.foundation.errors import InputError

if TYPE_CHECKING:  # a worker computing one-evaluation metrics imports numpy and the core only
    from tco.inputs.scenario import Scenario

KINDS = ("lcot", "ratio", "npv", "advantage", "breakeven")
#: the output each one-evaluation metric reads (its unit comes from the output table)
OUTPUTS = {"lcot": OPTION_OUTPUTS["lcot_usd_per_mtok"], "ratio": COMPARISON_OUTPUTS["cost_ratio"],
           "npv": COMPARISON_OUTPUTS["npv_usd"], "advantage": COMPARISON_OUTPUTS["years_of_advantage"]}
#: the metric value at which the option ties the baseline (NaN: no fixed threshold)
THRESHOLDS = {"lcot": math.nan, "ratio": 1.0, "npv": 0.0, "advantage": math.nan, "breakeven": math.nan}
#: the column of :func:`metric_and_misses` that says where a fleet the metric compares misses its targets
MISSED = "missed"
#: the break-even gap used for winning: (api metric, target)
GAP_METRIC = {"lcot": ("lcot", 0.0), "ratio": ("ratio", 1.0), "npv": ("npv", 0.0), "advantage": ("lcot", 0.0),
              "breakeven": ("lcot", 0.0)}


@dataclass(frozen=True)
class Metric:
    """A parsed metric: kind, option (resolved) and, for ``breakeven``, the parameter."""

    kind: str
    option: str
    param: str | None = None
    unit: str = ""

    @property
    def name(self) -> str:
        return ":".join(x for x in (self.kind, self.option, self.param) if x)

    @property
    def label(self) -> str:
        """Axis title with the unit."""
        words = {"lcot": f"LCOT of {self.option}", "ratio": f"cost ratio {self.option} / baseline",
                 "npv": f"NPV of {self.option} over baseline", "advantage": f"years of advantage of {self.option}",
                 "breakeven": f"break-even {self.param} for {self.option}"}
        return f"{words[self.kind]} [{self.unit}]"

    @property
    def threshold(self) -> float:
        return THRESHOLDS[self.kind]


def parse_metric(scenario: Scenario, text: str, path: str = "metric") -> Metric:
    """Parse and check a metric string against the scenario's options and parameters.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its options and parameters.
    text : str
        ``lcot[:<option>]``, ``ratio[:<option>]``, ``npv[:<option>]`` or
        ``breakeven:<option>:<param>`` (the option defaults to the first challenger).
    path : str
        Field path an error names.

    Returns
    -------
    Metric
        Kind, option, parameter (break-even only) and unit.
    """
    kind, _, rest = str(text).partition(":")
    if kind not in KINDS:
        raise InputError.one(path, text, f"must start with one of {', '.join(KINDS)} (e.g. ratio:<option>)")
    structure = scenario.structure
    challengers = [o.name for o in structure.challengers]
    names = [o.name for o in structure.options]
    option, _, param = rest.partition(":")
    if kind == "breakeven":
        if not param:
            raise InputError.one(path, text, "must look like breakeven:<option>:<param>")
    elif param:
        raise InputError.one(path, text, f"must look like {kind}:<option>")
    if not option:
        if not challengers:
            raise InputError.one(path, text, "the scenario has no non-baseline option")
        option = challengers[0]
    allowed = names if kind == "lcot" else challengers
    if kind == "advantage":
        if not structure.generations:
            raise InputError.one(path, text, "years of advantage are measured against the general-purpose roadmap: "
                                             "give the scenario a roadmap: block (docs/model.md)")
        allowed = [o.name for o in structure.challengers if o.specialized]
    if option not in allowed:
        raise InputError.one(path, text, f"option must be one of {', '.join(allowed) or '(none)'}")
    if kind != "breakeven":
        return Metric(kind, option, None, OUTPUTS[kind].unit)
    if param not in scenario.values():
        # lazy: a worker computing one-evaluation metrics imports numpy and the core only (no pydantic)
        from tco.inputs.parameters import unknown_name_rule

        raise InputError.one(path, text, f"parameter {param} " + unknown_name_rule(param, scenario.params))
    spec = scenario.params[param]
    if not spec.uncertain:
        raise InputError.one(path, text, f"parameter {param} has no range to search (low == high == {spec.value:g})")
    return Metric(kind, option, param, spec.unit)


def win_threshold(metric: Metric | str) -> float:
    """The metric's value at a tie: 1 for ``ratio``, 0 for ``npv``, NaN where none is fixed.

    Parameters
    ----------
    metric : Metric or str
        The metric (or its text).

    Returns
    -------
    float [unit of the metric]
        The tie value.
    """
    kind = metric.kind if isinstance(metric, Metric) else str(metric).partition(":")[0]
    return THRESHOLDS[kind]


def contour_option(scenario: Scenario | Structure, metric: Metric) -> str:
    """The challenger whose break-even a metric's plots mark (the first one for the baseline's LCOT).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario or tco.core.structure.Structure
        Its challengers.
    metric : Metric
        The metric.

    Returns
    -------
    str
        An option name.
    """
    structure = scenario if isinstance(scenario, Structure) else scenario.structure
    challengers = [o.name for o in structure.challengers]
    return metric.option if metric.option in challengers else challengers[0]


def values_from_results(scenario: Scenario | Structure, metric: Metric, results: Mapping[str, OptionResult],
                        values: Mapping[str, object] | None = None) -> np.ndarray:
    """A ``lcot``, ``ratio``, ``npv`` or ``advantage`` metric from core results already computed.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario or tco.core.structure.Structure
        Names the baseline (a worker process has the structure only, and passes ``values``).
    metric : Metric
        The metric (not ``breakeven``: that needs its own search).
    results : Mapping[str, tco.core.outputs.OptionResult]
        Core results per option.
    values : Mapping[str, object], optional
        The parameter values the results were computed at (``advantage`` reads them; default: the
        scenario's base values).

    Returns
    -------
    numpy.ndarray [USD/Mtok for lcot, - for ratio, USD for npv, yr for advantage]
        The metric at every evaluated point.
    """
    structure = scenario if isinstance(scenario, Structure) else scenario.structure
    r, base = results[metric.option], results[structure.baseline]
    if metric.kind == "advantage":
        option = structure.option(metric.option)
        return np.asarray(years_of_advantage(option, r, base, scenario.values() if values is None else values))
    if metric.kind == "lcot":
        return np.asarray(r.lcot_usd_per_mtok)
    if metric.kind == "ratio":
        return np.asarray(cost_ratio(base, r))
    if metric.kind == "npv":
        return np.asarray(npv_usd(base, r))
    raise ValueError(f"{metric.name} is not computed from one evaluation")


def judged_options(structure: Structure, metric: Metric) -> tuple[str, ...]:
    """The options whose fleets a metric's value compares, so whose latency targets it rests on.

    Parameters
    ----------
    structure : tco.core.structure.Structure
        Names the baseline.
    metric : Metric
        The metric.

    Returns
    -------
    tuple[str, ...]
        The option alone (``lcot``), the option and the baseline (``ratio``, ``npv``, ``advantage``: one pair), none
        for a break-even (the value of a parameter solved for, not one point's fleets).
    """
    if metric.kind == "breakeven":
        return ()
    if metric.kind == "lcot" or metric.option == structure.baseline:
        return (metric.option,)
    return (metric.option, structure.baseline)


def targets_missed(structure: Structure, metric: Metric, results: Mapping[str, OptionResult]) -> np.ndarray:
    """1 where an option the metric compares (:func:`judged_options`) misses a latency target, else 0.

    Parameters
    ----------
    structure : tco.core.structure.Structure
        Names the baseline.
    metric : Metric
        The metric.
    results : Mapping[str, tco.core.outputs.OptionResult]
        Core results per option.

    Returns
    -------
    numpy.ndarray [-]
        0.0 or 1.0 per evaluated point (0-d when the results are).
    """
    judged = judged_options(structure, metric)
    shape = np.broadcast_shapes(*(np.shape(results[n].feasible) for n in judged)) if judged else ()
    missed = np.zeros(shape, bool)
    for name in judged:
        missed = missed | (np.asarray(results[name].feasible) <= 0)
    return missed.astype(float)


def gap_values(scenario: Scenario | Structure, metric: Metric, results: Mapping[str, OptionResult]) -> np.ndarray:
    """Signed distance of the metric's option from winning (negative: it wins), latency targets included.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario or tco.core.structure.Structure
        Names the baseline and the challengers.
    metric : Metric
        The metric; its option (or the first challenger) is the one measured.
    results : Mapping[str, tco.core.outputs.OptionResult]
        Core results per option.

    Returns
    -------
    numpy.ndarray [unit of the metric's gap]
        :func:`tco.core.comparison.gap_from_results`: negative where the option meets its targets and wins.
    """
    structure = scenario if isinstance(scenario, Structure) else scenario.structure
    kind, target = GAP_METRIC[metric.kind]
    return np.asarray(gap_from_results(results, structure.baseline, contour_option(structure, metric), kind, target))


def breakeven_values(scenario: Scenario, metric: Metric, updates: Mapping[str, object]) -> np.ndarray:
    """Break-even value of ``metric.param`` at every point of ``updates`` (NaN where none in range).

    The points are flattened to ``m`` samples; :func:`find_crossing` grids the parameter
    along a leading axis (``(points, 1)`` against ``(1, m)`` samples), then bisects each
    sample's bracket (midpoints of shape ``(m,)``).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.
    metric : Metric
        A ``breakeven`` metric: its option and the parameter solved for.
    updates : Mapping[str, object] [each parameter's unit]
        Other parameters' values; arrays broadcast.

    Returns
    -------
    numpy.ndarray [unit of metric.param]
        The break-even per point, in the broadcast shape of ``updates``.
    """
    # lazy: a worker computing one-evaluation metrics imports numpy and the core only (no pydantic)
    from tco.analysis.evaluation import evaluate_scenario

    if metric.param in updates:
        raise InputError.one("metric", metric.name, f"{metric.param} cannot be both varied and solved for")
    spec = scenario.params[metric.param]
    shape = np.broadcast_shapes(*(np.shape(v) for v in updates.values())) if updates else ()
    flat = {k: np.broadcast_to(np.asarray(v, float), shape).reshape(-1) for k, v in updates.items()}
    m = int(np.prod(shape))

    def gap(xs):
        xs = np.asarray(xs, float)
        grid_call = m > 1 and (xs.ndim == 2 or xs.shape == (1,))
        points = {k: v[None, :] for k, v in flat.items()} if grid_call else flat
        results, _ = evaluate_scenario(scenario, {**points, metric.param: xs.reshape(-1, 1) if grid_call else xs})
        return gap_values(scenario, metric, results)

    x, _status, _above = find_crossing(gap, spec.low, spec.high)
    return np.asarray(x, float).reshape(shape)


def metric_table(scenario: Scenario, metrics: Sequence[Metric], updates: Mapping[str, object],
                 results: Mapping[str, OptionResult] | None = None) -> dict[str, np.ndarray]:
    """Every metric at the points of ``updates``: one core call for all one-evaluation metrics.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario evaluated.
    metrics : Sequence[Metric]
        Break-even metrics are searched, the others read from one evaluation.
    updates : Mapping[str, object] [each parameter's unit]
        Parameter values; arrays broadcast.
    results : Mapping[str, tco.core.outputs.OptionResult], optional
        Core results at ``updates`` already computed.

    Returns
    -------
    dict[str, numpy.ndarray] [unit of each metric]
        ``{metric name: values}``.
    """
    # lazy: a worker computing one-evaluation metrics imports numpy and the core only (no pydantic)
    from tco.analysis.evaluation import evaluate_scenario, scenario_values

    values = scenario_values(scenario, updates)
    if results is None and any(m.kind != "breakeven" for m in metrics):
        results, _ = evaluate_scenario(scenario, updates)
    return {m.name: breakeven_values(scenario, m, updates) if m.kind == "breakeven"
            else values_from_results(scenario, m, results, values) for m in metrics}


def metric_and_misses(scenario: Scenario, metric: Metric, updates: Mapping[str, object]) -> dict[str, np.ndarray]:
    """A one-evaluation metric and where the fleets it compares miss their targets, from one core call.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario evaluated.
    metric : Metric
        Not a break-even (:func:`judged_options`).
    updates : Mapping[str, object] [each parameter's unit]
        Parameter values; arrays broadcast.

    Returns
    -------
    dict[str, numpy.ndarray] [unit of the metric; - for "missed"]
        ``{metric name: values, "missed": 1 where an option it compares misses a latency target, else 0}``.
    """
    # lazy: as in metric_table, a worker computing one-evaluation metrics imports numpy and the core only
    from tco.analysis.evaluation import evaluate_scenario

    results, _ = evaluate_scenario(scenario, updates)
    table = metric_table(scenario, [metric], updates, results)
    return {metric.name: table[metric.name], MISSED: targets_missed(scenario.structure, metric, results)}


def metric_values(scenario: Scenario, metric: Metric | str, updates: Mapping[str, object] | None = None) -> np.ndarray:
    """One metric at the points of ``updates`` (names to floats or broadcasting arrays).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario evaluated.
    metric : Metric or str
        The metric, parsed against the scenario when given as text.
    updates : Mapping[str, object], optional [each parameter's unit]
        Parameter values; default: the base values.

    Returns
    -------
    numpy.ndarray [unit of the metric]
        The metric per point.
    """
    if not isinstance(metric, Metric):
        metric = parse_metric(scenario, metric)
    return metric_table(scenario, [metric], dict(updates or {}))[metric.name]
