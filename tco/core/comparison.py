"""Each challenger against the baseline, and the one pipeline evaluate -> cash flows -> comparison.

:func:`analyse` is what every reader of a scenario's answer calls (the API's ``compare``,
the workbook's Check sheet, the app's Lifecycle page): the options' results, their
year-by-year cash flows, and each challenger's :class:`~tco.core.outputs.ChallengerResult`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tco.core import names as named
from tco.core.evaluate import evaluate
from tco.core.money import cashflow, finance, generations, lifecycle, nre
from tco.core.money import plan as money
from tco.core.money.costs import work_share
from tco.core.money.purchases import pick
from tco.core.names import device_param
from tco.core.outputs import CashFlows, ChallengerResult, OptionResult
from tco.core.serving.sizing import SECONDS_PER_YEAR
from tco.core.structure import Option, Structure


def npv_usd(baseline: OptionResult, option: OptionResult):
    """PV saved by choosing ``option`` over the baseline (positive: it pays).

    Parameters
    ----------
    baseline : OptionResult
        The baseline's result (its present-value cost ``pv_cost_usd``).
    option : OptionResult
        The challenger's result.

    Returns
    -------
    ndarray [USD]
        ``PV(baseline cost) - PV(option cost)``.
    """
    return baseline.pv_cost_usd - option.pv_cost_usd


def cost_ratio(baseline: OptionResult, option: OptionResult):
    """Option LCOT / baseline LCOT; the option wins below 1.

    Parameters
    ----------
    baseline : OptionResult
        The baseline's result (its ``lcot_usd_per_mtok``).
    option : OptionResult
        The challenger's result (its LCOT, the numerator).

    Returns
    -------
    ndarray [-]
        The ratio of levelized costs per token.
    """
    return option.lcot_usd_per_mtok / baseline.lcot_usd_per_mtok


def gap_from_results(results: Mapping[str, OptionResult], baseline: str, option: str, metric: str, target: float):
    """Signed distance of ``option`` from winning on ``metric`` (negative: it wins), from results already computed.

    ``metric`` is ``lcot`` (gap = LCOT - baseline LCOT - target), ``npv`` (target - NPV) or
    ``ratio`` (cost ratio - target). An option that misses a latency target never wins (gap
    ``|gap| + 1``); a baseline that misses one always loses to a feasible option (``-|gap| - 1``).

    Parameters
    ----------
    results : Mapping[str, OptionResult]
        Per option, anything with ``lcot_usd_per_mtok``, ``pv_cost_usd`` and ``feasible``.
    baseline, option : str
        The baseline's and the measured option's names.
    metric : str
        ``lcot``, ``npv`` or ``ratio``.
    target : float [USD/Mtok, USD or -, as the metric]
        The value at which the option ties.

    Returns
    -------
    numpy.ndarray [USD/Mtok, USD or -, as the metric]
        The gap at every evaluated point.
    """
    r, base = results[option], results[baseline]
    if metric == "lcot":
        gap = r.lcot_usd_per_mtok - base.lcot_usd_per_mtok - target
    elif metric == "npv":
        gap = target - npv_usd(base, r)
    else:
        gap = cost_ratio(base, r) - target
    ok, base_ok = r.feasible > 0, base.feasible > 0
    return np.where(ok, np.where(base_ok, gap, -np.abs(gap) - 1.0), np.abs(gap) + 1.0)


def compare_option(option: Option, result: OptionResult, base: OptionResult, values: Mapping[str, object],
                   flows: CashFlows, base_flows: CashFlows) -> ChallengerResult:
    """One challenger against the baseline.

    NPV, cost ratio, payback, IRR; for options with specialized devices L/H, effective life
    and years of advantage over the general roadmap; for options that adopt new hardware the
    software amortisation; for options on the built chip the program view (own units,
    volume, break-even external sales, volume, NRE and demand, the vendor's price, 2-for-2).

    Parameters
    ----------
    option : Option
        The challenger's structure (its pools).
    result : OptionResult
        The challenger's result.
    base : OptionResult
        The baseline's result.
    values : Mapping[str, object]
        The named parameter values.
    flows : CashFlows
        The challenger's yearly cash flows.
    base_flows : CashFlows
        The baseline's yearly cash flows.

    Returns
    -------
    ChallengerResult
        Every comparison output, with its unit in the output table (:mod:`tco.core.outputs`).

    References
    ----------
    [magaki-asic-clouds] the two-for-two rule of the program view.
    """
    def get(name):
        return np.asarray(values[name], float)

    half_life = get(named.workload.half_life_years)
    row = {"npv_usd": npv_usd(base, result), "cost_ratio": cost_ratio(base, result)}
    specialized = [p for p in option.pools if p.specialized]
    if specialized:  # the half-life applies to specialized devices only
        life = np.maximum.reduce([get(device_param(p.device, "useful_life_years")) for p in specialized])
        row["life_over_half_life"] = life / half_life
        row["effective_life_years"] = lifecycle.effective_life_years(life, half_life)
        if base.roadmap is not None:  # a baseline kept on one generation is no roadmap to lead (years_of_advantage)
            row["years_of_advantage"] = years_of_advantage(option, result, base, values)
    software = _software_investment_usd(result)
    if software is not None:
        hardware, _ = money.steady_state_usd_per_year(result.money.pools, 0.0, result.money.demand)
        saving = (baseline_steady_state_usd_per_year(base, result.deployment_year) - hardware
                  - result.money.reauthoring_usd_per_year)
        payback = np.where(saving > 0, software / np.where(saving > 0, saving, 1.0), np.inf)
        cycle = np.maximum.reduce([get(device_param(p.device, "useful_life_years")) for p in option.pools])
        if "years_of_advantage" in row:
            cycle = np.clip(row["years_of_advantage"], 0.0, cycle)
        row.update(software_payback_years=payback, hardware_cycle_years=cycle,
                   cycle_over_payback=np.where(np.isfinite(payback), cycle / np.where(payback > 0, payback, 1.0), 0.0))
    if any(p.built for p in option.pools):
        row.update(_program_view(result, base, values))
    payback, irr, outlay = cashflow.payback_and_irr(base_flows, flows)
    return ChallengerResult(**row, payback_year=payback, irr=irr, outlay_in_year_0=outlay).broadcast()


def baseline_steady_state_usd_per_year(base: OptionResult, year):
    """The baseline's steady-state cost per year [USD/yr] at ``year`` (an option's deployment): its ``eac`` at year 1's
    tokens, or, for a baseline on the general-purpose roadmap, that of the generation its fleet holds in that year, the
    port to it recovered over its life (:attr:`tco.core.money.generations.RoadmapCosts.full_usd_per_year`): what the option's
    hardware replaces from then on, not the scenario's own device, which such a fleet may never buy.

    Parameters
    ----------
    base : OptionResult
        The baseline's result.
    year : float or ndarray [yr]
        Whole years from the decision.

    Returns
    -------
    ndarray [USD/yr]
        The steady-state cost.
    """
    if base.roadmap is None:
        return base.eac_usd_per_mtok * base.money.tokens_per_year / 1e6
    return pick(base.roadmap.full_usd_per_year, base.money.path.held_at(year))


def years_of_advantage(option: Option, result: OptionResult, base: OptionResult, values: Mapping[str, object]):
    """Years after deployment an option with specialized pools stays cheaper than the best general generation.

    Its steady-state cost against the baseline's roadmap
    (:func:`tco.core.money.generations.years_of_advantage`); the drift exposure is each
    specialized pool's share of the baseline's work times the efficiency it loses on
    shifted work. Only for a baseline with a roadmap (a ``roadmap`` block): without one the
    baseline stays on its generation for good, which is no general roadmap (an option cheaper
    than it would lead it for ever), and :func:`compare_option` reports no years of advantage.

    Parameters
    ----------
    option : Option
        The challenger's structure.
    result : OptionResult
        The challenger's result.
    base : OptionResult
        The baseline's result (its roadmap costs, not None).
    values : Mapping[str, object]
        The named parameter values; reads ``workload.half_life_years`` [yr].

    Returns
    -------
    ndarray [yr]
        Years of advantage (negative: the roadmap was cheaper before deployment).
    """
    tokens = result.money.tokens_per_year
    exposure = sum(work_share(p.role, base) * (1.0 - result.pool(p.role).costs.residual_efficiency)
                   for p in option.pools if p.specialized)
    return generations.years_of_advantage(result.eac_usd_per_mtok * tokens / 1e6, base.roadmap,
                                          result.deployment_year, exposure,
                                          np.asarray(values[named.workload.half_life_years], float))


def _software_investment_usd(result: OptionResult):
    """Software an option must write to run: ports to the devices it adopts plus a built chip's
    software NRE [USD]; None when it needs none (it runs on the baseline's devices)."""
    parts = [amount for _, amount in result.money.porting]
    if result.money.program is not None:
        parts.append(np.asarray(result.money.program.parts["software_usd"], float))
    return sum(parts) if parts else None


def _program_view(result: OptionResult, base: OptionResult, values) -> dict:
    """The chip program as the owner and as a vendor see it (DESIGN.md section 9)."""
    def get(name):
        return np.asarray(values[name], float)

    plan = result.money
    own = plan.own_units({role: result.pool(role).present_values.units_bought for role in plan.built_roles})
    external = get(named.program.external_units)
    volume = own + external
    total = plan.program.total_usd
    nre_pv = plan.program.present_value_usd(plan.rate)
    without = result.pv_cost_usd - result.pv_nre_usd
    target = base.pv_cost_usd
    breakeven_volume = nre.breakeven_volume_units(nre_pv, own, without, target)
    npv_own = target - (without + nre_pv)
    base_fixed = base.pv_reauthoring_usd + base.pv_porting_usd
    # the bridge and the shifted work are bought at the baseline's levelized cost, which carries its fixed costs
    fixed = nre_pv + result.pv_reauthoring_usd + result.pv_porting_usd \
        + base_fixed * (result.pv_bridge_usd + result.pv_workload_shift_usd) / target
    demand = nre.breakeven_demand(get(named.workload.requests_per_s), fixed, without + nre_pv, base_fixed, target)
    built = next(iter(plan.built_roles))
    improvement = target / without
    annual = target / finance.annuity_factor(plan.rate, plan.horizon_years)
    rule, tco_over_nre = nre.two_for_two(annual, total, improvement)
    return {
        "nre_usd": total + 0.0 * improvement, "fleet_units": own, "program_volume_units": volume,
        "npv_own_use_usd": npv_own, "needs_external_sales": ((npv_usd(base, result) > 0) & (npv_own <= 0)).astype(float),
        "breakeven_external_units": nre.breakeven_external_units(breakeven_volume, own),
        "breakeven_volume_units": breakeven_volume,
        "breakeven_nre_usd": nre.breakeven_nre_usd(own, nre_pv / total, without, target, volume),
        "breakeven_demand_rps": demand,
        "breakeven_tokens_per_year": demand * get(named.workload.output_tokens) * SECONDS_PER_YEAR,
        "vendor_unit_price_usd": nre.vendor_unit_price_usd(result.pool(built).costs.unit_price_usd, total, volume,
                                                           get(named.program.vendor_gross_margin)),
        "two_for_two_holds": rule.astype(float), "baseline_tco_over_nre": tco_over_nre, "tco_improvement": improvement,
    }


def comparison(structure: Structure, results: Mapping[str, OptionResult], values: Mapping[str, object],
               flows: Mapping[str, CashFlows] | None = None) -> dict[str, ChallengerResult]:
    """Each challenger against the baseline (see :func:`compare_option`).

    Parameters
    ----------
    structure : Structure
        The scenario's options and baseline.
    results : Mapping[str, OptionResult]
        Every option's result by name.
    values : Mapping[str, object]
        The named parameter values.
    flows : Mapping[str, CashFlows] or None
        Every option's cash flows when already computed; None: computed here.

    Returns
    -------
    dict[str, ChallengerResult]
        The comparison by challenger name.
    """
    if flows is None:
        flows = all_cash_flows(structure, results, values)
    base = structure.baseline
    return {o.name: compare_option(o, results[o.name], results[base], values, flows[o.name], flows[base])
            for o in structure.challengers}


def all_cash_flows(structure: Structure, results: Mapping[str, OptionResult], values: Mapping[str, object]):
    """Year-by-year cash flows of every option: ``{option: CashFlows}``.

    Parameters
    ----------
    structure : Structure
        The scenario's options.
    results : Mapping[str, OptionResult]
        Every option's result by name.
    values : Mapping[str, object]
        The named parameter values.

    Returns
    -------
    dict[str, CashFlows]
        Yearly cash flows by option name.
    """
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
        """The baseline option's result."""
        return self.options[self.structure.baseline]


def analyse(structure: Structure, values: Mapping[str, object]) -> Analysis:
    """Evaluate every option, its cash flows and the comparison against the baseline (one pipeline).

    Parameters
    ----------
    structure : Structure
        The scenario's options and baseline.
    values : Mapping[str, object]
        The named parameter values (scalars or arrays that broadcast).

    Returns
    -------
    Analysis
        Every option's result and cash flows, and each challenger against the baseline.
    """
    results = evaluate(structure, values)
    flows = all_cash_flows(structure, results, values)
    return Analysis(structure, values, results, flows, comparison(structure, results, values, flows))
