"""Roofline performance of one model replica spread over ``n`` devices.

Memory is a list of *placement tiers*, fastest first (on-chip SRAM, then HBM, ...).
Each tier is described per replica by its usable capacity [B] and its achievable
bandwidth [B/s] (device figure x ``n`` x bandwidth efficiency). Bytes read in a step are
placed fastest tier first (DESIGN.md section 3); bytes that land below the fastest tier
are the *spilled bytes*.

References: Williams, Waterman, Patterson, "Roofline: an insightful visual performance
model", CACM 52(4), 2009; Pope et al., "Efficiently Scaling Transformer Inference",
MLSys 2023 (decode is bandwidth-bound at small batch, prefill compute-bound).
"""

from __future__ import annotations

import numpy as np


def replica_devices(stored_bytes, usable_bytes_per_device, minimum_devices=1.0):
    """Smallest whole number of devices whose usable memory holds ``stored_bytes``.

    ``n = max(ceil(stored / usable_per_device), minimum)``. A 70B model at 8 bits
    (70.55e9 B) over 230 MB SRAM chips needs at least ceil(70.55e9 / 230e6) = 307.

    Parameters
    ----------
    stored_bytes : float or ndarray [B]
        Bytes the replica must hold.
    usable_bytes_per_device : float or ndarray [B]
        Usable memory per device.
    minimum_devices : float or ndarray [devices]
        Smallest replica allowed.

    Returns
    -------
    ndarray [devices]
        Devices per replica.
    """
    needed = np.ceil(np.asarray(stored_bytes, float) / usable_bytes_per_device - 1e-12)
    return np.maximum(np.maximum(needed, 1.0), minimum_devices)


def memory_read_time_s(bytes_read, tier_capacity_bytes, tier_bandwidth_bytes_per_s):
    """Time to stream ``bytes_read`` placed fastest tier first.

    ``t = sum_i clip(bytes - C_{i-1}, 0, c_i) / bw_i`` with ``C_{i-1}`` the capacity of
    the faster tiers; the last tier takes whatever is left (capacity is checked apart).

    Parameters
    ----------
    bytes_read : float or ndarray [B]
        Bytes read.
    tier_capacity_bytes, tier_bandwidth_bytes_per_s : Sequence [B, B/s]
        The memory tiers, fastest first: capacity and bandwidth of each.

    Returns
    -------
    ndarray [s]
        Read time, tier by tier.

    References
    ----------
    [williams-roofline-2009] the memory-bound side of the roofline.
    """
    remaining = np.asarray(bytes_read, float)
    time_s = None
    last = len(tier_capacity_bytes) - 1
    for i, (capacity, bandwidth) in enumerate(zip(tier_capacity_bytes, tier_bandwidth_bytes_per_s, strict=False)):
        placed = remaining if i == last else np.minimum(remaining, capacity)
        time_s = placed / bandwidth if time_s is None else time_s + placed / bandwidth
        if i < last:
            remaining = remaining - placed
    return time_s


def spilled_bytes(bytes_read, fastest_tier_capacity_bytes):
    """Bytes of a step that do not fit the fastest tier and are read from slower ones.

    Parameters
    ----------
    bytes_read : float or ndarray [B]
        Bytes read in the step, weights and KV cache.
    fastest_tier_capacity_bytes : float or ndarray [B]
        Capacity of the fastest tier.

    Returns
    -------
    ndarray [B]
        Spilled bytes.
    """
    return np.maximum(np.asarray(bytes_read, float) - fastest_tier_capacity_bytes, 0.0)


def sync_fixed_time_s(layers, devices, sync_latency_s):
    """Latency part of the synchronizations of one forward pass over ``n`` devices.

    Tensor-parallel layers all-reduce twice (attention and MLP); a tree all-reduce costs
    ``latency x log2 n``. A single device still pays one latency at each of those layer
    boundaries (kernel launch, pipeline drain), so the hop count is ``max(log2 n, 1)``:
    ``2 x layers x latency x max(log2 n, 1)``. Without that floor a wafer-scale device
    (one CS-3 holding Llama 3.1 8B) would be predicted ~500x faster than measured
    (validation case ``cerebras-1xcs3-llama31-8b-per-user``).

    Parameters
    ----------
    layers : float or ndarray [layers]
        Transformer layers.
    devices : float or ndarray [devices]
        Devices of the tensor group ``n``.
    sync_latency_s : float or ndarray [s]
        Latency of one hop.

    Returns
    -------
    ndarray [s]
        Synchronization latency per forward pass.

    References
    ----------
    [megatron-lm-2019] two all-reduces per transformer layer.
    """
    return 2.0 * layers * sync_latency_s * np.maximum(np.log2(np.maximum(devices, 1.0)), 1.0)


def max_tokens_within_time(bytes_fixed, bytes_per_token, time_fixed_s, time_per_token_s, target_s,
                           tier_capacity_bytes, tier_bandwidth_bytes_per_s):
    """Largest real ``B`` with ``t_mem(b0 + b1 B) + s0 + s1 B <= target``.

    ``t_mem`` is piecewise linear in the bytes and convex when the tiers are ordered by
    falling bandwidth, so it equals the maximum of its segments' extended lines; the
    condition then holds iff it holds for every line, and ``B`` is the minimum of the
    per-line solutions
    ``B_i = (target - s0 - T_{i-1} + (C_{i-1} - b0)/bw_i) / (b1/bw_i + s1)``
    with ``C_{i-1}`` the capacity and ``T_{i-1}`` the read time of the faster tiers.
    Negative means even ``B = 0`` misses the target.

    Parameters
    ----------
    bytes_fixed : float or ndarray [B]
        Bytes read whatever the batch ``b0``.
    bytes_per_token : float or ndarray [B/token]
        Bytes read per token of the batch ``b1``.
    time_fixed_s : float or ndarray [s]
        Time spent whatever the batch ``s0``.
    time_per_token_s : float or ndarray [s/token]
        Time per token of the batch ``s1``.
    target_s : float or ndarray [s]
        Time allowed.
    tier_capacity_bytes, tier_bandwidth_bytes_per_s : Sequence [B, B/s]
        Capacity and bandwidth of each tier, fastest first, as :func:`memory_read_time_s` reads them.

    Returns
    -------
    ndarray [tokens]
        The largest batch, real-valued (negative: none fits).
    """
    best = np.inf
    cumulative_bytes = 0.0
    cumulative_time_s = 0.0
    for capacity, bandwidth in zip(tier_capacity_bytes, tier_bandwidth_bytes_per_s, strict=False):
        slack_s = target_s - time_fixed_s - cumulative_time_s + (cumulative_bytes - bytes_fixed) / bandwidth
        best = np.minimum(best, slack_s / (bytes_per_token / bandwidth + time_per_token_s))
        cumulative_bytes = cumulative_bytes + capacity
        cumulative_time_s = cumulative_time_s + capacity / bandwidth
    return best


def compute_time_s(flops, devices, peak_flops, compute_efficiency):
    """Time to execute ``flops`` on ``n`` devices at an achieved share of peak.

    Parameters
    ----------
    flops : float or ndarray [FLOP]
        Work.
    devices : float or ndarray [devices]
        Devices sharing it ``n``.
    peak_flops : float or ndarray [FLOP/s]
        Peak per device.
    compute_efficiency : float or ndarray [-]
        Achieved share of peak.

    Returns
    -------
    ndarray [s]
        Compute time.

    References
    ----------
    [williams-roofline-2009] the compute-bound side of the roofline.
    """
    return flops / (devices * peak_flops * compute_efficiency)
