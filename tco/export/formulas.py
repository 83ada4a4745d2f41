"""Excel formula text for the core's formulas, one builder per core function.

Each builder takes formula fragments (cell references, defined names or sub-expressions)
and returns formula text without the leading ``=``. They mirror :mod:`tco.core` term by
term, in the same order of operations, so a recalculated workbook agrees with the Python
model to rounding. Only functions that Excel and LibreOffice 7.4 both have are used
(see :data:`ALLOWED_FUNCTIONS`, enforced by a test).
"""

from __future__ import annotations

from collections.abc import Sequence

#: spreadsheet functions the workbook may use: present in Excel 2010+ and LibreOffice 7.4
ALLOWED_FUNCTIONS = frozenset({
    "ABS", "AND", "CHOOSE", "EXP", "IF", "IFERROR", "INDEX", "INT", "IRR", "ISNUMBER", "ISTEXT", "LN", "LOG", "MATCH",
    "MAX", "MIN", "MOD", "OR", "PI", "SQRT", "SUM", "SUMPRODUCT",
})

#: tolerance guards copied from the core (not assumptions: they keep ceil/floor off rounding noise)
CEIL_GUARD_REPLICA = "1E-12"
CEIL_GUARD_FLEET = "1E-9"
FLOOR_GUARD_BATCH = "1E-9"


def p(expr: str) -> str:
    """Parenthesize."""
    return f"({expr})"


def ceil(expr: str) -> str:
    """``ceil(x)`` for any real x: ``-INT(-x)`` (INT rounds down in both Excel and LibreOffice)."""
    return f"-INT(-({expr}))"


def floor(expr: str) -> str:
    """``floor(x)``: ``INT(x)``."""
    return f"INT({expr})"


#: the most values one CHOOSE takes in LibreOffice (30 arguments with the index; Excel takes 254)
CHOOSE_VALUES = 29


def choose(index: str, values: Sequence[str]) -> str:
    """The value at 0-based ``index`` of ``values``: ``CHOOSE(index+1, ...)``, or past :data:`CHOOSE_VALUES` values
    a CHOOSE of CHOOSEs, one per block of that many."""
    if len(values) <= CHOOSE_VALUES:
        return f"CHOOSE({index}+1,{','.join(values)})"
    blocks = [values[i:i + CHOOSE_VALUES] for i in range(0, len(values), CHOOSE_VALUES)]
    inner = [f"CHOOSE(MOD({index},{CHOOSE_VALUES})+1,{','.join(block)})" for block in blocks]
    return f"CHOOSE(INT({index}/{CHOOSE_VALUES})+1,{','.join(inner)})"


def total(terms: Sequence[str]) -> str:
    """``t1+t2+...`` (the order of Python's ``sum``)."""
    return "+".join(terms)


def memory_read_time_s(bytes_read: str, caps: Sequence[str], bws: Sequence[str]) -> str:
    """:func:`tco.core.serving.roofline.memory_read_time_s`: bytes placed fastest tier first [s].

    Tier ``i`` (not the last) holds ``MIN(remaining_i, c_i)``; ``remaining_{i+1} =
    MAX(remaining_i - c_i, 0)``, which equals ``remaining_i - MIN(remaining_i, c_i)``.
    """
    remaining = bytes_read
    parts = []
    for i, (cap, bw) in enumerate(zip(caps, bws, strict=True)):
        if i == len(caps) - 1:
            parts.append(f"({remaining})/{bw}")
        else:
            parts.append(f"MIN({remaining},{cap})/{bw}")
            remaining = f"MAX({remaining}-{cap},0)"
    return "+".join(parts)


def annuity_factor(rate: str, years: str) -> str:
    """:func:`tco.core.money.finance.annuity_factor`: ``(1 - (1+r)^-Y) / r``, ``Y`` at ``r = 0``."""
    return f"IF(ABS({rate})<1E-12,{years},(1-(1+{rate})^(-({years})))/{rate})"


def capital_recovery(capex: str, rate: str, life: str, residual_value_fraction: str = "0") -> str:
    """:func:`tco.core.money.finance.capital_recovery_usd_per_year`: ``capex (1 - rv (1+r)^-L) / annuity(r, L)``."""
    return f"({capex})*(1-{residual_value_fraction}*(1+{rate})^(-({life})))/{annuity_factor(rate, life)}"


def discount_factor(rate: str, t: str) -> str:
    """:func:`tco.core.money.finance.discount_factor`: ``(1 + r)^-t``."""
    return f"(1+{rate})^(-({t}))"


def served_efficiency_in_year(year: str, half_life: str, residual_efficiency: str) -> str:
    """:func:`tco.core.money.lifecycle.served_efficiency_in_year`: ``s + (1 - s) eta_r`` with
    ``s = H/ln2 (2^(-(y-1)/H) - 2^(-y/H))`` (calendar years: the design is frozen at ``t = 0``)."""
    start = f"({year}-1)"
    share = f"({half_life}/LN(2)*(2^(-{start}/{half_life})-2^(-({start}+1)/{half_life})))"
    return f"({share}+(1-{share})*{residual_efficiency})"
