"""One candidate replica shape of a pool sized at peak: its slot cap, its queues, its replicas and their cost.

A candidate (:func:`size_candidate`) is sized at the largest slot cap its memory, batch limit, token budget and TPOT
target allow, ``c_s = floor(min(B_T, B_mem, max_batch, B_budget))`` (``B_T`` the largest occupancy whose cycle meets
the TPOT target at its percentile, :func:`tco.core.serving.cycles.interference_spread_s`), and staffed so that its
queues meet the targets at peak: a colocated replica's slot and lane queues share its TTFT slack
(:mod:`tco.core.serving.split`), a disaggregated prefill pool's lanes take the whole slack, a decode pool's slot queue
the TPOT slack ``T_tpot - t_d(c_s)`` (the gap between the first and the second token must meet the TPOT target at the
percentile: stricter than MLPerf's per-request mean TPOT, which would let a request wait seconds for a slot and still
pass). A colocated replica that meets the TPOT target but misses the TTFT one at its full cap holds its batch down
(:func:`_held_batch`; docs/model.md "A batch held down for the TTFT target"). The result is a :class:`Candidate`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from tco.core.draws import any_draw, at_draws, every_draw, flag_value, maximum, minimum
from tco.core.serving import expert, parallelism, queueing, sojourn
from tco.core.serving.cycles import (
    FLOOR_GUARD,
    SeenCycles,
    cycle_model,
    interference_spread_s,
    own_prefill_fits,
    own_prefill_s,
    prefill_pass_prompts,
    prefill_service,
    seen_cycles,
)
from tco.core.serving.floors import queue_floor
from tco.core.serving.shapes import Demand, DeviceShape, ModelShape, PoolTerms
from tco.core.serving.sizing import WHOLE_COUNT_GUARD, replica_multiple, whole_units
from tco.core.serving.split import LANE_SHARES, split_replicas_where
from tco.core.serving.steps import ConcaveLines, CycleModel, _add, branch_max, branch_min, largest_within, times

#: the most halvings of the held batch's search (:func:`_largest_cap_within_ttft`): whole slot caps up to 2 ** 12 are
#: found exactly (it stops once every bracket is one slot wide; larger caps to within 2 ** -12 of the full one, on the
#: side that meets the TTFT target); continuous sizing runs all of them. 0 turns the held batch off. The workbook has
#: a block of rows per halving
HELD_SEARCH_STEPS = 12
#: the held caps tried, as fractions of the largest that can meet the TTFT target (the cheapest that meets the targets
#: is taken; ties: the first)
HELD_CAPS = (1.0, 0.9)


@dataclass(frozen=True, kw_only=True)
class ReplicaTerms:
    """A replica shape of a pool and its terms at its slot cap (arrays over draws): a :class:`Candidate`'s, and the
    chosen candidate's picked per draw (:class:`tco.core.serving.capacity.ChosenShape`,
    :class:`tco.core.serving.capacity.PoolFigures`)."""

    devices_per_replica: object
    """Devices in one replica, ``n = t x p`` [devices]."""
    tensor_parallel: object
    """Tensor-parallel degree ``t`` [devices]."""
    pipeline_stages: object
    """Pipeline stages ``p`` [stages]."""
    expert_parallel: object
    """1 where the MoE layers run expert-parallel (over the tensor group, or over the attention ranks) [-]."""
    data_parallel: object
    """Data-parallel attention ranks of a wide replica, its experts sharded over them (1: none) [ranks]."""
    micro_batches: object
    """Micro-batches per step (2: two-batch overlap of the expert all-to-alls) [-]."""
    replicas: object
    """Replicas that meet the targets at peak (a ``partial`` candidate: its queue floor where it cannot win)
    [replicas]."""
    slots: object
    """Slot cap ``c_s``, held lower where the TTFT target needs it (prefill pool: 0) [sequences]."""
    slots_allowed: object
    """The slot cap the TPOT target, KV memory, batch limit and token budget allow (prefill pool: 0; None for a
    candidate evaluated at a held cap, which keeps its full cap's) [sequences]."""
    prefill_s: object
    """Prefill of one prompt once started (decode pool: 0) [s]."""
    prefill_work_s: object
    """Lane time of one prompt while prompts wait, ``S_work`` (decode pool: 0) [s]."""
    lanes: object
    """Prefill lanes per replica (decode pool: 0) [lanes]."""
    residence_s: object
    """Time a request holds its slot, ``D = O t(c_s) + S_pf`` (prefill pool: its prefill) [s]."""
    cycle_cap_s: object
    """The cycle a request sees at the slot cap (prefill pool: one pass) [s]."""
    prefill_per_token_s: object
    """Replica time per prefill token riding in a cycle, ``chi`` (colocated; else 0) [s/token]."""
    fits: object
    """1 where a replica holds the weights and one sequence's KV cache, else 0 [-]."""
    tpot_ok: object
    """1 where the TPOT target holds at the slot cap (and budget is left for a chunk), else 0 [-]."""
    ttft_ok: object
    """1 where the longest prompts' own prefill fits the TTFT slack, else 0 [-]."""
    slack_s: object
    """The queues' slack: colocated, the TTFT slack of the slot and lane queues together; prefill, the lanes'; decode,
    the TPOT slack of the slot queue [s]."""
    lane_share: object
    """The lane queue's share ``g`` of a colocated replica's slack and percentile budget (prefill pool: 1, decode
    pool: 0) [-]."""


@dataclass(frozen=True, kw_only=True)
class Candidate(ReplicaTerms):
    """One candidate replica shape of a pool sized at peak (arrays over draws); ``feasible`` and ``cost_usd_per_h``
    drive the choice (:func:`tco.core.serving.search.size_pool`)."""

    feasible: object
    """1 where it fits and meets both targets, else 0 [-]."""
    cost_usd_per_h: object
    """Replicas x devices x the device-hour price that ranks the candidates [USD/h]."""
    bound_tokens: tuple
    """``(decode tokens, prefill tokens)`` of the cycle whose bound and spilled bytes are reported [tokens]."""
    cycle_model: CycleModel
    """The replica's cycle time as a function of its decode and prefill tokens [s]."""
    seen_lines: list | None = None
    """The cycle lines a request sees, one per branch (prefill pool: None) [s]."""
    interference: ConcaveLines | None = None
    """The prefill riding in a colocated replica's cycle at a decode occupancy (else None) [s]."""
    partial: bool = False
    """Its queues were sized only where it can undercut a cheaper candidate (``replicas``, ``cost_usd_per_h`` and
    ``lane_share`` exact there only)."""
    where: tuple | None = None
    """Indices of the draws it was evaluated at, when only some (its arrays are 1-D, at those draws) [-]."""
    draws_shape: tuple | None = None
    """The draws' shape, when it was evaluated at some draws only [-]."""


#: the fields of a candidate that depend on its slot cap (the others: its shape, lines and cycle model)
_HELD_FIELDS = ("slack_s", "lane_share", "prefill_s", "prefill_work_s", "slots", "residence_s", "tpot_ok",
                "cycle_cap_s", "replicas", "ttft_ok", "feasible", "cost_usd_per_h")


def shape_fits(shape: parallelism.Shape, model: ModelShape, device: DeviceShape, terms: PoolTerms, demand: Demand):
    """Whether a replica of ``shape`` holds the weights and one sequence's KV cache in its usable memory, its tensor
    group stays in the scale-up domain and it has the pool's minimum devices.

    Parameters
    ----------
    shape : Shape
        The replica shape.
    model : ModelShape
        Weight bytes [B] and KV heads [-].
    device : DeviceShape
        Scale-up domain [devices] and the pool's minimum devices per replica [devices].
    terms : PoolTerms
        Usable capacity per device [B] and one sequence's KV bytes [B].
    demand : Demand
        The redundant experts' share [-] (a replica's stored weights, :func:`tco.core.serving.expert.replica_model`).

    Returns
    -------
    bool or ndarray of bool [-]
        Per draw.
    """
    n = float(shape.devices)
    capacity = tuple(times(n, c) for c in terms.device_capacity_bytes)
    rep = parallelism.kv_replication(shape.tensor, model.kv_heads)
    weights = expert.replica_model(shape, model, demand).weight_bytes
    return ((weights + times(rep, terms.sequence_kv_bytes) <= sum(capacity[1:], capacity[0]))
            & (shape.tensor <= device.domain_devices + 1e-9) & (n >= device.min_devices - 1e-9))


def size_candidate(role: str, shape: parallelism.Shape, model: ModelShape, device: DeviceShape, demand: Demand,
                   whole, ttft_extra_s, device_hour_usd, terms: PoolTerms, fits=None, cheapest=None) -> Candidate:
    """Sizing of one candidate shape at its slot cap (:func:`_candidate_at_cap`); a colocated replica that misses the
    TTFT target at its full slot cap holds its batch down (:func:`_held_batch`).

    Parameters
    ----------
    role : str
        ``colocated``, ``prefill`` or ``decode``.
    shape : Shape
        The candidate replica shape.
    model : ModelShape
        The model's bytes [B], FLOPs [FLOP/token] and attention shape.
    device : DeviceShape
        The device's tiers [B, B/s], compute [FLOP/s] and links [B/s, s].
    demand : Demand
        Rates [req/s], lengths [tokens], targets [s], percentile [-] and settings.
    whole : bool or ndarray of bool [-]
        Whole-device sizing or continuous.
    ttft_extra_s : float or ndarray [s]
        Time taken out of the TTFT budget before this pool (the KV transfer).
    device_hour_usd : float or ndarray [USD/device-h]
        Price of a device-hour that ranks the candidates.
    terms : PoolTerms
        The pool's shape-independent terms.
    fits : bool or ndarray of bool or None [-]
        :func:`shape_fits` when the caller has it.
    cheapest : float or ndarray or None [USD/h]
        The least cost of a feasible candidate evaluated before, per draw: a colocated candidate sizes its queues only
        where its queue floor (:func:`tco.core.serving.floors.queue_floor`) does not lie above it (``partial``).

    Returns
    -------
    Candidate
        Its shape, replicas [replicas], slot cap [sequences], prefill [s], cycle [s], flags [-] and cost [USD/h].
    """
    out = _candidate_at_cap(role, shape, model, device, demand, whole, ttft_extra_s, device_hour_usd, terms, fits,
                            cheapest)
    if role != "colocated" or not HELD_SEARCH_STEPS:
        return out
    return _held_batch(out, lambda slots, at, cycles: _candidate_at_cap(role, shape, *at, held_slots=slots, cycles=cycles),
                       lambda full, at: _largest_cap_within_ttft(shape, *at, full),
                       (model, device, demand, whole, ttft_extra_s, device_hour_usd, terms, True, cheapest))


class _AtSlots(NamedTuple):
    """A colocated replica at a slot cap: its cycle and its prefill, and whether the TTFT target can hold."""

    cycle_s: object
    """The mean cycle the requests see (prefill share included) [s]."""
    decode_s: object
    """The decode-only cycle [s]."""
    work_s: object
    """Lane time per prompt with prompts waiting [s]."""
    latency_s: object
    """Prefill of one prompt once started [s]."""
    lanes: object
    """Prefill lanes per replica [lanes]."""
    budget_ok: object
    """Token budget left by the decode tokens [bool]."""
    slack_s: object
    """TTFT slack of the slot and lane queues together [s]."""
    own_s: object
    """The length-proportional part of a prompt's prefill [s]."""
    ttft_ok: object
    """The longest prompts' own prefill fits the lanes' widest share of the slack [bool]."""


def _colocated_at_slots(cycles: SeenCycles, demand: Demand, slots, ttft_extra_s, epsilon, streamed: bool,
                        cycle_s=None) -> _AtSlots:
    """A colocated replica at ``slots`` [sequences]: the cycle at the cap (``cycle_s`` [s] when the caller has it),
    the prefill of a prompt in it (:func:`tco.core.serving.cycles.prefill_service`), the TTFT slack
    ``T - latency - cycle - extra`` and whether the longest prompts' own prefill fits the lanes' widest share of it
    (:data:`tco.core.serving.split.LANE_SHARES`, :func:`tco.core.serving.cycles.own_prefill_fits`)."""
    cycle = branch_min([b(slots) for b in cycles.seen_lines]) if cycle_s is None else cycle_s
    decode = cycle - cycles.interference(slots)  # the seen lines are the decode lines plus the interference
    work, latency, lanes, budget_ok = prefill_service(cycles.cycle_model, demand, cycles.chunked,
                                                      cycles.prefill_per_token_s, decode, slots, streamed=streamed)
    slack = demand.ttft_target_s - latency - cycle - ttft_extra_s
    own = own_prefill_s(work, latency)
    widest = LANE_SHARES[-1]  # the lanes' largest share of the slack and budget: the longest prompts fit there
    return _AtSlots(cycle, decode, work, latency, lanes, budget_ok, slack, own,
                    own_prefill_fits(widest * slack, own, demand.prompt_scv, widest * epsilon))


def _candidate_at_cap(role: str, shape: parallelism.Shape, model: ModelShape, device: DeviceShape, demand: Demand,
                      whole, ttft_extra_s, device_hour_usd, terms: PoolTerms, fits=None, cheapest=None,
                      held_slots=None, cycles: SeenCycles | None = None) -> Candidate:
    """Sizing of one candidate shape at the largest slot cap its memory, batch limit, token budget and TPOT allow
    (arrays over draws), or colocated at ``held_slots`` [sequences] (a held cap, :func:`_held_batch`, whose TPOT is
    checked at it); ``feasible`` and ``cost_usd_per_h`` drive the choice.

    ``cheapest`` [USD/h], when given, is the least cost of a feasible candidate evaluated before (per draw): a
    colocated candidate then sizes its queues only where its load floor (:func:`tco.core.serving.floors.queue_floor`)
    does not lie above it, and elsewhere reports the floor as its replicas, which cannot win there; such a candidate is
    marked ``partial`` (its ``replicas``, ``cost_usd_per_h`` and ``lane_share`` are exact only where it can undercut
    ``cheapest``). ``cycles``, when given, are its cycle model and lines (:func:`tco.core.serving.cycles.seen_cycles`,
    computed by the caller at these draws)."""
    cm = cycle_model(shape, model, device, demand, role, terms) if cycles is None else cycles.cycle_model
    n, p = float(shape.devices), float(shape.lanes)
    prompt, output = demand.prompt_tokens, demand.decode_steps
    peak = demand.peak_requests_per_s
    epsilon = 1.0 - demand.percentile
    rep = parallelism.kv_replication(shape.tensor, model.kv_heads)
    capacity = sum(cm.tier_capacity_bytes[1:], cm.tier_capacity_bytes[0])
    fits = shape_fits(shape, model, device, terms, demand) if fits is None else fits
    partial, seen, interference = False, None, None
    if role == "prefill":
        prompts = prefill_pass_prompts(cm, demand)
        work, latency, lanes, _ = prefill_service(cm, demand, False, 0.0, 0.0, 0.0, prompts)
        slack = demand.ttft_target_s - latency - ttft_extra_s
        own = own_prefill_s(work, latency)
        dispatched = demand.prefill_dispatched
        replicas = sojourn.lane_servers(peak * work, work, own, slack, demand.prompt_scv, epsilon, terms.log_term,
                                        dispatched) / lanes
        ttft_ok = own_prefill_fits(slack, own, demand.prompt_scv, epsilon)
        if not every_draw(ttft_ok):  # where the longest prompts alone miss the target: the mean-length fleet, flagged
            replicas = np.where(ttft_ok, replicas, queueing.servers_within_wait(peak * work, work, slack, 0.0, epsilon,
                                                                                terms.log_term, kingman=True,
                                                                                dispatched=dispatched) / lanes)
        share = 1.0
        slots = slots_allowed = 0.0
        residence = cycle_cap = latency
        tpot_ok, chi, bound = True, 0.0, (0.0, times(p, prompts) * prompt)
    else:
        colocated = role == "colocated"
        ratio = terms.ratio
        cycles = seen_cycles(role, cm, demand, terms, shape.lanes) if cycles is None else cycles
        chunked, chi, interference, seen = cycles.chunked, cycles.prefill_per_token_s, cycles.interference, \
            cycles.seen_lines
        kv_batch = (capacity - cm.weight_bytes) / times(rep, terms.total_kv_bytes)
        limit = minimum(kv_batch, times(shape.data_parallel, demand.max_batch_sequences))  # a batch limit per rank
        if chunked:
            limit = minimum(limit, times(p, demand.token_budget_tokens) / _add(demand.budget_tokens_per_sequence, ratio))

        def cap_within(target):  # the largest occupancy whose mean cycle meets ``target``, within the other limits
            return minimum(branch_max([largest_within(b, target, limit) for b in seen]), limit)

        if held_slots is None:
            cap = cap_within(demand.step_target_s)
            if colocated and not sojourn.deterministic(demand.prompt_scv):
                # the spread of the prompts sharing a request's cycles, taken at the mean-TPOT cap (at least the final
                # cap, and the spread grows with the batch: the cap below meets the percentile; docs/model.md)
                cap = cap_within(demand.step_target_s
                                 - interference_spread_s(interference, maximum(cap, 1.0), demand.prompt_scv, epsilon))
            slots = np.floor(cap + FLOOR_GUARD) if whole else cap  # continuous sizing: smooth curves (DESIGN.md 4)
            tpot_ok = slots >= 1.0
            slots = maximum(slots, 1.0)
            cycle_cap = branch_min([b(slots) for b in seen])
            slots_allowed = slots
        else:  # a held cap (below the full one, so within its limits): the TPOT target checked at it
            slots = held_slots
            cycle_cap = branch_min([b(slots) for b in seen])
            seen_tpot = cycle_cap
            if not sojourn.deterministic(demand.prompt_scv):
                seen_tpot = cycle_cap + interference_spread_s(interference, slots, demand.prompt_scv, epsilon)
            tpot_ok = seen_tpot <= demand.step_target_s
            slots_allowed = None  # a held cap keeps its candidate's (:func:`_held_batch`)
        if colocated:
            at = _colocated_at_slots(cycles, demand, slots, ttft_extra_s, epsilon, device.streamed_prefill, cycle_cap)
            work, latency, lanes, slack, own, ttft_ok = at.work_s, at.latency_s, at.lanes, at.slack_s, at.own_s, at.ttft_ok
            tpot_ok = tpot_ok & at.budget_ok
            residence = output * cycle_cap + latency
            queues = (peak, residence, slots, work, lanes, slack, epsilon)
            load, floor_usd = queue_floor(peak, residence, slots, work, lanes, n, whole, device_hour_usd)
            wanted = True if cheapest is None else ~(floor_usd > cheapest)
            replicas, share = split_replicas_where(ttft_ok, queues, (own, demand.prompt_scv), wanted, load)
            partial = not every_draw(wanted)
        else:
            work = latency = lanes = 0.0
            residence = output * cycle_cap
            slack = demand.step_target_s - cycle_cap
            replicas = queueing.servers_within_wait(peak * residence, residence, slack, 0.0, epsilon, terms.log_term) / slots
            ttft_ok = True
            share = 0.0
        bound = (slots, ratio * slots)
    held = demand.min_fleet_devices
    if not (type(held) in (float, int) and held == 0):  # a fleet grown to hold its prefix cache
        replicas = maximum(replicas, held / n)
    if whole:  # whole replicas filling whole purchase units (a rack-scale system's)
        replicas = whole_units(maximum(np.ceil(replicas - WHOLE_COUNT_GUARD), 1.0),
                               replica_multiple(shape.devices, device.purchase_unit_devices))
    feasible = flag_value(fits & tpot_ok & ttft_ok)
    return Candidate(
        devices_per_replica=n, tensor_parallel=float(shape.tensor), pipeline_stages=float(shape.pipeline),
        expert_parallel=float(shape.expert_parallel), data_parallel=float(shape.data_parallel),
        micro_batches=float(shape.micro_batches), replicas=replicas, slots=slots, slots_allowed=slots_allowed,
        prefill_s=latency, prefill_work_s=work, lanes=lanes, residence_s=residence, cycle_cap_s=cycle_cap,
        prefill_per_token_s=chi, fits=flag_value(fits), tpot_ok=flag_value(tpot_ok), ttft_ok=flag_value(ttft_ok),
        feasible=feasible, cost_usd_per_h=times(n, replicas) * device_hour_usd, slack_s=slack, lane_share=share,
        bound_tokens=bound, cycle_model=cm, seen_lines=seen, interference=interference, partial=partial)


def _largest_cap_within_ttft(shape: parallelism.Shape, model: ModelShape, device: DeviceShape, demand: Demand, whole,
                             ttft_extra_s, device_hour_usd, terms: PoolTerms, fits, cheapest, full):
    """The largest slot cap below ``full`` at which a colocated replica's longest prompts can meet the TTFT target
    [sequences; 0 where none can] (``device_hour_usd``, ``fits`` and ``cheapest`` unused: the inputs of
    :func:`_candidate_at_cap`).

    The TTFT check of :func:`_colocated_at_slots` holds below some cap and not above it: a larger batch lengthens the
    cycles a prompt's chunks ride in and leaves fewer tokens of budget for them. Bisection on ``[0, full)``, the lower
    end the largest cap known to hold: ``s = floor((lo + hi) / 2)`` (continuous sizing ``(lo + hi) / 2``) is checked and
    becomes ``lo`` where the check holds, ``hi`` where not, for :data:`HELD_SEARCH_STEPS` halvings (whole caps: until
    ``hi - lo <= 1`` everywhere, where a further halving changes nothing). The cycle lines are computed once and
    returned with it: ``(cap, cycles)`` (:func:`tco.core.serving.cycles.seen_cycles`)."""
    cycles = seen_cycles("colocated", cycle_model(shape, model, device, demand, "colocated", terms), demand, terms,
                         shape.lanes)
    epsilon = 1.0 - demand.percentile
    lo, hi = np.zeros_like(full), np.asarray(full, float)
    for _ in range(HELD_SEARCH_STEPS):
        if whole and every_draw(hi - lo <= 1.0):
            break
        mid = np.floor((lo + hi) / 2.0) if whole else (lo + hi) / 2.0
        ok = _colocated_at_slots(cycles, demand, np.maximum(mid, 1.0), ttft_extra_s, epsilon,
                                 device.streamed_prefill).ttft_ok
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return lo, cycles


def _held_batch(out: Candidate, at_cap: Callable, largest_within_ttft: Callable, inputs: tuple) -> Candidate:
    """A colocated candidate with its batch held down where it misses the TTFT target at its full slot cap.

    A larger batch lengthens the cycles a prompt's chunks ride in, so a replica that meets the TPOT target at its
    full cap ``c`` can miss the TTFT target where a smaller cap meets it. Where the shape fits, meets the TPOT target
    and misses the TTFT one at ``c > 1``, it is sized again at ``s*``, the largest cap below ``c`` whose longest
    prompts can meet the TTFT target (:func:`_largest_cap_within_ttft`), and at the fractions :data:`HELD_CAPS` of it
    (near ``s*`` the lanes have little slack left and can need a replica more), its TPOT checked at each (a smaller
    batch can carry more prefill per cycle: the token budget's line), and the cheapest that meets the targets is taken
    (ties: the first); elsewhere, or where none does, its figures at ``c`` stand. ``s*`` does not depend on the TPOT
    target (only ``c`` does), so a looser TPOT target never loses a held batch nor, where ``c`` misses the TTFT target
    at both, changes its cost. Against sizing every whole cap below ``c`` and keeping the cheapest (1,500 draws of
    each of default, fleet-split and custom-asic, seed 7) the cost per token was within 0.2 % of it in every draw
    (docs/model.md, "A batch held down"). The search and the held caps run at those draws only (gathered,
    :func:`tco.core.draws.at_draws`). The workbook mirrors it (tco.export.serving_sheet: a block of rows per halving
    and one per held cap).

    ``out`` is the candidate at its full cap (:func:`_candidate_at_cap`); ``at_cap(slots, inputs, cycles)`` the
    candidate at a held cap [sequences], inputs and cycle lines; ``largest_within_ttft(full, inputs)`` the largest cap
    below ``full`` that can meet the TTFT target [sequences] and the candidate's cycle lines there; ``inputs``
    ``(model, device, demand, whole, ttft_extra_s, device_hour_usd, terms, fits, cheapest)``. Returns ``out`` with
    its fields that depend on the cap (:data:`_HELD_FIELDS`) and ``bound_tokens`` replaced where a held cap meets the
    targets.
    """
    missed = (out.fits > 0.5) & (out.tpot_ok > 0.5) & (out.ttft_ok < 0.5) & (out.slots > 1.0)
    if not any_draw(missed):
        return out
    shape = np.broadcast_shapes(*(np.shape(getattr(out, k)) for k in _HELD_FIELDS), np.shape(missed))
    if shape == ():
        where, at, full = (), inputs, out.slots
    else:
        where = np.nonzero(np.broadcast_to(missed, shape))
        try:
            at = at_draws(inputs, where, shape)
        except ValueError:  # an input does not broadcast to the draws' shape (a grid's other axis)
            where, at = None, inputs
        full = np.broadcast_to(out.slots, shape)[where] if where is not None else out.slots
    edge, cycles = largest_within_ttft(full, at)
    whole = at[3]
    steps = [at_cap(np.maximum(np.floor(f * edge + FLOOR_GUARD) if whole else f * edge, 1.0), at, cycles)
             for f in HELD_CAPS]
    costs = [np.where(h.feasible > 0.5, h.cost_usd_per_h, np.inf) for h in steps]
    held, lowest = steps[0], costs[0]
    for h, cost in zip(steps[1:], costs[1:], strict=True):  # the cheapest that meets the targets; ties: the first
        better = cost < lowest
        held = replace(held, **{k: np.where(better, getattr(h, k), getattr(held, k)) for k in _HELD_FIELDS},
                       bound_tokens=tuple(np.where(better, b, a)
                                          for a, b in zip(held.bound_tokens, h.bound_tokens, strict=True)),
                       partial=h.partial or held.partial)
        lowest = np.minimum(lowest, cost)
    won = lowest < np.inf
    if where is None:  # evaluated at every draw: taken where the full cap missed and the held one meets the targets
        won = won & missed
    if not any_draw(won):
        return out
    partial = held.partial or out.partial
    if shape == ():
        return replace(out, **{k: getattr(held, k) for k in _HELD_FIELDS}, bound_tokens=held.bound_tokens,
                       partial=partial)
    return replace(out, **{k: _written(getattr(out, k), getattr(held, k), won, where, shape) for k in _HELD_FIELDS},
                   bound_tokens=tuple(_written(o, b, won, where, shape)
                                      for o, b in zip(out.bound_tokens, held.bound_tokens, strict=True)),
                   partial=partial)


def _written(values, held, won, where, shape):
    """``values`` over the draws with ``held`` written where it ``won`` (``held`` at the draws ``where``, or at every
    draw when ``where`` is None)."""
    values = np.array(np.broadcast_to(values, shape), float)
    if where is None:
        return np.where(won, held, values)
    held, won = np.broadcast_to(held, won.shape), won
    values[tuple(w[won] for w in where)] = held[won]
    return values
