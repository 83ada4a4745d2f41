"""``tco import``: read a workbook's edited Inputs back into a scenario file that validates."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from ..errors import InputError


def add_parser(sub):
    parser = sub.add_parser("import", help="read a workbook written by `tco export` back into a scenario file",
                            description=__doc__)
    parser.add_argument("workbook", metavar="WORKBOOK.xlsx", help="workbook written by `tco export`")
    parser.add_argument("--out", metavar="PATH", help="scenario YAML to write (default: print it)")
    parser.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    return parser


def run(args) -> int:
    import yaml

    from ..export.reader import import_workbook

    scenario, data = import_workbook(args.workbook)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    if not args.out:
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    if out.exists() and not args.force:
        raise InputError.one("--out", str(out), "exists already; pass --force to overwrite it")
    handle, temp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent if str(out.parent) else ".")
    try:
        with os.fdopen(handle, "w") as f:
            f.write(text)
        os.replace(temp, out)
    finally:
        if os.path.exists(temp):
            os.remove(temp)
    edits = len(data.get("set", {}))
    print(f"wrote {out} ({scenario.name}, {edits} value(s) under set)", file=sys.stderr)
    return 0
