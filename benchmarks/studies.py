"""Speed of the studies against their targets, and against a Python loop of scalar evaluations.

Run: ``python benchmarks/studies.py``. Prints figures and ratios; nothing here fails.
Targets (issue #3): 200 x 200 break-even map (metric + contour) < 1 s; 1,000,000 Monte
Carlo samples of the default scenario < 5 s; Sobol N = 4096 over the default scenario's
uncertain parameters < 10 s. The loop baseline evaluates ``LOOP_POINTS`` scalar scenarios
one core call each and extrapolates to the analysis' size.
"""

from __future__ import annotations

import time

import numpy as np
from timing import best_of

import tco
from tco.studies import grid_map, monte_carlo, sobol
from tco.studies.metrics import metric_values
from tco.studies.sampling import draw_chunk, sampling_plan

LOOP_POINTS = 300


def loop_seconds_per_point(scenario, metric, points: list[dict]) -> float:
    """Seconds per scalar evaluation: one core call per point, as a Python loop would do."""
    started = time.perf_counter()
    for updates in points:
        metric_values(scenario, metric, updates)
    return (time.perf_counter() - started) / len(points)


def report(name: str, vectorized_s: float, target_s: float, evaluations: int, per_point_s: float) -> None:
    loop_s = per_point_s * evaluations
    print(f"{name:<36} {vectorized_s:7.3f} s  (target < {target_s:g} s: {'ok' if vectorized_s < target_s else 'MISSED'})"
          f"   loop of scalar evaluations ~{loop_s:8.1f} s (extrapolated from {LOOP_POINTS} points)"
          f"   speed-up x{loop_s / vectorized_s:,.0f}")


def main() -> None:
    asic = tco.load_scenario("custom-asic")
    default = tco.load_scenario("default")
    rng = np.random.default_rng(0)

    x, y = "workload.half_life_years", "program.external_units"
    t = best_of(lambda: grid_map(asic, x, y, (0.5, 8), (1000, 1e6), 200, 200, "ratio:asic", y_log=True).contour(), 1)
    pts = [{x: float(a), y: float(b)} for a, b in zip(rng.uniform(0.5, 8, LOOP_POINTS), rng.uniform(1e3, 1e6, LOOP_POINTS),
                                                       strict=True)]
    report("200x200 map + contour (custom-asic)", t, 1.0, 40_000, loop_seconds_per_point(asic, "ratio:asic", pts))

    draws = draw_chunk(sampling_plan(default), 0, 0, LOOP_POINTS)
    pts = [{k: float(v[i]) for k, v in draws.items()} for i in range(LOOP_POINTS)]
    per_point = loop_seconds_per_point(default, "ratio:groq", pts)
    metrics = ["ratio:groq", "npv:h100-prefill+groq-decode", "lcot:h100"]
    t = best_of(lambda: monte_carlo(default, metrics, 1_000_000, seed=1), 1)
    report("Monte Carlo 1,000,000 samples (default)", t, 5.0, 1_000_000, per_point)

    d = len(sampling_plan(default).params)
    t = best_of(lambda: sobol(default, "ratio:groq", 4096, seed=1).indices, 1)
    report(f"Sobol N=4096, {d} params ({4096 * (d + 2):,} runs)", t, 10.0, 4096 * (d + 2), per_point)


if __name__ == "__main__":
    main()
