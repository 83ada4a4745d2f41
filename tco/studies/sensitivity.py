"""Global sensitivity with SALib: Sobol first/total-order indices and Morris screening.

Both work on the unit hypercube: SALib draws quantiles ``u`` in [0, 1], which map to
parameter values through each parameter's (truncated) inverse CDF
(:mod:`tco.studies.sampling`), so the indices respect the catalog distributions.
The generic functions (:func:`sobol_analysis`, :func:`morris_analysis`) take any
vectorized function of ``u`` (rows x dimensions), so they can be checked on test
functions with known indices (Ishigami).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from SALib.analyze import morris as morris_analyze
from SALib.analyze import sobol as sobol_analyze
from SALib.sample import morris as morris_sample
from SALib.sample import sobol as sobol_sample

from .. import limits
from ..params import Param
from ..scenario import Scenario
from .chunks import Progress, chunk_bounds, progress_bar
from .metrics import Metric, metric_table, parse_metric
from .sampling import is_sampled, values_at_quantiles

UnitFunction = Callable[[np.ndarray], np.ndarray]


def _problem(names: Sequence[str]) -> dict:
    return {"num_vars": len(names), "names": list(names), "bounds": [[0.0, 1.0]] * len(names)}


def _evaluate_chunked(function: UnitFunction, u: np.ndarray, description: str, progress: Progress) -> np.ndarray:
    out = []
    with progress_bar(len(u), description, progress) as bar:
        for start, stop in chunk_bounds(len(u)):
            out.append(np.asarray(function(u[start:stop]), float).reshape(-1))
            bar.update(stop - start)
    return np.concatenate(out)


def sobol_analysis(function: UnitFunction, names: Sequence[str], n: int, seed: int = 0,
                   progress: Progress = None) -> pd.DataFrame:
    """Sobol indices of ``function(u)`` over the unit hypercube: Saltelli design, ``n (d + 2)`` rows.

    Saltelli, A. et al. (2010), "Variance based sensitivity analysis of model output",
    Comput. Phys. Commun. 181, 259-270, as implemented by SALib (first order: Saltelli 2010;
    total: Jansen 1999); confidence intervals are 95 % bootstrap half-widths.
    """
    problem = _problem(names)
    u = sobol_sample.sample(problem, int(n), calc_second_order=False, seed=int(seed))
    y = _evaluate_chunked(function, u, "sobol", progress)
    result = sobol_analyze.analyze(problem, y, calc_second_order=False, seed=int(seed))
    return pd.DataFrame({"param": list(names), "S1": result["S1"], "S1_conf": result["S1_conf"],
                         "ST": result["ST"], "ST_conf": result["ST_conf"]})


def morris_analysis(function: UnitFunction, names: Sequence[str], trajectories: int, levels: int = 4, seed: int = 0,
                    progress: Progress = None) -> pd.DataFrame:
    """Morris elementary effects of ``function(u)``: ``trajectories (d + 1)`` rows.

    Morris, M. D. (1991), Technometrics 33(2), 161-174; ``mu_star`` (Campolongo et al.
    2007) ranks importance, ``sigma`` flags interactions or non-linearity; effects are per
    unit of quantile (the whole range of a parameter is 1).
    """
    problem = _problem(names)
    u = morris_sample.sample(problem, int(trajectories), num_levels=int(levels), seed=int(seed))
    y = _evaluate_chunked(function, u, "morris", progress)
    result = morris_analyze.analyze(problem, u, y, num_levels=int(levels), seed=int(seed))
    return pd.DataFrame({"param": list(names), "mu": result["mu"], "mu_star": result["mu_star"],
                         "mu_star_conf": result["mu_star_conf"], "sigma": result["sigma"]})


@dataclass(frozen=True)
class QuantileMetric:
    """A scenario metric as a function of the quantiles ``u`` (rows x params) of ``params``; picklable."""

    scenario: Scenario
    metric: Metric
    params: tuple[Param, ...]

    def __call__(self, u: np.ndarray) -> np.ndarray:
        updates = values_at_quantiles(self.params, u)
        return metric_table(self.scenario, [self.metric], updates)[self.metric.name]


def scenario_function(scenario: Scenario, metric: Metric, params: Sequence[str] | None) -> tuple[UnitFunction, list[str]]:
    """The metric as a function of the quantiles of the chosen (default: every sampled) parameters."""
    specs = ([scenario.params[name] for name in params] if params is not None
             else [p for p in scenario.params.values_list() if is_sampled(p) and p.name != metric.param])
    return QuantileMetric(scenario, metric, tuple(specs)), [p.name for p in specs]


def _check_design(path: str, requested: int, what: str, rows: int, dims: int, options: int) -> None:
    """Refuse a SALib design (held in memory at once) of ``rows`` x ``dims`` too large for memory or time."""
    limits.check_memory(path, requested, what, rows * dims * limits.BYTES_PER_DESIGN_VALUE)
    limits.check_evaluations(path, requested, what, rows * options, hint="")


def check_sobol_design(scenario: Scenario, dims: int, n: int) -> None:
    """Refuse an in-memory Sobol design of ``n (dims + 2)`` rows too large (:mod:`tco.limits`)."""
    _check_design("n", n, "Sobol base samples", n * (dims + 2), dims, len(scenario.structure.options))


def check_morris_design(scenario: Scenario, dims: int, trajectories: int) -> None:
    """Refuse a Morris design of ``trajectories (dims + 1)`` rows too large (:mod:`tco.limits`)."""
    _check_design("trajectories", trajectories, "Morris trajectories", trajectories * (dims + 1), dims,
                  len(scenario.structure.options))


def sobol(scenario: Scenario, metric: Metric | str, n: int = 1024, seed: int = 0, params: Sequence[str] | None = None,
          progress: Progress = None) -> pd.DataFrame:
    """Sobol first- and total-order indices of a scenario metric, sorted by ST, descending."""
    metric = metric if isinstance(metric, Metric) else parse_metric(scenario, metric)
    function, names = scenario_function(scenario, metric, params)
    check_sobol_design(scenario, len(names), n)
    frame = sobol_analysis(function, names, n, seed, progress)
    return frame.sort_values("ST", ascending=False, kind="stable").reset_index(drop=True)


def morris(scenario: Scenario, metric: Metric | str, trajectories: int = 50, levels: int = 4, seed: int = 0,
           params: Sequence[str] | None = None, progress: Progress = None) -> pd.DataFrame:
    """Morris screening of a scenario metric, sorted by mu_star, descending."""
    metric = metric if isinstance(metric, Metric) else parse_metric(scenario, metric)
    function, names = scenario_function(scenario, metric, params)
    check_morris_design(scenario, len(names), trajectories)
    frame = morris_analysis(function, names, trajectories, levels, seed, progress)
    return frame.sort_values("mu_star", ascending=False, kind="stable").reset_index(drop=True)
