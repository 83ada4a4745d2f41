"""Issue 11's claim over many random draws: every option the model reports feasible meets its targets in a
simulation of the fleet it sized.

Run: ``python tests/simulation_sweep.py [SCENARIO ...] [--draws N] [--seed S] [--requests R]`` (default: every
bundled serving scenario, 30 draws, seed 202, 1,500 requests per simulation). The test
``tests/test_serving_simulation.py::test_every_feasible_option_meets_its_targets_in_simulation`` checks the base
values and two draws of each scenario; this script runs the same check (:func:`simulated_against_targets`, the same
request-rate cap for large fleets, :func:`_capped`) over as many draws as asked, one simulation per feasible option
and fleet, and prints per scenario the checks made, the failures (simulated percentile above the target by more than
the module's sampling tolerance, or requests left unfinished) and the median and largest ratio of the simulated
percentile to the target (TTFT, TPOT, and the larger of the two: how near its binding target a fleet runs; an SRAM
fleet sized by the chips that hold the weights runs far below both). Exit status 1 if any check failed. Measured
figures: docs/model.md, "Checked against a simulation". A scenario takes one to a few minutes per 30 draws (a
simulation costs ~8 us per replica-cycle).
"""

from __future__ import annotations

import statistics
import sys
import time

from sweeps import draw_parser
from test_serving_simulation import TOLERANCE, _capped, _draws, simulated_against_targets

import tco

SCENARIOS = ("default", "voice-agent", "fleet-split", "batch-offline", "custom-asic", "specialization-over-time")


def sweep(name: str, draws: int, seed: int, requests: int) -> dict:
    """Checks of ``draws`` seeded draws of the scenario ``name``: their count, the failures, and the median and
    largest ratio of the simulated percentile to the target (``ttft``, ``tpot``, and ``binding``, the larger of the two
    per check: ``(median, largest)``)."""
    scenario = tco.load_scenario(name)
    _, *drawn = _draws(scenario, draws, seed=seed)
    failures, ratios = [], {"ttft": [], "tpot": [], "binding": []}
    for i, values in enumerate(drawn):
        values, results = _capped(scenario, values)
        for option, ttft, tpot, unfinished in simulated_against_targets(scenario, values, results, requests):
            ratios["ttft"].append(ttft)
            ratios["tpot"].append(tpot)
            ratios["binding"].append(max(ttft, tpot))
            if unfinished or ttft > 1 + TOLERANCE or tpot > 1 + TOLERANCE:
                failures.append((i, option, round(ttft, 3), round(tpot, 3), unfinished))
    return {"checks": len(ratios["ttft"]), "failures": failures,
            **{k: (statistics.median(v), max(v)) if v else (0.0, 0.0) for k, v in ratios.items()}}


def main() -> int:
    parser = draw_parser(__doc__, SCENARIOS, draws=30, seed=202)
    parser.add_argument("--requests", type=int, default=1500, help="requests per simulation")
    args = parser.parse_args()
    failed = False
    for name in args.scenarios:
        start = time.perf_counter()
        found = sweep(name, args.draws, args.seed, args.requests)
        failed |= bool(found["failures"])
        ratios = "; ".join(f"{label} {found[k][0]:.3g}, {found[k][1]:.3g}"
                           for k, label in (("ttft", "TTFT"), ("tpot", "TPOT"), ("binding", "the nearer target")))
        print(f"{name}: {args.draws} draws, {found['checks']} checks, {len(found['failures'])} failed; simulated "
              f"percentile / target, median and largest: {ratios} ({time.perf_counter() - start:.0f} s)", flush=True)
        for draw, option, ttft, tpot, unfinished in found["failures"]:
            print(f"  draw {draw}, {option}: TTFT {ttft}, TPOT {tpot} of target, {unfinished} unfinished")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
