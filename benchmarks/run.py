"""Engine benchmark: option-evaluations per second, vectorized vs a loop of scalar calls.

Run: ``python benchmarks/run.py [--samples N] [--loop N]`` (``make bench``). Prints
figures and ratios; targets (issue #2): >= 1,000,000 option-evaluations/s on one core and
>= 300x over the scalar loop. numpy's elementwise kernels run on one core.
"""

from __future__ import annotations

import argparse

import numpy as np
from timing import best_of

import tco
from tco.core.evaluate import evaluate
from tco.studies.sampling import draw_chunk, sampling_plan

TARGET_RATE = 1_000_000
TARGET_RATIO = 300


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenario", default="default")
    parser.add_argument("--samples", type=int, default=1_000_000, help="parameter sets in the vectorized call")
    parser.add_argument("--loop", type=int, default=2_000, help="scalar calls timed in the loop")
    args = parser.parse_args()

    scenario = tco.load_scenario(args.scenario)
    options = len(scenario.structure.options)
    values = scenario.values() | draw_chunk(sampling_plan(scenario), 0, 0, args.samples)
    vector_s = best_of(lambda: evaluate(scenario.structure, values))
    vector_rate = args.samples * options / vector_s

    points = [{k: (v[i] if np.ndim(v) else v) for k, v in values.items()} for i in range(args.loop)]
    loop_s = best_of(lambda: [evaluate(scenario.structure, p) for p in points], repeats=1)
    loop_rate = args.loop * options / loop_s

    ratio = vector_rate / loop_rate
    drawn = len(scenario.params.uncertain())
    print(f"scenario {scenario.name}: {options} options, {drawn} uncertain parameters drawn from their distributions")
    print(f"vectorized: {args.samples:,} parameter sets in {vector_s:.3f} s = {vector_rate:,.0f} option-evaluations/s "
          f"(target >= {TARGET_RATE:,}: {'ok' if vector_rate >= TARGET_RATE else 'MISSED'})")
    print(f"scalar loop: {args.loop:,} calls in {loop_s:.3f} s = {loop_rate:,.0f} option-evaluations/s")
    print(f"ratio vectorized / loop: {ratio:,.0f}x (target >= {TARGET_RATIO}x: {'ok' if ratio >= TARGET_RATIO else 'MISSED'})")


if __name__ == "__main__":
    main()
