"""Training step of a transformer LLM on a cluster: FLOPs, memory fit, parallelism, communication.

One optimizer step processes the global batch (``global_batch_tokens`` tokens in
sequences of ``seq_len`` tokens) on ``D`` devices split into tensor (``t``), pipeline
(``p``, with ``v`` virtual stages each), expert (``e``) and data (``d = floor(D / (t p))``)
parallel groups, Megatron-LM style (Narayanan et al., "Efficient Large-Scale Language Model
Training on GPU Clusters Using Megatron-LM", SC 2021). The parallelism is not assumed: a
static list of candidate shapes (:data:`CANDIDATES`) is evaluated on a trailing axis, all
at once, and the fastest shape that fits memory is kept (:func:`best_shape`).

Step time (all terms per device, in seconds)::

    t_step = (t_compute + (1 - o) (t_tp + t_ep)) (1 + bubble) + (1 - o) t_pp + max(t_dp - o w, 0)

with ``o`` the share of tensor/expert/pipeline traffic hidden behind compute and ``w``
the compute the data-parallel gradient exchange can hide behind (the backward pass of the
last micro-batch and the forward pass of the first, ``t_compute / m``).

Every function broadcasts over numpy arrays; candidate shapes sit on the last axis.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np

#: what limits a training step (``training.bound``)
TRAINING_BOUNDS = ("compute", "pipeline bubble", "tensor-parallel traffic", "expert-parallel traffic",
                   "data-parallel traffic", "pipeline traffic")
#: Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models", MLSys 2023:
#: activation bytes per layer per token = hidden x 34 (16-bit, sequence parallel, selective recompute)
ACTIVATION_BYTES_PER_HIDDEN = 34.0
#: with full recomputation a layer keeps only its 16-bit input: hidden x 2 bytes per token
CHECKPOINTED_INPUT_BYTES_PER_HIDDEN = 2.0
#: bytes per element of the activations and gradients sent between devices (BF16)
WIRE_BYTES = 2.0


@dataclass(frozen=True)
class Candidates:
    """Candidate parallel shapes, one per entry on the last axis."""

    tensor: np.ndarray
    pipeline: np.ndarray
    virtual: np.ndarray
    expert: np.ndarray
    recompute: np.ndarray
    fsdp: np.ndarray

    def __len__(self) -> int:
        return len(self.tensor)

    def label(self, k: int) -> str:
        """``TP8 PP16 VP4 EP1 recompute 0.25`` (`` FSDP`` appended when sharded) for candidate ``k``.

        Parameters
        ----------
        k : int [-]
            Candidate index.

        Returns
        -------
        str
            The label.
        """
        return (f"TP{int(self.tensor[k])} PP{int(self.pipeline[k])} VP{int(self.virtual[k])} EP{int(self.expert[k])} "
                f"recompute {self.recompute[k]:g}{' FSDP' if self.fsdp[k] else ''}")


def _candidates() -> Candidates:
    rows = [(t, p, v, e, r, f) for t, p, v, e, r, f in itertools.product((1, 2, 4, 8), (1, 2, 4, 8, 16), (1, 4), (1, 8, 64),
                                                                          (0.0, 0.25, 0.5, 1.0), (0, 1))
            if not (p == 1 and v > 1) and not (f and p > 1)]
    columns = np.array(rows, dtype=float).T
    return Candidates(*columns)


#: the static candidate list: TP 1-8, PP 1-16, interleaving 1 or 4, EP 1/8/64, a share 0, 1/4, 1/2 or all of the
#: layers fully recomputed (Megatron ``--recompute-num-layers``; the rest keep selective recomputation), and,
#: without pipelining, fully sharded data parallelism (FSDP / ZeRO-3) or not
CANDIDATES = _candidates()


def model_flops_per_token(params_active, layers, attention_dim, seq_len):
    """Model FLOPs of one token in training, forward and backward.

    ``6 A`` through the weights (2 forward, 4 backward per active parameter; Kaplan et al. 2020)
    plus causal attention ``6 L a s``: ``Q K^T`` and ``A V`` cost ``4 a s`` per token and layer
    forward over the full sequence, halved by the causal mask, tripled for the backward pass (the
    count MaxText uses since its causal-attention correction, PR #1988, and Megatron-Bridge
    reports). This is the numerator of model FLOPs utilization (MFU): recomputation is not counted.

    Parameters
    ----------
    params_active : float or numpy.ndarray [params]
        Parameters active per token A.
    layers : float or numpy.ndarray [layers]
        Transformer layers L.
    attention_dim : float or numpy.ndarray [elements]
        Query heads x head dimension a.
    seq_len : float or numpy.ndarray [tokens]
        Training sequence length s.

    Returns
    -------
    numpy.ndarray [FLOP/token]
        ``6 A + 6 L a s``.

    References
    ----------
    [kaplan-2020] 6 FLOPs per parameter and token.
    [maxtext-tiering] the causal-attention count of MFU.
    [megatron-bridge-perf] MFU reported on the same count.
    """
    return 6.0 * np.asarray(params_active, float) + 6.0 * layers * attention_dim * seq_len


def hardware_flops_per_token(params_active, layers, attention_dim, seq_len, recompute):
    """FLOPs the devices execute per token: model FLOPs plus a recomputed forward pass.

    A second forward pass (``2 A + 2 L a s``) over the share ``recompute`` of layers whose
    activations are fully recomputed.

    Parameters
    ----------
    params_active : float or numpy.ndarray [params]
        Parameters active per token.
    layers : float or numpy.ndarray [layers]
        Transformer layers.
    attention_dim : float or numpy.ndarray [elements]
        Query heads x head dimension.
    seq_len : float or numpy.ndarray [tokens]
        Training sequence length.
    recompute : float or numpy.ndarray [-]
        Share of layers fully recomputed (0-1).

    Returns
    -------
    numpy.ndarray [FLOP/token]
        :func:`model_flops_per_token` ``+ recompute (2 A + 2 L a s)``.

    References
    ----------
    [korthikanti-mlsys2023] full and selective activation recomputation.
    """
    forward = 2.0 * np.asarray(params_active, float) + 2.0 * layers * attention_dim * seq_len
    return model_flops_per_token(params_active, layers, attention_dim, seq_len) + recompute * forward


def routed_expert_params(params_total, params_active, experts_routed, experts_per_token):
    """Parameters in routed experts, all of them: ``E e`` with ``e = (total - active) / (E - k)``.

    Zero for a dense model (``E = k``).

    Parameters
    ----------
    params_total : float or numpy.ndarray [params]
        Total parameters.
    params_active : float or numpy.ndarray [params]
        Parameters active per token.
    experts_routed : float or numpy.ndarray [experts]
        Routed experts per MoE layer E.
    experts_per_token : float or numpy.ndarray [experts]
        Routed experts active per token k.

    Returns
    -------
    numpy.ndarray [params]
        Parameters in all routed experts.
    """
    spare = np.asarray(experts_routed, float) - experts_per_token
    per_expert = np.where(spare > 0, (np.asarray(params_total, float) - params_active) / np.where(spare > 0, spare, 1.0), 0.0)
    return per_expert * experts_routed


def model_state_bytes_per_device(params_total, expert_params, tensor, pipeline, expert, data,
                                 weight_grad_bytes_per_param, optimizer_bytes_per_param):
    """Weights, gradients and optimizer state held by one device.

    Weights and gradients of the device's shard (dense layers split ``t p`` ways, routed
    experts ``t p e`` ways) at ``weight_grad_bytes_per_param`` (2 + 2 for BF16 weights and
    gradients), plus the optimizer state (FP32 master copy and two Adam moments, ``K = 12``
    bytes per parameter) sharded over the data-parallel group (the distributed optimizer,
    ZeRO stage 1): ``K total / (t p d)``.

    Parameters
    ----------
    params_total : float or numpy.ndarray [params]
        Total parameters.
    expert_params : float or numpy.ndarray [params]
        Parameters in routed experts (:func:`routed_expert_params`).
    tensor, pipeline, expert, data : float or numpy.ndarray [devices]
        Tensor, pipeline, expert and data-parallel group sizes t, p, e, d.
    weight_grad_bytes_per_param : float or numpy.ndarray [B/param]
        Weight and gradient bytes per parameter on a device.
    optimizer_bytes_per_param : float or numpy.ndarray [B/param]
        Optimizer-state bytes per parameter K.

    Returns
    -------
    numpy.ndarray [B]
        Model state per device (ZeRO stage 1).

    References
    ----------
    [zero-sc2020] the sharded optimizer state (stage 1).
    """
    dense = np.asarray(params_total, float) - expert_params
    shard = dense / (tensor * pipeline) + expert_params / (tensor * pipeline * expert)
    return shard * weight_grad_bytes_per_param + optimizer_bytes_per_param * params_total / (tensor * pipeline * data)


def fully_sharded_state_bytes_per_device(params_total, layers, tensor, data, weight_grad_bytes_per_param,
                                         optimizer_bytes_per_param):
    """Model state per device under fully sharded data parallelism (FSDP, ZeRO stage 3).

    Weights, gradients and optimizer state all split ``t d`` ways (``(2 + 2 + K) N / N_d``),
    plus the unsharded weights of the two layers being gathered (the one computing and the one
    prefetched): ``2 x 2 N / (L t)`` bytes at BF16.

    Parameters
    ----------
    params_total : float or numpy.ndarray [params]
        Total parameters N.
    layers : float or numpy.ndarray [layers]
        Transformer layers L.
    tensor, data : float or numpy.ndarray [devices]
        Tensor and data-parallel group sizes t, d.
    weight_grad_bytes_per_param : float or numpy.ndarray [B/param]
        Weight and gradient bytes per parameter.
    optimizer_bytes_per_param : float or numpy.ndarray [B/param]
        Optimizer-state bytes per parameter K (12 for Adam in FP32).

    Returns
    -------
    numpy.ndarray [B]
        Model state per device, fully sharded, with the two gathered layers.

    References
    ----------
    [zero-sc2020] stage 3: every state sharded.
    """
    params = np.asarray(params_total, float)
    return (weight_grad_bytes_per_param + optimizer_bytes_per_param) * params / (tensor * data) + 4.0 * params / (layers * tensor)


def activation_bytes_per_device(seq_len, micro_batch_seqs, hidden, layers, tensor, recompute):
    """Activation memory of one device under 1F1B pipelining.

    Tensor + sequence parallel: a layer keeps ``34 s b h / t`` bytes with selective
    recomputation (attention scores recomputed, as FlashAttention does) or only its input,
    ``2 s b h / t``, with full recomputation (plus one layer rebuilt at a time); ``recompute``
    is the share of layers fully recomputed. The first pipeline stage holds ``p`` micro-batches
    of ``L / p`` layers in flight, i.e. ``L`` layers' worth whatever ``p`` is. Llama 3.1 405B,
    s = 8192, b = 1, t = 8, selective: 8192 x 16384 x 34 x 126 / 8 = 71.9 GB.

    Parameters
    ----------
    seq_len : float or numpy.ndarray [tokens]
        Sequence length s.
    micro_batch_seqs : float or numpy.ndarray [sequences]
        Sequences per micro-batch b.
    hidden : float or numpy.ndarray [elements]
        Model width h.
    layers : float or numpy.ndarray [layers]
        Transformer layers L.
    tensor : float or numpy.ndarray [devices]
        Tensor-parallel group t.
    recompute : float or numpy.ndarray [-]
        Share of layers fully recomputed (0-1).

    Returns
    -------
    numpy.ndarray [B]
        Activation bytes per device.

    References
    ----------
    [korthikanti-mlsys2023] 34 s b h per layer (16-bit, sequence parallel, selective recomputation).
    """
    tokens = seq_len * micro_batch_seqs
    per_layer = (1.0 - recompute) * ACTIVATION_BYTES_PER_HIDDEN + recompute * CHECKPOINTED_INPUT_BYTES_PER_HIDDEN
    rebuilt = np.where(recompute > 0, ACTIVATION_BYTES_PER_HIDDEN, 0.0)
    return tokens * hidden * (layers * per_layer + rebuilt) / tensor


def ring_allreduce_bytes_per_device(message_bytes, group):
    """Bytes one device sends in a ring all-reduce of ``message_bytes`` over ``group`` devices.

    ``2 (n - 1) / n x message``: a reduce-scatter plus an all-gather.

    Parameters
    ----------
    message_bytes : float or numpy.ndarray [B]
        The reduced message.
    group : float or numpy.ndarray [devices]
        Devices in the ring n.

    Returns
    -------
    numpy.ndarray [B]
        Bytes sent per device (0 for a group of one).

    References
    ----------
    [patarasuk-yuan-2009] the bandwidth-optimal ring all-reduce.
    """
    group = np.maximum(group, 1.0)
    return 2.0 * (group - 1.0) / group * message_bytes


def collective_time_s(bytes_per_device, bandwidth_bytes_per_s, latency_s, group, collectives=1.0):
    """Alpha-beta time of ``collectives`` collectives over ``group`` devices.

    ``bytes / bandwidth + collectives x 2 log2(n) x latency``, zero for a group of one.

    Parameters
    ----------
    bytes_per_device : float or numpy.ndarray [B]
        Bytes each device sends in all of them.
    bandwidth_bytes_per_s : float or numpy.ndarray [B/s]
        Per-direction bandwidth of the link used.
    latency_s : float or numpy.ndarray [s]
        Latency of one hop.
    group : float or numpy.ndarray [devices]
        Devices in the group n.
    collectives : float or numpy.ndarray [-]
        Number of collectives (each pays the latency term).

    Returns
    -------
    numpy.ndarray [s]
        Time of the collectives.
    """
    hops = 2.0 * np.log2(np.maximum(group, 1.0))
    return np.where(group > 1.0, bytes_per_device / bandwidth_bytes_per_s + collectives * hops * latency_s, 0.0)


def link_bandwidth(span_devices, scale_up_domain_devices, chip_to_chip_bytes_per_s, scale_out_bytes_per_s):
    """Per-direction bandwidth a group sees: scale-up while it fits one scale-up domain, scale-out beyond.

    Parameters
    ----------
    span_devices : float or numpy.ndarray [devices]
        Devices the group spans in rank order.
    scale_up_domain_devices : float or numpy.ndarray [devices]
        Devices one scale-up network joins.
    chip_to_chip_bytes_per_s : float or numpy.ndarray [B/s]
        Scale-up bandwidth per device and direction.
    scale_out_bytes_per_s : float or numpy.ndarray [B/s]
        Scale-out bandwidth per device and direction.

    Returns
    -------
    numpy.ndarray [B/s]
        The bandwidth the group's collectives run at.
    """
    return np.where(span_devices <= scale_up_domain_devices + 1e-9, chip_to_chip_bytes_per_s, scale_out_bytes_per_s)


def pipeline_bubble_fraction(pipeline, virtual, microbatches):
    """Idle share added by the pipeline fill and drain: ``(p - 1) / (v m)`` for the interleaved 1F1B schedule.

    Parameters
    ----------
    pipeline : float or numpy.ndarray [stages]
        Pipeline stages p.
    virtual : float or numpy.ndarray [-]
        Virtual stages per device v.
    microbatches : float or numpy.ndarray [-]
        Micro-batches per step m.

    Returns
    -------
    numpy.ndarray [-]
        Bubble time over ideal compute time.

    References
    ----------
    [narayanan-sc2021] Sec. 2.2, the interleaved schedule.
    """
    return (pipeline - 1.0) / (virtual * microbatches)


@dataclass
class StepInputs:
    """Everything one training step depends on (arrays that broadcast; candidates last)."""

    devices: object
    params_total: object
    params_active: object
    layers: object
    hidden: object
    attention_dim: object
    experts_routed: object
    experts_per_token: object
    seq_len: object
    global_batch_tokens: object
    micro_batch_seqs: object
    peak_flops: object  # achievable dense FLOP/s per device in training
    comm_overlap: object
    memory_bytes: object
    memory_usable_fraction: object
    chip_to_chip_bytes_per_s: object
    scale_up_domain_devices: object
    scale_out_bytes_per_s: object
    latency_s: object
    weight_grad_bytes_per_param: object
    optimizer_bytes_per_param: object
    gradient_bytes_per_param: object


@dataclass(frozen=True, kw_only=True)
class StepParts:
    """The parts of a training step, of every candidate shape (:class:`StepTerms`) or of the one chosen
    (:class:`ChosenShape`).

    ``step_s`` [s] the step time with the overlappable traffic hidden; ``memory_bytes_per_device`` [B] model state
    plus activations; ``devices_used`` [devices] ``data_parallel x t x p``; ``data_parallel`` [replicas];
    ``microbatches`` [-] per pipeline; ``bubble_fraction`` [-] pipeline fill and drain over ideal compute;
    ``compute_s`` [s] compute at the achievable FLOP/s; the traffic of each kind of parallelism before overlap,
    ``tensor_parallel_s``, ``expert_parallel_s``, ``data_parallel_s``, ``pipeline_s`` [s]; ``bound`` [-] what limits
    the step (index into :data:`TRAINING_BOUNDS`).
    """

    step_s: np.ndarray
    memory_bytes_per_device: np.ndarray
    devices_used: np.ndarray
    data_parallel: np.ndarray
    microbatches: np.ndarray
    bubble_fraction: np.ndarray
    compute_s: np.ndarray
    tensor_parallel_s: np.ndarray
    expert_parallel_s: np.ndarray
    data_parallel_s: np.ndarray
    pipeline_s: np.ndarray
    bound: np.ndarray


@dataclass(frozen=True, kw_only=True)
class StepTerms(StepParts):
    """The step of every candidate shape (candidates on the last axis; :func:`step_terms`): its
    :class:`StepParts` and ``feasible``, whether the candidate is a valid shape and fits memory."""

    feasible: np.ndarray


@dataclass(frozen=True, kw_only=True)
class ChosenShape(StepParts):
    """The fastest candidate that fits, per scenario (:func:`best_shape`; the candidate axis gone).

    The :class:`StepParts` of that candidate, its ``shape_index`` [-] in the candidate list and its degrees:
    ``tensor_parallel``, ``pipeline_parallel``, ``virtual_stages``, ``expert_parallel`` [devices, stages],
    ``recompute`` [-] (share of layers recomputed) and ``fsdp`` [-] (1: fully sharded). Where no candidate fits,
    ``step_s`` is infinite, ``shape_index`` -1 and the degrees NaN (the other parts are candidate 0's).
    """

    shape_index: np.ndarray
    tensor_parallel: np.ndarray
    pipeline_parallel: np.ndarray
    virtual_stages: np.ndarray
    expert_parallel: np.ndarray
    recompute: np.ndarray
    fsdp: np.ndarray


def step_terms(x: StepInputs, c: Candidates = CANDIDATES) -> StepTerms:
    """Every term of the step time for every candidate shape (candidates on a new last axis).

    Per candidate (tensor t, pipeline p, virtual v, expert e, recomputation, FSDP): whether it
    is a valid shape and fits memory (model state + activations within the usable memory),
    compute time at the achievable FLOP/s, the tensor-, expert-, pipeline- and data-parallel
    traffic (activations and gradients on the wire at :data:`WIRE_BYTES`, BF16), the bubble,
    and the step time with the overlappable traffic hidden behind compute.

    Parameters
    ----------
    x : StepInputs
        The run, model, device and cluster terms [each field's unit; FLOP/s, B, B/s, s];
        arrays that broadcast.
    c : Candidates
        The candidate shapes.

    Returns
    -------
    StepTerms
        Step time, fit, memory, degrees, the time of each part [s] and the bound, candidates last.

    References
    ----------
    [narayanan-sc2021] tensor x pipeline x data parallelism.
    [korthikanti-mlsys2023] activation memory and recomputation.
    [zero-sc2020] sharded state and FSDP traffic.
    """
    def col(v):
        return np.asarray(v, float)[..., None]

    devices, layers, hidden, seq = col(x.devices), col(x.layers), col(x.hidden), col(x.seq_len)
    experts, k_active = col(x.experts_routed), col(x.experts_per_token)
    t, p, v, e, r, f = c.tensor, c.pipeline, c.virtual, c.expert, c.recompute, c.fsdp
    data = np.floor(devices / (t * p) + 1e-9)
    used = data * t * p
    batch_seqs = col(x.global_batch_tokens) / seq
    micro = col(x.micro_batch_seqs)
    microbatches = batch_seqs / np.maximum(data, 1.0) / micro
    expert_params = routed_expert_params(col(x.params_total), col(x.params_active), experts, k_active)
    moe = experts > 1.0
    # shape rules: whole groups, a micro-batch per pipeline, layers to fill the stages, experts to split
    valid = (data >= 1.0) & (microbatches >= 1.0 - 1e-9) & (layers >= p * v - 1e-9) & (e <= np.where(moe, experts, 1.0))
    valid &= e <= data  # expert groups are carved out of the data-parallel group
    state = np.where(f > 0, fully_sharded_state_bytes_per_device(
        col(x.params_total), layers, t, np.maximum(data, 1.0), col(x.weight_grad_bytes_per_param),
        col(x.optimizer_bytes_per_param)), model_state_bytes_per_device(
        col(x.params_total), expert_params, t, p, e, np.maximum(data, 1.0), col(x.weight_grad_bytes_per_param),
        col(x.optimizer_bytes_per_param)))
    activations = activation_bytes_per_device(seq, micro, hidden, layers, t, r)
    memory_need = state + activations
    fits = memory_need <= col(x.memory_bytes) * col(x.memory_usable_fraction)

    flops_hw = hardware_flops_per_token(col(x.params_active), layers, col(x.attention_dim), seq, r)
    compute_s = col(x.global_batch_tokens) * flops_hw / (np.maximum(used, 1.0) * col(x.peak_flops))
    c2c, domain, out_bw, lat = col(x.chip_to_chip_bytes_per_s), col(x.scale_up_domain_devices), col(x.scale_out_bytes_per_s), \
        col(x.latency_s)
    micro_tokens = seq * micro
    activation_msg = micro_tokens * hidden * WIRE_BYTES
    layers_per_stage = layers / p
    # tensor parallel: 4 all-reduce equivalents per layer and micro-batch (+2 for a recomputed forward)
    tp_collectives = (4.0 + 2.0 * r) * layers_per_stage * microbatches
    tp_bytes = tp_collectives * ring_allreduce_bytes_per_device(activation_msg, t)
    tp_s = collective_time_s(tp_bytes, link_bandwidth(t, domain, c2c, out_bw), lat, t, tp_collectives)
    # expert parallel: dispatch and combine all-to-all, forward and backward, per MoE layer and micro-batch
    ep_collectives = 4.0 * layers_per_stage * microbatches * moe
    ep_bytes = ep_collectives * (micro_tokens / t) * hidden * WIRE_BYTES * k_active * (e - 1.0) / e
    ep_s = collective_time_s(ep_bytes, link_bandwidth(t * e, domain, c2c, out_bw), lat, e, ep_collectives)
    # pipeline: one activation forward and one gradient backward per stage boundary and micro-batch
    pp_bytes = 2.0 * v * microbatches * activation_msg / t
    pp_s = np.where(p > 1.0, pp_bytes / link_bandwidth(t * data * 2.0, domain, c2c, out_bw) + 2.0 * v * microbatches * lat, 0.0)
    # data parallel: gradient reduce-scatter + parameter all-gather of the device's shard, once per step;
    # FSDP gathers the parameters twice (forward and backward): 1.5x the volume (ZeRO stage 3, Rajbhandari et al.)
    shard_params = (col(x.params_total) - expert_params) / (t * p) + expert_params / (t * p * e)
    dp_bytes = (1.0 + 0.5 * f) * ring_allreduce_bytes_per_device(shard_params * col(x.gradient_bytes_per_param), data)
    dp_s = collective_time_s(dp_bytes, link_bandwidth(t * data, domain, c2c, out_bw), lat, data, 2.0 + f)

    overlap = col(x.comm_overlap)
    bubble = pipeline_bubble_fraction(p, v, np.maximum(microbatches, 1.0))
    in_stage = compute_s + (1.0 - overlap) * (tp_s + ep_s)
    # the exchange hides behind one micro-batch (last backward, first forward); FSDP prefetches layer by layer
    window = np.where(f > 0, compute_s, compute_s / np.maximum(microbatches, 1.0))
    dp_exposed = np.maximum(dp_s - overlap * window, 0.0)
    pp_exposed = (1.0 - overlap) * pp_s
    step_s = in_stage * (1.0 + bubble) + pp_exposed + dp_exposed
    parts = np.stack(np.broadcast_arrays(compute_s, in_stage * bubble, (1.0 - overlap) * tp_s * (1.0 + bubble),
                                         (1.0 - overlap) * ep_s * (1.0 + bubble), dp_exposed, pp_exposed))
    return StepTerms(step_s=step_s, feasible=valid & fits, memory_bytes_per_device=memory_need, devices_used=used,
                     data_parallel=data, microbatches=microbatches, bubble_fraction=bubble, compute_s=compute_s,
                     tensor_parallel_s=tp_s, expert_parallel_s=ep_s, data_parallel_s=dp_s, pipeline_s=pp_s,
                     bound=np.argmax(parts, axis=0).astype(float))


def best_shape(terms: StepTerms, c: Candidates = CANDIDATES) -> ChosenShape:
    """The fastest feasible candidate per scenario; its terms lose the candidate axis.

    Parameters
    ----------
    terms : StepTerms
        :func:`step_terms`' output.
    c : Candidates
        The candidate shapes (to name the chosen one).

    Returns
    -------
    ChosenShape
        The chosen candidate's terms [each term's unit], ``shape_index`` [-] (-1 and ``step_s``
        infinite where no candidate fits) and its degrees.
    """
    step = np.where(terms.feasible, terms.step_s, np.inf)
    index = np.argmin(step, axis=-1)
    any_fit = np.isfinite(np.min(step, axis=-1))

    def pick(value):
        return np.take_along_axis(np.broadcast_to(value, step.shape), index[..., None], axis=-1)[..., 0]

    def degree(column):
        return np.where(any_fit, column[index], np.nan)

    parts = {f.name: pick(getattr(terms, f.name)) for f in dataclasses.fields(StepParts) if f.name != "step_s"}
    return ChosenShape(
        step_s=np.where(any_fit, pick(terms.step_s), np.inf), **parts,
        shape_index=np.where(any_fit, index, -1).astype(float), tensor_parallel=degree(c.tensor),
        pipeline_parallel=degree(c.pipeline), virtual_stages=degree(c.virtual), expert_parallel=degree(c.expert),
        recompute=degree(c.recompute), fsdp=degree(c.fsdp))
