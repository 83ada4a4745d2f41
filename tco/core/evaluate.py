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

from . import finance, lifecycle, llm, nre, power, roofline, sizing
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
INFEASIBLE_REASONS = {
    TPOT_MISSED: "the time-per-output-token target is missed even at batch 1",
    TTFT_MISSED: "the time-to-first-token target is missed",
    CONTEXT_TOO_LONG: "prompt + output exceed the model's context window",
}

#: names of the ``*_bound`` codes
BOUND_NAMES = ("bandwidth", "compute", "interconnect")


def bound_code(memory_s, compute_s, sync_s):
    """Which term dominates a step: 0 memory bandwidth, 1 compute, 2 interconnect (sync)."""
    return np.argmax(np.stack(np.broadcast_arrays(memory_s, compute_s, sync_s)), axis=0).astype(float)


class _Workload:
    """Workload, model and economics terms shared by every option."""

    def __init__(self, structure: Structure, values: Mapping[str, object]):
        def get(name):
            return np.asarray(values[name], dtype=float)

        self.get = get
        m = structure.model
        self.prompt = get("workload.prompt_tokens")
        self.output = get("workload.output_tokens")
        self.mean_rps = get("workload.requests_per_s")
        self.peak_rps = self.mean_rps * get("workload.peak_to_mean")
        self.ttft_target = get("workload.ttft_target_s")
        self.tpot_target = get("workload.tpot_target_s")
        self.max_batch = get("workload.max_batch")
        self.half_life = get("workload.half_life_years")
        weight_bits = get("workload.weight_bits")
        self.weight_bytes_per_param = weight_bits / 8.0
        self.compute_bits = get("workload.compute_bits")
        kv_bits = get("workload.kv_bits")
        self.params_total = get(model_param(m, "params_total"))
        self.params_active = get(model_param(m, "params_active"))
        self.layers = get(model_param(m, "layers"))
        self.attention_dim = get(model_param(m, "attention_dim"))
        self.hidden = get(model_param(m, "hidden_size"))
        self.experts = get(model_param(m, "experts_routed"))
        self.experts_per_token = get(model_param(m, "experts_per_token"))
        self.context_max = get(model_param(m, "context_max_tokens"))
        latent = model_param(m, "kv_elements_per_token")
        if latent in values:
            self.kv_per_token = llm.latent_kv_bytes_per_token(get(latent), kv_bits)
        else:
            self.kv_per_token = llm.kv_bytes_per_token(
                self.layers, get(model_param(m, "kv_heads")), get(model_param(m, "head_dim")), kv_bits)
        self.stored_weight_bytes = llm.weight_bytes(self.params_total, weight_bits)
        self.rate = get("economics.discount_rate")
        self.horizon = get("economics.horizon_years")
        self.annuity = finance.annuity_factor(self.rate, self.horizon)
        self.output_tokens_per_year = self.mean_rps * self.output * sizing.SECONDS_PER_YEAR
        self.whole = structure.whole_devices

    @cached_property
    def yearly_discount_factors(self) -> list[np.ndarray]:
        """``(1+r)^-y`` for the years ``1..max horizon``, computed once per evaluation [-]."""
        return [finance.discount_factor(self.rate, year) for year in range(1, int(np.max(self.horizon)) + 1)]

    def weights_read_bytes(self, tokens):
        """Weight bytes read when ``tokens`` tokens pass through the model in one step."""
        params = llm.weights_read_per_step_params(
            tokens, self.params_total, self.params_active, self.experts, self.experts_per_token)
        return params * self.weight_bytes_per_param


def _peak_flops(get, device, compute_bits):
    """Peak FLOP/s at the compute width: 4-bit falls back to 8-bit where absent."""
    f16 = get(device_param(device, "peak_flops_16bit"))
    f8 = get(device_param(device, "peak_flops_8bit"))
    f4 = get(device_param(device, "peak_flops_4bit"))
    return np.where(compute_bits <= 4, f4, np.where(compute_bits <= 8, f8, f16))


