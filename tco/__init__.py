"""tco: total cost of ownership and the economics of specialization for AI hardware.

Public API::

    load_scenario(name_or_path)      -> Scenario
    compare(scenario)                -> Comparison (pandas tables + verdict)
    breakeven(scenario, param, ...)  -> list[Breakeven]
    parameters(scenario)             -> pandas DataFrame of every named input
    evaluate_scenario(scenario, updates) -> ({option: OptionResult}, values): typed vectorized results
    analyse_scenario(scenario, updates)  -> Analysis: results, cash flows, each challenger vs the baseline

The names are resolved on first use (PEP 562), so ``import tco`` and ``import tco.core``
load numpy only; pandas and pydantic arrive with the first API call that needs them.
"""

from __future__ import annotations

from tco.foundation import moved_modules
from tco.foundation.lazy import lazy_exports

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS = {
    "Breakeven": ".analysis.breakeven",
    "Comparison": ".present.comparison",
    "breakeven": ".analysis.breakeven",
    "compare": ".present.comparison",
    "analyse_scenario": ".analysis.evaluation",
    "evaluate_scenario": ".analysis.evaluation",
    "parameters": ".present.parameter_table",
    "InputError": ".foundation.errors",
    "Scenario": ".inputs.scenario",
    "bundled_scenarios": ".inputs.loading",
    "load_scenario": ".inputs.loading",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
moved_modules.install()
