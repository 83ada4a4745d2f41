"""Break-even solvers: where a metric of one option crosses the baseline's, for any parameter.

:func:`scan` finds every crossing and every feasibility edge of one or several parameters in
a range (adaptive refinement, then bisection; each step one vectorized evaluation): what
``tco breakeven``, the app, the workbook snapshot and the verdict's flip conditions report.
:func:`find_crossing` finds the first crossing per element when the other parameters are
arrays (one break-even per map cell or Monte Carlo draw).

find_crossing is vectorized: the parameter is swept on a grid along a new leading axis, the first sign
change is bracketed, then narrowed; every other parameter may be an array, so one call
finds a break-even per grid cell or per Monte Carlo draw.

A bracket ``[lo, hi]`` is narrowed by bisection. When few crossings are searched, the cost of
a call is Python overhead, not arithmetic, so the midpoints of the next ``L`` halvings (every
one bisection could visit: ``2^L - 1`` points per bracket, each computed from its two
neighbours with bisection's own formula) are evaluated in one vectorized call and the halvings
replayed from them: the same brackets as one halving per call, in ``1/L`` of the calls.
``L`` is :data:`HALVINGS_PER_CALL` for one scalar crossing (:func:`find_crossing`); in
:func:`scan` it is the most that keeps a call within :data:`SCAN_POINTS_PER_CALL` points
(at least one halving). When many crossings are searched at once (a map, a Monte Carlo), each
halving is one call over all of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: status codes of a break-even search
CROSSES, ALWAYS, NEVER = 0, 1, -1
STATUS_NAMES = {CROSSES: "crosses", ALWAYS: "always", NEVER: "never"}

#: bisection halvings per call of the gap function when one scalar crossing is narrowed (2^4 - 1 = 15 points a call)
HALVINGS_PER_CALL = 4

#: points per call of the gap function up to which :func:`scan` batches halvings (measured on the default scenario's
#: KV-wall search, 2026-12-03: a call takes ~20 ms plus ~0.12 ms per point, so 64 points cost at most ~1.4x one)
SCAN_POINTS_PER_CALL = 64

#: break-even metrics: name -> (meaning, default target)
BREAKEVEN_METRICS = {
    "lcot": ("levelized cost per million output tokens: option minus baseline", 0.0),
    "npv": ("NPV of choosing the option over the baseline", 0.0),
    "ratio": ("option cost / baseline cost", 1.0),
}


def spans_decades(low: float, high: float) -> bool:
    """Whether a range is better gridded geometrically: positive and wider than 100x.

    Parameters
    ----------
    low, high : float [unit of the parameter]
        The range's ends.

    Returns
    -------
    bool
        ``low > 0 and high / low > 100``.
    """
    return low > 0 and high / low > 100.0


def search_step(low: float, high: float, points: int) -> tuple[float, bool]:
    """One step of a search's grid of ``points`` over ``[low, high]`` (:func:`scan`): the width below which a window
    can be missed.

    Parameters
    ----------
    low, high : float [unit of the parameter]
        The parameter's range.
    points : int [-]
        Grid points of the search.

    Returns
    -------
    step : float [unit of the parameter, or - for a geometric grid]
        ``(high - low) / (points - 1)``, or the ratio ``(high / low) ** (1 / (points - 1))`` on a geometric grid.
    log : bool
        Whether the grid is geometric (:func:`spans_decades`).
    """
    log = spans_decades(low, high)
    return ((high / low) ** (1.0 / (points - 1)), True) if log else ((high - low) / (points - 1), False)


def narrower_than_step(window: Sequence[float], low: float, high: float, points: int) -> bool:
    """Whether a window ``[from, to]`` is narrower than one step of the search over ``[low, high]``
    (:func:`search_step`): below what the search resolves, so a window of the winner reads as a tie or a cliff, not as
    a flip.

    Parameters
    ----------
    window : Sequence[float] [unit of the parameter]
        ``[from, to]``, ``from <= to``: its width (its ratio on a geometric grid) is compared.
    low, high, points : float, float, int [unit of the parameter, -]
        What :func:`search_step` takes the step from.

    Returns
    -------
    bool
        Narrower than one step.
    """
    step, log = search_step(low, high, points)
    a, b = float(window[0]), float(window[1])
    return b / a < step if log else b - a < step


def grid(low: float, high: float, points: int, log: bool | None = None) -> np.ndarray:
    """``points`` values from ``low`` to ``high``; geometric when the range spans > 100x.

    Parameters
    ----------
    low, high : float [unit of the parameter]
        The range's ends (both included).
    points : int [-]
        Number of values.
    log : bool, optional
        Geometric spacing; default: :func:`spans_decades`.

    Returns
    -------
    numpy.ndarray [unit of the parameter]
        The grid, increasing when ``low < high``.
    """
    log = spans_decades(low, high) if log is None else log
    return np.geomspace(low, high, points) if log else np.linspace(low, high, points)


def find_crossing(gap: Callable[[np.ndarray], np.ndarray], low: float, high: float,
                  points: int = 65, iterations: int = 60, log: bool | None = None):
    """First ``x`` in ``[low, high]`` where ``gap(x)`` changes sign, per element of the other axes.

    The parameter is swept on a grid along a new leading axis, the first sign change is
    bracketed, then narrowed by bisection (:data:`HALVINGS_PER_CALL` halvings per call when
    one scalar crossing is searched).

    Parameters
    ----------
    gap : Callable[[numpy.ndarray], numpy.ndarray] [unit of the compared metric]
        Maps an array ``x`` (leading axis) to an array that broadcasts with it; negative
        means the option wins.
    low, high : float [unit of the parameter]
        The searched range.
    points : int [-]
        Grid points of the first sweep.
    iterations : int [-]
        Bisection halvings of the bracket.
    log : bool, optional
        Geometric grid and midpoints; default: :func:`spans_decades`.

    Returns
    -------
    x : numpy.ndarray [unit of the parameter]
        The break-even (NaN without a crossing).
    status : numpy.ndarray [-]
        ``CROSSES``, ``ALWAYS`` (the option wins over the whole range) or ``NEVER``.
    wins_above : numpy.ndarray [-]
        Whether the option wins above the break-even (bool).
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
# --- every crossing and every feasibility edge in a range ----------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One point along a parameter where the winner or the feasibility changes.

    ``value`` is where it happens [unit of the parameter]: the midpoint of the final bracket, or
    for a whole-number parameter the first whole number of the new regime (the regime below
    holds up to ``value - 1``). ``wins_below`` / ``wins_above`` say whether the gap is negative
    (the option, or the current winner, wins) just below and just above; ``state_below`` /
    ``state_above`` are the caller's feasibility codes on each side.
    """

    value: float
    wins_below: bool
    wins_above: bool
    state_below: int
    state_above: int

    @property
    def flips(self) -> bool:
        """Whether the winner changes here (the gap changes sign)."""
        return self.wins_below != self.wins_above

    @property
    def feasibility(self) -> bool:
        """Whether a feasibility code changes here (an option starts or stops meeting its targets)."""
        return self.state_below != self.state_above


@dataclass(frozen=True)
class Scan:
    """What one parameter does to a gap across ``[low, high]``: its changes, in increasing order,
    and the regime at each end (``wins`` and ``state`` at ``low`` and at ``high``)."""

    low: float
    high: float
    changes: tuple[Change, ...]
    wins_at_low: bool
    wins_at_high: bool
    state_at_low: int
    state_at_high: int

    def settled(self, closeness: float = 0.02) -> Scan:
        """The scan with chattering crossings merged: a run of winner changes, each within ``closeness``
        (relative) of the one before and with no feasibility change among them, becomes the net change
        at the run's first value (none when the winner is the same after the run as before it).

        Whole-device rounding makes a cost gap that is nearly zero alternate in sign over a narrow band
        (replica counts step by one); within a band of ``closeness`` the two options are a tie for the
        verdict's tolerance (:data:`tco.analysis.verdict.DEFAULT_TIE_TOLERANCE`, 2 %), so reporting each
        alternation as a break-even says more than the model knows.
        """
        kept: list[Change] = []
        run: list[Change] = []

        def close_run():
            if run and run[0].wins_below != run[-1].wins_above:
                first, last = run[0], run[-1]
                kept.append(Change(first.value, first.wins_below, last.wins_above, first.state_below, last.state_above))
            run.clear()

        for c in self.changes:
            joins = (c.flips and not c.feasibility and run
                     and abs(c.value - run[-1].value) <= closeness * max(abs(run[-1].value), abs(c.value)))
            if not joins:
                close_run()
            if c.flips and not c.feasibility:
                run.append(c)
            else:
                kept.append(c)
        close_run()
        kept.sort(key=lambda c: c.value)
        return Scan(self.low, self.high, tuple(kept), self.wins_at_low, self.wins_at_high, self.state_at_low,
                    self.state_at_high)

    def segments(self) -> list[tuple[float, float, bool, int]]:
        """The range cut at every change: ``(from, to, wins, state)`` per piece."""
        edges = [self.low, *(c.value for c in self.changes), self.high]
        regimes = [(self.wins_at_low, self.state_at_low), *((c.wins_above, c.state_above) for c in self.changes)]
        return [(a, b, w, s) for a, b, (w, s) in zip(edges[:-1], edges[1:], regimes, strict=True)]


def _points(lo: np.ndarray, hi: np.ndarray, log: np.ndarray, integer: np.ndarray, count: int) -> np.ndarray:
    """``count`` points from ``lo`` to ``hi`` (ends included) per row: geometric where ``log``, rounded where ``integer``."""
    f = np.linspace(0.0, 1.0, count)
    safe_lo, safe_hi = np.where(log, lo, 1.0), np.where(log, hi, 1.0)
    geometric = safe_lo[:, None] * (safe_hi / safe_lo)[:, None] ** f
    x = np.where(log[:, None], geometric, lo[:, None] + (hi - lo)[:, None] * f)
    return np.where(integer[:, None], np.round(x), x)


def _halving_points(lo: np.ndarray, hi: np.ndarray, log: np.ndarray, depth: int) -> np.ndarray:
    """Every point the next ``depth`` halvings of each bracket can visit, ends included: ``(brackets, 2^depth + 1)``,
    each inner point the midpoint of its two neighbours by bisection's formula (geometric where ``log``)."""
    points = np.stack([lo, hi], axis=1)
    with np.errstate(invalid="ignore"):  # the geometric mean of a linear track's brackets is computed, then discarded
        for _ in range(depth):
            a, b = points[:, :-1], points[:, 1:]
            finer = np.empty((len(lo), 2 * points.shape[1] - 1))
            finer[:, ::2], finer[:, 1::2] = points, np.where(log[:, None], np.sqrt(a * b), 0.5 * (a + b))
            points = finer
    return points


