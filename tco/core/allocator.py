"""Keep freed array memory in the process for the next evaluation instead of handing it back to the OS.

One vectorized evaluation allocates a few thousand temporary arrays. With glibc's default
settings an array above the mmap threshold (128 kB, i.e. 16,384 float64; raised on the fly to
the largest freed block) is mapped and unmapped for each use, and the top of the heap is given
back to the kernel as soon as 128 kB of it are free; every new array then starts with a page
fault per 4 kB page, which the kernel zeroes. Measured on the 2-core benchmark machine: 0.56
page faults per draw and ~35 % of an evaluation's CPU time in the kernel (``benchmarks/run.py``
prints the figures with and without).

:func:`keep_freed_memory` raises the mmap threshold to glibc's ceiling (32 MiB: chunks of up to
4 M draws come from the heap and are reused) and the trim threshold to 1 GiB, so a process holds
on to what it freed up to its peak. The results do not change (only where the bytes live). It is
a no-op off glibc, and ``TCO_KEEP_FREED_MEMORY=0`` in the environment turns it off.
"""

from __future__ import annotations

import ctypes
import os

#: mallopt parameters (glibc malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: largest mmap threshold glibc accepts on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX) [B]
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024
#: free memory at the top of the heap kept before trimming [B]
TRIM_THRESHOLD_BYTES = 1024 * 1024 * 1024

_done: bool | None = None


def keep_freed_memory() -> bool:
    """Tune glibc's allocator once per process (see the module docstring); True when it was tuned.

    Returns
    -------
    bool
        Whether the allocator was tuned (False off glibc or with ``TCO_KEEP_FREED_MEMORY=0``).
    """
    global _done
    if _done is None:
        _done = False
        if os.environ.get("TCO_KEEP_FREED_MEMORY", "1") != "0":
            try:
                mallopt = ctypes.CDLL(None).mallopt  # the C library this process runs on
            except (OSError, AttributeError):  # not glibc (macOS, Windows, musl without mallopt)
                return False
            _done = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) & bool(
                mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
    return _done
