"""``tco export``: write the finance workbook (live formulas) of a scenario.

Without ``--xlsx`` the workbook goes to ``exports/<scenario name>.xlsx`` under the current
folder (created when missing), as a study's outputs go to ``exports/<study name>/``.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

from tco.cli.common import add_scenario_arguments, scenario_from_args

#: where a workbook goes when no path is given (relative to the current folder)
EXPORTS = Path("exports")


def add_parser(sub):
    parser = sub.add_parser("export", help="write a finance workbook (.xlsx, live formulas)", description=__doc__)
    add_scenario_arguments(parser, writes="the workbook")
    parser.add_argument("--xlsx", metavar="PATH", help="workbook to write (.xlsx; default: exports/<scenario name>.xlsx)")
    return parser


def default_path(name: str) -> Path:
    """``exports/<name>.xlsx``, the name's characters outside letters, digits, ``.``, ``_`` and ``-`` as ``-``;
    the folder is created when missing."""
    EXPORTS.mkdir(exist_ok=True)
    return EXPORTS / f"{re.sub(r'[^A-Za-z0-9._-]+', '-', name).strip('.-') or 'scenario'}.xlsx"


def run(args) -> int:
    from tco.export import write_workbook

    scenario = scenario_from_args(args)
    start = time.perf_counter()
    path = write_workbook(scenario, args.xlsx or default_path(scenario.name), force=args.force)
    print(f"wrote {path} ({scenario.name}, {len(scenario.params)} inputs) in {time.perf_counter() - start:.2f} s")
    return 0
