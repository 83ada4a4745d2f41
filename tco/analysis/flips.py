"""Flip conditions of a verdict: how far each input must move, alone, for the winner to change.

``flip_conditions(params, gap)`` takes the scenario's named parameters and a signed
``gap(updates)`` (negative while the current winner wins; ``updates`` maps parameter
names to arrays) and finds, for every uncertain parameter moved alone across its
low..high range, the nearest value below and above its base value where the gap changes
sign (:func:`tco.analysis.solvers.scan`: interior double crossings and narrow feasibility windows
included). All parameters are searched at once: point ``k`` of a batch moves one parameter
and holds the others at their base values, so each refinement and bisection step is a
single vectorized evaluation. A whole-number parameter (a life in years, a batch size)
flips at a whole number.

:func:`winner_gap` is the gap of "the current winner stays cheapest" for any cost figure
(cost per output token, cost per training run); :func:`describe_flip` words one condition
with the parameter's label and a readable unit (:mod:`tco.present.flip_text`). A window narrower than one
step of the search (:func:`tco.analysis.solvers.search_step`) is below what it resolves: the verdict reads it as a tie (the costs
within the tie tolerance there) or a cliff (the winner's cost climbing to a latency wall), not as a flip.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import NotRequired, TypedDict

import numpy as np

from tco.analysis.solvers import Scan, scan, search_step
from tco.foundation.fields import FIELDS
from tco.foundation.labels import param_label
from tco.inputs.parameters import Param, ParamSet

#: grid points per parameter of the flip search: a stretch of the range wider than ``1/(GRID_POINTS - 1)`` of it
#: (a ratio on a geometric grid) where the winner wins, or loses, is always found
GRID_POINTS = 257


def winner_gap(costs: Mapping[str, object], feasible: Mapping[str, object], winner: str) -> np.ndarray:
    """``winner``'s cost minus the cheapest other option's: negative while ``winner`` stays cheapest.

    An option that misses a latency target (``feasible`` 0) costs infinity; when no option is
    feasible the gap is 0 (no winner).

    Parameters
    ----------
    costs : Mapping[str, numpy.ndarray or float] [USD/Mtok, USD per run, ...]
        Each option's cost figure, in one unit for all; arrays broadcast.
    feasible : Mapping[str, numpy.ndarray or float] [-]
        Each option's feasibility flag (> 0: meets its targets), broadcasting with the costs.
    winner : str
        The option whose lead is measured.

    Returns
    -------
    numpy.ndarray [unit of the costs]
        Winner's cost minus the cheapest feasible other option's; 0 where nothing is feasible.
    """
    own = np.where(np.asarray(feasible[winner]) > 0, costs[winner], np.inf)
    others = np.min(np.stack(np.broadcast_arrays(*[np.where(np.asarray(feasible[n]) > 0, costs[n], np.inf)
                                                   for n in costs if n != winner])), axis=0)
    with np.errstate(invalid="ignore"):
        gap = own - others
    return np.where(np.isnan(gap), 0.0, gap)


def _moved(names: Sequence[str], base: Mapping[str, float], track: np.ndarray, x: np.ndarray) -> dict[str, np.ndarray]:
    """Updates where point ``k`` moves parameter ``names[track[k]]`` to ``x[k]`` and holds the others."""
    updates = {}
    for j, name in enumerate(names):  # one column per parameter: a structural loop
        updates[name] = np.where(track == j, x, float(base[name]))
    return updates


def _whole(param: Param) -> bool:
    """Whether a parameter takes whole numbers only (its field says so; a name outside the field table does not)."""
    field = FIELDS.get(param.name.rsplit(".", 1)[-1])
    return bool(field and field.integer)


class Flip(TypedDict):
    """One flip condition: one parameter moved alone to one side of its base value (:func:`flip_conditions`).

    Values in the parameter's unit; a whole-number parameter's windows hold whole numbers, both ends included.
    """

    name: str
    label: str
    unit: str
    base: float
    low: float
    high: float
    value: float  #: the nearest value where the winner has lost (the near end of ``windows[0]``)
    direction: str  #: ``"below"`` or ``"above"`` the base value
    windows: list[list[float]]  #: every ``[from, to]`` on this side where the winner loses, nearest first
    holds: bool  #: the nearest window runs to the end of the range: past ``value`` the winner never wins again
    share: float  #: [-] share of this side of the range (base to low or high) where the winner loses
    integer: bool
    grade: str
    distance: float  #: [-] ``|value - base| / (high - low)``
    #: why the winner loses just past ``value`` when a latency target decides it (the caller's words, e.g.
    #: ``h100 misses its time-to-first-token target``); absent or empty where the costs alone cross
    cause: NotRequired[str]
    #: the option cheapest just past ``value`` (among those that meet their targets there; empty: none does)
    becomes: NotRequired[str]
    #: where the winner, still meeting its targets just past ``value``, stops meeting them within one step of the
    #: search (:func:`tco.analysis.solvers.search_step`) beyond it: its cost climbs to a wall there (a cliff); NaN
    #: where it does not
    misses_from: NotRequired[float]


def losing_windows(scan_result: Scan, base: float, direction: str, whole: bool) -> list[list[float]]:
    """The pieces of a scan where the winner loses, on one side of ``base``, nearest first.

    Parameters
    ----------
    scan_result : tco.analysis.solvers.Scan
        The scan of the winner's gap along one parameter (``wins``: the current winner wins).
    base : float [unit of the parameter]
        The parameter's base value (the winner wins there).
    direction : str
        ``"below"`` (``[low, base]``) or ``"above"`` (``[base, high]``).
    whole : bool
        Whole-number parameter: a piece ``[a, b)`` of the scan loses at the whole numbers ``a .. b - 1``
        (the last piece up to ``high``), reported as ``[a, b - 1]``.

    Returns
    -------
    list[list[float]] [unit of the parameter]
        ``[from, to]`` with ``from <= to``, clipped to the side; ordered outward from ``base``.
    """
    pieces = scan_result.segments()
    out = []
    for i, (a, b, wins, _) in enumerate(pieces):
        if wins:
            continue
        if whole:  # whole numbers on this side only: above base from floor(base) + 1, below it up to ceil(base) - 1
            b = b if i == len(pieces) - 1 else b - 1.0
            a, b = (max(a, np.floor(base) + 1.0), b) if direction == "above" else (a, min(b, np.ceil(base) - 1.0))
            keep = b >= a
        else:
            a, b = (max(a, base), b) if direction == "above" else (a, min(b, base))
            keep = b > a
        if keep:
            out.append([float(a), float(b)])
    return out if direction == "above" else out[::-1]


def losing_share(windows: Sequence[Sequence[float]], base: float, end: float, whole: bool) -> float:
    """Share of the side of the range from ``base`` to ``end`` covered by ``windows`` [-].

    Parameters
    ----------
    windows : Sequence[Sequence[float]] [unit of the parameter]
        Disjoint ``[from, to]`` pieces between ``base`` and ``end`` (:func:`losing_windows`).
    base, end : float [unit of the parameter]
        The base value and the range's end on this side (low or high).
    whole : bool
        Whole numbers: the share of the whole numbers beyond ``base`` up to ``end`` (``to - from + 1`` each).

    Returns
    -------
    float [-]
        Between 0 and 1; 0 when the side is empty.
    """
    if whole:  # the whole numbers strictly beyond base up to end (both ends of the range are whole here)
        count = np.floor(end) - np.floor(base) if end >= base else np.ceil(base) - np.ceil(end)
        return float(sum(b - a + 1.0 for a, b in windows) / count) if count > 0 else 0.0
    span = abs(end - base)
    return float(sum(b - a for a, b in windows) / span) if span else 0.0


def flip_conditions(params: ParamSet, gap: Callable[[dict[str, np.ndarray]], np.ndarray],
                    names: Sequence[str] | None = None, points: int = GRID_POINTS, levels: int = 2, split: int = 8,
                    tolerance: float = 1e-6) -> list[Flip]:
    """Each uncertain parameter's flips below and above its base value: every window of its range where the
    winner loses, nearest first (relative to its range).

    All parameters are searched at once by :func:`tco.analysis.solvers.scan` (point ``k`` of a batch
    moves one parameter and holds the others at their base values). Whole-replica rounding makes
    a cost a sawtooth in demand, so the winner can lose in a window and win again beyond it:
    each side reports all its windows. Resolution: every stretch of the range where the outcome
    is the same and that is wider than one grid step (``(high - low) / (points - 1)``, a ratio on
    a geometric grid) is reported with the right outcome; a narrower one can be missed.

    Parameters
    ----------
    params : tco.inputs.parameters.ParamSet
        The scenario's parameters: base values and low/high ranges.
    gap : Callable[[dict[str, numpy.ndarray]], numpy.ndarray] [unit of the compared cost]
        ``gap(updates)``: negative while the current winner wins;
        ``updates`` maps parameter names to arrays.
    names : Sequence[str], optional
        Parameters to search (default: every uncertain one).
    points, levels, split : int [-]
        Grid points, refinement levels and pieces per refined interval of the scan.
    tolerance : float [-]
        Bisection stops below this share of a parameter's range.

    Returns
    -------
    list[Flip]
        One :class:`Flip` per parameter and side where the winner loses somewhere: ``value`` [unit of
        the parameter] is the nearest value where the winner stops winning (for a whole-number
        parameter, the first whole number at which it has lost), ``windows`` every piece of that side
        where it loses, ``holds`` whether the nearest runs to the range's end, ``share`` [-] the
        losing share of that side, ``distance`` [-] the move over the range. Parameters that never
        flip within their range are left out; one that flips on both sides appears twice.
    """
    names = [p.name for p in params.uncertain()] if names is None else list(names)
    integer = [_whole(params[n]) for n in names]
    if not names:
        return []
    base = params.values()
    specs = [params[n] for n in names]
    scans = scan(lambda track, x: gap(_moved(names, base, track, x)), [p.low for p in specs], [p.high for p in specs],
                 integer=integer, points=points, levels=levels, split=split, tolerance=tolerance)
    out: list[Flip] = []
    for p, whole, result in zip(specs, integer, scans, strict=True):
        for direction, end in (("below", result.low), ("above", result.high)):
            windows = losing_windows(result, p.value, direction, whole)
            if not windows:
                continue
            near, far = (0, 1) if direction == "above" else (1, 0)
            value = windows[0][near]
            out.append(Flip(name=p.name, label=param_label(p.name), unit=p.unit, base=p.value, low=p.low, high=p.high,
                            value=value, direction=direction, windows=windows,
                            holds=len(windows) == 1 and windows[0][far] == end,
                            share=losing_share(windows, p.value, end, whole), integer=whole, grade=p.grade,
                            distance=abs(value - p.value) / (p.high - p.low)))
    return sorted(out, key=lambda row: row["distance"])


def just_past(flip: Mapping) -> float:
    """A value of the flip's parameter just inside its nearest window, where the winner has lost [unit of the parameter].

    The near end of the window for a whole-number parameter (the first whole number at which the winner has lost);
    otherwise a thousandth of the window's width beyond it (of its log width when both ends are positive), clear of
    the bisection's last bracket (a millionth of the range).

    Parameters
    ----------
    flip : Mapping
        A :class:`Flip` (``value``, ``windows``, ``direction``, ``integer``).

    Returns
    -------
    float [unit of the parameter]
        The value.
    """
    near = float(flip["value"])
    if flip.get("integer"):
        return near
    window = flip["windows"][0]
    far = float(window[1] if flip["direction"] == "above" else window[0])
    if near > 0 and far > 0:
        ratio = far / near
        x = near * ratio ** 1e-3 if math.isfinite(ratio) else \
            math.exp(math.log(near) + 1e-3 * (math.log(far) - math.log(near)))  # a subnormal near end: ratio overflows
    else:
        x = near + (far - near) * 1e-3
    return min(max(x, min(near, far)), max(near, far))  # exp(log(near)) may round an ulp outside


def beyond(flip: Mapping, count: int) -> np.ndarray:
    """``count`` values from :func:`just_past` the flip to one search step (:func:`tco.analysis.solvers.search_step`)
    beyond it, inside the flip's nearest window: where a winner whose cost climbs to a latency wall stops meeting its
    targets.

    Parameters
    ----------
    flip : Mapping
        A :class:`Flip` (``value``, ``windows``, ``direction``, ``integer``, ``low``, ``high``).
    count : int [-]
        Values wanted.

    Returns
    -------
    numpy.ndarray [unit of the parameter]
        Ordered outward from the flip's value, clipped to its nearest window.
    """
    start = just_past(flip)
    step, log = search_step(float(flip["low"]), float(flip["high"]), GRID_POINTS)
    sign = 1.0 if flip["direction"] == "above" else -1.0
    share = np.linspace(0.0, 1.0, count)
    xs = start * step ** (sign * share) if log else start + sign * step * share
    window = flip["windows"][0]
    xs = np.clip(xs, min(window), max(window))
    return np.round(xs) if flip.get("integer") else xs


def probe_updates(flips: Sequence[Mapping], base: Mapping[str, float],
                  values: Sequence[np.ndarray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Updates that move each flip's parameter, alone, to each of its ``values`` (one evaluation of all at once).

    Parameters
    ----------
    flips : Sequence[Mapping]
        :class:`Flip` conditions.
    base : Mapping[str, float] [unit of each parameter]
        The base values of (at least) the flips' parameters.
    values : Sequence[numpy.ndarray] [unit of each flip's parameter]
        The values of flip ``k``'s parameter to evaluate.

    Returns
    -------
    updates : dict[str, numpy.ndarray] [unit of each parameter]
        One array of ``sum(len(v))`` points per parameter named by a flip.
    owner : numpy.ndarray [-]
        The flip each point belongs to.
    """
    names = list(dict.fromkeys(f["name"] for f in flips))
    owner = np.concatenate([np.full(len(v), k) for k, v in enumerate(values)]).astype(int)
    track = np.array([names.index(flips[k]["name"]) for k in owner], int)
    return _moved(names, base, track, np.concatenate([np.asarray(v, float) for v in values])), owner


def range_end(flip: Mapping) -> float:
    """The end of the flip's side of the range: low or high (rounded inward for a whole-number parameter).

    Parameters
    ----------
    flip : Mapping
        A flip condition (:class:`Flip`): its direction, range and whether the parameter is a whole number.

    Returns
    -------
    float [unit of the parameter]
        The high end for a flip above the base value, the low end for one below.
    """
    if flip["direction"] == "above":
        return float(np.floor(flip["high"])) if flip.get("integer") else float(flip["high"])
    return float(np.ceil(flip["low"])) if flip.get("integer") else float(flip["low"])
