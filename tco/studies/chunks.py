"""Memory-bounded chunks, and how a sampled analysis reports progress and is cancelled."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping

import numpy as np
from tqdm import tqdm

#: how an analysis reports progress: ``None`` a bar on a terminal only, ``True``/``False`` a bar
#: always/never, or a callable ``report(done, total)`` called after each chunk (no bar), as the
#: Dash app's background callbacks do
Progress = bool | None | Callable[[int, int], None]

#: how an analysis is cancelled: ``None`` never, or a callable asked before each chunk starts
#: (and as each distributed chunk completes) that returns True to stop, e.g. ``threading.Event().is_set``
Cancel = Callable[[], bool] | None

#: samples evaluated per core call: bounds memory (~50 arrays of 8 B x 250k per option)
CHUNK_SIZE = 250_000


#: draws per core call inside a chunk: the engine's temporaries (~3 kB per draw for three options) stay
#: near the cache instead of streaming through memory. Measured on the 2-core benchmark machine, default
#: scenario, every parameter drawn (CPU time, load ~4): 1.20 M option-evaluations/s at 16,384 draws,
#: 1.41 M at 65,536, 1.25 M at 250,000, 0.7-0.9 M at 1,000,000 (and 3 GB held). Splitting a chunk does not
#: change any value: the engine works draw by draw.
EVALUATION_BLOCK = 65_536


def blockwise(function: Callable[[Mapping[str, np.ndarray]], Mapping[str, np.ndarray]], updates: Mapping[str, object],
              block: int = EVALUATION_BLOCK) -> dict[str, np.ndarray]:
    """``function(updates)`` evaluated in blocks of at most ``block`` draws and laid end to end.

    Equal, value for value, to one call on every draw (the engine works draw by draw).

    Parameters
    ----------
    function : Callable[[Mapping[str, numpy.ndarray]], Mapping[str, numpy.ndarray]]
        Per-draw columns of the draws it is given, each as long as the draws.
    updates : Mapping[str, object] [each parameter's unit]
        One-dimensional per-draw columns, or numbers.
    block : int [draws]
        Most draws per call.

    Returns
    -------
    dict[str, numpy.ndarray] [unit of each column]
        ``function``'s columns over every draw.
    """
    draws = np.broadcast_shapes(*(np.shape(v) for v in updates.values())) if updates else ()
    if len(draws) != 1 or draws[0] <= block:
        return dict(function(updates))
    bounds = chunk_bounds(draws[0], block)
    parts = [function({k: v[start:stop] if np.ndim(v) else v for k, v in updates.items()}) for start, stop in bounds]
    return {k: np.concatenate([np.broadcast_to(p[k], (stop - start,)) for p, (start, stop) in zip(parts, bounds, strict=True)])
            for k in parts[0]}


def chunk_bounds(total: int, size: int = CHUNK_SIZE) -> list[tuple[int, int]]:
    """``[(start, stop), ...]`` covering ``range(total)`` in pieces of at most ``size``.

    Parameters
    ----------
    total : int [samples]
        Number of items.
    size : int [samples]
        Largest piece.

    Returns
    -------
    list[tuple[int, int]] [samples]
        Half-open bounds, in order.
    """
    return [(start, min(start + size, total)) for start in range(0, total, size)]


class _Reported(tqdm):
    """A silent tqdm that calls ``report(done, total)`` after each update."""

    def __init__(self, report: Callable[[int, int], None], **kwargs):
        self.report = report
        super().__init__(disable=True, **kwargs)

    def update(self, n=1):
        self.n += n
        self.report(self.n, self.total)


def progress_bar(total: int, description: str, progress: Progress = None) -> tqdm:
    """A progress bar for a chunked analysis.

    Parameters
    ----------
    total : int [samples]
        Items to count.
    description : str
        The bar's label.
    progress : bool or Callable[[int, int], None] or None
        None: a tqdm bar on stderr shown only when stderr is a terminal; a bool forces it on or
        off; a callable makes a silent counter that reports ``(done, total)`` to it.

    Returns
    -------
    tqdm.tqdm
        The bar (update it with the items done).
    """
    if callable(progress):
        return _Reported(progress, total=total, desc=description)
    show = sys.stderr.isatty() if progress is None else progress
    return tqdm(total=total, desc=description, unit="sample", disable=not show, leave=False)
