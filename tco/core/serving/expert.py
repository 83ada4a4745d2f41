"""Wide expert parallelism: data-parallel attention with the routed experts sharded over every rank, as the serving
stacks run frontier mixtures of experts (docs/model.md "Wide expert parallelism").

A **wide** replica (:class:`tco.core.serving.parallelism.Shape` with ``data_parallel = d > 1``) is ``d`` attention ranks
of one device each, each holding its own sequences and its own copy of the weights that every token passes through
(attention, dense layers, shared experts, embeddings), and ``1/d`` of the routed experts (plus the load balancer's
redundant copies); every MoE layer dispatches each token to its ``k`` experts and combines their outputs back, an
all-to-all over the scale-up links inside a domain and the scale-out network beyond it. DeepSeek serves V3/R1 so:
routed experts EP32 and attention DP32 in prefill, EP144 / DP144 in decode, two micro-batches overlapping one's
all-to-all with the other's computation, 32 redundant experts placed by its load balancer [deepseek-inference-2025],
[eplb-2025]; SGLang on 96 H100s the same way [sglang-large-scale-ep-2025].

:func:`replica_model` is the model as one replica holds and reads it (the per-rank copies, the redundant experts, the
busiest rank's share of the routed arithmetic), :func:`all_to_all_s` the time of a cycle's dispatches and combines,
:func:`wide_shapes` the wide candidates of a pool's search.
"""

from __future__ import annotations

from dataclasses import replace

from tco.core.draws import maximum, minimum
from tco.core.serving.parallelism import Shape
from tco.core.serving.shapes import Demand, DeviceShape, ModelShape
from tco.core.serving.steps import times

#: the most attention ranks a wide replica has (DeepSeek's decode unit is 144 [deepseek-inference-2025]; a wider one
#: holds less than one routed expert per rank of a 256-expert model)
WIDEST_EXPERT_PARALLEL = 320
#: the wide replicas searched beyond one scale-up domain, in domains: whole HGX nodes or NVL72 racks (EP8 in a node,
#: EP144 over 18 nodes as DeepSeek decodes [deepseek-inference-2025], EP72 in an NVL72 rack, EP144 over two racks)
DOMAIN_MULTIPLES = (1, 2, 4, 8, 16, 18, 32, 40)


def _number(x) -> bool:
    """Whether ``x`` is a plain number (not an array over draws)."""
    return type(x) in (float, int)


def replica_model(shape, model: ModelShape, demand: Demand) -> ModelShape:
    """The model as one replica of ``shape`` holds and reads it.

    An expert-parallel replica stores the routed experts once plus the load balancer's redundant copies,
    ``E e (1 + r)`` bytes (EPLB duplicates the heavy-loaded experts [eplb-2025]; DeepSeek keeps 32 redundant of 256,
    ``r = 0.125`` [deepseek-inference-2025]); a wide one (``d`` attention ranks) stores and reads the rest of the
    weights on every rank: stored ``d (W - E e) + E e (1 + r)`` and read per micro-batch ``d W_fixed`` besides the
    touched experts [B]. The busiest rank receives ``u`` times the mean's routed tokens (``serving.expert_imbalance``,
    after the balancer), so the routed GEMMs of a cycle take ``u`` times their balanced time: ``2 k E`` FLOPs per token
    become ``u 2 k E`` (the weight phase's ``2 A`` grows by ``2 k E (u - 1)``). Any other shape, or a dense model,
    is the model as it is, an expert-parallel tensor group's too (EP over the ``t`` devices of one domain: its
    routing costs are in the fitted ``expert_compute_efficiency`` and collectives, as calibrated).

    Parameters
    ----------
    shape : Shape
        The replica shape (``expert_parallel``, ``data_parallel`` ``d``).
    model : ModelShape
        Stored [B], fixed read [B], routed [B] weights and FLOPs per token [FLOP/token].
    demand : Demand
        The imbalance ``u`` and the redundant share ``r`` [-].

    Returns
    -------
    ModelShape
        The replica's weights [B] and FLOPs per token [FLOP/token].

    References
    ----------
    [deepseek-inference-2025] DP attention with EP32 / EP144 and 32 redundant experts.
    [eplb-2025] redundant experts for the heavy-loaded ones.
    """
    if not (model.moe and shape.wide):
        return model
    d = shape.data_parallel
    routed = model.routed_weight_bytes
    stored = times(d, model.weight_bytes - routed) + routed if d > 1 else model.weight_bytes
    share = demand.redundant_expert_share
    if not (_number(share) and share == 0):
        stored = stored + routed * share
    imbalance = demand.expert_imbalance
    flops, routed_flops = model.weight_flops_per_token, model.routed_flops_per_token
    if not (_number(imbalance) and imbalance == 1):
        flops = flops + routed_flops * (imbalance - 1.0)
        routed_flops = routed_flops * imbalance
    return replace(model, weight_bytes=stored, read_fixed_bytes=times(d, model.read_fixed_bytes),
                   weight_flops_per_token=flops, routed_flops_per_token=routed_flops)


