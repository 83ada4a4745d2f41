"""Cell-writing helpers shared by the sheets: safe text, styles, a row-by-row quantity writer."""

from __future__ import annotations

from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Alignment, Font, PatternFill, Protection
from openpyxl.utils import get_column_letter, quote_sheetname

INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")
SNAPSHOT_FILL = PatternFill("solid", fgColor="EDEDED")
#: an input edited away from the scenario file's value (the app's and the CLI's --set edits)
EDITED_FILL = PatternFill("solid", fgColor="F4B183")
HEADING_FONT = Font(bold=True, size=12)
BOLD = Font(bold=True)

#: number formats by unit (anything else: general with thousands separators)
FORMATS = {"USD": '"$"#,##0', "USD/yr": '"$"#,##0', "USD/device": '"$"#,##0', "fraction": "0.00%"}


def put_text(ws, row: int, column: int, text: object, bold: bool = False):
    """Write ``text`` as a literal string, never as a formula (``=HYPERLINK(..)`` stays text); control
    characters a worksheet cannot hold (a NUL in a scenario name) become U+FFFD."""
    cell = ws.cell(row=row, column=column)
    cell.value = "" if text is None else ILLEGAL_CHARACTERS_RE.sub("\ufffd", str(text))
    cell.data_type = "s"
    cell.quotePrefix = cell.value[:1] in ("=", "+", "-", "@")
    if bold:
        cell.font = BOLD
    return cell


def put_formula(ws, row: int, column: int, formula: str, unit: str = ""):
    """Write a live formula (``formula`` without the leading ``=``); references to the sheet's own cells lose their
    sheet name (``'Model'!$B$7`` -> ``$B$7``: the same cell, a shorter formula to store and parse)."""
    cell = ws.cell(row=row, column=column, value="=" + formula.replace(f"{quote_sheetname(ws.title)}!", ""))
    cell.number_format = FORMATS.get(unit, "General")
    return cell


def absolute(ws, row: int, column: int) -> str:
    """``'Sheet name'!$C$12``: an absolute reference usable from any sheet."""
    return f"{quote_sheetname(ws.title)}!${get_column_letter(column)}${row}"


def lock_formulas(ws) -> None:
    """Protect a sheet (no password: the point is to prevent accidental typing); its unlocked cells stay editable."""
    ws.protection.sheet = True


def unlock(cell) -> None:
    cell.protection = Protection(locked=False)


class QuantitySheet:
    """Writes one quantity per row: label (A), formula (B), unit (C), model key (D).

    ``quantity`` returns the absolute reference of the value cell, for later formulas.
    """

    VALUE_COLUMN = 2

    def __init__(self, ws, widths=(58, 22, 16, 44)):
        self.ws = ws
        self.row = 1
        for i, width in enumerate(widths, start=1):
            ws.column_dimensions[get_column_letter(i)].width = width

    def heading(self, text: str, level: int = 1) -> None:
        if level == 1 and self.row > 1:
            self.row += 1
        cell = put_text(self.ws, self.row, 1, text)
        cell.font = HEADING_FONT if level == 1 else BOLD
        self.row += 1

    def note(self, text: str) -> None:
        put_text(self.ws, self.row, 1, text).alignment = Alignment(wrap_text=False)
        self.row += 1

    def quantity(self, label: str, formula: str, unit: str = "", key: str = "") -> str:
        put_text(self.ws, self.row, 1, label)
        put_formula(self.ws, self.row, self.VALUE_COLUMN, formula, unit)
        put_text(self.ws, self.row, 3, unit)
        if key:
            put_text(self.ws, self.row, 4, key)
        ref = absolute(self.ws, self.row, self.VALUE_COLUMN)
        self.row += 1
        return ref
