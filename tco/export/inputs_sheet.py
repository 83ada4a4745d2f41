"""The Inputs sheet: one row per named parameter, the only place a number is typed in.

Columns: name (dotted, as ``tco params`` prints it), value, unit, low, high, distribution,
source, date, note, the value cell's defined name, and for an edited value the scenario
file's value (the edited cell is orange). The sheet is protected (no password) but for the value
cells, the only cells ``tco import`` reads besides the names (:mod:`tco.export.reader` refuses an
edit of the unit, low, high or distribution columns). Each value cell carries a
workbook-scoped defined name (:mod:`tco.export.names`), input styling and a data
validation built from its field's domain (:mod:`tco.foundation.fields`).
"""

from __future__ import annotations

from collections.abc import Mapping

from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation

from tco.export.cells import BOLD, EDITED_FILL, INPUT_FILL, absolute, put_text, unlock
from tco.foundation.fields import Field
from tco.inputs.parameters import Param

SHEET = "Inputs"
COLUMNS = ("name", "value", "unit", "low", "high", "distribution", "source", "date", "note", "defined name",
           "edited: the scenario file's value")
HEADER_ROW = 3
FIRST_ROW = HEADER_ROW + 1
NAME_COLUMN, VALUE_COLUMN = 1, 2
WIDTHS = (58, 16, 14, 12, 12, 12, 70, 10, 50, 58, 18)


def validation_formula(field: Field, cell: str) -> str:
    """Custom data-validation formula admitting exactly ``field``'s domain."""
    terms = [f"ISNUMBER({cell})"]
    terms.append(f"{cell}>={field.minimum:.17g}")
    terms.append(f"{cell}<={field.maximum:.17g}")
    if field.integer:
        terms.append(f"{cell}=INT({cell})")
    return f"AND({','.join(terms)})"


def write_inputs(wb, ws, params: list[Param], names: dict[str, str], originals: Mapping[str, float] | None = None
                 ) -> dict[str, str]:
    """Fill the Inputs sheet and define one workbook name per parameter; returns name -> cell.

    ``originals`` (the scenario file's values before its ``set:`` edits) marks each edited value: its cell in
    :data:`EDITED_FILL`, the file's value in the last column.
    """
    originals = originals or {}
    edited = sum(1 for p in params if p.name in originals and originals[p.name] != p.value)
    put_text(ws, 1, 1, "Inputs: the only cells to edit (shaded; the sheet is protected, without a password, around them). "
             "Every other sheet computes from these by defined name. `tco import` reads the name and value columns only: "
             "change a unit, range or distribution in the scenario file."
             + (f" {edited} value(s) edited from the scenario file: orange, the file's value in the last column."
                if edited else ""), bold=True)
    for i, (title, width) in enumerate(zip(COLUMNS, WIDTHS, strict=True), start=1):
        put_text(ws, HEADER_ROW, i, title, bold=True)
        ws.column_dimensions[get_column_letter(i)].width = width
    ws.freeze_panes = ws.cell(row=FIRST_ROW, column=VALUE_COLUMN)
    cells = {}
    for row, param in enumerate(params, start=FIRST_ROW):
        put_text(ws, row, NAME_COLUMN, param.name).font = BOLD
        value = ws.cell(row=row, column=VALUE_COLUMN, value=param.value)
        value.fill = INPUT_FILL
        unlock(value)
        value.number_format = "General"
        put_text(ws, row, 3, param.unit)
        ws.cell(row=row, column=4, value=param.low)
        ws.cell(row=row, column=5, value=param.high)
        for column, text in zip(range(6, 11), (param.distribution, param.source, param.date, param.note, names[param.name]),
                                strict=True):
            put_text(ws, row, column, text)
        if param.name in originals and originals[param.name] != param.value:
            value.fill = EDITED_FILL
            value.font = BOLD
            ws.cell(row=row, column=11, value=originals[param.name])
        coordinate = value.coordinate
        field = param.field
        rule = DataValidation(type="custom", formula1=validation_formula(field, coordinate), allow_blank=False,
                              showErrorMessage=True, errorTitle=param.name[:32], error=f"{param.name} {field.rule()}"[:255])
        ws.add_data_validation(rule)
        rule.add(coordinate)
        ref = absolute(ws, row, VALUE_COLUMN)
        wb.defined_names[names[param.name]] = DefinedName(names[param.name], attr_text=ref)
        cells[param.name] = ref
    return cells
