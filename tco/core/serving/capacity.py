"""A pool's chosen replica shape at a load: its occupancy, percentile latencies and queueing delay, and the most a
fleet of it carries within the targets.

:func:`at_peak` reads the chosen shape (:class:`ChosenShape`) at the peak rate: the occupancy a request sees (the least
fixed point of the cycle lines), the percentile TPOT (the cycle at the occupancy seen at the percentile, plus the spread
of the prefill riding in it) and TTFT (the queues' waits at their shares of the percentile budget, Boole's inequality).
:func:`fleet_capacity_rps` inverts the sizing: the largest rate ``R`` replicas carry within the targets. The result of
:func:`tco.core.serving.search.size_pool` is a :class:`PoolServing`, its figures a :class:`PoolFigures`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from tco.core.serving import queueing, sojourn
from tco.core.serving.candidates import Candidate, ReplicaTerms
from tco.core.serving.cycles import interference_spread_s, own_prefill_s
from tco.core.serving.shapes import Demand
from tco.core.serving.split import LANE_SHARES, split_search
from tco.core.serving.steps import ConcaveLines, branch_min, least_fixed_point


@dataclass(frozen=True, kw_only=True)
class ChosenShape(ReplicaTerms):
    """The chosen candidate's terms per draw (picked field by field, :mod:`tco.core.serving.selection`), what
    :func:`at_peak` reads."""

    seen_lines: list | None = None
    """The cycle lines a request sees, one per branch (prefill pool: None) [s]."""
    interference: ConcaveLines | None = None
    """The prefill riding in a colocated replica's cycle at a decode occupancy (else None) [s]."""
    log_term: object = None
    """:func:`tco.core.serving.queueing.wait_log_term` of a prefill or decode pool's queue at peak (colocated, or at
    another load: None, computed per share) [-]."""


@dataclass(frozen=True, kw_only=True)
class AtPeak:
    """A pool's chosen shape at a load (:func:`at_peak`), arrays over draws."""

    batch: object
    """Mean decode occupancy per replica (prefill pool: 0) [sequences]."""
    tpot_s: object
    """Time per output token at the percentile, a step over the tokens it emits (prefill pool: 0) [s]."""
    ttft_s: object
    """Time to first token at the percentile, this pool's part (decode pool: 0) [s]."""
    queue_wait_s: object
    """Wait for a slot and for prefill at the percentile [s]."""
    step_s: object
    """Mean cycle time, prefill chunks included (prefill pool: one pass) [s]."""
    interference_share: object
    """Share of a colocated replica's mean cycle spent on prefill (else 0) [-]."""


@dataclass(frozen=True, kw_only=True)
class PoolFigures(AtPeak, ReplicaTerms):
    """What :func:`tco.core.serving.search.size_pool` reports per pool, for the chosen shape (arrays over draws): its
    :class:`ReplicaTerms` and the :class:`AtPeak` figures at peak load; the fields of :data:`PERFORMANCE_FIELDS` are
    the pool's :class:`tco.core.outputs.PoolPerformance`."""

    capacity_rps: object
    """Requests one replica carries per second with every slot (a prefill pool: lane) busy [req/s]."""
    feasible: object
    """Where the chosen shape fits and meets both targets [bool]."""
    tpot_met: object
    """1 where one sequence per replica meets the TPOT target [-]."""
    decode_bound: object
    """What limits a cycle at the slot cap: 0 memory bandwidth, 1 compute, 2 interconnect (prefill pool: 0) [-]."""
    prefill_bound: object
    """What limits a prefill cycle, coded as ``decode_bound`` (decode pool: 0) [-]."""
    spilled_bytes: object
    """Bytes per cycle at the slot cap beyond the fastest tier (prefill pool: 0) [B]."""
    prefill_tokens_per_s: object
    """Prompt tokens one replica prefills per second with every lane busy [tokens/s]."""
    decode_tokens_per_s: object
    """Output tokens per second per replica with every slot busy [tokens/s]."""
    shape_index: object
    """Index of the chosen shape in the pool's candidate shapes [-]."""
    decode_cap_s: object
    """The decode-only cycle at the slot cap, ``t_d(c_s)`` (prefill pool: one pass) [s]."""


