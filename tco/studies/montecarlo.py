"""Monte Carlo: every uncertain parameter drawn from its distribution, in seeded chunks.

Chunk ``i`` draws with its own generator seeded by child ``i`` of the study seed's
``SeedSequence`` (:func:`draw_chunk`, :func:`tco.studies.parallel.chunk_seed`), is
evaluated (:func:`evaluate_chunk`), and the per-chunk metric arrays are accumulated
(:func:`summarize`). The same seed and chunk size give identical numbers whatever order the
chunks run in. :mod:`tco.studies.streaming` folds the chunks into running aggregates
instead of keeping every draw (studies at scale, on several processes or a cluster).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import limits
from ..api import evaluate_scenario
from ..errors import InputError
from ..params import Param
from ..scenario import Scenario
from .chunks import CHUNK_SIZE, Progress, chunk_bounds, progress_bar
from .metrics import Metric, gap_values, metric_table, parse_metric
from .parallel import chunk_seed
from .sampling import iman_conover, is_sampled, values_at_quantiles

#: one rank correlation between two named parameters: (name_a, name_b, Spearman rho)
Correlation = tuple[str, str, float]


@dataclass(frozen=True)
class SamplingPlan:
    """What is drawn: the sampled parameters and the rank-correlation matrix among some of them."""

    params: tuple[Param, ...]
    correlated: tuple[int, ...] = ()
    rank_correlation: np.ndarray | None = None


def sampling_plan(scenario: Scenario, correlations: Sequence[Correlation] | None = None,
                  exclude: Sequence[str] = ()) -> SamplingPlan:
    """Sampled parameters of ``scenario`` (range and non-fixed distribution) and their correlations."""
    params = tuple(p for p in scenario.params.values_list() if is_sampled(p) and p.name not in exclude)
    if not correlations:
        return SamplingPlan(params)
    index = {p.name: i for i, p in enumerate(params)}
    names = []
    for k, (a, b, rho) in enumerate(correlations):
        for side, name in (("a", a), ("b", b)):
            if name not in index:
                raise InputError.one(f"correlations[{k}].{side}", name, "must name a sampled parameter "
                                     "(a range and a distribution other than fixed)")
        if a == b or not -1.0 < float(rho) < 1.0:
            raise InputError.one(f"correlations[{k}].rho", rho, "must lie in (-1, 1) between two different parameters")
        names += [n for n in (a, b) if n not in names]
    matrix = np.eye(len(names))
    for a, b, rho in correlations:
        i, j = names.index(a), names.index(b)
        matrix[i, j] = matrix[j, i] = float(rho)
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        raise InputError.one("correlations", [list(c) for c in correlations],
                             "the correlation matrix must be positive definite") from None
    return SamplingPlan(params, tuple(index[n] for n in names), matrix)


def draw_chunk(plan: SamplingPlan, seed: int, index: int, size: int) -> dict[str, np.ndarray]:
    """Parameter values of chunk ``index``: uniform quantiles from a generator seeded by ``chunk_seed(seed, index)``."""
    rng = np.random.default_rng(chunk_seed(seed, index))
    u = rng.random((size, len(plan.params)))
    if plan.correlated and size > 2:
        cols = list(plan.correlated)
        u[:, cols] = iman_conover(u[:, cols], plan.rank_correlation, rng)
    return values_at_quantiles(plan.params, u)


def evaluate_chunk(scenario: Scenario, metrics: Sequence[Metric], updates: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Metric values, win indicators (``wins:<metric>``) and latency feasibility of the metric's
    option (``feasible:<metric>``) and of the baseline (``feasible:baseline``) in one chunk: one core call.

    A win counts when the option meets its latency targets and either costs less or the
    baseline misses its targets; the feasibility shares tell those two kinds of win apart.
    """
    results, _ = evaluate_scenario(scenario, updates)
    out = metric_table(scenario, metrics, updates, results)
    for m in metrics:
        out[f"wins:{m.name}"] = gap_values(scenario, m, results) < 0
        out[f"feasible:{m.name}"] = np.asarray(results[m.option].feasible) > 0
    out["feasible:baseline"] = np.asarray(results[scenario.structure.baseline].feasible) > 0
    draws = np.broadcast_shapes(*(np.shape(v) for v in updates.values()))
    return {k: np.broadcast_to(v, np.broadcast_shapes(np.shape(v), draws)) for k, v in out.items()}


@dataclass
class MonteCarloResult:
    """``summary``: per metric mean, standard error, P10/P50/P90, P(win); ``samples``: per draw."""

    summary: pd.DataFrame
    samples: pd.DataFrame
    seed: int
    chunk_size: int
    params: list[str]


def summarize(metrics: Sequence[Metric], samples: pd.DataFrame) -> pd.DataFrame:
    """Summary statistics of the accumulated draws.

    ``std_error`` = sample standard deviation / sqrt(n) of the mean; ``p_win`` is the
    share of draws where the option beats the baseline (NaN for break-even metrics),
    with ``p_win_std_error`` = sqrt(p (1 - p) / n); ``p_feasible`` and
    ``p_baseline_feasible`` are the shares of draws where the metric's option and the
    baseline meet their latency targets. NaN draws (no break-even in range) are left out of
    the statistics and counted in ``n``.
    """
    rows = []
    for m in metrics:
        v = samples[m.name].to_numpy(float)
        v = v[np.isfinite(v)]
        n = len(v)
        p10, p50, p90 = np.percentile(v, [10, 50, 90]) if n else (np.nan,) * 3
        p_win = float(samples[f"wins:{m.name}"].mean()) if m.kind != "breakeven" else np.nan
        total = len(samples)
        rows.append({"metric": m.name, "unit": m.unit, "mean": v.mean() if n else np.nan,
                     "std_error": v.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan,
                     "p10": p10, "p50": p50, "p90": p90, "p_win": p_win,
                     "p_win_std_error": np.sqrt(p_win * (1 - p_win) / total) if total else np.nan,
                     "p_feasible": float(samples[f"feasible:{m.name}"].mean()),
                     "p_baseline_feasible": float(samples["feasible:baseline"].mean()), "n": n})
    return pd.DataFrame(rows)


def monte_carlo(scenario: Scenario, metrics: Sequence[Metric | str], samples: int, seed: int = 0,
                correlations: Sequence[Correlation] | None = None, chunk_size: int = CHUNK_SIZE,
                progress: Progress = None) -> MonteCarloResult:
    """Draw ``samples`` scenarios from the catalog distributions and evaluate the metrics (every draw kept in memory)."""
    parsed = [m if isinstance(m, Metric) else parse_metric(scenario, m) for m in metrics]
    limits.check_chunk_size(chunk_size)
    limits.check_memory("samples", samples, "samples kept in memory", samples * len(parsed) * limits.BYTES_PER_DRAW_METRIC)
    limits.check_evaluations("samples", samples, "samples", samples * len(scenario.structure.options),
                             hint="tco.studies.streaming.monte_carlo_stream keeps summaries only")
    plan = sampling_plan(scenario, correlations, exclude=[m.param for m in parsed if m.param])
    parts = []
    with progress_bar(samples, "monte carlo", progress) as bar:
        for index, (start, stop) in enumerate(chunk_bounds(samples, chunk_size)):
            parts.append(evaluate_chunk(scenario, parsed, draw_chunk(plan, seed, index, stop - start)))
            bar.update(stop - start)
    table = pd.DataFrame({k: np.concatenate([p[k] for p in parts]) for k in parts[0]})
    return MonteCarloResult(summarize(parsed, table), table, seed, chunk_size, [p.name for p in plan.params])
