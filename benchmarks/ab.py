"""The engine's speed in this checkout against a git revision, measured interleaved.

Run: ``python benchmarks/ab.py [--rev REV] [--scenario NAME] [--rounds N]`` (default: ``HEAD``, the default
scenario, 6 rounds). The revision is checked out in a temporary git worktree; each round runs one fresh process
per side, in alternating order (A B, B A, ...), and each process measures

- the fixed cost of one call (N = 1) [ms CPU, the mean of 300 calls], and
- the all-drawn engine in blocks of :data:`tco.studies.chunks.EVALUATION_BLOCK` draws (every uncertain parameter
  drawn, seed 0; 4 blocks) [option-evaluations/s per core, CPU time].

It prints each side's median and the ratio of the medians (this checkout over the revision). Why interleaved: on the
shared 2-core machine the same code measures up to 1.5x apart from one hour to the next (README, "Benchmarks"), so
two versions are comparable only in runs taken side by side; CPU time is less disturbed than wall time. Nothing here
fails, and the outputs are not compared (the tests compare fast paths with their general forms).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: what each side's process runs (its tree first on sys.path, so it imports that tree's ``tco``)
MEASURE = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import tco
from tco.core.evaluate import evaluate
from tco.scenario import load_scenario
from tco.studies.chunks import EVALUATION_BLOCK
from tco.studies.sampling import draw_chunk, sampling_plan

scenario = load_scenario(sys.argv[2])
structure, values = scenario.structure, scenario.values()
options = len(structure.options)
evaluate(structure, values)
calls, cpu = 300, time.process_time()
for _ in range(calls):
    evaluate(structure, values)
n1_ms = (time.process_time() - cpu) / calls * 1e3
plan = sampling_plan(scenario)
blocks = [values | draw_chunk(plan, 0, i, EVALUATION_BLOCK) for i in range(4)]
evaluate(structure, blocks[0])
cpu = time.process_time()
for block in blocks:
    evaluate(structure, block)
rate = len(blocks) * EVALUATION_BLOCK * options / (time.process_time() - cpu)
print(json.dumps({"tree": tco.__file__, "n1_ms": n1_ms, "blocks_per_s": rate}))
"""


def measure(tree: Path, scenario: str) -> dict:
    """One fresh process's figures for the ``tco`` of ``tree``."""
    done = subprocess.run([sys.executable, "-c", MEASURE, str(tree), scenario], capture_output=True, text=True,
                          check=True, cwd=tree)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(figures["tree"]).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"the process for {tree} imported tco from {figures['tree']}")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="HEAD", help="the git revision to compare with (default HEAD)")
    parser.add_argument("--scenario", default="default", help="bundled scenario name or path (default: default)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds of one process per side (default 6)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tco-ab-") as temp:
        other = Path(temp) / "rev"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(other), args.rev], check=True)
        try:
            sides = {"this checkout": ROOT, args.rev: other}
            figures = {name: [] for name in sides}
            for round_ in range(args.rounds):
                order = list(sides) if round_ % 2 == 0 else list(sides)[::-1]
                for name in order:
                    figures[name].append(measure(sides[name], args.scenario))
                print(f"  round {round_ + 1}/{args.rounds}: "
                      + ", ".join(f"{n}: {figures[n][-1]['n1_ms']:.2f} ms, {figures[n][-1]['blocks_per_s'] / 1e6:.3f} M/s"
                                  for n in sides), flush=True)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)], check=True)
    medians = {name: {key: statistics.median(f[key] for f in runs) for key in ("n1_ms", "blocks_per_s")}
               for name, runs in figures.items()}
    this, rev = medians["this checkout"], medians[args.rev]
    print(f"scenario {args.scenario}, medians of {args.rounds} interleaved rounds (CPU time)")
    print(f"  fixed cost of one call (N = 1): this checkout {this['n1_ms']:.2f} ms, {args.rev} {rev['n1_ms']:.2f} ms"
          f" (ratio {this['n1_ms'] / rev['n1_ms']:.3f})")
    print(f"  all drawn, in blocks: this checkout {this['blocks_per_s'] / 1e6:.3f} M/s, {args.rev}"
          f" {rev['blocks_per_s'] / 1e6:.3f} M/s (ratio {this['blocks_per_s'] / rev['blocks_per_s']:.3f})")


if __name__ == "__main__":
    main()
