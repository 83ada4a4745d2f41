"""Last one wins, silently (issue 50, item 6): each input given twice, or changed where tco does not read it,
is refused with the reason (the workbook's Inputs sheet is protected but for the columns the import reads)."""

from __future__ import annotations

import math

import openpyxl
import pytest
import yaml
from harness import contained, refused, run, tco

import tco as tco_api
from tco.export import write_workbook
from tco.export.inputs_sheet import FIRST_ROW, SHEET, VALUE_COLUMN
from tco.export.reader import import_workbook
from tco.foundation.errors import InputError


def study_file(tmp_path, analyses: dict) -> str:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump({"name": "twice", "question": "q", "scenario": "default", "metric": "ratio:groq",
                                    "analyses": analyses}))
    return str(path)


def test_a_key_given_twice_in_a_scenario_file_is_refused(tmp_path, default_text):
    """``name: default`` then ``name: other``: YAML readers keep the last; tco names both lines."""
    path = tmp_path / "s.yaml"
    path.write_text(default_text + "\nname: other\n")
    refused(tco("compare", str(path)), "name", "is given twice (lines 2 and")
    nested = default_text.replace("economics:", "economics:\n  pue: 1.2\n  pue: 1.3", 1) \
        if "\neconomics:" in default_text else default_text + "\neconomics:\n  pue: 1.2\n  pue: 1.3\n"
    path.write_text(nested)
    refused(tco("compare", str(path)), "economics.pue", "given twice")


def test_a_key_given_twice_in_an_upload_is_refused_and_the_state_kept(default_text):
    answer = contained(run("attacks:upload_yaml", default_text + "\nname: other\n")).result
    assert answer["status"] == 200 and "given twice" in answer["upload"] and answer["state"]["scenario"] == "default"


def test_conflicting_correlations_are_refused(tmp_path):
    """(A, B, 0.5) then (B, A, -0.5): the second silently replaced the first."""
    a, b = "devices.groq-lpu.price_usd", "economics.pue"
    analyses = {"monte_carlo": {"samples": 200, "correlations": [{"a": a, "b": b, "rho": 0.5}, {"a": b, "b": a, "rho": -0.5}]}}
    refused(tco("study", study_file(tmp_path, analyses), "--out", str(tmp_path / "out")),
            "analyses.monte_carlo.correlations[1]", "correlations[0]")
    assert not (tmp_path / "out").exists()


def test_the_same_tornado_parameter_twice_is_refused(tmp_path):
    analyses = {"tornado": {"params": ["economics.pue", "economics.discount_rate", "economics.pue"]}}
    refused(tco("study", study_file(tmp_path, analyses), "--out", str(tmp_path / "out")),
            "analyses.tornado.params[2]", "params[0]")


@pytest.mark.slow
def test_a_published_figure_no_efficiency_can_reach_is_refused(tmp_path):
    """``published: 1e300`` exited 0 with every efficiency pinned at its bound."""
    from test_messages import calibration_csv

    refused(tco("calibrate", "--cases", calibration_csv(tmp_path, "1e300"), timeout=120), "cases.csv:2.published",
            "unit")


# --- the workbook ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    path = tmp_path_factory.mktemp("book") / "book.xlsx"
    write_workbook(tco_api.load_scenario("default"), path)
    return path


def _row(ws, name: str) -> int:
    return next(r for r in range(FIRST_ROW, ws.max_row + 1) if ws.cell(r, 1).value == name)


@pytest.mark.slow
def test_the_inputs_sheet_is_protected_but_for_its_value_cells(book):
    """The import reads the name and value columns only; every other cell of Inputs is locked and the sheet says so."""
    ws = openpyxl.load_workbook(book)[SHEET]
    assert ws.protection.sheet
    row = _row(ws, "economics.pue")
    assert not ws.cell(row, VALUE_COLUMN).protection.locked
    assert all(ws.cell(row, column).protection.locked for column in (1, 3, 4, 5, 6, 7))
    assert "only" in ws["A1"].value and "value" in ws["A1"].value and "scenario file" in ws["A1"].value


@pytest.mark.parametrize(("column", "typed", "label"), [(3, "W", "unit"), (4, 0.5, "low"), (5, 99.0, "high"),
                                                        (6, "uniform", "distribution")])
@pytest.mark.slow
def test_an_edit_of_a_column_the_import_does_not_read_is_refused(book, tmp_path, column, typed, label):
    """An unprotected sheet's low/high/unit/distribution edits were ignored on import without a word."""
    wb = openpyxl.load_workbook(book)
    ws = wb[SHEET]
    ws.protection.sheet = False
    row = _row(ws, "economics.pue")
    ws.cell(row, column).value = typed
    wb.save(tmp_path / "e.xlsx")
    with pytest.raises(InputError) as error:
        import_workbook(tmp_path / "e.xlsx")
    assert f"{SHEET}!{'ABCDEF'[column - 1]}{row} (economics.pue)" in str(error.value) and label in str(error.value)
    assert "scenario file" in str(error.value)


@pytest.mark.slow
def test_an_edit_of_the_hidden_scenario_sheet_is_refused(book, tmp_path):
    """``policy: chunked`` -> ``prefill_first`` on the hidden sheet changed the result and was imported without a word."""
    wb = openpyxl.load_workbook(book)
    ws = wb["Scenario"]
    edited = [r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value and "policy: chunked" in ws.cell(r, 1).value]
    assert edited
    ws.cell(edited[0], 1).value = ws.cell(edited[0], 1).value.replace("chunked", "prefill_first")
    wb.save(tmp_path / "s.xlsx")
    scenario_changed = tco_api.load_scenario("default").to_dict()
    scenario_changed["serving"]["policy"] = "prefill_first"
    assert tco_api.compare(tco_api.inputs.loading.scenario_from_dict(scenario_changed)).verdict  # it would load
    refused(tco("import", str(tmp_path / "s.xlsx")), "Scenario", "edited")


def test_the_untouched_workbook_still_imports_exactly(book):
    scenario, data = import_workbook(book)
    assert "set" not in data and scenario.values() == tco_api.load_scenario("default").values()
    assert not any(math.isnan(v) for v in scenario.values().values())