def pool_performance(option: Option, pool: Pool, w: _Workload) -> PoolPerformance:
    """Replica size, prefill and decode performance of one pool (DESIGN.md section 3)."""
    get, d = w.get, pool.device
    usable = get(device_param(d, "memory_usable_fraction"))
    capacities = [get(tier_param(d, t, "capacity_bytes")) for t in pool.tiers]
    bandwidths = [get(tier_param(d, t, "bandwidth_bytes_per_s")) for t in pool.tiers]
    sequence_tokens = w.prompt + w.output if pool.serves_decode else w.prompt
    minimum = get(pool_param(option.name, pool.role, "devices_per_replica")) if pool.has_min_devices else 1.0
    n = roofline.replica_devices(w.stored_weight_bytes + sequence_tokens * w.kv_per_token,
                                 sum(capacities) * usable, minimum)
    efficiency_bw = get(device_param(d, "bandwidth_efficiency"))
    caps = [c * usable * n for c in capacities]
    bws = [b * efficiency_bw * n for b in bandwidths]
    peak = _peak_flops(get, d, w.compute_bits) * get(device_param(d, "compute_efficiency"))
    s0 = roofline.sync_fixed_time_s(w.layers, n, get(device_param(d, "sync_latency_s")))
    s1 = roofline.sync_time_per_token_s(w.layers, n, w.hidden, get(device_param(d, "chip_to_chip_bandwidth_bytes_per_s")))
    out = PoolPerformance(devices_per_replica=n)
    if pool.serves_prefill:
        flops = w.prompt * (llm.dense_flops_per_token(w.params_active)
                            + llm.prefill_attention_flops_per_token(w.layers, w.attention_dim, w.prompt))
        t_compute = flops / (n * peak)
        t_memory = roofline.memory_read_time_s(w.weights_read_bytes(w.prompt) + w.prompt * w.kv_per_token, caps, bws)
        prefill_s = np.maximum(t_compute, t_memory) + s0 + s1 * w.prompt
        out.prefill_s, out.prefill_tokens_per_s = prefill_s, w.prompt / prefill_s
        out.prefill_bound = bound_code(t_memory, t_compute, s0 + s1 * w.prompt)
    if pool.serves_decode:
        context = w.prompt + 0.5 * w.output
        kv_step = context * w.kv_per_token
        per_token_compute_s = (llm.dense_flops_per_token(w.params_active)
                               + llm.decode_attention_flops_per_token(w.layers, w.attention_dim, context)) / (n * peak)
        batch_compute = (w.tpot_target - s0) / (per_token_compute_s + s1)
        slot = llm.expert_params_per_routed_slot(w.params_total, w.params_active, w.experts, w.experts_per_token)
        routed_bytes = w.experts_per_token * slot * w.weight_bytes_per_param
        batch_sparse = roofline.max_tokens_within_time(
            w.params_active * w.weight_bytes_per_param - routed_bytes, routed_bytes + kv_step, s0, s1, w.tpot_target, caps, bws)
        batch_dense = roofline.max_tokens_within_time(w.stored_weight_bytes, kv_step, s0, s1, w.tpot_target, caps, bws)
        batch_memory = np.where(batch_sparse <= w.experts / w.experts_per_token, batch_sparse, batch_dense)
        batch_time = np.minimum(batch_compute, batch_memory)
        batch_capacity = (sum(caps) - w.stored_weight_bytes) / ((w.prompt + w.output) * w.kv_per_token)
        batch = np.maximum(np.floor(np.minimum(np.minimum(batch_time, batch_capacity), w.max_batch) + 1e-9), 1.0)
        step_bytes = w.weights_read_bytes(batch) + batch * kv_step
        t_memory = roofline.memory_read_time_s(step_bytes, caps, bws)
        t_compute = batch * per_token_compute_s
        step_s = np.maximum(t_memory, t_compute) + s0 + s1 * batch
        out.batch, out.step_s, out.decode_tokens_per_s = batch, step_s, batch / step_s
        out.decode_bound = bound_code(t_memory, t_compute, s0 + s1 * batch)
        out.spilled_bytes = roofline.spilled_bytes(step_bytes, caps[0])
        out.tpot_met = batch_time >= 1.0 - 1e-9
    return out


