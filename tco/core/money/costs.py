"""What a fleet costs: a device's unit price and device-hour, each pool's capex and yearly running costs,
the KV link's, the purchase plans the money model runs over the horizon, software ports, the chip
program's schedule and the accounting (straight-line) view."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tco.core import names as named
from tco.core.draws import total
from tco.core.money import finance, nre, timeline
from tco.core.money.purchases import GenerationPath, PoolPlan, pick
from tco.core.money.timeline import ProgramSchedule
from tco.core.names import device_param, link_param
from tco.core.option_fleet import Fleet, OptionSizing
from tco.core.outputs import (
    YEARLY_COSTS,
    LinkCosts,
    OptionResult,
    PoolCosts,
    PoolSizing,
)
from tco.core.serving import power, sizing
from tco.core.structure import Option, Pool, Structure
from tco.core.workload import Workload


def unit_price_usd(pool: Pool, w: Workload):
    """Price of one device: the catalog's, or for a built chip with a die its unit cost.

    Good die + package, memory and board (:func:`tco.core.money.nre.good_die_cost_usd`).

    Parameters
    ----------
    pool : Pool
        The pool (its device, whether built).
    w : Workload
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
    if pool.rented:  # paid by the hour (pool_costs), never bought
        return np.zeros_like(get(device_param(pool.device, "price_usd")))
    if pool.built and named.program.die_area_mm2 in w.parameter_names:
        return nre.good_die_cost_usd(get(named.program.die_area_mm2), get(named.program.wafer_price_usd),
                                     get(named.program.defect_density_per_cm2)) + get(named.program.package_memory_board_usd)
    return get(device_param(pool.device, "price_usd"))


def device_hour_usd(pool: Pool, w: Workload):
    """Cost of one device-hour at full power, which ranks candidate shapes.

    Capital recovery of the unit price (:func:`unit_price_usd`) + system overhead over the device's life, plus electricity and
    data hall at TDP + host power: ``(CRF(price + overhead) + (TDP + host) x running cost per W-yr) / 8760``.
    The shape with the fewest device-hours of this price wins; the full cost model then
    prices the chosen fleet.

    Parameters
    ----------
    pool : Pool
        The pool (its device).
    w : Workload
        The evaluation's parameter reader.

    Returns
    -------
    ndarray [USD/device-h]
        Cost of a device-hour at full power.
    """
    get, d = w.get, pool.device
    if pool.rented:
        return get(pool.rental_param)
    capex = unit_price_usd(pool, w) + get(device_param(d, "system_overhead_usd"))
    watts = get(device_param(d, "tdp_w")) + get(device_param(d, "host_power_w"))
    yearly = finance.capital_recovery_usd_per_year(capex, w.discount_rate, get(device_param(d, "useful_life_years"))) \
        + power.running_cost_usd_per_year(watts, get(named.economics.pue), get(named.economics.electricity_usd_per_kwh),
                                          get(named.economics.facility_usd_per_kw_month))
    return yearly / power.HOURS_PER_YEAR


def fleet_device_hour_usd(pool: Pool, w: Workload):
    """:func:`device_hour_usd` of the pool's device, computed once per device and evaluation (kept on ``w``).

    Parameters
    ----------
    pool : Pool
        The pool (its device, whether built).
    w : Workload
        The evaluation's terms and its cache of device-hours.

    Returns
    -------
    ndarray [USD/device-h]
        Cost of a device-hour at full power.
    """
    key = (pool.device, pool.built)
    if key not in w.device_hour_usd_by_pool:
        w.device_hour_usd_by_pool[key] = device_hour_usd(pool, w)
    return w.device_hour_usd_by_pool[key]


