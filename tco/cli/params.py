"""``tco params``: every named parameter with value, unit, range, grade and source.

The table shows readable columns (source and note cut to fit, full text in json and
csv); reference figures the model does not read (device list/street/cost-of-goods
prices, model architecture facts) follow the inputs, marked as such.
"""

from __future__ import annotations

from .common import add_format_argument, add_scenario_arguments, print_json, print_table, scenario_from_args

#: table columns and how many characters of each text column the table keeps
TABLE_COLUMNS = ["name", "value", "unit", "low", "high", "grade", "date", "source", "note"]
TEXT_WIDTH = {"source": 48, "note": 40}


def add_parser(sub):
    parser = sub.add_parser("params", help="list every named parameter of a scenario", description=__doc__)
    add_scenario_arguments(parser)
    add_format_argument(parser, ("table", "json", "csv"))
    return parser


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def run(args) -> int:
    from ..api import parameters

    frame = parameters(scenario_from_args(args), reference=True)
    if args.format == "json":
        print_json(frame.to_dict(orient="records"))
        return 0
    if args.format == "csv":
        print_table(frame.set_index("name"), "csv")
        return 0
    for role, title in (("input", None), ("reference", "Reference figures (shown, not read by the model; never drawn)")):
        part = frame[frame["role"] == role][TABLE_COLUMNS].set_index("name")
        if part.empty:
            continue
        for column, width in TEXT_WIDTH.items():
            part[column] = part[column].map(lambda text, w=width: shorten(text, w))
        if title:
            print(f"\n{title}")
        print_table(part, "table")
    return 0
