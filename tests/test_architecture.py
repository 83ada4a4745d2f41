"""The house reads one way (DESIGN.md section 11): the old module paths of 0.1 still import, and nothing inside tco or
the app uses them."""

from __future__ import annotations

import ast
import importlib
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import grimp
import pytest

from tco.foundation.moved_modules import MOVED

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "tco").rglob("*.py"), *(ROOT / "app").rglob("*.py")])
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def imported_modules(path: Path) -> set[str]:
    """Every absolute module a file imports (``from X import y`` gives X and X.y)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_still_imports_and_warns(old):
    """``from tco.scenario import load_scenario`` works for one release, naming the new place in a DeprecationWarning;
    its names are the new modules' own objects."""
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    assert [w for w in caught if issubclass(w.category, DeprecationWarning) and MOVED[old][0] in str(w.message)]
    first = importlib.import_module(MOVED[old][0])
    public = [n for n in vars(first) if not n.startswith("_") and getattr(first, n, None) is not None
              and getattr(getattr(first, n), "__module__", None) == first.__name__]
    for name in public[:5]:
        assert getattr(module, name) is getattr(first, name)


def test_nothing_inside_uses_an_old_path():
    offenders = [(p.relative_to(ROOT).as_posix(), m) for p in SOURCES for m in imported_modules(p) if m in MOVED]
    assert offenders == []


def test_the_layers_contract_holds():
    """``lint-imports`` (the contracts in pyproject.toml: the layers, and the core free of pandas, pydantic, yaml,
    openpyxl, dash and plotly) passes on the tree as it is."""
    done = subprocess.run([str(LINT_IMPORTS), "--no-cache"], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stdout[-3000:]


def test_a_back_edge_fails_the_contract_naming_the_import(tmp_path):
    """The contract bites: a copy of the package whose core imports the presentation layer fails, and the report
    names that import (``tco.core.draws -> tco.present.tables``)."""
    for folder in ("tco", "app"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    (tmp_path / "tco_app").symlink_to(tmp_path / "app")
    draws = tmp_path / "tco" / "core" / "draws.py"
    draws.write_text(draws.read_text() + "\nfrom tco.present import tables  # noqa: E402,F401\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([str(LINT_IMPORTS), "--no-cache"], capture_output=True, text=True, cwd=tmp_path, env=env,
                          check=False)
    assert done.returncode == 1
    assert "tco.core.draws -> tco.present.tables" in done.stdout


def module_graph() -> dict[str, set[str]]:
    """Every module of tco and the app and the modules of tco and the app it imports (grimp, as import-linter reads them)."""
    graph = grimp.build_graph("tco", "tco_app")
    return {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or around a loop (Tarjan's algorithm, iterative)."""
    index, low, on, stack, groups, counter = {}, {}, set(), [], [], [0]
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_strongly_connected_finds_a_loop():
    """The cycle finder itself: a -> b -> c -> a is one group, d alone is none."""
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_itself_around_a_loop():
    """No import cycle anywhere in tco and the app, within a layer included (the layers contract only sees edges
    between layers)."""
    assert strongly_connected(module_graph()) == []


def local_imports(path: Path) -> list[tuple[int, str, str]]:
    """``(line, module, the comment line above it)`` of each import of a tco or app module inside a function."""
    text = path.read_text()
    lines = text.splitlines()
    out = []
    for fn in ast.walk(ast.parse(text)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] in ("tco", "tco_app")):
                    above = lines[node.lineno - 2].strip() if node.lineno > 1 else ""
                    out.append((node.lineno, node.module or ".", above))
    return out


def test_a_function_local_import_of_our_own_modules_says_why_it_is_lazy():
    """A function-local import that dodges a cycle is a design bug; one that keeps a light path light (a Monte Carlo
    worker without pydantic, a table-only command without plotly) is allowed when the line above says so
    (``# lazy: ...``). The CLI parses before importing a subcommand (tests/test_packaging.py), so its imports are lazy
    by design."""
    unexplained = [(p.relative_to(ROOT).as_posix(), line, module) for p in SOURCES if "cli" not in p.parts
                   for line, module, above in local_imports(p) if not above.startswith("# lazy:")]
    assert unexplained == []



def test_no_source_module_is_longer_than_800_lines():
    """A module over 800 lines holds more than one topic (issue 46: serving.py had 1,798, evaluate.py 853)."""
    long = {p.relative_to(ROOT).as_posix(): n for p in SOURCES if (n := len(p.read_text().splitlines())) > 800}
    assert long == {}
