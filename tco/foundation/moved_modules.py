"""Module paths of tco 0.1 that moved when the package took its layers (issue 46), kept importable for one release.

``import tco`` installs :class:`MovedModules` on ``sys.meta_path``: importing an old path (``from tco.scenario import
load_scenario``, ``import tco.util``) gives a module that reads each name from the modules it went to, with a
``DeprecationWarning`` naming them. The objects are the same (``tco.scenario.Scenario is tco.inputs.scenario.Scenario``).
The three old core modules whose names are now packages (``tco.core.serving``, ``tco.core.money``,
``tco.core.training``) cannot be kept this way: their contents are in ``tco.core.serving.search`` (and its siblings),
``tco.core.money.plan`` and ``tco.core.training.step``. README "Upgrading" lists the map; the old paths go in 0.3.
Nothing inside tco imports an old path (``tests/test_architecture.py``).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: old module -> the modules its names went to (a name is read from the first that has it)
MOVED: dict[str, tuple[str, ...]] = {
    "tco.catalog": ('tco.inputs.catalog',),
    "tco.core.cascade": ('tco.core.training.cascade',),
    "tco.core.cashflow": ('tco.core.money.cashflow',),
    "tco.core.coordination": ('tco.core.fleet.coordination',),
    "tco.core.finance": ('tco.core.money.finance',),
    "tco.core.generations": ('tco.core.money.generations',),
    "tco.core.goodput": ('tco.core.training.goodput',),
    "tco.core.lifecycle": ('tco.core.money.lifecycle',),
    "tco.core.llm": ('tco.core.serving.llm',),
    "tco.core.nodes": ('tco.core.money.nodes',),
    "tco.core.nre": ('tco.core.money.nre',),
    "tco.core.parallelism": ('tco.core.serving.parallelism',),
    "tco.core.pareto": ('tco.core.fleet.pareto',),
    "tco.core.power": ('tco.core.serving.power',),
    "tco.core.purchases": ('tco.core.money.purchases',),
    "tco.core.queueing": ('tco.core.serving.queueing',),
    "tco.core.roofline": ('tco.core.serving.roofline',),
    "tco.core.routing": ('tco.core.fleet.routing',),
    "tco.core.siting": ('tco.core.fleet.siting',),
    "tco.core.sizing": ('tco.core.serving.sizing',),
    "tco.core.sojourn": ('tco.core.serving.sojourn',),
    "tco.core.steps": ('tco.core.serving.steps',),
    "tco.core.stranded": ('tco.core.fleet.stranded',),
    "tco.core.timeline": ('tco.core.money.timeline',),
    "tco.core.training_run": ('tco.core.training.run',),
    "tco.display": ('tco.foundation.labels', 'tco.foundation.formatting'),
    "tco.dynamics.config": ('tco.inputs.fleet_settings',),
    "tco.dynamics.derived": ('tco.inputs.variants', 'tco.analysis.evaluation'),
    "tco.dynamics.figures": ('tco.present.fleet_figures',),
    "tco.dynamics.summary": ('tco.present.fleet_summary',),
    "tco.errors": ('tco.foundation.errors',),
    "tco.fields": ('tco.foundation.fields',),
    "tco.figstyle": ('tco.present.figure_style',),
    "tco.flips": ('tco.analysis.flips', 'tco.present.flip_text'),
    "tco.lazy": ('tco.foundation.lazy',),
    "tco.limits": ('tco.foundation.limits',),
    "tco.params": ('tco.inputs.parameters',),
    "tco.report": ('tco.present.tables', 'tco.analysis.program_views'),
    "tco.scenario": ('tco.inputs.scenario_schema', 'tco.inputs.scenario', 'tco.inputs.catalog_entries',
                     'tco.inputs.scenario_flatten', 'tco.inputs.scenario_resolve', 'tco.inputs.loading'),
    "tco.solvers": ('tco.analysis.solvers',),
    "tco.sources": ('tco.inputs.bibliography',),
    "tco.studies.chunkwork": ('tco.studies.chunk_jobs',),
    "tco.studies.figures": ('tco.present.study_figures',),
    "tco.studies.findings": ('tco.present.study_findings',),
    "tco.studies.runner": ('tco.export.study_folder',),
    "tco.timeviews": ('tco.analysis.program_views', 'tco.present.program_text'),
    "tco.training_api": ('tco.analysis.training', 'tco.present.training_comparison', 'tco.studies.cascade'),
    "tco.training_scenario": ('tco.inputs.training_scenario',),
    "tco.util": ('tco.foundation.plain_values', 'tco.foundation.files', 'tco.foundation.safe_csv'),
    "tco.validation": ('tco.analysis.validation',),
    "tco.validation.calibrate": ('tco.analysis.validation.calibrate',),
    "tco.validation.cases": ('tco.analysis.validation.cases',),
    "tco.validation.measurements": ('tco.analysis.validation.measurements',),
    "tco.validation.predict": ('tco.analysis.validation.predict',),
    "tco.validation.suite": ('tco.analysis.validation.suite',),
    "tco.validation.training": ('tco.analysis.validation.training',),
    "tco.values": ('tco.foundation.user_numbers',),
    "tco.verdict": ('tco.analysis.verdict', 'tco.present.verdict_text'),
    "tco.yamlio": ('tco.inputs.yaml_files',),
}


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths of :data:`MOVED` and loads each as a module that forwards its names."""

    def find_spec(self, fullname, path=None, target=None):
        """A spec for an old path (loaded by this finder), None for every other module."""
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self, is_package=any(k.startswith(fullname + ".") for k in MOVED))

    def create_module(self, spec):
        """The default module object."""
        return None

    def exec_module(self, module) -> None:
        """Warn once, then forward every attribute to the new modules."""
        targets = MOVED[module.__name__]
        warnings.warn(f"{module.__name__} moved to {', '.join(targets)}; the old path goes in tco 0.3",
                      DeprecationWarning, stacklevel=3)

        def __getattr__(name: str):
            for target in targets:
                new = importlib.import_module(target)
                if hasattr(new, name):
                    return getattr(new, name)
            raise AttributeError(f"module {module.__name__!r} (moved to {', '.join(targets)}) has no attribute {name!r}")

        module.__getattr__ = __getattr__
        if module.__spec__.submodule_search_locations is not None:
            module.__path__ = []


def install() -> None:
    """Put :class:`MovedModules` on ``sys.meta_path`` once."""
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(MovedModules())
