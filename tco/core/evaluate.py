"""Evaluate every fleet option of a scenario from its named parameters, vectorized.

``evaluate(structure, values)`` takes the discrete :class:`~tco.core.structure.Structure`
and a mapping of dotted parameter names to floats or numpy arrays (broadcasting
together) and returns, per option, a flat mapping of output names to arrays. One call
evaluates one scenario or a million parameter draws; nothing here loops over scenarios.

The output names and units are listed in :data:`OPTION_OUTPUTS`; per-pool intermediates
are returned under ``"<role>.<name>"`` keys (see :data:`POOL_OUTPUTS`).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import finance, lifecycle, llm, nre, power, roofline, sizing
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

#: output name -> (unit, meaning); every option result carries these keys
OPTION_OUTPUTS: dict[str, tuple[str, str]] = {
    "lcot_usd_per_mtok": ("USD per million output tokens", "levelized cost: PV(costs) / PV(output tokens) x 1e6"),
    "lcot_usd_per_mtok_all_tokens": ("USD per million input+output tokens", "levelized cost over prompt and output tokens"),
    "pv_cost_usd": ("USD", "present value of all costs over the horizon, residual value credited"),
    "pv_tokens": ("output tokens", "present value (discounted count) of output tokens served"),
    "pv_capex_usd": ("USD", "PV of device and system purchases, replacements included, NRE excluded"),
    "pv_nre_usd": ("USD", "PV of the NRE share carried by the units this fleet buys"),
    "pv_energy_usd": ("USD", "PV of electricity for devices and hosts (PUE included)"),
    "pv_facility_usd": ("USD", "PV of data-hall cost per provisioned kW"),
    "pv_maintenance_usd": ("USD", "PV of maintenance, a share of hardware capex per year"),
    "pv_links_usd": ("USD", "PV of KV-link ports: purchase, energy and facility"),
    "pv_reauthoring_usd": ("USD", "PV of software re-authoring, one cost per workload shift"),
    "pv_workload_shift_usd": ("USD", "PV of shifted demand served on general hardware at the baseline's cost"),
    "pv_residual_usd": ("USD", "PV of value recovered at end of life or horizon (negative: a credit)"),
    "devices": ("devices", "devices in the fleet, all pools"),
    "ttft_s": ("s", "time to first token: prefill (+ KV transfer when disaggregated)"),
    "tpot_s": ("s", "time per output token: one decode step at the chosen batch"),
    "batch": ("sequences", "decode batch per replica: the largest that fits memory and meets the TPOT target"),
    "spilled_bytes": ("B", "bytes per decode step that did not fit the fastest memory tier"),
    "tokens_per_joule": ("output tokens/J", "output tokens per joule of IT power (devices, hosts, links) at mean load"),
    "tokens_per_s": ("output tokens/s", "mean output tokens per second served"),
    "power_w": ("W", "mean IT power of the fleet"),
    "kv_transfer_s": ("s", "KV-cache transfer time per request (0 when colocated)"),
    "link_ports": ("ports", "KV-link ports (0 when colocated)"),
    "feasible": ("bool", "1 when every latency target is met"),
    "infeasible_code": ("bitmask", "1: TPOT missed, 2: TTFT missed, 4: context too long"),
    "prefill_cost_share": ("0-1", "share of the option's cost due to prefill"),
    "accounting_cost_usd_per_year": ("USD/yr", "straight-line depreciation plus year-1 opex"),
}

#: per-pool output name -> (unit, meaning); keys appear as ``"<role>.<name>"``
POOL_OUTPUTS: dict[str, tuple[str, str]] = {
    "devices_per_replica": ("devices", "devices in one replica, from memory fit (or the given minimum)"),
    "replicas": ("replicas", "replicas sized at peak demand"),
    "devices": ("devices", "devices in the pool"),
    "utilization": ("0-1", "mean load / provisioned capacity"),
    "prefill_tokens_per_s": ("tokens/s", "prompt tokens per second per replica"),
    "decode_tokens_per_s": ("tokens/s", "output tokens per second per replica at the chosen batch"),
    "prefill_s": ("s", "prefill time of one prompt on one replica"),
    "step_s": ("s", "decode step time at the chosen batch"),
    "batch": ("sequences", "decode batch per replica"),
    "decode_bound": ("code", "what limits a decode step: 0 memory bandwidth, 1 compute, 2 interconnect"),
    "prefill_bound": ("code", "what limits prefill: 0 memory bandwidth, 1 compute, 2 interconnect"),
    "spilled_bytes": ("B", "decode-step bytes beyond the fastest tier"),
    "unit_hardware_usd": ("USD/device", "device price + system overhead"),
    "unit_nre_usd": ("USD/device", "NRE share per device (built devices only)"),
    "life_years": ("yr", "useful life of the pool's devices"),
    "residual_value_fraction": ("0-1", "value left at end of life"),
    "power_w": ("W", "mean IT power of the pool"),
    "energy_usd_per_year": ("USD/yr", "electricity of the pool"),
    "facility_usd_per_year": ("USD/yr", "data hall of the pool"),
    "maintenance_usd_per_year": ("USD/yr", "maintenance of the pool"),
    "reauthoring_usd_per_year": ("USD/yr", "re-authoring (specialized pools): cost per shift / half-life"),
    "shift_exposure_usd_per_year": ("USD/yr", "baseline cost of this pool's work, charged as (1 - served share)"),
    "half_life_offset_years": ("yr", "time to market before deployment (built devices)"),
    "residual_efficiency": ("0-1", "efficiency kept on shifted work"),
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


def _pool_performance(option: Option, pool: Pool, w: _Workload) -> dict[str, np.ndarray]:
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
    out = {"devices_per_replica": n}
    if pool.serves_prefill:
        flops = w.prompt * (llm.dense_flops_per_token(w.params_active)
                            + llm.prefill_attention_flops_per_token(w.layers, w.attention_dim, w.prompt))
        t_compute = flops / (n * peak)
        t_memory = roofline.memory_read_time_s(w.weights_read_bytes(w.prompt) + w.prompt * w.kv_per_token, caps, bws)
        prefill_s = np.maximum(t_compute, t_memory) + s0 + s1 * w.prompt
        out.update(prefill_s=prefill_s, prefill_tokens_per_s=w.prompt / prefill_s,
                   prefill_bound=bound_code(t_memory, t_compute, s0 + s1 * w.prompt))
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
        out.update(batch=batch, step_s=step_s, decode_tokens_per_s=batch / step_s,
                   decode_bound=bound_code(t_memory, t_compute, s0 + s1 * batch),
                   spilled_bytes=roofline.spilled_bytes(step_bytes, caps[0]),
                   tpot_met=(batch_time >= 1.0 - 1e-9))
    return out


def _size_pools(option: Option, perf: dict[str, dict], w: _Workload) -> dict[str, np.ndarray]:
    """Replicas at peak, utilization at mean, and the KV link (DESIGN.md section 4)."""
    out = {}
    if option.disaggregated:
        pre, dec = perf["prefill"], perf["decode"]
        for role, load, capacity in (("prefill", w.prompt, pre["prefill_tokens_per_s"]),
                                     ("decode", w.output, dec["decode_tokens_per_s"])):
            replicas = sizing.replicas_needed(w.peak_rps * load, capacity, w.whole)
            perf[role]["replicas"] = replicas
            perf[role]["utilization"] = sizing.utilization(w.mean_rps * load, replicas, capacity)
        link_bw = w.get(link_param(option.link, "bandwidth_bytes_per_s"))
        bytes_per_request = sizing.kv_transfer_bytes_per_request(w.prompt, w.kv_per_token)
        out["kv_transfer_s"] = sizing.kv_transfer_time_s(bytes_per_request, link_bw, w.get(link_param(option.link, "latency_s")))
        out["link_ports"] = sizing.link_ports_needed(w.peak_rps, bytes_per_request, link_bw, w.whole)
        out["ttft_s"] = pre["prefill_s"] + out["kv_transfer_s"]
        out["tpot_s"], out["batch"], out["spilled_bytes"] = dec["step_s"], dec["batch"], dec["spilled_bytes"]
        out["tpot_met"] = dec["tpot_met"]
        out["prefill_time_share"] = np.ones_like(out["ttft_s"])
    else:
        pool = perf["colocated"]
        capacity = sizing.colocated_requests_per_s(w.prompt, w.output, pool["prefill_tokens_per_s"], pool["decode_tokens_per_s"])
        pool["replicas"] = sizing.replicas_needed(w.peak_rps, capacity, w.whole)
        pool["utilization"] = sizing.utilization(w.mean_rps, pool["replicas"], capacity)
        zero = np.zeros_like(capacity)
        out.update({"links.port_capex_usd": zero, "links.usd_per_year": zero})
        out.update(kv_transfer_s=zero, link_ports=zero, ttft_s=pool["prefill_s"], tpot_s=pool["step_s"],
                   batch=pool["batch"], spilled_bytes=pool["spilled_bytes"], tpot_met=pool["tpot_met"],
                   prefill_time_share=w.prompt / pool["prefill_tokens_per_s"] * capacity)
    for pool_perf in perf.values():
        pool_perf["devices"] = pool_perf["replicas"] * pool_perf["devices_per_replica"]
    return out


def _pool_costs(structure: Structure, pool: Pool, p: dict, w: _Workload, values) -> None:
    """Yearly cost terms and per-unit capex of one pool, added to ``p`` in place."""
    get, d = w.get, pool.device
    price = get(device_param(d, "price_usd"))
    if pool.built and "program.die_area_mm2" in values:
        price = nre.good_die_cost_usd(get("program.die_area_mm2"), get("program.wafer_price_usd"),
                                      get("program.defect_density_per_cm2")) + get("program.package_memory_board_usd")
    p["unit_hardware_usd"] = price + get(device_param(d, "system_overhead_usd"))
    p["unit_nre_usd"] = (nre.nre_share_usd_per_unit(program_nre_usd(values), get("program.volume_units"))
                         if pool.built else np.zeros_like(price))
    p["life_years"] = get(device_param(d, "useful_life_years"))
    p["residual_value_fraction"] = get(device_param(d, "residual_value_fraction"))
    tdp, host = get(device_param(d, "tdp_w")), get(device_param(d, "host_power_w"))
    p["power_w"] = p["devices"] * power.device_power_w(get(device_param(d, "idle_power_w")), tdp, p["utilization"], host)
    p["energy_usd_per_year"] = power.energy_cost_usd_per_year(
        p["power_w"], get("economics.pue"), get("economics.electricity_usd_per_kwh"))
    p["facility_usd_per_year"] = power.facility_cost_usd_per_year(
        p["devices"] * (tdp + host), get("economics.facility_usd_per_kw_month"))
    p["maintenance_usd_per_year"] = get("economics.maintenance_fraction_per_year") * p["devices"] * p["unit_hardware_usd"]
    if pool.specialized:
        p["reauthoring_usd_per_year"] = get(device_param(d, "reauthoring_usd_per_shift")) / w.half_life
        p["residual_efficiency"] = get(device_param(d, "residual_efficiency"))
    else:
        p["reauthoring_usd_per_year"] = np.zeros_like(price)
        p["residual_efficiency"] = np.ones_like(price)
    p["half_life_offset_years"] = get("program.time_to_market_years") if pool.built else np.zeros_like(price)


def program_nre_usd(values: Mapping[str, object]):
    """Total NRE of the scenario's chip program: the sum of its ``program.nre.*`` parts [USD]."""
    return sum(np.asarray(v, float) for k, v in values.items() if k.startswith("program.nre."))


