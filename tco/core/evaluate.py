"""Evaluate every fleet option of a scenario from its named parameters, vectorized.

``evaluate(structure, values)`` takes the discrete :class:`~tco.core.structure.Structure`
and a mapping of dotted parameter names to floats or numpy arrays (broadcasting
together) and returns, per option, a typed :class:`~tco.core.outputs.OptionResult`. One
call evaluates one scenario or a million parameter draws; nothing here loops over
scenarios.

Each option is evaluated in typed steps, each returning its own value: per pool the
performance (:func:`pool_performance`), then the sizing of the option's pools and KV link
(:func:`size_option`), per pool the yearly costs (:func:`pool_costs`) and present values
(:func:`pool_present_values`), the link's costs (:func:`link_costs`), and the option's
totals (:func:`evaluate_option`). The output names, units and meanings are the table in
:mod:`tco.core.outputs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from . import finance, lifecycle, llm, nre, power, serving, sizing
from .outputs import (
    CASH_FLOW_LINES,
    YEARLY_COSTS,
    LinkCosts,
    OptionResult,
    PoolCosts,
    PoolPerformance,
    PoolPresentValues,
    PoolResult,
    PoolSizing,
)
from .structure import Option, Pool, Structure, device_param, link_param, model_param, pool_param, tier_param

#: infeasibility bits, combined in ``infeasible_code``
TPOT_MISSED = 1
TTFT_MISSED = 2
CONTEXT_TOO_LONG = 4
NO_FIT = 8
INFEASIBLE_REASONS = {
    TPOT_MISSED: "the time-per-output-token target is missed even at batch 1",
    TTFT_MISSED: "the time-to-first-token target is missed even with idle replicas",
    CONTEXT_TOO_LONG: "prompt + output exceed the model's context window",
    NO_FIT: "no candidate replica shape holds the model and one sequence",
}

#: names of the ``*_bound`` codes (:meth:`tco.core.steps.CycleModel.bound_and_spill`)
BOUND_NAMES = ("bandwidth", "compute", "interconnect")


class _Workload:
    """Workload, model, serving and economics terms shared by every option."""

    def __init__(self, structure: Structure, values: Mapping[str, object]):
        def get(name):
            return np.asarray(values[name], dtype=float)

        self.get = get
        self.names = values.keys()
        m = structure.model
        self.prompt = get("workload.prompt_tokens")
        self.output = get("workload.output_tokens")
        self.mean_rps = get("workload.requests_per_s")
        self.peak_rps = self.mean_rps * get("workload.peak_to_mean")
        self.ttft_target = get("workload.ttft_target_s")
        self.tpot_target = get("workload.tpot_target_s")
        self.half_life = get("workload.half_life_years")
        weight_bits = get("workload.weight_bits")
        self.weight_bytes_per_param = weight_bits / 8.0
        self.compute_bits = get("workload.compute_bits")
        kv_bits = get("workload.kv_bits")
        params_total = get(model_param(m, "params_total"))
        params_active = get(model_param(m, "params_active"))
        experts, per_token = get(model_param(m, "experts_routed")), get(model_param(m, "experts_per_token"))
        self.context_max = get(model_param(m, "context_max_tokens"))
        latent = model_param(m, "kv_elements_per_token")
        layers = get(model_param(m, "layers"))
        if latent in values:
            self.kv_per_token = llm.latent_kv_bytes_per_token(get(latent), kv_bits)
            kv_heads = 1.0
        else:
            kv_heads = get(model_param(m, "kv_heads"))
            self.kv_per_token = llm.kv_bytes_per_token(layers, kv_heads, get(model_param(m, "head_dim")), kv_bits)
        self.stored_weight_bytes = llm.weight_bytes(params_total, weight_bits)
        slot_bytes = llm.expert_params_per_routed_slot(params_total, params_active, experts, per_token) \
            * self.weight_bytes_per_param
        self.model = serving.ModelShape(
            weight_bytes=self.stored_weight_bytes,
            # dense: the active weights every step; MoE: shared weights + k routed experts per token
            read_fixed_bytes=(np.maximum(params_active * self.weight_bytes_per_param - per_token * slot_bytes, 0.0)
                              if structure.moe else params_active * self.weight_bytes_per_param),
            read_per_token_bytes=per_token * slot_bytes if structure.moe else 0.0 * slot_bytes,
            weight_flops_per_token=llm.dense_flops_per_token(params_active),
            kv_bytes_per_token=self.kv_per_token, layers=layers, attention_dim=get(model_param(m, "attention_dim")),
            hidden_size=get(model_param(m, "hidden_size")), experts_per_token=per_token,
            activation_bytes=self.compute_bits / 8.0, kv_heads=kv_heads, moe=structure.moe)
        self.demand = serving.Demand(
            self.prompt, self.output, self.peak_rps, self.mean_rps, self.ttft_target, self.tpot_target,
            get("serving.percentile"), get("workload.max_batch"), get("serving.token_budget_tokens"),
            get("serving.memory_compute_overlap"), get("serving.phase_overlap"), get("serving.comm_overlap"),
            structure.policy)
        self.rate = get("economics.discount_rate")
        self.horizon = get("economics.horizon_years")
        self.annuity = finance.annuity_factor(self.rate, self.horizon)
        self.output_tokens_per_year = self.mean_rps * self.output * sizing.SECONDS_PER_YEAR
        self.whole = structure.whole_devices

    @cached_property
    def yearly_discount_factors(self) -> list[np.ndarray]:
        """``(1+r)^-y`` for the years ``1..max horizon``, computed once per evaluation [-]."""
        return [finance.discount_factor(self.rate, year) for year in range(1, int(np.max(self.horizon)) + 1)]


def _peak_flops(get, device, compute_bits):
    """Peak FLOP/s at the compute width: 4-bit falls back to 8-bit where absent."""
    f16 = get(device_param(device, "peak_flops_16bit"))
    f8 = get(device_param(device, "peak_flops_8bit"))
    f4 = get(device_param(device, "peak_flops_4bit"))
    return np.where(compute_bits <= 4, f4, np.where(compute_bits <= 8, f8, f16))


def device_shape(option: Option, pool: Pool, w: _Workload) -> serving.DeviceShape:
    """The pool's device as the serving model needs it."""
    get, d = w.get, pool.device
    return serving.DeviceShape(
        tier_capacity_bytes=tuple(get(tier_param(d, t, "capacity_bytes")) for t in pool.tiers),
        tier_bandwidth_bytes_per_s=tuple(get(tier_param(d, t, "bandwidth_bytes_per_s")) for t in pool.tiers),
        usable_fraction=get(device_param(d, "memory_usable_fraction")),
        bandwidth_efficiency=get(device_param(d, "bandwidth_efficiency")),
        flops_per_s=_peak_flops(get, d, w.compute_bits) * get(device_param(d, "compute_efficiency")),
        sync_latency_s=get(device_param(d, "sync_latency_s")),
        scale_up_bytes_per_s=get(device_param(d, "chip_to_chip_bandwidth_bytes_per_s")),
        scale_out_bytes_per_s=get(device_param(d, "scale_out_bandwidth_bytes_per_s")),
        domain_devices=get(device_param(d, "scale_up_domain_devices")),
        min_devices=get(pool_param(option.name, pool.role, "devices_per_replica")) if pool.has_min_devices else 1.0,
        cycle_overhead_s=get(overhead) if (overhead := device_param(d, "cycle_overhead_s")) in w.names else 0.0)


