"""Arguments and output helpers shared by the subcommands."""

from __future__ import annotations

import json
import math
import sys


def add_scenario_arguments(parser, with_set: bool = True) -> None:
    parser.add_argument("scenario", nargs="?", default=None, metavar="SCENARIO",
                        help="bundled scenario name (default: 'default') or path to a scenario YAML file")
    if with_set:
        parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                            help="override a parameter's base value (repeatable), e.g. economics.discount_rate=0.08")


def add_format_argument(parser, choices=("table", "json", "csv")) -> None:
    parser.add_argument("--format", choices=choices, default="table", help="output format (default: table)")


def scenario_from_args(args):
    """The scenario named by ``args.scenario`` with every ``--set`` applied (validated)."""
    from ..params import parse_assignment
    from ..scenario import load_scenario

    scenario = load_scenario(args.scenario)
    updates = dict(parse_assignment(item) for item in getattr(args, "set", []) or [])
    return scenario.with_values(updates)


def _json_safe(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def print_json(data) -> None:
    json.dump(_json_safe(data), sys.stdout, indent=2, default=float)
    sys.stdout.write("\n")


def print_table(frame, fmt: str) -> None:
    import pandas as pd

    if fmt == "csv":
        frame.to_csv(sys.stdout, index=True)
    else:
        with pd.option_context("display.max_columns", None, "display.width", 250):
            print(frame.to_string(float_format=lambda x: f"{x:.6g}"))
