"""The split of a colocated replica's TTFT slack and percentile budget between its slot queue and its lane queue.

A request waits for a slot (servers: ``R c_s`` slots held for ``D = O t(c_s) + S_pf`` each) and then for prefill
(``R x lanes`` lanes, service ``S_work``, what a prompt holds its lane for while prompts wait: chunked, the cycles
carrying its chunks, decode step included, :func:`tco.core.serving.cycles.prefill_service`). Both are multi-server
queues sized by square-root staffing (:mod:`tco.core.serving.queueing`) so that, at peak, the lane wait exceeds ``g``
of the TTFT slack (``T_ttft - S_pf - one cycle``) with probability at most ``g (1 - q)`` and the slot wait the rest
``1 - g`` of both; by Boole's inequality (the union bound) the TTFT percentile then holds for the sum, whatever ``g``.
The lane share ``g`` is chosen per draw among :data:`LANE_SHARES` (:func:`split_search`): the one that needs the
fewest replicas when sizing (:func:`split_replicas`), the one that carries the most when a fleet is given
(:func:`tco.core.serving.capacity.fleet_capacity_rps`). A disaggregated prefill pool has the lanes queue with the
whole slack, a decode pool the slot queue (:mod:`tco.core.serving.candidates`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tco.core.draws import any_draw, at_draws, every_draw
from tco.core.serving import queueing, sojourn

#: the lane queue's share ``g`` of a colocated replica's TTFT slack and percentile budget, tried per draw (the slot
#: queue gets ``1 - g`` of both; any split is a valid union bound). A fixed set, so the choice stays vectorized: at
#: one prefill lane and long prompts the lane needs nearly all (0.98), with short prompts and thousands of slots the
#: slot queue does (0.02); the even split is one of them. Measured on the validation cases, the best of a 9 x 9 grid of
#: separate slack and percentile shares carries at most 3 % more than the best of these.
LANE_SHARES = (0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98)

#: a candidate needed in at most this share of the draws (where it fits, or where its cost floor is below a feasible
#: shape's cost: :func:`tco.core.serving.search.size_pool`), or the colocated lanes' rule at mean lengths needed in at
#: most this share (:func:`split_replicas_where`), is evaluated at those draws only: gathering its inputs and spreading
#: its terms costs a pass per array, evaluating it hundreds. Measured in blocks of 65,536 all-drawn draws: 1/8 -> 1/2
#: took default 0.43 -> 0.50, voice-agent 0.24 -> 0.32, custom-asic 0.14 -> 0.155, fleet-split 0.28 -> 0.31 M
#: option-evaluations/s (0.7-0.9 no faster); the outputs are the same bit for bit
FEW_DRAWS_SHARE = 0.5
#: the same for the colocated lanes' rule with the prompts' length spread (:func:`split_replicas_where`), about four
#: times the work of the rule at mean lengths (17-22 against 4-6 ms per candidate and block), so gathering its inputs
#: pays up to a larger share. Before, both rules ran on every draw. Measured interleaved (benchmarks/ab.py, 4 rounds,
#: blocks of 65,536 all-drawn draws; the default's H100 shapes TP2/4/8 miss the TTFT with the longest prompts in
#: 48/23/11 % of the draws): the default 1.040x (0.5) / 1.063x (0.8) / 1.037x (0.9), voice-agent 1.018x / 1.033x /
#: 1.049x (the noise of such runs is ~2 %); the outputs are the same bit for bit
SPREAD_FEW_SHARE = 0.8


def split_search(evaluate_share: Callable, maximize: bool):
    """Binary search over :data:`LANE_SHARES` (sorted, ``2^k - 1`` of them: ``k`` probes per draw) for the share that
    gives the best figure, per draw.

    ``evaluate_share(g)`` returns ``(figure, lanes_bind)``: the figure at lane share ``g``
    (replicas needed, or rate carried) and whether the lane queue binds there. The slot queue's need grows with ``g``
    and the lanes' falls, so the best share is on one side of where they cross: the search moves up where the lanes
    bind, down elsewhere, and keeps the best figure probed (the two shares around the crossing are always probed: the
    neighbours of a value are on its search path). While every draw moves the same way the share stays one number.

    Parameters
    ----------
    evaluate_share : Callable
        ``evaluate_share(g) -> (figure, lanes_bind)`` at a lane share ``g`` [-].
    maximize : bool
        Keep the greatest figure (a rate carried) instead of the least (replicas needed).

    Returns
    -------
    tuple
        ``(figure, share g [-])`` per draw: the least (``maximize`` False) or greatest figure, at the first share probed
        that gives it.
    """
    index, step = (len(LANE_SHARES) - 1) // 2, (len(LANE_SHARES) + 1) // 4
    shares = np.asarray(LANE_SHARES)
    best = share = None
    while True:
        g = np.take(shares, index) if isinstance(index, np.ndarray) else LANE_SHARES[index]
        figure, lanes_bind = evaluate_share(g)
        if best is None:
            best, share = figure, 0.0 * figure + g
        else:  # arithmetic masks: np.where is slower on large arrays
            better = figure > best if maximize else figure < best
            share = share + better * (g - share)
            best = np.maximum(best, figure) if maximize else np.minimum(best, figure)
        if step == 0:
            return best, share
        if every_draw(lanes_bind):
            index = index + step
        elif not any_draw(lanes_bind):
            index = index - step
        else:
            index = index + step * (2 * np.asarray(lanes_bind, np.intp) - 1)
        step //= 2


def split_replicas(peak, residence_s, slots, work_s, lanes, slack_s, epsilon, own_s=0.0, prompt_scv=0.0):
    """Replicas of a colocated candidate at the best split of its TTFT slack and percentile budget, and that split.

    For a lane share ``g`` the slots are staffed so that ``P(W_slot > (1 - g) s) <= (1 - g) epsilon`` and the lanes so
    that ``P(W_lane > g s) <= g epsilon`` (:func:`tco.core.serving.queueing.servers_within_wait`); then
    ``P(W_slot + W_lane > s) <= P(W_slot > (1 - g) s) + P(W_lane > g s) <= epsilon`` (Boole's inequality), and
    ``R_g = max(slot servers / c_s, lane servers / x)``. The pool takes the least ``R_g`` over
    :data:`LANE_SHARES` (:func:`split_search`).

    Parameters
    ----------
    peak : float or ndarray [req/s]
        Peak request rate.
    residence_s, work_s : float or ndarray [s]
        Slot residence ``D`` and lane service ``S_work``.
    slots, lanes : float or ndarray [-]
        Slots ``c_s`` and prefill lanes ``x`` per replica.
    slack_s : float or ndarray [s]
        TTFT slack ``s`` of the two queues together.
    epsilon : float or ndarray [-]
        Percentile budget ``1 - q``.
    own_s : float or ndarray [s]
        The length-proportional part of the mean prompt's prefill, ``L`` (:func:`tco.core.serving.cycles.own_prefill_s`).
    prompt_scv : float or ndarray [-]
        Squared CV of the prompt length; above 0 the lanes are :func:`tco.core.serving.sojourn.lane_servers`'s.

    Returns
    -------
    tuple
        ``(replicas [replicas, continuous], lane share g [-])``, per draw.

    References
    ----------
    [boole-inequality] the union bound ``P(A or B) <= P(A) + P(B)``.
    [halfin-whitt-1981] square-root staffing.
    """
    # the parts that do not depend on the share, once: each queue's load, its square root and its decay at the whole slack
    slot_load, lane_load = np.maximum(peak * residence_s, 0.0), np.maximum(peak * work_s, 0.0)
    slot_root, lane_root = np.sqrt(slot_load), np.sqrt(lane_load)
    slot_decay, lane_decay = (queueing.decay_per_server(residence_s, slack_s, 0.0),
                              queueing.decay_per_server(work_s, slack_s, 0.0))
    lane_ratio = queueing.service_over_slack(work_s, slack_s)
    deterministic = sojourn.deterministic(prompt_scv)

    def needed(g):  # queueing.servers_within_wait of each queue at its share (lanes: kingman), from the parts computed once
        slot_servers = queueing.servers_at_decay(slot_load, slot_root, (1.0 - g) * slot_decay,
                                                 queueing.wait_log_term((1.0 - g) * epsilon))
        by_slots = slot_servers / slots
        if not deterministic:  # prompts of varying length (tco.core.serving.sojourn): the square-root rule first, as below
            lane_slack, lane_epsilon = g * slack_s, g * epsilon
            shortened = sojourn.shortened_slack_s(lane_slack, own_s, prompt_scv, lane_epsilon)
            lane_square_root = sojourn.square_root_lanes(lane_load, work_s, own_s, lane_slack, prompt_scv, lane_epsilon,
                                                         shortened, dispatched=True)
            if _lanes_cannot_bind(lane_square_root / lanes, by_slots):
                return by_slots, False
            kingman = queueing.kingman_utilization(work_s, lane_slack, 0.0, lane_epsilon)
            if sojourn.per_lane_cannot_win(lane_square_root, lane_load, kingman):
                by_lanes = lane_square_root / lanes
                return np.maximum(by_slots, by_lanes), by_lanes > by_slots
            by_lanes = np.minimum(lane_square_root, sojourn.per_lane_servers(lane_load, work_s, own_s, lane_slack, prompt_scv,
                                                                             lane_epsilon, lane_square_root, shortened,
                                                                             kingman)) / lanes
            return np.maximum(by_slots, by_lanes), by_lanes > by_slots
        lane_square_root = queueing.servers_at_decay(lane_load, lane_root, g * lane_decay, queueing.wait_log_term(g * epsilon),
                                                     dispatched=True)
        if _lanes_cannot_bind(lane_square_root / lanes, by_slots):
            return by_slots, False
        # queueing.kingman_servers with the lanes' S / slack computed once
        kingman = queueing.servers_at_utilization(
            lane_load, queueing.kingman_utilization_at(queueing.exceed_log_term(g * epsilon) / g * lane_ratio, 0.0))
        by_lanes = np.minimum(lane_square_root, kingman) / lanes
        return np.maximum(by_slots, by_lanes), by_lanes > by_slots

    return split_search(needed, maximize=False)


def split_replicas_where(ttft_ok, queues: tuple, lengths: tuple, wanted=True, floor=None):
    """:func:`split_replicas` with the prompts' length spread (``queues + lengths``) where the longest prompts can
    meet the TTFT target (``ttft_ok``), and at mean lengths (``queues``: the fleet flagged infeasible, no number of
    lanes suffices) elsewhere; where the replicas are not ``wanted`` (the candidate cannot win there), ``floor``.

    Each rule runs on its own draws only, gathered (:func:`tco.core.draws.at_draws`), when they are few (at most
    :data:`SPREAD_FEW_SHARE` of them for the rule with the spread, :data:`FEW_DRAWS_SHARE` for the one at mean
    lengths), else on every draw with the other's values written over its own where they apply. Both rules are
    elementwise in the draws, so the values are those of the two rules at every wanted draw, picked by ``ttft_ok``.

    Parameters
    ----------
    ttft_ok : bool or ndarray of bool [-]
        Where the lanes' slack covers the longest prompts' own prefill (:func:`tco.core.serving.cycles.own_prefill_fits`).
    queues : tuple
        ``(peak, residence_s, slots, work_s, lanes, slack_s, epsilon)`` as :func:`split_replicas` takes them.
    lengths : tuple
        ``(own_s, prompt_scv)``.
    wanted : bool or ndarray of bool [-]
        Where the replicas are needed.
    floor : float or ndarray or None [replicas]
        The replicas reported where they are not wanted (the lane share there 1/2), unless a rule ran at every draw:
        then that rule's figure (either rule needs at least the queues' load, the caller's floor).

    Returns
    -------
    tuple
        ``(replicas [replicas, continuous], lane share g [-])``, per draw.
    """
    everywhere = every_draw(wanted)
    if everywhere and every_draw(ttft_ok):
        return split_replicas(*queues, *lengths)
    if everywhere and not any_draw(ttft_ok):
        return split_replicas(*queues)
    shape = np.broadcast_shapes(np.shape(ttft_ok), np.shape(wanted), *(np.shape(x) for x in (*queues, *lengths)))
    if not any_draw(wanted):
        return np.array(np.broadcast_to(floor, shape), float), np.full(shape, 0.5)
    spread, wanted = np.broadcast_to(ttft_ok, shape), np.broadcast_to(wanted, shape)
    rules = ((spread & wanted, split_replicas, SPREAD_FEW_SHARE),
             (~spread & wanted, lambda *at: split_replicas(*at[:len(queues)]), FEW_DRAWS_SHARE))
    counts = [np.count_nonzero(mask) for mask, _, _ in rules]
    everywhere_rule = None  # the rule needed at the most draws runs on every draw where some rule needs many; the
    # other is written over it where it applies (both, once both needed many draws: the second was left unwritten)
    if any(count > few * mask.size for (mask, _, few), count in zip(rules, counts, strict=True)):
        everywhere_rule = int(np.argmax(counts))
        replicas, share = (np.array(np.broadcast_to(x, shape), float) for x in rules[everywhere_rule][1](*queues, *lengths))
    else:
        replicas, share = np.array(np.broadcast_to(floor, shape), float), np.full(shape, 0.5)
    for k, (mask, rule, _) in enumerate(rules):
        if k != everywhere_rule and mask.any():
            where = np.nonzero(mask)
            replicas[where], share[where] = rule(*at_draws((*queues, *lengths), where, shape))
    return replicas, share


def _lanes_cannot_bind(by_lanes_square_root, by_slots) -> bool:
    """Whether the lane queue binds in no draw whatever Kingman's bound gives: the square-root rule's lane need per
    replica is at most the slots' in every draw and the slots' is finite (no NaN, no infinity) and has the lanes' shape.

    Kingman's bound only lowers the lane need (``min(square root, Kingman) / x <= square root / x``, ``x >= 1`` lanes),
    so then ``max(slots, lanes)`` is the slots' figure bit for bit and the lanes never bind: the caller skips Kingman's
    bound. A finite square-root need has a finite load, service time and percentile, where Kingman's need is a number
    too (no NaN to propagate through the minimum); ``tests/test_serving.py`` checks the skip against the full rule.

    Parameters
    ----------
    by_lanes_square_root : float or ndarray [replicas]
        Lane servers by the square-root rule alone over the lanes per replica.
    by_slots : float or ndarray [replicas]
        Slot servers over the slots per replica.

    Returns
    -------
    bool
        True when the lanes' figure cannot exceed the slots' in any draw.
    """
    within = by_lanes_square_root <= by_slots  # false at a NaN
    if isinstance(by_slots, np.ndarray):
        return (by_slots.shape == np.shape(by_lanes_square_root) and bool(within.all())
                and by_slots.max(initial=-np.inf) < np.inf)
    return not isinstance(by_lanes_square_root, np.ndarray) and bool(within) and bool(by_slots < np.inf)
