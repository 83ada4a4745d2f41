"""Excel defined names for dotted parameter names, and back.

A parameter's dotted name (``devices.groq-lpu.price_usd``, as ``tco params`` prints it)
becomes a workbook-scoped defined name that Excel and LibreOffice accept:

* letters, digits, ``_`` and ``.`` are kept (dots are legal inside Excel names);
* ``+`` becomes ``_plus_``, and every other character (``-``, spaces, ...) becomes ``_``;
* a name that would start with a digit, or whose first segment reads as a cell reference
  (``h100``, ``R1C1``, ``C``), gets the prefix ``p_``;
* if two parameters of one scenario would map to the same name, the later ones get a
  suffix ``_2``, ``_3``, ... (the mapping is made injective per workbook).

The mapping is reversible through the Inputs sheet, which lists every parameter's dotted
name beside its defined name; ``tco import`` reads the dotted names from there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_A1 = re.compile(r"^\$?[A-Za-z]{1,3}\$?\d+$")
_R1C1 = re.compile(r"^([Rr]\d*)?([Cc]\d*)?$")
MAX_NAME_LENGTH = 255


def looks_like_cell_reference(text: str) -> bool:
    """Whether Excel could read ``text`` as an A1 or R1C1 reference (``h100``, ``R2C3``, ``C``)."""
    return bool(_A1.match(text) or (text and _R1C1.match(text)))


def excel_name(dotted: str) -> str:
    """The defined name of one dotted parameter name (before de-duplication)."""
    name = re.sub(r"[^A-Za-z0-9_.]", "_", dotted.replace("+", "_plus_"))
    if not name or not (name[0].isalpha() or name[0] == "_") or looks_like_cell_reference(name.split(".")[0]):
        name = "p_" + name
    return name[:MAX_NAME_LENGTH]


def excel_names(dotted_names: Iterable[str]) -> dict[str, str]:
    """Injective mapping ``dotted name -> defined name`` for every parameter of a workbook."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for dotted in dotted_names:
        base = excel_name(dotted)
        name, i = base, 1
        while name.lower() in taken:  # Excel names are case-insensitive
            i += 1
            name = f"{base[:MAX_NAME_LENGTH - 4]}_{i}"
        taken.add(name.lower())
        out[dotted] = name
    return out
