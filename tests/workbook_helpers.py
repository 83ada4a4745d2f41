"""Helpers for the workbook tests: LibreOffice headless recalculation and reading results back."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import openpyxl

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


def recalculate_all(paths: list[Path], workdir: Path) -> list[Path]:
    """Recalculate every workbook of ``paths`` (distinct file names) with LibreOffice headless in one run
    and a private profile; returns the converted copies in order. One run instead of one per file: its
    start-up is most of the cost (5 workbooks: 6.7 s in one run, 25 s in five, measured here under load)."""
    profile = workdir / "lo_profile"
    (profile / "user").mkdir(parents=True, exist_ok=True)
    (profile / "user" / "registrymodifications.xcu").write_text(RECALC_ALWAYS)
    out = workdir / "recalculated"
    out.mkdir(exist_ok=True)
    assert len({p.name for p in paths}) == len(paths), "workbooks recalculated together need distinct names"
    subprocess.run([soffice(), "--headless", "--norestore", f"-env:UserInstallation={profile.as_uri()}",
                    "--convert-to", "xlsx", "--outdir", str(out), *map(str, paths)], check=True, capture_output=True,
                   timeout=120 + 60 * len(paths))
    converted = [out / p.name for p in paths]
    for c in converted:
        assert c.exists(), f"LibreOffice did not write {c}"
    return converted


def recalculate(path: Path, workdir: Path) -> Path:
    """Recalculate one workbook (:func:`recalculate_all`); returns the converted copy."""
    return recalculate_all([path], workdir)[0]


def check_rows(path: Path) -> list[tuple[str, str, object, object, object]]:
    """``(option, key, python, workbook, relative difference)`` per Check row of a recalculated workbook."""
    ws = openpyxl.load_workbook(path, data_only=True)["Check"]
    return [row[:5] for row in ws.iter_rows(min_row=FIRST_ROW, values_only=True) if row[0] is not None]


def error_cells(path: Path) -> list[tuple[str, str, str]]:
    """Every cell showing a spreadsheet error after recalculation."""
    wb = openpyxl.load_workbook(path, data_only=True)
    return [(ws.title, cell.coordinate, cell.value) for ws in wb for row in ws.iter_rows() for cell in row
            if isinstance(cell.value, str) and cell.value.startswith(ERROR_VALUES)]


def agrees(expected, actual, rtol: float = 1e-9) -> bool:
    """Numbers within ``rtol`` (relative to the larger magnitude), or equal text."""
    if isinstance(expected, str) or isinstance(actual, str):
        return expected == actual
    if actual is None:
        return False
    scale = max(abs(expected), abs(actual))
    return abs(actual - expected) <= rtol * scale
