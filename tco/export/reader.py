"""Read a workbook's Inputs back into a scenario (``tco import``).

The hidden Scenario sheet holds the scenario file the workbook was written from; the
Inputs sheet holds the values finance edited. Every value that differs from the
scenario's goes into the scenario's ``set`` mapping, so the result validates exactly like
a hand-written scenario file with ``set:`` overrides. A bad cell is reported by sheet,
cell and parameter name.
"""

from __future__ import annotations

import math
from pathlib import Path

import yaml
from openpyxl import load_workbook

from ..errors import FieldError, InputError
from ..params import unknown_name_rule
from ..scenario import Scenario, scenario_from_dict
from .inputs_sheet import FIRST_ROW, NAME_COLUMN, SHEET, VALUE_COLUMN
from .workbook import SCENARIO_SHEET


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def read_workbook(path: str | Path) -> tuple[dict, dict[str, float]]:
    """``(scenario data, edits)``: the stored scenario file and the Inputs that differ from it."""
    path = Path(path)
    if not path.is_file():
        raise InputError.one("WORKBOOK", str(path), "is not a file")
    try:
        wb = load_workbook(path, data_only=True, read_only=True)
    except Exception as exc:  # openpyxl raises several types for a non-workbook
        raise InputError.one("WORKBOOK", str(path), f"is not a readable .xlsx workbook ({type(exc).__name__})") from None
    for sheet in (SHEET, SCENARIO_SHEET):
        if sheet not in wb.sheetnames:
            raise InputError.one("WORKBOOK", str(path), f"has no {sheet!r} sheet; was it written by `tco export`?")
    lines = [row[0] or "" for row in wb[SCENARIO_SHEET].iter_rows(min_col=1, max_col=1, values_only=True)]
    try:
        data = yaml.safe_load("\n".join(lines))
    except yaml.YAMLError as exc:
        raise InputError.one(f"{path}:{SCENARIO_SHEET}", None,
                             f"is not valid YAML (was the hidden sheet edited?): {getattr(exc, 'problem', exc)}") from None
    base = scenario_from_dict(data, path=f"{path}:{SCENARIO_SHEET}")
    known = base.params.values()
    edits, errors = {}, []
    rows = wb[SHEET].iter_rows(min_row=FIRST_ROW, min_col=NAME_COLUMN, max_col=VALUE_COLUMN, values_only=True)
    for row, (name, raw) in enumerate(rows, start=FIRST_ROW):
        if name is None:
            continue
        where = f"{SHEET}!B{row} ({name})"
        value = _number(raw)
        if name not in known:
            errors.append(FieldError(where, name, unknown_name_rule(name, known)))
        elif value is None:
            errors.append(FieldError(where, raw, "must be a number"))
        elif not base.params[name].field.admits(value):
            errors.append(FieldError(where, raw, base.params[name].field.rule()))
        elif value != known[name]:
            edits[name] = value
    wb.close()
    if errors:
        raise InputError(errors)
    return data, edits


def import_workbook(path: str | Path) -> tuple[Scenario, dict]:
    """The scenario a workbook's Inputs describe, and its file data (edits under ``set``)."""
    data, edits = read_workbook(path)
    data = {**data, "set": {**data.get("set", {}), **edits}}
    if not data["set"]:
        del data["set"]
    return scenario_from_dict(data, path=str(path)), data
