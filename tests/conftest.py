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


@pytest.fixture(scope="session")
def compared():
    """``compared(name)``: ``tco.compare`` of the bundled scenario ``name`` at its defaults (ties, flips), computed once
    per test process and shared by the tests that only read it (0.2-1.5 s each; the suite compared the same bundled
    scenario up to 13 times). A test that patches the model (``monkeypatch``) or edits the result calls
    ``tco.compare`` itself: this is a cache of the tests, not of tco, so nothing else reads a stale answer."""
    results = {}

    def compared(name: str):
        if name not in results:
            results[name] = tco.compare(tco.load_scenario(name))
        return results[name]

    return compared


# --- how `make test` hands the tests to its processes (pytest-xdist --dist loadfile --no-loadscope-reorder) ----------

#: modules handed to one process whole: their tests share a module fixture that costs seconds (one LibreOffice run
#: of 23 workbooks, a dask cluster, the calibration fit, a flip search, the training suite, an exported workbook, the
#: layout audit's walks through the app).
#: Every other module's tests are handed out one by one (:func:`pytest_xdist_make_scheduler`), so a long module
#: (the serving simulations: 150 s on one process) no longer sets the suite's length, and the last tests of the run
#: are short ones on both processes
WHOLE = ("tests/test_workbook.py", "tests/test_scale.py", "tests/test_validation.py", "tests/test_verdict.py",
         "tests/test_training.py", "tests/security/test_workbook_import.py", "tests/web/test_layout.py")

#: started first, longest first (measured 2026-12-06, seconds on one process: the LibreOffice parity 75 of its
#: module's 80, the layout audits 4 x 25, the browser tests 100 in all, the simulations' longest ~15 each, the flip
#: search on every device 25), so no long test starts when the others are done
FIRST = ("tests/test_workbook.py", "tests/web/test_layout.py", "tests/web/test_browser.py",
         "tests/test_serving_simulation.py", "tests/test_catalog.py", "tests/test_vectorized.py",
         "tests/security/test_fuzz.py", "tests/test_training.py", "tests/test_validation.py", "tests/test_verdict.py",
         "tests/web/test_app_state.py", "tests/test_scale.py")


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def _module_rank(item) -> int:
    path = item.path.relative_to(Path(__file__).parent.parent).as_posix()
    return FIRST.index(path) if path in FIRST else len(FIRST)


def pytest_collection_modifyitems(items):
    """The modules of :data:`FIRST` first, in that order (a stable sort: the order inside a module is kept)."""
    items.sort(key=_module_rank)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, absent under -p no:xdist
def pytest_xdist_make_scheduler(config, log):
    """With ``--dist loadfile``: the modules of :data:`WHOLE` to one process each, every other test on its own, in
    the order of collection (``--no-loadscope-reorder``), to whichever process has at most two tests left to run
    (xdist's scope scheduling with a scope per test outside :data:`WHOLE`). Other ``--dist`` modes are xdist's."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WholeOrOneByOne(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _module(nodeid) if _module(nodeid) in WHOLE else nodeid

    return WholeOrOneByOne(config, log)