def remote_copies(ranks: int, domain, experts_per_token, deduplicated: bool):
    """Copies of a token's activations one dispatch sends beyond its scale-up domain, ``X_out`` [-].

    With ``k`` routed experts spread evenly over ``d`` ranks in ``g = d / m`` domains of ``m``, a token's ``k`` experts
    lie outside its own domain in ``k (d - m) / d`` cases on average: what per-expert kernels send (DeepEP's
    low-latency kernels, decode [deepep-2025]). Kernels that forward over the scale-up links send each token once to
    each remote domain that holds one of its experts and forward it there (DeepEP's normal kernels, prefill):
    ``(g - 1) (1 - (1 - 1/g)^k)`` copies, the expected remote domains hit by ``k`` independent uniform picks (never more
    than the per-expert count). Within one domain, 0.

    Parameters
    ----------
    ranks : int [devices]
        Attention ranks ``d`` of the replica.
    domain : float or ndarray [devices]
        Devices of one scale-up domain ``m``.
    experts_per_token : float or ndarray [experts]
        Routed experts per token ``k``.
    deduplicated : bool
        One copy per remote domain (forwarded inside it) instead of one per expert.

    Returns
    -------
    float or ndarray [-]
        Copies of a token that cross the scale-out network per dispatch (and per combine).

    References
    ----------
    [deepep-2025] normal kernels forward NVLink-to-RDMA per node; low-latency kernels send per expert over RDMA.
    """
    outside = maximum(ranks - domain, 0.0) / ranks
    per_expert = experts_per_token * outside
    if not deduplicated:
        return per_expert
    groups = maximum(ranks / domain, 1.0)
    return minimum((groups - 1.0) * (1.0 - (1.0 - 1.0 / groups) ** experts_per_token), per_expert)


