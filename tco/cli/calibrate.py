"""``tco calibrate``: re-fit compute/bandwidth efficiency and sync latency per device class.

Least squares in log space over the suite's measured cases (``fit: true``), plus a user's
own measurements from ``--cases CSV`` (columns in docs/calibration.md). Prints the fitted
values; copying them into assumptions/devices is a deliberate, reviewed step.
"""

from __future__ import annotations

from tco.cli.common import add_suite_arguments, print_json, print_table


def add_parser(sub):
    parser = sub.add_parser("calibrate", help="fit the efficiency parameters per device class to measurements",
                            description=__doc__)
    add_suite_arguments(parser, "fit the training compute efficiency per class to validation/training.yaml instead")
    parser.add_argument("--cases", default=None, metavar="CSV",
                        help="your own measurements, one row each (see docs/calibration.md)")
    return parser


def run(args) -> int:
    import pandas as pd

    from tco.analysis.validation.calibrate import calibrate
    from tco.analysis.validation.cases import cases_from_csv, load_suite

    if args.training:
        from tco.analysis.validation.training import calibrate_training, load_training_suite
        from tco.foundation.errors import InputError

        if args.cases:
            raise InputError.one("--cases", args.cases, "user measurement CSVs calibrate the inference suite only")
        fits = calibrate_training(load_training_suite(args.suite))
    else:
        fits = calibrate(load_suite(args.suite), cases_from_csv(args.cases) if args.cases else [])
    if args.format == "json":
        print_json({"fits": [f.to_dict() for f in fits]})
        return 0
    for fit in fits:
        d = fit.to_dict()
        print(f"class {fit.device_class}: rms ln-error {d['rms_log_error_before']:.3f} (prior) "
              f"-> {d['rms_log_error_after']:.3f} (fit)")
        print_table(pd.DataFrame(d["parameters"]).set_index("name"), "table")
        cases = pd.DataFrame(d["cases"]).set_index("name")
        cases["rel_error_after"] = cases["rel_error_after"].map(lambda v: f"{v:+.1%}")
        print_table(cases, "table")
        print()
    return 0
