"""``tco params``: every named parameter with value, unit, range, distribution and source."""

from __future__ import annotations

from .common import add_format_argument, add_scenario_arguments, print_json, print_table, scenario_from_args


def add_parser(sub):
    parser = sub.add_parser("params", help="list every named parameter of a scenario", description=__doc__)
    add_scenario_arguments(parser)
    add_format_argument(parser, ("table", "json", "csv"))
    return parser


def run(args) -> int:
    from ..api import parameters

    frame = parameters(scenario_from_args(args))
    if args.format == "json":
        print_json(frame.to_dict(orient="records"))
    else:
        columns = ["name", "value", "unit", "low", "high", "distribution", "source"]
        frame = frame[columns].set_index("name")
        if args.format == "table":  # keep rows on one line; json and csv carry the full source
            frame["source"] = frame["source"].str.slice(0, 70)
        print_table(frame, args.format)
    return 0
