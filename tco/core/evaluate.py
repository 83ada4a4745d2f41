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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tco.core import allocator
from tco.core.draws import maximum, where_mixed
from tco.core.money import finance, nodes, nre, timeline
from tco.core.money import plan as money
from tco.core.money.generations import RoadmapCosts, generation_path
from tco.core.money.plan import MoneyPlan, ShiftExposure
from tco.core.money.purchases import GenerationPath, PoolPlan, pick
from tco.core.money.timeline import DemandPath, ProgramSchedule
from tco.core.names import demand_year_param, device_param, link_param, model_param, pool_param, roadmap_param, tier_param
from tco.core.outputs import (
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
from tco.core.serving import llm, power, sizing
from tco.core.serving.capacity import PERFORMANCE_FIELDS
from tco.core.serving.cycles import cycle_model
from tco.core.serving.search import size_pool
from tco.core.serving.shapes import Demand, DeviceShape, ModelShape
from tco.core.structure import Option, Pool, Structure

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

allocator.keep_freed_memory()  # temporaries reused across evaluations, not re-faulted (tco.core.allocator)

#: names of the ``*_bound`` codes (:meth:`tco.core.serving.steps.CycleModel.bound_and_spill`)
BOUND_NAMES = ("bandwidth", "compute", "interconnect")


_NUMBERS = (float, int)


class _Workload:
    """Workload, model, serving and economics terms shared by every option."""

    def __init__(self, structure: Structure, values: Mapping[str, object]):
        def get(name):
            value = values[name]
            # a number as a numpy scalar: arithmetic on it costs ~60 ns, on a 0-d array ~320 ns (one evaluation at
            # one draw does a few thousand operations); arrays over draws as float arrays
            return np.float64(value) if type(value) in _NUMBERS else np.asarray(value, dtype=float)

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
        slot_params = llm.expert_params_per_routed_slot(params_total, params_active, experts, per_token)
        slot_bytes = slot_params * self.weight_bytes_per_param
        self.model = ModelShape(
            weight_bytes=self.stored_weight_bytes,
            # dense: the active weights every step; MoE: shared weights + k routed experts per token
            read_fixed_bytes=(maximum(params_active * self.weight_bytes_per_param - per_token * slot_bytes, 0.0)
                              if structure.moe else params_active * self.weight_bytes_per_param),
            read_per_token_bytes=per_token * slot_bytes if structure.moe else 0.0 * slot_bytes,
            weight_flops_per_token=llm.dense_flops_per_token(params_active),
            routed_flops_per_token=llm.dense_flops_per_token(per_token * slot_params) if structure.moe else 0.0,
            kv_bytes_per_token=self.kv_per_token, layers=layers, attention_dim=get(model_param(m, "attention_dim")),
            hidden_size=get(model_param(m, "hidden_size")), experts_per_token=per_token,
            collective_element_bytes=get("serving.collective_bits") / 8.0, kv_heads=kv_heads, moe=structure.moe)
        self.demand = Demand(
            prompt_tokens=self.prompt, output_tokens=self.output, peak_requests_per_s=self.peak_rps,
            mean_requests_per_s=self.mean_rps, ttft_target_s=self.ttft_target, tpot_target_s=self.tpot_target,
            percentile=get("serving.percentile"), max_batch_sequences=get("workload.max_batch"),
            token_budget_tokens=get("serving.token_budget_tokens"),
            memory_compute_overlap=get("serving.memory_compute_overlap"), phase_overlap=get("serving.phase_overlap"),
            comm_overlap=get("serving.comm_overlap"), policy=structure.policy,
            prompt_scv=get("workload.prompt_tokens_scv"), prefill_queue=structure.prefill_queue)
        self.rate = get("economics.discount_rate")
        self.horizon = get("economics.horizon_years")
        self.output_tokens_per_year = self.mean_rps * self.output * sizing.SECONDS_PER_YEAR
        self.demand_path = DemandPath(self.rate, get("workload.demand_growth_per_year"),
                                      tuple(get(demand_year_param(y)) for y in range(1, structure.demand_series_years + 1)),
                                      int(np.max(self.horizon)))
        self.whole = structure.whole_devices
        self._device_hour_usd = {}

    def device_hour_usd(self, pool: Pool):
        """:func:`device_hour_usd` of the pool's device, computed once per device for the evaluation [USD/device-h]."""
        key = (pool.device, pool.built)
        if key not in self._device_hour_usd:
            self._device_hour_usd[key] = device_hour_usd(pool, self)
        return self._device_hour_usd[key]


def _peak_flops(get, device, compute_bits):
    """Peak FLOP/s at the compute width: 4-bit falls back to 8-bit where absent."""
    f16 = get(device_param(device, "peak_flops_16bit"))
    f8 = get(device_param(device, "peak_flops_8bit"))
    f4 = get(device_param(device, "peak_flops_4bit"))
    return where_mixed(compute_bits <= 4, f4, where_mixed(compute_bits <= 8, f8, f16))


def device_shape(option: Option, pool: Pool, w: _Workload) -> DeviceShape:
    """The pool's device as the serving model needs it.

    Parameters
    ----------
    option : Option
        The option the pool belongs to.
    pool : Pool
        The pool (its device and memory tiers).
    w : _Workload
        The evaluation's parameter reader and workload.

    Returns
    -------
    DeviceShape
        Tier capacities [B] and bandwidths [B/s], usable memory share [-], efficiencies [-],
        achievable FLOP/s [FLOP/s], link bandwidths [B/s] and latencies [s] of the device.
    """
    get, d = w.get, pool.device
    return DeviceShape(
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
        cycle_overhead_s=get(overhead) if (overhead := device_param(d, "cycle_overhead_s")) in w.names else 0.0,
        collective_efficiency=get(eff) if (eff := device_param(d, "collective_efficiency")) in w.names else 1.0,
        expert_compute_efficiency=get(x) if (x := device_param(d, "expert_compute_efficiency")) in w.names else 1.0,
        streamed_prefill=pool.streamed_prefill)


def unit_price_usd(pool: Pool, w: _Workload):
    """Price of one device: the catalog's, or for a built chip with a die its unit cost.

    Good die + package, memory and board (:func:`tco.core.money.nre.good_die_cost_usd`).

    Parameters
    ----------
    pool : Pool
        The pool (its device, whether built).
    w : _Workload
        The evaluation's parameter reader.

    Returns
    -------
    ndarray [USD]
        Unit price without NRE.

    References
    ----------
    [hennessy-patterson] the cost of a good die, section 1.6.
    """
    get = w.get
    if pool.built and "program.die_area_mm2" in w.names:
        return nre.good_die_cost_usd(get("program.die_area_mm2"), get("program.wafer_price_usd"),
                                     get("program.defect_density_per_cm2")) + get("program.package_memory_board_usd")
    return get(device_param(pool.device, "price_usd"))


def device_hour_usd(pool: Pool, w: _Workload):
    """Cost of one device-hour at full power, which ranks candidate shapes.

    Capital recovery of the unit price (:func:`unit_price_usd`) + system overhead over the device's life, plus electricity and
    data hall at TDP + host power: ``(CRF(price + overhead) + (TDP + host) x running cost per W-yr) / 8760``.
    The shape with the fewest device-hours of this price wins; the full cost model then
    prices the chosen fleet.

    Parameters
    ----------
    pool : Pool
        The pool (its device).
    w : _Workload
        The evaluation's parameter reader.

    Returns
    -------
    ndarray [USD/device-h]
        Cost of a device-hour at full power.
    """
    get, d = w.get, pool.device
    capex = unit_price_usd(pool, w) + get(device_param(d, "system_overhead_usd"))
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
    """The option's pools sized by :func:`tco.core.serving.search.size_pool`, plus the KV transfer time and link ports."""
    kv_transfer_s = link_ports = None
    extra = 0.0
    if option.disaggregated:
        link_bw = w.get(link_param(option.link, "bandwidth_bytes_per_s"))
        bytes_per_request = sizing.kv_transfer_bytes_per_request(w.prompt, w.kv_per_token)
        kv_transfer_s = sizing.kv_transfer_time_s(bytes_per_request, link_bw, w.get(link_param(option.link, "latency_s")))
        link_ports = sizing.link_ports_needed(w.peak_rps, bytes_per_request, link_bw, w.whole)
        extra = kv_transfer_s
    served = {pool.role: size_pool(pool.role, pool.shapes, w.model, device_shape(option, pool, w), w.demand,
                                   w.whole, extra if pool.role == "prefill" else 0.0, w.device_hour_usd(pool))
              for pool in option.pools}
    return served, kv_transfer_s, link_ports


def serving_pools(structure: Structure, values: Mapping[str, object], option_name: str):
    """The raw serving results of one option's pools and the demand they were sized for.

    For readers that need more than the typed outputs (the validation suite re-reads a
    measured system at its own size).

    Parameters
    ----------
    structure : Structure
        The scenario's options.
    values : Mapping[str, object]
        The named parameter values.
    option_name : str
        The option to serve.

    Returns
    -------
    served : dict[str, PoolServing]
        Each pool's serving result by role.
    demand : Demand
        The workload the pools were sized for (rates [req/s], lengths [tokens], targets [s]).
    kv_transfer_s : ndarray [s]
        Time to move one request's KV between the pools (0 when colocated).
    """
    w = _Workload(structure, values)
    served, kv_transfer_s, _ = _serve(structure.option(option_name), w)
    return served, w.demand, kv_transfer_s


def chosen_cycle_models(structure: Structure, values: Mapping[str, object], option_name: str) -> dict:
    """The cycle model of each pool's chosen replica shape, for one draw (scalar values).

    The discrete-event simulation of the tests runs a bundled scenario's fleet with these.

    Parameters
    ----------
    structure : Structure
        The scenario's options.
    values : Mapping[str, object]
        The named parameter values, one draw (scalars).
    option_name : str
        The option to serve.

    Returns
    -------
    dict
        ``{role: CycleModel}``: each pool's cycle time [s] as a function of its batch.
    """
    w = _Workload(structure, values)
    option = structure.option(option_name)
    served, _, _ = _serve(option, w)
    return {pool.role: cycle_model(pool.shapes[int(np.asarray(served[pool.role].figures.shape_index).reshape(-1)[0])],
                                   w.model, device_shape(option, pool, w), w.demand, pool.role)
            for pool in option.pools}


def serve_option(option: Option, w: _Workload) -> tuple[dict[str, PoolPerformance], dict[str, PoolSizing], OptionSizing]:
    """Each pool sized at peak under load with its replica shape searched, utilization at mean load, and the KV link.

    :func:`tco.core.serving.search.size_pool` (DESIGN.md sections 4 and 8). A disaggregated option's
    prefill pool carries the KV transfer in its TTFT budget.

    Parameters
    ----------
    option : Option
        The option's pools and link.
    w : _Workload
        The evaluation's parameter reader and workload.

    Returns
    -------
    performance : dict[str, PoolPerformance]
        Each pool's rates [tokens/s] and latencies [s] by role.
    sizes : dict[str, PoolSizing]
        Each pool's replicas [replicas], devices [devices] and utilization [-] by role.
    sizing : OptionSizing
        The option's latencies at peak [s], batch [sequences], KV transfer time [s] and link ports [ports].
    """
    served, kv_transfer_s, link_ports = _serve(option, w)
    perf, sizes = {}, {}
    for role, pool in served.items():
        v = pool.figures
        perf[role] = PoolPerformance(**{name: getattr(v, name) for name in PERFORMANCE_FIELDS[role]})
        replicas = v.replicas
        sizes[role] = PoolSizing(replicas=replicas, peak_replicas=replicas,
                                 utilization=sizing.utilization(w.mean_rps, replicas, v.capacity_rps),
                                 devices=replicas * v.devices_per_replica)
    out = (served["decode"] if option.disaggregated else served["colocated"]).figures
    first = served["prefill"].figures if option.disaggregated else out
    zero = 0.0 * out.tpot_s
    fits = sum(p.figures.fits for p in served.values()) >= len(served) - 0.5
    tpot_met = (out.tpot_ok > 0.5) & fits
    ttft_met = (first.ttft_ok > 0.5) & fits
    wait = first.queue_wait_s + (out.queue_wait_s if option.disaggregated else 0.0)
    return perf, sizes, OptionSizing(
        ttft_s=first.ttft_s, tpot_s=out.tpot_s, queue_wait_s=wait, batch=out.batch,
        spilled_bytes=out.spilled_bytes, tpot_met=tpot_met, ttft_met=ttft_met, fits=fits,
        kv_transfer_s=zero if kv_transfer_s is None else kv_transfer_s + zero,
        link_ports=zero if link_ports is None else link_ports + zero,
        prefill_time_share=None if option.disaggregated else out.interference_share)


def pool_costs(pool: Pool, size: PoolSizing, w: _Workload) -> PoolCosts:
    """Per-device capex and year-1 cost terms of one pool (DESIGN.md section 5).

    The NRE share per unit of a built pool is filled in once the fleet's units are known
    (:func:`evaluate_option`).

    Parameters
    ----------
    pool : Pool
        The pool (its device).
    size : PoolSizing
        The pool's devices [devices] and utilization [-].
    w : _Workload
        The evaluation's parameter reader.

    Returns
    -------
    PoolCosts
        Unit prices [USD], life [yr], residual share [-], power [W] and the yearly running
        costs [USD/yr] of the pool.

    References
    ----------
    [barroso-datacenter-computer] device power linear in utilization.
    """
    get, d = w.get, pool.device
    price = unit_price_usd(pool, w)
    unit_hardware = price + get(device_param(d, "system_overhead_usd"))
    tdp, host = get(device_param(d, "tdp_w")), get(device_param(d, "host_power_w"))
    power_w = size.devices * power.device_power_w(get(device_param(d, "idle_power_w")), tdp, size.utilization, host)
    zero = np.zeros_like(price)
    return PoolCosts(
        unit_price_usd=price,
        unit_hardware_usd=unit_hardware,
        unit_nre_usd=zero,
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
    )


def _shift_exposure_usd_per_year(pool: Pool, w: _Workload, baseline: OptionResult | None):
    """Baseline cost of the work a specialized pool does in year 1 [USD/yr]; None for general pools and the baseline itself.

    The pool's share of the baseline's cost: all of it when colocated, the baseline's
    prefill (decode) cost share for a prefill (decode) pool.
    """
    if baseline is None or not pool.specialized:
        return None
    return w.output_tokens_per_year * baseline.lcot_usd_per_mtok / 1e6 * work_share(pool.role, baseline)


def work_share(role: str, baseline: OptionResult):
    """Share of the baseline's cost that a pool of this role does.

    All of it colocated, the baseline's prefill (decode) cost share for a prefill (decode) pool.

    Parameters
    ----------
    role : str
        ``colocated``, ``prefill`` or ``decode``.
    baseline : OptionResult
        The baseline's result (its ``prefill_cost_share``).

    Returns
    -------
    ndarray [-]
        Work share, 0-1.
    """
    return {"colocated": 1.0, "prefill": baseline.prefill_cost_share, "decode": 1.0 - baseline.prefill_cost_share}[role]


def link_costs(option: Option, size: OptionSizing, w: _Workload) -> LinkCosts:
    """The KV link's purchase and year-1 running cost and its power (zeros when colocated).

    Parameters
    ----------
    option : Option
        The option (its link, whether disaggregated).
    size : OptionSizing
        The option's link ports [ports].
    w : _Workload
        The evaluation's parameter reader.

    Returns
    -------
    LinkCosts
        Port capex [USD], yearly running cost [USD/yr] and power [W] of the link.
    """
    if not option.disaggregated:
        zero = np.zeros_like(size.link_ports)
        return LinkCosts(port_capex_usd=zero, usd_per_year=zero)
    link = option.link
    port_w = size.link_ports * w.get(link_param(link, "port_power_w"))
    yearly = power.running_cost_usd_per_year(port_w, w.get("economics.pue"), w.get("economics.electricity_usd_per_kwh"),
                                             w.get("economics.facility_usd_per_kw_month"))
    return LinkCosts(port_capex_usd=size.link_ports * w.get(link_param(link, "port_cost_usd")), usd_per_year=yearly,
                     power_w=port_w)


@dataclass
class Fleet:
    """One option's fleet for year 1's demand on one set of devices: each pool's performance,
    sizing and cost terms, the option-level sizing and the KV link."""

    option: Option
    performance: dict[str, PoolPerformance]
    sizes: dict[str, PoolSizing]
    size: OptionSizing
    costs: dict[str, PoolCosts]
    links: LinkCosts


def option_fleet(option: Option, w: _Workload) -> Fleet:
    """Performance, sizing and cost terms of an option's fleet at year 1's demand.

    Parameters
    ----------
    option : Option
        The option to build a fleet for.
    w : _Workload
        The evaluation's parameter reader and workload.

    Returns
    -------
    Fleet
        Pools' performance, sizing and costs, and the link's, at year 1's demand.
    """
    performance, sizes, size = serve_option(option, w)
    costs = {pool.role: pool_costs(pool, sizes[pool.role], w) for pool in option.pools}
    return Fleet(option, performance, sizes, size, costs, link_costs(option, size, w))


#: yearly pool costs that are not paid per device held: energy (split below into idle and load parts) and
#: re-authoring (per workload shift, the option's; :class:`tco.core.money.plan.MoneyPlan`)
NOT_PER_DEVICE = ("energy_usd_per_year", "reauthoring_usd_per_year")


def _pool_plan(fleets: Sequence[Fleet], role: str, w: _Workload) -> PoolPlan:
    """One pool's purchase plan across generations (:class:`~tco.core.money.purchases.PoolPlan`).

    Per device held: energy at idle plus host power, and every other yearly running cost of
    the pool (:data:`~tco.core.outputs.YEARLY_COSTS`: data hall, maintenance, ...) per device of
    year 1's fleet; per busy replica: energy of ``(TDP - idle)`` over its devices (the load term
    of :func:`tco.core.serving.power.device_power_w`).
    """
    get = w.get
    energy_w_year = power.energy_cost_usd_per_year(1.0, get("economics.pue"), get("economics.electricity_usd_per_kwh"))
    per_device = {line: [] for name, line in YEARLY_COSTS.items() if name not in NOT_PER_DEVICE}
    terms, energy, busy = [], [], []
    for fleet in fleets:
        d = fleet.option.pool(role).device
        size, cost, n = fleet.sizes[role], fleet.costs[role], fleet.performance[role].devices_per_replica
        idle, tdp, host = (get(device_param(d, k)) for k in ("idle_power_w", "tdp_w", "host_power_w"))
        terms.append((size.peak_replicas, size.utilization * size.replicas, n, cost.unit_hardware_usd, cost.life_years,
                      cost.residual_value_fraction))
        energy.append((idle + host) * energy_w_year)
        busy.append((tdp - idle) * n * energy_w_year)
        for name, line in YEARLY_COSTS.items():
            if name not in NOT_PER_DEVICE:
                per_device[line].append(getattr(cost, name) / size.devices)
    z, x, n, unit, life, rv = (tuple(t) for t in zip(*terms, strict=True))
    return PoolPlan(z, x, n, unit, life, rv, {"energy_usd": tuple(energy), **{k: tuple(v) for k, v in per_device.items()}},
                    {"energy_usd": tuple(busy)}, whole=w.whole)


def _link_plan(fleets: Sequence[Fleet], w: _Workload) -> PoolPlan:
    """The KV-link ports as a pool: sized on the peak KV traffic, bought with the decode devices'
    life, no residual value, running cost per port (its energy and data hall)."""
    get, link = w.get, fleets[0].option.link
    bandwidth = get(link_param(link, "bandwidth_bytes_per_s"))
    exact = w.peak_rps * sizing.kv_transfer_bytes_per_request(w.prompt, w.kv_per_token) / bandwidth
    running = power.running_cost_usd_per_year(get(link_param(link, "port_power_w")), get("economics.pue"),
                                              get("economics.electricity_usd_per_kwh"),
                                              get("economics.facility_usd_per_kw_month"))
    count = len(fleets)
    zero = np.zeros_like(exact)
    return PoolPlan((exact,) * count, (zero,) * count, (1.0,) * count, (get(link_param(link, "port_cost_usd")),) * count,
                    tuple(f.costs["decode"].life_years for f in fleets), (0.0,) * count, {"running_usd": (running,) * count},
                    whole=w.whole)


def _plans(fleets: Sequence[Fleet], w: _Workload) -> dict[str, PoolPlan]:
    option = fleets[0].option
    plans = {pool.role: _pool_plan(fleets, pool.role, w) for pool in option.pools}
    if option.disaggregated:
        plans["links"] = _link_plan(fleets, w)
    return plans


def _roadmap(structure: Structure, base_fleet: Fleet, w: _Workload) -> tuple[list[Fleet], RoadmapCosts | None]:
    """The baseline's fleets on every roadmap generation, their steady-state costs and whether each meets the latency
    targets (None without a roadmap)."""
    if not structure.generations:
        return [base_fleet], None
    fleets = [base_fleet, *(option_fleet(option, w) for option in structure.generation_options())]
    plans = _plans(fleets, w)
    full, running = [], []
    for g, generation in enumerate((None, *structure.generations)):
        total, run = money.steady_state_usd_per_year(plans, float(g), w.demand_path)
        if generation is not None:
            port = w.get(device_param(generation.device, "software_port_usd"))
            life = w.get(device_param(generation.device, "useful_life_years"))
            total = total + port * w.demand_path.capital_recovery_factor(life)
        full.append(total)
        running.append(run)
    start = w.get("roadmap.start_year")
    own = roadmap_param(base_fleet.option.pools[0].device, "release_year")
    release = (w.get(own) - start if len(base_fleet.option.pools) == 1 and own in w.names else np.zeros_like(start),
               *(w.get(roadmap_param(g.device, "release_year")) - start for g in structure.generations))
    incumbent = "+".join(dict.fromkeys(p.device for p in base_fleet.option.pools))
    costs = RoadmapCosts((incumbent, *(g.device for g in structure.generations)), release, tuple(full),
                         tuple(running), w.get("roadmap.cost_halving_years"),
                         tuple(infeasible_code(f.size, w) for f in fleets))
    return fleets, costs


def _porting(structure: Structure, option: Option, w: _Workload, path: GenerationPath, t_d,
             generation_devices: Sequence[str]) -> list:
    """Software porting events ``(time, USD)``: a challenger ports to each device it adopts at
    deployment (not the baseline's devices, whose software runs already, nor a built chip,
    whose software is part of its NRE); a roadmap baseline ports at each move to another generation."""
    if option.name == structure.baseline:
        if len(generation_devices) == 1:
            return []
        ports = (0.0, *(w.get(device_param(d, "software_port_usd")) for d in generation_devices[1:]))
        events = []
        for t, (index, moves) in enumerate(zip(path.index, path.switch, strict=True)):
            adopts = moves | ((t == 0) & (np.asarray(index) != 0))
            events.append((float(t), np.where(adopts, pick(ports, index), 0.0)))
        return events
    return [(t_d, w.get(device_param(d, "software_port_usd"))) for d in structure.adopted_devices(option)]


def _program(structure: Structure, option: Option, w: _Workload, values) -> tuple[ProgramSchedule | None, object]:
    """The chip program's NRE schedule and the deployment year (``0`` without a built pool)."""
    if not any(p.built for p in option.pools):
        return None, 0.0
    ttm = w.get("program.time_to_market_years")
    parts = {k.removeprefix("program.nre."): w.get(k) for k in values if k.startswith("program.nre.")}
    schedule = ProgramSchedule(parts, ttm, timeline.tapeout_year(ttm, w.get("program.tapeout_to_deployment_years")))
    return schedule, timeline.deployment_year(ttm)


def accounting_cost_usd_per_year(fleet: Fleet):
    """Straight-line depreciation plus the yearly running costs of a fleet.

    Depreciation of (price less residual value, plus NRE share) over the life, plus the
    yearly running costs (:data:`~tco.core.outputs.YEARLY_COSTS`). The KV-link ports of a
    split fleet depreciate over the decode devices' life.

    Parameters
    ----------
    fleet : Fleet
        Each pool's sizing and costs by role, and the KV link's capex and running cost.

    Returns
    -------
    ndarray [USD/yr]
        The accounting (undiscounted) yearly cost of the fleet.
    """
    terms = []
    for role, c in fleet.costs.items():
        depreciable = c.unit_hardware_usd * (1.0 - c.residual_value_fraction) + c.unit_nre_usd
        terms += [fleet.sizes[role].devices * depreciable / c.life_years, *(getattr(c, name) for name in YEARLY_COSTS)]
    if fleet.option.disaggregated:
        terms += [fleet.links.port_capex_usd / fleet.costs["decode"].life_years, fleet.links.usd_per_year]
    return _total(terms)


def infeasible_code(size: OptionSizing, w: _Workload):
    """The bits of :data:`INFEASIBLE_REASONS` a fleet's sizing misses, summed.

    Parameters
    ----------
    size : OptionSizing
        The fleet's sizing: whether a shape fits and the TPOT and TTFT targets are met [-].
    w : _Workload
        Prompt and output lengths and the model's context window [tokens].

    Returns
    -------
    ndarray [bitmask]
        ``1`` TPOT missed, ``2`` TTFT missed (both only where a shape fits), ``4`` context too long, ``8`` no shape fits.
    """
    # each reason's flag times its bit (a flag's multiplication costs half an np.where); NaN lengths count as too long
    fits, no_fit = size.fits, np.logical_not(size.fits)
    return ((fits & np.logical_not(size.tpot_met)) * TPOT_MISSED + (fits & np.logical_not(size.ttft_met)) * TTFT_MISSED
            + np.logical_not(w.prompt + w.output <= w.context_max) * CONTEXT_TOO_LONG + no_fit * NO_FIT)


def held_generations_code(codes: Sequence, path: GenerationPath, horizon_years):
    """A roadmap baseline's infeasibility bits: those of every generation it holds within the horizon, or-ed.

    The fleet is on generation ``path.index[t]`` in year ``t``; the code of the generation held is or-ed in for every
    year before the horizon, so a generation it never holds there (the scenario's own device when the roadmap starts
    on a newer one) does not count, one it holds for a year does.

    Parameters
    ----------
    codes : Sequence of ndarray [bitmask]
        :func:`infeasible_code` of the baseline's fleet on each generation (``g = 0`` the scenario's device).
    path : GenerationPath
        The generation held each year.
    horizon_years : float or ndarray [yr]
        Analysis horizon.

    Returns
    -------
    ndarray [bitmask]
        The or of the held generations' bits.
    """
    bits = [np.asarray(code).astype(np.int64) for code in codes]
    out = np.zeros(np.shape(bits[0]), np.int64)
    for t, index in enumerate(path.index):
        out = np.bitwise_or(out, (t < np.asarray(horizon_years)) * pick(bits, index))
    return out


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
    """One option: its fleet at year 1's demand, its money plan over the horizon, and its totals.

    Parameters
    ----------
    structure : Structure
        The scenario's options, baseline, program and roadmap.
    option : Option
        The option to evaluate.
    w : _Workload
        The evaluation's parameter reader and workload.
    values : Mapping[str, object]
        The named parameter values.
    baseline : OptionResult or None
        The baseline's result; None when evaluating the baseline itself.

    Returns
    -------
    OptionResult
        Every output of the option, each in its unit of the output table (:mod:`tco.core.outputs`).
    """
    fleet = option_fleet(option, w)
    fleets, roadmap = _roadmap(structure, fleet, w) if baseline is None else ([fleet], None)
    plans = _plans(fleets, w)
    program, t_d = _program(structure, option, w, values)
    last = max(int(np.max(w.horizon)), int(np.max(t_d)))
    if roadmap is not None:
        path = generation_path(structure.refresh_policy, roadmap, plans[option.pools[0].role].life_years, w.horizon, last,
                               lambda index, age: money.holding_usd_per_year(plans, index, age, w.demand_path))
    else:
        path = GenerationPath.fixed(w.horizon, last)
    specialized = [p for p in option.pools if p.specialized]
    plan = MoneyPlan(
        plans, path, w.demand_path, w.rate, w.horizon, t_d, w.output_tokens_per_year, w.half_life, program=program,
        built_roles=tuple(p.role for p in option.pools if p.built),
        external_units=w.get("program.external_units") if program is not None else 0.0,
        bridge_usd_per_year=(w.output_tokens_per_year * baseline.lcot_usd_per_mtok / 1e6 if baseline is not None else 0.0),
        porting=_porting(structure, option, w, path, t_d, roadmap.devices if roadmap is not None else (structure.baseline,)),
        reauthoring_usd_per_year=_total([fleet.costs[p.role].reauthoring_usd_per_year for p in specialized]),
        shifts=[ShiftExposure(_shift_exposure_usd_per_year(p, w, baseline), fleet.costs[p.role].residual_efficiency)
                for p in specialized if baseline is not None])
    pv = money.present_values(plan)
    own = plan.own_units(pv.units)
    if program is not None:
        per_unit = nre.nre_per_unit_usd(program.total_usd, own + plan.external_units)
        for role in plan.built_roles:
            fleet.costs[role].unit_nre_usd = per_unit
    pools = {}
    for pool in option.pools:
        role = pool.role
        exposure = _shift_exposure_usd_per_year(pool, w, baseline)
        present = PoolPresentValues(pv_units_bought=pv.pv_units[role], units_bought=pv.units[role],
                                    shift_exposure_usd_per_year=0.0 if exposure is None else exposure)
        pools[role] = PoolResult(role, pool.device, fleet.performance[role], fleet.sizes[role], fleet.costs[role], present)
    lines = {line: pv.lines.get(line, 0.0) for line in CASH_FLOW_LINES}
    pv_cost = _total([lines[line] for line in CASH_FLOW_LINES])
    links = fleet.links
    power_w = _total([*(p.costs.power_w for p in pools.values()), links.power_w])
    if option.disaggregated:
        own_pv = {role: _total(list(pv.by_role[role].values())) for role in ("prefill", "decode")}
        for role in plan.built_roles:
            own_pv[role] = own_pv[role] + lines["nre_usd"] / len(plan.built_roles)
        both = own_pv["prefill"] + own_pv["decode"]  # 0 when a built chip never enters service within the horizon
        paid = both > 0
        prefill_share = where_mixed(paid, own_pv["prefill"] / where_mixed(paid, both, 1.0), 0.0)
    else:
        prefill_share = fleet.size.prefill_time_share
    if roadmap is None:
        full, _ = money.steady_state_usd_per_year(plans, 0.0, w.demand_path)
    else:  # the generation the fleet buys at t = 0, its port recovered over its life, as the roadmap ranks it
        full = pick(roadmap.full_usd_per_year, path.index[0])
    for role in plan.built_roles:
        c = fleet.costs[role]
        full = full + fleet.sizes[role].devices * c.unit_nre_usd * w.demand_path.capital_recovery_factor(c.life_years)
    full = full + _porting_usd_per_year(structure, option, w) + plan.reauthoring_usd_per_year
    size = fleet.size
    code = infeasible_code(size, w) if roadmap is None else held_generations_code(roadmap.infeasible_codes, path, w.horizon)
    tokens_per_s = w.mean_rps * w.output
    return OptionResult(
        name=option.name, pools=pools, links=links, money=plan, roadmap=roadmap,
        lcot_usd_per_mtok=finance.levelized_cost_usd_per_mtok(pv_cost, pv.tokens),
        lcot_usd_per_mtok_all_tokens=finance.levelized_cost_usd_per_mtok(pv_cost, pv.tokens * (w.prompt + w.output) / w.output),
        eac_usd_per_mtok=full / w.output_tokens_per_year * 1e6,
        pv_cost_usd=pv_cost, pv_tokens=pv.tokens, **{"pv_" + line: lines[line] for line in CASH_FLOW_LINES},
        devices=_total([p.sizing.devices for p in pools.values()]), units_bought=_total([pv.units[p.role] for p in option.pools]),
        deployment_year=t_d, ttft_s=size.ttft_s, tpot_s=size.tpot_s, queue_wait_s=size.queue_wait_s, batch=size.batch,
        spilled_bytes=size.spilled_bytes, tokens_per_joule=tokens_per_s / power_w, tokens_per_s=tokens_per_s,
        power_w=power_w, kv_transfer_s=size.kv_transfer_s, link_ports=size.link_ports,
        feasible=(code == 0).astype(float), infeasible_code=code.astype(float), prefill_cost_share=prefill_share,
        # a baseline on the roadmap: the fleet of the generation it buys at t = 0
        accounting_cost_usd_per_year=(accounting_cost_usd_per_year(fleet) if roadmap is None else
                                      pick([accounting_cost_usd_per_year(f) for f in fleets], path.index[0])),
    ).broadcast()


def _porting_usd_per_year(structure: Structure, option: Option, w: _Workload):
    """A challenger's software ports recovered over each adopted device's life [USD/yr] (none for the baseline)."""
    return _total([w.get(device_param(d, "software_port_usd"))
                   * w.demand_path.capital_recovery_factor(w.get(device_param(d, "useful_life_years")))
                   for d in structure.adopted_devices(option)])


def evaluate(structure: Structure, values: Mapping[str, object]) -> dict[str, OptionResult]:
    """Evaluate every option.

    The baseline is evaluated first: specialized pools of the other options charge the
    work they lose to workload shifts, and a built chip's fleet the demand it does not serve
    before it is in service, at the baseline's levelized cost. A built device's figures are
    first moved to its build node (:func:`tco.core.money.nodes.node_scaled_values`).

    Parameters
    ----------
    structure : Structure
        The scenario's options and baseline.
    values : Mapping[str, object]
        The named parameter values (scalars or arrays that broadcast: one scenario or a million draws).

    Returns
    -------
    dict[str, OptionResult]
        ``{option name: OptionResult}``, each output in its unit of the output table.
    """
    values = nodes.node_scaled_values(structure, values)
    w = _Workload(structure, values)
    base_option = structure.option(structure.baseline)
    base = evaluate_option(structure, base_option, w, values, None)
    return {option.name: base if option is base_option else evaluate_option(structure, option, w, values, base)
            for option in structure.options}
