"""The one evaluation entry point: a scenario's values with edits, its core results, its analysis,
and what a win gap reads of each option. Everything that evaluates a scenario calls these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from tco.core.comparison import Analysis, analyse
from tco.core.evaluate import evaluate, option_reads
from tco.core.outputs import OptionResult
from tco.foundation.errors import FieldError, InputError
from tco.inputs.parameters import unknown_name_rule
from tco.inputs.scenario import Scenario


def scenario_values(scenario: Scenario, updates: Mapping[str, object] | None = None) -> dict[str, object]:
    """The scenario's parameter values with ``updates`` applied on top, without range checks (for sweeps).

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario.
    updates : Mapping[str, object] or None
        Values by dotted name (floats or arrays that broadcast), in their fields' units.

    Returns
    -------
    dict[str, object] [unit of each field]
        Every named parameter's value.

    Raises
    ------
    InputError
        An update names no parameter of the scenario.
    """
    values = scenario.values()
    if updates:
        unknown = [FieldError(name, value, unknown_name_rule(name, values)) for name, value in updates.items()
                   if name not in values]
        if unknown:
            raise InputError(unknown)
        values.update(updates)
    return values


def evaluate_scenario(scenario: Scenario, updates: Mapping[str, object] | None = None):
    """Core results and the values used, with ``updates`` applied (see :func:`scenario_values`).

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario.
    updates : Mapping[str, object] or None
        Values by dotted name, applied without range checks.

    Returns
    -------
    results : dict[str, OptionResult]
        ``{option: OptionResult}``, outputs in the units of the output table.
    values : dict[str, object] [unit of each field]
        The parameter values evaluated.
    """
    values = scenario_values(scenario, updates)
    return evaluate(scenario.structure, values), values


def analyse_scenario(scenario: Scenario, updates: Mapping[str, object] | None = None) -> Analysis:
    """The core pipeline (results, cash flows, comparison against the baseline) at the scenario's values.

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario.
    updates : Mapping[str, object] or None
        Values by dotted name applied first (see :func:`scenario_values`).

    Returns
    -------
    Analysis
        Every option's result and cash flows, and each challenger against the baseline.
    """
    return analyse(scenario.structure, scenario_values(scenario, updates))


def cost_figures(scenario: Scenario, updates: Mapping[str, object]) -> dict[str, OptionResult]:
    """What a win gap reads of each option (:class:`CostFigures` fields), with ``updates`` applied.

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario.
    updates : Mapping[str, object]
        Values by dotted name, applied without range checks.

    Returns
    -------
    dict[str, OptionResult]
        Each option's result (LCOT [USD/Mtok], PV cost [USD], feasibility).
    """
    return evaluate_scenario(scenario, updates)[0]


class CostFigures(NamedTuple):
    """What a win gap reads of an option: an :class:`~tco.core.outputs.OptionResult` has these
    fields; a training option maps its cost per run onto them (:mod:`tco.analysis.training`)."""

    lcot_usd_per_mtok: object
    pv_cost_usd: object
    feasible: object


def figures_of(result: OptionResult) -> CostFigures:
    """The :class:`CostFigures` of an option's result.

    Parameters
    ----------
    result : OptionResult
        One option's core result.

    Returns
    -------
    CostFigures
        Its LCOT [USD/Mtok], PV cost [USD] and feasibility [-].
    """
    return CostFigures(result.lcot_usd_per_mtok, result.pv_cost_usd, result.feasible)


class MovedCostFigures:
    """The cost figures of a scenario's options with updates applied, asked many times over (a flip search, a
    break-even scan): each option is evaluated only at the points where a value it reads moves.

    An option's result is a function of the values it reads (:func:`tco.core.evaluate.option_reads`, noted once at
    the scenario's values): its own device's and link's, the shared terms' and the baseline's. A point that moves
    none of them leaves the option at its figures at the base values, so a search over 475 parameters of 23
    single-device options evaluates each option at about a ninth of the points. The figures equal those of one
    evaluation of every option at every point (tests/test_moved_figures.py).

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario whose values are numbers (not draws).
    """

    def __init__(self, scenario: Scenario):
        self.scenario = scenario
        self.base_values = scenario.values()
        self.drawn = any(np.ndim(v) for v in self.base_values.values())
        self._reads: dict[str, frozenset[str]] | None = None
        self._at_base: dict[str, CostFigures] | None = None

    def _noted(self) -> tuple[dict[str, frozenset[str]], dict[str, CostFigures]]:
        """The names each option reads and its figures at the base values (computed on the first call)."""
        if self._reads is None:
            structure = self.scenario.structure
            self._reads = option_reads(structure, self.base_values)
            self._at_base = {n: figures_of(r) for n, r in evaluate(structure, self.base_values).items()}
        return self._reads, self._at_base

    def __call__(self, updates: Mapping[str, object]) -> dict[str, CostFigures]:
        """Each option's figures with ``updates`` applied (arrays that broadcast).

        Parameters
        ----------
        updates : Mapping[str, object]
            Values by dotted name, applied without range checks (:func:`scenario_values`).

        Returns
        -------
        dict[str, CostFigures]
            ``{option: figures}`` [USD/Mtok, USD, -], each an array of the updates' broadcast shape.
        """
        values = scenario_values(self.scenario, updates)
        shape = np.broadcast_shapes(*(np.shape(v) for v in updates.values()))
        if not shape or self.drawn:
            return {n: figures_of(r) for n, r in evaluate(self.scenario.structure, values).items()}
        reads, at_base = self._noted()
        moved = {n: np.broadcast_to(~(np.asarray(v, float) == self.base_values[n]), shape) for n, v in updates.items()}
        where = {}
        for name, names in reads.items():
            where[name] = np.zeros(shape, bool)
            for n in names & moved.keys():
                where[name] |= moved[n]
        figures = {name: [np.full(shape, f, float) for f in at_base[name]] for name in reads}
        for group in self._groups([name for name in reads if where[name].any()], where):
            at = np.logical_or.reduce([where[name] for name in group])
            results = evaluate(self.scenario.structure.narrowed(group),
                               {**values, **{n: np.broadcast_to(np.asarray(v, float), shape)[at] for n, v in updates.items()}})
            for name in group:
                for figure, value in zip(figures[name], figures_of(results[name]), strict=True):
                    figure[at] = value
        return {name: CostFigures(*f) for name, f in figures.items()}

    @staticmethod
    def _groups(names: list[str], where: Mapping[str, np.ndarray]) -> list[list[str]]:
        """The options to evaluate together: each alone (with the baseline, at its own points) or all at once (at
        every point one of them moves), whichever evaluates fewer option-points (a flip search moves one parameter
        a point, so mostly each alone; a break-even moves one parameter at every point, so all at once)."""
        if not names:
            return []
        alone = sum(2 * int(where[name].sum()) for name in names)
        together = int(np.logical_or.reduce([where[name] for name in names]).sum()) * (len(names) + 1)
        return [[name] for name in names] if alone < together else [names]


def evaluate_arrays(scenario: Scenario, updates: Mapping[str, object] | None = None):
    """Core results of every option and the values used (updates may be arrays).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario to evaluate.
    updates : Mapping[str, object], optional [each parameter's unit]
        Parameter values replacing the base values; arrays broadcast.

    Returns
    -------
    results : dict[str, tco.core.outputs.OptionResult]
        ``{option: result}`` (:func:`tco.analysis.evaluation.evaluate_scenario`).
    values : dict[str, object]
        The parameter values evaluated.
    """
    return evaluate_scenario(scenario, {k: np.asarray(v, float) for k, v in (updates or {}).items()})
