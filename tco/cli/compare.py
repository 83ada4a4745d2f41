"""``tco compare``: which option is cheaper per useful token, by how much, and why."""

from __future__ import annotations

from tco.cli.common import (
    add_format_argument,
    add_scenario_arguments,
    add_wide_argument,
    print_json,
    print_table,
    scenario_from_args,
)
from tco.cli.text import WIDTH, paragraph, table


def add_parser(sub):
    parser = sub.add_parser("compare", help="compare every fleet option of a scenario against its baseline",
                            description=__doc__)
    add_scenario_arguments(parser)
    add_format_argument(parser)
    add_wide_argument(parser)
    parser.add_argument("--tie-tolerance", default=None, metavar="SHARE",
                        help="two options closer than this share of the cheaper one's cost are a tie (default 2%%)")
    return parser


def options_text(names: list[str], baseline: str, rows, wide: bool = False) -> str:
    """Options as columns, one row per output (the app's Compare table)."""
    header = ["", *(f"{n} (baseline)" if n == baseline else n for n in names)]
    return table(header, [[r.title, *r.cells] for r in rows], None if wide else WIDTH)


def run(args) -> int:
    from tco.analysis.verdict import DEFAULT_TIE_TOLERANCE, TIE_TOLERANCE
    from tco.foundation.user_numbers import read_number
    from tco.present.comparison import compare
    from tco.present.tables import challenger_rows, option_rows

    scenario = scenario_from_args(args)
    if getattr(scenario, "kind", "inference") == "training":
        return run_training(scenario, args.format, args.wide)
    tolerance = DEFAULT_TIE_TOLERANCE if args.tie_tolerance is None else \
        read_number(args.tie_tolerance, TIE_TOLERANCE, "--tie-tolerance")
    result = compare(scenario, tie_tolerance=tolerance)
    if args.format == "json":
        print_json(result.to_dict())
        return 0
    if args.format == "csv":
        print_table(result.options.join(result.challengers, how="left"), "csv")
        return 0
    scenario = result.scenario
    baseline = scenario.structure.baseline
    print(paragraph(scenario.title or scenario.name) + "\n")
    print(options_text(list(result.results), baseline, option_rows(result.results, args.wide), args.wide))
    challengers = {n: row for n, row in result.challengers.to_dict(orient="index").items()}
    if challengers:
        print(f"\nagainst the baseline {baseline}:")
        header = ["", *challengers]
        print(table(header, [[r.title, *r.cells] for r in challenger_rows(challengers, args.wide)],
                    None if args.wide else WIDTH))
    print("\n" + paragraph(result.verdict))
    return 0


def run_training(scenario, fmt: str, wide: bool = False) -> int:
    """``tco compare`` on a ``kind: training`` scenario: time to train, cost per run, verdict with flip conditions."""
    from tco.present.tables import cell
    from tco.present.training_comparison import CHALLENGER_ROWS, OPTION_ROWS, SECOND_LIFE_COLUMNS, SITE_COLUMNS, compare_training

    result = compare_training(scenario)
    if fmt == "json":
        print_json(result.to_dict())
        return 0
    if fmt == "csv":
        print_table(result.options.join(result.challengers, how="left"), "csv")
        return 0
    width = None if wide else WIDTH
    baseline = scenario.structure.baseline
    print(paragraph(scenario.title or scenario.name) + "\n")
    names = list(result.options.index)
    rows = [[title, *(cell(result.options.loc[n, key], f, scale) for n in names)] for key, title, f, scale in OPTION_ROWS]
    print(table(["", *(f"{n} (baseline)" if n == baseline else n for n in names)], rows, width))
    if not result.challengers.empty:
        print(f"\nagainst the baseline {baseline}:")
        others = list(result.challengers.index)
        print(table(["", *others], [[title, *(cell(result.challengers.loc[n, key], f, scale) for n in others)]
                                    for key, title, f, scale in CHALLENGER_ROWS], width))
    if result.siting:
        s = result.siting
        print(paragraph(f"\nsites (site-dependent cost per year: the {s['training_option']} cluster training continuously; "
                        f"the {s['serving_scenario']} fleet on {s['serving_option']}):"))
        print(records_text(s["sites"], SITE_COLUMNS, width))
        print(paragraph(f"one combined facility ({s['combined_site']}): {cell(s['combined_usd_per_year'], ',.3g', 1e-6)} "
                        f"M USD/yr; split (training at {s['split_training_site']}, serving at {s['split_serving_site']}): "
                        f"{cell(s['split_usd_per_year'], ',.3g', 1e-6)} M USD/yr"))
    if result.second_life:
        life = result.second_life
        print(paragraph(f"\nsecond life after {life['retire_after_years']:g} years (serving {life['serving_scenario']}, "
                        f"tokens valued at {life['priced_against']}'s {cell(life['value_usd_per_mtok'], ',.3g')} USD/M):"))
        print(records_text([{"device": d, **row} for d, row in life["devices"].items()], SECOND_LIFE_COLUMNS, width))
    print("\n" + paragraph(result.verdict))
    return 0


def records_text(records, columns, width) -> str:
    """Plain records as a text table: one row per record, one column per ``(title, key, format, scale)``."""
    from tco.present.tables import cell

    return table([title for title, *_ in columns],
                 [[cell(r.get(key), f, scale) for _title, key, f, scale in columns] for r in records], width)
