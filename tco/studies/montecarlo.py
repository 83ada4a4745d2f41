"""Monte Carlo: every uncertain parameter drawn from its distribution, in seeded chunks folded
into running aggregates, on one process or many. The one Monte Carlo of the package: the Dash
app, the Python API (:func:`monte_carlo`), ``tco study`` and the portfolio study all run it.

One or more *cells* (a scenario, its metrics and what is sampled; a plain Monte Carlo has
one, a portfolio one per device x model x workload x option) are evaluated in chunks of at
most ``chunk_size`` draws. Chunk ``k`` of every cell draws with ``chunk_seed(seed, k)``
(:func:`tco.studies.sampling.draw_chunk`), so the draws do not depend on where a chunk runs.

Two passes over a :class:`~tco.studies.parallel.ChunkRunner`, under one progress report:

1. chunk 0 of every cell (the *pilot*) returns its metric values; the histogram edges of
   each metric are fixed at quantiles of those values (:func:`~tco.studies.aggregates.quantile_edges`)
   and its first ``keep`` draws are kept for the samples table and figure;
2. every other chunk returns only :class:`~tco.studies.aggregates.MetricAggregate` s, merged
   in chunk order.

Peak memory is one chunk's core arrays per process plus the aggregates (``BINS`` counts
per metric), whatever the number of samples. The summary (:func:`summary_frame`) and the
distribution behind a CDF or exceedance plot (:meth:`MonteCarloResult.distribution`) are
read from the aggregates, so they cover every draw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from tco.foundation.errors import InputError
from tco.inputs.scenario import Scenario
from tco.studies.aggregates import MetricAggregate, merge_tables, quantile_edges
from tco.studies.chunk_jobs import MetricColumns, MonteCarloCell, MonteCarloJob, aggregate_values, chunk_aggregates, chunk_values
from tco.studies.chunks import CHUNK_SIZE, Cancel, Progress, chunk_bounds
from tco.studies.metrics import Metric, parse_metric
from tco.studies.parallel import ChunkRunner
from tco.studies.sampling import Correlation, RuleBreakingShare, SamplingPlan, rule_breaking_shares, sampling_plan

#: draws kept (the first ones, in chunk order) for the samples table and the histogram figure
KEEP_SAMPLES = 10_000


def metric_cell(scenario: Scenario, metrics: Sequence[Metric], plan: SamplingPlan, samples: int) -> MonteCarloCell:
    """A cell of scenario metrics (:class:`~tco.studies.chunk_jobs.MetricColumns`).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The cell's scenario.
    metrics : Sequence[Metric]
        Its metrics, each aggregated with its win and feasibility counts.
    plan : SamplingPlan
        What is drawn and how.
    samples : int [draws]
        Draws of the cell.

    Returns
    -------
    MonteCarloCell
        The cell's columns, aggregated columns, plan and sample count.
    """
    columns = MetricColumns.of(scenario, metrics)
    return MonteCarloCell(columns, columns.aggregated, plan, int(samples))


@dataclass
class CellResult:
    """Aggregates of one cell and its first draws."""

    aggregates: dict[str, MetricAggregate]
    samples: pd.DataFrame


def monte_carlo_job(cells: Sequence[MonteCarloCell], seed: int, chunk_size: int) -> MonteCarloJob:
    """What the chunks of ``cells`` are sent: the cells with their sampling plans reduced to numbers, so that a
    worker unpickling the job imports numpy, scipy.special and the core only (:mod:`tco.studies.chunk_jobs`).

    Parameters
    ----------
    cells : Sequence[MonteCarloCell]
        The cells.
    seed : int [-]
        The study's seed.
    chunk_size : int [draws]
        Draws per chunk.

    Returns
    -------
    MonteCarloJob
        The job without bin edges (pass 1).
    """
    return MonteCarloJob(tuple(replace(c, plan=c.plan.numbers_only()) for c in cells), int(seed), int(chunk_size))


def run_cells(cells: Sequence[MonteCarloCell], seed: int, runner: ChunkRunner, chunk_size: int = CHUNK_SIZE,
              keep: int = KEEP_SAMPLES, label: str = "monte carlo", progress: Progress = None,
              cancel: Cancel = None) -> list[CellResult]:
    """Every cell's aggregates over all its draws: the pilot pass, then the rest (module docstring).

    Parameters
    ----------
    cells : Sequence[MonteCarloCell]
        The cells.
    seed : int [-]
        The study seed (chunk ``k`` draws with :func:`tco.studies.parallel.chunk_seed`).
    keep : int [draws]
        First draws kept per cell for the samples table.
    label : str
        Progress label.
    runner, chunk_size, progress, cancel : ChunkRunner, int [draws], Progress, Cancel, optional
        Each cell's chunks of ``chunk_size`` draws run on ``runner``, report to ``progress`` and
        stop when ``cancel`` says so.

    Returns
    -------
    list[CellResult]
        Per cell: its aggregates and its first draws.
    """
    job = monte_carlo_job(cells, seed, chunk_size)
    cells = job.cells
    bounds = [chunk_bounds(c.samples, chunk_size) for c in cells]
    rest = [(c, k) for c in range(len(cells)) for k in range(1, len(bounds[c]))]
    with runner.analysis(label, sum(map(len, bounds)), sum(c.samples for c in cells), progress, cancel) as analysis:
        pilots = analysis.fold(chunk_values, job, [(c, 0) for c in range(len(cells))], lambda acc, v: [*acc, v], [],
                               [b[0][1] for b in bounds])
        edges = tuple({name: quantile_edges(values[name]) for name, _ in cell.aggregated}
                      for cell, values in zip(cells, pilots, strict=True))
        totals = [aggregate_values(cell, values, e) for cell, values, e in zip(cells, pilots, edges, strict=True)]
        kept = [pd.DataFrame({k: v[:keep] for k, v in values.items()}) for values in pilots]
        del pilots

        def merge(acc, part):
            c, aggregates = part
            acc[c] = merge_tables(acc[c], aggregates)
            return acc

        totals = analysis.fold(chunk_aggregates, MonteCarloJob(cells, job.seed, job.chunk_size, edges), rest, merge, totals,
                               [bounds[c][k][1] - bounds[c][k][0] for c, k in rest])
    return [CellResult(t, s) for t, s in zip(totals, kept, strict=True)]


def summary_frame(metrics: Sequence[Metric], aggregates: dict[str, MetricAggregate]) -> pd.DataFrame:
    """One row per metric: mean, std_error, P10/P50/P90, P(win) and its standard error, the
    feasibility shares, n, min, max (:meth:`~tco.studies.aggregates.MetricAggregate.summary`).

    P10/P50/P90 come from the histograms (:meth:`~tco.studies.aggregates.Histogram.quantiles`);
    ``p_win`` = wins / draws with standard error ``sqrt(p (1 - p) / draws)``, NaN for break-even metrics.

    Parameters
    ----------
    metrics : Sequence[Metric]
        The metrics.
    aggregates : dict[str, MetricAggregate]
        Their aggregates over every draw.

    Returns
    -------
    pandas.DataFrame
        Statistics in each metric's unit; shares [-].
    """
    rows = []
    for m in metrics:
        a = aggregates[m.name]
        row = {"metric": m.name, "unit": m.unit, **a.summary()}
        row = {**{k: row[k] for k in ("metric", "unit", "mean", "std_error", "p10", "p50", "p90", "p_win")},
               "p_win_std_error": a.share_std_error("win"), **row}
        if m.kind == "breakeven":
            row["p_win"] = row["p_win_std_error"] = np.nan
        rows.append(row)
    return pd.DataFrame(rows)


@dataclass
class MonteCarloResult:
    """``summary``: one row per metric over every draw (:func:`summary_frame`); ``samples``: the
    first draws (at most ``keep`` and one chunk); ``aggregates``: the running aggregates per metric."""

    summary: pd.DataFrame
    samples: pd.DataFrame
    seed: int
    chunk_size: int
    params: list[str]
    aggregates: dict[str, MetricAggregate] = field(default_factory=dict)
    draws: int = 0
    #: each rule between drawn fields and the share of independent draws that would break it, taken within it instead
    #: (:func:`tco.studies.sampling.rule_breaking_shares`)
    conditioned: tuple[RuleBreakingShare, ...] = ()

    def distribution(self, metric: Metric | str) -> pd.DataFrame:
        """The metric's distribution over every finite draw, for a CDF or an exceedance plot.

        Columns ``value`` [metric unit], ``cdf`` (share of the finite draws below ``value``)
        and ``exceedance`` (``1 - cdf``: the share at or above it), at the smallest draw, at
        every histogram edge and at the largest draw (cdf 1); exact at every row
        (:meth:`~tco.studies.aggregates.MetricAggregate.cdf`); a row equal to the one before it
        (the smallest draw on the first edge) is left out.
        """
        name = metric.name if isinstance(metric, Metric) else str(metric)
        value, cdf = self.aggregates[name].cdf()
        new = np.concatenate([[True], (np.diff(value) != 0) | (np.diff(cdf) != 0)]) if len(value) else np.array([], bool)
        return pd.DataFrame({"value": value[new], "cdf": cdf[new], "exceedance": 1.0 - cdf[new]})


def check_samples(scenario: Scenario, samples: int, chunk_size: int, runner: ChunkRunner) -> None:
    """Refuse a Monte Carlo too long for the processes of ``runner`` (:mod:`tco.foundation.limits`); memory is
    bounded by the chunk.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its options count toward the work.
    samples : int [draws]
        Draws asked for.
    chunk_size : int [draws]
        Draws per core call.
    runner : ChunkRunner
        Its processes and time limit decide.
    """
    runner.check_run("samples", samples, "samples", samples * len(scenario.structure.options), chunk_size)


def _positive_int(path: str, value) -> int:
    if isinstance(value, bool) or not float(value).is_integer() or int(value) < 1:
        raise InputError.one(path, value, "must be a positive integer")
    return int(value)


def monte_carlo(scenario: Scenario, metrics: Sequence[Metric | str], samples: int, seed: int = 0,
                correlations: Sequence[Correlation] | None = None, chunk_size: int = CHUNK_SIZE, *,
                keep: int = KEEP_SAMPLES, runner: ChunkRunner | None = None, progress: Progress = None,
                cancel: Cancel = None) -> MonteCarloResult:
    """Draw ``samples`` scenarios from the catalog distributions and evaluate the metrics, in memory
    bounded by ``chunk_size``, on ``runner`` (default: in this process).

    The same seed and chunk size give the same numbers, bit for bit, wherever the chunks run.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario; every uncertain parameter is drawn.
    metrics : Sequence[Metric or str]
        The metrics (a break-even metric's parameter is not drawn).
    samples : int [draws]
        Number of draws.
    seed : int [-]
        The seed.
    correlations : Sequence[Correlation], optional
        Rank correlations between parameters (Iman-Conover).
    keep : int [draws]
        First draws kept for the samples table.
    chunk_size, runner, progress, cancel : int [draws], ChunkRunner, Progress, Cancel, optional
        Draws per core call and where they run (default: in this process); ``progress`` counts
        draws after each chunk (default: the runner's) and ``cancel``, asked before each chunk,
        stops the run with :class:`~tco.studies.parallel.StudyInterrupted`.

    Returns
    -------
    MonteCarloResult
        ``summary`` (:func:`summary_frame`), the first draws, the seed, the chunk size and the
        aggregates per metric.

    References
    ----------
    [iman-conover-1982] rank correlations imposed on the draws.
    """
    samples, chunk_size = _positive_int("samples", samples), _positive_int("chunk_size", chunk_size)
    parsed = tuple(m if isinstance(m, Metric) else parse_metric(scenario, m) for m in metrics)
    runner = runner or ChunkRunner()
    check_samples(scenario, samples, chunk_size, runner)
    plan = sampling_plan(scenario, correlations, exclude=[m.param for m in parsed if m.param])
    cell = metric_cell(scenario, parsed, plan, samples)
    (result,) = run_cells([cell], seed, runner, chunk_size, keep, progress=progress, cancel=cancel)
    return MonteCarloResult(summary_frame(parsed, result.aggregates), result.samples, int(seed), chunk_size,
                            [p.name for p in plan.params], result.aggregates, samples, rule_breaking_shares(plan))
