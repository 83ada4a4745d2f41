"""``tco compare``: which option is cheaper per useful token, by how much, and why."""

from __future__ import annotations

from .common import add_format_argument, add_scenario_arguments, print_json, print_table, scenario_from_args

TABLE_COLUMNS = {
    "lcot_usd_per_mtok": "USD/Mtok out",
    "lcot_usd_per_mtok_all_tokens": "USD/Mtok in+out",
    "devices": "devices",
    "tokens_per_joule": "tok/J",
    "ttft_s": "TTFT s",
    "tpot_s": "TPOT s",
    "batch": "batch",
    "bound": "bound by",
    "spilled_bytes": "spilled B",
    "feasible": "feasible",
}


def add_parser(sub):
    parser = sub.add_parser("compare", help="compare every fleet option of a scenario against its baseline",
                            description=__doc__)
    add_scenario_arguments(parser)
    add_format_argument(parser)
    return parser


def run(args) -> int:
    from ..api import compare

    result = compare(scenario_from_args(args))
    if args.format == "json":
        print_json(result.to_dict())
        return 0
    if args.format == "csv":
        print_table(result.options.join(result.challengers, how="left"), "csv")
        return 0
    scenario = result.scenario
    print(f"{scenario.title or scenario.name}\n")
    table = result.options[list(TABLE_COLUMNS)].rename(columns=TABLE_COLUMNS)
    table.insert(0, "placement", result.options["placement"])
    print_table(table, "table")
    if not result.challengers.empty:
        print(f"\nagainst the baseline {scenario.structure.baseline}:")
        print_table(result.challengers, "table")
    for detail in result.details:
        if detail["infeasible_reasons"]:
            print(f"\n{detail['name']} is infeasible: {'; '.join(detail['infeasible_reasons'])}")
    print(f"\n{result.verdict}")
    return 0
