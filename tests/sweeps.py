"""The command line the seeded sweeps share (tests/simulation_sweep.py, tests/prefill_routing_sweep.py,
tests/refresh_policy_sweep.py): bundled scenario names, draws per scenario and the seed of the draws."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def draw_parser(doc: str, scenarios: Sequence[str], draws: int, seed: int) -> argparse.ArgumentParser:
    """A parser of ``[SCENARIO ...] [--draws N] [--seed S]`` with these defaults, described by ``doc``'s first line."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", default=list(scenarios),
                        help=f"bundled scenario names (default: {', '.join(scenarios)})")
    parser.add_argument("--draws", type=int, default=draws, help="random draws per scenario")
    parser.add_argument("--seed", type=int, default=seed, help="seed of the draws")
    return parser
