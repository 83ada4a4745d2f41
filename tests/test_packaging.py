"""The package installs every module, and its edges stay lazy (the core needs numpy only)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_folder_is_installed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    mapped = {name: ROOT / folder for name, folder in config["package-dir"].items()}
    found = set()
    for top in ("tco", "tco_app"):
        base = mapped.get(top, ROOT / top)
        for init in base.rglob("__init__.py"):
            parts = init.parent.relative_to(base).parts
            found.add(".".join((top, *parts)))
    data = {name for name in config.get("package-data", {}) if name != "*"}  # folders of data files, not code
    assert found == listed - data


def _modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


HEAVY = {"pandas", "pydantic", "dash", "openpyxl", "plotly", "scipy", "SALib", "yaml", "dask"}


def test_the_core_imports_numpy_only():
    for statement in ("import tco", "import tco.core", "import tco.core.evaluate"):
        loaded = _modules_after(statement)
        assert "numpy" in loaded or statement != "import tco.core.evaluate"
        assert not HEAVY & loaded, (statement, sorted(HEAVY & loaded))


def test_the_command_line_parses_before_importing_a_subcommand():
    loaded = _modules_after("import tco.cli\ntco.cli.build_parser().parse_args(['compare'])")
    assert not HEAVY & loaded, sorted(HEAVY & loaded)


def test_importing_the_engine_keeps_freed_memory_unless_switched_off():
    """tco.core.allocator raises glibc's mmap and trim thresholds once when the engine is imported (every
    array then comes from the reused heap instead of fresh pages), and ``TCO_KEEP_FREED_MEMORY=0`` leaves
    the allocator alone. The state is read back from the module in a fresh process."""
    import os
    import platform

    code = "import tco.core.evaluate\nfrom tco.core import allocator\nprint(allocator.keep_freed_memory())"
    for setting, expected in (("1", platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"), ("0", False)):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "TCO_KEEP_FREED_MEMORY": setting}).stdout
        assert out.strip() == str(expected), setting


def test_a_monte_carlo_worker_imports_numpy_and_the_core_only(tmp_path):
    """The chunk function and the job a Monte Carlo sends its workers (pickled as dask sends them), run in a
    fresh process: it computes the chunk's columns without importing pandas, pydantic, dash or yaml (only
    numpy, scipy.special for the lognormal draws, and the core)."""
    import pickle

    import tco
    from tco.studies.chunk_jobs import chunk_values
    from tco.studies.metrics import parse_metric
    from tco.studies.montecarlo import metric_cell, monte_carlo_job
    from tco.studies.sampling import sampling_plan

    scenario = tco.load_scenario("default")
    cell = metric_cell(scenario, [parse_metric(scenario, "ratio:groq"), parse_metric(scenario, "npv:h100-prefill+groq-decode")],
                       sampling_plan(scenario), 3000)
    job = monte_carlo_job([cell], seed=4, chunk_size=1000)
    (tmp_path / "job.pickle").write_bytes(pickle.dumps((chunk_values, job)))
    code = ("import pickle, sys\n"
            f"function, job = pickle.loads(open({str(tmp_path / 'job.pickle')!r}, 'rb').read())\n"
            "columns = function(job, (0, 1))\n"
            "print(len(columns['ratio:groq']), ' '.join(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "1000"
    loaded = {name.split(".")[0] for name in out[1:]}
    assert not {"pandas", "pydantic", "dash", "yaml", "openpyxl", "plotly", "SALib"} & loaded, sorted(loaded)
