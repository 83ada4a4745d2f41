"""What a Monte Carlo chunk computes, on whichever process runs it.

The jobs and chunk functions a :class:`~tco.studies.parallel.ChunkRunner` sends to its worker
processes live here, and so does everything they hold: the scenario's structure and parameter
values (not the validated :class:`~tco.inputs.scenario.Scenario`), the metrics and a sampling plan
reduced to numbers (:meth:`~tco.studies.sampling.SamplingPlan.numbers_only`). A worker that
unpickles them imports numpy, scipy.special (normal quantiles) and the core, not pandas,
pydantic or dash (``tests/test_packaging.py`` checks it). A study whose metrics include a
break-even search still sends its scenario (the search reads the parameter's range).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from tco.core.evaluate import evaluate
from tco.core.structure import Structure
from tco.studies.aggregates import MetricAggregate
from tco.studies.chunks import blockwise, chunk_bounds
from tco.studies.metrics import Metric, gap_values, metric_table, values_from_results
from tco.studies.sampling import SamplingPlan, draw_chunk

if TYPE_CHECKING:
    from tco.inputs.scenario import Scenario

#: what a cell aggregates: a value column and its indicators ``{indicator name: boolean column}``
Aggregated = tuple[str, dict[str, str]]


@dataclass(frozen=True)
class MetricColumns:
    """The per-draw columns of scenario metrics (:func:`evaluate_chunk`); picklable, for workers.

    ``values`` are the scenario's parameter values the draws update; ``scenario`` is kept only
    when a metric is a break-even search (None otherwise, so the workers need no pydantic).
    """

    structure: Structure
    values: dict[str, float]
    metrics: tuple[Metric, ...]
    scenario: Any = None

    @classmethod
    def of(cls, scenario: Scenario, metrics: Sequence[Metric]) -> MetricColumns:
        """The columns of ``metrics`` on ``scenario`` (its structure and values; the scenario itself only for a
        break-even metric)."""
        metrics = tuple(metrics)
        searched = any(m.kind == "breakeven" for m in metrics)
        return cls(scenario.structure, scenario.values(), metrics, scenario if searched else None)

    def __call__(self, updates: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return blockwise(lambda block: evaluate_chunk(self, block), updates)

    @property
    def aggregated(self) -> tuple[Aggregated, ...]:
        """Every metric with its indicators: ``win``, ``feasible`` (its option), ``baseline_feasible``."""
        return tuple((m.name, {"win": f"wins:{m.name}", "feasible": f"feasible:{m.name}",
                               "baseline_feasible": "feasible:baseline"}) for m in self.metrics)


def evaluate_chunk(columns: MetricColumns, updates: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Metric values, win indicators and latency feasibility in one chunk: one core call.

    A win counts when the option meets its latency targets and either costs less or the
    baseline misses its targets; the feasibility shares tell those two kinds of win apart.

    Parameters
    ----------
    columns : MetricColumns
        The structure and parameter values evaluated once at all the chunk's draws, and the
        metrics whose values and wins are returned.
    updates : Mapping[str, numpy.ndarray] [each parameter's unit]
        The chunk's draws.

    Returns
    -------
    dict[str, numpy.ndarray] [unit of each metric; indicators 0/1]
        Each metric, ``wins:<metric>``, ``feasible:<metric>`` (the metric's option) and
        ``feasible:baseline``, one value per draw.
    """
    structure = columns.structure
    values = {**columns.values, **updates}
    results = evaluate(structure, values)
    if columns.scenario is not None:
        out = metric_table(columns.scenario, columns.metrics, updates, results)
    else:
        out = {m.name: values_from_results(structure, m, results, values) for m in columns.metrics}
    for m in columns.metrics:
        out[f"wins:{m.name}"] = gap_values(structure, m, results) < 0
        out[f"feasible:{m.name}"] = np.asarray(results[m.option].feasible) > 0
    out["feasible:baseline"] = np.asarray(results[structure.baseline].feasible) > 0
    draws = np.broadcast_shapes(*(np.shape(v) for v in updates.values()))
    return {k: np.broadcast_to(v, np.broadcast_shapes(np.shape(v), draws)) for k, v in out.items()}


@dataclass(frozen=True)
class MonteCarloCell:
    """What one Monte Carlo evaluates: ``columns(draws)`` gives per-draw columns, of which
    ``aggregated`` are folded into running aggregates; the sampling plan and the sample count."""

    columns: Callable[[Mapping[str, np.ndarray]], dict[str, np.ndarray]]
    aggregated: tuple[Aggregated, ...]
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
    """The columns of chunk ``task = (cell, chunk index)``, one value per draw (also when nothing is sampled).

    Parameters
    ----------
    job : MonteCarloJob
        Cells, seed and chunk size.
    task : tuple[int, int] [-]
        ``(cell index, chunk index)``.

    Returns
    -------
    dict[str, numpy.ndarray] [unit of each column]
        The chunk's columns.
    """
    cell_index, index = task
    cell = job.cells[cell_index]
    start, stop = chunk_bounds(cell.samples, job.chunk_size)[index]
    values = cell.columns(draw_chunk(cell.plan, job.seed, index, stop - start))
    return {k: np.broadcast_to(v, (stop - start,)) for k, v in values.items()}


def aggregate_values(cell: MonteCarloCell, values: dict[str, np.ndarray],
                     edges: dict[str, np.ndarray]) -> dict[str, MetricAggregate]:
    """One chunk's columns folded into one aggregate per aggregated column.

    Parameters
    ----------
    cell : MonteCarloCell
        Names the aggregated columns and their indicators.
    values : dict[str, numpy.ndarray] [unit of each column]
        The chunk's columns.
    edges : dict[str, numpy.ndarray] [unit of each column]
        Histogram edges per aggregated column (fixed by the pilot).

    Returns
    -------
    dict[str, MetricAggregate]
        Count, moments, histogram and indicator counts per column.
    """
    return {name: MetricAggregate.of(values[name], edges[name], {k: values[c] for k, c in indicators.items()})
            for name, indicators in cell.aggregated}


def chunk_aggregates(job: MonteCarloJob, task: tuple[int, int]) -> tuple[int, dict[str, MetricAggregate]]:
    """``(cell, aggregates)`` of one chunk: what pass 2 sends back instead of the draws.

    Parameters
    ----------
    job : MonteCarloJob
        Cells, seed, chunk size and the pilot's bin edges.
    task : tuple[int, int] [-]
        ``(cell index, chunk index)``.

    Returns
    -------
    tuple[int, dict[str, MetricAggregate]] [-, aggregates]
        The cell index and the chunk's aggregates.
    """
    cell = job.cells[task[0]]
    return task[0], aggregate_values(cell, chunk_values(job, task), job.edges[task[0]])
