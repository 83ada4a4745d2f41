"""Shared fixtures: the bundled scenarios and a toy scenario whose numbers are derived by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from what_ifs import ASIC_CAN_WIN

import tco

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def default_scenario():
    return tco.load_scenario("default")


@pytest.fixture(scope="session")
def asic_scenario():
    return tco.load_scenario("custom-asic")




@pytest.fixture(scope="session")
def asic_can_win(asic_scenario):
    return asic_scenario.with_values(ASIC_CAN_WIN)


@pytest.fixture(scope="session")
def gpu_split_scenario(default_scenario):
    """The default scenario with colocated H100 (the baseline) against H100 prefill + H100 decode over 400G InfiniBand."""
    from tco.inputs.loading import scenario_from_dict

    return scenario_from_dict({**default_scenario.to_dict(), "name": "gpu-split", "baseline": "h100", "options": [
        {"name": "h100", "colocated": {"device": "h100-sxm"}},
        {"name": "h100-split", "prefill": {"device": "h100-sxm"}, "decode": {"device": "h100-sxm"}, "kv_link": "ib-400g"}]})


@pytest.fixture(scope="session")
def toy_scenario():
    return tco.load_scenario(DATA / "toy.yaml")


# --- the order `make test` hands the modules to its processes (pytest-xdist --dist loadfile --no-loadscope-reorder) --

#: started first, longest first (measured, see the Makefile), so no long module starts when the others are done
#: (xdist's default order, most tests first, started the 4 browser layout audits last)
FIRST = ("tests/web/test_layout.py", "tests/web/test_browser.py", "tests/test_serving_simulation.py",
         "tests/security/test_fuzz.py", "tests/web/test_app_state.py", "tests/test_scale.py", "tests/test_workbook.py",
         "tests/test_vectorized.py", "tests/test_training.py", "tests/test_catalog.py")


def _module_rank(item) -> int:
    path = item.path.relative_to(Path(__file__).parent.parent).as_posix()
    return FIRST.index(path) if path in FIRST else len(FIRST)


def pytest_collection_modifyitems(items):
    """The modules of :data:`FIRST` first, in that order (a stable sort: the order inside a module is kept)."""
    items.sort(key=_module_rank)