def pool_costs(pool: Pool, size: PoolSizing, w: Workload) -> PoolCosts:
    """Per-device capex and year-1 cost terms of one pool (DESIGN.md section 5).

    The NRE share per unit of a built pool is filled in once the fleet's units are known
    (:func:`evaluate_option`).

    Parameters
    ----------
    pool : Pool
        The pool (its device).
    size : PoolSizing
        The pool's devices [devices] and utilization [-].
    w : Workload
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
    zero = np.zeros_like(price)
    unit_hardware = zero if pool.rented else price + get(device_param(d, "system_overhead_usd"))
    tdp, host = get(device_param(d, "tdp_w")), get(device_param(d, "host_power_w"))
    power_w = size.devices * power.device_power_w(get(device_param(d, "idle_power_w")), tdp, size.utilization, host)
    # a rented pool's rate covers the server, its power and its hosting: no energy, data hall or maintenance of its own
    energy = zero if pool.rented else power.energy_cost_usd_per_year(power_w, get(named.economics.pue),
                                                                     get(named.economics.electricity_usd_per_kwh))
    facility = zero if pool.rented else power.facility_cost_usd_per_year(size.devices * (tdp + host),
                                                                         get(named.economics.facility_usd_per_kw_month))
    return PoolCosts(
        unit_price_usd=price,
        unit_hardware_usd=unit_hardware,
        unit_nre_usd=zero,
        life_years=get(device_param(d, "useful_life_years")),
        residual_value_fraction=get(device_param(d, "residual_value_fraction")),
        power_w=power_w,
        energy_usd_per_year=energy,
        facility_usd_per_year=facility,
        maintenance_usd_per_year=get(named.economics.maintenance_fraction_per_year) * size.devices * unit_hardware,
        rental_usd_per_year=(size.devices * get(pool.rental_param) * get(pool.rental_share_param) * power.HOURS_PER_YEAR
                             if pool.rented else zero),
        reauthoring_usd_per_year=(get(device_param(d, "reauthoring_usd_per_shift")) / w.half_life_years
                                  if pool.specialized else zero),
        residual_efficiency=get(device_param(d, "residual_efficiency")) if pool.specialized else np.ones_like(price),
    )


def shift_exposure_usd_per_year(pool: Pool, w: Workload, baseline: OptionResult | None):
    """Baseline cost of the work a specialized pool does in year 1 [USD/yr]; None for general pools and the baseline itself.

    The pool's share of the baseline's cost: all of it when colocated, the baseline's
    prefill (decode) cost share for a prefill (decode) pool.

    Parameters
    ----------
    pool : Pool
        The pool (its role, whether specialized).
    w : Workload
        The evaluation's terms (parameters read through ``w.get``).
    baseline : OptionResult or None
        The baseline's result (its LCOT and prefill cost share); None when the baseline itself is evaluated.

    Returns
    -------
    ndarray or None [USD/yr]
        The exposure, or None.
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


