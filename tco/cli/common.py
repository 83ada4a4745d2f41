"""Arguments and output helpers shared by the subcommands."""

from __future__ import annotations

import argparse
import json
import sys

from tco.cli.text import WIDTH, table
from tco.foundation.files import check_target


def add_scenario_arguments(parser, with_set: bool = True, writes: str | None = None) -> None:
    """The scenario (a bundled name or a file), its ``--set`` edits and the option flags (:func:`add_option_arguments`);
    ``writes`` names the other file the command writes, which ``--force`` also overwrites."""
    parser.add_argument("scenario", nargs="?", default=None, metavar="SCENARIO",
                        help="bundled scenario name (default: 'default') or path to a scenario YAML file")
    if with_set:
        parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                            help="override a parameter's base value (repeatable), e.g. economics.discount_rate=0.08")
    add_option_arguments(parser, writes)


#: the option flags -> the kind of edit each adds (tco.inputs.option_edits.KINDS), and what the API's error paths are
OPTION_FLAGS = {"--add-option": "add", "--remove-option": "remove", "--rename-option": "rename", "--baseline": "baseline",
                "--model": "model", "--node": "node"}


class _OptionEdit(argparse.Action):
    """Collects every option flag, in the order given, as the text of its edit (``add:b200=colocated:b200``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, [*getattr(namespace, self.dest), (option_string, f"{self.const}:{values}")])


def add_option_arguments(parser, writes: str | None = None) -> None:
    """The options builder's flags (applied in the order given, before ``--set``), ``--write-scenario`` and ``--force``;
    ``writes`` names the other file the command writes (``--force`` overwrites it too)."""
    parser.set_defaults(option_edits=[], writes=writes)
    for flag, metavar, text in (
            ("--add-option", "NAME=SPEC", "add an option (repeatable; an existing NAME is swapped): NAME=colocated:DEVICE or "
                                          "NAME=prefill:DEVICE,decode:DEVICE,link:LINK; pin a layout with tp:N, pp:N "
                                          "(prefill.tp:N, decode.pp:N, ... for a split), rent it with rented:yes "
                                          "(decode.rented:yes); ids of assumptions/devices/ and links.yaml"),
            ("--remove-option", "NAME", "remove an option (repeatable)"),
            ("--rename-option", "OLD=NEW", "rename an option (repeatable); the baseline and its edits follow"),
            ("--baseline", "NAME", "compare every other option against this one"),
            ("--model", "MODEL", "serve another model of the catalog (assumptions/models/)"),
            ("--node", "NODE", "build the scenario's chip at another process node (assumptions/nre.yaml: its NRE, wafer "
                               "price, defect density, time to market and scaling)")):
        parser.add_argument(flag, action=_OptionEdit, dest="option_edits", const=OPTION_FLAGS[flag], metavar=metavar,
                            help=text)
    parser.add_argument("--write-scenario", metavar="PATH", default=None,
                        help="write the scenario as run (options built, --set edits under set:) to a YAML file")
    parser.add_argument("--force", action="store_true",
                        help=f"overwrite an existing file at --write-scenario{f' or {writes}' if writes else ''}")


def built_scenario(scenario, args):
    """``scenario`` with the option flags of ``args`` applied in order (:func:`tco.inputs.option_edits.edited_scenario`),
    errors named by flag."""
    from tco.foundation.errors import FieldError, InputError
    from tco.inputs.option_edits import edited_scenario, option_edit

    flags = {kind: flag for flag, kind in OPTION_FLAGS.items()} | {"options": next(iter(args.option_edits), ("",))[0]}
    try:
        return edited_scenario(scenario, [option_edit(text, flag) for flag, text in args.option_edits])
    except InputError as exc:
        raise InputError([FieldError(flags.get(e.path, e.path), e.value, e.rule) for e in exc.errors]) from None


def written_scenario(scenario, args):
    """``scenario``, written as YAML to ``--write-scenario`` when given (the line saying so on stderr)."""
    from tco.foundation.errors import InputError
    from tco.foundation.files import atomic_write

    if args.force and not args.write_scenario and args.writes is None:
        raise InputError.one("--force", True, "applies to --write-scenario PATH only")
    if args.write_scenario:
        text = scenario.to_yaml()
        path = atomic_write(args.write_scenario, lambda temp: temp.write_text(text, encoding="utf-8"), force=args.force,
                            field="--write-scenario")
        print(f"wrote {path} ({scenario.name}: {len(scenario.spec.options)} options, {len(scenario.spec.set)} value(s) "
              "under set)", file=sys.stderr)
    return scenario


def add_format_argument(parser, choices=("table", "json", "csv")) -> None:
    parser.add_argument("--format", choices=choices, default="table", help="output format (default: table)")


def add_suite_arguments(parser, training_help: str) -> None:
    """``--suite`` (a validation suite file) and ``--training`` (the training suite instead), output as table or json:
    what the commands that read the validation suites share."""
    parser.add_argument("--suite", default=None, metavar="YAML", help="suite file (default: validation/cases.yaml)")
    parser.add_argument("--training", action="store_true", help=training_help)
    add_format_argument(parser, ("table", "json"))


def scenario_from_args(args):
    """The scenario named by ``args.scenario`` with its options built (:func:`built_scenario`) and every ``--set`` applied
    (validated), written to ``--write-scenario`` when given; its warnings are printed to stderr."""
    from tco.inputs.loading import load_scenario
    from tco.inputs.parameters import parse_assignment

    if args.write_scenario:
        check_target(args.write_scenario, args.force, "--write-scenario")  # before anything is computed
    scenario = built_scenario(load_scenario(args.scenario), args)
    updates = dict(parse_assignment(item) for item in getattr(args, "set", []) or [])
    return print_warnings(written_scenario(scenario.with_values(updates), args))


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
