"""The ``tco`` command line: one module per subcommand, each with ``add_parser`` and ``run``.

A user mistake (bad scenario, unknown parameter, value out of its domain) prints one
message per broken rule, naming the field, the value and the rule, and exits with 2.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys

from tco.foundation.errors import InputError, shown_lines

#: subcommand modules under tco.cli, in the order ``tco --help`` lists them
COMMANDS = ("compare", "decide", "params", "breakeven", "study", "fleet", "export", "import_", "validate", "calibrate", "app")


def build_parser() -> argparse.ArgumentParser:
    from tco import __version__

    parser = argparse.ArgumentParser(prog="tco", description=(
        "Total cost of ownership of AI inference hardware: when does specialized silicon cost less "
        "per useful token than general-purpose GPUs?"))
    parser.add_argument("--version", action="version", version=f"tco {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f".{name}", __name__)
        module.add_parser(sub).set_defaults(run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except InputError as exc:
        for line in shown_lines(exc.errors):
            print(f"tco: error: {line}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `tco params | head`
        return 0
    except OSError as exc:  # a file or folder the user named: one line, never a traceback
        where = exc.filename if exc.filename is not None else "file system"
        print(f"tco: error: {where}: {exc.strerror or exc}", file=sys.stderr)
        return 2


def _exit_on_signal(signum, _frame) -> None:
    raise SystemExit(128 + signum)


def run() -> None:
    # a kill (SIGTERM) or a closed terminal (SIGHUP) ends the command as an exit does: its temporary files and the
    # app's cache folder are removed on the way out (a kill -9 cannot be caught: the next run removes them)
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _exit_on_signal)
    sys.exit(main())