@dataclass
class OptionSizing:
    """Option-level terms of the sizing step: latency seen by a request and the KV link.

    ``prefill_time_share`` is the share of a colocated replica's time spent in prefill
    [fraction] (None when disaggregated: there the pools' costs split the option's cost).
    """

    ttft_s: np.ndarray
    tpot_s: np.ndarray
    batch: np.ndarray
    spilled_bytes: np.ndarray
    tpot_met: np.ndarray
    kv_transfer_s: np.ndarray
    link_ports: np.ndarray
    prefill_time_share: np.ndarray | None = None


def size_option(option: Option, perf: Mapping[str, PoolPerformance], w: _Workload) -> tuple[dict[str, PoolSizing], OptionSizing]:
    """Replicas at peak, utilization at mean, and the KV link (DESIGN.md section 4).

    Returns the sizing of each pool (by role) and the option-level terms.
    """
    if option.disaggregated:
        pre, dec = perf["prefill"], perf["decode"]
        pools = {role: _pool_sizing(w.peak_rps * load, w.mean_rps * load, capacity, p, w.whole)
                 for role, load, capacity, p in (("prefill", w.prompt, pre.prefill_tokens_per_s, pre),
                                                 ("decode", w.output, dec.decode_tokens_per_s, dec))}
        link_bw = w.get(link_param(option.link, "bandwidth_bytes_per_s"))
        bytes_per_request = sizing.kv_transfer_bytes_per_request(w.prompt, w.kv_per_token)
        kv_transfer_s = sizing.kv_transfer_time_s(bytes_per_request, link_bw, w.get(link_param(option.link, "latency_s")))
        ports = sizing.link_ports_needed(w.peak_rps, bytes_per_request, link_bw, w.whole)
        return pools, OptionSizing(ttft_s=pre.prefill_s + kv_transfer_s, tpot_s=dec.step_s, batch=dec.batch,
                                   spilled_bytes=dec.spilled_bytes, tpot_met=dec.tpot_met, kv_transfer_s=kv_transfer_s,
                                   link_ports=ports)
    pool = perf["colocated"]
    capacity = sizing.colocated_requests_per_s(w.prompt, w.output, pool.prefill_tokens_per_s, pool.decode_tokens_per_s)
    zero = np.zeros_like(capacity)
    return ({"colocated": _pool_sizing(w.peak_rps, w.mean_rps, capacity, pool, w.whole)},
            OptionSizing(ttft_s=pool.prefill_s, tpot_s=pool.step_s, batch=pool.batch, spilled_bytes=pool.spilled_bytes,
                         tpot_met=pool.tpot_met, kv_transfer_s=zero, link_ports=zero,
                         prefill_time_share=w.prompt / pool.prefill_tokens_per_s * capacity))


def _pool_sizing(peak_load, mean_load, capacity, perf: PoolPerformance, whole) -> PoolSizing:
    """Replicas for the peak load, utilization at the mean, devices (load and capacity share a unit)."""
    replicas = sizing.replicas_needed(peak_load, capacity, whole)
    return PoolSizing(replicas=replicas, utilization=sizing.utilization(mean_load, replicas, capacity),
                      devices=replicas * perf.devices_per_replica)


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
    perf = {pool.role: pool_performance(option, pool, w) for pool in option.pools}
    sizes, size = size_option(option, perf, w)
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
    code = (np.where(size.tpot_met, 0, TPOT_MISSED) + np.where(sizing.within_target(size.ttft_s, w.ttft_target), 0, TTFT_MISSED)
            + np.where(w.prompt + w.output <= w.context_max, 0, CONTEXT_TOO_LONG))
    tokens_per_s = w.mean_rps * w.output
    return OptionResult(
        name=option.name, pools=pools, links=links,
        lcot_usd_per_mtok=finance.levelized_cost_usd_per_mtok(pv_cost, pv_tokens),
        lcot_usd_per_mtok_all_tokens=finance.levelized_cost_usd_per_mtok(pv_cost, pv_tokens * (w.prompt + w.output) / w.output),
        pv_cost_usd=pv_cost, pv_tokens=pv_tokens, **{"pv_" + line: lines[line] for line in CASH_FLOW_LINES},
        devices=_total([p.sizing.devices for p in pools.values()]), ttft_s=size.ttft_s, tpot_s=size.tpot_s, batch=size.batch,
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
