"""The model's p99 TTFT and TPOT against a simulation of the fleet it sized, over random colocated fleets.

Run: ``python tests/fleet_sweep.py [--fleets N] [--seed S] [--requests R]`` (default: 40 fleets, seed 5, 2,500
requests per simulation). Where tests/simulation_sweep.py checks the user's targets on the bundled scenarios' fleets,
this checks the model's own figures: Llama 2 70B on one-GPU H200 replicas (tests/test_serving.py's catalog figures),
prompts of 150-3,000 tokens (all at the mean, or gamma with a squared CV of 0.2 or 0.58), 100-500 output tokens, token
budgets of 256-8,192, 5-25 requests/s, TTFT targets 0.1-1 s and TPOT 30-80 ms, drawn until ``N`` fleets meet their
targets in the model (held batches included: tight TTFT targets hold many of them down). Each fleet is sized by
:func:`tco.core.serving.search.size_pool` and simulated (tests/simulation.py); the script prints every fleet's figures and the
median and largest ratio of the simulated p99 to the model's and to the target. Exit status 1 if a simulated p99 exceeds
the model's by more than the simulation tests' tolerance. Measured figures: docs/model.md, "Checked against a
simulation".
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys

import numpy as np
from simulation import Lengths, simulate_colocated
from test_serving import H200, MODEL, demand
from test_serving_simulation import TOLERANCE

from tco.core.serving import parallelism
from tco.core.serving.cycles import cycle_model, prefill_pass_prompts
from tco.core.serving.search import size_pool

SHAPE = parallelism.Shape(1)


def random_fleets(count: int, seed: int):
    """``count`` random demands whose fleet of one-GPU H200 replicas the model calls feasible, with the sizing."""
    rng = np.random.default_rng(seed)
    found = 0
    while found < count:
        d = dataclasses.replace(
            demand(rate=float(rng.uniform(5, 25)), ttft=float(rng.uniform(0.1, 1.0)), tpot=float(rng.uniform(0.03, 0.08)),
                   budget=float(rng.choice([256, 512, 1024, 2048, 8192])), prompt=float(rng.integers(150, 3000)),
                   output=float(rng.integers(100, 500))),
            prompt_scv=float(rng.choice([0.0, 0.0, 0.2, 0.58])))
        sized = size_pool("colocated", [SHAPE], MODEL, H200, d, whole=True)
        if bool(sized["feasible"]):
            found += 1
            yield found, d, sized


def simulated_over_model(d, sized, seed: int, requests: int) -> tuple[float, float]:
    """The simulated p99 TTFT and TPOT of the sized fleet over the model's [-]."""
    cm = cycle_model(SHAPE, MODEL, H200, d, "colocated")
    outcome = simulate_colocated(cm, int(sized["replicas"]), int(sized["slots"]), int(d.prompt_tokens),
                                 int(d.output_tokens), float(d.peak_requests_per_s), float(d.token_budget_tokens), d.policy,
                                 int(prefill_pass_prompts(cm, d)), requests=requests,
                                 lengths=Lengths(float(d.prompt_tokens), float(d.prompt_scv), seed=seed),
                                 streamed=H200.streamed_prefill)
    ttft, tpot = outcome.quantile(0.99)
    return ttft / float(sized["ttft_s"]), tpot / float(sized["tpot_s"])


def sweep(fleets: int, seed: int, requests: int, echo=print) -> dict:
    """Ratios of the simulated p99 to the model's (``ttft``, ``tpot``) and to the target (``ttft_target``,
    ``tpot_target``) over ``fleets`` random feasible fleets: ``(median, largest)`` each, and the fleets above the
    tolerance (``over``)."""
    ratios = {"ttft": [], "tpot": [], "ttft_target": [], "tpot_target": []}
    over = []
    for i, d, sized in random_fleets(fleets, seed):
        ttft, tpot = simulated_over_model(d, sized, i, requests)
        to_target = (ttft * float(sized["ttft_s"]) / float(d.ttft_target_s),
                     tpot * float(sized["tpot_s"]) / float(d.tpot_target_s))
        for key, value in zip(ratios, (ttft, tpot, *to_target), strict=True):
            ratios[key].append(value)
        if max(ttft, tpot) > 1 + TOLERANCE:
            over.append(i)
        echo(f"{i}: P {d.prompt_tokens:.0f} (scv {d.prompt_scv}), O {d.output_tokens:.0f}, budget {d.token_budget_tokens:.0f}, "
             f"{d.peak_requests_per_s:.1f} req/s, targets {d.ttft_target_s:.3f} / {d.tpot_target_s:.3f} s: "
             f"{float(sized['replicas']):.0f} replicas x {float(sized['slots']):.0f} slots; simulated / model p99 TTFT "
             f"{ttft:.3f}, TPOT {tpot:.3f}; / target {to_target[0]:.3f}, {to_target[1]:.3f}")
    return {"over": over, **{k: (statistics.median(v), max(v)) for k, v in ratios.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fleets", type=int, default=40, help="random feasible fleets")
    parser.add_argument("--seed", type=int, default=5, help="seed of the fleets")
    parser.add_argument("--requests", type=int, default=2500, help="requests per simulation")
    args = parser.parse_args()
    found = sweep(args.fleets, args.seed, args.requests, echo=lambda line: print(line, flush=True))
    print(f"{args.fleets} fleets; simulated p99 over the model's, median and largest: TTFT {found['ttft'][0]:.3f}, "
          f"{found['ttft'][1]:.3f}; TPOT {found['tpot'][0]:.3f}, {found['tpot'][1]:.3f}; over the target: TTFT "
          f"{found['ttft_target'][0]:.3f}, {found['ttft_target'][1]:.3f}; TPOT {found['tpot_target'][0]:.3f}, "
          f"{found['tpot_target'][1]:.3f}; {len(found['over'])} above the tolerance {TOLERANCE:g}")
    return 1 if found["over"] else 0


if __name__ == "__main__":
    sys.exit(main())
