"""Replica shapes: tensor, pipeline and expert parallelism, and what their collectives cost.

A replica of ``n = t x p`` devices splits every layer over a tensor-parallel group of
``t`` devices (Megatron-LM: Shoeybi et al., 2019, two all-reduces per layer) and the
layers over ``p`` pipeline stages; with ``p`` micro-batches in flight each stage stays
busy and a token crosses ``p - 1`` stage boundaries per forward pass (GPipe: Huang et
al., NeurIPS 2019). For mixture-of-experts models the expert layers may instead be
expert-parallel over the tensor group (GShard: Lepikhin et al., ICLR 2021; vLLM
``enable_expert_parallel``): two all-to-alls (dispatch, combine) replace that layer's
all-reduce.

The candidate list of a pool is static -- fixed when the scenario is read, from the
device's scale-up domain and the model's shape -- so the search over shapes is a fixed
number of vectorized evaluations (:mod:`tco.core.serving.search` picks the cheapest shape that
meets the targets in every draw).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from tco.core.draws import as_floats, maximum, where_mixed


@dataclass(frozen=True)
class Shape:
    """A replica shape: ``tensor`` devices per stage, ``pipeline`` stages, expert-parallel MoE layers or not; or a
    data-parallel attention layout, ``data_parallel`` attention ranks of one device each whose routed experts are
    sharded over all of them (wide expert parallelism, EP = ``data_parallel``), run as ``micro_batches`` micro-batches
    per step (2: two-batch overlap, one micro-batch's all-to-all under the other's computation)."""

    tensor: int
    pipeline: int = 1
    expert_parallel: bool = False
    data_parallel: int = 1
    micro_batches: int = 1

    @property
    def devices(self) -> int:
        """Devices of one replica, ``tensor x pipeline x data_parallel`` [devices]."""
        return self.tensor * self.pipeline * self.data_parallel

    @property
    def lanes(self) -> int:
        """Schedulers of one replica that each take whole prompt chunks, ``pipeline x data_parallel`` (a pipeline's
        micro-batches, a data-parallel layout's attention ranks) [lanes]."""
        return self.pipeline * self.data_parallel

    @property
    def weight_passes(self) -> int:
        """Times a cycle reads each device's weights, ``pipeline x micro_batches`` [-]."""
        return self.pipeline * self.micro_batches

    @property
    def wide(self) -> bool:
        """Data-parallel attention over more than one rank, experts sharded over the ranks (wide EP)."""
        return self.data_parallel > 1

    @property
    def label(self) -> str:
        """Short label of the shape: ``TP8 x PP2 EP``, ``DP144 x EP144 TBO``."""
        if self.wide:
            return f"DP{self.data_parallel} x EP{self.data_parallel}" + (" TBO" if self.micro_batches > 1 else "")
        text = f"TP{self.tensor}"
        if self.pipeline > 1:
            text += f" x PP{self.pipeline}"
        return text + (" EP" if self.expert_parallel else "")


def _powers_of_two(low: float, high: float) -> list[int]:
    out, x = [], 1
    while x <= high:
        if x >= low:
            out.append(x)
        x *= 2
    return out


#: stage counts of a streamed pipeline at its narrowest width, in units of ``p0``: whole replicas make the cost a sawtooth
#: in ``p`` and the narrowest width is where the search usually lands, so its rungs are a quarter of ``p0`` apart up to
#: ``2 p0`` (the other widths keep ``1, 1.5, 2, 3, 4``). Measured 2026-12-02 over every catalog model on the four streamed
#: devices against pinned shapes of every stage count (52 pairs, the default scenario's workload): the mean of the search
#: over the best pinned shape 1.081 -> 1.047, pairs within 1 % 17 -> 21, none worse; eighth-steps gave 1.039 but two
#: pairs worse (the device-hour proxy). It cost 18-19 % of the default's all-drawn engine throughput, most of it won back
#: by the cost floor of shapes that fit in some draws only (docs/scale.md)
NARROW_STREAMED_LADDER = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0)


