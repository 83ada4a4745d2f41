"""``tco study``: run a sensitivity study file and write its tables, figures and summary."""

from __future__ import annotations

import sys
from pathlib import Path

from tco.cli.common import add_option_arguments, built_scenario, print_warnings, written_scenario
from tco.cli.text import WIDTH, paragraph
from tco.foundation.errors import FieldError, InputError
from tco.foundation.limits import MAX_WORKERS


def add_parser(sub):
    parser = sub.add_parser("study", help="run a sensitivity study (tornado, sweep, map, Monte Carlo, Sobol, Morris)",
                            description=__doc__)
    parser.add_argument("file", metavar="FILE",
                        help="study YAML (bundled name under scenarios/studies/, a path, or a scenario with a study: section)")
    parser.add_argument("--out", default=None, metavar="DIR", help="output folder (default: exports/<study-name>)")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: the study's seed)")
    parser.add_argument("--samples", type=int, default=None, help="Monte Carlo samples (overrides the study)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None, metavar="N",
                       help="spread the chunks over N local processes (a dask.distributed LocalCluster)")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="send the chunks to an existing dask.distributed scheduler (e.g. tcp://10.0.0.5:8786)")
    parser.add_argument("--spread", action="append", default=[], metavar="NAME=SPEC",
                        help="draw an input from another distribution or range (repeatable): NAME=DISTRIBUTION,low:X,"
                             "high:Y, each part optional, e.g. workload.requests_per_s=uniform,low:50 (the rules of "
                             "uncertainty: in a scenario file)")
    add_option_arguments(parser)
    return parser


def spreads_from_flags(texts: list[str]) -> dict[str, dict[str, str]]:
    """The ``--spread`` flags as ``{name: {distribution, low, high}}`` (:meth:`tco.inputs.scenario.Scenario.with_spreads`
    checks the values); a flag that is not ``NAME=PART,...`` with parts ``DISTRIBUTION``, ``low:X`` or ``high:Y``
    is named.

    Parameters
    ----------
    texts : list of str
        The flags' values, in order (a later flag on the same name replaces the earlier).

    Returns
    -------
    dict[str, dict[str, str]]
        Per input, the parts given, as text.
    """
    from tco.inputs.parameters import SPREAD_KEYS  # pydantic: loaded by the commands that read a scenario only

    spreads, errors = {}, []
    for text in texts:
        name, sep, rest = text.partition("=")
        entry = {}
        for part in rest.split(",") if sep else ():
            key, colon, value = part.partition(":")
            key, value = key.strip(), value.strip()
            if colon and key in SPREAD_KEYS and value and key not in entry:
                entry[key] = value
            elif not colon and key and "distribution" not in entry:
                entry["distribution"] = key
            else:
                entry = None
                break
        if not name.strip() or not entry:
            errors.append(FieldError("--spread", text, "must look like NAME=DISTRIBUTION,low:X,high:Y (each part "
                                                       "optional, at least one, each once)"))
        else:
            spreads[name.strip()] = entry
    if errors:
        raise InputError(errors)
    return spreads


def spread_scenario(scenario, texts: list[str]):
    """``scenario`` with the ``--spread`` flags applied (:meth:`tco.inputs.scenario.Scenario.with_spreads`), errors
    named by the flag (``--spread workload.requests_per_s.low``), as :func:`tco.cli.common.built_scenario` names the
    option flags."""
    try:
        return scenario.with_spreads(spreads_from_flags(texts))
    except InputError as exc:
        raise InputError([FieldError("--spread " + e.path.removeprefix("uncertainty.") if e.path.startswith("uncertainty.")
                                     else e.path, e.value, e.rule) for e in exc.errors]) from None


def run(args) -> int:
    from tco.export.study_folder import check_output_dir, run_study
    from tco.studies.parallel import ChunkRunner, StudyInterrupted, check_scheduler_address
    from tco.studies.spec import check_study, check_study_sizes, load_study, study_warnings

    for flag, value, minimum in (("--samples", args.samples, 1), ("--seed", args.seed, 0), ("--workers", args.workers, 1)):
        if value is not None and value < minimum:
            raise InputError.one(flag, value, f"must be an integer >= {minimum}")
    if args.workers is not None and args.workers > MAX_WORKERS:
        raise InputError.one("--workers", args.workers, f"must be at most {MAX_WORKERS}, the cores of this machine "
                                                         "(each worker is a process; use --scheduler for a cluster)")
    if args.scheduler is not None:
        check_scheduler_address(args.scheduler, "--scheduler")
    study, scenario = load_study(args.file)
    if args.option_edits:  # the study's scenario with its options built, checked against the study again
        scenario = built_scenario(scenario, args)
        check_study(study, scenario)
    if args.spread:
        scenario = spread_scenario(scenario, args.spread)
        check_study(study, scenario)
    print_warnings(written_scenario(scenario, args))
    for warning in study_warnings(study, scenario):
        print(f"tco: warning: {warning}", file=sys.stderr)
    if args.samples is not None:
        if study.analyses.monte_carlo is None:
            raise InputError.one("--samples", args.samples, f"study {study.name} has no monte_carlo analysis")
        analyses = study.analyses.model_copy(update={
            "monte_carlo": study.analyses.monte_carlo.model_copy(update={"samples": args.samples})})
        study = study.model_copy(update={"analyses": analyses})
    out = Path(args.out) if args.out else Path("exports") / study.name
    check_output_dir(out)  # before a cluster starts: a refused folder or size costs nothing
    check_study_sizes(study, scenario, ChunkRunner(args.workers, args.scheduler))
    try:
        with ChunkRunner(args.workers, args.scheduler) as runner:
            run_study(study, scenario, out, args.seed, runner=runner)
    except StudyInterrupted as exc:
        done = ", ".join(exc.completed_analyses) or "none"
        print(f"tco: {exc}\ntco: analyses completed before it: {done}; nothing written to {out}", file=sys.stderr)
        return 130 if isinstance(exc.cause, KeyboardInterrupt) else 1
    except OSError as exc:  # the scheduler cannot be reached
        if args.scheduler is None:
            raise
        raise InputError.one("--scheduler", args.scheduler, f"cannot reach a dask.distributed scheduler there ({exc})") from None
    print(paragraph(f"{study.name}: {' '.join(study.question.split())}"), file=sys.stderr)
    print(out)
    print_findings(out)
    return 0


def print_findings(out: Path) -> None:
    """The study's findings (who wins how often, the top drivers, the break-evens), read from its summary.json."""
    import json

    from tco.present.study_findings import findings

    lines = findings(json.loads((out / "summary.json").read_text(encoding="utf-8")))
    if lines:
        print("\nfindings:")
        for line in lines:
            print(paragraph(f"- {line}", WIDTH - 2).replace("\n", "\n  "))  # the indent stays within WIDTH
