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

from tco.core.draws import as_floats, minimum


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
    remaining = as_floats(bytes_read)
    time_s = None
    last = len(tier_capacity_bytes) - 1
    for i, (capacity, bandwidth) in enumerate(zip(tier_capacity_bytes, tier_bandwidth_bytes_per_s, strict=False)):
        placed = remaining if i == last else minimum(remaining, capacity)
        time_s = placed / bandwidth if time_s is None else time_s + placed / bandwidth
        if i < last:
            remaining = remaining - placed
    return time_s


