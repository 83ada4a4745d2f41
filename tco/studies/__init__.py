"""Scripted sensitivity studies: tornado, sweeps, 2-D break-even maps, Monte Carlo, Sobol, Morris.

Every analysis evaluates the scenario through :func:`tco.analysis.evaluation.evaluate_scenario` with
numpy arrays of parameter values (one core call per analysis or per chunk of samples)
and returns pandas DataFrames; :mod:`tco.present.study_figures` turns them into plotly figures
and :mod:`tco.export.study_folder` runs a study file (``tco study FILE``). Monte Carlo
(:func:`monte_carlo`), Sobol (:func:`sobol`) and Morris (:func:`morris`) each have one
implementation, chunked on a :class:`~tco.studies.parallel.ChunkRunner` with progress and
cancellation, used by the app, the API and ``tco study`` alike.
"""

from __future__ import annotations

import sys
import types

from tco.foundation.lazy import lazy_exports

#: public name -> module that defines it, imported on first use (PEP 562), so that a worker process
#: unpickling a chunk function of one module does not import every analysis (pandas, SALib, ...)
_EXPORTS = {
    "ChunkRunner": ".parallel",
    "GridMap": ".gridmap",
    "Metric": ".metrics",
    "MonteCarloResult": ".montecarlo",
    "Sensitivity": ".sensitivity",
    "StudyInterrupted": ".parallel",
    "grid_map": ".gridmap",
    "metric_values": ".metrics",
    "monte_carlo": ".montecarlo",
    "morris": ".sensitivity",
    "morris_analysis": ".sensitivity",
    "parse_metric": ".metrics",
    "sobol": ".sensitivity",
    "sobol_analysis": ".sensitivity",
    "sweep": ".sweep",
    "tornado": ".tornado",
    "win_threshold": ".metrics",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


class _Package(types.ModuleType):
    """This package: importing its submodule ``sweep`` (``tornado``) does not hide the function of that name."""

    def __setattr__(self, name, value):
        if not (name in _EXPORTS and isinstance(value, types.ModuleType)):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
