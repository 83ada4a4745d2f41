"""The house reads one way (DESIGN.md section 11): the old module paths of 0.1 still import, and nothing inside tco or
the app uses them."""

from __future__ import annotations

import ast
import importlib
import sys
import warnings
from pathlib import Path

import pytest

from tco.foundation.moved_modules import MOVED

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*(ROOT / "tco").rglob("*.py"), *(ROOT / "app").rglob("*.py")])


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