def _bisect_changes(evaluate_gap, track: np.ndarray, log: np.ndarray, brackets: tuple, halvings: int) -> tuple:
    """``halvings`` bisection steps of every bracket of :func:`scan` that holds a change: where the midpoint differs
    from the low end in the sign of the gap or in the state, the change lies below it.

    Several halvings are taken per call of ``evaluate_gap`` (module docstring): every point they can visit is
    evaluated at once and the halvings are replayed on those values, so the brackets are those of one halving per
    call, bit for bit.

    Parameters
    ----------
    evaluate_gap : Callable
        ``evaluate_gap(track, x) -> (gap, state)``, arrays of the length of ``x``.
    track : numpy.ndarray of int [-]
        The track of each bracket.
    log : numpy.ndarray of bool [-]
        Whether each bracket's track is geometric (its midpoints the geometric mean).
    brackets : tuple of numpy.ndarray
        ``(lo, hi, neg_lo, neg_hi, s_lo, s_hi)``: the ends [unit of each track], whether the gap is negative at
        each end, and the state at each end.
    halvings : int [-]
        Bisection steps.

    Returns
    -------
    tuple of numpy.ndarray
        The narrowed ``(lo, hi, neg_lo, neg_hi, s_lo, s_hi)``.
    """
    lo, hi, neg_lo, neg_hi, s_lo, s_hi = (np.array(b) for b in brackets)
    rows = np.arange(len(lo))
    per_call = max(1, min(HALVINGS_PER_CALL, int(np.log2(SCAN_POINTS_PER_CALL / max(len(lo), 1) + 1))))
    while halvings > 0:
        depth = min(per_call, halvings)
        points = _halving_points(lo, hi, log, depth)
        inner = points[:, 1:-1]
        gap, state = evaluate_gap(np.repeat(track, inner.shape[1]), inner.reshape(-1))
        negative, state = (gap < 0).reshape(inner.shape), state.reshape(inner.shape)
        left, right = np.zeros(len(lo), int), np.full(len(lo), points.shape[1] - 1)
        for _ in range(depth):  # replay the halvings on the evaluated points
            middle = (left + right) // 2
            n_mid, s_mid = negative[rows, middle - 1], state[rows, middle - 1]
            move = (n_mid != neg_lo) | (s_mid != s_lo)  # the change lies below the midpoint
            right, neg_hi, s_hi = np.where(move, middle, right), np.where(move, n_mid, neg_hi), np.where(move, s_mid, s_hi)
            left, neg_lo, s_lo = np.where(move, left, middle), np.where(move, neg_lo, n_mid), np.where(move, s_lo, s_mid)
        lo, hi, halvings = points[rows, left], points[rows, right], halvings - depth
    return lo, hi, neg_lo, neg_hi, s_lo, s_hi


