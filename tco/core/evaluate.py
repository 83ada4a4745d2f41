"""Evaluate every fleet option of a scenario from its named parameters, vectorized: the one pipeline.

``evaluate(structure, values)`` takes the discrete :class:`~tco.core.structure.Structure`
and a mapping of dotted parameter names to floats or numpy arrays (broadcasting
together) and returns, per option, a typed :class:`~tco.core.outputs.OptionResult`. One
call evaluates one scenario or a million parameter draws; nothing here loops over
scenarios.

Each option is evaluated in typed steps, each returning its own value: the terms every option shares
(:class:`~tco.core.workload.Workload`), each pool sized at peak with its replica shape searched
(:func:`serve_option`, the serving model of :mod:`tco.core.serving`), the fleet's costs
(:func:`option_fleet`, the formulas of :mod:`tco.core.money.costs`), the baseline's roadmap generations
(:func:`roadmap_fleets`), and the option's money plan over the horizon and its totals (:func:`evaluate_option`).
The output names, units and meanings are the table in :mod:`tco.core.outputs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from tco.core import allocator
from tco.core import names as named
from tco.core.draws import any_draw, minimum, total, where_mixed
from tco.core.money import finance, nodes, nre
from tco.core.money import plan as money
from tco.core.money.costs import (
    accounting_cost_usd_per_year,
    fleet_device_hour_usd,
    link_costs,
    pool_costs,
    porting_events,
    porting_usd_per_year,
    program_schedule,
    purchase_plans,
    shift_exposure_usd_per_year,
)
from tco.core.money.generations import RoadmapCosts, generation_path
from tco.core.money.plan import MoneyPlan, ShiftExposure
from tco.core.money.purchases import GenerationPath, pick
from tco.core.names import device_param, link_param, pool_param, roadmap_param, speculation_param, tier_param
from tco.core.option_fleet import Fleet, OptionSizing
from tco.core.outputs import (
    CASH_FLOW_LINES,
    OptionResult,
    PoolPerformance,
    PoolPresentValues,
    PoolResult,
    PoolSizing,
)
from tco.core.reads import ReadLog
from tco.core.serving import prefix_cache, sizing
from tco.core.serving.capacity import PERFORMANCE_FIELDS
from tco.core.serving.cycles import cycle_model
from tco.core.serving.search import size_pool
from tco.core.serving.shapes import Demand, DeviceShape
from tco.core.serving.speculation import Speculation
from tco.core.structure import Option, Pool, Structure
from tco.core.workload import Workload

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


def _peak_flops(get, device, compute_bits):
    """Peak FLOP/s at the compute width: 4-bit falls back to 8-bit where absent."""
    f16 = get(device_param(device, "peak_flops_16bit"))
    f8 = get(device_param(device, "peak_flops_8bit"))
    f4 = get(device_param(device, "peak_flops_4bit"))
    return where_mixed(compute_bits <= 4, f4, where_mixed(compute_bits <= 8, f8, f16))


def device_shape(option: Option, pool: Pool, w: Workload) -> DeviceShape:
    """The pool's device as the serving model needs it.

    Parameters
    ----------
    option : Option
        The option the pool belongs to.
    pool : Pool
        The pool (its device and memory tiers).
    w : Workload
        The evaluation's parameter reader and workload.

    Returns
    -------
    DeviceShape
        Tier capacities [B] (less the prefix cache's share of the off-chip tiers where it lives in device memory)
        and bandwidths [B/s], usable memory share [-], efficiencies [-], achievable FLOP/s [FLOP/s], link bandwidths
        [B/s] and latencies [s] of the device.
    """
    get, d = w.get, pool.device
    capacities = tuple(get(tier_param(d, t, "capacity_bytes")) for t in pool.tiers)
    if w.prefix_cache_tier == "hbm":  # the prefix cache's share of device memory is not the batch's
        kept = 1.0 - get(named.serving.prefix_cache_hbm_fraction)
        capacities = tuple(c if t == prefix_cache.ON_CHIP_TIER else c * kept for t, c in zip(pool.tiers, capacities,
                                                                                            strict=True))
    return DeviceShape(
        tier_capacity_bytes=capacities,
        tier_bandwidth_bytes_per_s=tuple(get(tier_param(d, t, "bandwidth_bytes_per_s")) for t in pool.tiers),
        usable_fraction=get(device_param(d, "memory_usable_fraction")),
        bandwidth_efficiency=get(device_param(d, "bandwidth_efficiency")),
        flops_per_s=_peak_flops(get, d, w.compute_bits) * get(device_param(d, "compute_efficiency")),
        sync_latency_s=get(device_param(d, "sync_latency_s")),
        scale_up_bytes_per_s=get(device_param(d, "chip_to_chip_bandwidth_bytes_per_s")),
        scale_out_bytes_per_s=get(device_param(d, "scale_out_bandwidth_bytes_per_s")),
        domain_devices=get(device_param(d, "scale_up_domain_devices")),
        min_devices=get(pool_param(option.name, pool.role, "devices_per_replica")) if pool.has_min_devices else 1.0,
        cycle_overhead_s=get(overhead) if (overhead := device_param(d, "cycle_overhead_s")) in w.parameter_names else 0.0,
        collective_efficiency=get(eff) if (eff := device_param(d, "collective_efficiency")) in w.parameter_names else 1.0,
        prefill_collective_efficiency=get(pre) if (pre := device_param(d, "prefill_collective_efficiency"))
        in w.parameter_names else None,
        expert_compute_efficiency=get(x) if (x := device_param(d, "expert_compute_efficiency")) in w.parameter_names else 1.0,
        all_to_all_efficiency=get(a) if (a := device_param(d, "all_to_all_efficiency")) in w.parameter_names else 1.0,
        all_to_all_latency_s=get(lat) if (lat := device_param(d, "all_to_all_latency_s")) in w.parameter_names else None,
        purchase_unit_devices=pool.purchase_unit_devices,
        streamed_prefill=pool.streamed_prefill)


def _speculation(option: Option, w: Workload) -> Speculation | None:
    """The option's speculative decoding from its ``options.<name>.speculation.*`` parameters (None: none)."""
    if not option.speculation:
        return None
    get = w.get
    return Speculation(draft_tokens=get(speculation_param(option.name, "draft_tokens")),
                       acceptance_rate=get(speculation_param(option.name, "acceptance_rate")),
                       draft_cost_fraction=get(speculation_param(option.name, "draft_cost_fraction")))


def _cache_bytes_per_device(pool: Pool, w: Workload):
    """Prefix-cache bytes one device of ``pool`` holds in the scenario's tier (0 on a device with SRAM only) [B]."""
    off_chip = [t for t in pool.tiers if t != prefix_cache.ON_CHIP_TIER]
    if not off_chip:
        return 0.0
    if w.prefix_cache_tier == "hbm":
        usable = w.get(device_param(pool.device, "memory_usable_fraction"))
        return w.get(named.serving.prefix_cache_hbm_fraction) * usable * total(
            [w.get(tier_param(pool.device, t, "capacity_bytes")) for t in off_chip])
    return w.get(named.serving.name(f"{w.prefix_cache_tier}_cache_bytes_per_device"))


def _serve_at(option: Option, w: Workload, speculation: Speculation | None, hits: dict | None, grown: dict | None = None):
    """The option's pools sized by :func:`tco.core.serving.search.size_pool` with the prefix-cache hit fraction
    ``hits[role]`` [-] of each pool (None: no prefix reuse) and at least ``grown[role]`` devices where given (to hold
    the cache), plus the KV transfer time and link ports."""
    kv_transfer_s = link_ports = None
    extra = 0.0
    if hits is not None and w.prefix_cache_tier != "hbm":  # the prefix read back from its tier before the prefill
        bandwidth = w.get(named.serving.name(f"{w.prefix_cache_tier}_cache_bandwidth_bytes_per_s"))
        first = "prefill" if option.disaggregated else "colocated"
        extra = prefix_cache.load_time_s(hits[first] * w.prompt_tokens, w.kv_bytes_per_token, bandwidth)
    if option.disaggregated:
        link_bw = w.get(link_param(option.link, "bandwidth_bytes_per_s"))
        bytes_per_request = _kv_bytes_per_request(w, hits)
        kv_transfer_s = sizing.kv_transfer_time_s(bytes_per_request, link_bw, w.get(link_param(option.link, "latency_s")))
        link_ports = sizing.link_ports_needed(w.peak_requests_per_s, bytes_per_request, link_bw, w.whole_devices)
        extra = kv_transfer_s + extra
    served = {}
    for pool in option.pools:
        demand = pool_demand(pool.role, w, speculation, hits)
        if grown and pool.role in grown:
            demand = replace(demand, min_fleet_devices=grown[pool.role])
        served[pool.role] = size_pool(pool.role, pool.shapes, w.model, device_shape(option, pool, w), demand,
                                      w.whole_devices, extra if pool.role != "decode" else 0.0, fleet_device_hour_usd(pool, w))
    return served, kv_transfer_s, link_ports


def pool_demand(role: str, w: Workload, speculation: Speculation | None, hits: dict | None) -> Demand:
    """What one pool serves: the workload's demand with, on a pool that prefills, the prompt less its cached prefix
    (``P - x P`` computed, ``x P`` read from the cache, ``x = hits[role]``) and, on a pool that decodes, the option's
    speculative decoding.

    Parameters
    ----------
    role : str
        ``colocated``, ``prefill`` or ``decode``.
    w : Workload
        The evaluation's terms.
    speculation : Speculation or None
        The option's speculative decoding (None: one token per step).
    hits : dict or None
        Each pool's prefix-cache hit fraction [-] by role (None: no prefix reuse).

    Returns
    -------
    Demand
        Rates [req/s], lengths [tokens], targets [s] and settings the pool is sized for.
    """
    changed = {}
    if hits is not None and role != "decode":
        cached = hits[role] * w.prompt_tokens
        changed.update(prompt_tokens=w.prompt_tokens - cached, cached_prompt_tokens=cached)
    if speculation is not None and role != "prefill":
        changed["speculation"] = speculation
    return replace(w.demand, **changed) if changed else w.demand


def _kv_bytes_per_request(w: Workload, hits: dict | None):
    """KV bytes a request of a disaggregated option moves over the link [B]: the decode side's cache holds its
    prefix (hit fraction ``hits["decode"]`` [-]; None: no prefix reuse), so only the rest crosses."""
    sent = w.prompt_tokens if hits is None else w.prompt_tokens - hits["decode"] * w.prompt_tokens
    return sizing.kv_transfer_bytes_per_request(sent, w.kv_bytes_per_token)


#: the achieved prefix-cache hit fractions are solved on a grid of steps of ``1 / HIT_GRID`` (:func:`_serve`)
HIT_GRID = 128
#: no pool is grown to hold its prefix cache beyond this many devices: a guard against overflow where the fuzzed domain
#: gives a device a cache of 1e-300 B (far above any fleet: never a physical limit) [devices]
GROWN_DEVICES_GUARD = 1e30


def _serve(option: Option, w: Workload):
    """The option's pools sized by :func:`tco.core.serving.search.size_pool`, plus the KV transfer time, the link ports,
    the speculation and each pool's achieved prefix-cache hit fraction [-] (None without prefix reuse).

    With prefix reuse a pool sized for a hit fraction ``x`` has ``N(x)`` devices, whose cache holds the share
    ``g(x) = c N(x) / (lambda_peak T P k)`` of the prompt tokens (:func:`tco.core.serving.prefix_cache.achieved_hit_fraction`
    with every prompt token asked), so it achieves ``a(x) = min(h, g(x))`` of the asked ``h``. More hits need fewer
    devices: ``g`` falls as ``x`` rises, and the fleet holds any ``x <= y*``, where ``g(y*) = y*``; ``y*`` depends on
    the fleet and not on ``h``. The pools are sized at ``x = min(h, Y)``, ``Y`` the largest multiple of
    ``1 / HIT_GRID`` with ``g(Y) >= Y``, found by bisection on that grid (a bracket that does not depend on ``h``): the
    hit fraction reported is one the option's own fleet achieves, at most one grid step below ``y*``, and it never
    falls as the asked ``h`` rises (nor does the cost rise through it: tests/test_speculation.py). A pool whose cache
    holds the grid step above ``h`` is sized at ``h`` itself (one more sizing to find out); else ``[Y_low, Y_high]`` starts at
    the grid points around ``g(h)`` and ``h``. A fleet with a cache that misses a target at ``x`` (too few hits for
    the TTFT target) counts as holding ``x``, so the held ``x`` are ``[0, y*]``. A split's decode pool, whose fleet does
    not depend on its hits (they only shorten the KV transfer the prefill pool waits for), holds ``min(h, g)``
    outright, and the prefill pool is solved with that fixed. A pool may be grown to hold its cache: at a grid step
    ``x`` above ``Y`` (at or below ``h``) the fleet is sized with at least ``x S_1 / c`` devices
    (``Demand.min_fleet_devices``), which it rounds up to whole replicas of a shape that meets the targets at ``x``.
    More hits let smaller shapes meet them, so these grown fleets need not grow with ``x``: the steps from the one above
    ``Y`` upward are tried while ``x S_1 / c`` (a floor of the grown fleet) is below the fewest devices found, and the
    fewest feasible fleet is taken (the step above ``Y`` where it is no larger than the fleet at ``Y``; a later step
    where it is smaller). tests/test_properties.py holds a case where the fewest lie two steps above ``Y``.
    """
    speculation = _speculation(option, w)
    if w.prefix_cache_tier is None:
        return (*_serve_at(option, w, speculation, None), speculation, None)
    asked = w.get(named.workload.prefix_hit_fraction)
    # the working set were every prompt token a hit: g(x) = c N(x) / whole, min(1, g) the share held
    whole = prefix_cache.working_set_bytes(w.peak_requests_per_s, w.get(named.workload.prefix_reuse_interval_s),
                                           w.prompt_tokens, w.kv_bytes_per_token)
    capacity = {pool.role: _cache_bytes_per_device(pool, w) for pool in option.pools}

    def share(served, role):
        return prefix_cache.achieved_hit_fraction(1.0, capacity[role], served[role].figures.replicas
                                                  * served[role].figures.devices_per_replica, whole)

    def held(served):
        # a fleet with a cache that misses a target at x (too few hits for the TTFT target: more would help) counts
        # as holding x, so that {x : held} is [0, y*] and the bisection looks above it; a fleet without one holds none
        return {role: np.where((np.asarray(served[role].figures.feasible) > 0) | (np.asarray(capacity[role]) <= 0),
                               share(served, role), np.inf)
                for role in served if role != "decode"}

    first = dict.fromkeys(capacity, asked)
    out = _serve_at(option, w, speculation, first)
    at_asked = held(out[0])
    if "decode" in capacity:
        # a decode pool's fleet does not depend on its hits (its cache only shortens the KV transfer, which the
        # prefill pool waits for): it holds min(h, g) outright, and the prefill pool is solved with that fixed
        decode_hits = minimum(share(out[0], "decode"), asked)
        if any_draw(decode_hits < asked):
            first = {**first, "decode": decode_hits}
            out = _serve_at(option, w, speculation, first)
            at_asked = held(out[0])
    fixed = {r: x for r, x in first.items() if r not in at_asked}
    top = np.ceil(asked * HIT_GRID - 1e-9)  # the grid point at or above h
    off_grid = top > asked * HIT_GRID + 1e-9
    if not any(any_draw(at_asked[r] < asked) or any_draw(off_grid) for r in at_asked):
        return (*out, speculation, first)
    # integer grid brackets per pool: lo is held (g(lo) >= lo), hi is not, or not yet tried (the step above a held h)
    lo, hi, done = {}, {}, {}
    for r, g in at_asked.items():
        fits = g >= asked
        lo[r] = np.where(fits, top - off_grid, np.floor(np.minimum(g, 1.0) * HIT_GRID + 1e-9) + 0.0 * top)
        hi[r] = top + 0.0 * lo[r]
        done[r] = fits & ~off_grid
    untried = {r: at_asked[r] >= asked for r in at_asked}  # hi is the step above a held h: try it first
    while True:
        probe = {r: np.where(untried[r], hi[r], np.floor(0.5 * (lo[r] + hi[r]))) for r in lo}
        open_ = {r: ~done[r] & (untried[r] | (hi[r] - lo[r] > 1.0)) for r in lo}
        if not any(any_draw(o) for o in open_.values()):
            break
        probe = {r: np.where(open_[r], probe[r], lo[r]) for r in lo}
        g = held(_serve_at(option, w, speculation, {**fixed, **{r: probe[r] / HIT_GRID for r in lo}})[0])
        for r in lo:
            ok = g[r] >= probe[r] / HIT_GRID
            was_untried = open_[r] & untried[r]
            done[r] = done[r] | (was_untried & ok)  # the fleet holds the step above h: h itself
            lo[r] = np.where(open_[r] & ok & ~was_untried, probe[r], lo[r])
            hi[r] = np.where(open_[r] & ~ok, probe[r], hi[r])
            untried[r] = untried[r] & ~open_[r]
    if all(np.all(d) for d in done.values()):  # every pool holds h: the first sizing stands
        return (*out, speculation, first)
    hits = {**fixed, **{r: np.where(done[r], asked, np.minimum(asked, lo[r] / HIT_GRID)) for r in lo}}
    at_lo = _serve_at(option, w, speculation, hits)
    # or a grid step above, the fleet grown to hold it (x S / c devices); the grown fleet rounds up to whole replicas
    # of a shape that meets the targets at x, and more hits let smaller shapes meet them, so its devices may fall
    # again above the first step: the steps are tried upward while one can still need fewer devices than the best
    # (x S / c below it) and is a hit fraction the pool may have (at or below h)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        per_hit = {r: np.where(np.asarray(capacity[r]) > 0, whole / np.where(np.asarray(capacity[r]) > 0, capacity[r],
                                                                              1.0), np.inf) for r in lo}
    best, best_step, grow = {}, {}, {}
    for r in lo:
        a = at_lo[0][r].figures
        best[r] = np.where(np.asarray(a.feasible) > 0, a.replicas * a.devices_per_replica, np.inf)
        best_step[r], grow[r] = hi[r] + np.zeros(np.shape(best[r])), np.zeros(np.shape(best[r]), dtype=bool)
    step, first_out = dict(hi), None
    while True:
        with np.errstate(invalid="ignore", over="ignore"):
            need = {r: step[r] / HIT_GRID * per_hit[r] for r in lo}
        # a cache that can be held, a grid step at or below h (the step above a held, off-grid h is not a hit
        # fraction the pool may have), and fewer devices than the best still possible (the first step: no more)
        open_ = {r: ~done[r] & (step[r] <= asked * HIT_GRID + 1e-9) & (need[r] < GROWN_DEVICES_GUARD)
                 & ((need[r] <= best[r]) if first_out is None else (need[r] < best[r])) for r in lo}
        if not any(any_draw(o) for o in open_.values()):
            break
        # a draw whose search is over is sized at its held step meanwhile (its own step may have passed h)
        out = _serve_at(option, w, speculation, {**fixed, **{r: np.where(open_[r], step[r], lo[r]) / HIT_GRID for r in lo}},
                        {r: np.where(open_[r], need[r], 0.0) for r in lo})
        first_out = out if first_out is None else first_out
        for r in lo:
            b = out[0][r].figures
            devices = b.replicas * b.devices_per_replica
            fewer = (devices <= best[r]) if first_out is out else (devices < best[r])
            better = open_[r] & (np.asarray(b.feasible) > 0) & fewer
            best[r], best_step[r] = np.where(better, devices, best[r]), np.where(better, step[r], best_step[r])
            grow[r] = grow[r] | better
            step[r] = step[r] + 1.0
    if not any(any_draw(g) for g in grow.values()):
        return (*at_lo, speculation, hits)
    hits = {**fixed, **{r: np.where(grow[r], np.minimum(asked, best_step[r] / HIT_GRID), hits[r]) for r in lo}}
    if all(np.all(grow[r] & (best_step[r] == hi[r])) for r in lo):
        return (*first_out, speculation, hits)
    with np.errstate(invalid="ignore", over="ignore"):
        grown = {r: np.where(grow[r], best_step[r] / HIT_GRID * per_hit[r], 0.0) for r in lo}
    return (*_serve_at(option, w, speculation, hits, grown), speculation, hits)


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
        The workload the pools were sized for (rates [req/s], lengths [tokens], targets [s]), with the option's
        speculative decoding where it has one (its decode steps and tokens per step).
    kv_transfer_s : ndarray [s]
        Time to move one request's KV between the pools (0 when colocated).
    """
    w = Workload(structure, values)
    served, kv_transfer_s, _, speculation, _ = _serve(structure.option(option_name), w)
    return served, replace(w.demand, speculation=speculation), kv_transfer_s


def prefix_hit_fractions(structure: Structure, values: Mapping[str, object], option: Option) -> dict | None:
    """Each pool's achieved prefix-cache hit fraction, as :func:`_serve` solves it (the fixed point of the hits and
    the fleet that holds them), for readers that write the model out (the workbook takes the solved value).

    Parameters
    ----------
    structure : Structure
        The scenario's options.
    values : Mapping[str, object]
        The named parameter values.
    option : Option
        The option to serve (one of ``structure``'s, or a generation the baseline moves to).

    Returns
    -------
    dict or None
        ``{role: hit fraction [-]}``, None without prefix reuse.
    """
    return _serve(option, Workload(structure, values))[4]


def chosen_cycle_models(structure: Structure, values: Mapping[str, object], option_name: str) -> tuple[dict, dict]:
    """The cycle model of each pool's chosen replica shape and the demand it serves, for one draw (scalar values).

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
    models : dict
        ``{role: CycleModel}``: each pool's cycle time [s] as a function of its batch.
    demands : dict
        ``{role: Demand}``: the demand each pool was sized for and its model is built with (:func:`pool_demand`: the
        prompt less its cached prefix, the speculative decoding), rates [req/s], lengths [tokens], targets [s].
    """
    w = Workload(structure, values)
    option = structure.option(option_name)
    served, _, _, speculation, hits = _serve(option, w)
    demands = {pool.role: pool_demand(pool.role, w, speculation, hits) for pool in option.pools}
    return {pool.role: cycle_model(pool.shapes[int(np.asarray(served[pool.role].figures.shape_index).reshape(-1)[0])],
                                   w.model, device_shape(option, pool, w), demands[pool.role], pool.role)
            for pool in option.pools}, demands


def serve_option(option: Option, w: Workload) -> tuple[dict[str, PoolPerformance], dict[str, PoolSizing], OptionSizing]:
    """Each pool sized at peak under load with its replica shape searched, utilization at mean load, and the KV link.

    :func:`tco.core.serving.search.size_pool` (DESIGN.md sections 4 and 8). A disaggregated option's
    prefill pool carries the KV transfer in its TTFT budget.

    Parameters
    ----------
    option : Option
        The option's pools and link.
    w : Workload
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
    served, kv_transfer_s, link_ports, speculation, hits = _serve(option, w)
    perf, sizes = {}, {}
    for role, pool in served.items():
        v = pool.figures
        perf[role] = PoolPerformance(**{name: getattr(v, name) for name in PERFORMANCE_FIELDS[role]},
                                     prefix_hit_fraction=None if hits is None else hits[role] + 0.0 * v.replicas,
                                     accepted_tokens_per_step=(speculation.tokens_per_step + 0.0 * v.replicas
                                                               if speculation is not None and role != "prefill" else None))
        replicas = v.replicas
        sizes[role] = PoolSizing(replicas=replicas, peak_replicas=replicas,
                                 utilization=sizing.utilization(w.mean_requests_per_s, replicas, v.capacity_rps),
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
        prefill_time_share=None if option.disaggregated else out.interference_share,
        kv_bytes_per_request=_kv_bytes_per_request(w, hits) + zero if option.disaggregated else None)


def option_fleet(option: Option, w: Workload) -> Fleet:
    """Performance, sizing and cost terms of an option's fleet at year 1's demand.

    Parameters
    ----------
    option : Option
        The option to build a fleet for.
    w : Workload
        The evaluation's parameter reader and workload.

    Returns
    -------
    Fleet
        Pools' performance, sizing and costs, and the link's, at year 1's demand.
    """
    performance, sizes, size = serve_option(option, w)
    costs = {pool.role: pool_costs(pool, sizes[pool.role], w) for pool in option.pools}
    return Fleet(option, performance, sizes, size, costs, link_costs(option, size, w))


def roadmap_fleets(structure: Structure, base_fleet: Fleet, w: Workload) -> tuple[list[Fleet], RoadmapCosts | None]:
    """The baseline's fleets on every roadmap generation, their steady-state costs and whether each meets the latency
    targets.

    Parameters
    ----------
    structure : Structure
        The scenario (its roadmap generations).
    base_fleet : Fleet
        The baseline's fleet on the scenario's own device (generation 0).
    w : Workload
        The evaluation's terms.

    Returns
    -------
    fleets : list of Fleet
        The baseline's fleet on each generation, generation 0 first (only it without a roadmap).
    costs : RoadmapCosts or None
        Devices, release years [yr from the roadmap's start], full and running costs [USD/yr], cost halving [yr] and
        infeasibility codes [bitmask] per generation; None without a roadmap.
    """
    if not structure.generations:
        return [base_fleet], None
    fleets = [base_fleet, *(option_fleet(option, w) for option in structure.generation_options())]
    plans = purchase_plans(fleets, w)
    full, running = [], []
    for g, generation in enumerate((None, *structure.generations)):
        total, run = money.steady_state_usd_per_year(plans, float(g), w.demand_path)
        if generation is not None:
            port = w.get(device_param(generation.device, "software_port_usd"))
            life = w.get(device_param(generation.device, "useful_life_years"))
            total = total + port * w.demand_path.capital_recovery_factor(life)
        full.append(total)
        running.append(run)
    start = w.get(named.roadmap.start_year)
    own = roadmap_param(base_fleet.option.pools[0].device, "release_year")
    release = (w.get(own) - start if len(base_fleet.option.pools) == 1 and own in w.parameter_names else np.zeros_like(start),
               *(w.get(roadmap_param(g.device, "release_year")) - start for g in structure.generations))
    incumbent = "+".join(dict.fromkeys(p.device for p in base_fleet.option.pools))
    costs = RoadmapCosts((incumbent, *(g.device for g in structure.generations)), release, tuple(full),
                         tuple(running), w.get(named.roadmap.cost_halving_years),
                         tuple(infeasible_code(f.size, w) for f in fleets))
    return fleets, costs


def infeasible_code(size: OptionSizing, w: Workload):
    """The bits of :data:`INFEASIBLE_REASONS` a fleet's sizing misses, summed.

    Parameters
    ----------
    size : OptionSizing
        The fleet's sizing: whether a shape fits and the TPOT and TTFT targets are met [-].
    w : Workload
        Prompt and output lengths and the model's context window [tokens].

    Returns
    -------
    ndarray [bitmask]
        ``1`` TPOT missed, ``2`` TTFT missed (both only where a shape fits), ``4`` context too long, ``8`` no shape fits.
    """
    # each reason's flag times its bit (a flag's multiplication costs half an np.where); NaN lengths count as too long
    fits, no_fit = size.fits, np.logical_not(size.fits)
    return ((fits & np.logical_not(size.tpot_met)) * TPOT_MISSED + (fits & np.logical_not(size.ttft_met)) * TTFT_MISSED
            + np.logical_not(w.prompt_tokens + w.output_tokens <= w.context_max_tokens) * CONTEXT_TOO_LONG + no_fit * NO_FIT)


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


def evaluate_option(structure: Structure, option: Option, w: Workload, values: Mapping[str, object],
                    baseline: OptionResult | None) -> OptionResult:
    """One option: its fleet at year 1's demand, its money plan over the horizon, and its totals.

    Parameters
    ----------
    structure : Structure
        The scenario's options, baseline, program and roadmap.
    option : Option
        The option to evaluate.
    w : Workload
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
    fleets, roadmap = roadmap_fleets(structure, fleet, w) if baseline is None else ([fleet], None)
    plans = purchase_plans(fleets, w)
    program, t_d = program_schedule(structure, option, w, values)
    last = max(int(np.max(w.horizon_years)), int(np.max(t_d)))
    if roadmap is not None:
        path = generation_path(structure.refresh_policy, roadmap, plans[option.pools[0].role].life_years, w.horizon_years, last,
                               lambda index, age: money.holding_usd_per_year(plans, index, age, w.demand_path))
    else:
        path = GenerationPath.fixed(w.horizon_years, last)
    specialized = [p for p in option.pools if p.specialized]
    plan = MoneyPlan(
        plans, path, w.demand_path, w.discount_rate, w.horizon_years, t_d, w.output_tokens_per_year, w.half_life_years,
        program=program,
        built_roles=tuple(p.role for p in option.pools if p.built),
        external_units=w.get(named.program.external_units) if program is not None else 0.0,
        bridge_usd_per_year=(w.output_tokens_per_year * baseline.lcot_usd_per_mtok / 1e6 if baseline is not None else 0.0),
        porting=porting_events(structure, option, w, path, t_d,
                               roadmap.devices if roadmap is not None else (structure.baseline,)),
        reauthoring_usd_per_year=total([fleet.costs[p.role].reauthoring_usd_per_year for p in specialized]),
        shifts=[ShiftExposure(shift_exposure_usd_per_year(p, w, baseline), fleet.costs[p.role].residual_efficiency)
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
        exposure = shift_exposure_usd_per_year(pool, w, baseline)
        present = PoolPresentValues(pv_units_bought=pv.pv_units[role], units_bought=pv.units[role],
                                    shift_exposure_usd_per_year=0.0 if exposure is None else exposure)
        pools[role] = PoolResult(role, pool.device, fleet.performance[role], fleet.sizes[role], fleet.costs[role], present,
                                 pool.rented)
    lines = {line: pv.lines.get(line, 0.0) for line in CASH_FLOW_LINES}
    pv_cost = total([lines[line] for line in CASH_FLOW_LINES])
    links = fleet.links
    power_w = total([*(p.costs.power_w for p in pools.values()), links.power_w])
    if option.disaggregated:
        own_pv = {role: total(list(pv.by_role[role].values())) for role in ("prefill", "decode")}
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
    full = full + porting_usd_per_year(structure, option, w) + plan.reauthoring_usd_per_year
    size = fleet.size
    code = infeasible_code(size, w) if roadmap is None else held_generations_code(roadmap.infeasible_codes, path, w.horizon_years)
    tokens_per_s = w.mean_requests_per_s * w.output_tokens
    return OptionResult(
        name=option.name, pools=pools, links=links, money=plan, roadmap=roadmap,
        lcot_usd_per_mtok=finance.levelized_cost_usd_per_mtok(pv_cost, pv.tokens),
        lcot_usd_per_mtok_all_tokens=finance.levelized_cost_usd_per_mtok(
            pv_cost, pv.tokens * (w.prompt_tokens + w.output_tokens) / w.output_tokens),
        eac_usd_per_mtok=full / w.output_tokens_per_year * 1e6,
        pv_cost_usd=pv_cost, pv_tokens=pv.tokens, **{"pv_" + line: lines[line] for line in CASH_FLOW_LINES},
        devices=total([p.sizing.devices for p in pools.values()]), units_bought=total([pv.units[p.role] for p in option.pools]),
        deployment_year=t_d, ttft_s=size.ttft_s, tpot_s=size.tpot_s, queue_wait_s=size.queue_wait_s, batch=size.batch,
        spilled_bytes=size.spilled_bytes, tokens_per_joule=tokens_per_s / power_w, tokens_per_s=tokens_per_s,
        power_w=power_w, kv_transfer_s=size.kv_transfer_s, link_ports=size.link_ports,
        feasible=(code == 0).astype(float), infeasible_code=code.astype(float), prefill_cost_share=prefill_share,
        # a baseline on the roadmap: the fleet of the generation it buys at t = 0
        accounting_cost_usd_per_year=(accounting_cost_usd_per_year(fleet) if roadmap is None else
                                      pick([accounting_cost_usd_per_year(f) for f in fleets], path.index[0])),
    ).broadcast()


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
    w = Workload(structure, values)
    base_option = structure.option(structure.baseline)
    base = evaluate_option(structure, base_option, w, values, None)
    return {option.name: base if option is base_option else evaluate_option(structure, option, w, values, base)
            for option in structure.options}


def option_reads(structure: Structure, values: Mapping[str, object]) -> dict[str, frozenset[str]]:
    """The names of the values each option's result reads at ``values``: its own, the shared terms' and the baseline's.

    Each option is evaluated with the baseline alone (a structure of those two options), through a
    :class:`~tco.core.reads.ReadLog` and with a workload of its own, so a figure the workload keeps for a device once
    computed (:func:`tco.core.money.costs.fleet_device_hour_usd`) is read again by every option that uses it. Where
    none of these values moves, the option's result is its result at ``values``.

    Parameters
    ----------
    structure : Structure
        The scenario's options and baseline.
    values : Mapping[str, object]
        The named parameter values the reads are noted at.

    Returns
    -------
    dict[str, frozenset[str]]
        ``{option name: names read}``, in the order of the options.
    """
    reads = {}
    for option in structure.options:
        log = ReadLog(values)
        evaluate(structure.narrowed([option.name]), log)
        reads[option.name] = frozenset(log.names)
    return reads

