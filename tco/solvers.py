"""Break-even solver: where a metric of one option crosses the baseline's, for any parameter.

Vectorized: the parameter is swept on a grid along a new leading axis, the first sign
change is bracketed, then narrowed; every other parameter may be an array, so one call
finds a break-even per grid cell or per Monte Carlo draw.

A bracket ``[lo, hi]`` is narrowed by bisection. When many crossings are searched at once,
each halving is one call of the gap function over all of them. When one scalar crossing is
searched, the cost of a call is Python overhead, not arithmetic, so the midpoints of the next
:data:`HALVINGS_PER_CALL` halvings (every one bisection could visit: ``2^L - 1`` points, each
computed from its two neighbours with bisection's own formula) are evaluated in one
vectorized call and the halvings replayed from them: the same brackets as one halving per
call, in a quarter of the calls.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

#: status codes of a break-even search
CROSSES, ALWAYS, NEVER = 0, 1, -1
STATUS_NAMES = {CROSSES: "crosses", ALWAYS: "always", NEVER: "never"}

#: bisection halvings per call of the gap function when one scalar crossing is narrowed (2^4 - 1 = 15 points a call)
HALVINGS_PER_CALL = 4

#: break-even metrics: name -> (meaning, default target)
BREAKEVEN_METRICS = {
    "lcot": ("levelized cost per million output tokens: option minus baseline", 0.0),
    "npv": ("NPV of choosing the option over the baseline", 0.0),
    "ratio": ("option cost / baseline cost", 1.0),
}


def spans_decades(low: float, high: float) -> bool:
    """Whether a range is better gridded geometrically: positive and wider than 100x."""
    return low > 0 and high / low > 100.0


def grid(low: float, high: float, points: int, log: bool | None = None) -> np.ndarray:
    """``points`` values from ``low`` to ``high``; geometric when the range spans > 100x."""
    log = spans_decades(low, high) if log is None else log
    return np.geomspace(low, high, points) if log else np.linspace(low, high, points)


def find_crossing(gap: Callable[[np.ndarray], np.ndarray], low: float, high: float,
                  points: int = 65, iterations: int = 60, log: bool | None = None):
    """First ``x`` in ``[low, high]`` where ``gap(x)`` changes sign.

    ``gap`` maps an array ``x`` (leading axis) to an array that broadcasts with it;
    negative means the option wins. Returns ``(x, status, wins_above)``: the break-even
    (NaN without a crossing), ``CROSSES`` / ``ALWAYS`` (wins over the whole range) /
    ``NEVER``, and whether the option wins above the break-even.
    """
    log = spans_decades(low, high) if log is None else log
    xs = grid(low, high, points, log)
    probe = np.asarray(gap(xs[:1]))
    xs_b = xs.reshape((-1,) + (1,) * (probe.ndim - 1))
    g = np.asarray(gap(xs_b))
    g = np.broadcast_to(g, np.broadcast_shapes(g.shape, xs_b.shape))  # a gap that ignores x is constant
    negative = g < 0
    change = negative[1:] != negative[:-1]
    has = change.any(axis=0)
    first = np.argmax(change, axis=0)
    lo = np.take_along_axis(np.broadcast_to(xs_b, g.shape), first[None], axis=0)[0]
    hi = np.take_along_axis(np.broadcast_to(xs_b, g.shape), first[None] + 1, axis=0)[0]
    g_lo = np.take_along_axis(g, first[None], axis=0)[0]
    bisect = _bisection_in_batches if np.ndim(lo) == 0 else _bisection
    lo, hi = bisect(gap, lo, hi, g_lo, iterations, log)
    status = np.where(has, CROSSES, np.where(negative.all(axis=0), ALWAYS, NEVER))
    x = np.where(has, 0.5 * (lo + hi), np.nan)
    wins_above = ~np.take_along_axis(negative, first[None], axis=0)[0]
    return x, status, wins_above



def _midpoint(lo, hi, log: bool):
    """Bisection's next point: the geometric mean on a log grid, else the arithmetic mean."""
    return np.sqrt(lo * hi) if log else 0.5 * (lo + hi)


def _bisection(gap, lo, hi, g_lo, halvings: int, log: bool):
    """``halvings`` bisection steps of every bracket at once (arrays of brackets): one call of ``gap`` each."""
    for _ in range(halvings):
        mid = _midpoint(lo, hi, log)
        g_mid = np.asarray(gap(mid))
        same = (g_mid < 0) == (g_lo < 0)
        lo = np.where(same, mid, lo)
        g_lo = np.where(same, g_mid, g_lo)
        hi = np.where(same, hi, mid)
    return lo, hi


def _bisection_in_batches(gap, lo, hi, g_lo, halvings: int, log: bool):
    """``halvings`` bisection steps of one scalar bracket, :data:`HALVINGS_PER_CALL` per call of ``gap``
    (module docstring): the same brackets as :func:`_bisection`."""
    lo, hi, g_lo = np.float64(lo), np.float64(hi), np.float64(g_lo)
    while halvings > 0:
        depth = min(HALVINGS_PER_CALL, halvings)
        points = [lo, hi]
        for _ in range(depth):  # every point of the next ``depth`` halvings, each from its neighbours
            points = [x for a, b in itertools.pairwise(points) for x in (a, _midpoint(a, b, log))] + [hi]
        values = np.broadcast_to(np.asarray(gap(np.array(points[1:-1])), float).reshape(-1), (len(points) - 2,))
        left, right = 0, len(points) - 1
        for _ in range(depth):  # replay the halvings on the evaluated points
            middle = (left + right) // 2
            if (values[middle - 1] < 0) == (g_lo < 0):
                left, g_lo = middle, values[middle - 1]
            else:
                right = middle
        lo, hi, halvings = points[left], points[right], halvings - depth
    return np.asarray(lo), np.asarray(hi)
