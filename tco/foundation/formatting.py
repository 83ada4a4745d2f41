"""Numbers as people read them: 3-4 significant figures, a readable unit (4.3 ms, $1.2M,
3.35 TB/s, 9 %), an em dash for a missing or non-finite value; whole numbers (counts, token budgets,
batch sizes) and calendar years exactly (8,192 tokens, 2026)."""

from __future__ import annotations

import itertools
import math

#: readable scalings of SI units: unit -> ((threshold, factor, shown unit), ...), largest first
_SCALES = {
    "s": ((1.0, 1.0, "s"), (1e-3, 1e3, "ms"), (0.0, 1e6, "µs")),
    "B": ((1e12, 1e-12, "TB"), (1e9, 1e-9, "GB"), (1e6, 1e-6, "MB"), (1e3, 1e-3, "kB"), (0.0, 1.0, "B")),
    "B/s": ((1e12, 1e-12, "TB/s"), (1e9, 1e-9, "GB/s"), (1e6, 1e-6, "MB/s"), (0.0, 1.0, "B/s")),
    "FLOP/s": ((1e15, 1e-15, "PFLOP/s"), (1e12, 1e-12, "TFLOP/s"), (0.0, 1e-9, "GFLOP/s")),
    "W": ((1e6, 1e-6, "MW"), (1e3, 1e-3, "kW"), (0.0, 1.0, "W")),
    "params": ((1e9, 1e-9, "B params"), (1e6, 1e-6, "M params"), (0.0, 1.0, "params")),
}


#: whole numbers below this print every digit (``8,192 tokens``, ``$12,934``); above it, a suffix (``16.8M tokens``)
EXACT_BELOW = 1e6
#: a value in ``yr`` at or above this is a calendar year (``2026``, ``2026.5``), printed without a thousands separator
CALENDAR_YEAR_FROM = 1000.0


def quantity(value, unit: str, digits: int = 3) -> str:
    """``value`` in ``unit`` as a person reads it: ``0.0043 s -> 4.3 ms``, ``20000 USD -> $20,000``,
    ``1.45e8 USD -> $145M``, ``0.09 fraction -> 9 %``, ``0.09 1/yr -> 9 %/yr``; a whole number below
    :data:`EXACT_BELOW` with every digit (``8192 tokens -> 8,192 tokens``, ``1024 sequences -> 1,024 sequences``)
    and a calendar year as it is written (``2023 yr -> 2023 yr``, ``2026.5 yr -> 2026.5 yr``).

    Parameters
    ----------
    value : float or None [unit]
        The number.
    unit : str
        Its unit, as the field table writes it (``s``, ``USD``, ``fraction``, ``tokens``, ...).
    digits : int [-]
        Significant figures of a number that is not whole.

    Returns
    -------
    str
        The number and its readable unit; the em dash for None or non-finite.
    """
    if value is None or not math.isfinite(float(value)):
        return NONE
    value = float(value)
    if unit == "yr" and value >= CALENDAR_YEAR_FROM:
        return f"{round(value, 2):g} yr"
    if unit == "USD":
        size = abs(value)
        sign = "-" if value < 0 else ""
        for threshold, suffix in ((1e9, "B"), (1e6, "M")):
            if size >= threshold:
                return f"{sign}${sig(size / threshold, digits)}{suffix}"
        return f"{sign}${_number(size, max(digits, 4) if size >= 1000 else digits)}"
    if unit in ("fraction", "1/yr"):
        return f"{sig(value * 100, digits)}%" + ("/yr" if unit == "1/yr" else "")
    for threshold, factor, shown in _SCALES.get(unit, ()):
        if abs(value) >= threshold:
            return f"{sig(value * factor, digits)} {shown}"
    for threshold, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):  # large counts: 16.8M tokens
        if abs(value) >= threshold:
            return f"{sig(value / threshold, digits)}{suffix} {unit}".rstrip()
    return f"{_number(value, digits)} {unit}".rstrip()


def _number(value: float, digits: int) -> str:
    """A whole number below :data:`EXACT_BELOW` with every digit, thousands separated; another to ``digits``."""
    if value == round(value) and abs(value) < EXACT_BELOW:
        return f"{int(value):,}"
    return sig(value, digits)


#: significant figures of a value where something changes (a break-even, a flip, a window's end): the break-even
#: table, its sentence and the verdict print one crossing alike
CROSSING_DIGITS = 4


def distinct(values, unit: str, digits: int = CROSSING_DIGITS) -> list[str]:
    """``values`` in readable units (:func:`quantity`), with as many significant figures as it takes (from ``digits``, up
    to 8) for neighbours that differ to read differently: ``[4385.2, 4397.1] -> 4,385 tokens, 4,397 tokens``.

    Parameters
    ----------
    values : Sequence[float] [unit]
        The values, in order.
    unit : str
        Their unit.
    digits : int [-]
        Significant figures at least.

    Returns
    -------
    list[str]
        One text per value.
    """
    values = [float(v) for v in values]
    while digits < 8 and any(quantity(a, unit, digits) == quantity(b, unit, digits)
                             for a, b in itertools.pairwise(values) if a != b):
        digits += 1
    return [quantity(v, unit, digits) for v in values]


#: what a missing or non-finite value shows
NONE = "—"


def sig(value, digits: int = 3, trim: bool = True) -> str:
    """``value`` with ``digits`` significant figures, thousands separated, no exponent between 1e-4 and 1e15.

    ``20000 -> 20,000``, ``0.0098595 -> 0.00986``; trailing zeros dropped unless not ``trim``
    (``4.30 -> 4.3``); the em dash for None or non-finite.

    Parameters
    ----------
    value : float or None [-]
        The number, in whatever unit the caller shows it.
    digits : int [-]
        Significant figures.
    trim : bool
        Drop trailing zeros after the decimal point.

    Returns
    -------
    str
        The formatted number.
    """
    if value is None:
        return NONE
    value = float(value)
    if not math.isfinite(value):
        return NONE
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    if not -4 <= exponent < 15:
        return f"{value:.{digits - 1}e}"
    places = digits - 1 - exponent  # negative rounds to tens, hundreds, ...
    decimals = max(0, places)
    rounded = round(value, places)
    if rounded != 0 and math.floor(math.log10(abs(rounded))) > exponent:  # 9.996 -> 10.0: one decimal fewer
        decimals = max(0, decimals - 1)
    text = f"{rounded:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if trim and "." in text else text


def usd(value) -> str:
    """A cost in dollars to three significant figures: ``$1.49``, ``$0.0986``, ``$9,180``.

    Parameters
    ----------
    value : float [USD]
        The cost (per million tokens, per device-hour: the caller names the unit).

    Returns
    -------
    str
        ``$`` and :func:`sig` of it.
    """
    return f"${sig(value, 3)}"
