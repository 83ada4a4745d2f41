"""A replica's cycles under a pool's demand: its cycle model, the prefill that rides in it, a prompt's prefill.

**Prefill interference (colocated).** By Little's law a replica whose mean decode occupancy is ``B`` admits ``B / O``
requests per cycle, ``B P / O`` prefill tokens per cycle on average, each at ``chi`` seconds of replica time
(:func:`prefill_token_cost_s`): ``chunked`` (Sarathi-Serve, OSDI 2024; vLLM V1, SGLang, TensorRT-LLM in-flight
batching) rides prefill chunks of up to the token budget ``tau`` per micro-batch in the decode cycles,
``chi = (t(0, p tau) - t(0, 0)) / (p tau)``; ``prefill_first`` (vLLM V0, Orca-style) runs whole-prompt passes that
stall decoding, ``chi = t(0, N_f) / N_f``, ``N_f = p k_b P`` (:func:`prefill_pass_prompts`). The mean cycle a request
sees is ``t(B) = t_d(B) + (P/O) chi B``, still a maximum of lines (:func:`interference_lines`, :func:`seen_cycles`);
at the percentile a request's TPOT exceeds it by :func:`interference_spread_s` (the prompts' length spread). A prompt
holds one of the replica's ``p`` prefill lanes for its lane time ``S_work`` (:func:`prefill_service`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from tco.core.draws import maximum, minimum
from tco.core.serving import expert, parallelism, sojourn
from tco.core.serving.roofline import memory_read_time_s
from tco.core.serving.shapes import Demand, DeviceShape, ModelShape, PoolTerms, pool_terms
from tco.core.serving.steps import ConcaveLines, CycleModel, branch_min, times

#: rounding guard of whole token and slot counts (copied into the workbook; not an assumption)
FLOOR_GUARD = 1e-9
CEIL_GUARD = 1e-9


def collective_times_per_token_s(shape: parallelism.Shape, model: ModelShape, device: DeviceShape, terms: PoolTerms):
    """The bandwidth part of a replica's collectives per token of a cycle: a decode token's, and a prompt token's
    where the device gives the collectives of prompt tokens their own share of the links
    (``prefill_collective_efficiency``), else None (the decode tokens' figure for both).

    Why two: a decode step moves ``B`` tokens through GEMMs split over the tensor group, a prefill chunk thousands
    (all-reduces of ``N h`` elements: 2,048 tokens x 8,192 x 2 B = 34 MB per GEMM on Llama 3 70B), in the regime where
    NCCL's ring reaches 0.82 of the per-direction link rate on 8 H100s ([nccl-tests-212]); the Hopper and CDNA3 classes'
    fitted ``collective_efficiency`` is an effective figure of decode-heavy runs that also absorbs the small split
    GEMMs and un-fused all-reduces of a decode step (docs/calibration.md).

    Parameters
    ----------
    shape : Shape
        The replica shape.
    model : ModelShape
        Layers, hidden size, collective element bytes and experts per token.
    device : DeviceShape
        Its scale-up domain [devices].
    terms : PoolTerms
        The bandwidths the collectives reach per device [B/s]: decode tokens', and prompt tokens' (or None).

    Returns
    -------
    tuple
        ``(decode, prompt)`` [s/token]; ``prompt`` None where the device gives no prompt-token figure.
    """
    def per_token(up, out):
        return parallelism.sync_time_per_token_s(shape, model.layers, model.hidden_size, model.collective_element_bytes,
                                                 model.experts_per_token, up, out, device.domain_devices)

    decode = per_token(terms.scale_up_bytes_per_s, terms.scale_out_bytes_per_s)
    if terms.prefill_scale_up_bytes_per_s is None:
        return decode, None
    return decode, per_token(terms.prefill_scale_up_bytes_per_s, terms.prefill_scale_out_bytes_per_s)


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
                terms: PoolTerms | None = None) -> CycleModel:
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
    terms : PoolTerms or None
        The pool's shape-independent terms when already computed.

    Returns
    -------
    CycleModel
        The replica's cycle time [s] as a function of its decode and prefill tokens.
    """
    terms = terms or pool_terms(model, device, demand, role)
    model = expert.replica_model(shape, model, demand)
    n = float(shape.devices)
    replication = parallelism.kv_replication(shape.tensor, model.kv_heads)
    if terms.decode_kv_bytes_per_token is not None and not isinstance(replication, np.ndarray) and replication == 1:
        # one copy: the pool's, computed once
        decode_kv, prefill_kv = terms.decode_kv_bytes_per_token, terms.prefill_kv_bytes_per_token
    else:
        k = times(replication, model.kv_bytes_per_token)
        decode_kv, prefill_kv = terms.context_tokens * k, terms.prefill_kv_factor * k
        if role != "prefill" and demand.speculation is not None:  # as the pool's (pool_terms): the draft's reads too
            decode_kv = decode_kv * demand.speculation.weight_reads
    sync_fixed = parallelism.sync_latency_per_cycle_s(shape, model.layers, device.sync_latency_s) + device.cycle_overhead_s
    sync_per_token, sync_per_prompt_token = collective_times_per_token_s(shape, model, device, terms)
    expert_fixed, expert_per_token, expert_keep = 0.0, 0.0, None
    if shape.wide:  # the expert all-to-alls: under the other micro-batch's phases, or after the phases
        expert_fixed, expert_per_token = expert.all_to_all_s(shape, model, device, demand, role)
        if shape.micro_batches > 1:
            expert_keep = 1.0 - demand.micro_batch_overlap
        else:
            sync_fixed, sync_per_token = sync_fixed + expert_fixed, sync_per_token + expert_per_token
            if sync_per_prompt_token is not None:
                sync_per_prompt_token = sync_per_prompt_token + expert_per_token
            expert_fixed = expert_per_token = 0.0
    speculation = None if role == "prefill" else demand.speculation
    passes = reads = 1.0
    if speculation is not None:  # the draft's k passes at f of the cost: k f more fixed latencies per cycle
        passes, reads = speculation.token_passes, speculation.weight_reads
        sync_fixed, expert_fixed = sync_fixed * reads, expert_fixed * reads
    return CycleModel(
        pipeline=shape.pipeline,
        weight_bytes=model.weight_bytes,
        read_fixed_bytes=model.read_fixed_bytes,
        read_per_token_bytes=model.read_per_token_bytes,
        moe=model.moe,
        weight_flops_per_token=effective_weight_flops_per_token(model, device),
        decode_kv_bytes_per_token=decode_kv,
        decode_attention_flops_per_token=terms.decode_attention_flops_per_token,
        prefill_kv_bytes_per_token=prefill_kv,
        prefill_attention_flops_per_token=terms.prefill_attention_flops_per_token,
        flops_per_s=times(n, device.flops_per_s),
        tier_capacity_bytes=tuple(times(n, c) for c in terms.device_capacity_bytes),
        tier_bandwidth_bytes_per_s=tuple(times(n, b) for b in terms.device_bandwidth_bytes_per_s),
        sync_fixed_s=sync_fixed,
        sync_per_token_s=sync_per_token,
        sync_per_prompt_token_s=sync_per_prompt_token,
        memory_compute_overlap=demand.memory_compute_overlap,
        phase_overlap=demand.phase_overlap,
        comm_overlap=demand.comm_overlap,
        keeps=terms.keeps,
        micro_batches=shape.micro_batches,
        data_parallel=shape.data_parallel,
        expert_fixed_s=expert_fixed,
        expert_per_token_s=expert_per_token,
        expert_keep=expert_keep,
        token_passes=passes,
        weight_reads=reads,
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
    if cm.data_parallel > 1:  # a replica's ridge spread over its attention ranks, each one lane
        ridge = ridge / cm.data_parallel
    fit = np.floor(demand.token_budget_tokens / demand.prompt_tokens + FLOOR_GUARD)
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
    p = cm.lanes
    if demand.policy == "chunked":
        full = times(p, demand.token_budget_tokens)
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
    return role == "colocated" and not streamed_prefill and any(shape.lanes > 1 for shape in shapes)


def interference_lines(chi, ratio, pipeline, micro_batch_tokens, two_lines: bool, budget_tokens=None,
                       prompt_scv=0.0, budget_per_sequence=1.0) -> ConcaveLines:
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
    budget_per_sequence : float or ndarray [tokens]
        Budget tokens one decode sequence takes, ``q`` (speculative decoding: its ``k + 1`` verified tokens; the
        falling line is then ``chi (p tau - q B)``).

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
    return ConcaveLines((*intercepts, pipeline * chi * budget_tokens), (*slopes, -times(budget_per_sequence, chi)),
                        (True, True, False))


class PrefillService(NamedTuple):
    """One prompt's prefill on a replica (:func:`prefill_service`), arrays over draws."""

    work_s: object
    """Lane time of one prompt while prompts wait, ``S_work`` [s]."""
    latency_s: object
    """The prompt's prefill once started, no other prompt beside it [s]."""
    lanes: float
    """Prefill lanes per replica (one per micro-batch, ``p``) [lanes]."""
    budget_left: object
    """Chunked: the decode tokens leave budget for a chunk, ``tau_free > 0`` [bool] (whole-prompt passes: True)."""


def prefill_service(cm: CycleModel, demand: Demand, chunked: bool, chi, decode_cycle_s, slots, prompts=None,
                    streamed: bool = True) -> PrefillService:
    """Prefill of one prompt: its lane time, its latency and the lanes of a replica.

    The lane time ``work`` is the service time of one prompt on one of the replica's ``p`` lanes (one per
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
    part of the latency beyond the lane time (:func:`own_prefill_s`; up to one decode step: a 294-token prompt at
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
    PrefillService
        Lane time [s], latency [s], lanes per replica [lanes] and whether budget is left for a chunk [bool].

    References
    ----------
    [sarathi-serve-osdi2024] chunked prefill under a token budget.
    """
    p, prompt = float(cm.lanes), demand.prompt_tokens
    if chunked:
        free = demand.token_budget_tokens - times(demand.budget_tokens_per_sequence, slots) / p
        chunks = prompt / np.maximum(free, 1e-9)
        own = prompt * chi
        work = p * own + chunks * decode_cycle_s
        latency = np.maximum(np.ceil(chunks), 1.0) * decode_cycle_s + (own if streamed else times(p, own))
        return PrefillService(work, latency, p, free > 0.0)
    prompts = prefill_pass_prompts(cm, demand) if prompts is None else prompts
    latency = cm.cycle_s(0.0, times(p, prompts) * prompt)
    return PrefillService(latency / prompts, latency, p, True)


def own_prefill_s(work_s, latency_s):
    """The part of a prompt's prefill latency that scales with its length, ``L = min(latency, work)``.

    The lane work ``S`` scales with the prompt (its chunks, or its share of a pass); a latency beyond it (the decode
    step of a prompt shorter than one chunk, the other prompts of a whole-prompt pass) is taken as fixed
    (:mod:`tco.core.serving.sojourn`).

    Parameters
    ----------
    work_s : float or ndarray [s]
        Lane time of one prompt while prompts wait.
    latency_s : float or ndarray [s]
        The prompt's prefill once started.

    Returns
    -------
    float or ndarray [s]
        ``min(latency, work)``.
    """
    return np.minimum(latency_s, work_s)


def own_prefill_fits(slack_s, own_s, prompt_scv, epsilon):
    """Whether the TTFT target can hold at all: the lanes' slack at mean lengths (positive) covers the own prefill's
    excess at their percentile budget, ``L (X_q - 1)`` (:func:`tco.core.serving.sojourn.length_quantile`;
    ``slack > 0`` when every prompt is at the mean length).

    Parameters
    ----------
    slack_s : float or ndarray [s]
        The lanes' TTFT slack at mean lengths.
    own_s : float or ndarray [s]
        The length-proportional part of the mean prompt's prefill, ``L`` (:func:`own_prefill_s`).
    prompt_scv : float or ndarray [-]
        Squared CV of the prompt length.
    epsilon : float or ndarray [-]
        The lanes' percentile budget.

    Returns
    -------
    bool or ndarray of bool [-]
        Per draw, whether the longest prompts' own prefill fits the slack.
    """
    if sojourn.deterministic(prompt_scv):
        return slack_s > 0.0
    return (slack_s > 0.0) & (slack_s > own_s * (sojourn.length_quantile(prompt_scv, epsilon) - 1.0))


class SeenCycles(NamedTuple):
    """A replica's cycle model and the cycle lines its requests see (:func:`seen_cycles`)."""

    cycle_model: CycleModel
    """The replica's cycle time as a function of its decode and prefill tokens [s]."""
    chunked: bool
    """Chunked prefill riding in the decode cycles (colocated)."""
    prefill_per_token_s: object
    """Replica time per prefill token, ``chi`` [s/token] (colocated; else 0)."""
    interference: ConcaveLines | None
    """The prefill riding in a cycle at a decode occupancy [s] (colocated; else None)."""
    seen_lines: list
    """The cycle lines the requests see, one per branch [s]."""


def seen_cycles(role: str, cm: CycleModel, demand: Demand, terms: PoolTerms, pipeline: int) -> SeenCycles:
    """The cycle lines a replica's requests see, with its cycle model.

    Decode pools see the decode lines; a colocated replica sees them plus the prefill riding in its cycles
    (:func:`interference_lines`, ``chi`` the replica time per prefill token, ``chunked`` its policy).

    Parameters
    ----------
    role : str
        ``colocated``, ``prefill`` or ``decode``.
    cm : CycleModel
        The replica's cycle model.
    demand : Demand
        Policy, prompt length [tokens], token budget [tokens] and prompt length spread [-].
    terms : PoolTerms
        ``P / O`` [-] and whether the pool's interference takes two lines.
    pipeline : int [-]
        The replica's pipeline stages ``p``.

    Returns
    -------
    SeenCycles
        The cycle model, the policy, ``chi`` [s/token], the interference lines [s] and the seen lines [s].
    """
    lines = cm.decode_lines()
    if role != "colocated":
        return SeenCycles(cm, False, 0.0, None, lines)
    chunked = demand.policy == "chunked"
    chi = prefill_token_cost_s(cm, demand, branch_min([b(0.0) for b in lines]))
    held = 0.0  # the prefill tokens one prompt's chunk brings to a micro-batch (micro-batch pipelines)
    if terms.two_interference_lines:
        held = minimum(demand.prompt_tokens, demand.token_budget_tokens) if chunked else \
            prefill_pass_prompts(cm, demand) * demand.prompt_tokens
    interference = interference_lines(chi, terms.ratio, pipeline, held, terms.two_interference_lines,
                                      demand.token_budget_tokens if chunked else None, demand.prompt_scv,
                                      demand.budget_tokens_per_sequence)
    return SeenCycles(cm, chunked, chi, interference, [branch for b in lines for branch in interference.branches(b)])


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
