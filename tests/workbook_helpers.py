"""Helpers for the workbook tests: LibreOffice headless recalculation, reading results back, the functions a formula calls."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from xml.etree import ElementTree

from openpyxl.formula import Tokenizer
from openpyxl.utils import get_column_letter

from tco.export.check_sheet import FIRST_ROW

#: LibreOffice profile setting: always recalculate OOXML and ODF files on load (practices.md, Part 3)
RECALC_ALWAYS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
 <prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load">
 <prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""

ERROR_VALUES = ("#NAME?", "#REF!", "#VALUE!", "#DIV/0!", "#NUM!", "#N/A", "Err:")


def soffice() -> str:
    """The LibreOffice binary; the test setup installs it (scripts/install-system-deps.sh), so absence fails."""
    path = shutil.which("soffice") or shutil.which("libreoffice")
    assert path, "LibreOffice (soffice) is required: run scripts/install-system-deps.sh"
    return path


#: LibreOffice's CSV export of every sheet (one file each, ``<stem>-<sheet>.csv``), the tokens of its filter options:
#: comma-separated, double-quoted text, UTF-8 (76), from row 1, standard columns, language 0, text cells quoted only
#: where needed, (an import option), the cells' values rather than "as shown" (``false``: full precision, 15
#: significant digits, like the xlsx export; a percent format keeps its ``%``), values not formulas, spaces kept,
#: every sheet (-1, LibreOffice 7.2 and later)
CSV_EVERY_SHEET = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false,false,-1"


@dataclass(frozen=True)
class Recalculated:
    """A workbook recalculated by LibreOffice: the value of every cell of every sheet, one CSV file per sheet.

    CSV rather than a recalculated xlsx read back with openpyxl: LibreOffice writes it in half the time (23 workbooks:
    34 s of CPU against 69 s, measured 2026-12-06) and reading it takes milliseconds where openpyxl took 2-3 s a
    workbook; the values are the same to the 15 digits LibreOffice writes (every Check row of the 23 workbooks of
    tests/test_workbook.py compared once both ways, to 1e-13). A cell's type is not kept: :func:`recalculate_to_xlsx`
    where a test needs it."""

    source: Path
    folder: Path

    @property
    def sheets(self) -> list[str]:
        """The sheet names of the source workbook, in order (its ``xl/workbook.xml``)."""
        with zipfile.ZipFile(self.source) as book:
            root = ElementTree.fromstring(book.read("xl/workbook.xml"))
        return [sheet.get("name") for sheet in root.iter("{http://schemas.openxmlformats.org/spreadsheetml/2006/main}sheet")]

    def rows(self, sheet: str) -> list[list[str]]:
        """The sheet's rows as LibreOffice wrote them (text, an empty string for an empty cell)."""
        with (self.folder / f"{self.source.stem}-{sheet}.csv").open(newline="", encoding="utf-8") as f:
            return list(csv.reader(f))


def _convert(paths: list[Path], workdir: Path, target: str) -> Path:
    """Recalculate every workbook of ``paths`` (distinct file names) with LibreOffice headless in one run and a
    private profile, writing ``target`` (a ``--convert-to`` argument) to the returned folder. One run instead of one
    per file: its start-up is most of the cost of a small workbook (5 workbooks: 6.7 s in one run, 25 s in five,
    measured here under load)."""
    profile = workdir / "lo_profile"
    (profile / "user").mkdir(parents=True, exist_ok=True)
    (profile / "user" / "registrymodifications.xcu").write_text(RECALC_ALWAYS)
    out = workdir / f"recalculated-{target.split(':')[0]}"
    out.mkdir(exist_ok=True)
    assert len({p.stem for p in paths}) == len(paths), "workbooks recalculated together need distinct names"
    subprocess.run([soffice(), "--headless", "--norestore", f"-env:UserInstallation={profile.as_uri()}",
                    "--convert-to", target, "--outdir", str(out), *map(str, paths)], check=True, capture_output=True,
                   timeout=120 + 60 * len(paths))
    return out


def recalculate_all(paths: list[Path], workdir: Path) -> list[Recalculated]:
    """Every workbook of ``paths`` recalculated (:func:`_convert`), its cells' values as CSV, in order."""
    out = _convert(paths, workdir, CSV_EVERY_SHEET)
    converted = [Recalculated(Path(p), out) for p in paths]
    for c in converted:
        for sheet in c.sheets:
            assert (out / f"{c.source.stem}-{sheet}.csv").exists(), f"LibreOffice did not write sheet {sheet} of {c.source}"
    return converted


