"""How a split's prefill pool fares when prompts are routed otherwise than its staffing assumed (``serving.prefill_queue``).

Run: ``python tests/prefill_routing_sweep.py [SCENARIO ...] [--draws N] [--seed S] [--requests R]`` (default: every
bundled scenario with a disaggregated option, 40 draws, seed 303, 1,500 requests per simulation). For the base values
and each seeded draw (the request rate capped as in :func:`test_serving_simulation._capped`), every split option is
sized twice, for a shared prefill queue and for prompts dispatched at arrival to one replica, and each fleet the model
reports feasible is simulated twice (tests/simulation.py): its prompts in one shared FCFS queue, and routed at arrival
to the prefill replica with the fewest prompts waiting or in its pass (join the shortest queue). It prints, per
scenario and (sizing, routing), the checks made and the median and largest simulated p99 TTFT over the target, and how
many exceed the target and the target plus the module's sampling tolerance. Measured figures: docs/model.md
("Dispatched lanes"). About a minute per scenario at 40 draws.
"""

from __future__ import annotations

import dataclasses
import statistics

from sweeps import draw_parser
from test_serving_simulation import TOLERANCE, _capped, _draws, _feasible, _simulate_option

import tco
from tco.core.evaluate import evaluate
from tco.core.serving.shapes import PREFILL_QUEUES

SCENARIOS = ("default", "fleet-split", "custom-asic", "specialization-over-time")


def sweep(name: str, draws: int, seed: int, requests: int) -> dict[tuple[str, str], list[float]]:
    """Simulated p99 TTFT over the target [-] of every feasible split fleet of ``name``, per ``(sizing, routing)``."""
    scenario = tco.load_scenario(name)
    ratios: dict[tuple[str, str], list[float]] = {(s, r): [] for s in PREFILL_QUEUES for r in PREFILL_QUEUES}
    for values in _draws(scenario, draws, seed=seed):
        values, _ = _capped(scenario, values)
        q, target = float(values["serving.percentile"]), float(values["workload.ttft_target_s"])
        for sizing in PREFILL_QUEUES:
            structure = dataclasses.replace(scenario.structure, prefill_queue=sizing)
            results = evaluate(structure, values)
            for option in structure.options:
                if not option.disaggregated or not _feasible(results, option):
                    continue
                for routing in PREFILL_QUEUES:
                    outcome = _simulate_option(structure, values, option, requests, routing=routing)
                    ratios[sizing, routing].append(outcome.quantile(q)[0] / target)
    return ratios


def main() -> int:
    parser = draw_parser(__doc__, SCENARIOS, draws=40, seed=303)
    parser.add_argument("--requests", type=int, default=1500, help="requests per simulation")
    args = parser.parse_args()
    for name in args.scenarios:
        for (sizing, routing), found in sweep(name, args.draws, args.seed, args.requests).items():
            if found:
                print(f"{name}: sized {sizing}, routed {routing}: {len(found)} checks, p99 TTFT / target median "
                      f"{statistics.median(found):.3f}, largest {max(found):.3f}, above the target "
                      f"{sum(r > 1.0 for r in found)}, above {1 + TOLERANCE:g}x {sum(r > 1 + TOLERANCE for r in found)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
