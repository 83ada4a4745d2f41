"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/<name>.py``)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_of(function: Callable[[], object], repeats: int = 3) -> float:
    """The fastest of ``repeats`` wall-clock runs of ``function()`` [s]: the least disturbed by other load."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return min(times)
