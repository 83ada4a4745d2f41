"""What one pool is sized for: the demand, the model and the device as the serving model sees them.

:class:`Demand` holds the workload and the serving settings every pool of an option shares (request lengths, rates,
latency targets at a percentile, the batch limit, the token budget, the overlaps, the scheduling policy and how prompts
reach a disaggregated prefill pool); :class:`ModelShape` and :class:`DeviceShape` the model's bytes and FLOPs and the
device's memory tiers, compute and links. All are built by keyword; their arrays broadcast over draws. :class:`PoolTerms`
(:func:`pool_terms`) are the terms of a pool that do not depend on the replica shape, computed once per
:func:`tco.core.serving.search.size_pool` call (docs/model.md "Serving under load").
"""

from __future__ import annotations

from dataclasses import dataclass

from tco.core.draws import maximum, minimum
from tco.core.serving import queueing
from tco.core.serving.speculation import Speculation
from tco.core.serving.steps import _add, overlap_keeps, times

#: the scheduling policies of a replica that serves prefill and decode (``Demand.policy``): ``chunked``, prefill chunks
#: riding in the decode cycles under the token budget; ``prefill_first``, whole-prompt passes that stall decoding
#: (:func:`tco.core.serving.cycles.prefill_token_cost_s`)
POLICIES = ("chunked", "prefill_first")
#: how prompts reach a disaggregated prefill pool (``Demand.prefill_queue``): ``shared``, one queue whose next prompt
#: goes to the first replica to free (a global prefill queue the workers pull from); ``dispatched``, a router binds
#: each prompt to one replica at arrival, so one that finds every lane busy waits out its own replica's work
#: (:mod:`tco.core.serving.queueing`, the colocated lanes' rule; docs/model.md "Dispatched lanes")
PREFILL_QUEUES = ("shared", "dispatched")
#: the pools an option has: one colocated pool, or a prefill and a decode pool (disaggregated)
ROLES = ("colocated", "prefill", "decode")


@dataclass(frozen=True, kw_only=True)
class Demand:
    """Workload and serving settings seen by every pool (arrays broadcast over draws)."""

    prompt_tokens: object
    """Prompt tokens a prefill computes, ``P_c`` (the prompt less its cached prefix ``H``) [tokens]."""
    output_tokens: object
    """Output length ``O`` [tokens]."""
    peak_requests_per_s: object
    """The request rate the pools are sized for, ``lambda`` [req/s]."""
    mean_requests_per_s: object
    """The mean request rate (utilization) [req/s]."""
    ttft_target_s: object
    """Time-to-first-token target at the percentile [s]."""
    tpot_target_s: object
    """Time-per-output-token target at the percentile [s]."""
    percentile: object
    """The percentile ``q`` the targets hold at [-] (``epsilon = 1 - q``)."""
    max_batch_sequences: object
    """The most sequences the serving stack runs in one batch [sequences]."""
    token_budget_tokens: object
    """Tokens per micro-batch, ``tau`` (``max_num_batched_tokens``) [tokens]."""
    memory_compute_overlap: object
    """Overlap of memory and arithmetic inside a phase, ``o_mc`` [-]."""
    phase_overlap: object
    """Overlap of the weight and attention phases, ``o_p`` [-]."""
    comm_overlap: object
    """Overlap of the collectives with the phases, ``o_c`` [-]."""
    policy: str = "chunked"
    """Scheduling policy of a replica that serves prefill and decode (:data:`POLICIES`)."""
    prompt_scv: object = 0.0
    """Squared CV of the prompt length [-] (:mod:`tco.core.serving.sojourn`; 0: every prompt at the mean)."""
    prefill_queue: str = "shared"
    """A disaggregated prefill pool's queue (:data:`PREFILL_QUEUES`)."""
    expert_imbalance: object = 1.0
    """Expert parallel: the busiest rank's routed tokens over the mean, after the load balancer (``serving.
    expert_imbalance``; 1: balanced) [-]."""
    redundant_expert_share: object = 0.0
    """Expert parallel: redundant (duplicated) routed experts over the routed experts, EPLB's (``serving.
    redundant_expert_share``) [-]."""
    micro_batch_overlap: object = 0.0
    """Two-batch overlap: the share of one micro-batch's expert all-to-all hidden under the other's computation
    (``serving.micro_batch_overlap``) [-]."""
    cached_prompt_tokens: object = 0.0
    """``H``, prompt tokens whose KV comes from the prefix cache instead of the prefill (the prompt is ``P_c + H``)
    [tokens] (:mod:`tco.core.serving.prefix_cache`)."""
    speculation: Speculation | None = None
    """A decode pool's speculative decoding (None: one token per sequence and step)."""
    min_fleet_devices: object = 0.0
    """Devices the pool has at least, whatever serving needs: those that hold its prefix cache (0: none) [devices]."""

    @property
    def decode_steps(self):
        """Decode steps a request takes, ``O / tau`` [steps] (``O`` without speculation)."""
        if self.speculation is None:
            return self.output_tokens
        return self.output_tokens / self.speculation.tokens_per_step

    @property
    def step_target_s(self):
        """The time a decode step may take to meet the TPOT target, ``tau T_tpot`` [s] (``T_tpot`` without
        speculation)."""
        if self.speculation is None:
            return self.tpot_target_s
        return self.tpot_target_s * self.speculation.tokens_per_step

    @property
    def budget_tokens_per_sequence(self):
        """Tokens a decode sequence takes of a micro-batch's token budget, ``k + 1`` (1 without speculation)
        [tokens]."""
        return 1.0 if self.speculation is None else self.speculation.verify_tokens

    @property
    def tokens_per_step(self):
        """Tokens a decode step emits per sequence, ``tau`` [tokens/step] (1 without speculation)."""
        return 1.0 if self.speculation is None else self.speculation.tokens_per_step

    @property
    def prefill_dispatched(self) -> bool:
        """Whether a disaggregated prefill pool's prompts are dispatched at arrival (:data:`PREFILL_QUEUES`)."""
        return self.prefill_queue == "dispatched"


