"""The one reader of a number a user gives: files, ``set:``, ``--set``, the app, the workbook, the API.

:func:`read_number` takes what arrived (a YAML number, a table cell's text, a query-string
value, a workbook cell) and returns a float, or raises :class:`~tco.foundation.errors.InputError`
naming the field path, the value and the rule. It reads numbers the way finance types them
where that is unambiguous, and refuses everything else:

=====================  ============================  =======================================
accepted               value                          refused, and why
=====================  ============================  =======================================
``0.09``, ``9e-2``     0.09                           ``true``/``false``: a boolean is not a number
``9%``                 0.09 (fractions, rates only)   ``9%`` for a price: percent of what?
``2,000``, ``2,000.5`` 2000, 2000.5                   ``2,5``, ``1.234,5``: decimal comma or thousands?
``20k``, ``1.5M``      2e4, 1.5e6                     ``2m``, ``3B``: milli or million, bytes or billion?
``2bn``, ``2G``, ``1T`` 2e9, 2e9, 1e12                ``2_56``, ``２５６``, ``0x10``: Python-only literals
``$27,500``            27500 (USD fields only)        ``nan``, ``inf``, ``1e999``: not finite
=====================  ============================  =======================================

Integers beyond what a float holds are refused, never converted to ``inf``.
"""

from __future__ import annotations

import math
import numbers
import re

import numpy as np

from tco.foundation.errors import InputError
from tco.foundation.fields import Field

#: longest text read as a number
MAX_NUMBER_CHARS = 64

_NUMBER = re.compile(r"""
    (?P<sign>[+-]?)
    (?P<currency>\$?)
    (?P<whole>[0-9]{1,3}(?:,[0-9]{3})+|[0-9]*)
    (?:\.(?P<fraction>[0-9]*))?
    (?:[eE](?P<exponent>[+-]?[0-9]{1,4}))?
    [ ]?(?P<suffix>%|k|K|M|bn|G|T)?
""", re.VERBOSE | re.ASCII)

_DECIMAL_COMMA = re.compile(r"[+-]?\$?(?:[0-9]+,[0-9]{1,2}|[0-9]{1,3}(?:\.[0-9]{3})+(?:,[0-9]+)?) ?(?:%|k|K|M|bn|G|T)?",
                            re.ASCII)
_SUFFIX_EXPONENT = {"%": -2, "k": 3, "K": 3, "M": 6, "bn": 9, "G": 9, "T": 12}
#: field units a percent applies to
PERCENT_UNITS = ("fraction", "1/yr")

FORMS = "write it like 2500, 2,500.5, 2.5e3, 2.5k, 1.5M, 2bn (or 9% for a rate)"


def _from_text(text: str, field: Field | None) -> float:
    """The float a finance-style text means; :class:`ValueError` with the rule otherwise."""
    text = text.strip(" \t")
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueError(f"is not a number: longer than {MAX_NUMBER_CHARS} characters")
    match = _NUMBER.fullmatch(text)
    if match is None and _DECIMAL_COMMA.fullmatch(text):
        raise ValueError("is ambiguous: a decimal comma or a thousands separator? write 2.5 for two and a half, "
                         "2,500 or 2500 for two thousand five hundred")
    if match is None or not (match["whole"] or match["fraction"]):
        raise ValueError(f"is not a number tco reads: {FORMS}")
    suffix = match["suffix"]
    if suffix and match["exponent"]:
        raise ValueError("is ambiguous: give an exponent or a suffix, not both")
    if suffix == "%" and (field is None or field.unit not in PERCENT_UNITS):
        unit = f"in {field.unit}" if field is not None else "here"
        raise ValueError(f"is a percent, accepted for fractions and rates only; this field is {unit}: write the number")
    if match["currency"] and field is not None and "USD" not in field.unit:
        raise ValueError(f"is a dollar amount, but this field is in {field.unit}")
    exponent = int(match["exponent"] or 0) + _SUFFIX_EXPONENT.get(suffix, 0)
    digits = f"{match['whole'].replace(',', '') or '0'}.{match['fraction'] or '0'}"
    value = float(f"{match['sign']}{digits}e{exponent}")
    if not math.isfinite(value):
        raise ValueError("is too large: not a finite number")
    return value


def read_number(raw: object, field: Field | None, path: str, check_domain: bool = True) -> float:
    """The float ``raw`` stands for, checked against ``field``'s domain.

    ``field`` (the unit and domain of the value, :mod:`tco.foundation.fields`) decides whether a percent
    or a dollar sign applies; None reads a plain number. Raises :class:`InputError` at
    ``path`` with the rule ``raw`` broke.
    """
    rule = field.rule() if field is not None else "must be a finite number"
    if isinstance(raw, (bool, np.bool_)):
        raise InputError.one(path, raw, f"is a boolean, not a number; {rule}")
    if isinstance(raw, numbers.Integral):
        if abs(int(raw)).bit_length() > 1000:
            raise InputError.one(path, raw, f"is too large; {rule}")
        value = float(raw)
    elif isinstance(raw, numbers.Real):
        value = float(raw)
        if not math.isfinite(value):
            raise InputError.one(path, raw, rule)
    elif isinstance(raw, str):
        try:
            value = _from_text(raw, field)
        except ValueError as exc:
            raise InputError.one(path, raw, f"{exc}; {rule}") from None
    else:
        raise InputError.one(path, raw, f"is not a number; {rule}")
    if check_domain and field is not None and not field.admits(value):
        raise InputError.one(path, raw, rule)
    return value
