"""``tco export``: write the finance workbook (live formulas) of a scenario."""

from __future__ import annotations

import time

from .common import add_scenario_arguments, scenario_from_args


def add_parser(sub):
    parser = sub.add_parser("export", help="write a finance workbook (.xlsx, live formulas)", description=__doc__)
    add_scenario_arguments(parser)
    parser.add_argument("--xlsx", required=True, metavar="PATH", help="workbook to write (.xlsx)")
    parser.add_argument("--force", action="store_true", help="overwrite PATH if it exists")
    return parser


def run(args) -> int:
    from ..export import write_workbook

    scenario = scenario_from_args(args)
    start = time.perf_counter()
    path = write_workbook(scenario, args.xlsx, force=args.force)
    print(f"wrote {path} ({scenario.name}, {len(scenario.params)} inputs) in {time.perf_counter() - start:.2f} s")
    return 0
