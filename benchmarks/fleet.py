"""Benchmark: the quarter simulation (13 weeks = 2,184 hours) for several sizing policies.

Prints the wall time of (a) the queue simulation alone (tco.core.fleet.stranded, all policies
at once) and (b) the whole analysis (engine evaluated over all hours + simulation + costs).
Target: under 0.5 s. Run: ``python benchmarks/fleet.py [SCENARIO]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from timing import best_of

import tco
from tco.core.fleet import stranded as core
from tco.dynamics.stranded import simulate
from tco.inputs.fleet_settings import fleet_config


def main(name: str = "fleet-split") -> None:
    scenario = tco.load_scenario(name)
    cfg = fleet_config(scenario).stranded
    hours = core.hours_of_quarter()
    arrivals = core.demand_requests_per_hour(hours, 1000.0, 1.6, cfg.weekend_ratio, cfg.demand_growth_per_year, cfg.peak_hour)
    rng = np.random.default_rng(0)
    c1 = rng.uniform(0.8, 1.2, (len(cfg.policies), hours.size)) * arrivals.max()
    c2 = rng.uniform(0.8, 1.2, (len(cfg.policies), hours.size)) * arrivals.max()

    def queues():
        q1, _, _, d2 = core.tandem(arrivals, c1, c2)
        core.stranded_share(100.0, d2 / c2, core.nonempty(q1, c1))

    t_core = best_of(queues)
    t_all = best_of(lambda: simulate(scenario, cfg))
    print(f"quarter simulation, {hours.size} hours x {len(cfg.policies)} policies ({', '.join(cfg.policies)}), scenario {name}")
    print(f"  queues only (tco.core.fleet.stranded): {t_core * 1e3:8.2f} ms")
    print(f"  whole analysis (engine + queues + costs, split and GPU fleets): {t_all * 1e3:8.2f} ms  (target < 500 ms)")


if __name__ == "__main__":
    main(*sys.argv[1:])
