"""tco: total cost of ownership and the economics of specialization for AI hardware.

Public API::

    load_scenario(name_or_path)      -> Scenario
    compare(scenario)                -> Comparison (pandas tables + verdict)
    breakeven(scenario, param, ...)  -> list[Breakeven]
    parameters(scenario)             -> pandas DataFrame of every named input
    evaluate_scenario(scenario, updates) -> raw vectorized results
"""

from .api import Breakeven, Comparison, breakeven, compare, evaluate_scenario, parameters
from .errors import InputError
from .scenario import Scenario, bundled_scenarios, load_scenario

__version__ = "0.1.0"

__all__ = [
    "Breakeven",
    "Comparison",
    "InputError",
    "Scenario",
    "__version__",
    "breakeven",
    "bundled_scenarios",
    "compare",
    "evaluate_scenario",
    "load_scenario",
    "parameters",
]
