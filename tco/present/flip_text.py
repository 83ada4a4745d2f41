"""Flip conditions in words: where an input flips the winner and the windows where it loses."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tco.analysis.flips import range_end
from tco.foundation.formatting import quantity

#: windows a flip condition names one by one; with more, the nearest, their count and the losing share
SHOWN_WINDOWS = 2


def _ends(a: float, b: float, unit: str) -> tuple[str, str]:
    """``a`` and ``b`` in readable units, with as many significant figures as it takes to tell them apart."""
    digits = 3
    while quantity(a, unit, digits) == quantity(b, unit, digits) and digits < 8:
        digits += 1
    return quantity(a, unit, digits), quantity(b, unit, digits)


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
    if (b if above else a) == range_end(flip):
        if whole:
            return f"is {quantity(a, unit)} or more" if above else f"is {quantity(b, unit)} or less"
        return f"rises above {quantity(a, unit)}" if above else f"falls below {quantity(b, unit)}"
    if whole and a == b:
        return f"is {quantity(a, unit)}"
    low, high = _ends(a, b, unit)
    return f"is {low} to {high}" if whole else f"is between {low} and {high}"


def describe_flip(flip: Mapping) -> str:
    """One flip condition in words: ``groq-lpu unit price falls below $7,480 (now $20,000, grade C)``; a winner
    that wins again further on: ``mean demand is between 207 req/s and 208 req/s (now 200 req/s)``; with more
    than :data:`SHOWN_WINDOWS` windows the nearest, their count and the share of that side where it flips:
    ``mean demand is between 207 req/s and 208 req/s, or in 3 more windows up to 1,000 req/s (now 200 req/s;
    1.2% of 200 req/s to 1,000 req/s flips it)``; with a ``cause``: ``prompt tokens per request rises above 4,290
    tokens (now 2,000 tokens), where h100 misses its time-to-first-token target even with idle replicas``.

    Parameters
    ----------
    flip : Mapping
        A :class:`Flip` (``label``, ``unit``, ``base``, ``low``, ``high``, ``direction``, ``windows``,
        ``share``, ``integer``, ``grade``, optionally ``cause``).

    Returns
    -------
    str
        The sentence, values in readable units (:func:`tco.foundation.formatting.quantity`); the grade is
        named when it is C (our estimate).
    """
    windows, unit = flip["windows"], flip["unit"]
    now = quantity(flip["base"], unit)
    grade = f", grade {flip['grade']}" if flip.get("grade") == "C" else ""
    cause = f", where {flip['cause']}" if flip.get("cause") else ""
    if len(windows) <= SHOWN_WINDOWS:
        return f"{flip['label']} {' or '.join(describe_window(flip, w) for w in windows)} (now {now}{grade}){cause}"
    end = quantity(range_end(flip), unit)
    side = f"{now} to {end}" if flip["direction"] == "above" else f"{end} to {now}"
    return (f"{flip['label']} {describe_window(flip, windows[0])}, or in {len(windows) - 1} more windows "
            f"{'up' if flip['direction'] == 'above' else 'down'} to {end} (now {now}; "
            f"{quantity(flip['share'], 'fraction', 2)} of {side} flips it{grade}){cause}")
