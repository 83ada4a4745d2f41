"""The baseline's refresh policies against one another over random draws.

docs/model.md, "The refresh rule against the book-value credit", quotes its figures.

Run: ``python tests/refresh_policy_sweep.py [SCENARIO ...] [--draws N] [--seed S]`` (default: the bundled scenarios
whose baseline follows the general-purpose roadmap, 4,000 draws, seed 7). Each draw of the scenario's sampling plan is
evaluated with the baseline under every refresh policy (:data:`tco.core.money.generations.POLICIES`). It prints, per policy,
the share of draws in which its present cost is the least of the four, the median, 95th percentile and largest ratio
to that least, the baseline's median cost per million output tokens, and per challenger the share of draws it meets
its targets at a lower cost per token than the baseline. A few seconds per scenario.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from sweeps import draw_parser

import tco
from tco.core.evaluate import evaluate
from tco.core.money.generations import POLICIES
from tco.studies.sampling import draw_chunk, sampling_plan

SCENARIOS = ("custom-asic", "specialization-over-time")


def sweep(name: str, draws: int, seed: int) -> dict[str, dict]:
    """Per refresh policy: the baseline's present cost over the least of the policies' (``ratio``, per draw), its cost
    per million output tokens (``lcot``) and each challenger's winning share (``wins``)."""
    scenario = tco.load_scenario(name)
    values = scenario.values() | draw_chunk(sampling_plan(scenario), seed, 0, draws)
    base = scenario.structure.baseline
    results = {policy: evaluate(dataclasses.replace(scenario.structure, refresh_policy=policy), values)
               for policy in POLICIES}
    least = np.minimum.reduce([r[base].pv_cost_usd for r in results.values()])
    return {policy: {"ratio": r[base].pv_cost_usd / least, "lcot": r[base].lcot_usd_per_mtok,
                     "wins": {o: float(np.mean((r[o].lcot_usd_per_mtok < r[base].lcot_usd_per_mtok) & (r[o].feasible > 0.5)))
                              for o in r if o != base}}
            for policy, r in results.items()}


def main() -> int:
    args = draw_parser(__doc__, SCENARIOS, draws=4000, seed=7).parse_args()
    for name in args.scenarios:
        for policy, found in sweep(name, args.draws, args.seed).items():
            ratio = found["ratio"]
            wins = ", ".join(f"{o} {w:.2%}" for o, w in found["wins"].items())
            print(f"{name}, {policy}: least in {np.mean(ratio <= 1 + 1e-12):.2%} of draws; over the least median "
                  f"{np.median(ratio):.3f}, p95 {np.quantile(ratio, 0.95):.3f}, largest {ratio.max():.3f}; baseline "
                  f"median {np.median(found['lcot']):.3f} USD/M output tokens; beats it: {wins}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