def link_costs(option: Option, size: OptionSizing, w: Workload) -> LinkCosts:
    """The KV link's purchase and year-1 running cost and its power (zeros when colocated).

    Parameters
    ----------
    option : Option
        The option (its link, whether disaggregated).
    size : OptionSizing
        The option's link ports [ports].
    w : Workload
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
    yearly = power.running_cost_usd_per_year(port_w, w.get(named.economics.pue), w.get(named.economics.electricity_usd_per_kwh),
                                             w.get(named.economics.facility_usd_per_kw_month))
    return LinkCosts(port_capex_usd=size.link_ports * w.get(link_param(link, "port_cost_usd")), usd_per_year=yearly,
                     power_w=port_w)


#: yearly pool costs that are not paid per device held: energy (split below into idle and load parts) and
#: re-authoring (per workload shift, the option's; :class:`tco.core.money.plan.MoneyPlan`)
NOT_PER_DEVICE = ("energy_usd_per_year", "reauthoring_usd_per_year")


def pool_plan(fleets: Sequence[Fleet], role: str, w: Workload) -> PoolPlan:
    """One pool's purchase plan across generations (:class:`~tco.core.money.purchases.PoolPlan`).

    Per device held: energy at idle plus host power, and every other yearly running cost of
    the pool (:data:`~tco.core.outputs.YEARLY_COSTS`: data hall, maintenance, ...) per device of
    year 1's fleet; per busy replica: energy of ``(TDP - idle)`` over its devices (the load term
    of :func:`tco.core.serving.power.device_power_w`).

    Parameters
    ----------
    fleets : Sequence[Fleet]
        The option's fleet on each generation (one without a roadmap).
    role : str
        The pool's role.
    w : Workload
        The evaluation's terms (parameters read through ``w.get``).

    Returns
    -------
    PoolPlan
        Replicas at peak and busy [replicas], devices per replica [devices], unit hardware [USD], life [yr], residual
        share [-], and the yearly costs per device held and per busy replica [USD/yr], one entry per generation.
    """
    get = w.get
    energy_w_year = power.energy_cost_usd_per_year(1.0, get(named.economics.pue), get(named.economics.electricity_usd_per_kwh))
    per_device = {line: [] for name, line in YEARLY_COSTS.items() if name not in NOT_PER_DEVICE}
    terms, energy, busy, multiples = [], [], [], []
    for fleet in fleets:
        pool = fleet.option.pool(role)
        d = pool.device
        size, cost, n = fleet.sizes[role], fleet.costs[role], fleet.performance[role].devices_per_replica
        multiples.append(sizing.replica_multiple(n, pool.purchase_unit_devices))
        idle, tdp, host = (get(device_param(d, k)) for k in ("idle_power_w", "tdp_w", "host_power_w"))
        if pool.rented:  # its power is in the rent
            idle = tdp = host = 0.0
        terms.append((size.peak_replicas, size.utilization * size.replicas, n, cost.unit_hardware_usd, cost.life_years,
                      cost.residual_value_fraction))
        energy.append((idle + host) * energy_w_year)
        busy.append((tdp - idle) * n * energy_w_year)
        for name, line in YEARLY_COSTS.items():
            if name not in NOT_PER_DEVICE:
                per_device[line].append(getattr(cost, name) / size.devices)
    z, x, n, unit, life, rv = (tuple(t) for t in zip(*terms, strict=True))
    in_units = any(not (type(g) is int and g == 1) for g in multiples)  # a pool bought in units of several devices
    return PoolPlan(z, x, n, unit, life, rv, {"energy_usd": tuple(energy), **{k: tuple(v) for k, v in per_device.items()}},
                    {"energy_usd": tuple(busy)}, whole=w.whole_devices, replica_multiple=tuple(multiples) if in_units else ())


def link_plan(fleets: Sequence[Fleet], w: Workload) -> PoolPlan:
    """The KV-link ports as a pool: sized on year 1's peak KV traffic (what the decode pool's prefix cache lacks of
    each prompt), bought with the decode devices' life, no residual value, running cost per port (its energy and
    data hall).

    Parameters
    ----------
    fleets : Sequence[Fleet]
        The option's fleet on each generation (the decode pool's life).
    w : Workload
        The evaluation's terms (parameters read through ``w.get``).

    Returns
    -------
    PoolPlan
        Ports at peak [ports] at the port's price [USD] and running cost [USD/yr], one entry per generation.
    """
    get, link = w.get, fleets[0].option.link
    bandwidth = get(link_param(link, "bandwidth_bytes_per_s"))
    exact = w.peak_requests_per_s * fleets[0].size.kv_bytes_per_request / bandwidth
    running = power.running_cost_usd_per_year(get(link_param(link, "port_power_w")), get(named.economics.pue),
                                              get(named.economics.electricity_usd_per_kwh),
                                              get(named.economics.facility_usd_per_kw_month))
    count = len(fleets)
    zero = np.zeros_like(exact)
    return PoolPlan((exact,) * count, (zero,) * count, (1.0,) * count, (get(link_param(link, "port_cost_usd")),) * count,
                    tuple(f.costs["decode"].life_years for f in fleets), (0.0,) * count, {"running_usd": (running,) * count},
                    whole=w.whole_devices)


def purchase_plans(fleets: Sequence[Fleet], w: Workload) -> dict[str, PoolPlan]:
    """Every purchase plan of an option: one per pool (:func:`pool_plan`), and the KV link's when split.

    Parameters
    ----------
    fleets : Sequence[Fleet]
        The option's fleet on each generation.
    w : Workload
        The evaluation's terms (parameters read through ``w.get``).

    Returns
    -------
    dict[str, PoolPlan]
        By role, plus ``links`` for a disaggregated option.
    """
    option = fleets[0].option
    plans = {pool.role: pool_plan(fleets, pool.role, w) for pool in option.pools}
    if option.disaggregated:
        plans["links"] = link_plan(fleets, w)
    return plans


def porting_events(structure: Structure, option: Option, w: Workload, path: GenerationPath, t_d,
                   generation_devices: Sequence[str]) -> list:
    """Software porting events ``(time, USD)``: a challenger ports to each device it adopts at
    deployment (not the baseline's devices, whose software runs already, nor a built chip,
    whose software is part of its NRE); a roadmap baseline ports at each move to another generation.

    Parameters
    ----------
    structure : Structure
        The scenario (the baseline, adopted devices).
    option : Option
        The option evaluated.
    w : Workload
        The evaluation's terms (parameters read through ``w.get``).
    path : GenerationPath
        The generation held each year (a roadmap baseline).
    t_d : float or ndarray [yr]
        Deployment year of the option.
    generation_devices : Sequence[str]
        The devices of the generations, the scenario's own first.

    Returns
    -------
    list of (float, ndarray) [yr, USD]
        When each port is paid and what it costs.
    """
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


def program_schedule(structure: Structure, option: Option, w: Workload, values) -> tuple[ProgramSchedule | None, object]:
    """The chip program's NRE schedule and the deployment year (``0`` without a built pool).

    The node's NRE parts times ``program.nre_scale`` (:func:`tco.core.money.nre.scaled_nre_parts`), plus a respin's
    expected mask set (:func:`tco.core.money.nre.expected_respin_usd`) booked at the second tape-out, the first plus
    ``program.respin_slip_years``; the fleet deploys at ``ceil(W + p s)`` (:func:`tco.core.money.nre.expected_slip_years`).
    The design, IP and software spending keep their planned windows.

    Parameters
    ----------
    structure : Structure
        The scenario.
    option : Option
        The option (whether it has a built pool).
    w : Workload
        The evaluation's terms (parameters read through ``w.get``).
    values : Mapping[str, object]
        The named values (the NRE parts present).

    Returns
    -------
    schedule : ProgramSchedule or None
        The NRE parts [USD] (``respin_usd`` among them), time to market, tape-out and second tape-out years [yr];
        None without a built pool.
    deployment_year : float or ndarray [yr]
        When the built chip enters service (0 without one).
    """
    if not any(p.built for p in option.pools):
        return None, 0.0
    ttm = w.get(named.program.time_to_market_years)
    parts = nre.scaled_nre_parts({k.removeprefix("program.nre."): w.get(k) for k in values if k.startswith("program.nre.")},
                                 w.get(named.program.nre_scale))
    respin, slip = w.get(named.program.respin_probability), w.get(named.program.respin_slip_years)
    parts["respin_usd"] = nre.expected_respin_usd(respin, parts["masks_usd"])
    tapeout = timeline.tapeout_year(ttm, w.get(named.program.tapeout_to_deployment_years))
    schedule = ProgramSchedule(parts, ttm, tapeout, tapeout + slip)
    return schedule, timeline.deployment_year(ttm + nre.expected_slip_years(respin, slip))


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
    return total(terms)


def porting_usd_per_year(structure: Structure, option: Option, w: Workload):
    """A challenger's software ports recovered over each adopted device's life (none for the baseline).

    Parameters
    ----------
    structure : Structure
        The scenario (the devices each option adopts).
    option : Option
        The option.
    w : Workload
        The evaluation's terms (parameters read through ``w.get``).

    Returns
    -------
    float or ndarray [USD/yr]
        The ports' capital recovery per year.
    """
    return total([w.get(device_param(d, "software_port_usd"))
                   * w.demand_path.capital_recovery_factor(w.get(device_param(d, "useful_life_years")))
                   for d in structure.adopted_devices(option)])
