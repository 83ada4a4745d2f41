"""Arguments and output helpers shared by the subcommands."""

from __future__ import annotations

import json
import sys

from tco.cli.text import WIDTH, table


def add_scenario_arguments(parser, with_set: bool = True) -> None:
    parser.add_argument("scenario", nargs="?", default=None, metavar="SCENARIO",
                        help="bundled scenario name (default: 'default') or path to a scenario YAML file")
    if with_set:
        parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                            help="override a parameter's base value (repeatable), e.g. economics.discount_rate=0.08")


def add_format_argument(parser, choices=("table", "json", "csv")) -> None:
    parser.add_argument("--format", choices=choices, default="table", help="output format (default: table)")


def add_suite_arguments(parser, training_help: str) -> None:
    """``--suite`` (a validation suite file) and ``--training`` (the training suite instead), output as table or json:
    what the commands that read the validation suites share."""
    parser.add_argument("--suite", default=None, metavar="YAML", help="suite file (default: validation/cases.yaml)")
    parser.add_argument("--training", action="store_true", help=training_help)
    add_format_argument(parser, ("table", "json"))


def scenario_from_args(args):
    """The scenario named by ``args.scenario`` with every ``--set`` applied (validated); its
    warnings are printed to stderr."""
    from tco.inputs.loading import load_scenario
    from tco.inputs.parameters import parse_assignment

    scenario = load_scenario(args.scenario)
    updates = dict(parse_assignment(item) for item in getattr(args, "set", []) or [])
    return print_warnings(scenario.with_values(updates))


def print_warnings(scenario):
    """Print each of the scenario's warnings as one ``tco: warning:`` line on stderr; returns the scenario."""
    from tco.foundation.errors import shown_lines

    for line in shown_lines(list(scenario.warnings)):
        print(f"tco: warning: {line}", file=sys.stderr)
    return scenario


def renamed(exc, flags: dict[str, str]):
    """``exc`` (an :class:`InputError`) with the API's field names replaced by the command's flags."""
    from tco.foundation.errors import FieldError, InputError

    return InputError([FieldError(flags.get(e.path, e.path), e.value, e.rule) for e in exc.errors])


def print_json(data) -> None:
    from tco.foundation.plain_values import json_safe

    json.dump(json_safe(data), sys.stdout, indent=2)
    sys.stdout.write("\n")


def add_wide_argument(parser) -> None:
    parser.add_argument("--wide", action="store_true",
                        help=f"show every column and row, unwrapped (the table fits {WIDTH} columns otherwise)")


def cell_text(value) -> str:
    """A table cell: 4 significant figures for a number, yes/no for a flag, an em dash for none."""
    import numpy as np

    from tco.foundation.formatting import NONE, sig

    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return sig(float(value), 4)
    return NONE if value is None or value != value else str(value)


def frame_text(frame, wide: bool = False) -> str:
    """A DataFrame as a text table: the index first, numbers at 4 significant figures, em dash for none."""
    index = frame.index.names if any(frame.index.names) else [""]
    header = [" / ".join(str(n) for n in index if n), *map(str, frame.columns)]
    rows = [[" / ".join(map(str, key)) if isinstance(key, tuple) else str(key), *(cell_text(v) for v in row)]
            for key, row in zip(frame.index, frame.itertuples(index=False), strict=True)]
    return table(header, rows, None if wide else WIDTH)


def print_table(frame, fmt: str, wide: bool = False) -> None:
    if fmt == "csv":
        from tco.foundation.safe_csv import to_csv

        to_csv(frame, sys.stdout)
    else:
        print(frame_text(frame, wide))
