"""One option's fleet for year 1's demand, as typed terms between the serving model and the money model:
the option-level sizing (latencies at peak, batch, KV link) and the fleet (each pool's performance,
sizing and costs, and the link's)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tco.core.outputs import (
    LinkCosts,
    PoolCosts,
    PoolPerformance,
    PoolSizing,
)
from tco.core.structure import Option


@dataclass
class OptionSizing:
    """Option-level terms of the serving step: latency a request sees at peak, the KV link.

    ``prefill_time_share`` is the share of a colocated replica's time spent in prefill
    [fraction] (None when disaggregated: there the pools' costs split the option's cost).
    ``kv_bytes_per_request`` is the KV a request moves over the link [B] (the prompt tokens the decode pool's prefix
    cache lacks; None when colocated).
    """

    ttft_s: np.ndarray
    tpot_s: np.ndarray
    queue_wait_s: np.ndarray
    batch: np.ndarray
    spilled_bytes: np.ndarray
    tpot_met: np.ndarray
    ttft_met: np.ndarray
    fits: np.ndarray
    kv_transfer_s: np.ndarray
    link_ports: np.ndarray
    prefill_time_share: np.ndarray | None = None
    kv_bytes_per_request: np.ndarray | None = None


@dataclass
class Fleet:
    """One option's fleet for year 1's demand on one set of devices: each pool's performance,
    sizing and cost terms, the option-level sizing and the KV link."""

    option: Option
    performance: dict[str, PoolPerformance]
    sizes: dict[str, PoolSizing]
    size: OptionSizing
    costs: dict[str, PoolCosts]
    links: LinkCosts
