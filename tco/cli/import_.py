"""``tco import``: read a workbook's edited Inputs back into a scenario file that validates."""

from __future__ import annotations

import sys

from tco.cli.common import print_warnings
from tco.foundation.files import atomic_write, check_target


def add_parser(sub):
    parser = sub.add_parser("import", help="read a workbook written by `tco export` back into a scenario file",
                            description=__doc__)
    parser.add_argument("workbook", metavar="WORKBOOK.xlsx", help="workbook written by `tco export`")
    parser.add_argument("--out", metavar="PATH", help="scenario YAML to write (default: print it)")
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    return parser


def run(args) -> int:
    import yaml

    from tco.export.reader import import_workbook

    if args.out:
        check_target(args.out, args.force, "--out")  # before the workbook is read
    scenario, data = import_workbook(args.workbook)
    print_warnings(scenario)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    if not args.out:
        sys.stdout.write(text)
        return 0
    out = atomic_write(args.out, lambda temp: temp.write_text(text, encoding="utf-8"), force=args.force, field="--out")
    edits = len(data.get("set", {}))
    print(f"wrote {out} ({scenario.name}, {edits} value(s) under set)", file=sys.stderr)
    return 0
