"""Read a workbook's Inputs back into a scenario (``tco import``), trusting nothing else in it.

The hidden Scenario sheet holds the scenario file the workbook was written from; the
Inputs sheet holds the values finance edited. Every value that differs from the
scenario's goes into the scenario's ``set`` mapping, read and checked by the same rules as
any other edit (:func:`tco.inputs.parameters.checked_edits`), so the result validates exactly like a
hand-written scenario file with ``set:`` overrides. A bad cell is reported by sheet, cell
and parameter name.

Before openpyxl parses anything, the file is checked as a zip package
(:func:`check_package`): its size, its parts' declared uncompressed sizes (a zip bomb is
refused without inflating it), and no macro, external-link, data-connection, embedded-object
or DTD/entity part. Then only literal cells are read: a formula in an Inputs or Scenario
cell (``=WEBSERVICE(...)``, ``=HYPERLINK(...)``, DDE ``=cmd|'/C calc'!A0``) is refused, never
its cached value; a sheet tco does not write is refused; rows beyond the scenario's
parameters are refused before they are parsed.

Only the names and values of Inputs are read; an edit of the unit, low, high or distribution
columns (which the protected sheet locks) is refused, as is a hidden Scenario sheet whose text
no longer matches the digest ``tco export`` stored with it (an edit there, ``policy: chunked`` to
``prefill_first``, would change the result without showing on Inputs).
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from tco.export.inputs_sheet import FIRST_ROW, NAME_COLUMN, SHEET
from tco.export.workbook import SCENARIO_DIGEST, SCENARIO_SHEET, SHEETS, scenario_digest
from tco.foundation.errors import FieldError, InputError
from tco.inputs.loading import scenario_from_dict
from tco.inputs.parameters import checked_edits, unknown_name_rule
from tco.inputs.scenario import Scenario
from tco.inputs.yaml_files import MAX_YAML_BYTES, parse_yaml

#: largest workbook file read [B] (the default scenario's is ~60 kB)
MAX_XLSX_BYTES = 20_000_000
#: largest total of the parts' uncompressed sizes [B] (the default scenario's is ~0.5 MB)
MAX_UNCOMPRESSED_BYTES = 50_000_000
#: most parts in the package (tco writes ~20; Excel and LibreOffice add a few)
MAX_PARTS = 500
#: rows below the last parameter row that may hold anything (notes a user typed, say)
EXTRA_ROWS = 100

#: parts that can run code, fetch data or link elsewhere: refused, with the reason
REFUSED_PARTS = (
    (re.compile(r"vbaproject|vbadata|/macrosheets/|/dialogsheets/"), "holds macros"),
    (re.compile(r"/externallinks/"), "links to other workbooks (external links, DDE)"),
    (re.compile(r"/connections\.xml$|/querytables/"), "holds data connections (queries that fetch data)"),
    (re.compile(r"/activex/|/embeddings/|/ctrlprops/|^customui/|/customui/"), "embeds objects or controls"),
)
_DTD = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_WORKSHEET = re.compile(r"^/xl/worksheets/[^/]+\.xml$")
_DIMENSION = re.compile(rb"<(?:\w+:)?dimension\b")
_SHEET_DATA = re.compile(rb"<(?:\w+:)?sheetData\b")
#: most rows of the hidden Scenario sheet (one YAML line each; the default scenario has ~110)
MAX_SCENARIO_ROWS = 20_000


def check_package(path: Path) -> None:
    """Refuse a workbook whose zip package is too large, could inflate beyond
    :data:`MAX_UNCOMPRESSED_BYTES`, or holds a part listed in :data:`REFUSED_PARTS` or an XML
    document type declaration (entity tricks); nothing is inflated beyond those bounds."""
    where = str(path)
    if path.stat().st_size > MAX_XLSX_BYTES:
        raise InputError.one("WORKBOOK", where, f"is larger than {MAX_XLSX_BYTES:,} bytes, more than a tco workbook holds")
    try:
        package = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError):
        raise InputError.one("WORKBOOK", where, "is not an .xlsx workbook (not a zip package)") from None
    with package:
        parts = package.infolist()
        names = [p.filename for p in parts]
        if len(parts) > MAX_PARTS or len(set(names)) != len(names):
            raise InputError.one("WORKBOOK", where, f"has {len(parts):,} parts (or repeated ones): not a tco workbook")
        total = sum(p.file_size for p in parts)
        if total > MAX_UNCOMPRESSED_BYTES:
            raise InputError.one("WORKBOOK", where, f"would inflate to {total:,} bytes (a zip bomb?); a tco workbook is "
                                                    f"under {MAX_UNCOMPRESSED_BYTES:,}")
        for part in parts:
            name = "/" + part.filename.lower()
            for pattern, reason in REFUSED_PARTS:
                if pattern.search(name):
                    raise InputError.one("WORKBOOK", where, f"{reason} (part {part.filename}); tco reads plain workbooks only")
            if name.endswith((".xml", ".rels", ".vml")) and _declares_dtd(package, part):
                raise InputError.one("WORKBOOK", where, f"declares an XML document type or entities (part {part.filename}); "
                                                        "refused (entity expansion)")
            if _WORKSHEET.search(name) and not _has_dimension(package, part):
                raise InputError.one("WORKBOOK", where, f"has a sheet without a dimension record (part {part.filename}), "
                                                        "which Excel, LibreOffice and tco always write; refused (its rows "
                                                        "would have to be parsed to be counted)")
        if b"macroenabled" in package.read("[Content_Types].xml").lower() if "[Content_Types].xml" in names else False:
            raise InputError.one("WORKBOOK", where, "is a macro-enabled workbook; tco reads plain workbooks only")


def _declares_dtd(package: zipfile.ZipFile, part: zipfile.ZipInfo) -> bool:
    """Whether an XML part contains ``<!DOCTYPE`` or ``<!ENTITY`` (read in 1 MB blocks, overlapping)."""
    tail = b""
    with package.open(part) as handle:
        while block := handle.read(1 << 20):
            if _DTD.search(tail + block):
                return True
            tail = block[-16:]
    return False


def _has_dimension(package: zipfile.ZipFile, part: zipfile.ZipInfo) -> bool:
    """Whether a worksheet declares its dimension before its rows (in its first 256 kB), so that
    openpyxl learns the row count without parsing every row."""
    with package.open(part) as handle:
        head = handle.read(1 << 18)
    dimension, data = _DIMENSION.search(head), _SHEET_DATA.search(head)
    return dimension is not None and (data is None or dimension.start() < data.start())


def _literal(cell, where: str, errors: list[FieldError]):
    """The cell's value, or None with an error when it holds a formula (its cached value is never read)."""
    if cell.data_type == "f" or (isinstance(cell.value, str) and cell.value.startswith("=")):
        errors.append(FieldError(where, cell.value, "is a formula; only literal values are read from a workbook"))
        return None
    return cell.value