def scan(evaluate: Callable[[np.ndarray, np.ndarray], object], low, high, log=None, integer=None, *,
         points: int = 129, levels: int = 3, split: int = 16, tolerance: float = 1e-12) -> list[Scan]:
    """Every sign change of a gap, and every change of a feasibility code, along each of several tracks.

    A track is one parameter moved across ``[low[t], high[t]]`` (geometric where ``log[t]``,
    whole numbers where ``integer[t]``); all points of a step are evaluated in one call.
    The search (adaptive refinement, then bisection):

    1. a grid of ``points`` values per track;
    2. ``levels`` times, every interval whose ends differ in the sign of the gap or in the
       state, or that holds a local extremum of the gap closer to zero than the gap moves
       there (a dip that may cross between grid points), is cut into ``split`` pieces;
    3. every interval whose ends still differ is bisected until it is narrower than
       ``tolerance`` times the range (whole-number tracks stop at neighbouring integers).

    A window is found when its edges show at the grid: the ends of the grid interval that holds
    it differ in sign or state, or the gap dips there. A window narrower than one grid step
    whose two ends look alike (same sign, same state, no dip toward zero) can be missed; two
    changes closer than ``1 / (128 x 16^3)`` of the range can merge.

    Parameters
    ----------
    evaluate : Callable[[numpy.ndarray, numpy.ndarray], object] [unit of the compared metric]
        ``evaluate(track, x)`` takes two arrays of the same length (point ``k`` moves track
        ``track[k]`` to ``x[k]``) and returns the gap (negative: the option wins) or
        ``(gap, state)`` with an integer feasibility code per point.
    low, high : float or sequence of float [unit of each track's parameter]
        Each track's range.
    log : bool or sequence of bool, optional
        Geometric grid per track; default: :func:`spans_decades`.
    integer : bool or sequence of bool, optional
        Whole-number tracks (default: none).
    points : int [-]
        Grid points per track.
    levels : int [-]
        Refinement rounds.
    split : int [-]
        Pieces per refined interval.
    tolerance : float [-]
        Bisection stops below this share of a track's range (log width on geometric tracks).

    Returns
    -------
    list[Scan]
        One :class:`Scan` per track: its changes in increasing order and the regime at each end.
    """
    low, high = np.atleast_1d(np.asarray(low, float)), np.atleast_1d(np.asarray(high, float))
    tracks = len(low)
    log = np.array([spans_decades(a, b) for a, b in zip(low, high, strict=True)]) if log is None else \
        np.broadcast_to(np.asarray(log, bool), (tracks,))
    integer = np.zeros(tracks, bool) if integer is None else np.broadcast_to(np.asarray(integer, bool), (tracks,))
    low_i = np.where(integer, np.ceil(low), low)
    high_i = np.where(integer, np.floor(high), high)

    def width(a, b, t):
        """Interval width in the track's own scale (log where gridded geometrically)."""
        ratio = np.divide(b, a, out=np.ones_like(b), where=log[t])
        return np.where(log[t], np.log(ratio), b - a)

    def evaluate_gap(t, xs):
        out = evaluate(t, xs)
        gap, state = out if isinstance(out, tuple) else (out, np.zeros(len(xs), int))
        return (np.broadcast_to(np.asarray(gap, float), xs.shape).copy(),
                np.broadcast_to(np.asarray(state).astype(int), xs.shape).copy())

    grid_x = _points(low_i, high_i, log, integer, points)
    track = np.repeat(np.arange(tracks), points)
    x = grid_x.reshape(-1)
    if integer.any():  # rounded grids repeat whole numbers: keep each once
        pairs = np.unique(np.stack([track, x], axis=1), axis=0)
        track, x = pairs[:, 0].astype(int), pairs[:, 1]
    gap, state = evaluate_gap(track, x)
    scale = width(low_i, high_i, np.arange(tracks))
    for _ in range(levels):
        order = np.lexsort((x, track))
        track, x, gap, state = track[order], x[order], gap[order], state[order]
        same = track[1:] == track[:-1]
        neg = gap < 0
        differ = same & ((neg[1:] != neg[:-1]) | (state[1:] != state[:-1]))
        with np.errstate(invalid="ignore", over="ignore"):  # infinite gaps (an option that misses a target) make no dip
            d = np.diff(gap)
            inner = same[:-1] & same[1:]
            dip = inner & (d[:-1] * d[1:] < 0) & (np.abs(gap[1:-1]) < np.maximum(np.abs(d[:-1]), np.abs(d[1:])))
        interesting = differ.copy()
        interesting[:-1] |= dip
        interesting[1:] |= dip
        t = track[:-1]
        open_ = np.where(integer[t], x[1:] - x[:-1] > 1, width(x[:-1], x[1:], t) > tolerance * scale[t])
        cut = np.flatnonzero(interesting & open_)
        if not len(cut):
            break
        new = _points(x[cut], x[cut + 1], log[track[cut]], integer[track[cut]], split + 1)[:, 1:-1]
        new_track = np.repeat(track[cut], split - 1)
        new_x = new.reshape(-1)
        inside = (new_x > np.repeat(x[cut], split - 1)) & (new_x < np.repeat(x[cut + 1], split - 1))
        pairs = np.unique(np.stack([new_track[inside], new_x[inside]], axis=1), axis=0)
        new_track, new_x = pairs[:, 0].astype(int), pairs[:, 1]
        new_gap, new_state = evaluate_gap(new_track, new_x)
        track, x = np.concatenate([track, new_track]), np.concatenate([x, new_x])
        gap, state = np.concatenate([gap, new_gap]), np.concatenate([state, new_state])
    order = np.lexsort((x, track))
    track, x, gap, state = track[order], x[order], gap[order], state[order]
    neg = gap < 0
    same = track[1:] == track[:-1]
    found = np.flatnonzero(same & ((neg[1:] != neg[:-1]) | (state[1:] != state[:-1])))
    bt, lo, hi = track[found], x[found], x[found + 1]
    neg_lo, neg_hi, s_lo, s_hi = neg[found], neg[found + 1], state[found], state[found + 1]
    continuous = ~integer[bt]
    if continuous.any():
        c = np.flatnonzero(continuous)
        w = width(lo[c], hi[c], bt[c]) / np.maximum(tolerance * scale[bt[c]], 1e-300)
        steps = int(np.ceil(np.log2(max(float(np.max(w)), 1.0))))
        lo[c], hi[c], neg_lo[c], neg_hi[c], s_lo[c], s_hi[c] = _bisect_changes(
            evaluate_gap, bt[c], log[bt[c]], (lo[c], hi[c], neg_lo[c], neg_hi[c], s_lo[c], s_hi[c]), steps)
    value = np.where(integer[bt], hi, np.where(log[bt], np.sqrt(np.abs(lo * hi)), 0.5 * (lo + hi)))
    first = np.searchsorted(track, np.arange(tracks), side="left")
    last = np.searchsorted(track, np.arange(tracks), side="right") - 1
    out = []
    for t in range(tracks):  # a structural loop over the few tracks, to build the result objects
        mine = np.flatnonzero(bt == t)
        changes = tuple(Change(float(value[k]), bool(neg_lo[k]), bool(neg_hi[k]), int(s_lo[k]), int(s_hi[k]))
                        for k in mine)
        out.append(Scan(float(low_i[t]), float(high_i[t]), changes, bool(neg[first[t]]), bool(neg[last[t]]),
                        int(state[first[t]]), int(state[last[t]])))
    return out