@dataclass(frozen=True, kw_only=True)
class ModelShape:
    """The model as the cycle needs it (arrays) plus its static shape facts."""

    weight_bytes: object
    """Stored weights [B]."""
    read_fixed_bytes: object
    """Weight bytes read per micro-batch whatever its tokens (MoE: the shared weights; dense: the active ones) [B]."""
    read_per_token_bytes: object
    """MoE: weight bytes read per token of a micro-batch, ``k`` routed experts (dense: 0) [B/token]."""
    weight_flops_per_token: object
    """``2 A``, the weights' arithmetic per token [FLOP/token]."""
    kv_bytes_per_token: object
    """KV cache of one token, one copy ``k`` [B/token]."""
    layers: object
    """Transformer layers ``L`` [-]."""
    attention_dim: object
    """Attention width ``d`` of the attention FLOPs ``4 L d C`` [-]."""
    hidden_size: object
    """Hidden size ``h`` of the activations a collective moves [-]."""
    experts_per_token: object
    """MoE: routed experts per token ``k`` (dense: 1) [-]."""
    collective_element_bytes: object
    """Bytes per element a collective moves (``serving.collective_bits / 8``) [B]."""
    kv_heads: float
    """KV heads (static; 1 for latent attention) [-]."""
    moe: bool
    """Static: a mixture-of-experts model."""
    routed_flops_per_token: object = 0.0
    """MoE: the part of ``2 A`` in the routed experts' GEMMs, ``2 k E`` (dense: 0) [FLOP/token]."""
    routed_weight_bytes: object = 0.0
    """MoE: the stored routed experts, ``E e`` bytes (the rest of ``weight_bytes`` is attention, dense layers, shared
    experts and embeddings, which a data-parallel attention rank holds whole) [B]."""
    moe_layers: object = None
    """MoE: layers with routed experts (their all-to-alls; None: every layer) [-]."""
    dispatch_element_bytes: object = None
    """Bytes per element an expert dispatch moves (``serving.dispatch_bits / 8``; None: ``collective_element_bytes``)
    [B]."""


