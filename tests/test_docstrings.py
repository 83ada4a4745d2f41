"""numpydoc sections stay true: every public function of the documented modules says what it takes and
returns, with a ``[unit]`` on numbers, and its references resolve in docs/sources.md.

Documented so far (issue 15): every module of the core (``tco.core``, functions and the public
methods of its public classes), the fleet analyses (``tco.dynamics``), the solvers, the studies, the
Python API users call (``tco.api``, ``tco.inputs.parameters``, ``tco.inputs.catalog``, ``tco.scenario``, the training
scenario and API), and the flip conditions. A function with arguments has a ``Parameters``
section naming each of them; one that returns something has ``Returns`` (or ``Yields``); an entry
whose type is a number or an array carries its unit in square brackets (``[USD/Mtok]``, ``[-]`` for
a pure number); every ``[key]`` of a ``References`` section is an entry of the bibliography. A
property is documented as an attribute: a docstring, no sections.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from test_sources import bibliography_keys

ROOT = Path(__file__).resolve().parents[1]
CORE = sorted((ROOT / "tco" / "core").rglob("*.py"))
DOCUMENTED = sorted({*CORE, *(ROOT / "tco" / layer / f"{name}.py" for layer, names in (
    ("dynamics", ("coordination", "devices", "kv_wall", "pareto", "roadmap", "routing", "stranded", "tree")),
    ("studies", [p.stem for p in (ROOT / "tco" / "studies").glob("*.py")]),
    ("inputs", ("parameters", "catalog", "catalog_entries", "scenario", "scenario_schema", "scenario_resolve",
                "scenario_flatten", "loading", "training_scenario", "fleet_settings", "variants", "option_edits")),
    ("analysis", ("evaluation", "breakeven", "solvers", "flips", "training", "verdict", "program_views")),
    ("present", ("comparison", "parameter_table", "training_comparison", "flip_text", "study_figures", "study_findings",
                 "fleet_figures", "fleet_summary", "verdict_text", "tables", "program_text")),
    ("export", ("study_folder",)),
    ("", ("api",))) for name in names)})
SECTION = re.compile(r"^(\s*)(Parameters|Returns|Yields|References|Raises|Notes|See Also|Examples)\n\1-{3,}$", re.MULTILINE)
ENTRY = re.compile(r"^(\S[^:]*?)\s:\s(.+)$")
NUMERIC = re.compile(r"\b(float|int|ndarray|array|number)\b")
UNIT = re.compile(r"(?:^|\s)\[[^\]]+\]")  # ``[s]`` after a space: not the brackets of ``dict[str, float]``
KEY = re.compile(r"\[([a-z0-9][a-z0-9.\-]*[a-z0-9])\]")


def public_functions(path: Path):
    """Module-level functions not named with a leading underscore: ``(name, node)``."""
    tree = ast.parse(path.read_text())
    return [(node.name, node) for node in tree.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")]


def public_methods(path: Path):
    """Methods of the module's public classes not named with a leading underscore: ``(Class.name, node)``."""
    tree = ast.parse(path.read_text())
    classes = [cls for cls in tree.body if isinstance(cls, ast.ClassDef) and not cls.name.startswith("_")]
    return [(f"{cls.name}.{node.name}", node) for cls in classes
            for node in cls.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")]


def is_property(node: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Name) and d.id in ("property", "cached_property") for d in node.decorator_list)


def sections(doc: str) -> dict[str, list[str]]:
    """The numpydoc sections of a docstring: title -> its lines (dedented)."""
    import inspect

    doc = inspect.cleandoc(doc)
    marks = list(SECTION.finditer(doc))
    out = {}
    for i, mark in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(doc)
        out[mark.group(2)] = doc[mark.end():end].strip("\n").split("\n")
    return out