def candidate_shapes(domains, layers: int, kv_heads: int, devices_low: int, devices_high: int, moe: bool,
                     streamed: bool = False, latent: bool = False, limit: int = 10) -> tuple[Shape, ...]:
    """Static candidate shapes of one pool.

    ``devices_low``/``devices_high`` bound the memory-fit minimum replica over the parameter ranges, and each
    value a range gives the scale-up domain (``domains``: its low and high) adds its shapes:

    * **tensor parallel** within the domain: ``t`` a power of two, or the domain size, from the memory-fit
      minimum up to ``4 x devices_high`` or 8, whichever is more (so every width of an 8-device board: a long
      prompt's TTFT may need the whole board's arithmetic where one device holds the model; capped at the memory
      fit the 141 GB H200 stopped at TP4 and missed a 3 s TTFT at 16,000-token prompts that the 80 GB H100, at TP8,
      met; on a wider domain a wider group's compute can pay: TPU pods, Trainium);
    * **pipelines**, ``p`` stages of ``w`` devices (at most one stage per layer):

      - where the stages stream a prompt's tokens (``streamed``: the dataflow parts, whose stages cost little
        latency), at the narrowest power-of-two width whose stages hold the model in at most ``layers`` stages (even
        where one device holds it: more stages hold more KV cache and compute), at twice it and at the KV heads'
        width (no copy of the KV cache) where the model needs more than one stage of that width;
        ``p = p0, 1.5 p0, 2 p0, 3 p0, 4 p0``, ``p0 = max(2, ceil(devices_low / w))``, at the narrowest width in quarter
        steps up to ``2 p0`` (:data:`NARROW_STREAMED_LADDER`: whole replicas make the cost a sawtooth in ``p``), and
        one stage per layer where the ladder climbs past the layers (the most KV room a
        replica of that width has: the default's Groq option, whose ladder at width 8 stopped at 62 of 80 layers,
        landed at 1.19x the best stage count instead of 1.35x with it, and at 1.10x with the quarter steps);
      - where micro-batches carry whole chunks (GPU stacks: each stage adds a micro-batch's imbalance,
        :func:`tco.core.serving.cycles.interference_lines`): across domains at the domain's width, where the model needs
        more than one domain or fills more than half of one (the KV cache then has room), ``p = p0, 1.5 p0, 2 p0,
        3 p0``; and within a domain of one board (at most 8 devices), where the model needs several of its devices: the
        smallest power of two of devices that holds it, and twice that, in ``p = 2, 4, ...`` stages of ``n / p``. Such
        a pipeline keeps the arithmetic of a tensor group of ``n`` and drops its all-reduces, which prefill-heavy pools
        gain from (NVIDIA runs its v5.0 H100 llama2-70b engines as pipeline parallel 2; pipeline parallel 8 gave 1.5x
        the throughput of tensor parallel 8 for Llama 3.1 405B on an HGX H200 [nvidia-405b-pp-2024]). Wider domains
        (TPU slices, NVL72 racks) get no such ladder: at most ``limit`` dense shapes are kept, smallest first, and it
        would crowd out the wide tensor groups they win with;

      when such shapes exist, tensor-only shapes wider than four times the KV heads are left out (they hold the KV
      cache in ``t / kv_heads`` copies and never win), unless attention is latent (one small shared latent: wide
      tensor groups with expert parallelism serve it, as SGLang and TensorRT-LLM run DeepSeek);
    * with an MoE model each multi-device shape also comes expert-parallel.

    A candidate that does not fit in a draw is masked there, not dropped here. At most ``limit`` dense shapes are
    kept, smallest replicas first.

    Parameters
    ----------
    domains : int or Sequence of int [devices]
        Devices joined by the scale-up network (the parameter's low and high).
    layers : int [layers]
        Transformer layers (at most one pipeline stage per layer).
    kv_heads : int [heads]
        Key/value heads (1 for latent attention).
    devices_low, devices_high : int [devices]
        Bounds of the memory-fit minimum replica over the parameter ranges.
    moe : bool
        Whether the model routes experts (adds expert-parallel shapes).
    streamed : bool
        Whether the device's stages stream a prompt's tokens (``pipeline_prefill: streamed``).
    latent : bool
        Whether attention is latent (no pruning of wide tensor groups).
    limit : int [-]
        Most dense shapes kept.

    Returns
    -------
    tuple of Shape
        The candidate replica shapes (tensor x pipeline, expert-parallel or not).

    References
    ----------
    [megatron-lm-2019] tensor parallelism within a layer.
    [narayanan-sc2021] pipeline stages across layers.
    [nvidia-405b-pp-2024] pipeline against tensor parallelism within an 8-GPU NVLink board.
    """
    low, high = max(int(devices_low), 1), max(int(devices_high), int(devices_low), 1)
    top_layer = max(int(layers), 1)
    heads = 1 << (max(int(kv_heads), 1).bit_length() - 1)  # the widest power of two that splits the KV heads
    tensors, staged = set(), set()
    for domain in sorted({max(int(d), 1) for d in np.atleast_1d(domains)}):
        ceiling = max(min(domain, max(4 * high, 8)), low)
        tensors |= {t for t in _powers_of_two(low, ceiling) if t <= domain} | ({domain} if low <= domain <= ceiling else set())
        if streamed:
            narrowest = 1 << max(math.ceil(low / top_layer) - 1, 0).bit_length()
            widths = sorted({w for w in (narrowest, 2 * narrowest, heads) if narrowest <= w <= domain
                             and (low > w or w == narrowest)})
            ladder, fine = (1.0, 1.5, 2.0, 3.0, 4.0), narrowest  # fine: the width that gets NARROW_STREAMED_LADDER
        else:
            widths = [domain] if low > domain or 2 * high > domain else []
            ladder, fine = (1.0, 1.5, 2.0, 3.0), None
            if 2 <= low <= domain <= 8:  # the model needs several devices of one board: that many split into stages
                smallest = 1 << (low - 1).bit_length()
                sizes = {n for n in (smallest, 2 * smallest) if n <= domain}
                staged |= {Shape(n // p, p) for n in sizes for p in _powers_of_two(2, min(n, top_layer))}
        for width in widths:
            base = max(math.ceil(low / width), 2)
            rungs = {math.ceil(base * f) for f in (NARROW_STREAMED_LADDER if width == fine else ladder)}
            if streamed and max(rungs) > top_layer >= base:  # the ladder leaves the layers: one stage per layer
                rungs.add(top_layer)
            staged |= {Shape(width, p) for p in rungs if 2 <= p <= top_layer}
    shapes = {Shape(t) for t in tensors}
    if staged and not latent:  # tensor groups far wider than the KV heads copy the KV cache many times: pipelines win
        shapes = {s for s in shapes if s.tensor <= 4 * heads}
    shapes = sorted(shapes | staged, key=lambda s: (s.devices, s.pipeline, s.tensor))[:limit]
    if moe:
        shapes += [Shape(s.tensor, s.pipeline, True) for s in shapes if s.tensor > 1]
    return tuple(shapes)


@functools.cache
def micro_batch_overshoot(pipeline: int) -> float:
    """How far, on average, the heaviest of ``p`` micro-batches exceeds an even share, in chunks: at most
    ``C_p = max_a E[(-K) mod p]``, ``K ~ Poisson(a)`` [chunks].

    ``K`` chunks of ``u`` tokens each (Poisson: prompts arrive at random) placed one by one in the least loaded
    micro-batch leave the heaviest at ``ceil(K/p) u``, so ``p max - sum = u ((-K) mod p)``: the chunks the other
    micro-batches lack to match it. Its mean ``g_p(a)`` rises from 0 like ``(p - 1) a`` (one chunk alone: ``p - 1``
    missing) and settles at ``(p - 1)/2`` (residues spread evenly), overshooting on the way for ``p >= 3``; ``C_p`` is
    its largest value over ``a`` (here on a grid of ``a`` in ``(0, 3p + 10]`` refined around the maximum): 0.5
    (``p = 2``, the limit), 1.038, 1.688, 3.224, 4.923, 56.87 (``p = 3, 4, 6, 8, 62``), close to
    ``max((p - 1)/2, p - 1 - ln p)`` (the overshoot of ``p (1 - e^{-a}) - a`` at ``a = ln p``; equal from ``p = 8``).
    :func:`tco.core.serving.cycles.interference_lines` bounds the mean overshoot by ``min((p - 1) a, C_p)`` chunks.

    Parameters
    ----------
    pipeline : int [-]
        Micro-batches (pipeline stages) ``p``.

    Returns
    -------
    float [chunks]
        ``C_p`` (0 for one stage).

    References
    ----------
    [graham-1969] least-loaded (list) scheduling.
    """
    return _micro_batch_overshoot(int(pipeline))


@functools.cache
def _micro_batch_overshoot(p: int) -> float:
    """:func:`micro_batch_overshoot` of ``p`` micro-batches, computed once per ``p`` (a pure function of one integer:
    the grid's Poisson matrix is 4001 rates by up to a few hundred counts, 64 ms for ``p = 62``)."""
    if p <= 1:
        return 0.0

    def largest_mean_residue(rates):
        top = float(rates.max())
        k = np.arange(int(top + 12.0 * math.sqrt(top) + 40.0))
        log_factorial = np.concatenate(([0.0], np.cumsum(np.log(np.arange(1, k.size)))))
        pmf = np.exp(k * np.log(rates[:, None]) - rates[:, None] - log_factorial)
        means = pmf @ ((-k) % p)
        best = int(np.argmax(means))
        return float(means[best]), best

    rates = np.linspace(1e-3, 3.0 * p + 10.0, 4001)
    _, best = largest_mean_residue(rates)
    fine = np.linspace(rates[max(best - 1, 0)], rates[min(best + 1, rates.size - 1)], 2001)
    return largest_mean_residue(fine)[0]


def overshoot_chunks(pipeline: int, chunk_scv):
    """Mean overshoot of the heaviest of ``p`` micro-batches over an even share, in mean chunks, for chunks of
    squared CV ``v`` placed one by one in the least loaded micro-batch: ``min(C_p (1 + p v / 2), (p - 1)(1 + v))``.

    Equal chunks give :func:`micro_batch_overshoot`'s ``C_p``. Chunks of varying size leave the heaviest micro-batch
    further ahead: the chunk that makes it the heaviest is a long one (size-biased, mean ``(1 + v)`` chunks), and the
    others trail it by at most that, so ``(p - 1)(1 + v)`` bounds the overshoot for many micro-batches; for few the
    spread adds ``p v / 2`` of ``C_p``. Fitted to and checked against a Monte Carlo of the placement (Poisson counts
    of gamma-sized chunks, the largest mean over the rate; ``tests/test_serving.py``): within 6 % for ``p`` = 2 to 8
    and ``v`` = 0 to 1.5 (exact at ``v = 0``).

    Parameters
    ----------
    pipeline : int [-]
        Micro-batches ``p``.
    chunk_scv : float or ndarray [-]
        Squared CV of the chunk sizes ``v`` (the prompts' length spread).

    Returns
    -------
    float or ndarray [chunks]
        The mean overshoot bound (0 for one stage).

    References
    ----------
    [graham-1969] least-loaded (list) scheduling: the heaviest machine exceeds the mean load by less than one job.
    """
    p = int(pipeline)
    equal = micro_batch_overshoot(p)
    if p <= 1 or (type(chunk_scv) in (float, int) and chunk_scv == 0):
        return equal
    return np.minimum(equal * (1.0 + 0.5 * p * chunk_scv), (p - 1.0) * (1.0 + chunk_scv))


def kv_replication(tensor, kv_heads):
    """Copies of each KV head in a tensor-parallel group, ``max(1, t / kv_heads)``.

    With more tensor ranks than KV heads the heads are replicated (vLLM and
    TensorRT-LLM do so for grouped-query attention), so the KV cache per replica grows by
    this factor. Latent attention (one shared latent) has ``kv_heads = 1``.

    Parameters
    ----------
    tensor : int or ndarray [devices]
        Tensor-parallel degree ``t``.
    kv_heads : float or ndarray [heads]
        Key/value heads.

    Returns
    -------
    ndarray [-]
        Replication factor of the KV cache.
    """
    ranks = float(tensor) if type(tensor) is int else as_floats(tensor)  # a shape's own degree: a number, not a 0-d array
    return maximum(ranks / kv_heads, 1.0)


def sync_latency_per_cycle_s(shape: Shape, layers, sync_latency_s):
    """Latency part of the collectives of one cycle (every micro-batch advances one pass).

    Per layer two all-reduces over the tensor group (three collectives with expert
    parallelism over it: one all-reduce and two all-to-alls; a wide shape's all-to-alls are
    :func:`tco.core.serving.expert.all_to_all_s`), each ``latency x max(log2 t, 1)`` per micro-batch
    (a tree; a single device still pays one latency at each layer boundary), plus ``p - 1`` stage-to-stage hops of
    one latency. With ``p`` micro-batches a stage runs ``L/p`` layers ``p`` times per
    cycle, so the per-layer term is ``L`` per cycle whatever ``p``.

    Parameters
    ----------
    shape : Shape
        The replica shape (tensor ``t``, pipeline ``p``, expert parallel).
    layers : float or ndarray [layers]
        Transformer layers ``L``.
    sync_latency_s : float or ndarray [s]
        Latency of one hop of a collective.

    Returns
    -------
    ndarray [s]
        Collective latency per cycle.

    References
    ----------
    [megatron-lm-2019] two all-reduces per transformer layer.
    """
    collectives = 3.0 if shape.expert_parallel and not shape.wide else 2.0
    hops = max(math.log2(shape.tensor), 1.0) * shape.micro_batches
    return (collectives * hops * as_floats(layers) + (shape.pipeline - 1)) * sync_latency_s


def sync_time_per_token_s(shape: Shape, layers, hidden_size, collective_element_bytes, experts_per_token,
                          scale_up_bytes_per_s, scale_out_bytes_per_s, domain_devices):
    """Bandwidth part of the collectives per token in a cycle.

    Ring all-reduce of ``m`` bytes: ``2 (t-1)/t x m`` leave each device, over one direction
    of the link. A token of a micro-batch carries ``h x a`` bytes, ``a`` the bytes of one
    element on the wire (``serving.collective_bits / 8``): FP8 and FP4 serving keeps GEMM
    outputs and the residual stream in 16 bits (Micikevicius et al., "FP8 Formats for Deep
    Learning", arXiv 2209.05433, 2022), so the partial sums a tensor group all-reduces, the
    activations a stage sends on and the expert outputs an all-to-all combines are 2-byte
    elements whatever the arithmetic width (TensorRT-LLM quantizes to FP8/FP4 only after the
    sum, in the all-reduce's fused epilogue). One width serves every collective: a stack that
    dispatches FP8 to the experts (DeepEP, 2025) moves 1 B on the dispatch half only. ``2 L``
    all-reduces per cycle over micro-batches of ``N/p`` tokens give
    ``4 L (t-1)/t x h x a / (p bw)`` per token. Expert parallel replaces one all-reduce per
    layer by two all-to-alls, each sending ``k (t-1)/t^2`` of the tokens' activations (each
    device dispatches its ``1/t`` share to the ``k`` experts it routes to). Pipeline hops
    move ``h x a`` per token across ``p - 1`` boundaries per pass: ``(p-1)/p x h x a / bw``
    per token in the cycle. A replica inside one scale-up domain uses the chip-to-chip
    bandwidth, else the stage hops and any group beyond the domain use the scale-out network.

    Parameters
    ----------
    shape : Shape
        The replica shape: tensor ``t``, pipeline ``p``, and whether expert parallel (all-to-alls).
    layers : float or ndarray [layers]
        Transformer layers ``L``.
    hidden_size : float or ndarray [elements]
        Model width ``h``.
    collective_element_bytes : float or ndarray [B]
        Bytes per element a collective moves ``a``.
    experts_per_token : float or ndarray [experts]
        Routed experts active per token ``k``.
    scale_up_bytes_per_s : float or ndarray [B/s]
        Chip-to-chip bandwidth per device, each direction.
    scale_out_bytes_per_s : float or ndarray [B/s]
        Scale-out bandwidth per device, each direction.
    domain_devices : float or ndarray [devices]
        Devices in one scale-up domain.

    Returns
    -------
    ndarray [s/token]
        Collective transfer time per token in the cycle (a wide shape's expert all-to-alls are
        :func:`tco.core.serving.expert.all_to_all_s`).

    References
    ----------
    [patarasuk-yuan-2009] the ring all-reduce's bytes per device.
    [megatron-lm-2019] two all-reduces per transformer layer.
    [fp8-formats-2022] 16-bit outputs and residual stream in FP8 inference.
    """
    t, p = shape.tensor, shape.pipeline
    token_bytes = as_floats(hidden_size) * collective_element_bytes
    total = 0.0  # one device alone: no collective, no hop (a structural zero)
    if t > 1:
        tp_bw = where_mixed(t <= domain_devices, scale_up_bytes_per_s, scale_out_bytes_per_s)  # inside the domain or not
        ring = 2.0 * (t - 1.0) / t
        all_to_all = 2.0 * as_floats(experts_per_token) * (t - 1.0) / (t * t)
        per_layer = ring + (all_to_all if shape.expert_parallel else ring)
        total = as_floats(layers) * per_layer * token_bytes / (p * tp_bw)
    if p > 1:
        pp_bw = where_mixed(t * p <= domain_devices, scale_up_bytes_per_s, scale_out_bytes_per_s)
        total = total + (p - 1.0) / p * token_bytes / pp_bw
    return total