_COMMON = ("devices_per_replica", "tensor_parallel", "pipeline_stages", "expert_parallel", "data_parallel", "micro_batches",
           "capacity_rps", "queue_wait_s")
_PREFILL = ("prefill_s", "prefill_tokens_per_s", "prefill_bound", "ttft_s")
_DECODE = ("slots", "slots_allowed", "batch", "step_s", "tpot_s", "decode_tokens_per_s", "decode_bound", "spilled_bytes",
           "tpot_met")
#: the :class:`tco.core.outputs.PoolPerformance` fields of each role (fields of :class:`PoolFigures`)
PERFORMANCE_FIELDS = {"colocated": _COMMON + _PREFILL + _DECODE + ("interference_share",),
                      "prefill": _COMMON + _PREFILL, "decode": _COMMON + _DECODE}


@dataclass(frozen=True, kw_only=True)
class PoolServing:
    """The chosen shape of one pool and what it gives at peak (arrays over draws).

    ``chosen`` keeps the chosen shape's terms (cycle lines, slot residence, prefill work) so that :meth:`at_load` can
    re-read it at another load or fleet size (validation against measured systems); ``candidates`` every candidate's
    (None for a shape that fits in no draw and was skipped because another shape meets the targets in every draw, or
    that fits in few draws and was evaluated at those only, or whose queues were sized where it can win only:
    :meth:`candidate` evaluates it at every draw).
    """

    figures: PoolFigures
    """The chosen shape's figures at peak."""
    shapes: tuple = ()
    """The pool's candidate replica shapes."""
    role: str = "colocated"
    """``colocated``, ``prefill`` or ``decode``."""
    candidates: list = field(default_factory=list, repr=False)
    """Each candidate shape's :class:`tco.core.serving.candidates.Candidate`, or None (not evaluated at every draw)."""
    chosen: ChosenShape | None = field(default=None, repr=False)
    """The chosen shape's terms per draw."""
    evaluate_candidate: Callable[[int], Candidate] | None = field(default=None, repr=False)
    """Evaluates candidate ``k`` at every draw."""

    def __getitem__(self, name: str):
        """A figure by its name (a field of :class:`PoolFigures`)."""
        return getattr(self.figures, name)

    def candidate(self, k: int) -> Candidate:
        """The terms of candidate shape ``k`` (evaluated now if it was skipped).

        Parameters
        ----------
        k : int [-]
            Index into the pool's candidate shapes.

        Returns
        -------
        Candidate
            The candidate's terms (arrays, units as in :class:`tco.core.serving.candidates.Candidate`).
        """
        if self.candidates[k] is None:
            self.candidates[k] = self.evaluate_candidate(k)
        return self.candidates[k]

    def seen_cycle_s(self, batch):
        """Mean cycle a request of the chosen shape sees at a decode occupancy: the decode cycle plus, colocated,
        the prefill riding in it, ``t_d(B) + (P/O) chi B`` (:mod:`tco.core.serving.cycles`).

        Parameters
        ----------
        batch : float or ndarray [sequences]
            Decode sequences in flight per replica, ``B``.

        Returns
        -------
        ndarray [s]
            The cycle at ``B``, per draw.
        """
        return branch_min([line(batch) for line in self.chosen.seen_lines])

    def at_load(self, demand: Demand, replicas, ttft_extra_s=0.0) -> AtPeak:
        """Percentile TTFT and TPOT, queueing delay and occupancy of the chosen shape with ``replicas`` replicas at peak demand.

        Parameters
        ----------
        demand : Demand
            The workload; its ``peak_requests_per_s`` [req/s] is served.
        replicas : float or ndarray [replicas]
            Replicas provisioned.
        ttft_extra_s : float or ndarray [s]
            Time taken out of the TTFT budget before this pool.

        Returns
        -------
        AtPeak
            ``ttft_s``, ``tpot_s``, ``queue_wait_s`` [s] and the occupancy [sequences], arrays. Colocated, the TTFT
            is the shortest bound over :data:`tco.core.serving.split.LANE_SHARES` (each split is a valid union bound;
            the one the pool was sized with at its own peak need not be the best at this load).
        """
        terms = replace(self.chosen, replicas=replicas + 0.0 * self.chosen.replicas, log_term=None)
        if self.role != "colocated":
            return at_peak(self.role, terms, demand, ttft_extra_s)
        out = None
        for g in LANE_SHARES:  # only the waits depend on the split: keep the shortest, per draw
            figures = at_peak(self.role, replace(terms, lane_share=g), demand, ttft_extra_s)
            if out is None:
                out = figures
            else:
                out = replace(out, ttft_s=np.minimum(out.ttft_s, figures.ttft_s),
                              queue_wait_s=np.minimum(out.queue_wait_s, figures.queue_wait_s))
        return out


