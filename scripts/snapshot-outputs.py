"""Write every user-facing output of the bundled scenarios to one folder, so a refactor can be diffed.

    python scripts/snapshot-outputs.py OUT_DIR [--quick]

What it writes (one file each; timing fields and temporary paths removed, so two runs of the same code are identical):

- ``compare-<scenario>.json``: ``tco compare --format json`` of every bundled scenario;
- ``params-<scenario>.json``: ``tco params --format json`` (inputs, settings and reference figures);
- ``breakeven-*.json``: the README's break-even calls;
- ``fleet-<analysis>-<scenario>.json``: ``tco fleet ANALYSIS --format json`` for every analysis;
- ``validate.json`` and ``validate-training.json``: ``tco validate --format json`` (and ``--training``);
- ``workbook-<scenario>.txt``: every cell of the exported workbook (sheet, address, formula or value);
- ``study-<name>/``: each bundled study's ``summary.json`` (timings removed) and tables (skipped with ``--quick``).

Then ``diff -r BEFORE AFTER`` says whether anything a user sees moved.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = sorted(p.stem for p in (ROOT / "scenarios").glob("*.yaml"))
STUDIES = sorted(p.stem for p in (ROOT / "scenarios" / "studies").glob("*.yaml"))
ANALYSES = ("kv-wall", "stranded", "coordination", "pareto", "tree", "routing", "roadmap")
BREAKEVENS = {
    "breakeven-asic-external-units": ["custom-asic", "--param", "program.external_units",
                                      "--set", "workload.half_life_years=6"],
    "breakeven-prompt-split": ["--param", "workload.prompt_tokens", "--range", "100", "32000",
                               "--option", "h100-prefill+groq-decode"],
    "breakeven-groq-price-ratio": ["--param", "devices.groq-lpu.price_usd", "--metric", "ratio", "--target", "0.5"],
    "breakeven-tpot": ["--param", "workload.tpot_target_s", "--range", "0.003", "0.05"],
}
#: keys whose values are wall-clock times or machine facts, not model outputs
TIMING_KEYS = {"seconds", "elapsed_s", "timings", "time_taken_s", "started", "finished", "version", "package_version",
               "duration_s", "wall_s"}


def tco(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "tco", *args], capture_output=True, text=True, cwd=ROOT, check=False)
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


def without_timings(value):
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def workbook_cells(path: Path) -> str:
    from openpyxl import load_workbook

    book = load_workbook(path)
    lines = []
    for sheet in book.worksheets:
        for row in sheet.iter_rows():
            lines.extend(f"{sheet.title}!{c.coordinate}\t{c.value!r}" for c in row if c.value is not None)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--quick", action="store_true", help="leave the studies out")
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    for name in SCENARIOS:
        (out / f"compare-{name}.json").write_text(tco("compare", name, "--format", "json"))
        (out / f"params-{name}.json").write_text(tco("params", name, "--format", "json"))
    for stem, call in BREAKEVENS.items():
        (out / f"{stem}.json").write_text(tco("breakeven", *call, "--format", "json"))
    for analysis in ANALYSES:
        for name in ("default", "fleet-split", "custom-asic"):
            (out / f"fleet-{analysis}-{name}.json").write_text(tco("fleet", analysis, name, "--format", "json"))
    (out / "validate.json").write_text(tco("validate", "--format", "json"))
    (out / "validate-training.json").write_text(tco("validate", "--training", "--format", "json"))
    with tempfile.TemporaryDirectory() as tmp:
        for name in SCENARIOS:
            book = Path(tmp) / f"{name}.xlsx"
            said = tco("export", name, "--xlsx", str(book))
            text = workbook_cells(book) if book.exists() else said
            (out / f"workbook-{name}.txt").write_text(text.replace(tmp, "TMP"))
        if not args.quick:
            for study in STUDIES:
                folder = Path(tmp) / study
                said = tco("study", study, "--out", str(folder))
                target = out / f"study-{study}"
                target.mkdir(exist_ok=True)
                (target / "stdout.txt").write_text(said.replace(tmp, "TMP"))
                for table in sorted(folder.glob("*.csv")):
                    shutil.copy(table, target / table.name)
                summary = folder / "summary.json"
                if summary.exists():
                    data = without_timings(json.loads(summary.read_text()))
                    (target / "summary.json").write_text(json.dumps(data, indent=1, sort_keys=True).replace(tmp, "TMP"))


if __name__ == "__main__":
    main()