@dataclass(frozen=True, kw_only=True)
class DeviceShape:
    """One device type (arrays per device): memory tiers, compute, interconnect."""

    tier_capacity_bytes: tuple
    """Capacity of each memory tier, fastest first [B]."""
    tier_bandwidth_bytes_per_s: tuple
    """Bandwidth of each memory tier, fastest first [B/s]."""
    usable_fraction: object
    """Share of each tier's capacity the serving stack can fill [-]."""
    bandwidth_efficiency: object
    """Share of each tier's bandwidth a cycle reaches [-]."""
    flops_per_s: object
    """Peak arithmetic at the compute width x compute efficiency [FLOP/s]."""
    sync_latency_s: object
    """Latency of one collective or stage hop [s]."""
    scale_up_bytes_per_s: object
    """Chip-to-chip bandwidth per direction inside the scale-up domain [B/s]."""
    scale_out_bytes_per_s: object
    """Network bandwidth per direction beyond the scale-up domain [B/s]."""
    domain_devices: object
    """Devices in one scale-up domain [devices]."""
    min_devices: object = 1.0
    """The fewest devices a replica of the pool has [devices]."""
    cycle_overhead_s: object = 0.0
    """Fixed time per cycle (every micro-batch advances one pass) [s]."""
    collective_efficiency: object = 1.0
    """Share of the link bandwidth the collectives reach [-]."""
    prefill_collective_efficiency: object = None
    """Share of the link bandwidth the collectives of prompt tokens reach (None: ``collective_efficiency``) [-]."""
    expert_compute_efficiency: object = 1.0
    """The routed-expert GEMMs' share of the dense compute efficiency [-]."""
    streamed_prefill: bool = False
    """Static: a prompt's tokens stream through the pipeline stages (dataflow parts)."""
    all_to_all_efficiency: object = 1.0
    """Share of the link bandwidth an expert all-to-all reaches [-]."""
    all_to_all_latency_s: object = None
    """Fixed time of one expert all-to-all (dispatch or combine) beside its bytes (None: ``sync_latency_s``) [s]."""
    purchase_unit_devices: int = 1
    """Static: devices sold together; a whole-device pool holds whole units
    (:func:`tco.core.serving.sizing.replica_multiple`) [devices]."""


@dataclass(frozen=True, kw_only=True)
class PoolTerms:
    """Shape-independent terms of a pool, computed once per :func:`tco.core.serving.search.size_pool` call."""

    context_tokens: object
    """Mean context a decode token attends to, ``C = P + O/2`` [tokens]."""
    decode_attention_flops_per_token: object
    """Attention arithmetic per decode token, ``4 L d C`` [FLOP/token]."""
    prefill_attention_flops_per_token: object
    """Attention arithmetic per computed prefill token, ``2 L d (P_c + 2 H)`` (``2 L d P`` with no cached prefix)
    [FLOP/token]."""
    prefill_kv_factor: object
    """KV reads per prefill token over one copy: chunked colocated, each chunk re-reads the earlier ones [-]."""
    device_capacity_bytes: tuple
    """Usable capacity of each memory tier of one device [B]."""
    device_bandwidth_bytes_per_s: tuple
    """Achievable bandwidth of each memory tier of one device [B/s]."""
    sequence_kv_bytes: object = None
    """KV bytes of one sequence (prompt, plus output unless prefill-only) [B]."""
    total_kv_bytes: object = None
    """KV bytes of one whole sequence, ``P + O`` tokens [B]."""
    ratio: object = 0.0
    """``P_c / (O / tau)`` when colocated (prefill tokens per decode step), else 0 [-]."""
    log_term: object = 0.0
    """``ln(1 / (2 epsilon))`` of a queue that holds the whole percentile budget ``epsilon`` (colocated: 0) [-]."""
    scale_up_bytes_per_s: object = 0.0
    """The scale-up links' bandwidth the collectives reach, per device [B/s]."""
    scale_out_bytes_per_s: object = 0.0
    """The scale-out network's bandwidth the collectives reach, per device [B/s]."""
    prefill_scale_up_bytes_per_s: object = None
    """The scale-up links' bandwidth the collectives of prompt tokens reach, per device (None: the decode tokens')
    [B/s]."""
    prefill_scale_out_bytes_per_s: object = None
    """The scale-out network's bandwidth the collectives of prompt tokens reach, per device (None: the decode tokens')
    [B/s]."""
    keeps: tuple | None = None
    """``1 - o`` of the three overlaps (:func:`tco.core.serving.steps.overlap_keeps`) [-]."""
    decode_kv_bytes_per_token: object = None
    """KV bytes read per decode token at the mean context, one copy [B/token]."""
    prefill_kv_bytes_per_token: object = None
    """KV bytes read per prefill token, one copy [B/token]."""
    two_interference_lines: bool = False
    """Static: the pool's candidates bound their prefill interference with two lines (micro-batch pipelines, see
    :func:`tco.core.serving.cycles.interference_lines`); every candidate of a pool has the same line structure."""