def _shift_pv_factor(w: _Workload, p: dict):
    """``sum_y (1 - served_y) (1+r)^-y`` over the horizon: PV weight of shifted work [yr]."""
    total = 0.0
    for year in range(1, int(np.max(w.horizon)) + 1):
        served = lifecycle.served_efficiency_in_year(year, w.half_life, p["residual_efficiency"], p["half_life_offset_years"])
        total = total + (year <= w.horizon + 1e-9) * (1.0 - served) * finance.discount_factor(w.rate, year)
    return total


def _evaluate_option(structure: Structure, option: Option, w: _Workload, values, baseline: dict | None) -> dict:
    perf = {pool.role: _pool_performance(option, pool, w) for pool in option.pools}
    out = _size_pools(option, perf, w)
    costs = {k: 0.0 for k in OPTION_OUTPUTS if k.startswith("pv_")}
    power_w = 0.0
    accounting = 0.0
    pool_pv = {}
    for pool in option.pools:
        p = perf[pool.role]
        _pool_costs(structure, pool, p, w, values)
        purchases, credits = finance.hardware_pv_factors(w.rate, p["life_years"], w.horizon, p["residual_value_fraction"])
        p["pv_units_bought"] = p["devices"] * purchases
        capex = p["pv_units_bought"] * p["unit_hardware_usd"]
        nre_pv = p["pv_units_bought"] * p["unit_nre_usd"]
        residual = -p["devices"] * p["unit_hardware_usd"] * credits
        opex = (p["energy_usd_per_year"] + p["facility_usd_per_year"] + p["maintenance_usd_per_year"]) * w.annuity
        if baseline is not None and pool.specialized:
            share = {"colocated": 1.0, "prefill": baseline["prefill_cost_share"],
                     "decode": 1.0 - baseline["prefill_cost_share"]}[pool.role]
            p["shift_exposure_usd_per_year"] = w.output_tokens_per_year * baseline["lcot_usd_per_mtok"] / 1e6 * share
            costs["pv_workload_shift_usd"] += p["shift_exposure_usd_per_year"] * _shift_pv_factor(w, p)
        else:
            p["shift_exposure_usd_per_year"] = np.zeros_like(capex)
        costs["pv_capex_usd"] = costs["pv_capex_usd"] + capex
        costs["pv_nre_usd"] = costs["pv_nre_usd"] + nre_pv
        costs["pv_residual_usd"] = costs["pv_residual_usd"] + residual
        costs["pv_energy_usd"] = costs["pv_energy_usd"] + p["energy_usd_per_year"] * w.annuity
        costs["pv_facility_usd"] = costs["pv_facility_usd"] + p["facility_usd_per_year"] * w.annuity
        costs["pv_maintenance_usd"] = costs["pv_maintenance_usd"] + p["maintenance_usd_per_year"] * w.annuity
        costs["pv_reauthoring_usd"] = costs["pv_reauthoring_usd"] + p["reauthoring_usd_per_year"] * w.annuity
        pool_pv[pool.role] = capex + nre_pv + residual + opex
        power_w = power_w + p["power_w"]
        depreciable = p["unit_hardware_usd"] * (1.0 - p["residual_value_fraction"]) + p["unit_nre_usd"]
        depreciation = p["devices"] * depreciable / p["life_years"]
        accounting = accounting + depreciation + p["energy_usd_per_year"] + p["facility_usd_per_year"] \
            + p["maintenance_usd_per_year"] + p["reauthoring_usd_per_year"]
    if option.disaggregated:
        link = option.link
        port_w = out["link_ports"] * w.get(link_param(link, "port_power_w"))
        decode = perf["decode"]
        purchases, _ = finance.hardware_pv_factors(w.rate, decode["life_years"], w.horizon, 0.0)
        port_capex = out["link_ports"] * w.get(link_param(link, "port_cost_usd"))
        link_yearly = power.energy_cost_usd_per_year(port_w, w.get("economics.pue"), w.get("economics.electricity_usd_per_kwh")) \
            + power.facility_cost_usd_per_year(port_w, w.get("economics.facility_usd_per_kw_month"))
        costs["pv_links_usd"] = port_capex * purchases + link_yearly * w.annuity
        out["links.port_capex_usd"], out["links.usd_per_year"] = port_capex, link_yearly
        power_w = power_w + port_w
        accounting = accounting + port_capex / decode["life_years"] + link_yearly
        prefill_share = pool_pv["prefill"] / (pool_pv["prefill"] + pool_pv["decode"])
    else:
        prefill_share = out.pop("prefill_time_share")
    out.pop("prefill_time_share", None)
    pv_cost = sum(costs.values())
    pv_tokens = w.output_tokens_per_year * w.annuity
    code = (np.where(out.pop("tpot_met"), 0, TPOT_MISSED) + np.where(out["ttft_s"] <= w.ttft_target * (1 + 1e-12), 0, TTFT_MISSED)
            + np.where(w.prompt + w.output <= w.context_max, 0, CONTEXT_TOO_LONG))
    tokens_per_s = w.mean_rps * w.output
    out.update(costs)
    out.update(
        pv_cost_usd=pv_cost, pv_tokens=pv_tokens,
        lcot_usd_per_mtok=finance.levelized_cost_usd_per_mtok(pv_cost, pv_tokens),
        lcot_usd_per_mtok_all_tokens=finance.levelized_cost_usd_per_mtok(pv_cost, pv_tokens * (w.prompt + w.output) / w.output),
        devices=sum(p["devices"] for p in perf.values()),
        tokens_per_s=tokens_per_s, power_w=power_w, tokens_per_joule=tokens_per_s / power_w,
        feasible=(code == 0).astype(float), infeasible_code=code.astype(float),
        prefill_cost_share=prefill_share, accounting_cost_usd_per_year=accounting,
    )
    for role, p in perf.items():
        for key, value in p.items():
            out[f"{role}.{key}"] = value
    shape = np.broadcast_shapes(*(np.shape(v) for v in out.values()))
    return {k: np.broadcast_to(np.asarray(v, float), shape) for k, v in out.items()}


