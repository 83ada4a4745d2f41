"""Flip conditions of a verdict: how far each input must move, alone, for the winner to change.

``flip_conditions(params, gap)`` takes the scenario's named parameters and a signed
``gap(updates)`` (negative while the current winner wins; ``updates`` maps parameter
names to arrays) and finds, for every uncertain parameter moved alone across its
low..high range, the nearest value below and above its base value where the gap changes
sign (:func:`tco.solvers.scan`: interior double crossings and narrow feasibility windows
included). All parameters are searched at once: point ``k`` of a batch moves one parameter
and holds the others at their base values, so each refinement and bisection step is a
single vectorized evaluation. A whole-number parameter (a life in years, a batch size)
flips at a whole number.

:func:`winner_gap` is the gap of "the current winner stays cheapest" for any cost figure
(cost per output token, cost per training run); :func:`describe_flip` words one condition
with the parameter's label and a readable unit (:mod:`tco.display`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .display import param_label, quantity
from .fields import FIELDS
from .params import Param, ParamSet
from .solvers import scan


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


def flip_conditions(params: ParamSet, gap: Callable[[dict[str, np.ndarray]], np.ndarray],
                    names: Sequence[str] | None = None, points: int = 33, levels: int = 2, split: int = 8,
                    tolerance: float = 1e-6) -> list[dict]:
    """Each uncertain parameter's nearest flip below and above its base value, nearest first
    (relative to its range).

    All parameters are searched at once by :func:`tco.solvers.scan` (point ``k`` of a batch
    moves one parameter and holds the others at their base values).

    Parameters
    ----------
    params : tco.params.ParamSet
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
    list[dict]
        ``{name, label, unit, base, low, high, value, direction, distance, integer, grade}`` per
        flip: ``value`` [unit of the parameter] is the nearest value where the winner stops
        winning (for a whole-number parameter, the first whole number at which it has lost),
        ``direction`` ``"below"`` when it loses at or below that value and ``"above"`` when it
        loses at or above it, ``distance`` [-] the move over the range. Parameters that never
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
    out = []
    for p, whole, result in zip(specs, integer, scans, strict=True):
        flips = [c for c in result.changes if c.flips]
        below = [c for c in flips if c.value <= p.value and c.wins_above]
        above = [c for c in flips if c.value > p.value and c.wins_below]
        sides = ([("below", below[-1])] if below else []) + ([("above", above[0])] if above else [])
        for direction, change in sides:
            value = change.value - 1.0 if whole and direction == "below" else change.value
            out.append({"name": p.name, "label": param_label(p.name), "unit": p.unit, "base": p.value, "low": p.low,
                        "high": p.high, "value": float(value), "direction": direction, "integer": whole,
                        "grade": p.grade, "distance": abs(value - p.value) / (p.high - p.low)})
    return sorted(out, key=lambda row: row["distance"])


def describe_flip(flip: Mapping) -> str:
    """One flip condition in words: ``groq-lpu unit price falls below $7,480 (now $20,000, grade C)``.

    Parameters
    ----------
    flip : Mapping
        A row of :func:`flip_conditions` (``label``, ``unit``, ``value``, ``base``, ``direction``,
        ``integer``, ``grade``).

    Returns
    -------
    str
        The sentence, values in readable units (:func:`tco.display.quantity`); the grade is
        named when it is C (our estimate).
    """
    value, now = quantity(flip["value"], flip["unit"]), quantity(flip["base"], flip["unit"])
    if flip.get("integer"):
        moved = f"is {value} or {'less' if flip['direction'] == 'below' else 'more'}"
    else:
        moved = f"{'falls below' if flip['direction'] == 'below' else 'rises above'} {value}"
    grade = f", grade {flip['grade']}" if flip.get("grade") == "C" else ""
    return f"{flip['label']} {moved} (now {now}{grade})"