def at_peak(role: str, c: ChosenShape, demand: Demand, ttft_extra_s) -> AtPeak:
    """Occupancy, percentile TPOT and TTFT and queueing delay of a pool's shape at the peak rate.

    Parameters
    ----------
    role : str
        ``colocated``, ``prefill`` or ``decode``.
    c : ChosenShape
        The shape's terms: replicas [replicas], slots [sequences], prefill [s], lanes [lanes], residence [s], slack
        [s], lane share [-], cycle lines [s] and the queue's log term when known (else None) [-].
    demand : Demand
        The peak rate [req/s], output length [tokens], percentile [-] and prompt length spread [-].
    ttft_extra_s : float or ndarray [s]
        Time taken out of the TTFT budget before this pool.

    Returns
    -------
    AtPeak
        Occupancy [sequences], TPOT and TTFT at the percentile [s], queueing delay [s], mean cycle [s] and the share
        of it in prefill [-].
    """
    epsilon = 1.0 - demand.percentile
    peak, replicas, log_term = demand.peak_requests_per_s, c.replicas, c.log_term
    if role == "prefill":
        service, work, lanes = c.prefill_s, c.prefill_work_s, c.lanes
        wait = sojourn.lane_wait_s(peak * work, replicas * lanes, work, own_prefill_s(work, service), demand.prompt_scv,
                                   epsilon, c.slack_s, log_term, demand.prefill_dispatched)
        zero = 0.0 * wait
        return AtPeak(queue_wait_s=wait, ttft_s=service + wait + ttft_extra_s, batch=zero, tpot_s=zero,
                      step_s=service + zero, interference_share=zero)
    seen, slots, output = c.seen_lines, c.slots, demand.decode_steps
    gain = peak / replicas * output
    occupancy = np.minimum(branch_min([least_fixed_point(b, gain) for b in seen]), slots)
    z = queueing.normal_quantile(demand.percentile)
    seen_batch = np.minimum(queueing.occupancy_seen_quantile(occupancy, z), slots)
    cycle_mean = branch_min([b(occupancy) for b in seen])
    tpot = branch_min([b(seen_batch) for b in seen])
    if role == "colocated" and not sojourn.deterministic(demand.prompt_scv):
        tpot = tpot + interference_spread_s(c.interference, seen_batch, demand.prompt_scv, epsilon)
    residence = c.residence_s
    if role == "colocated":
        service, work, lanes = c.prefill_s, c.prefill_work_s, c.lanes
        g, slack = c.lane_share, c.slack_s  # the split the replicas were sized for (split_replicas)
        wait = (queueing.wait_quantile_s(peak * residence, replicas * slots, residence, 0.0, (1.0 - g) * epsilon,
                                         (1.0 - g) * slack)
                + sojourn.lane_wait_s(peak * work, replicas * lanes, work, own_prefill_s(work, service), demand.prompt_scv,
                                      g * epsilon, g * slack, dispatched=True))
        ttft = c.cycle_cap_s + service + wait + ttft_extra_s
        # a cycle of 0 s only at no occupancy (an MoE weight line whose fixed part is 0: every weight routed), where
        # no prefill rides either
        interference = c.interference(occupancy) / np.where(cycle_mean > 0.0, cycle_mean, 1.0)
    else:
        wait = queueing.wait_quantile_s(peak * residence, replicas * slots, residence, 0.0, epsilon, c.slack_s, log_term)
        tpot = np.maximum(tpot, cycle_mean + wait)
        ttft = 0.0 * tpot
        interference = ttft
    if demand.speculation is not None:  # a step emits tau tokens per sequence
        tpot = tpot / demand.tokens_per_step
    return AtPeak(batch=occupancy, tpot_s=tpot, ttft_s=ttft, queue_wait_s=wait, step_s=cycle_mean,
                  interference_share=interference)


