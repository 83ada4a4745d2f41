"""2-D map: a metric on a grid of two parameters, with the break-even contour."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tco.analysis.evaluation import evaluate_scenario
from tco.foundation import limits
from tco.inputs.scenario import Scenario
from tco.studies.chunks import CHUNK_SIZE, Cancel, Progress
from tco.studies.metrics import Metric, contour_option, gap_values, metric_table, parse_metric
from tco.studies.parallel import ChunkRunner
from tco.studies.sweep import sweep_points


@dataclass
class GridMap:
    """``z[j, i]`` is the metric at ``(x[i], y[j])``; ``gap < 0`` where the option wins; ``missed`` where the option or
    the baseline misses a latency target (there the winner is decided by the targets, not by the metric: an option
    that misses never wins, a baseline that misses always loses, :func:`tco.core.comparison.gap_from_results`)."""

    x_param: str
    y_param: str
    x: np.ndarray
    y: np.ndarray
    z: np.ndarray
    gap: np.ndarray
    metric: Metric
    missed: np.ndarray
    x_unit: str = ""
    y_unit: str = ""

    @property
    def threshold(self) -> float:
        """The metric's value at the break-even (NaN when it has no fixed one, e.g. LCOT)."""
        return self.metric.threshold

    @property
    def wins(self) -> np.ndarray:
        return self.gap < 0

    def frame(self) -> pd.DataFrame:
        """Long format: one row per cell (x, y, metric, option wins, a latency target missed)."""
        xx, yy = np.meshgrid(self.x, self.y)
        return pd.DataFrame({self.x_param: xx.ravel(), self.y_param: yy.ravel(), self.metric.name: self.z.ravel(),
                             f"wins:{self.metric.option}": self.wins.ravel(), "latency_target_missed": self.missed.ravel()})

    def contour(self) -> pd.DataFrame:
        """Break-even points: where the gap changes sign between neighbouring cells, linearly interpolated.

        Along x within each row and along y within each column; the points trace the
        break-even contour drawn on the map.
        """
        px, py = _zero_crossings(self.x, self.gap, axis=1), _zero_crossings(self.y, self.gap.T, axis=1)
        rows_x = pd.DataFrame({self.x_param: px[1], self.y_param: self.y[px[0]]})
        rows_y = pd.DataFrame({self.x_param: self.x[py[0]], self.y_param: py[1]})
        return pd.concat([rows_x, rows_y], ignore_index=True)


