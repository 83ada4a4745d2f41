"""Provenance: every figure in the data directories cites docs/sources.md or says what it is.

A `source:` (or a validation case's `publication:`) string either names one or more keys of
the bibliography `docs/sources.md` in square brackets, or starts with one of the prefixes
that mark a figure without a publication (our estimate, a derivation, a design target, a
scenario owner's assumption, a calibration result). Nothing may cite a file outside the
repository (the workspace notes the catalog was first built from are not shipped).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA_DIRS = ("assumptions", "scenarios", "validation")
BIBLIOGRAPHY = ROOT / "docs" / "sources.md"
ALLOWED_PREFIXES = ("estimate", "derived", "design target", "scenario assumption", "tco calibrate")
OUTSIDE_FILES = ("facts.md", "/work/shared", "/work/wt")
KEY_IN_TEXT = re.compile(r"\[([a-z0-9][a-z0-9.\-]*[a-z0-9])\]")
ENTRY = re.compile(r"^- \*\*\[([^\]]+)\]\*\*", re.MULTILINE)


@functools.cache
def bibliography_keys() -> tuple[str, ...]:
    """The keys of docs/sources.md, in order (read once per test process: 1,119 citation tests ask)."""
    return tuple(ENTRY.findall(BIBLIOGRAPHY.read_text()))


def data_files() -> list[Path]:
    return sorted(p for d in DATA_DIRS for p in (ROOT / d).rglob("*.yaml"))


@functools.cache
def load(file: Path):
    """A data file's YAML, parsed once per test process, by libyaml where PyYAML has it (7x faster than the
    pure-Python parser: 0.11 s against 0.81 s for the 62 data files, read at collection by every test process)."""
    return yaml.load(file.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def walk(node, path=""):
    """Yield (dotted path, key, value) for every mapping entry in a loaded YAML document."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{path}.{key}" if path else str(key)
            yield here, key, value
            yield from walk(value, here)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from walk(item, f"{path}[{i}]")


def citations() -> list[tuple[str, str]]:
    out = []
    for file in data_files():
        for where, key, value in walk(load(file)):
            if key in ("source", "publication") and not isinstance(value, dict):
                out.append((f"{file.relative_to(ROOT)}:{where}", value))
    return out


def quantities(file: Path):
    for where, _key, value in walk(load(file)):
        if isinstance(value, dict) and "value" in value and not isinstance(value["value"], (dict, list)):
            yield where, value


def test_bibliography_keys_are_unique_and_well_formed():
    keys = bibliography_keys()
    assert len(keys) >= 50
    assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)
    assert all(KEY_IN_TEXT.fullmatch(f"[{k}]") for k in keys), [k for k in keys if not KEY_IN_TEXT.fullmatch(f"[{k}]")]


@pytest.mark.parametrize(("where", "text"), citations(), ids=lambda x: x if isinstance(x, str) and ".yaml:" in x else "")
def test_every_citation_resolves_in_the_repository(where, text):
    assert isinstance(text, str) and text.strip(), f"{where}: empty source"
    named = KEY_IN_TEXT.findall(text)
    missing = set(named) - set(bibliography_keys())
    assert not missing, f"{where}: keys not in docs/sources.md: {sorted(missing)}"
    assert named or text.lower().startswith(ALLOWED_PREFIXES), (
        f"{where}: {text!r} names no [key] of docs/sources.md and does not start with one of {ALLOWED_PREFIXES}")


def docstring_references() -> set[str]:
    """Keys cited in the ``References`` sections of the package's docstrings (numpydoc)."""
    import ast
    import inspect

    cited = set()
    for path in sorted((ROOT / "tco").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and (doc := ast.get_docstring(node)):
                part = inspect.cleandoc(doc).partition("References\n----------\n")[2].split("\n\n")[0]
                cited |= set(KEY_IN_TEXT.findall(part))
    return cited


def test_every_bibliography_entry_is_cited():
    """Every entry is cited by a data file, a docstring's References, or the docs or a test that checks a published
    figure (the published arithmetic of docs/validation.md lives in tests/test_core_formulas.py)."""
    cited = {k for _where, text in citations() for k in KEY_IN_TEXT.findall(text)} | docstring_references()
    texts = [*data_files(), *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "tests").glob("test_*.py"))]
    notes = "".join(f.read_text() for f in texts if f.name != "sources.md")
    orphans = [k for k in bibliography_keys() if k not in cited and f"[{k}]" not in notes]
    assert not orphans, f"entries of docs/sources.md nothing cites: {orphans}"


@pytest.mark.parametrize("file", [f for f in data_files() if f.relative_to(ROOT).parts[0] == "assumptions"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_assumption_quantities_carry_grade_date_source_and_range(file):
    """The catalog's quantities carry all of it; scenarios may pin a value without a range."""
    architectural = file.parent.name == "models"
    for where, q in quantities(file):
        assert q.get("source") and q.get("date"), f"{file.name}:{where} lacks source or date"
        assert q.get("grade") in ("A", "B", "C"), f"{file.name}:{where} grade {q.get('grade')!r}"
        if not architectural:
            assert "low" in q and "high" in q, f"{file.name}:{where} lacks low/high"


def test_nothing_cites_a_file_outside_the_repository():
    texts = [*data_files(), *sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md",
             *sorted((ROOT / "assumptions").glob("*.md"))]
    for file in texts:
        text = file.read_text()
        for bad in OUTSIDE_FILES:
            assert bad not in text, f"{file.relative_to(ROOT)} mentions {bad!r}"


def test_a_bad_citation_is_caught():
    """The checks above can fail: an unknown key and an unprefixed free text are both rejected."""
    keys = set(bibliography_keys())
    assert "no-such-source-2099" not in keys
    assert KEY_IN_TEXT.findall("[no-such-source-2099] (p. 3)") == ["no-such-source-2099"]
    assert not "someone said so".lower().startswith(ALLOWED_PREFIXES)
