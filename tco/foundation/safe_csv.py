"""CSV that a spreadsheet cannot run: a cell that would start a formula is quoted as text."""

from __future__ import annotations

#: a text cell starting with one of these is a formula (or DDE) to a spreadsheet (OWASP, "CSV Injection")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value):
    """A cell a spreadsheet shows as text: text starting with ``= + - @``, tab or CR gets a leading ``'``.

    Numbers stay numbers (``-1.5`` is a number to every spreadsheet, not a formula).
    OWASP, "CSV Injection" (owasp.org/www-community/attacks/CSV_Injection).
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_safe(frame, index: bool = True):
    """A copy of a pandas DataFrame, its index as leading columns when ``index``, whose text
    cells and column names pass :func:`csv_cell`."""
    if index:
        frame = frame.rename_axis([name if name is not None else "" for name in frame.index.names]).reset_index()
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    out = frame.copy()
    for column in out.columns:
        if not (is_numeric_dtype(out[column].dtype) or is_bool_dtype(out[column].dtype)):
            out[column] = out[column].map(csv_cell).astype(object)
    out.columns = [csv_cell(c) if isinstance(c, str) else c for c in out.columns]
    return out


def to_csv(frame, target, index: bool = True) -> None:
    """Write ``frame`` as CSV to a path or an open text stream, escaped by :func:`csv_safe`."""
    csv_safe(frame, index).to_csv(target, index=False)
