"""Serving under load: one pool sized at peak for every candidate replica shape, the cheapest that meets the targets
kept, draw by draw.

:func:`size_pool` sizes one pool of replicas (colocated, prefill-only or decode-only) for the peak request rate so that
the **percentile** latency targets hold, for every candidate replica shape (:mod:`tco.core.serving.parallelism`), and
keeps the cheapest shape that meets them, draw by draw. Everything is a closed form or a fixed number of vectorized
steps (DESIGN.md section 8; docs/model.md "Serving under load"): a replica's cycles and the prefill riding in them
(:mod:`tco.core.serving.cycles`), one candidate at its slot cap (:mod:`tco.core.serving.candidates`), the split of its
TTFT slack between its queues (:mod:`tco.core.serving.split`), the chosen shape at peak
(:mod:`tco.core.serving.capacity`).

**Shape search.** Each candidate shape gets its replica count ``R``; the pool keeps, per draw, the feasible candidate
with the lowest ``R n x cost per device-hour``; when none is feasible the first by :func:`infeasible_rank` is reported
(and flagged infeasible). Candidates whose cost floor lies above a feasible one's cannot win and are skipped
(:mod:`tco.core.serving.floors`); a candidate that fits in few draws is evaluated there only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from tco.core.draws import any_draw, at_draws, every_draw, minimum
from tco.core.serving import parallelism
from tco.core.serving.candidates import Candidate, shape_fits, size_candidate
from tco.core.serving.capacity import ChosenShape, PoolFigures, PoolServing, at_peak
from tco.core.serving.cycles import has_micro_batch_pipelines
from tco.core.serving.floors import cost_floor, lowest_floor_first
from tco.core.serving.selection import Picks, pick_terms, select_cycle_model, select_interference, select_lines
from tco.core.serving.shapes import POLICIES, PREFILL_QUEUES, ROLES, Demand, DeviceShape, ModelShape, pool_terms
from tco.core.serving.split import FEW_DRAWS_SHARE
from tco.core.serving.steps import times

#: score of an infeasible candidate (it only wins when no candidate is feasible)
_INFEASIBLE_SCORE = 1e250
#: the cost rate [USD/h] at which an infeasible candidate that misses only its TTFT target ranks halfway to 1
#: (:func:`infeasible_rank`)
_RANK_COST_USD_PER_H = 1e6
#: added to the rank of a candidate that does not fit memory (:func:`infeasible_rank`; far above any cycle [s])
_UNFIT_RANK = 1e6


def infeasible_rank(cost, cycle_cap_s, fits, tpot_ok):
    """The order in which :func:`size_pool` reports the candidates where none meets the targets (lowest first): those
    that fit memory and meet the TPOT target (they miss only the TTFT one) by their cost, then those that fit by their
    cycle at the slot cap (the nearest to their TPOT target), then those that do not fit, by their cycle.

    Why the tiers: ranked by the cycle alone, a looser TPOT target, which raises the slot caps and so lengthens the
    cycles of the shapes that meet it, handed the report to a one-device shape at one slot (the shortest cycle): on the
    default's H100 draws that miss the TTFT target, a TP2 fleet of 236 GPUs (7.2 USD per million tokens) became a TP1
    fleet of 1,612 (49 USD), and the LPU option's workload-shift line, the baseline's cost, rose 1.9x with it.

    Parameters
    ----------
    cost : ndarray [USD/h]
        The candidate's cost rate (replicas x devices x device-hour price).
    cycle_cap_s : ndarray [s]
        Its cycle at its slot cap.
    fits, tpot_ok : ndarray [-]
        1 where it fits memory, meets the TPOT target; else 0.

    Returns
    -------
    ndarray [-]
        In [0, 1) for the first tier, [1, 1 + cycle) for the second, from :data:`_UNFIT_RANK` for the third.
    """
    first = 1.0 - _RANK_COST_USD_PER_H / (cost + _RANK_COST_USD_PER_H)  # cost / (cost + C), 1 at an infinite cost
    return np.where(np.asarray(fits) > 0.5, np.where(np.asarray(tpot_ok) > 0.5, first, 1.0 + cycle_cap_s),
                    _UNFIT_RANK + cycle_cap_s)


def size_pool(role: str, shapes: Sequence[parallelism.Shape], model: ModelShape, device: DeviceShape, demand: Demand,
              whole=True, ttft_extra_s=0.0, device_hour_usd=1.0) -> PoolServing:
    """Size one pool at peak for every candidate shape and keep the cheapest that meets the targets.

    The choice, per draw: the feasible candidate with the lowest ``R n x cost per
    device-hour``; with none feasible, the first by :func:`infeasible_rank` (the cheapest that misses only the TTFT
    target, else the one nearest to its TPOT target, those that fit memory first). The choice is made with arithmetic
    masks, not ``np.where``/``np.choose`` (both several times slower than a multiply on large arrays); the rank, which
    needs ``np.where`` (an infinite cost or cycle times a zero mask is NaN), is computed only for a candidate that misses
    a target in some draw.

    Parameters
    ----------
    role : str
        ``colocated``, ``prefill`` or ``decode``.
    shapes : Sequence[Shape]
        Candidate replica shapes.
    model : ModelShape
        The model's bytes, FLOPs and attention shape.
    device : DeviceShape
        The device's tiers, compute and links.
    demand : Demand
        Rates [req/s], lengths [tokens], targets [s], percentile and settings.
    whole : bool or ndarray of bool [-]
        Every candidate sized in whole replicas (else continuously, for smooth curves).
    ttft_extra_s : float or ndarray [s]
        Passed to each candidate: the KV transfer before this pool, out of its TTFT budget.
    device_hour_usd : float or ndarray [USD/device-h]
        Ranks the candidates: the cheapest feasible one in device-hours at this price is chosen.

    Returns
    -------
    PoolServing
        Per draw the chosen shape (``devices_per_replica``, ``tensor_parallel``,
        ``pipeline_stages``, ``expert_parallel``, ``shape_index``) and the figures at peak
        (:class:`tco.core.serving.capacity.PoolFigures`): ``replicas``, ``slots`` (the batch cap), ``batch`` (mean
        decode occupancy), ``tpot_s`` and ``ttft_s`` at the percentile, ``queue_wait_s`` (their queueing part),
        ``prefill_s``, ``step_s``, ``interference_share``, ``capacity_rps`` and the feasibility flags.
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}")
    if demand.policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}")
    if demand.prefill_queue not in PREFILL_QUEUES:
        raise ValueError(f"prefill_queue must be one of {PREFILL_QUEUES}")
    terms = pool_terms(model, device, demand, role)
    if has_micro_batch_pipelines(role, device.streamed_prefill, shapes):
        terms = replace(terms, two_interference_lines=True)

    inputs = (model, device, demand, ttft_extra_s, device_hour_usd, terms)

    def evaluate_candidate(k: int, fits=None, at=inputs, cheapest=None) -> Candidate:
        m, d, dem, extra, price, t = at  # the inputs, or the inputs at some draws (_where_it_can_win)
        return size_candidate(role, shapes[k], m, d, dem, whole, extra, price, t, fits, cheapest)

    # a shape that fits in no draw is chosen only where no shape meets the targets: skipped when some shape does in
    # every draw (its score, 1e250 or more, then never wins), evaluated otherwise; a shape that fits in few draws is
    # evaluated only where it fits and its cost floor lies below a feasible shape's cost, or where no shape that fits
    # everywhere meets the targets (_where_it_can_win); a shape that fits everywhere and whose floor lies above a
    # feasible shape's cost cannot win there: skipped where that holds in every draw, else treated as one that fits
    # where its floor is below (cost_floor)
    fits = [shape_fits(shape, model, device, terms, demand) for shape in shapes]
    everywhere = [every_draw(f) for f in fits]
    floors = [cost_floor(role, shape, model, device, demand, terms, whole, device_hour_usd) if any_draw(f) else None
              for shape, f in zip(shapes, fits, strict=True)]
    candidates, cheapest, deferred = [None] * len(shapes), None, []  # cheapest: the least cost of a feasible one so far
    for k in lowest_floor_first(floors):  # branch and bound: a low floor first, so that a cheap cost prunes the rest
        if not everywhere[k]:
            continue
        if cheapest is not None and floors[k] is not None and not every_draw(floors[k] <= cheapest):
            deferred.append(k)  # it can win only where its floor is below: evaluated below, once more costs are known
            continue
        candidates[k] = evaluate_candidate(k, fits[k], cheapest=cheapest)
        cost = np.where(candidates[k].feasible > 0.5, candidates[k].cost_usd_per_h, np.inf)
        cheapest = cost if cheapest is None else np.minimum(cheapest, cost)
    scored = list(candidates)  # what the choice reads: a candidate evaluated at some draws holds its terms there only
    # a candidate whose queues were sized only where it can undercut a cheaper one (partial) is read by the choice;
    # PoolServing.candidate evaluates it again in full when asked
    candidates = [None if c is not None and c.partial else c for c in candidates]
    # then the deferred shapes, lowest floor first, and the shapes that fit in some draws only: each where its floor lies
    # at or below the cheapest cost so far, or where no shape evaluated so far meets the targets; at those draws only
    # when they are few, else at every draw (its queues sized where it can undercut the cheapest so far)
    for k in deferred + [k for k in range(len(shapes)) if not everywhere[k] and any_draw(fits[k])]:
        met = cheapest < np.inf if cheapest is not None else False
        where = fits[k] & (floors[k] <= cheapest) if cheapest is not None and floors[k] is not None else fits[k]
        if not any_draw(where | ~np.asarray(met, bool)):
            continue
        few = _where_it_can_win(evaluate_candidate, inputs, k, where, met)
        if few is not None:
            scored[k] = few
            continue
        scored[k] = evaluate_candidate(k, fits[k], cheapest=cheapest)
        candidates[k] = None if scored[k].partial else scored[k]
        if cheapest is not None:
            cheapest = np.minimum(cheapest, np.where(scored[k].feasible > 0.5, scored[k].cost_usd_per_h, np.inf))
    evaluated = [c for c in scored if c is not None]
    if len(evaluated) < len(candidates) and not (evaluated and every_draw(_feasible_count(evaluated) > 0.5)):
        candidates = [c if c is not None else evaluate_candidate(k, fits[k]) for k, c in enumerate(candidates)]
        scored = [s if s is not None else candidates[k] for k, s in enumerate(scored)]
    best = index = None
    for k, c in enumerate(scored):
        if c is None:
            continue
        if every_draw(c.feasible > 0.5):
            score = c.cost_usd_per_h
        else:
            rank = infeasible_rank(c.cost_usd_per_h, c.cycle_cap_s, c.fits, c.tpot_ok)
            score = c.cost_usd_per_h + (1.0 - c.feasible) * _INFEASIBLE_SCORE * (1.0 + rank)
        if c.where is not None:  # evaluated at some draws: it competes there (elsewhere its score would be 1e250)
            where, shape = c.where, c.draws_shape
            if best is None:
                best, index = np.full(shape, _INFEASIBLE_SCORE), np.full(shape, float(k))
                best[where] = score
            else:
                best, index = np.array(np.broadcast_to(best, shape)), np.array(np.broadcast_to(index, shape))
                here = index[where]
                index[where] = here + (score < best[where]) * (k - here)
                best[where] = np.minimum(best[where], score)
        elif best is None:
            best, index = score, 0.0 * score + k
        else:
            better = score < best
            index = index + better * (k - index)
            best = minimum(best, score)
    picks = Picks(scored, index)
    picked = pick_terms(picks)
    single = None if picks.single is None else picks.candidates[picks.single]
    seen = interference = None
    if role != "prefill":
        seen = select_lines(picks, picks.candidates) if single is None else single.seen_lines
    if role == "colocated":
        interference = select_interference(picks, single, terms, picked["prefill_per_token_s"])
    # the queue's log term at peak (colocated: per share)
    chosen = ChosenShape(**picked, seen_lines=seen, interference=interference,
                         log_term=None if role == "colocated" else terms.log_term)
    derived = _derived(role, chosen, demand)
    figures = at_peak(role, chosen, demand, ttft_extra_s)
    if single is None:
        cm = select_cycle_model(picks, picks.candidates, model, device, terms)
        at = tuple(picks.stacked([c.bound_tokens[i] for c in picks.candidates]) for i in range(2))
    else:
        cm, at = single.cycle_model, single.bound_tokens
    code, spilled = cm.bound_and_spill(*at)
    zero = 0.0 * code
    if role == "prefill":
        decode_cap = chosen.prefill_s
    elif role == "colocated":  # the seen lines are the decode lines plus the interference
        decode_cap = chosen.cycle_cap_s - interference(chosen.slots)
    else:
        decode_cap = chosen.cycle_cap_s
    out = PoolFigures(**picked, batch=figures.batch, tpot_s=figures.tpot_s, ttft_s=figures.ttft_s,
                      queue_wait_s=figures.queue_wait_s, step_s=figures.step_s,
                      interference_share=figures.interference_share, capacity_rps=derived["capacity_rps"],
                      feasible=derived["feasible"] > 0.5, tpot_met=derived["tpot_met"],
                      decode_bound=zero if role == "prefill" else code, prefill_bound=zero if role == "decode" else code,
                      spilled_bytes=zero if role == "prefill" else spilled,
                      prefill_tokens_per_s=derived["prefill_tokens_per_s"],
                      decode_tokens_per_s=derived["decode_tokens_per_s"], shape_index=index, decode_cap_s=decode_cap)
    return PoolServing(figures=out, shapes=tuple(shapes), role=role, candidates=candidates, chosen=chosen,
                       evaluate_candidate=evaluate_candidate)


