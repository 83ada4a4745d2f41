"""Serving under load: continuous batching, prefill interference, queueing, percentile sizing, shape search.

One function, :func:`size_pool`, sizes one pool of replicas (colocated, prefill-only or
decode-only) for the peak request rate so that the **percentile** latency targets hold,
for every candidate replica shape (:mod:`tco.core.serving.parallelism`), and keeps the cheapest
shape that meets them, draw by draw. Everything is a closed form or a fixed number of
vectorized steps (DESIGN.md section 8; docs/model.md "Serving under load").

**Continuous batching.** A replica runs cycles (:mod:`tco.core.serving.steps`); the serving stack
caps the number of sequences in flight (``max_num_seqs``) at the **slot cap**
``c_s = floor(min(B_T, B_mem, max_batch, B_budget))``: ``B_T`` the largest occupancy whose
mean cycle meets the TPOT target, ``B_mem`` what the KV cache holds, ``B_budget`` the
occupancy whose prefill the token budget can still absorb. Every request's TPOT is then
at most the cycle time at the cap, whatever the load; load fluctuations show up as
waiting for a slot, which counts in TTFT.

**Prefill interference (colocated).** By Little's law a replica whose mean decode
occupancy is ``B`` admits ``B / O`` requests per cycle, i.e. ``B P / O`` prefill tokens per
cycle on average. Each prefill token costs ``chi`` seconds of replica time:

* ``chunked`` (Sarathi-Serve, Agrawal et al., OSDI 2024; vLLM V1 default; SGLang,
  TensorRT-LLM in-flight batching): decode tokens first, then prefill chunks up to the
  token budget ``tau`` per micro-batch (``max_num_batched_tokens``); a prefill token rides
  in a decode cycle at the marginal cost ``chi = (t(0, p tau) - t(0, 0)) / (p tau)``;
* ``prefill_first`` (vLLM V0, Orca-style): waiting prompts run as separate passes of up
  to ``tau`` tokens that stall decoding; ``chi = t(0, N_f) / N_f`` with ``N_f = p k_b P``.

The user-seen mean cycle is ``t(B) = t_d(B) + (P/O) chi B`` -- still a maximum of lines. A request's TPOT is the
mean of its cycles, whose prefill comes from the ``~B`` prompts admitted meanwhile: at the percentile it exceeds the
mean cycle by :func:`interference_spread_s` (the prompts' length spread), which the slot cap and ``tpot_s`` count.

**Queueing and percentiles.** A request waits for a slot (servers: ``R c_s`` slots held
for ``D = O t(c_s) + S_pf`` each) and then for prefill (``R x lanes`` lanes, service
``S_work``, what a prompt holds its lane for while prompts wait: chunked, the cycles carrying its
chunks, decode step included, :func:`_prefill_service`). Both are multi-server queues sized by square-root staffing
(:mod:`tco.core.serving.queueing`) so that, at peak, the lane wait exceeds ``g`` of the TTFT slack
(``T_ttft - S_pf - one cycle``) with probability at most ``g (1 - q)`` and the slot wait the rest
``1 - g`` of both; by Boole's inequality (the union bound) the TTFT percentile then holds for the
sum, whatever ``g``. The lane share ``g`` is chosen per draw among :data:`LANE_SHARES`: the one that
needs the fewest replicas when sizing, the one that carries the most when a fleet is given
(:func:`fleet_capacity_rps`). A disaggregated prefill pool has the lanes queue with
the whole slack (KV transfer taken off), shared (one queue its idle replicas pull from) or dispatched (a router binds
each prompt to one replica at arrival), as :data:`PREFILL_QUEUES` says; a decode pool has the slot queue, whose wait
delays the second token: the gap between the first and the second token (cycle plus wait)
must meet the TPOT target at the percentile, so the slack is ``T_tpot - t_d(c_s)``
(stricter than MLPerf's per-request mean TPOT, which would let a request wait seconds for
a slot and still pass).

**Shape search.** Each candidate shape gets its replica count ``R``; the pool keeps, per
draw, the feasible candidate with the lowest ``R n x cost per device-hour``; when none
is feasible the one nearest to its TPOT target is reported (and flagged infeasible).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from tco.core.draws import any_draw, as_floats, at_draws, every_draw, flag_value, mask_bits, maximum, minimum, select_bits
from tco.core.serving import parallelism, queueing, sojourn
from tco.core.serving.roofline import memory_read_time_s
from tco.core.serving.sizing import WHOLE_COUNT_GUARD
from tco.core.serving.steps import (
    ConcaveLines,
    CycleModel,
    Lines,
    branch_max,
    branch_min,
    largest_within,
    least_fixed_point,
    overlap_keeps,
    times,
)

POLICIES = ("chunked", "prefill_first")
#: how prompts reach a disaggregated prefill pool (``Demand.prefill_queue``): ``shared``, one queue whose next prompt
#: goes to the first replica to free (a global prefill queue the workers pull from); ``dispatched``, a router binds
#: each prompt to one replica at arrival, so one that finds every lane busy waits out its own replica's work
#: (:mod:`tco.core.serving.queueing`, the colocated lanes' rule; docs/model.md "Dispatched lanes")
PREFILL_QUEUES = ("shared", "dispatched")
ROLES = ("colocated", "prefill", "decode")

#: the lane queue's share ``g`` of a colocated replica's TTFT slack and percentile budget, tried per draw (the slot
#: queue gets ``1 - g`` of both; any split is a valid union bound). A fixed set, so the choice stays vectorized: at
#: one prefill lane and long prompts the lane needs nearly all (0.98), with short prompts and thousands of slots the
#: slot queue does (0.02); the even split is one of them. Measured on the validation cases, the best of a 9 x 9 grid of
#: separate slack and percentile shares carries at most 3 % more than the best of these.
LANE_SHARES = (0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98)

#: rounding guard of whole token and slot counts (copied into the workbook; not an assumption)
FLOOR_GUARD = 1e-9
CEIL_GUARD = 1e-9


@dataclass(frozen=True)
class Demand:
    """Workload and serving settings seen by every pool (arrays broadcast over draws)."""

    prompt_tokens: object
    output_tokens: object
    peak_requests_per_s: object
    mean_requests_per_s: object
    ttft_target_s: object
    tpot_target_s: object
    percentile: object
    max_batch: object
    token_budget: object
    memory_compute_overlap: object
    phase_overlap: object
    comm_overlap: object
    policy: str = "chunked"
    prompt_scv: object = 0.0  # squared CV of the prompt length [-] (tco.core.serving.sojourn; 0: every prompt at the mean)
    prefill_queue: str = "shared"  # a disaggregated prefill pool's queue (:data:`PREFILL_QUEUES`)

    @property
    def prefill_dispatched(self) -> bool:
        """Whether a disaggregated prefill pool's prompts are dispatched at arrival (:data:`PREFILL_QUEUES`)."""
        return self.prefill_queue == "dispatched"


@dataclass(frozen=True)
class ModelShape:
    """The model as the cycle needs it (arrays) plus its static shape facts."""

    weight_bytes: object                 # stored weights [B]
    read_fixed_bytes: object             # MoE: weight bytes read per micro-batch = fixed + per_token x tokens
    read_per_token_bytes: object
    weight_flops_per_token: object       # 2 A
    kv_bytes_per_token: object           # k (one copy)
    layers: object
    attention_dim: object
    hidden_size: object
    experts_per_token: object
    collective_element_bytes: object     # bytes per element a collective moves (serving.collective_bits / 8)
    kv_heads: float                      # static (1 for latent attention)
    moe: bool
    routed_flops_per_token: object = 0.0  # MoE: the part of 2 A in the routed experts' GEMMs, 2 k E (dense: 0)


@dataclass(frozen=True)
class DeviceShape:
    """One device type (arrays per device): memory tiers, compute, interconnect."""

    tier_capacity_bytes: tuple
    tier_bandwidth_bytes_per_s: tuple
    usable_fraction: object
    bandwidth_efficiency: object
    flops_per_s: object                  # peak at the compute width x compute efficiency
    sync_latency_s: object
    scale_up_bytes_per_s: object
    scale_out_bytes_per_s: object
    domain_devices: object
    min_devices: object = 1.0
    cycle_overhead_s: object = 0.0       # fixed time per cycle (every micro-batch advances one pass) [s]
    collective_efficiency: object = 1.0  # share of the link bandwidth the collectives reach [-]
    expert_compute_efficiency: object = 1.0  # the routed-expert GEMMs' share of the dense compute efficiency [-]
    streamed_prefill: bool = False       # static: a prompt's tokens stream through the pipeline stages (dataflow parts)


