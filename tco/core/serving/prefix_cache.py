"""Prefix (KV-cache) reuse: the share of prompt tokens a pool serves from its cache, and what serving them costs.

A request whose prompt starts with a prefix the fleet has seen (an earlier turn of its session, a shared system
prompt) skips the prefill of those tokens when their KV cache is still held [sglang-radix-2024] [mooncake-fast2025].
The workload asks for a hit fraction ``h`` (the share of prompt tokens that repeat a cached prefix); a pool achieves
it only where its cache holds the working set. By Little's law the prefixes held at once are the rate they are written
at times the time each must stay until its reuse: ``lambda_peak T_reuse`` prefixes of ``h P`` tokens [little-1961],
``h P k lambda_peak T_reuse`` bytes over the pool's ``N`` devices. Where a device holds ``c`` bytes of cache the pool
keeps the asked share of that working set that fits (a uniform residency: every prefix equally likely to be
evicted), ``h_a = h min(1, c N / (lambda_peak T_reuse h P k))``. Where the cache lives:

* ``hbm``: a reserved share of the device's off-chip memory (HBM, DRAM), taken from what the decode batch may use; a
  hit costs no transfer (the KV is already in place) beyond the attention reads of the prefix;
* ``host_dram``, ``ssd``: the host's memory or local flash per device, read back over the host link at the tier's
  bandwidth before the prefill can use it (added to the time to first token: ``h_a P k / BW_tier``).

A device without off-chip memory (an SRAM-only part: Groq, Cerebras) keeps no cache (``c = 0``): its SRAM holds the
weights and the batch's KV, and no host path to its SRAM is documented, so ``h_a = 0`` there. In a disaggregated
option the prefill pool's cache saves prefill, the decode pool's saves KV transfer: only the ``(1 - h_a) P`` tokens
the decode side does not hold cross the KV link.
"""

from __future__ import annotations

import numpy as np

from tco.core.draws import minimum

#: where a pool's prefix cache lives (``serving.prefix_cache_tier``)
TIERS = ("hbm", "host_dram", "ssd")
#: the name of a device's on-chip memory tier (the catalog's ``memory_tiers``): it holds no prefix cache
ON_CHIP_TIER = "sram"


def working_set_bytes(peak_requests_per_s, reuse_interval_s, cached_tokens, kv_bytes_per_token):
    """Bytes of prefix cache a pool holds at peak to serve every asked hit, ``lambda T H k`` (Little's law).

    Parameters
    ----------
    peak_requests_per_s : float or ndarray [req/s]
        ``lambda``, the rate prefixes are written at.
    reuse_interval_s : float or ndarray [s]
        ``T``, the time a prefix waits for its reuse (a session's next turn).
    cached_tokens : float or ndarray [tokens]
        ``H = h P``, the tokens of a request's prompt that a later request reuses.
    kv_bytes_per_token : float or ndarray [B/token]
        ``k``, KV bytes of one token.

    Returns
    -------
    ndarray [B]
        The working set.

    References
    ----------
    [little-1961] items held = arrival rate x time held.
    """
    return peak_requests_per_s * reuse_interval_s * cached_tokens * kv_bytes_per_token


def achieved_hit_fraction(asked, capacity_bytes_per_device, devices, working_set):
    """The hit fraction a pool achieves, ``h_a = h min(1, c N / S)``.

    Parameters
    ----------
    asked : float or ndarray [-]
        ``h``, the share of prompt tokens the workload could serve from a cache that held everything.
    capacity_bytes_per_device : float or ndarray [B]
        ``c``, cache bytes one device holds.
    devices : float or ndarray [devices]
        ``N``, the pool's devices.
    working_set : float or ndarray [B]
        ``S``, :func:`working_set_bytes`.

    Returns
    -------
    ndarray [-]
        The achieved hit fraction, between 0 and ``h``.
    """
    held = capacity_bytes_per_device * devices
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(working_set > 0.0, held / np.where(working_set > 0.0, working_set, 1.0), 1.0)
    return asked * minimum(share, 1.0)


def load_time_s(cached_tokens, kv_bytes_per_token, bandwidth_bytes_per_s):
    """Time to read a request's cached prefix back from its tier, ``H k / BW`` (one device's link; 0 in HBM).

    Parameters
    ----------
    cached_tokens : float or ndarray [tokens]
        ``H``, the prefix tokens served from the cache.
    kv_bytes_per_token : float or ndarray [B/token]
        ``k``, KV bytes of one token.
    bandwidth_bytes_per_s : float or ndarray [B/s]
        ``BW``, the tier's read bandwidth into one device.

    Returns
    -------
    ndarray [s]
        The load time, added to the time to first token.
    """
    return cached_tokens * kv_bytes_per_token / bandwidth_bytes_per_s
