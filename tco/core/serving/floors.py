"""Lower bounds of a candidate shape's cost, by which the shape search skips work that cannot change its choice.

A candidate whose **cost floor** (:func:`cost_floor`: its cycle at least the weight read, the longer phase's
arithmetic or KV read and the collectives, its slot cap at most what memory, the batch limit, the budget and the TPOT
target allow, its replicas at least the slots' offered load) lies above a feasible candidate's cost in every draw cannot
win and is not evaluated (:func:`tco.core.serving.search.size_pool`, branch and bound, lowest floor first:
:func:`lowest_floor_first`). A colocated candidate evaluated after a feasible one sizes its queues only where its
**queue floor** (:func:`queue_floor`: the slots' and the lanes' offered load per replica) does not lie above the
cheapest feasible cost so far (:mod:`tco.core.serving.candidates`). Every output stays bit for bit the same
(docs/model.md "Shape search").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tco.core.draws import maximum, minimum
from tco.core.serving import expert, parallelism
from tco.core.serving.cycles import collective_times_per_token_s
from tco.core.serving.roofline import memory_read_time_s
from tco.core.serving.shapes import Demand, DeviceShape, ModelShape, PoolTerms
from tco.core.serving.sizing import WHOLE_COUNT_GUARD
from tco.core.serving.steps import times


def queue_floor(peak, residence_s, slots, work_s, lanes, devices: float, whole, device_hour_usd) -> tuple:
    """A colocated candidate's least replicas from its queues' loads, ``max(lambda D / c_s, lambda S / x)`` (every
    staffing rule holds at least the offered load: square-root staffing adds ``beta sqrt(a) + delta >= 0``, Kingman's
    ``a / rho`` has ``rho <= 1``), and their cost, rounded and lowered as :func:`_whole_cost` does. Measured on 65,536
    all-drawn draws of the default and voice-agent scenarios: 0.88-1.0 of the candidate's replicas (median 0.95-1.0),
    where :func:`cost_floor` gives 0.58-0.83 for the default's H100 shapes (medians).

    Parameters
    ----------
    peak : float or ndarray [req/s]
        Peak request rate ``lambda``.
    residence_s, work_s : float or ndarray [s]
        Slot residence ``D`` and lane service ``S``.
    slots, lanes : float or ndarray [-]
        Slots ``c_s`` and prefill lanes ``x`` per replica.
    devices : float [devices]
        Devices per replica ``n``.
    whole : bool or ndarray of bool [-]
        Whole-device sizing.
    device_hour_usd : float or ndarray [USD/device-h]
        The price that ranks the candidates.

    Returns
    -------
    tuple
        ``(replicas [replicas, continuous], cost [USD/h])``.
    """
    load = maximum(peak * residence_s / slots, peak * work_s / lanes)
    return load, _whole_cost(load, devices, whole, device_hour_usd)


def lowest_floor_first(floors: Sequence) -> list[int]:
    """The order in which :func:`tco.core.serving.search.size_pool` evaluates its candidates: those without a cost
    floor (shapes that fit in no draw) first, then the others by their floor's mean over the draws, lowest first
    (branch and bound; the loop leaves the shapes that do not fit in every draw to later). Only the work depends on
    it: a candidate is skipped where its floor lies above a feasible cost, which it then cannot undercut, so the choice
    (first lowest score, in the candidates' own order) is the same in any order.

    Parameters
    ----------
    floors : Sequence of ndarray or None [USD/h]
        Each candidate's :func:`cost_floor`, or None.

    Returns
    -------
    list of int [-]
        Candidate indices.
    """
    def key(k):
        floor = floors[k]
        if floor is None:
            return (0, 0.0, k)
        if type(floor) is not np.ndarray:
            mean = float(floor)
        else:  # ndarray.item and .sum, not np.mean: its Python layer costs more than the sum of one block
            mean = floor.item() if floor.size == 1 else float(floor.sum()) / floor.size
        return (1, mean if mean == mean else np.inf, k)  # a NaN mean sorts last

    return sorted(range(len(floors)), key=key)


def cost_floor(role: str, shape: parallelism.Shape, model: ModelShape, device: DeviceShape, demand: Demand,
                terms: PoolTerms, whole, device_hour_usd):
    """A lower bound of a candidate's cost [USD/h] from a few of its terms.

    A prefill replica of ``n`` devices spends at least ``P (2A / (n F) + (1 - o_c) s1)`` of its time on each prompt: a
    pass of ``N`` tokens lasts at least their arithmetic and their collectives
    (:meth:`tco.core.serving.steps.CycleModel.cycle_s`: every other term adds), and its ``p`` lanes share the pass
    (:func:`tco.core.serving.cycles.prefill_service`: ``t(0, p k_b P) / k_b`` per prompt and lane). It needs at least
    that load, ``lambda P (2A / (n F) + (1 - o_c) s1)`` replicas.
    At ``B`` decode tokens the cycle a request sees is at least ``t(B) = max(p t_mem(read_fixed), a B) + s0 + q B``:

    * ``a``, per decode token, the longer phase's: the weight phase's arithmetic ``2A/F`` or the attention phase's KV
      read at the fastest tier's bandwidth or its arithmetic (two phases overlap at most fully, each phase's memory
      and arithmetic too), against the shared weights' read;
    * ``q = (1 - o_c) s1 (1 + r) + r max(2A/F - t_idle / (p tau), 0)``: the collectives of the decode tokens and,
      colocated, of the ``r B`` prefill tokens riding in the cycle on average (``r = P/O``), and those tokens'
      arithmetic beyond the weight read they share: each costs ``chi >= (1 - o_c) s1 + max(2A/F - t_idle / (p tau),
      0)`` (:func:`tco.core.serving.cycles.prefill_token_cost_s`: a chunk of ``p tau`` tokens on an idle cycle of
      ``t_idle <= p t_mem(W)``; a whole-prompt pass costs more), and the interference is at least ``r chi B``
      (:func:`tco.core.serving.cycles.interference_lines`) -- :meth:`tco.core.serving.steps.CycleModel.cycle_s`: every
      other term adds.

    Its slot cap ``c_s`` is at most what memory, the batch limit and (chunked, colocated) the token budget allow, and
    where it is feasible at most the largest ``B`` with ``t(B)`` within the TPOT target (:func:`_largest_within_floor`:
    the cap's own cycle meets it); it needs at least the slots' offered load, ``lambda O t(c_s) / c_s`` replicas (every
    staffing rule holds more servers than the load; ``t(B)/B`` falls with ``B``, so the cap's upper bound gives a lower
    bound), rounded up to whole replicas as the candidate's are where sizing is whole in every draw. Lowered by 1e-9
    of itself before that rounding (against the floor's own rounding) and after it (against the comparison's).
    Measured at 65,536 all-drawn draws of the default scenario, the H100 shapes' floors are 0.58 / 0.71 / 0.83 of
    their cost (TP2 / TP4 / TP8, medians; 0.20 / 0.31 / 0.49 with the weight phase and the collectives alone); at
    2 x 20,000 draws of every bundled scenario no floor lies above a feasible candidate's cost.

    Parameters
    ----------
    role : str
        ``colocated``, ``decode`` or ``prefill``.
    shape : Shape
        The candidate.
    model : ModelShape
        Weight bytes [B], FLOPs [FLOP/token], layers and widths [-] and KV heads [-].
    device : DeviceShape
        FLOP/s [FLOP/s], sync latency [s], cycle overhead [s] and scale-up domain [devices].
    demand : Demand
        Peak rate [req/s], lengths [tokens], TPOT target [s], batch limit [sequences], token budget [tokens], policy.
    terms : PoolTerms
        The pool's shape-independent terms (tiers per device [B, B/s], KV bytes [B], ``P/O`` and overlaps [-]).
    whole : bool or ndarray of bool [-]
        Whether the floor's replicas are rounded up to whole ones.
    device_hour_usd : float or ndarray [USD/device-h]
        Prices the floor's device-hours.

    Returns
    -------
    ndarray [USD/h]
        At most the candidate's ``cost``.
    """
    n = float(shape.devices)
    model = expert.replica_model(shape, model, demand)
    per_token, per_prompt_token = collective_times_per_token_s(shape, model, device, terms)
    if per_prompt_token is None:
        per_prompt_token = per_token
    if role == "prefill":
        replicas = demand.peak_requests_per_s * demand.prompt_tokens * (
            model.weight_flops_per_token / times(n, device.flops_per_s) + terms.keeps[2] * per_prompt_token) * (1.0 - 1e-9)
        return _whole_cost(replicas, n, whole, device_hour_usd)
    caps = tuple(times(n, c) for c in terms.device_capacity_bytes)
    bws = tuple(times(n, b) for b in terms.device_bandwidth_bytes_per_s)
    replication = parallelism.kv_replication(shape.tensor, model.kv_heads)
    slots = minimum((sum(caps[1:], caps[0]) - model.weight_bytes) / times(replication, terms.total_kv_bytes),
                    times(shape.data_parallel, demand.max_batch_sequences))
    if role == "colocated" and demand.policy == "chunked":
        slots = minimum(slots, times(shape.lanes, demand.token_budget_tokens) / (demand.budget_tokens_per_sequence
                                                                                + terms.ratio))
    read = times(shape.weight_passes, memory_read_time_s(model.read_fixed_bytes, caps, bws))
    flops = times(n, device.flops_per_s)
    # per decode token: the more of the weight phase's arithmetic and the attention phase's KV read (at the fastest
    # tier's bandwidth) or arithmetic; a cycle is at least the longer phase
    phase = maximum(model.weight_flops_per_token / flops,
                    maximum(times(replication, terms.decode_kv_bytes_per_token) / bws[0],
                            terms.decode_attention_flops_per_token / flops))
    fixed = parallelism.sync_latency_per_cycle_s(shape, model.layers, device.sync_latency_s) + device.cycle_overhead_s
    # per decode token: its collectives and those of the prefill riding with it
    riding = terms.keeps[2] * (per_token + terms.ratio * per_prompt_token)
    if role == "colocated":  # and the prefill's arithmetic beyond the weight read it shares (prefill_token_cost_s)
        idle = times(shape.weight_passes, memory_read_time_s(model.weight_bytes, caps, bws))
        riding = riding + terms.ratio * maximum(model.weight_flops_per_token / flops
                                                - idle / times(shape.lanes, demand.token_budget_tokens), 0.0)
    slots = maximum(minimum(slots, _largest_within_floor(demand.step_target_s, read, phase, fixed, riding)), 1.0)
    cycle = maximum(read, slots * phase) + fixed + riding * slots
    replicas = demand.peak_requests_per_s * demand.decode_steps * cycle / slots * (1.0 - 1e-9)
    return _whole_cost(replicas, n, whole, device_hour_usd)


def _largest_within_floor(target_s, read_s, phase_s, fixed_s, riding_s):
    """The most decode tokens ``B`` whose floor cycle ``max(R, a B) + s + c B`` (:func:`cost_floor`) meets the TPOT target
    ``T``: ``min((T - R - s) / c, (T - s) / (a + c))`` [tokens]; ``T``, ``R`` (``read_s``), ``s`` (``fixed_s``) [s],
    ``a`` (``phase_s``), ``c`` (``riding_s``) [s/token]. A feasible candidate's slot cap meets ``T`` with its
    own cycle, which is at least the floor's at every ``B``, so the cap is at most this (``+inf`` where the weight read
    alone leaves the target met at any batch, ``c = 0``; negative where it misses the target at ``B = 0``)."""
    headroom = target_s - read_s - fixed_s
    if isinstance(headroom, np.ndarray) or isinstance(riding_s, np.ndarray):
        with np.errstate(divide="ignore", invalid="ignore"):  # c = 0 (one device, no collectives): +-inf, or 0 / 0
            by_read = headroom / riding_s
        by_read = np.where(np.isnan(by_read), np.inf, by_read)  # 0 / 0: the read meets the target exactly, at any batch
    else:  # numbers (a scalar call): the same without numpy's array machinery
        by_read = headroom / riding_s if riding_s else (np.inf if headroom >= 0 else -np.inf)
    return minimum(by_read, (target_s - fixed_s) / (phase_s + riding_s))


def _whole_cost(replicas, devices: float, whole, device_hour_usd):
    """``n R`` device-hours at the ranking price, ``R`` rounded up to whole replicas as the candidates' are where sizing
    is whole in every draw, lowered by 1e-9 of itself against rounding [USD/h]."""
    if whole is True:
        replicas = maximum(np.ceil(replicas - WHOLE_COUNT_GUARD), 1.0)
    return times(devices, replicas) * device_hour_usd * (1.0 - 1e-9)
