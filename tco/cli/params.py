"""``tco params``: every named parameter with value, unit, range, grade and source.

The table shows readable columns (values in readable units, the source cut to fit; every
column in full with ``--wide``, json and csv); the settings of the fleet analyses (``fleet_dynamics.*``) and
reference figures the model does not read (device list/street/cost-of-goods prices, model architecture facts)
follow the inputs, marked as such.
"""

from __future__ import annotations

from tco.cli.common import (
    add_format_argument,
    add_scenario_arguments,
    add_wide_argument,
    print_json,
    print_table,
    scenario_from_args,
)
from tco.cli.text import WIDTH, table

#: columns of ``--wide`` (everything, unwrapped)
WIDE_COLUMNS = ["name", "value", "unit", "low", "high", "distribution", "grade", "date", "source", "note"]

def add_parser(sub):
    parser = sub.add_parser("params", help="list every named parameter of a scenario", description=__doc__)
    add_scenario_arguments(parser)
    add_format_argument(parser, ("table", "json", "csv"))
    add_wide_argument(parser)
    return parser


def shorten(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, an ellipsis marking the cut."""
    return text if len(text) <= width else text[: width - 1] + "…"


def group(name: str) -> tuple[str, str]:
    """``(group, rest)`` of a dotted name: what it belongs to (``devices.h100-sxm``) and the field under it."""
    if name.startswith("devices.") and ".memory." in name:
        head, _, tier = name.partition(".memory.")
        return head, "memory." + tier
    if name.startswith("options."):
        head, _, field = name.rpartition(".")
        owner, _, role = head.rpartition(".")
        return (owner, f"{role}.{field}") if owner != "options" else (head, field)
    head, _, field = name.rpartition(".")
    return head, field


def _range(value: str, low: float, high: float, unit: str) -> str:
    """``low – high`` in readable units, without the unit when both ends share the value's (shown beside it)."""
    from tco.foundation.formatting import quantity

    lo, hi = quantity(low, unit, 3), quantity(high, unit, 3)
    shown = value.rpartition(" ")[2] if " " in value else ""
    if shown and lo.endswith(" " + shown) and hi.endswith(" " + shown):
        lo, hi = lo[: -len(shown) - 1], hi[: -len(shown) - 1]
    return lo if lo == hi else f"{lo} – {hi}"


def print_readable(part) -> None:
    """Parameters grouped by what they belong to: value and range in readable units, grade and date, and
    the source on the line below (cut to the width; in full with --wide, json and csv)."""
    from tco.foundation.formatting import quantity

    rows, sources = [], []
    for head, members in _grouped(part).items():
        rows.append([head, "", "", ""])
        sources.append("")
        for field, r in members:
            value = quantity(r.value, r.unit, 4)
            rows.append([f"  {field}", value, _range(value, r.low, r.high, r.unit),
                         " ".join(x for x in (r.grade, r.date) if x) or "—"])
            sources.append(shorten(r.source, WIDTH - 6) if r.source else "")
    lines = table(["parameter", "value", "range", "grade, date"], rows, width=None).split("\n")
    out = lines[:2]
    for line, source in zip(lines[2:], sources, strict=True):
        out += [line] + ([f"      {source}"] if source else [])
    print("\n".join(out))


def _grouped(part) -> dict[str, list]:
    groups: dict[str, list] = {}
    for r in part.itertuples():
        head, field = group(r.name)
        groups.setdefault(head, []).append((field, r))
    return groups


def run(args) -> int:
    from tco.present.parameter_table import parameters

    frame = parameters(scenario_from_args(args), reference=True, settings=True)
    if args.format == "json":
        print_json(frame.to_dict(orient="records"))
        return 0
    if args.format == "csv":
        print_table(frame.set_index("name"), "csv")
        return 0
    for role, title in (("input", None),
                        ("setting", "Fleet-analysis settings (read by tco fleet and the app's Fleet tab, not by the cost model)"),
                        ("reference", "Reference figures (shown, not read by the model; never drawn)")):
        part = frame[frame["role"] == role]
        if part.empty:
            continue
        if title:
            print(f"\n{title}")
        if args.wide:
            print_table(part[WIDE_COLUMNS].set_index("name"), "table", wide=True)
        else:
            print_readable(part)
    return 0
