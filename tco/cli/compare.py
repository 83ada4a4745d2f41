"""``tco compare``: which option is cheaper per useful token, by how much, and why."""

from __future__ import annotations

from .common import add_format_argument, add_scenario_arguments, print_json, print_table, scenario_from_args

#: option outputs shown as columns of the table (headers from the output table), after ``placement``
TABLE_COLUMNS = ("lcot_usd_per_mtok", "lcot_usd_per_mtok_all_tokens", "devices", "tokens_per_joule", "ttft_s", "tpot_s",
                 "batch", "bound", "spilled_bytes", "feasible")


def table_columns() -> dict[str, str]:
    """Column name -> header: the output table's short ``column`` header (``bound`` is text, not an output)."""
    from ..core.outputs import OPTION_OUTPUTS

    return {name: "bound by" if name == "bound" else OPTION_OUTPUTS[name].column for name in TABLE_COLUMNS}


def add_parser(sub):
    parser = sub.add_parser("compare", help="compare every fleet option of a scenario against its baseline",
                            description=__doc__)
    add_scenario_arguments(parser)
    add_format_argument(parser)
    return parser


def run(args) -> int:
    from ..api import compare

    scenario = scenario_from_args(args)
    if getattr(scenario, "kind", "inference") == "training":
        return run_training(scenario, args.format)
    result = compare(scenario)
    if args.format == "json":
        print_json(result.to_dict())
        return 0
    if args.format == "csv":
        print_table(result.options.join(result.challengers, how="left"), "csv")
        return 0
    scenario = result.scenario
    print(f"{scenario.title or scenario.name}\n")
    columns = table_columns()
    table = result.options[list(columns)].rename(columns=columns)
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


def run_training(scenario, fmt: str) -> int:
    """``tco compare`` on a ``kind: training`` scenario: time to train, cost per run, verdict with flip conditions."""
    from ..training_api import TABLE_COLUMNS as TRAINING_COLUMNS
    from ..training_api import compare_training

    result = compare_training(scenario)
    if fmt == "json":
        print_json(result.to_dict())
        return 0
    if fmt == "csv":
        print_table(result.options.join(result.challengers, how="left"), "csv")
        return 0
    print(f"{scenario.title or scenario.name}\n")
    table = result.options[list(TRAINING_COLUMNS)].rename(columns=TRAINING_COLUMNS)
    table.insert(0, "cluster", result.options["placement"])
    print_table(table, "table")
    if not result.challengers.empty:
        print(f"\nagainst the baseline {scenario.structure.baseline}:")
        print_table(result.challengers, "table")
    if result.siting:
        s = result.siting
        print(f"\nsites (site-dependent USD/yr: {s['training_option']} cluster training continuously; "
              f"{s['serving_scenario']} fleet on {s['serving_option']}):")
        import pandas as pd

        print_table(pd.DataFrame(s["sites"]).set_index("site").drop(columns="name"), "table")
        print(f"one combined facility ({s['combined_site']}): {s['combined_usd_per_year']:.4g} USD/yr; split "
              f"(training at {s['split_training_site']}, serving at {s['split_serving_site']}): "
              f"{s['split_usd_per_year']:.4g} USD/yr")
    if result.second_life:
        life = result.second_life
        print(f"\nsecond life after {life['retire_after_years']:g} years (serving {life['serving_scenario']}, "
              f"tokens valued at {life['priced_against']}'s {life['value_usd_per_mtok']:.3g} USD/M):")
        import pandas as pd

        print_table(pd.DataFrame(life["devices"]).T[["cascade_usd", "sell_usd", "best", "cascade_premium_usd"]], "table")
    print(f"\n{result.verdict}")
    return 0