def evaluate(structure: Structure, values: Mapping[str, object]) -> dict[str, dict[str, np.ndarray]]:
    """Evaluate every option; returns ``{option name: {output name: array}}``.

    The baseline is evaluated first: specialized pools of the other options charge the
    work they lose to workload shifts at the baseline's levelized cost.
    """
    w = _Workload(structure, values)
    base_option = structure.option(structure.baseline)
    base = _evaluate_option(structure, base_option, w, values, None)
    results = {}
    for option in structure.options:
        results[option.name] = base if option is base_option else _evaluate_option(structure, option, w, values, base)
    return results


def comparison(structure: Structure, results: Mapping[str, dict], values: Mapping[str, object]) -> dict[str, dict]:
    """Each challenger against the baseline: NPV, cost ratio, break-even volume, L/H, 2-for-2.

    ``npv_usd`` is the PV saved by choosing the challenger (positive: it pays). The
    lifecycle keys (``life_over_half_life``, ``effective_life_years``) appear for options
    with specialized devices, the NRE keys for options that use the built device.
    """
    base = results[structure.baseline]
    half_life = np.asarray(values["workload.half_life_years"], float)
    out = {}
    for option in structure.challengers:
        r = results[option.name]
        row = {
            "npv_usd": base["pv_cost_usd"] - r["pv_cost_usd"],
            "cost_ratio": r["lcot_usd_per_mtok"] / base["lcot_usd_per_mtok"],
        }
        lives = [np.asarray(values[device_param(p.device, "useful_life_years")], float) for p in option.pools if p.specialized]
        if lives:  # the half-life applies to specialized devices only
            life = np.maximum.reduce(lives)
            row["life_over_half_life"] = life / half_life
            row["effective_life_years"] = lifecycle.effective_life_years(life, half_life)
        built = [p for p in option.pools if p.built]
        if built:
            nre_usd = program_nre_usd(values)
            units = sum(r[f"{p.role}.pv_units_bought"] for p in built)
            row["breakeven_volume_units"] = nre.breakeven_volume_units(
                nre_usd, units, r["pv_cost_usd"] - r["pv_nre_usd"], base["pv_cost_usd"])
            improvement = base["pv_cost_usd"] / (r["pv_cost_usd"] - r["pv_nre_usd"])
            rule, tco_over_nre = nre.two_for_two(base["pv_cost_usd"] / finance.annuity_factor(
                np.asarray(values["economics.discount_rate"], float), np.asarray(values["economics.horizon_years"], float)),
                nre_usd, improvement)
            row.update(nre_usd=nre_usd + 0.0 * improvement, two_for_two_holds=rule.astype(float),
                       baseline_tco_over_nre=tco_over_nre, tco_improvement=improvement)
        shape = np.broadcast_shapes(*(np.shape(v) for v in row.values()))
        out[option.name] = {k: np.broadcast_to(np.asarray(v, float), shape) for k, v in row.items()}
    return out