def _derived(role: str, chosen: ChosenShape, demand: Demand) -> dict:
    """Outputs that follow from the chosen shape's terms (computed once, after the choice): ``capacity_rps`` [req/s],
    ``tpot_met`` and ``feasible`` [-], ``prefill_tokens_per_s`` and ``decode_tokens_per_s`` [tokens/s]."""
    capacity = chosen.lanes / chosen.prefill_work_s if role == "prefill" else chosen.slots / chosen.residence_s
    return dict(capacity_rps=capacity, tpot_met=chosen.tpot_ok, feasible=chosen.fits * chosen.tpot_ok * chosen.ttft_ok,
                prefill_tokens_per_s=chosen.lanes * demand.prompt_tokens / np.maximum(chosen.prefill_work_s, 1e-300),
                decode_tokens_per_s=times(demand.tokens_per_step, chosen.slots) / chosen.cycle_cap_s)


def _where_it_can_win(evaluate_candidate: Callable, inputs: tuple, k: int, fits, met) -> Candidate | None:
    """Candidate ``k`` evaluated only at the draws where it fits or where no candidate that fits in every draw meets the
    targets (``met``): its terms at those draws (1-D), with ``where`` (their indices) and ``draws_shape`` (the draws'
    shape). Elsewhere it is infeasible, its score 1e250 would never win, and no term of it is computed or spread.
    None when those draws are more than :data:`tco.core.serving.split.FEW_DRAWS_SHARE` (evaluate it everywhere) or an
    input varies along an axis the fit does not (a grid's other axis). The values at the evaluated draws are those of
    an evaluation at every draw (the candidate is elementwise in the draws)."""
    need = np.asarray(fits | ~np.asarray(met, bool))
    if np.count_nonzero(need) > FEW_DRAWS_SHARE * need.size:
        return None
    where = np.nonzero(need)
    try:
        at = at_draws(inputs, where, need.shape)
    except ValueError:  # an input does not broadcast to the fit's shape
        return None
    return replace(evaluate_candidate(k, at_draws(fits, where, need.shape), at), where=where, draws_shape=need.shape)


def _feasible_count(candidates: Sequence[Candidate]):
    """Candidates feasible per draw [-], a candidate evaluated at some draws (``where``) counting there only."""
    count = sum(c.feasible for c in candidates if c.where is None)
    for c in candidates:
        if c.where is not None:
            count = np.array(np.broadcast_to(count, c.draws_shape), float)
            count[c.where] += c.feasible
    return count
