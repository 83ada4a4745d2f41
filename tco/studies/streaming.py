"""Monte Carlo at scale: chunks folded into running aggregates, on one process or many.

One or more *cells* (a scenario, its metrics and what is sampled; a plain Monte Carlo has
one, a portfolio one per device x model x workload x option) are evaluated in chunks of at
most ``chunk_size`` draws. Chunk ``k`` of every cell draws with ``chunk_seed(seed, k)``
(:func:`tco.studies.montecarlo.draw_chunk`), so the draws do not depend on where a chunk runs.

Two passes over a :class:`~tco.studies.parallel.ChunkRunner`:

1. chunk 0 of every cell (the *pilot*) returns its metric values; the histogram edges of
   each metric are fixed at quantiles of those values (:func:`~tco.studies.aggregates.quantile_edges`)
   and its first ``keep`` draws are kept for the samples table and figure;
2. every other chunk returns only :class:`~tco.studies.aggregates.MetricAggregate` s, merged
   in chunk order.

Peak memory is one chunk's core arrays per process plus the aggregates (``BINS`` counts
per metric), whatever the number of samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import limits
from ..scenario import Scenario
from .aggregates import MetricAggregate, merge_tables, quantile_edges
from .chunks import CHUNK_SIZE, chunk_bounds
from .metrics import Metric, parse_metric
from .montecarlo import Correlation, SamplingPlan, draw_chunk, evaluate_chunk, sampling_plan
from .parallel import ChunkRunner

#: draws kept (the first ones, in chunk order) for the samples table and the histogram figure
KEEP_SAMPLES = 10_000


@dataclass(frozen=True)
class MonteCarloCell:
    """What one Monte Carlo evaluates: a scenario, its metrics, its sampling plan and sample count."""

    scenario: Scenario
    metrics: tuple[Metric, ...]
    plan: SamplingPlan
    samples: int


@dataclass(frozen=True)
class MonteCarloJob:
    """The inputs every worker needs (sent once): cells, seed, chunk size and, in pass 2, the bin edges."""

    cells: tuple[MonteCarloCell, ...]
    seed: int
    chunk_size: int
    edges: tuple[dict[str, np.ndarray], ...] = ()


def chunk_values(job: MonteCarloJob, task: tuple[int, int]) -> dict[str, np.ndarray]:
    """Metric values and win flags of chunk ``task = (cell, chunk index)``, one per draw (also when nothing is sampled)."""
    cell_index, index = task
    cell = job.cells[cell_index]
    start, stop = chunk_bounds(cell.samples, job.chunk_size)[index]
    values = evaluate_chunk(cell.scenario, cell.metrics, draw_chunk(cell.plan, job.seed, index, stop - start))
    return {k: np.broadcast_to(v, (stop - start,)) for k, v in values.items()}


def aggregate_values(metrics: Sequence[Metric], values: dict[str, np.ndarray],
                     edges: dict[str, np.ndarray]) -> dict[str, MetricAggregate]:
    """One chunk's values folded into one aggregate per metric."""
    return {m.name: MetricAggregate.of(values[m.name], values[f"wins:{m.name}"], edges[m.name], values[f"feasible:{m.name}"],
                                       values["feasible:baseline"]) for m in metrics}


def chunk_aggregates(job: MonteCarloJob, task: tuple[int, int]) -> tuple[int, dict[str, MetricAggregate]]:
    """``(cell, aggregates)`` of one chunk: what pass 2 sends back instead of the draws."""
    cell = job.cells[task[0]]
    return task[0], aggregate_values(cell.metrics, chunk_values(job, task), job.edges[task[0]])


@dataclass
class CellResult:
    """Aggregates of one cell and its first draws."""

    aggregates: dict[str, MetricAggregate]
    samples: pd.DataFrame