def recalculate(path: Path, workdir: Path) -> Recalculated:
    """Recalculate one workbook (:func:`recalculate_all`)."""
    return recalculate_all([path], workdir)[0]


def recalculate_to_xlsx(paths: list[Path], workdir: Path) -> list[Path]:
    """Every workbook of ``paths`` recalculated and saved as xlsx by LibreOffice (cell types kept: text stays text);
    returns the converted copies in order."""
    out = _convert(paths, workdir, "xlsx")
    converted = [out / Path(p).name for p in paths]
    for c in converted:
        assert c.exists(), f"LibreOffice did not write {c}"
    return converted


def _value(text: str):
    """A CSV cell as openpyxl reads the recalculated xlsx: None when empty, a float for a number (a percent
    format's ``%`` undone, decimally: ``38.2327496239479%`` is 0.382327496239479), else the text."""
    if text == "":
        return None
    try:
        return float(Decimal(text[:-1]) / 100) if text.endswith("%") else float(text)
    except (ValueError, InvalidOperation):
        return text


def check_rows(converted: Recalculated) -> list[tuple[str, str, object, object, object]]:
    """``(option, key, python, workbook, relative difference)`` per Check row of a recalculated workbook."""
    rows = converted.rows("Check")[FIRST_ROW - 1:]
    return [tuple(_value(v) for v in (row + [""] * 5)[:5]) for row in rows if row and row[0] != ""]


def error_cells(converted: Recalculated) -> list[tuple[str, str, str]]:
    """Every cell showing a spreadsheet error after recalculation: ``(sheet, cell, text)``."""
    return [(sheet, f"{get_column_letter(col)}{row}", text) for sheet in converted.sheets
            for row, cells in enumerate(converted.rows(sheet), start=1)
            for col, text in enumerate(cells, start=1) if text.startswith(ERROR_VALUES)]


#: text and links (``"..."``, ``'...'``, ``[...]``) that :data:`_CALL` must not read as names: text is blanked to a
#: token separator, a link to a letter (it belongs to the name it prefixes, as in openpyxl's tokenizer)
_TEXT = re.compile(r"\"(?:[^\"]|\"\")*\"|'(?:[^']|'')*'|\[[^\]]*\]")
#: a name that opens a parenthesis: a function call (openpyxl's Tokenizer: FUNC OPEN). The lookbehind starts the match
#: at the start of the name only (no retry at each of its characters)
_CALL = re.compile(r"(?<![^\s,;{}()+\-*/^&=><%#])([^\s,;{}()+\-*/^&=><%#]+)\(")


def _blank(match) -> str:
    return " " if match.group(0)[0] == '"' else "L"


def functions_called(formula: str) -> set[str]:
    """The functions a formula (``=...``) calls, upper case: those openpyxl's :class:`~openpyxl.formula.Tokenizer`
    reads as FUNC OPEN, found by two regular expressions ~17x faster (48,356 formulas of the largest bundled workbook:
    0.63 s against 10.7 s; the tests compare both on a sample of every workbook's formulas)."""
    body = formula[1:]
    if '"' in body or "'" in body or "[" in body:
        body = _TEXT.sub(_blank, body)
    return {name.upper() for name in _CALL.findall(body)}


def tokenizer_functions(formula: str) -> set[str]:
    """:func:`functions_called` by openpyxl's tokenizer (the reference, slow)."""
    return {t.value.rstrip("(").upper() for t in Tokenizer(formula).items if t.type == "FUNC" and t.subtype == "OPEN"}


def formulas(workbook) -> list[str]:
    """Every formula of a workbook built in memory (:func:`tco.export.build_workbook`), sheet by sheet. Read from the
    sheets' cell tables: ``iter_rows`` would create a cell at every empty position of the used range, which a later
    save would write."""
    return [cell.value for ws in workbook for cell in ws._cells.values() if cell.data_type == "f"]


def agrees(expected, actual, rtol: float = 1e-9) -> bool:
    """Numbers within ``rtol`` (relative to the larger magnitude), or equal text."""
    if isinstance(expected, str) or isinstance(actual, str):
        return expected == actual
    if actual is None:
        return False
    scale = max(abs(expected), abs(actual))
    return abs(actual - expected) <= rtol * scale
