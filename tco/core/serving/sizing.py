"""Fleet sizing: replicas at peak demand, utilization at mean demand, the KV link.

DESIGN.md section 4. Demand is in requests/s; a request has ``P`` prompt tokens and
``O`` output tokens.
"""

from __future__ import annotations

import numpy as np

from tco.core.draws import as_floats, maximum, minimum, one_value

SECONDS_PER_YEAR = 8760.0 * 3600.0
#: rounding guard of whole counts: a load of 3.0000000001 replicas still needs 3
WHOLE_COUNT_GUARD = 1e-9
#: relative tolerance of a latency target: a figure within 1e-12 of its target meets it
TARGET_TOLERANCE = 1e-12


def whole_count(exact, whole=True):
    """A count of devices, replicas or ports: ``ceil(exact - 1e-9)`` when ``whole``, else ``exact``.

    Parameters
    ----------
    exact : float or ndarray [-]
        The exact (fractional) count.
    whole : bool or ndarray of bool [-]
        Whole-device sizing (element-wise) or continuous.

    Returns
    -------
    ndarray [-]
        The count, rounded up where whole.
    """
    exact = as_floats(exact)
    if one_value(whole):  # one rule for every draw: no element-wise choice
        return np.ceil(exact - WHOLE_COUNT_GUARD) if whole else exact
    return np.where(whole, np.ceil(exact - WHOLE_COUNT_GUARD), exact)


def at_least_one_whole(exact):
    """``max(ceil(exact - 1e-9), 1)``: a whole count of at least one (replicas, ports, purchases of a renewal chain).

    Over draws the three steps write into one new array (the same values, one temporary instead of three).

    Parameters
    ----------
    exact : float or ndarray [-]
        The exact (fractional) count.

    Returns
    -------
    float or ndarray [-]
        The whole count, at least 1.
    """
    count = as_floats(exact) - WHOLE_COUNT_GUARD
    if not count.ndim:  # a number: numpy returns new numbers
        return maximum(np.ceil(count), 1.0)
    np.ceil(count, out=count)
    return np.maximum(count, 1.0, out=count)


def replica_multiple(devices_per_replica, purchase_unit_devices: int = 1):
    """Replicas that fill whole purchase units, ``g = lcm(n, u) / n``: a pool of ``n``-device replicas bought in units
    of ``u`` devices (a GB200 NVL72 rack of 72) holds a multiple of ``g`` replicas, so its devices are whole units
    and whole replicas at once (``u = 1``: 1).

    Parameters
    ----------
    devices_per_replica : int or ndarray [devices]
        Devices of one replica ``n`` (whole numbers).
    purchase_unit_devices : int [devices]
        Devices sold together ``u``.

    Returns
    -------
    int or ndarray [replicas]
        ``g``.
    """
    if purchase_unit_devices == 1:
        return 1
    n = np.rint(np.asarray(devices_per_replica, float)).astype(np.int64)
    out = np.lcm(n, purchase_unit_devices) // n
    return int(out) if out.ndim == 0 else out.astype(float)


def whole_units(replicas, multiple):
    """``replicas`` rounded up to a multiple of ``g`` (:func:`replica_multiple`) [replicas]: the whole-unit fleet.

    Parameters
    ----------
    replicas : float or ndarray [replicas]
        Whole replicas (at least one).
    multiple : int or ndarray [replicas]
        ``g``.

    Returns
    -------
    float or ndarray [replicas]
        ``g ceil(R / g - 1e-9)`` (``R`` itself where ``g = 1``).
    """
    if type(multiple) is int and multiple == 1:
        return replicas
    return np.ceil(replicas / multiple - WHOLE_COUNT_GUARD) * multiple


