"""Each challenger against the baseline, and the one pipeline evaluate -> cash flows -> comparison.

:func:`analyse` is what every reader of a scenario's answer calls (the API's ``compare``,
the workbook's Check sheet, the app's Lifecycle page): the options' results, their
year-by-year cash flows, and each challenger's :class:`~tco.core.outputs.ChallengerResult`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from . import cashflow, finance, lifecycle, nre
from .evaluate import evaluate
from .outputs import CashFlows, ChallengerResult, OptionResult
from .structure import Option, Structure, device_param


def npv_usd(baseline: OptionResult, option: OptionResult):
    """PV saved by choosing ``option`` over the baseline [USD] (positive: it pays)."""
    return baseline.pv_cost_usd - option.pv_cost_usd


def cost_ratio(baseline: OptionResult, option: OptionResult):
    """Option LCOT / baseline LCOT [ratio]; the option wins below 1."""
    return option.lcot_usd_per_mtok / baseline.lcot_usd_per_mtok


def compare_option(option: Option, result: OptionResult, base: OptionResult, values: Mapping[str, object],
                   flows: CashFlows, base_flows: CashFlows) -> ChallengerResult:
    """One challenger against the baseline: NPV, cost ratio, L/H, break-even volume and NRE, 2-for-2, payback, IRR.

    The lifecycle fields appear for options with specialized devices, the NRE fields for
    options that use the built device.
    """
    half_life = np.asarray(values["workload.half_life_years"], float)
    row = {"npv_usd": npv_usd(base, result), "cost_ratio": cost_ratio(base, result)}
    lives = [np.asarray(values[device_param(p.device, "useful_life_years")], float) for p in option.pools if p.specialized]
    if lives:  # the half-life applies to specialized devices only
        life = np.maximum.reduce(lives)
        row["life_over_half_life"] = life / half_life
        row["effective_life_years"] = lifecycle.effective_life_years(life, half_life)
    built = [p for p in option.pools if p.built]
    if built:
        nre_usd = nre.program_nre_usd(values)
        units = sum(result.pool(p.role).present_values.pv_units_bought for p in built)
        without_nre = result.pv_cost_usd - result.pv_nre_usd
        row["breakeven_volume_units"] = nre.breakeven_volume_units(nre_usd, units, without_nre, base.pv_cost_usd)
        row["breakeven_nre_usd"] = nre.breakeven_nre_usd(units, without_nre, base.pv_cost_usd, values["program.volume_units"])
        improvement = base.pv_cost_usd / without_nre
        rule, tco_over_nre = nre.two_for_two(base.pv_cost_usd / finance.annuity_factor(
            np.asarray(values["economics.discount_rate"], float), np.asarray(values["economics.horizon_years"], float)),
            nre_usd, improvement)
        row.update(nre_usd=nre_usd + 0.0 * improvement, two_for_two_holds=rule.astype(float),
                   baseline_tco_over_nre=tco_over_nre, tco_improvement=improvement)
    payback, irr = cashflow.payback_and_irr(base_flows, flows)
    return ChallengerResult(**row, payback_year=payback, irr=irr).broadcast()


def comparison(structure: Structure, results: Mapping[str, OptionResult], values: Mapping[str, object],
               flows: Mapping[str, CashFlows] | None = None) -> dict[str, ChallengerResult]:
    """Each challenger against the baseline (see :func:`compare_option`); ``flows`` by option when already computed."""
    if flows is None:
        flows = all_cash_flows(structure, results, values)
    base = structure.baseline
    return {o.name: compare_option(o, results[o.name], results[base], values, flows[o.name], flows[base])
            for o in structure.challengers}


def all_cash_flows(structure: Structure, results: Mapping[str, OptionResult], values: Mapping[str, object]):
    """Year-by-year cash flows of every option: ``{option: CashFlows}``."""
    return {o.name: cashflow.yearly_cash_flows(o, results[o.name], values) for o in structure.options}


@dataclass
class Analysis:
    """A scenario's answer: every option's result and cash flows, and each challenger against the baseline."""

    structure: Structure
    values: Mapping[str, object]
    options: dict[str, OptionResult]
    flows: dict[str, CashFlows]
    challengers: dict[str, ChallengerResult]

    @property
    def baseline(self) -> OptionResult:
        return self.options[self.structure.baseline]


def analyse(structure: Structure, values: Mapping[str, object]) -> Analysis:
    """Evaluate every option, its cash flows and the comparison against the baseline (one pipeline)."""
    results = evaluate(structure, values)
    flows = all_cash_flows(structure, results, values)
    return Analysis(structure, values, results, flows, comparison(structure, results, values, flows))