def run_cells(cells: Sequence[MonteCarloCell], seed: int, runner: ChunkRunner, chunk_size: int = CHUNK_SIZE,
              keep: int = KEEP_SAMPLES, label: str = "monte carlo") -> list[CellResult]:
    """Every cell's aggregates over all its draws (module docstring: pilot pass, then the rest)."""
    cells = tuple(cells)
    job = MonteCarloJob(cells, int(seed), int(chunk_size))
    first = [min(chunk_size, c.samples) for c in cells]
    pilots = runner.fold(chunk_values, job, [(c, 0) for c in range(len(cells))], lambda acc, v: [*acc, v], [],
                         f"{label} (pilot chunks)", first)
    edges = tuple({m.name: quantile_edges(values[m.name]) for m in cell.metrics}
                  for cell, values in zip(cells, pilots, strict=True))
    totals = [aggregate_values(cell.metrics, values, e) for cell, values, e in zip(cells, pilots, edges, strict=True)]
    kept = [pd.DataFrame({k: v[:keep] for k, v in values.items()}) for values in pilots]
    del pilots
    rest = [(c, k) for c, cell in enumerate(cells) for k in range(1, len(chunk_bounds(cell.samples, chunk_size)))]
    sizes = [stop - start for start, stop in (chunk_bounds(cells[c].samples, chunk_size)[k] for c, k in rest)]

    def merge(acc, part):
        c, aggregates = part
        acc[c] = merge_tables(acc[c], aggregates)
        return acc

    totals = runner.fold(chunk_aggregates, MonteCarloJob(cells, job.seed, job.chunk_size, edges), rest, merge, totals,
                         label, sizes)
    return [CellResult(t, s) for t, s in zip(totals, kept, strict=True)]


def summary_frame(metrics: Sequence[Metric], aggregates: dict[str, MetricAggregate]) -> pd.DataFrame:
    """One row per metric: mean, std_error, P10/P50/P90, P(win) and its standard error, n, min, max.

    The same columns as :func:`tco.studies.montecarlo.summarize` (plus min and max);
    P10/P50/P90 come from the histograms (:meth:`Histogram.quantiles`), P(win) is NaN for
    break-even metrics.
    """
    rows = []
    for m in metrics:
        row = {"metric": m.name, "unit": m.unit, **aggregates[m.name].summary()}
        if m.kind == "breakeven":
            row["p_win"] = row["p_win_std_error"] = np.nan
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass
class StreamingMonteCarlo:
    """Like :class:`~tco.studies.montecarlo.MonteCarloResult`, but ``samples`` holds only the first draws."""

    summary: pd.DataFrame
    samples: pd.DataFrame
    seed: int
    chunk_size: int
    params: list[str]
    aggregates: dict[str, MetricAggregate] = field(default_factory=dict)
    draws: int = 0


def check_samples(scenario: Scenario, samples: int, chunk_size: int, runner: ChunkRunner) -> None:
    """Refuse a streamed Monte Carlo too long for the processes of ``runner`` (:mod:`tco.limits`)."""
    limits.check_chunk_size(chunk_size)
    limits.check_evaluations("samples", samples, "samples", samples * len(scenario.structure.options), runner.workers,
                             runner.scheduler)


def monte_carlo_stream(scenario: Scenario, metrics: Sequence[Metric | str], samples: int, seed: int = 0,
                       correlations: Sequence[Correlation] | None = None, chunk_size: int = CHUNK_SIZE,
                       runner: ChunkRunner | None = None, keep: int = KEEP_SAMPLES) -> StreamingMonteCarlo:
    """Monte Carlo of ``samples`` draws in memory bounded by ``chunk_size``, on ``runner`` (default: in-process)."""
    parsed = tuple(m if isinstance(m, Metric) else parse_metric(scenario, m) for m in metrics)
    runner = runner or ChunkRunner()
    check_samples(scenario, samples, chunk_size, runner)
    plan = sampling_plan(scenario, correlations, exclude=[m.param for m in parsed if m.param])
    cell = MonteCarloCell(scenario, parsed, plan, int(samples))
    (result,) = run_cells([cell], seed, runner, chunk_size, keep)
    return StreamingMonteCarlo(summary_frame(parsed, result.aggregates), result.samples, int(seed), int(chunk_size),
                               [p.name for p in plan.params], result.aggregates, int(samples))
