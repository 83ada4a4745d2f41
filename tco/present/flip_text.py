"""Flip conditions in words: where an input flips the winner and the windows where it loses."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from tco.analysis.flips import range_end
from tco.foundation.formatting import CROSSING_DIGITS, distinct, quantity

#: windows a flip condition names one by one; with more, the nearest, their count and the losing share
SHOWN_WINDOWS = 2


def describe_window(flip: Mapping, window: Sequence[float]) -> str:
    """One window where the winner loses, in words after the parameter's label: ``rises above 207 req/s`` (it runs
    to the end of the range), ``is between 207 req/s and 208 req/s``, ``is 3 yr or less``, ``is 4 yr to 6 yr``.

    Parameters
    ----------
    flip : Mapping
        The :class:`Flip` the window belongs to (``unit``, ``direction``, ``integer``, ``low``, ``high``).
    window : Sequence[float] [unit of the parameter]
        ``[from, to]``, ``from <= to`` (whole numbers, both included, for a whole-number parameter).

    Returns
    -------
    str
        The condition, values in readable units (:func:`tco.foundation.formatting.quantity`).
    """
    a, b = float(window[0]), float(window[1])
    unit, whole, above = flip["unit"], flip.get("integer"), flip["direction"] == "above"
    low, high = distinct([a, b], unit)
    if (b if above else a) == range_end(flip):
        if whole:
            return f"is {low} or more" if above else f"is {high} or less"
        return f"rises above {low}" if above else f"falls below {high}"
    if whole and a == b:
        return f"is {low}"
    return f"is {low} to {high}" if whole else f"is between {low} and {high}"


def describe_flip(flip: Mapping) -> str:
    """One flip condition in words, naming the option that becomes cheapest: ``groq-lpu unit price falls below $7,480
    (now $20,000, grade C): groq becomes cheapest``; a winner that wins again further on: ``mean demand is between
    207 req/s and 208 req/s (now 200 req/s)``; with more than :data:`SHOWN_WINDOWS` windows the nearest, their count
    and the share of that side where it flips: ``mean demand is between 207 req/s and 208 req/s, or in 3 more windows
    up to 1,000 req/s (now 200 req/s; 1.2% of 200 req/s to 1,000 req/s flips it)``; with a ``cause``: ``mean prompt
    length rises above 4,290 tokens (now 2,000 tokens): groq becomes cheapest, as h100 misses its time-to-first-token
    target even with idle replicas``; at a cliff (``misses_from``): ``..., as the cost of h100 climbs to a wall (from
    4,397 tokens h100 misses its time-to-first-token target even with idle replicas)``.

    Parameters
    ----------
    flip : Mapping
        A :class:`Flip` (``label``, ``unit``, ``base``, ``low``, ``high``, ``direction``, ``windows``,
        ``share``, ``integer``, ``grade``, optionally ``becomes``, ``cause`` and ``misses_from``).

    Returns
    -------
    str
        The sentence, values in readable units (:func:`tco.foundation.formatting.quantity`; where something changes,
        :data:`tco.foundation.formatting.CROSSING_DIGITS` significant figures); the grade is named when it is C (our
        estimate).
    """
    windows, unit = flip["windows"], flip["unit"]
    now = quantity(flip["base"], unit)
    grade = f", grade {flip['grade']}" if flip.get("grade") == "C" else ""
    if len(windows) <= SHOWN_WINDOWS:
        text = f"{flip['label']} {' or '.join(describe_window(flip, w) for w in windows)} (now {now}{grade})"
    else:
        end = quantity(range_end(flip), unit)
        side = f"{now} to {end}" if flip["direction"] == "above" else f"{end} to {now}"
        text = (f"{flip['label']} {describe_window(flip, windows[0])}, or in {len(windows) - 1} more windows "
                f"{'up' if flip['direction'] == 'above' else 'down'} to {end} (now {now}; "
                f"{quantity(flip['share'], 'fraction', 2)} of {side} flips it{grade})")
    return text + outcome(flip)


def outcome(flip: Mapping) -> str:
    """What happens past a flip, after its condition: ``: groq becomes cheapest``, with its cause where a latency
    target decides it (``, as h100 misses ...``; at a cliff ``, as the cost of h100 climbs to a wall (from 4,397
    tokens h100 misses ...)``); ``: no option meets the latency targets``; empty where the flip names no outcome (a
    training comparison's).

    Parameters
    ----------
    flip : Mapping
        A :class:`Flip`, with its optional ``becomes``, ``cause`` and ``misses_from`` [unit of the parameter].

    Returns
    -------
    str
        The clause, with its leading colon, or empty.
    """
    cause, wall = flip.get("cause", ""), flip.get("misses_from", math.nan)
    if cause and wall is not None and math.isfinite(wall):
        loser = cause.split(" ", 1)[0]
        cause = f"the cost of {loser} climbs to a wall (from {quantity(wall, flip['unit'], CROSSING_DIGITS)} {cause})"
    because = f", as {cause}" if cause else ""
    if "becomes" not in flip:
        return f", where {cause}" if cause else ""
    if not flip["becomes"]:
        return f": no option meets the latency targets{because}"
    return f": {flip['becomes']} becomes cheapest{because}"