def device_hour_usd(pool: Pool, w: _Workload):
    """Cost of one device-hour at full power, which ranks candidate shapes [USD/device-h].

    Capital recovery of price + system overhead over the device's life, plus electricity and
    data hall at TDP + host power: ``(CRF(price + overhead) + (TDP + host) x running cost per W-yr) / 8760``.
    The shape with the fewest device-hours of this price wins; the full cost model then
    prices the chosen fleet.
    """
    get, d = w.get, pool.device
    capex = get(device_param(d, "price_usd")) + get(device_param(d, "system_overhead_usd"))
    watts = get(device_param(d, "tdp_w")) + get(device_param(d, "host_power_w"))
    yearly = finance.capital_recovery_usd_per_year(capex, w.rate, get(device_param(d, "useful_life_years"))) \
        + power.running_cost_usd_per_year(watts, get("economics.pue"), get("economics.electricity_usd_per_kwh"),
                                          get("economics.facility_usd_per_kw_month"))
    return yearly / power.HOURS_PER_YEAR


@dataclass
class OptionSizing:
    """Option-level terms of the serving step: latency a request sees at peak, the KV link.

    ``prefill_time_share`` is the share of a colocated replica's time spent in prefill
    [fraction] (None when disaggregated: there the pools' costs split the option's cost).
    """

    ttft_s: np.ndarray
    tpot_s: np.ndarray
    queue_wait_s: np.ndarray
    batch: np.ndarray
    spilled_bytes: np.ndarray
    tpot_met: np.ndarray
    ttft_met: np.ndarray
    fits: np.ndarray
    kv_transfer_s: np.ndarray
    link_ports: np.ndarray
    prefill_time_share: np.ndarray | None = None