def pool_terms(model: ModelShape, device: DeviceShape, demand: Demand, role: str) -> PoolTerms:
    """The terms of a pool that do not depend on its replica shape.

    Parameters
    ----------
    model : ModelShape
        KV bytes [B/token], layers and attention width [-].
    device : DeviceShape
        Memory tiers [B, B/s], their usable and achievable shares [-], links [B/s] and collective efficiency [-].
    demand : Demand
        Request lengths [tokens], token budget [tokens], percentile [-], overlaps [-] and policy.
    role : str
        ``colocated``, ``prefill`` or ``decode``.

    Returns
    -------
    PoolTerms
        Context [tokens], attention FLOPs [FLOP/token], KV bytes [B, B/token], tiers per device [B, B/s], ``P/O`` and
        the queue's log term [-], the links the collectives reach [B/s] and the overlaps' ``1 - o`` [-].
    """
    prompt, cached = demand.prompt_tokens, demand.cached_prompt_tokens
    whole_prompt = _add(prompt, cached)
    context = whole_prompt + 0.5 * demand.output_tokens
    factor = 1.0
    chunked = demand.policy == "chunked" and role == "colocated"
    if chunked:  # each chunk re-reads the prompt's earlier chunks
        factor = 1.0 + 0.5 * maximum(prompt / demand.token_budget_tokens - 1.0, 0.0)
    if not (type(cached) in (float, int) and cached == 0):  # and every chunk (one pass: the prompt) reads the cached prefix once
        factor = factor + cached / maximum(minimum(prompt, demand.token_budget_tokens) if chunked else prompt, 1.0)
    total = (whole_prompt + demand.output_tokens) * model.kv_bytes_per_token
    sequence = whole_prompt * model.kv_bytes_per_token if role == "prefill" else total
    epsilon = 1.0 - demand.percentile
    colocated = role == "colocated"
    speculation = None if role == "prefill" else demand.speculation
    prefill = device.prefill_collective_efficiency
    decode_attention = 4.0 * model.layers * model.attention_dim * context
    decode_kv = context * model.kv_bytes_per_token
    if speculation is not None:  # k + 1 + k f queries per sequence; the KV read once and the draft's k f times
        decode_attention = decode_attention * speculation.token_passes
        decode_kv = decode_kv * speculation.weight_reads
    return PoolTerms(
        context_tokens=context,
        decode_attention_flops_per_token=decode_attention,
        prefill_attention_flops_per_token=2.0 * model.layers * model.attention_dim * _add(prompt, 2.0 * cached),
        prefill_kv_factor=factor,
        device_capacity_bytes=tuple(c * device.usable_fraction for c in device.tier_capacity_bytes),
        device_bandwidth_bytes_per_s=tuple(b * device.bandwidth_efficiency for b in device.tier_bandwidth_bytes_per_s),
        sequence_kv_bytes=sequence,
        total_kv_bytes=total,
        ratio=prompt / demand.decode_steps if colocated else 0.0,
        log_term=0.0 if colocated else queueing.wait_log_term(epsilon),
        scale_up_bytes_per_s=device.scale_up_bytes_per_s * device.collective_efficiency,
        scale_out_bytes_per_s=device.scale_out_bytes_per_s * device.collective_efficiency,
        prefill_scale_up_bytes_per_s=None if prefill is None else device.scale_up_bytes_per_s * prefill,
        prefill_scale_out_bytes_per_s=None if prefill is None else device.scale_out_bytes_per_s * prefill,
        keeps=overlap_keeps(demand.memory_compute_overlap, demand.phase_overlap, demand.comm_overlap),
        decode_kv_bytes_per_token=decode_kv,
        prefill_kv_bytes_per_token=times(factor, model.kv_bytes_per_token))

