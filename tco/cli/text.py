"""Plain-text tables and paragraphs that fit a terminal of :data:`WIDTH` columns.

Cells arrive formatted (3-4 significant figures, units in the row or column title, an em
dash for none: :mod:`tco.foundation.formatting`, :mod:`tco.core.outputs`); this module only lays them
out: long text is wrapped inside its column, and a table with more columns than fit is
split into blocks that repeat the first column.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

#: the width every table and paragraph fits unless ``--wide`` asks for everything
WIDTH = 100
#: a column narrower than this is not worth wrapping into: the table is split instead
MIN_COLUMN = 12
GAP = "  "
#: a cell that is a number (or the em dash for none): never wrapped
_NUMBER = re.compile(r"^(—|[-+]?\$?[\d,]*\.?\d+(e[-+]?\d+)?\s?(%|x|[kMB])?)$")


def paragraph(text: str, width: int = WIDTH) -> str:
    """``text`` wrapped at ``width`` columns (paragraphs kept)."""
    return "\n".join(textwrap.fill(p, width, break_on_hyphens=False) if p else "" for p in text.split("\n"))


def _lines(text: str, width: int) -> list[str]:
    out = []
    for part in str(text).split("\n"):
        out += textwrap.wrap(part, width, break_long_words=True) or [""]
    return out


def _block(header: Sequence[str], rows: Sequence[Sequence[str]], widths: list[int], right: list[bool]) -> list[str]:
    out = []
    for i, row in enumerate([header, *rows]):
        cells = [_lines(c, w) for c, w in zip(row, widths, strict=True)]
        # numbers right-aligned, as a spreadsheet does; a header over a column of numbers too
        flush = [j > 0 and (r if i == 0 else bool(_NUMBER.match(c))) for j, (c, r) in enumerate(zip(row, right, strict=True))]
        for k in range(max(len(c) for c in cells)):
            parts = [(c[k] if k < len(c) else "") for c in cells]
            line = GAP.join(p.rjust(w) if f else p.ljust(w) for p, w, f in zip(parts, widths, flush, strict=True))
            out.append(line.rstrip())
        if i == 0:
            out.append(GAP.join("-" * w for w in widths))
    return out



def table(header: Sequence[str], rows: Sequence[Sequence[str]], width: int | None = WIDTH, first_max: int = 34,
          keep: Sequence[int] = ()) -> str:
    """A table of preformatted cells: the first column left-aligned (labels), the others right-aligned.

    Fits ``width`` columns: wide cells are wrapped (never a number, nor a column listed in
    ``keep``), and when the columns still do not fit they are split into blocks (each repeating
    the first column). ``width=None`` never wraps.
    """
    rows = [[str(c) for c in r] for r in rows]
    header = [str(h) for h in header]
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(header)
    right = [j > 0 and sum(bool(_NUMBER.match(c)) for c in col) * 2 > len(col) for j, col in enumerate(columns)]

    def longest(cells, words=False):
        return max([len(x) for c in cells for x in (c.split() if words else c.split("\n"))] or [0])

    # a header wraps at its words down to its column's cells (or MIN_COLUMN)
    natural = [max(longest(col), min(longest([h]), max(MIN_COLUMN, longest([h], words=True))))
               for h, col in zip(header, columns, strict=True)]
    if width is None or sum(natural) + len(GAP) * (len(natural) - 1) <= width:
        return "\n".join(_block(header, rows, natural, right))
    first = min(natural[0], first_max)
    # the narrowest a column may get: numbers never wrap, text (and headers) wrap down to MIN_COLUMN
    floor = [max([MIN_COLUMN] + [len(c) for c in col if _NUMBER.match(c)]) if j else first
             for j, col in enumerate(columns)]
    floor = [n if j in keep else min(f, n) for j, (f, n) in enumerate(zip(floor, natural, strict=True))]
    blocks: list[list[int]] = [[]]
    for j in range(1, len(natural)):  # greedy: as many columns per block as fit at MIN_COLUMN or more
        trial = blocks[-1] + [j]
        room = width - first - len(GAP) * len(trial)
        if blocks[-1] and sum(floor[k] for k in trial) > room:
            blocks.append([j])
        else:
            blocks[-1] = trial
    out = []
    for cols in blocks:
        room = width - first - len(GAP) * len(cols)
        widths = [natural[j] for j in cols]
        floors = [floor[j] for j in cols]
        while sum(widths) > room:  # shrink the widest column that may shrink, one step at a time
            shrinkable = [k for k in range(len(widths)) if widths[k] > floors[k]]
            if not shrinkable:
                break
            widths[max(shrinkable, key=widths.__getitem__)] -= 1
        sub_header = [header[0], *(header[j] for j in cols)]
        sub_rows = [[r[0], *(r[j] for j in cols)] for r in rows]
        out.append("\n".join(_block(sub_header, sub_rows, [first, *widths], [False, *(right[j] for j in cols)])))
    return "\n\n".join(out)