def _serve(option: Option, w: _Workload):
    """The option's pools sized by :func:`tco.core.serving.size_pool`, plus the KV transfer time and link ports."""
    kv_transfer_s = link_ports = None
    extra = 0.0
    if option.disaggregated:
        link_bw = w.get(link_param(option.link, "bandwidth_bytes_per_s"))
        bytes_per_request = sizing.kv_transfer_bytes_per_request(w.prompt, w.kv_per_token)
        kv_transfer_s = sizing.kv_transfer_time_s(bytes_per_request, link_bw, w.get(link_param(option.link, "latency_s")))
        link_ports = sizing.link_ports_needed(w.peak_rps, bytes_per_request, link_bw, w.whole)
        extra = kv_transfer_s
    served = {pool.role: serving.size_pool(pool.role, pool.shapes, w.model, device_shape(option, pool, w), w.demand,
                                           w.whole, extra if pool.role == "prefill" else 0.0, device_hour_usd(pool, w))
              for pool in option.pools}
    return served, kv_transfer_s, link_ports


def serving_pools(structure: Structure, values: Mapping[str, object], option_name: str):
    """The raw serving results of one option's pools and the demand they were sized for.

    Returns ``({role: PoolServing}, demand, kv_transfer_s)``; for readers that need more than
    the typed outputs (the validation suite re-reads a measured system at its own size).
    """
    w = _Workload(structure, values)
    served, kv_transfer_s, _ = _serve(structure.option(option_name), w)
    return served, w.demand, kv_transfer_s


def chosen_cycle_models(structure: Structure, values: Mapping[str, object], option_name: str) -> dict:
    """The cycle model of each pool's chosen replica shape, for one draw (scalar values) [{role: CycleModel}].

    The discrete-event simulation of the tests runs a bundled scenario's fleet with these.
    """
    w = _Workload(structure, values)
    option = structure.option(option_name)
    served, _, _ = _serve(option, w)
    return {pool.role: serving.cycle_model(pool.shapes[int(np.asarray(served[pool.role]["shape_index"]).reshape(-1)[0])],
                                           w.model, device_shape(option, pool, w), w.demand, pool.role)
            for pool in option.pools}