class ReplicaFigures(Protocol):
    """What :func:`fleet_capacity_rps` reads of a replica shape; a :class:`tco.core.serving.candidates.ReplicaTerms`
    (a candidate, the chosen shape, a pool's :class:`PoolFigures`) has it."""

    slots: object
    """Slot cap [sequences]."""
    lanes: object
    """Prefill lanes per replica [lanes]."""
    residence_s: object
    """Slot residence [s]."""
    prefill_work_s: object
    """Lane time of one prompt while prompts wait [s]."""
    prefill_s: object
    """Prefill of one prompt once started [s]."""
    cycle_cap_s: object
    """The cycle a request sees at the slot cap [s]."""


def fleet_capacity_rps(role: str, figures: ReplicaFigures, replicas, demand: Demand, ttft_extra_s=0.0):
    """Largest request rate ``R`` replicas of a pool's shape carry within the percentile targets.

    The inverse of the sizing: each queue's servers (``R c_s`` slots, ``R x lanes`` lanes)
    carry at most :func:`tco.core.serving.queueing.offered_load_within_wait` Erlangs, so the rate is
    the smaller of ``A_slots / D`` and ``A_lanes / S_work`` (one queue for a prefill or decode
    pool); colocated, at the best of :data:`tco.core.serving.split.LANE_SHARES` (the lanes get ``g`` of the slack and
    of the percentile budget, the slots ``1 - g``: Boole's inequality, :func:`tco.core.serving.split.split_replicas`).
    Measured systems of a given size (MLPerf: 8 GPUs) are checked this way, and the hourly stranded-capacity
    simulation uses it for the provisioned fleet.

    Parameters
    ----------
    role : str
        ``colocated``, ``prefill`` or ``decode``.
    figures : ReplicaFigures
        The shape's prefill [s], lane time [s], lanes [lanes], residence [s], cycle at the cap [s] and slots
        [sequences]: a pool's :class:`PoolFigures` (``PoolServing.figures``), or a candidate's terms.
    replicas : float or ndarray [replicas]
        Replicas provisioned ``R``.
    demand : Demand
        Targets [s] and percentile [-].
    ttft_extra_s : float or ndarray [s]
        Time taken out of the TTFT budget before this pool.

    Returns
    -------
    ndarray [req/s]
        The largest request rate within the targets.

    References
    ----------
    [halfin-whitt-1981] square-root staffing, inverted.
    """
    v = figures
    epsilon = 1.0 - demand.percentile
    if role == "prefill":
        slack = demand.ttft_target_s - v.prefill_s - ttft_extra_s
        work = v.prefill_work_s
        return sojourn.lane_load(replicas * v.lanes, work, own_prefill_s(work, v.prefill_s), slack, demand.prompt_scv,
                                 epsilon, demand.prefill_dispatched) / work
    residence = v.residence_s
    if role == "decode":
        slack = demand.step_target_s - v.cycle_cap_s
        return queueing.offered_load_within_wait(replicas * v.slots, residence, slack, 0.0, epsilon) / residence
    slack = demand.ttft_target_s - v.prefill_s - v.cycle_cap_s - ttft_extra_s
    work = v.prefill_work_s
    own = own_prefill_s(work, v.prefill_s)

    def carried(g):
        slots = queueing.offered_load_within_wait(replicas * v.slots, residence, (1.0 - g) * slack, 0.0,
                                                  (1.0 - g) * epsilon) / residence
        lanes = sojourn.lane_load(replicas * v.lanes, work, own, g * slack, demand.prompt_scv, g * epsilon,
                                  dispatched=True) / work
        return np.minimum(slots, lanes), lanes < slots

    return split_search(carried, maximize=True)[0]
