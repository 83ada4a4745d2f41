"""Scripted sensitivity studies: tornado, sweeps, 2-D break-even maps, Monte Carlo, Sobol, Morris.

Every analysis evaluates the scenario through :func:`tco.api.evaluate_scenario` with
numpy arrays of parameter values (one core call per analysis or per chunk of samples)
and returns pandas DataFrames; :mod:`tco.studies.figures` turns them into plotly figures
and :mod:`tco.studies.runner` runs a study file (``tco study FILE``). Monte Carlo
(:func:`monte_carlo`), Sobol (:func:`sobol`) and Morris (:func:`morris`) each have one
implementation, chunked on a :class:`~tco.studies.parallel.ChunkRunner` with progress and
cancellation, used by the app, the API and ``tco study`` alike.
"""

from .gridmap import GridMap, grid_map
from .metrics import Metric, metric_values, parse_metric, win_threshold
from .montecarlo import MonteCarloResult, monte_carlo
from .parallel import ChunkRunner, StudyInterrupted
from .sensitivity import morris, morris_analysis, sobol, sobol_analysis
from .sweep import sweep
from .tornado import tornado

__all__ = [
    "ChunkRunner",
    "GridMap",
    "Metric",
    "MonteCarloResult",
    "StudyInterrupted",
    "grid_map",
    "metric_values",
    "monte_carlo",
    "morris",
    "morris_analysis",
    "parse_metric",
    "sobol",
    "sobol_analysis",
    "sweep",
    "tornado",
    "win_threshold",
]