def serve_option(option: Option, w: _Workload) -> tuple[dict[str, PoolPerformance], dict[str, PoolSizing], OptionSizing]:
    """Each pool sized at peak under load with its replica shape searched (:func:`tco.core.serving.size_pool`),
    utilization at mean load, and the KV link (DESIGN.md sections 4 and 8).

    A disaggregated option's prefill pool carries the KV transfer in its TTFT budget.
    """
    served, kv_transfer_s, link_ports = _serve(option, w)
    perf, sizes = {}, {}
    for role, pool in served.items():
        v = pool.values
        perf[role] = PoolPerformance(**{name: v[name] for name in serving.PERFORMANCE_FIELDS[role]})
        replicas = v["replicas"]
        sizes[role] = PoolSizing(replicas=replicas, utilization=sizing.utilization(w.mean_rps, replicas, v["capacity_rps"]),
                                 devices=replicas * v["devices_per_replica"])
    out = served["decode"] if option.disaggregated else served["colocated"]
    first = served["prefill"] if option.disaggregated else out
    zero = 0.0 * out["tpot_s"]
    fits = sum(p["fits"] for p in served.values()) >= len(served) - 0.5
    tpot_met = (out["tpot_ok"] > 0.5) & fits
    ttft_met = (first["ttft_ok"] > 0.5) & fits
    wait = first["queue_wait_s"] + (out["queue_wait_s"] if option.disaggregated else 0.0)
    return perf, sizes, OptionSizing(
        ttft_s=first["ttft_s"], tpot_s=out["tpot_s"], queue_wait_s=wait, batch=out["batch"],
        spilled_bytes=out["spilled_bytes"], tpot_met=tpot_met, ttft_met=ttft_met, fits=fits,
        kv_transfer_s=zero if kv_transfer_s is None else kv_transfer_s + zero,
        link_ports=zero if link_ports is None else link_ports + zero,
        prefill_time_share=None if option.disaggregated else out["interference_share"])


def pool_costs(pool: Pool, size: PoolSizing, w: _Workload, values: Mapping[str, object]) -> PoolCosts:
    """Per-device capex and yearly cost terms of one pool (DESIGN.md section 5)."""
    get, d = w.get, pool.device
    price = get(device_param(d, "price_usd"))
    if pool.built and "program.die_area_mm2" in values:
        price = nre.good_die_cost_usd(get("program.die_area_mm2"), get("program.wafer_price_usd"),
                                      get("program.defect_density_per_cm2")) + get("program.package_memory_board_usd")
    unit_hardware = price + get(device_param(d, "system_overhead_usd"))
    tdp, host = get(device_param(d, "tdp_w")), get(device_param(d, "host_power_w"))
    power_w = size.devices * power.device_power_w(get(device_param(d, "idle_power_w")), tdp, size.utilization, host)
    zero = np.zeros_like(price)
    return PoolCosts(
        unit_hardware_usd=unit_hardware,
        unit_nre_usd=(nre.nre_share_usd_per_unit(nre.program_nre_usd(values), get("program.volume_units"))
                      if pool.built else zero),
        life_years=get(device_param(d, "useful_life_years")),
        residual_value_fraction=get(device_param(d, "residual_value_fraction")),
        power_w=power_w,
        energy_usd_per_year=power.energy_cost_usd_per_year(power_w, get("economics.pue"),
                                                           get("economics.electricity_usd_per_kwh")),
        facility_usd_per_year=power.facility_cost_usd_per_year(size.devices * (tdp + host),
                                                               get("economics.facility_usd_per_kw_month")),
        maintenance_usd_per_year=get("economics.maintenance_fraction_per_year") * size.devices * unit_hardware,
        reauthoring_usd_per_year=(get(device_param(d, "reauthoring_usd_per_shift")) / w.half_life
                                  if pool.specialized else zero),
        residual_efficiency=get(device_param(d, "residual_efficiency")) if pool.specialized else np.ones_like(price),
        half_life_offset_years=get("program.time_to_market_years") if pool.built else zero,
    )


def _shift_pv_factor(w: _Workload, costs: PoolCosts):
    """``sum_y (1 - served_y) (1+r)^-y`` over the horizon: PV weight of shifted work [yr]."""
    total = 0.0
    for year, discount in enumerate(w.yearly_discount_factors, start=1):
        served = lifecycle.served_efficiency_in_year(year, w.half_life, costs.residual_efficiency, costs.half_life_offset_years)
        total = total + (year <= w.horizon + 1e-9) * (1.0 - served) * discount
    return total