def replicas_needed(peak_load, capacity_per_replica, whole=True):
    """Replicas to carry ``peak_load``: ``ceil(peak / capacity)`` when ``whole``, else continuous.

    With whole devices a fleet has at least one replica, however small the demand (the
    ``- 1e-9`` that forgives rounding on an exact multiple must not round a tiny load to
    no fleet at all).

    Parameters
    ----------
    peak_load : float or ndarray [req/s]
        Load at peak (req/s or tokens/s, the unit of ``capacity_per_replica``).
    capacity_per_replica : float or ndarray [req/s]
        Load one replica carries within the latency targets, same unit.
    whole : bool or ndarray of bool [-]
        Whole-device sizing (element-wise) or continuous.

    Returns
    -------
    ndarray [replicas]
        Replicas needed.
    """
    peak = as_floats(peak_load)
    one = type(capacity_per_replica) is float and capacity_per_replica == 1.0  # x / 1 = x: no array pass
    exact = peak if one else peak / capacity_per_replica
    if one_value(whole):
        return at_least_one_whole(exact) if whole else exact
    return np.where(whole, at_least_one_whole(exact), exact)


def within_target(value, target):
    """Whether a latency figure meets its target: ``value <= target (1 + 1e-12)``.

    Parameters
    ----------
    value : float or ndarray [s]
        The latency figure.
    target : float or ndarray [s]
        Its target.

    Returns
    -------
    ndarray of bool [-]
        True where the target is met.
    """
    return value <= target * (1 + TARGET_TOLERANCE)


def utilization(mean_load, replicas, capacity_per_replica):
    """Mean busy share of a pool: ``mean load / provisioned capacity``, at most 1.

    Parameters
    ----------
    mean_load : float or ndarray [req/s]
        Mean load (the unit of ``capacity_per_replica``).
    replicas : float or ndarray [replicas]
        Replicas provisioned.
    capacity_per_replica : float or ndarray [req/s]
        Load one replica carries, same unit.

    Returns
    -------
    ndarray [-]
        Utilization, 0-1.
    """
    return minimum(mean_load / (replicas * capacity_per_replica), 1.0)


def kv_transfer_bytes_per_request(prompt_tokens, kv_bytes_per_token):
    """KV cache moved from the prefill pool to the decode pool per request: ``P x k``.

    Parameters
    ----------
    prompt_tokens : float or ndarray [tokens]
        Prompt tokens per request ``P``.
    kv_bytes_per_token : float or ndarray [B/token]
        KV-cache bytes per token ``k``.

    Returns
    -------
    ndarray [B]
        Bytes moved per request.

    References
    ----------
    [distserve-osdi2024] KV transfer between disaggregated prefill and decode.
    """
    return np.asarray(prompt_tokens, float) * kv_bytes_per_token


def kv_transfer_time_s(bytes_per_request, link_bandwidth_bytes_per_s, link_latency_s):
    """Time to move one request's KV over one link port: ``P k / BW + latency``.

    Parameters
    ----------
    bytes_per_request : float or ndarray [B]
        KV bytes moved per request.
    link_bandwidth_bytes_per_s : float or ndarray [B/s]
        Bandwidth of one link port.
    link_latency_s : float or ndarray [s]
        Link latency.

    Returns
    -------
    ndarray [s]
        Transfer time.
    """
    return bytes_per_request / link_bandwidth_bytes_per_s + link_latency_s


def link_ports_needed(peak_requests_per_s, bytes_per_request, link_bandwidth_bytes_per_s, whole=True):
    """Link ports that carry the peak KV traffic ``lambda_peak x P x k``.

    With whole-device sizing, ``ceil`` and at least one port whenever KV moves at all;
    continuous sizing returns the fractional port count.

    Parameters
    ----------
    peak_requests_per_s : float or ndarray [req/s]
        Peak demand.
    bytes_per_request : float or ndarray [B]
        KV bytes moved per request.
    link_bandwidth_bytes_per_s : float or ndarray [B/s]
        Bandwidth of one link port.
    whole : bool or ndarray of bool [-]
        Whole-device sizing (element-wise) or continuous.

    Returns
    -------
    ndarray [ports]
        Link ports needed.
    """
    exact = peak_requests_per_s * bytes_per_request / link_bandwidth_bytes_per_s
    return np.where(whole, at_least_one_whole(exact), exact)