def entries(lines: list[str]) -> list[tuple[str, str]]:
    """``(names, type)`` of a Parameters/Returns section's entries (the unindented lines)."""
    out = []
    for line in lines:
        if line and not line.startswith(" "):
            match = ENTRY.match(line)
            out.append((match.group(1), match.group(2)) if match else ("", line))
    return out


def arguments(node: ast.FunctionDef) -> list[str]:
    args = node.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]
    names += [f"*{args.vararg.arg}"] if args.vararg else []
    names += [f"**{args.kwarg.arg}"] if args.kwarg else []
    return [n for n in names if n not in ("self", "cls")]


def returns_nothing(node: ast.FunctionDef) -> bool:
    return isinstance(node.returns, ast.Constant) and node.returns.value is None


CASES = [(path, name, node) for path in DOCUMENTED for name, node in public_functions(path)]
METHODS = [(path, name, node) for path in CORE for name, node in public_methods(path)]


@pytest.mark.parametrize(("path", "name", "node"), CASES,
                         ids=[f"{p.relative_to(ROOT)}:{n}" for p, n, _ in CASES])
def test_public_function_has_numpydoc_sections(path, name, node):
    doc = ast.get_docstring(node)
    assert doc, f"{name} has no docstring"
    found = sections(doc)
    wanted = arguments(node)
    if wanted:
        assert "Parameters" in found, f"{name}: no Parameters section"
        documented = {n.strip() for names, _ in entries(found["Parameters"]) for n in names.split(",")}
        assert set(wanted) <= documented, f"{name}: parameters not documented: {sorted(set(wanted) - documented)}"
    if not returns_nothing(node):
        assert "Returns" in found or "Yields" in found, f"{name}: no Returns (or Yields) section"
    for title in ("Parameters", "Returns", "Yields"):
        for names, kind in entries(found.get(title, [])):
            if NUMERIC.search(re.sub(r"Callable\[.*\]", "Callable", kind)):  # a callback's signature is no quantity
                assert UNIT.search(kind), f"{name}: {title} entry {names or kind!r} has a number type without [unit]"


@pytest.mark.parametrize(("path", "name", "node"), METHODS,
                         ids=[f"{p.relative_to(ROOT)}:{n}" for p, n, _ in METHODS])
def test_public_method_of_the_core_has_numpydoc_sections(path, name, node):
    """A method as a function (``self``/``cls`` aside); a property needs only its docstring."""
    if is_property(node):
        assert ast.get_docstring(node), f"{name} has no docstring"
    else:
        test_public_function_has_numpydoc_sections(path, name, node)


def test_references_resolve_in_the_bibliography():
    keys = set(bibliography_keys())
    for path, name, node in [*CASES, *METHODS]:
        for line in sections(ast.get_docstring(node) or "").get("References", []):
            missing = set(KEY.findall(line)) - keys
            assert not missing, f"{path.relative_to(ROOT)}:{name} cites {sorted(missing)}, not in docs/sources.md"


def test_the_checks_can_fail():
    """A docstring without sections, an undocumented argument and a unitless number are all caught."""
    bare = ast.parse('def f(x, y):\n    """Nothing."""\n    return x\n').body[0]
    assert "Parameters" not in sections(ast.get_docstring(bare))
    doc = "Sum.\n\nParameters\n----------\nx : float\n    One.\n\nReturns\n-------\nfloat [s]\n    Both."
    found = sections(doc)
    assert [n for n, _ in entries(found["Parameters"])] == ["x"] and "y" not in "x"
    assert NUMERIC.search(entries(found["Parameters"])[0][1]) and not UNIT.search(entries(found["Parameters"])[0][1])
    assert not UNIT.search("dict[str, float]") and UNIT.search("dict[str, float] [s]")
    assert entries(found["Returns"]) == [("", "float [s]")]
    prop = ast.parse("class A:\n    @property\n    def p(self):\n        return 1\n").body[0].body[0]
    assert is_property(prop) and not is_property(bare) and arguments(prop) == []