def _shift_exposure_usd_per_year(pool: Pool, w: _Workload, baseline: OptionResult | None):
    """Baseline cost of the work a specialized pool does [USD/yr]; None for general pools and the baseline itself.

    The pool's share of the baseline's cost: all of it when colocated, the baseline's
    prefill (decode) cost share for a prefill (decode) pool.
    """
    if baseline is None or not pool.specialized:
        return None
    share = {"colocated": 1.0, "prefill": baseline.prefill_cost_share, "decode": 1.0 - baseline.prefill_cost_share}[pool.role]
    return w.output_tokens_per_year * baseline.lcot_usd_per_mtok / 1e6 * share


@dataclass
class PoolLinePVs:
    """Present values of one pool's cost lines (``capex_usd`` ..., without ``links_usd``) [USD], and
    ``own_usd``, the PV of owning and running the pool (capex, NRE, residual, energy, facility,
    maintenance) [USD] that splits a disaggregated option's cost between prefill and decode.

    Summed into the option's present values by :func:`evaluate_option`, not kept (a million
    draws would hold eight more arrays per pool).
    """

    lines: dict[str, np.ndarray]
    own_usd: np.ndarray


def pool_present_values(pool: Pool, size: PoolSizing, costs: PoolCosts, w: _Workload,
                        baseline: OptionResult | None) -> tuple[PoolPresentValues, PoolLinePVs]:
    """Present values of one pool's cost lines over the horizon (DESIGN.md section 5)."""
    purchases, credits = finance.hardware_pv_factors(w.rate, costs.life_years, w.horizon, costs.residual_value_fraction)
    units = size.devices * purchases
    capex = units * costs.unit_hardware_usd
    nre_pv = units * costs.unit_nre_usd
    residual = -size.devices * costs.unit_hardware_usd * credits
    opex = (costs.energy_usd_per_year + costs.facility_usd_per_year + costs.maintenance_usd_per_year) * w.annuity
    exposure = _shift_exposure_usd_per_year(pool, w, baseline)
    lines = {"capex_usd": capex, "nre_usd": nre_pv, "residual_usd": residual,
             **{line: getattr(costs, name) * w.annuity for name, line in YEARLY_COSTS.items()}}
    if exposure is None:
        exposure = np.zeros_like(capex)
    else:
        lines["workload_shift_usd"] = exposure * _shift_pv_factor(w, costs)
    return (PoolPresentValues(pv_units_bought=units, shift_exposure_usd_per_year=exposure),
            PoolLinePVs(lines, capex + nre_pv + residual + opex))


def link_costs(option: Option, size: OptionSizing, decode: PoolCosts | None, w: _Workload) -> LinkCosts:
    """The KV link's purchase and running cost, its PV and its power (zeros when colocated).

    Ports are bought with the decode devices (same life, no residual value).
    """
    if not option.disaggregated:
        zero = np.zeros_like(size.link_ports)
        return LinkCosts(port_capex_usd=zero, usd_per_year=zero)
    link = option.link
    port_w = size.link_ports * w.get(link_param(link, "port_power_w"))
    purchases, _ = finance.hardware_pv_factors(w.rate, decode.life_years, w.horizon, 0.0)
    port_capex = size.link_ports * w.get(link_param(link, "port_cost_usd"))
    yearly = power.running_cost_usd_per_year(port_w, w.get("economics.pue"), w.get("economics.electricity_usd_per_kwh"),
                                             w.get("economics.facility_usd_per_kw_month"))
    return LinkCosts(port_capex_usd=port_capex, usd_per_year=yearly, pv_usd=port_capex * purchases + yearly * w.annuity,
                     power_w=port_w)


def accounting_cost_usd_per_year(pools: Mapping[str, PoolResult], links: LinkCosts, link_life_years):
    """Straight-line depreciation of (price less residual value, plus NRE share) over the life, plus the
    yearly running costs (:data:`~tco.core.outputs.YEARLY_COSTS`) [USD/yr].

    The KV-link ports depreciate over the decode devices' life (``link_life_years``; None when colocated).
    """
    terms = []
    for p in pools.values():
        c = p.costs
        depreciable = c.unit_hardware_usd * (1.0 - c.residual_value_fraction) + c.unit_nre_usd
        terms += [p.sizing.devices * depreciable / c.life_years, *(getattr(c, name) for name in YEARLY_COSTS)]
    if link_life_years is not None:
        terms += [links.port_capex_usd / link_life_years, links.usd_per_year]
    return _total(terms)


