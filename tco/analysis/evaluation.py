"""The one evaluation entry point: a scenario's values with edits, its core results, its analysis,
and what a win gap reads of each option. Everything that evaluates a scenario calls these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from tco.core.comparison import Analysis, analyse
from tco.core.evaluate import evaluate
from tco.core.outputs import OptionResult
from tco.foundation.errors import FieldError, InputError
from tco.inputs.parameters import unknown_name_rule
from tco.inputs.scenario import Scenario

pass


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