def _zero_crossings(coords: np.ndarray, gap: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """(row index, interpolated coordinate) of every sign change of ``gap`` along its last axis."""
    left, right = gap[:, :-1], gap[:, 1:]
    row, col = np.nonzero((left < 0) != (right < 0))
    g0, g1 = left[row, col], right[row, col]
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(np.isfinite(g0 - g1) & (g0 != g1), g0 / (g0 - g1), 0.5)
    return row, coords[col] + np.clip(t, 0, 1) * (coords[col + 1] - coords[col])


@dataclass(frozen=True)
class GridJob:
    """What every grid block needs: the scenario, the metric, the two parameters and their axes."""

    scenario: Scenario
    metric: Metric
    x_param: str
    y_param: str
    x: np.ndarray
    y: np.ndarray


def grid_block(job: GridJob, rows: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Metric, gap and latency misses on rows ``[start, stop)`` of the grid (``y[start:stop]`` x every ``x``): one core
    call.

    Parameters
    ----------
    job : GridJob
        The scenario, metric, parameters and axes.
    rows : tuple[int, int] [-]
        Half-open range of ``y`` indices.

    Returns
    -------
    z : numpy.ndarray [unit of the metric]
        The metric, shape ``(stop - start, len(x))``.
    gap : numpy.ndarray [unit of the metric's gap]
        Negative where the option wins (:func:`tco.studies.metrics.gap_values`).
    missed : numpy.ndarray of bool [-]
        Where the option or the baseline misses a latency target.
    """
    y = job.y[rows[0]:rows[1]]
    updates = {job.x_param: job.x[None, :], job.y_param: y[:, None]}
    results, _ = evaluate_scenario(job.scenario, updates)
    shape = (len(y), len(job.x))
    z = np.broadcast_to(metric_table(job.scenario, [job.metric], updates, results)[job.metric.name], shape)
    names = (contour_option(job.scenario, job.metric), job.scenario.structure.baseline)
    missed = np.logical_or.reduce([np.broadcast_to(results[n].feasible, shape) <= 0 for n in names])
    return np.array(z), np.array(np.broadcast_to(gap_values(job.scenario, job.metric, results), shape)), missed


def check_cells(scenario: Scenario, nx: int, ny: int, chunk_size: int, runner: ChunkRunner) -> None:
    """Refuse a map of ``nx x ny`` cells too large to hold or too long to compute (:mod:`tco.foundation.limits`).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its options count toward the work.
    nx, ny : int [cells]
        Grid size.
    chunk_size : int [cells]
        Cells per core call.
    runner : ChunkRunner
        Where the blocks run (its processes bound the time).
    """
    cells = int(nx) * int(ny)
    limits.check_memory("points", cells, "map cells", cells * limits.BYTES_PER_MAP_CELL)
    runner.check_run("points", cells, "map cells", cells * len(scenario.structure.options), chunk_size)


def grid_map(scenario: Scenario, x_param: str, y_param: str, x_range: tuple[float, float], y_range: tuple[float, float],
             nx: int = 50, ny: int = 50, metric: Metric | str = "ratio", x_log: bool = False, y_log: bool = False,
             runner: ChunkRunner | None = None, chunk_size: int = CHUNK_SIZE, progress: Progress = None,
             cancel: Cancel = None) -> GridMap:
    """The metric over an ``ny x nx`` grid (``x`` as a row, ``y`` as a column).

    Evaluated in blocks of whole rows of at most ``chunk_size`` cells (one core call each,
    one row at least), on ``runner`` (default: in this process); blocks are stacked in order.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario; every other parameter stays at its base value.
    x_param, y_param : str
        Parameter names of the two axes.
    x_range, y_range : tuple[float, float] [unit of each parameter]
        Each axis' ends.
    nx, ny : int [-]
        Points per axis (whole-number parameters keep each whole number once).
    metric : Metric or str
        What is mapped (``ratio``, ``lcot:<option>``, ...).
    x_log, y_log : bool
        Geometric axes.
    runner, chunk_size, progress, cancel : ChunkRunner, int [cells], Progress, Cancel, optional
        How the map runs: blocks on ``runner`` (default: here), of at most ``chunk_size`` cells;
        ``progress`` shows the cells done and ``cancel``, asked before each block, stops the
        map.

    Returns
    -------
    GridMap
        ``z[j, i]`` [unit of the metric] at ``(x[i], y[j])``, the gap (negative where the
        option wins) and where a latency target is missed, with the axes' units.
    """
    metric = metric if isinstance(metric, Metric) else parse_metric(scenario, metric)
    runner = runner or ChunkRunner()
    check_cells(scenario, nx, ny, chunk_size, runner)
    x = sweep_points(scenario, x_param, *x_range, nx, x_log)
    y = sweep_points(scenario, y_param, *y_range, ny, y_log)
    step = max(1, chunk_size // len(x))
    blocks = [(start, min(start + step, len(y))) for start in range(0, len(y), step)]
    parts = runner.fold(grid_block, GridJob(scenario, metric, x_param, y_param, x, y), blocks,
                        lambda acc, part: [*acc, part], [], "map", [(b - a) * len(x) for a, b in blocks], progress, cancel)
    z, gap, missed = (np.concatenate([p[k] for p in parts]) for k in (0, 1, 2))
    return GridMap(x_param, y_param, x, y, z, gap, metric, missed, scenario.params[x_param].unit,
                   scenario.params[y_param].unit)
