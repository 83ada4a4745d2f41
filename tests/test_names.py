"""Dotted parameter names are declared once (tco.core.names): the sections and builders give exactly the names the
scenarios resolve to, and a field a section does not have fails where it is asked for."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tco.core import names as named
from tco.inputs.loading import bundled_scenarios, load_scenario

#: names built from a template (by whom they belong to), not declared in a section
BUILT = re.compile(r"^(devices|models|links|options|sites)\.|^roadmap\.[^.]+\.release_year$|^workload\.year_\d+\.")


def resolved_names() -> set[str]:
    """Every named input of every bundled scenario, inference and training (not the fleet-analysis settings,
    declared in tco.inputs.fleet_settings)."""
    out = set()
    for kind in ("inference", "training"):
        for name in bundled_scenarios(kind):
            out |= set(load_scenario(name).params)
    return out


def test_every_fixed_name_a_scenario_resolves_to_is_declared():
    declared = {name for section in named.SECTIONS for name in section}
    fixed = {n for n in resolved_names() if not BUILT.match(n)}
    assert fixed - declared == set()


def test_every_declared_name_is_one_a_scenario_can_have():
    """No stale or misspelt declaration: each declared name is resolved by a bundled scenario, or belongs to a part
    of the model no bundled scenario switches on (a built chip's die and its build node's figures)."""
    only_when_asked = {*named.program_specs, *(named.program.name(f) for f in named.NODE_FIELDS),
                       named.program.die_area_mm2, named.program.package_memory_board_usd, named.program.wafer_price_usd,
                       named.program.defect_density_per_cm2,
                       # the prefix cache's tiers beside device memory (agentic-coding keeps its cache in HBM)
                       named.serving.host_dram_cache_bytes_per_device, named.serving.host_dram_cache_bandwidth_bytes_per_s,
                       named.serving.ssd_cache_bytes_per_device, named.serving.ssd_cache_bandwidth_bytes_per_s}
    declared = {name for section in named.SECTIONS for name in section}
    assert declared - resolved_names() - only_when_asked == set()


def test_a_field_a_section_does_not_have_fails_where_it_is_asked_for():
    assert named.workload.prompt_tokens == "workload.prompt_tokens"
    assert named.program_nre.name("masks_usd") == "program.nre.masks_usd"
    assert list(named.roadmap) == ["roadmap.start_year", "roadmap.cost_halving_years"]
    with pytest.raises(AttributeError, match="workload has no parameter 'prompt_token'"):
        _ = named.workload.prompt_token
    with pytest.raises(AttributeError, match="fixed"):
        named.workload.prompt_tokens = "x"


def literal_names(path) -> list[tuple[int, str]]:
    """``(line, text)`` of each string literal that is a declared parameter name, docstrings aside (a quoted name
    inside an f-string's braces is a literal too: Python parses it as one)."""
    declared = {name for section in named.SECTIONS for name in section}
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in declared
            and id(node) not in docstrings]


def test_no_module_writes_a_declared_name_as_a_string(tmp_path):
    """A typo in a literal name surfaces only as a run-time KeyError (or, under ``in values``, as nothing at all):
    every module reads the names from tco.core.names. The scan itself finds a planted literal, plain or inside an
    f-string."""
    root = Path(__file__).resolve().parents[1]
    sources = [p for p in [*(root / "tco").rglob("*.py"), *(root / "app").rglob("*.py")] if p.name != "names.py"]
    offenders = [(p.relative_to(root).as_posix(), line, name) for p in sources for line, name in literal_names(p)]
    assert offenders == []
    probe = tmp_path / "probe.py"
    probe.write_text('"""workload.prompt_tokens"""\nx = values["workload.prompt_tokens"]\ny = f"{n(\'economics.pue\')}"\n')
    assert [name for _, name in literal_names(probe)] == ["workload.prompt_tokens", "economics.pue"]
