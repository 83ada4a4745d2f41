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

from .lazy import lazy_exports

__version__ = "0.1.0"

#: public name -> module that defines it
_EXPORTS = {
    "Breakeven": ".api",
    "Comparison": ".api",
    "breakeven": ".api",
    "compare": ".api",
    "analyse_scenario": ".api",
    "evaluate_scenario": ".api",
    "parameters": ".api",
    "InputError": ".errors",
    "Scenario": ".scenario",
    "bundled_scenarios": ".scenario",
    "load_scenario": ".scenario",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