#: the Inputs columns the import compares with the scenario (locked on the protected sheet): column -> (label, attribute)
CHECKED_COLUMNS = {3: ("unit", "unit"), 4: ("low", "low"), 5: ("high", "high"), 6: ("distribution", "distribution")}


def _unchanged(cell_value, expected) -> bool:
    if isinstance(expected, str):
        return ("" if cell_value is None else cell_value) == expected
    return isinstance(cell_value, (int, float)) and not isinstance(cell_value, bool) and float(cell_value) == float(expected)


def _check_digest(wb, text: str, path: Path) -> None:
    """Refuse a hidden Scenario sheet whose text is not what ``tco export`` wrote (:data:`SCENARIO_DIGEST`)."""
    stored = next((p.value for p in getattr(wb, "custom_doc_props", None) or [] if p.name == SCENARIO_DIGEST), None)
    where = f"{path}:{SCENARIO_SHEET}"
    if stored is None:
        raise InputError.one(where, None, "carries no digest of the hidden Scenario sheet (the workbook was written by an "
                                          "older tco, or a program dropped its document properties), so an edit there "
                                          "cannot be told apart: export the scenario again")
    if stored != scenario_digest(text.split("\n")):
        raise InputError.one(where, None, "the hidden Scenario sheet was edited since `tco export` wrote it (its text no "
                                          "longer matches the digest stored with it); an edit there would change the result "
                                          "without showing on Inputs: edit the scenario file and export again, or edit the "
                                          "values on Inputs")


def _scenario_text(ws, path: Path) -> str:
    """The YAML held by the hidden Scenario sheet, one line per row of column A (bounded, literal text only)."""
    if (ws.max_row or 0) > MAX_SCENARIO_ROWS:
        raise InputError.one(f"{path}:{SCENARIO_SHEET}", f"{ws.max_row:,} rows",
                             f"has more than {MAX_SCENARIO_ROWS:,} rows of scenario text (was the hidden sheet edited?)")
    lines, size, errors = [], 0, []
    for row, (cell,) in enumerate(ws.iter_rows(min_col=1, max_col=1, max_row=MAX_SCENARIO_ROWS), start=1):
        value = _literal(cell, f"{SCENARIO_SHEET}!A{row}", errors)
        line = "" if value is None else str(value)
        size += len(line) + 1
        if size > MAX_YAML_BYTES:
            raise InputError.one(f"{path}:{SCENARIO_SHEET}", f"{row:,} rows", f"holds more than {MAX_YAML_BYTES:,} bytes of "
                                                                              "scenario text (was the hidden sheet edited?)")
        lines.append(line)
    if errors:
        raise InputError(errors)
    return "\n".join(lines)


