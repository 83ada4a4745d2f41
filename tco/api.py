"""The Python API: compare options, find break-evens, list parameters.

    >>> import tco
    >>> s = tco.load_scenario("default")
    >>> result = tco.compare(s)
    >>> result.options[["lcot_usd_per_mtok", "devices"]]

Everything returns pandas DataFrames or plain objects; the numbers come from the
vectorized core (:mod:`tco.core.evaluate`). This module only re-exports the public surface:
each name lives in the layer that owns it (docs/extending.md).
"""

from __future__ import annotations

from tco.analysis.breakeven import Breakeven, breakeven
from tco.analysis.evaluation import CostFigures, analyse_scenario, cost_figures, evaluate_scenario, scenario_values
from tco.foundation.errors import InputError
from tco.inputs.loading import bundled_scenarios, load_scenario
from tco.inputs.scenario import Scenario
from tco.present.comparison import TOKEN_BASIS, Comparison, compare
from tco.present.parameter_table import parameters

__all__ = ["TOKEN_BASIS", "Breakeven", "Comparison", "CostFigures", "InputError", "Scenario", "analyse_scenario",
           "breakeven", "bundled_scenarios", "compare", "cost_figures", "evaluate_scenario", "load_scenario", "parameters",
           "scenario_values"]