def _total(terms):
    """``t1 + t2 + ...`` left to right, skipping terms that are the number 0 (absent lines) [unit of the terms]."""
    present = [t for t in terms if not (isinstance(t, float) and t == 0.0)]
    if not present:
        return 0.0
    total = present[0]
    for term in present[1:]:
        total = total + term
    return total


def evaluate_option(structure: Structure, option: Option, w: _Workload, values: Mapping[str, object],
                    baseline: OptionResult | None) -> OptionResult:
    """One option: its pools step by step, then the option's totals (broadcast to one shape)."""
    perf, sizes, size = serve_option(option, w)
    pools, line_pvs = {}, {}
    for pool in option.pools:
        costs = pool_costs(pool, sizes[pool.role], w, values)
        present, line_pvs[pool.role] = pool_present_values(pool, sizes[pool.role], costs, w, baseline)
        pools[pool.role] = PoolResult(pool.role, pool.device, perf[pool.role], sizes[pool.role], costs, present)
    decode = pools["decode"].costs if option.disaggregated else None
    links = link_costs(option, size, decode, w)
    lines = {line: _total([p.lines.get(line, 0.0) for p in line_pvs.values()]) for line in CASH_FLOW_LINES}
    lines["links_usd"] = links.pv_usd
    pv_cost = _total([lines[line] for line in CASH_FLOW_LINES])
    pv_tokens = w.output_tokens_per_year * w.annuity
    power_w = _total([*(p.costs.power_w for p in pools.values()), links.power_w])
    if option.disaggregated:
        pre, dec = line_pvs["prefill"].own_usd, line_pvs["decode"].own_usd
        prefill_share = pre / (pre + dec)
    else:
        prefill_share = size.prefill_time_share
    code = (np.where(size.tpot_met | ~size.fits, 0, TPOT_MISSED) + np.where(size.ttft_met | ~size.fits, 0, TTFT_MISSED)
            + np.where(w.prompt + w.output <= w.context_max, 0, CONTEXT_TOO_LONG) + np.where(size.fits, 0, NO_FIT))
    tokens_per_s = w.mean_rps * w.output
    return OptionResult(
        name=option.name, pools=pools, links=links,
        lcot_usd_per_mtok=finance.levelized_cost_usd_per_mtok(pv_cost, pv_tokens),
        lcot_usd_per_mtok_all_tokens=finance.levelized_cost_usd_per_mtok(pv_cost, pv_tokens * (w.prompt + w.output) / w.output),
        pv_cost_usd=pv_cost, pv_tokens=pv_tokens, **{"pv_" + line: lines[line] for line in CASH_FLOW_LINES},
        devices=_total([p.sizing.devices for p in pools.values()]), ttft_s=size.ttft_s, tpot_s=size.tpot_s,
        queue_wait_s=size.queue_wait_s, batch=size.batch,
        spilled_bytes=size.spilled_bytes, tokens_per_joule=tokens_per_s / power_w, tokens_per_s=tokens_per_s,
        power_w=power_w, kv_transfer_s=size.kv_transfer_s, link_ports=size.link_ports,
        feasible=(code == 0).astype(float), infeasible_code=code.astype(float), prefill_cost_share=prefill_share,
        accounting_cost_usd_per_year=accounting_cost_usd_per_year(pools, links, decode.life_years if decode else None),
    ).broadcast()


def evaluate(structure: Structure, values: Mapping[str, object]) -> dict[str, OptionResult]:
    """Evaluate every option; returns ``{option name: OptionResult}``.

    The baseline is evaluated first: specialized pools of the other options charge the
    work they lose to workload shifts at the baseline's levelized cost.
    """
    w = _Workload(structure, values)
    base_option = structure.option(structure.baseline)
    base = evaluate_option(structure, base_option, w, values, None)
    return {option.name: base if option is base_option else evaluate_option(structure, option, w, values, base)
            for option in structure.options}
