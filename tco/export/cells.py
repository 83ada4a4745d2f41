"""Cell-writing helpers shared by the sheets: safe text, styles, a row-by-row quantity writer."""

from __future__ import annotations

from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Alignment, Font, PatternFill, Protection
from openpyxl.utils import get_column_letter, quote_sheetname
from openpyxl.worksheet.properties import PageSetupProperties

INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")
SNAPSHOT_FILL = PatternFill("solid", fgColor="EDEDED")
#: an input edited away from the scenario file's value (the app's and the CLI's --set edits)
EDITED_FILL = PatternFill("solid", fgColor="F4B183")
HEADING_FONT = Font(bold=True, size=12)
BOLD = Font(bold=True)

#: number formats by unit (anything else: general): currency, percentages, thousands separators for counts
FORMATS = {"USD": '"$"#,##0', "USD/yr": '"$"#,##0', "USD/device": '"$"#,##0', "USD/unit": '"$"#,##0',
           "fraction": "0.00%", "1/yr": "0.0%", "USD per million output tokens": '"$"#,##0.0000',
           "USD per million input+output tokens": '"$"#,##0.0000', "devices": "#,##0", "units": "#,##0",
           "output tokens": "#,##0", "output tokens/yr": "#,##0", "year": "0",
           "USD per million training tokens": '"$"#,##0.0000', "days": "#,##0.0", "ratio": "0.000", "W": "#,##0"}


def finish_sheet(ws, header_rows: int, label_columns: int = 1) -> None:
    """What a finance reviewer expects of a printed sheet: the header rows and label columns frozen, the used range as
    the print area, the header rows repeated on each printed page, landscape and one page wide.

    Parameters
    ----------
    ws : openpyxl.worksheet.worksheet.Worksheet
        The filled sheet.
    header_rows : int [-]
        Rows at the top that name the columns (0: none frozen).
    label_columns : int [-]
        Columns at the left that name the rows.
    """
    ws.freeze_panes = ws.cell(row=header_rows + 1, column=label_columns + 1)
    ws.print_area = ws.dimensions
    if header_rows:
        ws.print_title_rows = f"1:{header_rows}"
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth, ws.page_setup.fitToHeight = 1, 0
    ws.sheet_properties.pageSetUpPr = PageSetupProperties(fitToPage=True)


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


def put_formula(ws, row: int, column: int, formula: str, unit: str = "", number_format: str | None = None):
    """Write a live formula (``formula`` without the leading ``=``); references to the sheet's own cells lose their
    sheet name (``'Model'!$B$7`` -> ``$B$7``: the same cell, a shorter formula to store and parse). Its number format is
    the unit's (:data:`FORMATS`) unless ``number_format`` is given."""
    cell = ws.cell(row=row, column=column, value="=" + formula.replace(f"{quote_sheetname(ws.title)}!", ""))
    cell.number_format = number_format or FORMATS.get(unit, "General")
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