@dataclass
class PoolServing:
    """The chosen shape of one pool and what it gives at peak (arrays over draws).

    ``chosen`` keeps the chosen shape's terms (cycle lines, slot residence, prefill work) so
    that :meth:`at_load` can re-read it at another load or fleet size (validation against
    measured systems); ``candidates`` every candidate's (None for a shape that fits in no draw and
    was skipped because another shape meets the targets in every draw, or that fits in few draws and was
    evaluated at those only: :meth:`candidate` evaluates it at every draw).
    """

    values: dict = field(default_factory=dict)
    shapes: tuple = ()
    role: str = "colocated"
    candidates: list = field(default_factory=list, repr=False)
    chosen: dict = field(default_factory=dict, repr=False)
    evaluate_candidate: Callable[[int], dict] | None = field(default=None, repr=False)

    def __getitem__(self, key):
        return self.values[key]

    def candidate(self, k: int) -> dict:
        """The terms of candidate shape ``k`` (evaluated now if it was skipped).

        Parameters
        ----------
        k : int [-]
            Index into the pool's candidate shapes.

        Returns
        -------
        dict
            The candidate's figures by name (arrays, units as in :func:`size_pool`).
        """
        if self.candidates[k] is None:
            self.candidates[k] = self.evaluate_candidate(k)
        return self.candidates[k]

    def seen_cycle_s(self, batch):
        """Mean cycle a request of the chosen shape sees at a decode occupancy: the decode cycle plus, colocated,
        the prefill riding in it, ``t_d(B) + (P/O) chi B`` (the module docstring).

        Parameters
        ----------
        batch : float or ndarray [sequences]
            Decode sequences in flight per replica, ``B``.

        Returns
        -------
        ndarray [s]
            The cycle at ``B``, per draw.
        """
        return branch_min([line(batch) for line in self.chosen["_seen"]])

    def at_load(self, demand: Demand, replicas, ttft_extra_s=0.0) -> dict:
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
        dict
            ``ttft_s``, ``tpot_s``, ``queue_wait_s`` [s] and the occupancy [sequences], arrays. Colocated, the TTFT
            is the shortest bound over :data:`LANE_SHARES` (each split is a valid union bound; the one the pool was
            sized with at its own peak need not be the best at this load).
        """
        terms = {**self.chosen, "replicas": replicas + 0.0 * self.chosen["replicas"], "_log_term": None}
        if self.role != "colocated":
            return _at_peak(self.role, terms, demand, ttft_extra_s)
        out = None
        for g in LANE_SHARES:  # only the waits depend on the split: keep the shortest, per draw
            figures = _at_peak(self.role, {**terms, "_lane_share": g}, demand, ttft_extra_s)
            if out is None:
                out = figures
            else:
                out.update(ttft_s=np.minimum(out["ttft_s"], figures["ttft_s"]),
                           queue_wait_s=np.minimum(out["queue_wait_s"], figures["queue_wait_s"]))
        return out


@dataclass(frozen=True)
class _PoolTerms:
    """Shape-independent terms of a pool, computed once per :func:`size_pool` call."""

    context: object
    decode_attention_flops: object
    prefill_attention_flops: object
    prefill_kv_factor: object
    device_capacity_bytes: tuple
    device_bandwidth_bytes_per_s: tuple
    sequence_kv_bytes: object = None     # KV bytes of one sequence (prompt, plus output unless prefill-only)
    total_kv_bytes: object = None        # KV bytes of one whole sequence, P + O tokens
    ratio: object = 0.0                  # P / O when colocated (prefill tokens per decode token), else 0
    log_term: object = 0.0               # ln(1 / (2 epsilon)) of a queue that holds the whole percentile budget epsilon
    scale_up_bytes_per_s: object = 0.0   # the links' bandwidth the collectives reach, per device [B/s]
    scale_out_bytes_per_s: object = 0.0
    keeps: tuple | None = None           # 1 - o of the overlaps (:func:`tco.core.serving.steps.overlap_keeps`)
    decode_kv_bytes: object = None       # KV bytes read per decode token at the mean context, one copy [B/token]
    prefill_kv_bytes: object = None      # KV bytes read per prefill token, one copy [B/token]
    #: static: the pool's candidates bound their prefill interference with two lines (micro-batch pipelines, see
    #: :func:`interference_lines`); every candidate of a pool has the same line structure
    two_interference_lines: bool = False


def _pool_terms(model: ModelShape, device: DeviceShape, demand: Demand, role: str) -> _PoolTerms:
    prompt = demand.prompt_tokens
    context = prompt + 0.5 * demand.output_tokens
    factor = 1.0
    if demand.policy == "chunked" and role == "colocated":  # each chunk re-reads the prompt's earlier chunks
        factor = 1.0 + 0.5 * maximum(prompt / demand.token_budget - 1.0, 0.0)
    total = (prompt + demand.output_tokens) * model.kv_bytes_per_token
    sequence = prompt * model.kv_bytes_per_token if role == "prefill" else total
    epsilon = 1.0 - demand.percentile
    colocated = role == "colocated"
    return _PoolTerms(context, 4.0 * model.layers * model.attention_dim * context,
                      2.0 * model.layers * model.attention_dim * prompt, factor,
                      tuple(c * device.usable_fraction for c in device.tier_capacity_bytes),
                      tuple(b * device.bandwidth_efficiency for b in device.tier_bandwidth_bytes_per_s),
                      sequence, total, prompt / demand.output_tokens if colocated else 0.0,
                      0.0 if colocated else queueing.wait_log_term(epsilon),
                      device.scale_up_bytes_per_s * device.collective_efficiency,
                      device.scale_out_bytes_per_s * device.collective_efficiency,
                      overlap_keeps(demand.memory_compute_overlap, demand.phase_overlap, demand.comm_overlap),
                      context * model.kv_bytes_per_token, times(factor, model.kv_bytes_per_token))


def effective_weight_flops_per_token(model: ModelShape, device: DeviceShape):
    """FLOPs per token of the weight phase at the device's dense compute efficiency, ``2 A + 2 k E (1/eta_e - 1)``.

    A mixture-of-experts model's routed-expert GEMMs (``2 k E`` of ``2 A`` per token: ``k`` experts of ``E`` parameters
    each) run at ``eta_e`` of the dense GEMMs' efficiency: each expert multiplies only its share of the batch
    (``k / n_experts`` of the tokens), grouped GEMMs fill fewer tiles, and the tokens are routed (top-k gating,
    permutation and its inverse) [megablocks-2023]. Counting them as ``1/eta_e`` times the FLOPs keeps the cycle linear
    in the tokens. Dense models and ``eta_e = 1`` give ``2 A``.

    Parameters
    ----------
    model : ModelShape
        ``2 A`` (``weight_flops_per_token``) and its routed part ``2 k E`` (``routed_flops_per_token``) [FLOP/token].
    device : DeviceShape
        ``expert_compute_efficiency`` ``eta_e`` [-].

    Returns
    -------
    float or ndarray [FLOP/token]
        FLOPs per token the weight phase is charged at the dense efficiency.

    References
    ----------
    [megablocks-2023] grouped expert GEMMs and token routing.
    """
    if not model.moe or (type(device.expert_compute_efficiency) in (float, int) and device.expert_compute_efficiency == 1):
        return model.weight_flops_per_token
    return model.weight_flops_per_token + model.routed_flops_per_token * (1.0 / device.expert_compute_efficiency - 1.0)


def cycle_model(shape: parallelism.Shape, model: ModelShape, device: DeviceShape, demand: Demand, role: str,
                terms: _PoolTerms | None = None) -> CycleModel:
    """The :class:`CycleModel` of a replica of ``shape`` devices.

    Parameters
    ----------
    shape : Shape
        The replica shape (tensor, pipeline, expert parallel).
    model : ModelShape
        The model's bytes [B], FLOPs [FLOP/token] and attention shape.
    device : DeviceShape
        The device's tiers [B, B/s], compute [FLOP/s] and links [B/s, s].
    demand : Demand
        Request lengths [tokens], targets [s] and serving settings.
    role : str
        ``colocated``, ``prefill`` or ``decode``.
    terms : _PoolTerms or None
        The pool's shape-independent terms when already computed.

    Returns
    -------
    CycleModel
        The replica's cycle time [s] as a function of its decode and prefill tokens.
    """
    terms = terms or _pool_terms(model, device, demand, role)
    n = float(shape.devices)
    replication = parallelism.kv_replication(shape.tensor, model.kv_heads)
    if terms.decode_kv_bytes is not None and not isinstance(replication, np.ndarray) and replication == 1:
        decode_kv, prefill_kv = terms.decode_kv_bytes, terms.prefill_kv_bytes  # one copy: the pool's, computed once
    else:
        k = times(replication, model.kv_bytes_per_token)
        decode_kv, prefill_kv = terms.context * k, terms.prefill_kv_factor * k
    return CycleModel(
        pipeline=shape.pipeline,
        weight_bytes=model.weight_bytes,
        read_fixed_bytes=model.read_fixed_bytes,
        read_per_token_bytes=model.read_per_token_bytes,
        moe=model.moe,
        weight_flops_per_token=effective_weight_flops_per_token(model, device),
        decode_kv_bytes_per_token=decode_kv,
        decode_attention_flops_per_token=terms.decode_attention_flops,
        prefill_kv_bytes_per_token=prefill_kv,
        prefill_attention_flops_per_token=terms.prefill_attention_flops,
        flops_per_s=times(n, device.flops_per_s),
        tier_capacity_bytes=tuple(times(n, c) for c in terms.device_capacity_bytes),
        tier_bandwidth_bytes_per_s=tuple(times(n, b) for b in terms.device_bandwidth_bytes_per_s),
        sync_fixed_s=parallelism.sync_latency_per_cycle_s(shape, model.layers, device.sync_latency_s)
        + device.cycle_overhead_s,
        sync_per_token_s=parallelism.sync_time_per_token_s(
            shape, model.layers, model.hidden_size, model.collective_element_bytes, model.experts_per_token,
            terms.scale_up_bytes_per_s, terms.scale_out_bytes_per_s, device.domain_devices),
        memory_compute_overlap=demand.memory_compute_overlap,
        phase_overlap=demand.phase_overlap,
        comm_overlap=demand.comm_overlap,
        keeps=terms.keeps,
    )


def prefill_pass_prompts(cm: CycleModel, demand: Demand):
    """Prompts run together in one whole-prompt prefill pass, ``k_b``.

    Batching prompts pays only while the pass is bound by the weight read: up to the
    weight phase's ridge point ``N_r = p t_mem(W) / (2A / F)`` tokens, and never beyond the
    token budget: ``k_b = max(1, min(floor(tau / P), ceil(N_r / P)))``. Long prompts run alone.

    Parameters
    ----------
    cm : CycleModel
        The replica's cycle model.
    demand : Demand
        Prompt length ``P`` [tokens] and token budget ``tau`` [tokens].

    Returns
    -------
    ndarray [prompts]
        Prompts per prefill pass, at least 1.

    References
    ----------
    [williams-roofline-2009] the ridge point between memory- and compute-bound.
    """
    ridge = times(cm.pipeline, memory_read_time_s(cm.full_read_bytes, cm.tier_capacity_bytes, cm.tier_bandwidth_bytes_per_s)) \
        * cm.flops_per_s / cm.weight_flops_per_token
    fit = np.floor(demand.token_budget / demand.prompt_tokens + FLOOR_GUARD)
    useful = np.ceil(ridge / demand.prompt_tokens - CEIL_GUARD)
    return maximum(minimum(fit, useful), 1.0)


def prefill_token_cost_s(cm: CycleModel, demand: Demand, idle_cycle_s=None):
    """Replica time per prefill token, ``chi``, by scheduling policy (module docstring).

    Parameters
    ----------
    cm : CycleModel
        The replica's cycle model.
    demand : Demand
        Scheduling policy, token budget [tokens] and prompt length [tokens].
    idle_cycle_s : float or ndarray or None [s]
        ``t(0, 0)`` when the caller has it (the decode lines at B = 0).

    Returns
    -------
    ndarray [s/token]
        Replica time per prefill token.

    References
    ----------
    [sarathi-serve-osdi2024] chunked prefill under a token budget.
    """
    p = cm.pipeline
    if demand.policy == "chunked":
        full = times(p, demand.token_budget)
        idle = cm.cycle_s(0.0, 0.0) if idle_cycle_s is None else idle_cycle_s
        return (cm.cycle_s(0.0, full) - idle) / full
    tokens = times(p, prefill_pass_prompts(cm, demand)) * demand.prompt_tokens
    return cm.cycle_s(0.0, tokens) / tokens


def has_micro_batch_pipelines(role: str, streamed_prefill: bool, shapes: Sequence[parallelism.Shape]) -> bool:
    """Whether a pool's prefill interference takes the lines of micro-batch pipelines (:func:`interference_lines`):
    colocated, on a device whose stages take a prompt's chunk as one micro-batch, with a pipelined candidate.

    Parameters
    ----------
    role : str
        ``colocated``, ``prefill`` or ``decode``.
    streamed_prefill : bool
        Whether the device's stages stream a prompt's tokens (``pipeline_prefill: streamed``).
    shapes : Sequence of Shape
        The pool's candidate shapes.

    Returns
    -------
    bool
        Every candidate of the pool then bounds its interference with the same lines.
    """
    return role == "colocated" and not streamed_prefill and any(shape.pipeline > 1 for shape in shapes)


def interference_lines(chi, ratio, pipeline, micro_batch_tokens, two_lines: bool, budget_tokens=None,
                       prompt_scv=0.0) -> ConcaveLines:
    """Mean prefill time riding in a colocated replica's cycle at a decode occupancy ``B``, a minimum of lines [s].

    By Little's law the replica admits ``B / O`` prompts per cycle, ``(P/O) B`` prefill tokens on average, each at
    ``chi`` of replica time (:func:`prefill_token_cost_s`): ``I(B) = (P/O) chi B`` when the prefill spreads evenly over
    the ``p`` micro-batches of a cycle -- one stage, or a pipeline whose stages stream a prompt's tokens one after
    another (the dataflow parts, ``streamed_prefill``: Groq's tensor streaming processor [groq-isca2020], SambaNova's
    and Cerebras's layer pipelines).

    A pipeline whose micro-batches carry whole chunks (GPU serving stacks) runs a cycle as long as ``p`` times its
    heaviest micro-batch: the micro-batches follow one another through the ``p`` stages, so a chunk of ``c`` tokens
    in one of them holds each stage ``c chi`` longer as it passes, and the others wait behind it -- the imbalance
    across micro-batches that makes pipeline bubbles [sarathi-2023]. With ``c_j`` the prefill tokens of micro-batch
    ``j`` the cycle's prefill time is ``p chi max_j c_j = chi sum_j c_j + chi (p max_j c_j - sum_j c_j)``. A
    scheduler that puts each prompt's chunk of ``u`` tokens (the prompt, at most the token budget ``tau``, chunked;
    ``k_b`` whole prompts, ``u = k_b P``, in whole-prompt passes) in the least loaded micro-batch [graham-1969]
    leaves ``p max - sum = u ((-K) mod p)`` for ``K`` equal chunks in the cycle, Poisson of mean ``a = (P/O) B / u``
    (prompts arrive at random; Little's law): on average at most ``u min((p - 1) a, C_p)``,
    :func:`tco.core.serving.parallelism.micro_batch_overshoot` (``C_2 = 1/2``, ``C_4 = 1.69``, ``C_8 = 4.92``); chunks whose
    lengths vary (squared CV ``v``) overshoot more, ``C_p(v)`` (:func:`tco.core.serving.parallelism.overshoot_chunks`), and
    ``p max - sum <= (p - 1) sum`` whatever the lengths. So::

        I(B) <= (P/O) chi B + chi u min((p - 1) a, C_p(v)) = min(p (P/O) chi B, (P/O) chi B + C_p(v) chi u)

    ``p`` times the even share while the prompts of a cycle are fewer than its micro-batches (a chat's few prompts
    per cycle), the even share plus ``C_p`` chunks' worth once many prompts share the cycles. Chunked, no
    micro-batch holds more prefill than the budget its decode tokens leave, ``tau - B/p``, so also
    ``I(B) <= p chi (tau - B/p) = chi (p tau - B)``: a falling line that meets the even share where the budget is
    full (the slot cap's ``B (1 + P/O) <= p tau``), where every micro-batch is filled alike and the pipeline is
    balanced again (Sarathi-Serve's uniform batches [sarathi-serve-osdi2024]). The lines add to the decode lines one
    branch each (:class:`tco.core.serving.steps.ConcaveLines`). A scheduler that hands prompts to micro-batches in turn, as
    they come, splits them like ``p`` independent streams and can exceed the bound by the spread of the busiest
    stream once many prompts share a cycle.

    Parameters
    ----------
    chi : float or ndarray [s/token]
        Replica time per prefill token.
    ratio : float or ndarray [-]
        Prefill tokens per decode token, ``P / O``.
    pipeline : int [-]
        Stages (micro-batches per cycle) ``p``.
    micro_batch_tokens : float or ndarray [tokens]
        The most prefill tokens one prompt's chunk brings to a micro-batch, ``u``.
    two_lines : bool
        Whether the pool bounds its interference with the lines of micro-batch pipelines (such shapes among its
        candidates); one stage then gives equal lines or higher ones, so that every candidate of the pool has the
        same structure.
    budget_tokens : float or ndarray or None [tokens]
        The token budget ``tau`` of a micro-batch (chunked: the falling line), or None (whole-prompt passes).
    prompt_scv : float or ndarray [-]
        Squared CV of the prompt length ``v`` (the chunks' spread).

    Returns
    -------
    ConcaveLines
        Intercepts [s] and slopes [s/sequence] of ``I(B)``.

    References
    ----------
    [little-1961] prompts admitted per cycle.
    [sarathi-2023] imbalance across micro-batches and pipeline bubbles.
    [sarathi-serve-osdi2024] uniform micro-batches once the token budget is full.
    [graham-1969] the list-scheduling bound.
    [groq-isca2020] a processor that streams tokens through its pipeline.
    """
    even = ratio * chi
    if not two_lines:
        return ConcaveLines((0.0,), (even,))
    intercepts = (0.0, parallelism.overshoot_chunks(pipeline, prompt_scv) * chi * micro_batch_tokens)
    slopes = (times(pipeline, even), even)
    if budget_tokens is None:
        return ConcaveLines(intercepts, slopes)
    return ConcaveLines((*intercepts, pipeline * chi * budget_tokens), (*slopes, -chi), (True, True, False))


def _prefill_service(cm: CycleModel, demand: Demand, chunked: bool, chi, decode_cycle_s, slots, prompts=None,
                     streamed: bool = True):
    """Prefill of one prompt: ``(work, latency, lanes)`` [s, s, lanes per replica].

    ``work`` is the service time of one prompt on one of the replica's ``p`` lanes (one per
    micro-batch) when prompts queue, the time a lane is busy with it [s]; ``latency`` the prompt's
    prefill once started with no other prompt beside it [s].

    ``chunked`` (decode tokens first, then prefill chunks): each micro-batch has
    ``tau_free = tau - c_s / p`` tokens of budget left by the decode tokens, so a prompt takes
    ``m = P / tau_free`` cycles' chunks. With prompts waiting every micro-batch is full, a cycle
    lasts ``t_d(c_s) + p tau_free chi`` (its decode tokens plus ``p`` full chunks) and moves each
    lane's prompt by ``tau_free`` tokens, so a lane serves a prompt in
    ``(P / tau_free)(t_d(c_s) + p tau_free chi) = P (p chi + t_d(c_s) / tau_free)``: the decode
    share of the cycles that carry its chunks counts, and the ``p`` lanes together prefill at most
    ``1/chi`` tokens/s, the replica's (the Sarathi-Serve schedule [sarathi-serve-osdi2024]; chi is
    replica time per prefill token, :func:`prefill_token_cost_s`). Alone, its chunks ride in
    ``ceil(P / tau_free)`` whole cycles at ``t_d(c_s)``, the last with the remainder: latency
    ``ceil(P / tau_free) t_d(c_s) + P chi`` where the stages stream its tokens (``streamed``), and
    ``ceil(P / tau_free) t_d(c_s) + p P chi`` where a chunk rides in one micro-batch, which holds each of the
    ``p`` stages as it passes (:func:`interference_lines`). The lane time keeps the fractional count: with prompts
    waiting, the budget a prompt leaves in its last cycle carries the next one's first chunk. The round-up is the
    part of the latency beyond the lane time (:func:`_own_prefill_s`; up to one decode step: a 294-token prompt at
    187 tokens free rides in 2 cycles, not 1.57).

    Whole-prompt passes (``prefill_first``, prefill pools): ``k_b`` prompts per pass of
    ``t(0, p k_b P)``; work ``t(0, p k_b P) / k_b`` per prompt and lane, latency one pass.

    Parameters
    ----------
    cm : CycleModel
        The replica's cycle model (``p`` = its pipeline stages).
    demand : Demand
        Prompt length ``P`` [tokens] and token budget ``tau`` [tokens per micro-batch].
    chunked : bool
        Chunked prefill riding in decode cycles, else whole-prompt passes.
    chi : float or ndarray [s/token]
        Replica time per prefill token (chunked).
    decode_cycle_s : float or ndarray [s]
        The decode-only cycle at the slot cap, ``t_d(c_s)`` (chunked).
    slots : float or ndarray [sequences]
        The slot cap ``c_s`` (chunked).
    prompts : float or ndarray or None [prompts]
        ``k_b`` when the caller has it (whole-prompt passes).
    streamed : bool
        Whether the stages stream a prompt's tokens (dataflow parts) or take its chunk as one micro-batch (chunked).

    Returns
    -------
    tuple
        ``(work [s], latency [s], lanes [-], budget left)``, the last a bool array (chunked: ``tau_free > 0``).
    """
    p, prompt = float(cm.pipeline), demand.prompt_tokens
    if chunked:
        free = demand.token_budget - slots / p
        chunks = prompt / np.maximum(free, 1e-9)
        own = prompt * chi
        work = p * own + chunks * decode_cycle_s
        latency = np.maximum(np.ceil(chunks), 1.0) * decode_cycle_s + (own if streamed else times(p, own))
        return work, latency, p, free > 0.0
    prompts = prefill_pass_prompts(cm, demand) if prompts is None else prompts
    latency = cm.cycle_s(0.0, times(p, prompts) * prompt)
    return latency / prompts, latency, p, True


def _fits(shape: parallelism.Shape, model: ModelShape, device: DeviceShape, terms: _PoolTerms):
    """Whether a replica of ``shape`` holds the weights and one sequence's KV cache in its usable memory,
    its tensor group stays in the scale-up domain and it has the pool's minimum devices [bool per draw]."""
    n = float(shape.devices)
    capacity = tuple(times(n, c) for c in terms.device_capacity_bytes)
    rep = parallelism.kv_replication(shape.tensor, model.kv_heads)
    return ((model.weight_bytes + times(rep, terms.sequence_kv_bytes) <= sum(capacity[1:], capacity[0]))
            & (shape.tensor <= device.domain_devices + 1e-9) & (n >= device.min_devices - 1e-9))


def _candidate(role: str, shape: parallelism.Shape, model: ModelShape, device: DeviceShape, demand: Demand,
               whole, ttft_extra_s, device_hour_usd, terms: _PoolTerms, fits=None, cheapest=None) -> dict:
    """Sizing of one candidate shape (:func:`_candidate_at_cap`); a colocated replica that misses the TTFT target at
    its full slot cap holds its batch down (:func:`_held_batch`)."""
    out = _candidate_at_cap(role, shape, model, device, demand, whole, ttft_extra_s, device_hour_usd, terms, fits,
                            cheapest)
    if role != "colocated" or not HELD_SEARCH_STEPS:
        return out
    return _held_batch(out, lambda slots, at, cycles: _candidate_at_cap(role, shape, *at, held_slots=slots, cycles=cycles),
                       lambda full, at: _largest_cap_within_ttft(shape, *at, full),
                       (model, device, demand, whole, ttft_extra_s, device_hour_usd, terms, True, cheapest))


class _Cycles(NamedTuple):
    """A replica's cycle model and the cycle lines its requests see (:func:`_seen_lines`)."""

    cm: CycleModel
    chunked: bool             # chunked prefill riding in the decode cycles (colocated)
    chi: object               # replica time per prefill token [s/token] (colocated; else 0)
    interference: object      # the prefill riding in a cycle, ConcaveLines (colocated; else None)
    seen: list                # the cycle lines the requests see [s]


def _seen_lines(role: str, cm: CycleModel, demand: Demand, terms: _PoolTerms, pipeline: int) -> _Cycles:
    """The cycle lines a replica's requests see, with its cycle model.

    Decode pools see the decode lines; a colocated replica sees them plus the prefill riding in its cycles
    (:func:`interference_lines`, ``chi`` the replica time per prefill token [s/token], ``chunked`` its policy)."""
    lines = cm.decode_lines()
    if role != "colocated":
        return _Cycles(cm, False, 0.0, None, lines)
    chunked = demand.policy == "chunked"
    chi = prefill_token_cost_s(cm, demand, branch_min([b(0.0) for b in lines]))
    held = 0.0  # the prefill tokens one prompt's chunk brings to a micro-batch (micro-batch pipelines)
    if terms.two_interference_lines:
        held = minimum(demand.prompt_tokens, demand.token_budget) if chunked else \
            prefill_pass_prompts(cm, demand) * demand.prompt_tokens
    interference = interference_lines(chi, terms.ratio, pipeline, held, terms.two_interference_lines,
                                      demand.token_budget if chunked else None, demand.prompt_scv)
    return _Cycles(cm, chunked, chi, interference, [branch for b in lines for branch in interference.branches(b)])


class _AtSlots(NamedTuple):
    """A colocated replica at a slot cap: its cycle and its prefill, and whether the TTFT target can hold."""

    cycle_s: object    # the mean cycle the requests see (prefill share included) [s]
    decode_s: object   # the decode-only cycle [s]
    work_s: object     # lane time per prompt with prompts waiting [s]
    latency_s: object  # prefill of one prompt once started [s]
    lanes: object      # prefill lanes per replica [-]
    budget_ok: object  # token budget left by the decode tokens [bool]
    slack_s: object    # TTFT slack of the slot and lane queues together [s]
    own_s: object      # the length-proportional part of a prompt's prefill [s]
    ttft_ok: object    # the longest prompts' own prefill fits the lanes' widest share of the slack [bool]


def _colocated_at_slots(cm: CycleModel, demand: Demand, chunked: bool, chi, interference: ConcaveLines, seen, slots,
                        ttft_extra_s, epsilon, streamed: bool, cycle_s=None) -> _AtSlots:
    """A colocated replica at ``slots`` [sequences]: the cycle at the cap (``cycle_s`` [s] when the caller has it),
    the prefill of a prompt in it (:func:`_prefill_service`), the TTFT slack ``T - latency - cycle - extra`` and whether
    the longest prompts' own prefill fits the lanes' widest share of it (:data:`LANE_SHARES`,
    :func:`_own_prefill_fits`)."""
    cycle = branch_min([b(slots) for b in seen]) if cycle_s is None else cycle_s
    decode = cycle - interference(slots)  # the seen lines are the decode lines plus the interference
    work, latency, lanes, budget_ok = _prefill_service(cm, demand, chunked, chi, decode, slots, streamed=streamed)
    slack = demand.ttft_target_s - latency - cycle - ttft_extra_s
    own = _own_prefill_s(work, latency)
    widest = LANE_SHARES[-1]  # the lanes' largest share of the slack and budget: the longest prompts fit there
    return _AtSlots(cycle, decode, work, latency, lanes, budget_ok, slack, own,
                    _own_prefill_fits(widest * slack, own, demand.prompt_scv, widest * epsilon))


def _candidate_at_cap(role: str, shape: parallelism.Shape, model: ModelShape, device: DeviceShape, demand: Demand,
                      whole, ttft_extra_s, device_hour_usd, terms: _PoolTerms, fits=None, cheapest=None,
                      held_slots=None, cycles: _Cycles | None = None) -> dict:
    """Sizing of one candidate shape at the largest slot cap its memory, batch limit, token budget and TPOT allow
    (arrays over draws), or colocated at ``held_slots`` [sequences] (a held cap, :func:`_held_batch`, whose TPOT is
    checked at it); ``feasible`` and ``cost`` drive the choice.

    ``cheapest`` [USD/h], when given, is the least cost of a feasible candidate evaluated before (per draw): a
    colocated candidate then sizes its queues only where its load floor (:func:`_queue_floor`) does not lie above
    it, and elsewhere reports the floor as its replicas, which cannot win there; such a candidate is marked
    ``_partial`` (its ``replicas``, ``cost`` and ``_lane_share`` are exact only where it can undercut ``cheapest``).
    ``cycles``, when given, are its cycle model and lines (:func:`_seen_lines`, computed by the caller at these
    draws)."""
    cm = cycle_model(shape, model, device, demand, role, terms) if cycles is None else cycles.cm
    n, p = float(shape.devices), float(shape.pipeline)
    prompt, output = demand.prompt_tokens, demand.output_tokens
    peak = demand.peak_requests_per_s
    epsilon = 1.0 - demand.percentile
    rep = parallelism.kv_replication(shape.tensor, model.kv_heads)
    capacity = sum(cm.tier_capacity_bytes[1:], cm.tier_capacity_bytes[0])
    fits = _fits(shape, model, device, terms) if fits is None else fits
    out = {"devices_per_replica": n, "tensor_parallel": float(shape.tensor), "pipeline_stages": p,
           "expert_parallel": float(shape.expert_parallel)}
    if role == "prefill":
        prompts = prefill_pass_prompts(cm, demand)
        work, latency, lanes, _ = _prefill_service(cm, demand, False, 0.0, 0.0, 0.0, prompts)
        slack = demand.ttft_target_s - latency - ttft_extra_s
        own = _own_prefill_s(work, latency)
        dispatched = demand.prefill_dispatched
        replicas = sojourn.lane_servers(peak * work, work, own, slack, demand.prompt_scv, epsilon, terms.log_term,
                                        dispatched) / lanes
        ttft_ok = _own_prefill_fits(slack, own, demand.prompt_scv, epsilon)
        if not every_draw(ttft_ok):  # where the longest prompts alone miss the target: the mean-length fleet, flagged
            replicas = np.where(ttft_ok, replicas, queueing.servers_within_wait(peak * work, work, slack, 0.0, epsilon,
                                                                                terms.log_term, kingman=True,
                                                                                dispatched=dispatched) / lanes)
        out.update(_slack=slack, _lane_share=1.0)
        out.update(prefill_s=latency, prefill_work_s=work, lanes=lanes, slots=0.0, slots_allowed=0.0,
                   residence_s=latency,
                   tpot_ok=True, cycle_cap_s=latency, chi=0.0, _bound_at=(0.0, times(p, prompts) * prompt))
    else:
        colocated = role == "colocated"
        ratio = terms.ratio
        _, chunked, chi, interference, seen = _seen_lines(role, cm, demand, terms, shape.pipeline) if cycles is None \
            else cycles
        kv_batch = (capacity - model.weight_bytes) / times(rep, terms.total_kv_bytes)
        limit = minimum(kv_batch, demand.max_batch)
        if chunked:
            limit = minimum(limit, times(p, demand.token_budget) / (1.0 + ratio))

        def cap_within(target):  # the largest occupancy whose mean cycle meets ``target``, within the other limits
            return minimum(branch_max([largest_within(b, target, limit) for b in seen]), limit)

        if held_slots is None:
            cap = cap_within(demand.tpot_target_s)
            if colocated and not sojourn.deterministic(demand.prompt_scv):
                # the spread of the prompts sharing a request's cycles, taken at the mean-TPOT cap (at least the final
                # cap, and the spread grows with the batch: the cap below meets the percentile; docs/model.md)
                cap = cap_within(demand.tpot_target_s
                                 - interference_spread_s(interference, maximum(cap, 1.0), demand.prompt_scv, epsilon))
            slots = np.floor(cap + FLOOR_GUARD) if whole else cap  # continuous sizing: smooth curves (DESIGN.md 4)
            tpot_ok = slots >= 1.0
            slots = maximum(slots, 1.0)
            cycle_cap = branch_min([b(slots) for b in seen])
        else:  # a held cap (below the full one, so within its limits): the TPOT target checked at it
            slots = held_slots
            cycle_cap = branch_min([b(slots) for b in seen])
            seen_tpot = cycle_cap
            if not sojourn.deterministic(demand.prompt_scv):
                seen_tpot = cycle_cap + interference_spread_s(interference, slots, demand.prompt_scv, epsilon)
            tpot_ok = seen_tpot <= demand.tpot_target_s
        if colocated:
            at = _colocated_at_slots(cm, demand, chunked, chi, interference, seen, slots, ttft_extra_s, epsilon,
                                     device.streamed_prefill, cycle_cap)
            work, latency, lanes, slack, own, ttft_ok = at.work_s, at.latency_s, at.lanes, at.slack_s, at.own_s, at.ttft_ok
            tpot_ok = tpot_ok & at.budget_ok
            residence = output * cycle_cap + latency
            queues = (peak, residence, slots, work, lanes, slack, epsilon)
            load, floor_usd = _queue_floor(peak, residence, slots, work, lanes, n, whole, device_hour_usd)
            wanted = True if cheapest is None else ~(floor_usd > cheapest)
            replicas, share = _split_replicas_where(ttft_ok, queues, (own, demand.prompt_scv), wanted, load)
            if not every_draw(wanted):
                out["_partial"] = True
            out.update(_slack=slack, _lane_share=share)
        else:
            work = latency = lanes = 0.0
            residence = output * cycle_cap
            slack = demand.tpot_target_s - cycle_cap
            replicas = queueing.servers_within_wait(peak * residence, residence, slack, 0.0, epsilon, terms.log_term) / slots
            ttft_ok = True
            out.update(_slack=slack, _lane_share=0.0)
        if held_slots is None:  # a held cap keeps its candidate's (:func:`_held_batch`)
            out["slots_allowed"] = slots
        out.update(prefill_s=latency, prefill_work_s=work, lanes=lanes, slots=slots, residence_s=residence,
                   tpot_ok=tpot_ok, cycle_cap_s=cycle_cap, chi=chi, _bound_at=(slots, ratio * slots))
        out["_seen"] = seen
        out["_interference"] = interference
    if whole:
        replicas = maximum(np.ceil(replicas - WHOLE_COUNT_GUARD), 1.0)
    feasible = flag_value(fits & out["tpot_ok"] & ttft_ok)
    out["_cm"] = cm
    out.update(replicas=replicas, fits=flag_value(fits), ttft_ok=flag_value(ttft_ok), tpot_ok=flag_value(out["tpot_ok"]),
               feasible=feasible, cost=times(n, replicas) * device_hour_usd)
    return out


#: the most halvings of the held batch's search (:func:`_largest_cap_within_ttft`): whole slot caps up to 2 ** 12 are
#: found exactly (it stops once every bracket is one slot wide; larger caps to within 2 ** -12 of the full one, on the
#: side that meets the TTFT target); continuous sizing runs all of them. 0 turns the held batch off. The workbook has
#: a block of rows per halving
HELD_SEARCH_STEPS = 12
#: the held caps tried, as fractions of the largest that can meet the TTFT target (the cheapest that meets the targets
#: is taken; ties: the first)
HELD_CAPS = (1.0, 0.9)
#: the terms of a candidate that depend on its slot cap (the others: its shape, lines and cycle model)
_HELD_TERMS = ("_slack", "_lane_share", "prefill_s", "prefill_work_s", "slots", "residence_s", "tpot_ok", "cycle_cap_s",
               "replicas", "ttft_ok", "feasible", "cost")


def _largest_cap_within_ttft(shape: parallelism.Shape, model: ModelShape, device: DeviceShape, demand: Demand, whole,
                             ttft_extra_s, device_hour_usd, terms: _PoolTerms, fits, cheapest, full):
    """The largest slot cap below ``full`` at which a colocated replica's longest prompts can meet the TTFT target
    [sequences; 0 where none can] (``device_hour_usd``, ``fits`` and ``cheapest`` unused: the inputs of
    :func:`_candidate_at_cap`).

    The TTFT check of :func:`_colocated_at_slots` holds below some cap and not above it: a larger batch lengthens the
    cycles a prompt's chunks ride in and leaves fewer tokens of budget for them. Bisection on ``[0, full)``, the lower
    end the largest cap known to hold: ``s = floor((lo + hi) / 2)`` (continuous sizing ``(lo + hi) / 2``) is checked and
    becomes ``lo`` where the check holds, ``hi`` where not, for :data:`HELD_SEARCH_STEPS` halvings (whole caps: until
    ``hi - lo <= 1`` everywhere, where a further halving changes nothing). The cycle lines are computed once and
    returned with it: ``(cap, cycles)`` (:func:`_seen_lines`)."""
    cycles = _seen_lines("colocated", cycle_model(shape, model, device, demand, "colocated", terms), demand, terms,
                         shape.pipeline)
    cm, chunked, chi, interference, seen = cycles
    epsilon = 1.0 - demand.percentile
    lo, hi = np.zeros_like(full), np.asarray(full, float)
    for _ in range(HELD_SEARCH_STEPS):
        if whole and every_draw(hi - lo <= 1.0):
            break
        mid = np.floor((lo + hi) / 2.0) if whole else (lo + hi) / 2.0
        ok = _colocated_at_slots(cm, demand, chunked, chi, interference, seen, np.maximum(mid, 1.0), ttft_extra_s,
                                 epsilon, device.streamed_prefill).ttft_ok
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return lo, cycles


def _held_batch(out: dict, at_cap: Callable, largest_within_ttft: Callable, inputs: tuple) -> dict:
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

    Parameters
    ----------
    out : dict
        The candidate at its full cap (:func:`_candidate_at_cap`).
    at_cap : Callable
        ``at_cap(slots, inputs, cycles)``: the candidate at a held cap [sequences], inputs and cycle lines.
    largest_within_ttft : Callable
        ``largest_within_ttft(full, inputs)``: the largest cap below ``full`` that can meet the TTFT target
        [sequences] and the candidate's cycle lines there.
    inputs : tuple
        ``(model, device, demand, whole, ttft_extra_s, device_hour_usd, terms, fits, cheapest)``.

    Returns
    -------
    dict
        ``out``, its :data:`_HELD_TERMS` and ``_bound_at`` replaced where a held cap meets the targets.
    """
    missed = (out["fits"] > 0.5) & (out["tpot_ok"] > 0.5) & (out["ttft_ok"] < 0.5) & (out["slots"] > 1.0)
    if not any_draw(missed):
        return out
    shape = np.broadcast_shapes(*(np.shape(out[k]) for k in _HELD_TERMS), np.shape(missed))
    if shape == ():
        where, at, full = (), inputs, out["slots"]
    else:
        where = np.nonzero(np.broadcast_to(missed, shape))
        try:
            at = at_draws(inputs, where, shape)
        except ValueError:  # an input does not broadcast to the draws' shape (a grid's other axis)
            where, at = None, inputs
        full = np.broadcast_to(out["slots"], shape)[where] if where is not None else out["slots"]
    edge, cycles = largest_within_ttft(full, at)
    whole = at[3]
    steps = [at_cap(np.maximum(np.floor(f * edge + FLOOR_GUARD) if whole else f * edge, 1.0), at, cycles)
             for f in HELD_CAPS]
    costs = [np.where(h["feasible"] > 0.5, h["cost"], np.inf) for h in steps]
    held, lowest = steps[0], costs[0]
    for h, cost in zip(steps[1:], costs[1:], strict=True):  # the cheapest that meets the targets; ties: the first
        better = cost < lowest
        held = {k: np.where(better, h[k], held[k]) for k in _HELD_TERMS} | {
            "_bound_at": tuple(np.where(better, b, a) for a, b in zip(held["_bound_at"], h["_bound_at"], strict=True)),
            **({"_partial": True} if "_partial" in h or "_partial" in held else {})}
        lowest = np.minimum(lowest, cost)
    won = lowest < np.inf
    if where is None:  # evaluated at every draw: taken where the full cap missed and the held one meets the targets
        won = won & missed
    if not any_draw(won):
        return out
    merged = dict(out)
    if shape == ():
        merged.update({k: held[k] for k in (*_HELD_TERMS, "_bound_at")})
    else:
        for k in _HELD_TERMS:
            merged[k] = _written(out[k], held[k], won, where, shape)
        merged["_bound_at"] = tuple(_written(o, b, won, where, shape)
                                    for o, b in zip(out["_bound_at"], held["_bound_at"], strict=True))
    if "_partial" in held or "_partial" in out:
        merged["_partial"] = True
    return merged


def _written(values, held, won, where, shape):
    """``values`` over the draws with ``held`` written where it ``won`` (``held`` at the draws ``where``, or at every
    draw when ``where`` is None)."""
    values = np.array(np.broadcast_to(values, shape), float)
    if where is None:
        return np.where(won, held, values)
    held, won = np.broadcast_to(held, won.shape), won
    values[tuple(w[won] for w in where)] = held[won]
    return values


def interference_spread_s(interference: ConcaveLines, batch, prompt_scv, exceed_probability):
    """Excess of a request's TPOT over the mean cycle's at the percentile, from the lengths of the prompts whose
    prefill shares its cycles [s per output token].

    During a request's ``O`` cycles a colocated replica at ``B`` sequences admits about ``B`` others (Little's law),
    whose ``B`` prompts of squared CV ``v`` ride in those cycles: their sum is gamma distributed of mean ``B P`` and
    squared CV ``v / B`` when lengths are gamma, so the request's mean cycle (MLPerf's per-request TPOT) is exceeded
    with probability ``epsilon`` at ``t(B) + I(B) (X_q(v / B) - 1)``, ``I(B)`` the mean prefill riding in a cycle
    (:func:`interference_lines`; ``(P/O) chi B`` spread evenly) and ``X_q`` the gamma quantile of
    :func:`tco.core.serving.sojourn.length_quantile`. The count of admissions is taken as ``B`` (at the slot cap a
    departure admits the next request): Poisson admissions below the cap would add ``B P^2`` to the variance, which
    the occupancy's own margin below the cap covers (the simulations at mean lengths meet the TPOT percentile,
    tests/test_serving_simulation.py). ``B (X_q(v/B) - 1)`` grows with ``B`` (about ``z sqrt(v B)``). Where a
    pipeline's micro-batches carry whole chunks the excess is scaled with the whole bound ``I(B)``, its part beyond the
    even share included (a bound: that part is at most ``p - 1`` micro-batches' worth whatever the lengths).

    Parameters
    ----------
    interference : ConcaveLines
        ``I(B)``: replica time of the prefill riding in a cycle at occupancy ``B`` [s].
    batch : float or ndarray [sequences]
        Sequences in flight ``B`` (at least 1).
    prompt_scv : float or ndarray [-]
        Squared CV of the prompt length ``v``.
    exceed_probability : float or ndarray [-]
        ``epsilon = 1 - q``.

    Returns
    -------
    ndarray [s]
        ``I(B) (X_q(v / B) - 1)``.

    References
    ----------
    [little-1961] L = lambda W.
    [wilson-hilferty-1931] the gamma quantile.
    """
    b = np.maximum(batch, 1.0)
    return interference(b) * (sojourn.length_quantile(prompt_scv / b, exceed_probability) - 1.0)


def _own_prefill_s(work_s, latency_s):
    """The part of a prompt's prefill latency that scales with its length, ``L = min(latency, work)`` [s]: the lane
    work ``S`` scales with the prompt (its chunks, or its share of a pass); a latency beyond it (the decode step of
    a prompt shorter than one chunk, the other prompts of a whole-prompt pass) is taken as fixed
    (:mod:`tco.core.serving.sojourn`)."""
    return np.minimum(latency_s, work_s)


def _own_prefill_fits(slack_s, own_s, prompt_scv, epsilon):
    """Whether the TTFT target can hold at all: the lanes' slack at mean lengths (positive) covers the own prefill's
    excess at their percentile budget, ``L (X_q - 1)`` (:func:`tco.core.serving.sojourn.length_quantile`; ``slack > 0`` when
    every prompt is at the mean length) [bool per draw]."""
    if sojourn.deterministic(prompt_scv):
        return slack_s > 0.0
    return (slack_s > 0.0) & (slack_s > own_s * (sojourn.length_quantile(prompt_scv, epsilon) - 1.0))


def _split_search(evaluate_share: Callable, maximize: bool):
    """Binary search over :data:`LANE_SHARES` (sorted, ``2^k - 1`` of them: ``k`` probes per draw) for the share that
    gives the best figure, per draw.

    ``evaluate_share(g)`` returns ``(figure, lanes_bind)``: the figure at lane share ``g``
    (replicas needed, or rate carried) and whether the lane queue binds there. The slot queue's need grows with ``g``
    and the lanes' falls, so the best share is on one side of where they cross: the search moves up where the lanes
    bind, down elsewhere, and keeps the best figure probed (the two shares around the crossing are always probed: the
    neighbours of a value are on its search path). While every draw moves the same way the share stays one number.

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


def _split_replicas(peak, residence_s, slots, work_s, lanes, slack_s, epsilon, own_s=0.0, prompt_scv=0.0):
    """Replicas of a colocated candidate at the best split of its TTFT slack and percentile budget, and that split.

    For a lane share ``g`` the slots are staffed so that ``P(W_slot > (1 - g) s) <= (1 - g) epsilon`` and the lanes so
    that ``P(W_lane > g s) <= g epsilon`` (:func:`tco.core.serving.queueing.servers_within_wait`); then
    ``P(W_slot + W_lane > s) <= P(W_slot > (1 - g) s) + P(W_lane > g s) <= epsilon`` (Boole's inequality), and
    ``R_g = max(slot servers / c_s, lane servers / x)``. The pool takes the least ``R_g`` over
    :data:`LANE_SHARES` (:func:`_split_search`).

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
        The length-proportional part of the mean prompt's prefill, ``L`` (:func:`_own_prefill_s`).
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

    return _split_search(needed, maximize=False)


def _split_replicas_where(ttft_ok, queues: tuple, lengths: tuple, wanted=True, floor=None):
    """:func:`_split_replicas` with the prompts' length spread (``queues + lengths``) where the longest prompts can
    meet the TTFT target (``ttft_ok``), and at mean lengths (``queues``: the fleet flagged infeasible, no number of
    lanes suffices) elsewhere; where the replicas are not ``wanted`` (the candidate cannot win there), ``floor``.

    Each rule runs on its own draws only, gathered (:func:`tco.core.draws.at_draws`), when they are few (at most
    :data:`SPREAD_FEW_SHARE` of them for the rule with the spread, :data:`FEW_DRAWS_SHARE` for the one at mean
    lengths), else on every draw with the other's values written over its own where they apply. Both rules are
    elementwise in the draws, so the values are those of the two rules at every wanted draw, picked by ``ttft_ok``.

    Parameters
    ----------
    ttft_ok : bool or ndarray of bool [-]
        Where the lanes' slack covers the longest prompts' own prefill (:func:`_own_prefill_fits`).
    queues : tuple
        ``(peak, residence_s, slots, work_s, lanes, slack_s, epsilon)`` as :func:`_split_replicas` takes them.
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
        return _split_replicas(*queues, *lengths)
    if everywhere and not any_draw(ttft_ok):
        return _split_replicas(*queues)
    shape = np.broadcast_shapes(np.shape(ttft_ok), np.shape(wanted), *(np.shape(x) for x in (*queues, *lengths)))
    if not any_draw(wanted):
        return np.array(np.broadcast_to(floor, shape), float), np.full(shape, 0.5)
    spread, wanted = np.broadcast_to(ttft_ok, shape), np.broadcast_to(wanted, shape)
    rules = ((spread & wanted, _split_replicas, SPREAD_FEW_SHARE),
             (~spread & wanted, lambda *at: _split_replicas(*at[:len(queues)]), FEW_DRAWS_SHARE))
    many = [rule for mask, rule, few in rules if np.count_nonzero(mask) > few * mask.size]
    if many:  # the rule needed at the most draws runs on every draw; the other is written over it
        replicas, share = (np.array(np.broadcast_to(x, shape), float) for x in many[0](*queues, *lengths))
    else:
        replicas, share = np.array(np.broadcast_to(floor, shape), float), np.full(shape, 0.5)
    for mask, rule, _ in rules:
        if rule not in many and mask.any():
            where = np.nonzero(mask)
            replicas[where], share[where] = rule(*at_draws((*queues, *lengths), where, shape))
    return replicas, share


def _queue_floor(peak, residence_s, slots, work_s, lanes, devices: float, whole, device_hour_usd) -> tuple:
    """A colocated candidate's least replicas from its queues' loads, ``max(lambda D / c_s, lambda S / x)`` (every
    staffing rule holds at least the offered load: square-root staffing adds ``beta sqrt(a) + delta >= 0``, Kingman's
    ``a / rho`` has ``rho <= 1``), and their cost, rounded and lowered as :func:`_whole_cost` does. Measured on 65,536
    all-drawn draws of the default and voice-agent scenarios: 0.88-1.0 of the candidate's replicas (median 0.95-1.0),
    where :func:`_cost_floor` gives 0.58-0.83 for the default's H100 shapes (medians).

    Returns
    -------
    tuple
        ``(replicas [replicas, continuous], cost [USD/h])``.
    """
    load = maximum(peak * residence_s / slots, peak * work_s / lanes)
    return load, _whole_cost(load, devices, whole, device_hour_usd)


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


def _derived(role: str, chosen: dict, demand: Demand) -> dict:
    """Outputs that follow from the chosen shape's terms (computed once, after the choice)."""
    capacity = (chosen["lanes"] / chosen["prefill_work_s"] if role == "prefill"
                else chosen["slots"] / chosen["residence_s"])
    return dict(capacity_rps=capacity, tpot_met=chosen["tpot_ok"],
                feasible=chosen["fits"] * chosen["tpot_ok"] * chosen["ttft_ok"],
                prefill_tokens_per_s=chosen["lanes"] * demand.prompt_tokens / np.maximum(chosen["prefill_work_s"], 1e-300),
                decode_tokens_per_s=chosen["slots"] / chosen["cycle_cap_s"])


#: what :func:`size_pool` reports per pool (for the chosen shape)
POOL_OUTPUTS = ("devices_per_replica", "tensor_parallel", "pipeline_stages", "expert_parallel", "replicas", "slots",
                "slots_allowed", "batch", "tpot_s", "ttft_s", "queue_wait_s", "prefill_s", "prefill_work_s", "lanes",
                "residence_s", "cycle_cap_s", "step_s", "interference_share", "capacity_rps", "chi", "feasible", "tpot_ok",
                "ttft_ok", "fits", "decode_bound", "prefill_bound", "spilled_bytes", "prefill_tokens_per_s",
                "decode_tokens_per_s", "tpot_met")

#: the terms of a candidate carried to the chosen shape (the figures at peak, what bounds a cycle and the
#: spilled bytes are computed after the choice)
_AT_PEAK = ("batch", "tpot_s", "ttft_s", "queue_wait_s", "step_s", "interference_share", "decode_bound", "prefill_bound",
            "spilled_bytes", "capacity_rps", "tpot_met", "feasible", "prefill_tokens_per_s", "decode_tokens_per_s")
_CANDIDATE_OUTPUTS = (*(k for k in POOL_OUTPUTS if k not in _AT_PEAK), "_slack", "_lane_share")

_COMMON = ("devices_per_replica", "tensor_parallel", "pipeline_stages", "expert_parallel", "capacity_rps", "queue_wait_s")
_PREFILL = ("prefill_s", "prefill_tokens_per_s", "prefill_bound", "ttft_s")
_DECODE = ("slots", "slots_allowed", "batch", "step_s", "tpot_s", "decode_tokens_per_s", "decode_bound", "spilled_bytes",
           "tpot_met")
#: the :class:`tco.core.outputs.PoolPerformance` fields of each role
PERFORMANCE_FIELDS = {"colocated": _COMMON + _PREFILL + _DECODE + ("interference_share",),
                      "prefill": _COMMON + _PREFILL, "decode": _COMMON + _DECODE}

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
        Whole-device sizing or continuous.
    ttft_extra_s : float or ndarray [s]
        Time taken out of the TTFT budget before this pool (the KV transfer).
    device_hour_usd : float or ndarray [USD/device-h]
        Price of a device-hour that ranks the candidates.

    Returns
    -------
    PoolServing
        Per draw the chosen shape (``devices_per_replica``, ``tensor_parallel``,
        ``pipeline_stages``, ``expert_parallel``, ``shape_index``) and the figures at peak:
        ``replicas``, ``slots`` (the batch cap), ``batch`` (mean decode occupancy), ``tpot_s``
        and ``ttft_s`` at the percentile, ``queue_wait_s`` (their queueing part),
        ``prefill_s``, ``step_s``, ``interference_share``, ``capacity_rps`` and the
        feasibility flags.
    """
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}")
    if demand.policy not in POLICIES:
        raise ValueError(f"policy must be one of {POLICIES}")
    if demand.prefill_queue not in PREFILL_QUEUES:
        raise ValueError(f"prefill_queue must be one of {PREFILL_QUEUES}")
    terms = _pool_terms(model, device, demand, role)
    if has_micro_batch_pipelines(role, device.streamed_prefill, shapes):
        terms = replace(terms, two_interference_lines=True)

    inputs = (model, device, demand, ttft_extra_s, device_hour_usd, terms)

    def evaluate_candidate(k: int, fits=None, at=inputs, cheapest=None) -> dict:
        m, d, dem, extra, price, t = at  # the inputs, or the inputs at some draws (_where_it_can_win)
        return _candidate(role, shapes[k], m, d, dem, whole, extra, price, t, fits, cheapest)

    # a shape that fits in no draw is chosen only where no shape meets the targets: skipped when some shape does in
    # every draw (its score, 1e250 or more, then never wins), evaluated otherwise; a shape that fits in few draws is
    # evaluated only where it fits and its cost floor lies below a feasible shape's cost, or where no shape that fits
    # everywhere meets the targets (_where_it_can_win); a shape that fits everywhere and whose floor lies above a
    # feasible shape's cost cannot win there: skipped where that holds in every draw, else treated as one that fits
    # where its floor is below (_cost_floor)
    fits = [_fits(shape, model, device, terms) for shape in shapes]
    everywhere = [every_draw(f) for f in fits]
    floors = [_cost_floor(role, shape, model, device, demand, terms, whole, device_hour_usd) if any_draw(f) else None
              for shape, f in zip(shapes, fits, strict=True)]
    candidates, cheapest, deferred = [None] * len(shapes), None, []  # cheapest: the least cost of a feasible one so far
    for k in _lowest_floor_first(floors):  # branch and bound: a low floor first, so that a cheap cost prunes the rest
        if not everywhere[k]:
            continue
        if cheapest is not None and floors[k] is not None and not every_draw(floors[k] <= cheapest):
            deferred.append(k)  # it can win only where its floor is below: evaluated below, once more costs are known
            continue
        candidates[k] = evaluate_candidate(k, fits[k], cheapest=cheapest)
        cost = np.where(candidates[k]["feasible"] > 0.5, candidates[k]["cost"], np.inf)
        cheapest = cost if cheapest is None else np.minimum(cheapest, cost)
    scored = list(candidates)  # what the choice reads: a candidate evaluated at some draws holds its terms there only
    # a candidate whose queues were sized only where it can undercut a cheaper one (_partial) is read by the choice;
    # PoolServing.candidate evaluates it again in full when asked
    candidates = [None if c is not None and "_partial" in c else c for c in candidates]
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
        candidates[k] = None if "_partial" in scored[k] else scored[k]
        if cheapest is not None:
            cheapest = np.minimum(cheapest, np.where(scored[k]["feasible"] > 0.5, scored[k]["cost"], np.inf))
    evaluated = [c for c in scored if c is not None]
    if len(evaluated) < len(candidates) and not (evaluated and every_draw(_feasible_count(evaluated) > 0.5)):
        candidates = [c if c is not None else evaluate_candidate(k, fits[k]) for k, c in enumerate(candidates)]
        scored = [s if s is not None else candidates[k] for k, s in enumerate(scored)]
    best = index = None
    for k, c in enumerate(scored):
        if c is None:
            continue
        if every_draw(c["feasible"] > 0.5):
            score = c["cost"]
        else:
            rank = infeasible_rank(c["cost"], c["cycle_cap_s"], c["fits"], c["tpot_ok"])
            score = c["cost"] + (1.0 - c["feasible"]) * _INFEASIBLE_SCORE * (1.0 + rank)
        if "_where" in c:  # evaluated at some draws: it competes there (elsewhere its score would be 1e250, never the best)
            where, shape = c["_where"], c["_shape"]
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
    picks = _Picks(scored, index)
    chosen = {key: picks(key) for key in _CANDIDATE_OUTPUTS}
    chosen.update(_derived(role, chosen, demand))
    chosen["_log_term"] = None if role == "colocated" else terms.log_term  # of the queue at peak (colocated: per share)
    single = None if picks.single is None else picks.candidates[picks.single]
    if role != "prefill":
        chosen["_seen"] = _select_lines(picks, picks.candidates) if single is None else single["_seen"]
    if role == "colocated":
        chosen["_interference"] = _select_interference(picks, single, terms, demand, chosen["chi"])
    chosen.update(_at_peak(role, chosen, demand, ttft_extra_s))
    if single is None:
        cm = _select_cycle_model(picks, picks.candidates, model, device, terms)
        at = tuple(picks.stacked([c["_bound_at"][i] for c in picks.candidates]) for i in range(2))
    else:
        cm, at = single["_cm"], single["_bound_at"]
    code, spilled = cm.bound_and_spill(*at)
    zero = 0.0 * code
    chosen.update(decode_bound=zero if role == "prefill" else code, prefill_bound=zero if role == "decode" else code,
                  spilled_bytes=zero if role == "prefill" else spilled)
    out = {k: chosen[k] for k in POOL_OUTPUTS}
    out["shape_index"] = index
    out["feasible"] = out["feasible"] > 0.5
    if role == "prefill":
        out["decode_cap_s"] = chosen["prefill_s"]
    elif role == "colocated":  # the seen lines are the decode lines plus the interference
        out["decode_cap_s"] = chosen["cycle_cap_s"] - chosen["_interference"](chosen["slots"])
    else:
        out["decode_cap_s"] = chosen["cycle_cap_s"]
    return PoolServing(out, tuple(shapes), role, candidates, chosen, evaluate_candidate)


def _lowest_floor_first(floors: Sequence) -> list[int]:
    """The order in which :func:`size_pool` evaluates its candidates: those without a cost floor (shapes that fit in no
    draw) first, then the others by their floor's mean over the draws, lowest first (branch and bound; the loop leaves
    the shapes that do not fit in every draw to later). Only the work depends on it: a candidate is skipped where its
    floor lies above a feasible cost, which it then cannot undercut, so the choice (first lowest score, in the
    candidates' own order) is the same in any order.

    Parameters
    ----------
    floors : Sequence of ndarray or None [USD/h]
        Each candidate's :func:`_cost_floor`, or None.

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


def _cost_floor(role: str, shape: parallelism.Shape, model: ModelShape, device: DeviceShape, demand: Demand,
                terms: _PoolTerms, whole, device_hour_usd):
    """A lower bound of a candidate's cost [USD/h] from a few of its terms.

    A prefill replica of ``n`` devices spends at least ``P (2A / (n F) + (1 - o_c) s1)`` of its time on each prompt: a
    pass of ``N`` tokens lasts at least their arithmetic and their collectives (:meth:`tco.core.serving.steps.CycleModel.cycle_s`:
    every other term adds), and its ``p`` lanes share the pass (:func:`_prefill_service`: ``t(0, p k_b P) / k_b`` per
    prompt and lane). It needs at least that load, ``lambda P (2A / (n F) + (1 - o_c) s1)`` replicas.
    At ``B`` decode tokens the cycle a request sees is at least ``t(B) = max(p t_mem(read_fixed), a B) + s0 + q B``:

    * ``a``, per decode token, the longer phase's: the weight phase's arithmetic ``2A/F`` or the attention phase's KV
      read at the fastest tier's bandwidth or its arithmetic (two phases overlap at most fully, each phase's memory
      and arithmetic too), against the shared weights' read;
    * ``q = (1 - o_c) s1 (1 + r) + r max(2A/F - t_idle / (p tau), 0)``: the collectives of the decode tokens and,
      colocated, of the ``r B`` prefill tokens riding in the cycle on average (``r = P/O``), and those tokens'
      arithmetic beyond the weight read they share: each costs ``chi >= (1 - o_c) s1 + max(2A/F - t_idle / (p tau),
      0)`` (:func:`prefill_token_cost_s`: a chunk of ``p tau`` tokens on an idle cycle of ``t_idle <= p t_mem(W)``;
      a whole-prompt pass costs more), and the interference is at least ``r chi B`` (:func:`interference_lines`) --
      :meth:`tco.core.serving.steps.CycleModel.cycle_s`: every other term adds.

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
    model, device, demand, terms
        As :func:`_candidate`.
    whole : bool or ndarray of bool [-]
        Whole-device sizing.
    device_hour_usd : float or ndarray [USD/device-h]
        The price that ranks the candidates.

    Returns
    -------
    ndarray [USD/h]
        At most the candidate's ``cost``.
    """
    n = float(shape.devices)
    per_token = parallelism.sync_time_per_token_s(shape, model.layers, model.hidden_size, model.collective_element_bytes,
                                                  model.experts_per_token, terms.scale_up_bytes_per_s,
                                                  terms.scale_out_bytes_per_s, device.domain_devices)
    if role == "prefill":
        replicas = demand.peak_requests_per_s * demand.prompt_tokens * (
            model.weight_flops_per_token / times(n, device.flops_per_s) + terms.keeps[2] * per_token) * (1.0 - 1e-9)
        return _whole_cost(replicas, n, whole, device_hour_usd)
    caps = tuple(times(n, c) for c in terms.device_capacity_bytes)
    bws = tuple(times(n, b) for b in terms.device_bandwidth_bytes_per_s)
    replication = parallelism.kv_replication(shape.tensor, model.kv_heads)
    slots = minimum((sum(caps[1:], caps[0]) - model.weight_bytes) / times(replication, terms.total_kv_bytes),
                    demand.max_batch)
    if role == "colocated" and demand.policy == "chunked":
        slots = minimum(slots, times(shape.pipeline, demand.token_budget) / (1.0 + terms.ratio))
    read = times(shape.pipeline, memory_read_time_s(model.read_fixed_bytes, caps, bws))
    flops = times(n, device.flops_per_s)
    # per decode token: the more of the weight phase's arithmetic and the attention phase's KV read (at the fastest
    # tier's bandwidth) or arithmetic; a cycle is at least the longer phase
    phase = maximum(model.weight_flops_per_token / flops,
                    maximum(times(replication, terms.decode_kv_bytes) / bws[0], terms.decode_attention_flops / flops))
    fixed = parallelism.sync_latency_per_cycle_s(shape, model.layers, device.sync_latency_s) + device.cycle_overhead_s
    riding = terms.keeps[2] * per_token * (1.0 + terms.ratio)  # per decode token: the collectives, the prefill's too
    if role == "colocated":  # and the prefill's arithmetic beyond the weight read it shares (prefill_token_cost_s)
        idle = times(shape.pipeline, memory_read_time_s(model.weight_bytes, caps, bws))
        riding = riding + terms.ratio * maximum(model.weight_flops_per_token / flops
                                                - idle / times(shape.pipeline, demand.token_budget), 0.0)
    slots = maximum(minimum(slots, _largest_within_floor(demand.tpot_target_s, read, phase, fixed, riding)), 1.0)
    cycle = maximum(read, slots * phase) + fixed + riding * slots
    replicas = demand.peak_requests_per_s * demand.output_tokens * cycle / slots * (1.0 - 1e-9)
    return _whole_cost(replicas, n, whole, device_hour_usd)


def _largest_within_floor(target_s, read_s, phase_s, fixed_s, riding_s):
    """The most decode tokens ``B`` whose floor cycle ``max(R, a B) + s + c B`` (:func:`_cost_floor`) meets the TPOT target
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


#: a candidate needed in at most this share of the draws (where it fits, or where its cost floor is below a feasible
#: shape's cost) is evaluated at those draws only: gathering its inputs and spreading its terms costs a pass per array,
#: evaluating it hundreds. Measured in blocks of 65,536 all-drawn draws: 1/8 -> 1/2 took default 0.43 -> 0.50,
#: voice-agent 0.24 -> 0.32, custom-asic 0.14 -> 0.155, fleet-split 0.28 -> 0.31 M option-evaluations/s (0.7-0.9 no
#: faster); the outputs are the same bit for bit
FEW_DRAWS_SHARE = 0.5
#: the same for the colocated lanes' rule with the prompts' length spread (:func:`_split_replicas_where`), about four
#: times the work of the rule at mean lengths (17-22 against 4-6 ms per candidate and block), so gathering its inputs
#: pays up to a larger share. Before, both rules ran on every draw. Measured interleaved (benchmarks/ab.py, 4 rounds,
#: blocks of 65,536 all-drawn draws; the default's H100 shapes TP2/4/8 miss the TTFT with the longest prompts in
#: 48/23/11 % of the draws): the default 1.040x (0.5) / 1.063x (0.8) / 1.037x (0.9), voice-agent 1.018x / 1.033x /
#: 1.049x (the noise of such runs is ~2 %); the outputs are the same bit for bit
SPREAD_FEW_SHARE = 0.8


def _where_it_can_win(evaluate_candidate: Callable, inputs: tuple, k: int, fits, met) -> dict | None:
    """Candidate ``k`` evaluated only at the draws where it fits or where no candidate that fits in every draw meets the
    targets (``met``): its terms at those draws (1-D), with ``_where`` (their indices) and ``_shape`` (the draws'
    shape). Elsewhere it is infeasible, its score 1e250 would never win, and no term of it is computed or spread.
    None when those draws are more than :data:`FEW_DRAWS_SHARE` (evaluate it everywhere) or an input varies
    along an axis the fit does not (a grid's other axis). The values at the evaluated draws are those of an evaluation
    at every draw (the candidate is elementwise in the draws)."""
    need = np.asarray(fits | ~np.asarray(met, bool))
    if np.count_nonzero(need) > FEW_DRAWS_SHARE * need.size:
        return None
    where = np.nonzero(need)
    try:
        at = at_draws(inputs, where, need.shape)
    except ValueError:  # an input does not broadcast to the fit's shape
        return None
    return {**evaluate_candidate(k, at_draws(fits, where, need.shape), at), "_where": where, "_shape": need.shape}


def _feasible_count(candidates: Sequence[dict]):
    """Candidates feasible per draw [-], a candidate evaluated at some draws (``_where``) counting there only."""
    count = sum(c["feasible"] for c in candidates if "_where" not in c)
    for c in candidates:
        if "_where" in c:
            count = np.array(np.broadcast_to(count, c["_shape"]), float)
            count[c["_where"]] += c["feasible"]
    return count


class _Picks:
    """The chosen candidate's value of any term, per draw: the value of the candidate chosen most often,
    replaced where another one was chosen (one bitwise select per other candidate chosen in many draws,
    :func:`tco.core.draws.select_bits`: a masked copy is 4x slower on mixed masks; a candidate chosen in few
    draws, or evaluated at some draws only (``_where``), is written at the draws where it is chosen), or a table
    lookup for terms that are one number per candidate."""

    def __init__(self, candidates: Sequence[dict | None], index):
        filler = next(c for c in candidates if c is not None)  # stands in for a skipped shape, which is never chosen
        self.candidates = candidates = [filler if c is None else c for c in candidates]
        self.index = np.asarray(index).astype(np.intp)
        self.scalar = self.index.ndim == 0
        #: the candidate chosen at every draw, when one is (its terms are then read as they are)
        self.single = 0 if len(candidates) == 1 else int(self.index) if self.scalar else None
        if len(candidates) > 1 and not self.scalar:
            counts = np.bincount(self.index.ravel(), minlength=len(candidates))
            chosen = np.flatnonzero(counts)
            self.base = max((k for k in chosen if "_where" not in candidates[k]), key=lambda k: counts[k])
            self.others = []   # (k, where it is chosen as int64 all-one bits or zeros) for a bitwise select
            self.written = []  # (k, the draws where it is chosen, which of its own values those are or None: all draws)
            for k in chosen:
                if "_where" in candidates[k]:
                    where = candidates[k]["_where"]
                    mine = self.index[where] == k
                    self.written.append((k, tuple(w[mine] for w in where), mine))
                elif k != self.base and counts[k] * FEW_CHOSEN_SHARE_INVERSE < self.index.size:
                    self.written.append((k, np.nonzero(self.index == k), None))
                elif k != self.base:
                    self.others.append((k, mask_bits(self.index == k)))
            if not self.others and not self.written:
                self.single = self.base

    def __call__(self, key: str):
        if self.scalar:  # one draw: the chosen candidate's value
            return as_floats(self.candidates[self.single][key])
        return self.stacked([c[key] for c in self.candidates])

    def stacked(self, values: list):
        if len(values) == 1:
            return values[0]
        if self.scalar:
            return as_floats(values[int(self.index)])
        if all(np.ndim(v) == 0 for v in values):
            return np.take(np.asarray(values, float), self.index)
        shape = self.index.shape
        base = values[self.base]
        if not self.others and not self.written and np.shape(base) == shape:
            return np.asarray(base, float)
        out = base
        for k, bits in self.others:
            out = select_bits(bits, values[k], out, shape)
        if not self.written:
            return np.asarray(np.broadcast_to(out, shape), float)
        # a fresh array to write into: the last select's, or a copy (never a candidate's own array)
        out = out if self.others and out.shape == shape else np.array(np.broadcast_to(out, shape), float)
        for k, where, mine in self.written:
            value = values[k]
            if np.ndim(value) == 0:
                out[where] = value
            else:
                out[where] = value[mine] if mine is not None else np.broadcast_to(value, shape)[where]
        return out


#: a candidate chosen in fewer than 1/16 of the draws is written at those draws (a gather and a scatter of few
#: values) instead of selected bitwise over every draw (three passes)
FEW_CHOSEN_SHARE_INVERSE = 16


def _select_lines(picks: _Picks, candidates: Sequence[dict]) -> list[Lines]:
    """The chosen candidate's seen lines per draw (every candidate of a pool has the same line structure)."""
    out = []
    for b, first in enumerate(candidates[0]["_seen"]):
        out.append(Lines(tuple(picks.stacked([c["_seen"][b].intercepts[i] for c in candidates])
                               for i in range(len(first.intercepts))),
                         tuple(picks.stacked([c["_seen"][b].slopes[i] for c in candidates])
                               for i in range(len(first.slopes))), first.rising))
    return out


def _select_interference(picks: _Picks, single: dict | None, terms: _PoolTerms, demand: Demand, chi) -> ConcaveLines:
    """The chosen candidate's interference lines per draw: the even share ``(P/O) chi B`` from the chosen ``chi``, or
    each line of a micro-batch pipeline's bound picked (:func:`interference_lines`)."""
    if single is not None:
        return single["_interference"]
    if not terms.two_interference_lines:
        return interference_lines(chi, terms.ratio, 1, 0.0, False)
    first = picks.candidates[0]["_interference"]
    return ConcaveLines(*(tuple(picks.stacked([getattr(c["_interference"], part)[i] for c in picks.candidates])
                                for i in range(len(first.slopes))) for part in ("intercepts", "slopes")), first.rising)


def _select_cycle_model(picks: _Picks, candidates: Sequence[dict], model: ModelShape, device: DeviceShape,
                        terms: _PoolTerms) -> CycleModel:
    """The chosen shape's cycle model per draw: devices, stages and tensor ranks looked up, the terms that
    scale with them recomputed, the collectives gathered."""
    cms = [c["_cm"] for c in candidates]
    n = picks("devices_per_replica")
    k = model.kv_bytes_per_token * parallelism.kv_replication(picks("tensor_parallel"), model.kv_heads)
    template = next(c["_cm"] for c in candidates if "_where" not in c)  # its shape-independent terms at every draw
    return replace(template, pipeline=picks("pipeline_stages"), flops_per_s=n * device.flops_per_s,
                   tier_capacity_bytes=tuple(c * n for c in terms.device_capacity_bytes),
                   tier_bandwidth_bytes_per_s=tuple(b * n for b in terms.device_bandwidth_bytes_per_s),
                   decode_kv_bytes_per_token=terms.context * k, prefill_kv_bytes_per_token=terms.prefill_kv_factor * k,
                   sync_fixed_s=picks.stacked([cm.sync_fixed_s for cm in cms]),
                   sync_per_token_s=picks.stacked([cm.sync_per_token_s for cm in cms]))


def _at_peak(role: str, c: dict, demand: Demand, ttft_extra_s) -> dict:
    """Occupancy, percentile TPOT and TTFT and queueing delay of one candidate at the peak rate (``_log_term``: the
    queues' :func:`tco.core.serving.queueing.wait_log_term` when known, else None)."""
    epsilon = 1.0 - demand.percentile
    peak, replicas, log_term = demand.peak_requests_per_s, c["replicas"], c["_log_term"]
    if role == "prefill":
        service, work, lanes = c["prefill_s"], c["prefill_work_s"], c["lanes"]
        wait = sojourn.lane_wait_s(peak * work, replicas * lanes, work, _own_prefill_s(work, service), demand.prompt_scv,
                                   epsilon, c["_slack"], log_term, demand.prefill_dispatched)
        zero = 0.0 * wait
        return dict(queue_wait_s=wait, ttft_s=service + wait + ttft_extra_s, batch=zero, tpot_s=zero, step_s=service + zero,
                    interference_share=zero)
    seen, slots, output = c["_seen"], c["slots"], demand.output_tokens
    gain = peak / replicas * output
    occupancy = np.minimum(branch_min([least_fixed_point(b, gain) for b in seen]), slots)
    z = queueing.normal_quantile(demand.percentile)
    seen_batch = np.minimum(queueing.occupancy_seen_quantile(occupancy, z), slots)
    cycle_mean = branch_min([b(occupancy) for b in seen])
    tpot = branch_min([b(seen_batch) for b in seen])
    if role == "colocated" and not sojourn.deterministic(demand.prompt_scv):
        tpot = tpot + interference_spread_s(c["_interference"], seen_batch, demand.prompt_scv, epsilon)
    residence = c["residence_s"]
    if role == "colocated":
        service, work, lanes = c["prefill_s"], c["prefill_work_s"], c["lanes"]
        g, slack = c["_lane_share"], c["_slack"]  # the split the replicas were sized for (_split_replicas)
        wait = (queueing.wait_quantile_s(peak * residence, replicas * slots, residence, 0.0, (1.0 - g) * epsilon,
                                         (1.0 - g) * slack)
                + sojourn.lane_wait_s(peak * work, replicas * lanes, work, _own_prefill_s(work, service), demand.prompt_scv,
                                      g * epsilon, g * slack, dispatched=True))
        ttft = c["cycle_cap_s"] + service + wait + ttft_extra_s
        interference = c["_interference"](occupancy) / cycle_mean
    else:
        wait = queueing.wait_quantile_s(peak * residence, replicas * slots, residence, 0.0, epsilon, c["_slack"], log_term)
        tpot = np.maximum(tpot, cycle_mean + wait)
        ttft = 0.0 * tpot
        interference = ttft
    return dict(batch=occupancy, tpot_s=tpot, ttft_s=ttft, queue_wait_s=wait, step_s=cycle_mean,
                interference_share=interference)


def fleet_capacity_rps(role: str, pool: PoolServing, replicas, demand: Demand, ttft_extra_s=0.0):
    """Largest request rate ``R`` replicas of the chosen shape carry within the percentile targets.

    The inverse of the sizing: each queue's servers (``R c_s`` slots, ``R x lanes`` lanes)
    carry at most :func:`tco.core.serving.queueing.offered_load_within_wait` Erlangs, so the rate is
    the smaller of ``A_slots / D`` and ``A_lanes / S_work`` (one queue for a prefill or decode
    pool); colocated, at the best of :data:`LANE_SHARES` (the lanes get ``g`` of the slack and of the
    percentile budget, the slots ``1 - g``: Boole's inequality, :func:`_split_replicas`). Measured
    systems of a given size (MLPerf: 8 GPUs) are checked this way, and the hourly stranded-capacity
    simulation uses it for the provisioned fleet.

    Parameters
    ----------
    role : str
        ``colocated``, ``prefill`` or ``decode``.
    pool : PoolServing
        The pool's chosen shape and figures.
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
    v = pool.values
    epsilon = 1.0 - demand.percentile
    if role == "prefill":
        slack = demand.ttft_target_s - v["prefill_s"] - ttft_extra_s
        work = v["prefill_work_s"]
        return sojourn.lane_load(replicas * v["lanes"], work, _own_prefill_s(work, v["prefill_s"]), slack, demand.prompt_scv,
                                 epsilon, demand.prefill_dispatched) / work
    residence = v["residence_s"]
    if role == "decode":
        slack = demand.tpot_target_s - v["cycle_cap_s"]
        return queueing.offered_load_within_wait(replicas * v["slots"], residence, slack, 0.0, epsilon) / residence
    slack = demand.ttft_target_s - v["prefill_s"] - v["cycle_cap_s"] - ttft_extra_s
    work = v["prefill_work_s"]
    own = _own_prefill_s(work, v["prefill_s"])

    def carried(g):
        slots = queueing.offered_load_within_wait(replicas * v["slots"], residence, (1.0 - g) * slack, 0.0,
                                                  (1.0 - g) * epsilon) / residence
        lanes = sojourn.lane_load(replicas * v["lanes"], work, own, g * slack, demand.prompt_scv, g * epsilon,
                                  dispatched=True) / work
        return np.minimum(slots, lanes), lanes < slots

    return _split_search(carried, maximize=True)[0]