def all_to_all_s(shape, model: ModelShape, device: DeviceShape, demand: Demand, role: str) -> tuple:
    """The expert all-to-alls of one cycle of a wide replica: their fixed time and their time per token of the cycle.

    Per MoE layer a token is dispatched to its ``k`` experts (``h a_d`` bytes a copy, FP8 in DeepEP's production
    setting, ``serving.dispatch_bits``) and their outputs combined back (``h a_c``, BF16, ``serving.collective_bits``)
    [deepep-2025]. Of a rank's ``k`` copies ``(min(d, m) - 1) / d`` of ``k`` stay inside its scale-up domain and
    :func:`remote_copies` leave it; the two links carry theirs at once, and the busiest rank receives ``u`` times the
    mean (``serving.expert_imbalance``). Each rank sends its own ``N / d`` of a cycle's ``N`` tokens, so per token of
    the cycle [s/token]:

    ``s1 = u max(L_moe k h (a_d + a_c) (min(d, m) - 1)/d / (e B_up), L_moe h (a_d + a_c) X_out / (e B_out)) / d``

    with ``e`` the share of each link's per-direction bandwidth ``B`` an all-to-all reaches (``all_to_all_efficiency``),
    and a fixed ``2 L_moe x mb x l`` per cycle (a dispatch and a combine per MoE layer and micro-batch, ``l`` the
    device's ``all_to_all_latency_s``). Fitted to DeepEP's low-latency kernels on H800 with 400 Gb/s CX7 (128 tokens,
    hidden 7,168, top-8, EP16-256: dispatch 118-194 us, combine 195-369 us): ``l`` = 20 us and ``e B_out`` = 41.8 GB/s
    (``e`` = 0.84 of 50 GB/s), within 20 us of every figure (``tests/test_hand_derived.py``). Prefill pools take
    :func:`remote_copies` deduplicated (normal kernels), the others one copy per expert (low-latency kernels).

    Parameters
    ----------
    shape : Shape
        A wide replica shape (``data_parallel`` ``d``, ``micro_batches`` ``mb``).
    model : ModelShape
        MoE layers, hidden size ``h``, experts per token ``k`` and element bytes ``a_d``, ``a_c``.
    device : DeviceShape
        Link bandwidths per direction [B/s], the scale-up domain ``m`` [devices], the all-to-all efficiency [-] and
        fixed time [s].
    demand : Demand
        The imbalance ``u`` [-].
    role : str
        ``colocated``, ``prefill`` or ``decode``.

    Returns
    -------
    tuple
        ``(fixed [s], per token of the cycle [s/token])``.

    References
    ----------
    [deepep-2025] the dispatch and combine kernels and their measured latencies and bandwidths.
    [deepseek-inference-2025] FP8 dispatch, BF16 combine, two micro-batches.
    """
    d = shape.data_parallel
    layers = model.layers if model.moe_layers is None else model.moe_layers
    k = model.experts_per_token
    dispatch = model.collective_element_bytes if model.dispatch_element_bytes is None else model.dispatch_element_bytes
    token_bytes = model.hidden_size * (dispatch + model.collective_element_bytes) * layers
    domain = device.domain_devices
    inside = (minimum(domain, float(d)) - 1.0) / d
    up = token_bytes * k * inside / (device.scale_up_bytes_per_s * device.all_to_all_efficiency)
    out = token_bytes * remote_copies(d, domain, k, role == "prefill") / (
        device.scale_out_bytes_per_s * device.all_to_all_efficiency)
    per_token = demand.expert_imbalance * maximum(up, out) / d
    latency = device.sync_latency_s if device.all_to_all_latency_s is None else device.all_to_all_latency_s
    fixed = 2.0 * shape.micro_batches * layers * latency
    return fixed, per_token


def wide_shapes(domains, ranks_low: int, experts_max: int):
    """The wide (data-parallel attention, expert-parallel) candidates of a pool: ``d`` attention ranks from the fewest
    whose memory holds the model, powers of two within one scale-up domain and :data:`DOMAIN_MULTIPLES` of the
    domain beyond it, at most :data:`WIDEST_EXPERT_PARALLEL` and at most the routed experts (with their redundant
    copies), each with one micro-batch and with two (two-batch overlap).

    Parameters
    ----------
    domains : Sequence of int [devices]
        The scale-up domain's sizes over its range.
    ranks_low : int [devices]
        The fewest ranks whose devices hold the per-rank weights, their share of the experts and one sequence.
    experts_max : int [experts]
        Routed experts plus redundant copies: no more ranks than that.

    Returns
    -------
    tuple of Shape
        The wide candidates, fewest ranks first.

    References
    ----------
    [deepseek-inference-2025] EP32 prefill and EP144 decode units of 4 and 18 nodes.
    """
    low = max(int(ranks_low), 2)
    top = min(WIDEST_EXPERT_PARALLEL, int(experts_max))
    ranks = set()
    for domain in {max(int(m), 1) for m in domains}:
        x = 2
        while x <= min(domain, top):
            ranks.add(x)
            x *= 2
        ranks |= {domain * f for f in DOMAIN_MULTIPLES}
    return tuple(Shape(1, 1, True, d, mb) for d in sorted(r for r in ranks if low <= r <= top) for mb in (1, 2))