def read_workbook(path: str | Path) -> tuple[dict, dict[str, float]]:
    """``(scenario data, edits)``: the stored scenario file and the Inputs that differ from it."""
    path = Path(path)
    if not path.is_file():
        raise InputError.one("WORKBOOK", str(path), "is not a file")
    check_package(path)
    from openpyxl import load_workbook  # after the package checks: openpyxl inflates what it reads

    try:
        wb = load_workbook(path, read_only=True, data_only=False, keep_links=False)
    except Exception as exc:  # openpyxl raises many types for a damaged workbook
        raise InputError.one("WORKBOOK", str(path), f"is not a readable .xlsx workbook ({type(exc).__name__})") from None
    try:
        return _read_sheets(wb, path)
    except InputError:
        raise
    except Exception as exc:  # XML errors surface while the read-only sheets stream
        raise InputError.one("WORKBOOK", str(path), f"is not a readable .xlsx workbook ({type(exc).__name__})") from None
    finally:
        wb.close()


def _read_sheets(wb, path: Path) -> tuple[dict, dict[str, float]]:
    unexpected = [name for name in wb.sheetnames if name not in SHEETS]
    if unexpected:
        raise InputError.one("WORKBOOK", str(path), f"has sheets tco does not write ({', '.join(unexpected[:5])}); "
                                                    "copy the Inputs values into a fresh `tco export` instead")
    for sheet in (SHEET, SCENARIO_SHEET):
        if sheet not in wb.sheetnames:
            raise InputError.one("WORKBOOK", str(path), f"has no {sheet!r} sheet; was it written by `tco export`?")
    text = _scenario_text(wb[SCENARIO_SHEET], path)
    data = parse_yaml(text, f"{path}:{SCENARIO_SHEET}")
    _check_digest(wb, text, path)
    base = scenario_from_dict(data, path=f"{path}:{SCENARIO_SHEET}")
    known = base.params.values()
    last_row = FIRST_ROW + len(known) + EXTRA_ROWS
    ws = wb[SHEET]
    if (ws.max_row or 0) > last_row:
        raise InputError.one(f"{SHEET}", f"{ws.max_row:,} rows", f"has more rows than the scenario's {len(known)} "
                                                                f"parameters (at most {last_row:,})")
    raw, cells, errors = {}, {}, []
    rows = ws.iter_rows(min_row=FIRST_ROW, max_row=last_row, min_col=NAME_COLUMN, max_col=max(CHECKED_COLUMNS))
    for row, pair in enumerate(rows, start=FIRST_ROW):
        name = _literal(pair[0], f"{SHEET}!A{row}", errors)
        value = _literal(pair[1], f"{SHEET}!B{row}", errors) if len(pair) > 1 else None
        if name is None:
            continue
        where = f"{SHEET}!B{row} ({str(name)[:100]})"
        if not isinstance(name, str) or name not in known:
            errors.append(FieldError(where, name, unknown_name_rule(str(name)[:100], known)))
        elif name in raw:
            errors.append(FieldError(where, name, f"is listed twice (first at {cells[name]})"))
        else:
            raw[name], cells[name] = value, where
            errors += _changed_columns(pair, row, base.params[name])
    accepted, broken, _warnings = checked_edits(base.params, raw)
    errors += [FieldError(cells.get(e.path, e.path), e.value, e.rule) for e in broken]
    if errors:
        raise InputError(errors)
    return data, {name: value for name, value in accepted.items() if value != known[name]}


def _changed_columns(cells, row: int, param) -> list[FieldError]:
    """An edit of a column the import does not read (unit, low, high, distribution): refused, never ignored."""
    errors = []
    for column, (label, attr) in CHECKED_COLUMNS.items():
        cell = cells[column - 1] if len(cells) >= column else None
        value = None if cell is None else cell.value
        expected = getattr(param, attr)
        if (cell is not None and cell.data_type == "f") or not _unchanged(value, expected):
            errors.append(FieldError(f"{SHEET}!{'ABCDEF'[column - 1]}{row} ({param.name})", value,
                                     f"the {label} was {expected!r} when tco exported it; tco import reads the value column "
                                     f"only: change a {label} in the scenario file and export again"))
    return errors


def import_workbook(path: str | Path) -> tuple[Scenario, dict]:
    """The scenario a workbook's Inputs describe, and its file data (edits under ``set``)."""
    data, edits = read_workbook(path)
    data = {**data, "set": {**data.get("set", {}), **edits}}
    if not data["set"]:
        del data["set"]
    return scenario_from_dict(data, path=str(path)), data
