"""KV transfer wall: the decode gain of a split fleet against the cost of moving the KV cache.

For a disaggregated option (prefill on X, decode on Y, KV over a link) and its colocated
counterparts (everything on X, everything on Y), as a function of prompt length:
the KV bytes per request ``P k``, transfer time, link ports, link power and dollars per
million output tokens, the split's decode gain before the link, and where the decode
pool's KV spills out of its fastest memory. Break-evens (``tco.analysis.solvers.scan``, every crossing in the range):
the prompt length and the link bandwidth at which the split stops beating the cheaper
feasible colocated counterpart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tco.analysis.evaluation import evaluate_arrays
from tco.analysis.solvers import scan
from tco.core import names as named
from tco.core.names import link_param
from tco.foundation.plain_values import scalar
from tco.inputs.fleet_settings import KVWall
from tco.inputs.variants import colocated_counterparts, disaggregated_option

PROMPT = named.workload.prompt_tokens


@dataclass
class KVWallResult:
    option: str
    counterparts: dict[str, str]
    table: pd.DataFrame
    breakevens: dict[str, dict]


def _gap_of(results, option: str, counterparts: dict[str, str]):
    """Split cost minus the cheaper feasible colocated counterpart [USD/Mtok]; an infeasible split never wins."""
    r = results[option]
    best = np.minimum.reduce([np.where(results[n].feasible > 0, results[n].lcot_usd_per_mtok, np.inf)
                              for n in counterparts.values()])
    gap = np.where(np.isfinite(best), r.lcot_usd_per_mtok - np.where(np.isfinite(best), best, 0.0), -1.0)
    return np.where(r.feasible > 0, gap, np.abs(gap) + 1.0)


def _breakeven(result, low: float, high: float) -> dict:
    """One break-even as the analyses report it: the first crossing (``value``, ``split_wins_above``), its status
    and every crossing in the range (``crossings``)."""
    flips = [c for c in result.changes if c.flips]
    status = "crosses" if flips else ("always" if result.wins_at_low else "never")
    return {"value": flips[0].value if flips else None, "status": status, "low": low, "high": high,
            "split_wins_above": flips[0].wins_above if flips else None, "crossings": [c.value for c in flips]}


def _winning_pieces(result) -> tuple[list[list[float]], list[bool]]:
    """The pieces of a settled scan where the split wins (cut where a colocated counterpart starts or stops meeting
    its targets), and per piece whether none meets them there (state 0: the split wins on feasibility, not cost)."""
    pieces = [(a, b, state) for a, b, wins, state in result.segments() if wins]
    return [[a, b] for a, b, _ in pieces], [state == 0 for _, _, state in pieces]


def kv_wall(scenario, cfg: KVWall) -> KVWallResult:
    """The KV transfer wall of a split option over prompt length, with its break-evens.

    For the option (prefill on X, decode on Y, KV over a link) and its colocated counterparts
    (everything on X, everything on Y; added when absent), over a geometric grid of prompt
    lengths: KV bytes per request, transfer time, link ports, power and cost, the split's
    decode gain before the link, and where the decode KV spills. Break-evens by
    :func:`tco.analysis.solvers.scan` (every crossing in the range, three searches in one batch).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        A scenario with a disaggregated option.
    cfg : tco.inputs.fleet_settings.KVWall
        The option (default: the first disaggregated one), ``prompt_range`` [tokens],
        ``bandwidth_range_bytes_per_s`` [B/s] and grid ``points`` [-].

    Returns
    -------
    KVWallResult
        ``table`` (one row per prompt length: ``kv_bytes_per_request`` [B], ``kv_transfer_s``
        [s], ``link_usd_per_mtok`` and the options' costs [USD/Mtok], ``decode_gain_usd_per_mtok`` [USD/Mtok] (NaN
        where the split or the prefill device's colocated fleet misses its latency targets), ``decode_spilled_bytes``
        [B], ...), ``counterparts`` ({role: option}) and ``breakevens`` (``prompt_tokens``
        [tokens], ``link_bandwidth_bytes_per_s`` [B/s], ``spill_onset_prompt_tokens``
        [tokens]: value, status, every crossing; for the first two also ``split_wins``, every ``[from, to]`` where
        the split wins (cut where a colocated counterpart starts or stops meeting its targets), and
        ``split_alone_meets_targets``, per piece whether it wins there because no colocated counterpart meets them).

    References
    ----------
    [splitwise-isca2024] phase splitting with the KV cache moved between machines.
    [distserve-osdi2024] disaggregated prefill and decode.
    """
    option = disaggregated_option(scenario, cfg.option, "fleet_dynamics.kv_wall.option")
    derived, names = colocated_counterparts(scenario, option)
    prompts = np.geomspace(*cfg.prompt_range, cfg.points)
    results, values = evaluate_arrays(derived, {PROMPT: prompts})
    r = results[option.name]
    link = option.link
    bw, latency = values[link_param(link, "bandwidth_bytes_per_s")], values[link_param(link, "latency_s")]
    link_usd = r.pv_links_usd / r.pv_tokens * 1e6
    gpu = results[names["prefill"]].pool("colocated").performance
    gpu_decode_per_device = gpu.decode_tokens_per_s / gpu.devices_per_replica
    decode = r.pool("decode").performance
    table = pd.DataFrame({
        "prompt_tokens": prompts,
        "kv_bytes_per_request": (r.kv_transfer_s - latency) * bw,
        "kv_transfer_s": r.kv_transfer_s,
        "ttft_s": r.ttft_s,
        "link_ports": r.link_ports,
        "link_power_w": r.link_ports * values[link_param(link, "port_power_w")],
        "link_usd_per_mtok": link_usd,
        "split_usd_per_mtok": r.lcot_usd_per_mtok,
        # a cost difference only where both fleets meet their targets (else it compares a cost that buys no service)
        "decode_gain_usd_per_mtok": np.where((r.feasible > 0) & (results[names["prefill"]].feasible > 0),
                                             results[names["prefill"]].lcot_usd_per_mtok - (r.lcot_usd_per_mtok - link_usd),
                                             np.nan),
        f"{names['prefill']}_usd_per_mtok": results[names["prefill"]].lcot_usd_per_mtok,
        f"{names['decode']}_usd_per_mtok": results[names["decode"]].lcot_usd_per_mtok,
        "split_feasible": r.feasible > 0,
        f"{names['prefill']}_feasible": results[names["prefill"]].feasible > 0,
        f"{names['decode']}_feasible": results[names["decode"]].feasible > 0,
        "decode_spilled_bytes": decode.spilled_bytes,
        "decode_devices_per_replica": decode.devices_per_replica,
        "decode_tokens_per_s_per_device": decode.decode_tokens_per_s / decode.devices_per_replica,
        "decode_advantage": decode.decode_tokens_per_s / decode.devices_per_replica / gpu_decode_per_device,
    })
    low, high = cfg.prompt_range
    bandwidth = link_param(link, "bandwidth_bytes_per_s")
    base = derived.values()
    ranges = [(low, high), tuple(cfg.bandwidth_range_bytes_per_s), (low, high)]

    def gaps(track, x):
        """Track 0: the split's gap along prompt length; 1: along link bandwidth; 2: spilled decode bytes along
        prompt length (negative once the decode KV spills). One evaluation for the three searches. The state: which
        colocated counterparts meet their targets (bits; 0 on track 2), so the scan also finds where they stop."""
        updates = {PROMPT: np.where(track == 1, base[PROMPT], x), bandwidth: np.where(track == 1, x, base[bandwidth])}
        results, _ = evaluate_arrays(derived, updates)
        cost = _gap_of(results, option.name, names)
        spill = 0.5 - results[option.name].pool("decode").performance.spilled_bytes
        met = sum((results[n].feasible > 0) * (1 << i) for i, n in enumerate(names.values()))
        return np.where(track == 2, spill, cost), np.where(track == 2, 0, met).astype(int)

    found = scan(gaps, [r[0] for r in ranges], [r[1] for r in ranges], tolerance=1e-9)
    settled = [result.settled() for result in found]
    keys = ("prompt_tokens", "link_bandwidth_bytes_per_s", "spill_onset_prompt_tokens")
    breakevens = {key: _breakeven(result, *r) for key, result, r in zip(keys, settled, ranges, strict=True)}
    for key, result in zip(keys[:2], settled, strict=False):
        wins, alone = _winning_pieces(result)
        breakevens[key].update(split_wins=wins, split_alone_meets_targets=alone)
    breakevens["link_bandwidth_bytes_per_s"]["at_prompt_tokens"] = scalar(base[PROMPT])
    return KVWallResult(option.name, names, table, breakevens)
