"""Memory-bounded chunks and the terminal-only progress bar shared by the sampled analyses."""

from __future__ import annotations

import sys

from tqdm import tqdm

#: samples evaluated per core call: bounds memory (~50 arrays of 8 B x 250k per option)
CHUNK_SIZE = 250_000


def chunk_bounds(total: int, size: int = CHUNK_SIZE) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` covering ``range(total)`` in pieces of at most ``size``."""
    return [(start, min(start + size, total)) for start in range(0, total, size)]


def progress_bar(total: int, description: str, enabled: bool | None = None) -> tqdm:
    """A tqdm bar on stderr, shown only when stderr is a terminal (``enabled=None``)."""
    show = sys.stderr.isatty() if enabled is None else enabled
    return tqdm(total=total, desc=description, unit="sample", disable=not show, leave=False)
