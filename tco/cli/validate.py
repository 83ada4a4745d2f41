"""``tco validate``: the model against published measurements (validation/cases.yaml)."""

from __future__ import annotations

from .common import add_format_argument, print_json, print_table


def add_parser(sub):
    parser = sub.add_parser("validate", help="compare the model's predictions with published measurements",
                            description=__doc__)
    parser.add_argument("--suite", default=None, metavar="YAML", help="suite file (default: validation/cases.yaml)")
    add_format_argument(parser, ("table", "json"))
    return parser


def run(args) -> int:
    import pandas as pd

    from ..validation.cases import load_suite
    from ..validation.suite import category_summary, run_suite

    results = run_suite(load_suite(args.suite))
    summary = category_summary(results)
    if args.format == "json":
        print_json({"cases": [r.to_dict() for r in results], "categories": summary,
                    "all_within_tolerance": all(r.within_tolerance for r in results)})
        return 0
    frame = pd.DataFrame([{"case": r.case.name, "category": r.case.category, "predicted": f"{r.predicted:.4g}",
                           "published": f"{r.case.published:.4g}", "unit": r.case.unit, "rel_error": f"{r.rel_error:+.1%}",
                           "band": f"[{r.case.tolerance.low:+.0%}, {r.case.tolerance.high:+.0%}]",
                           "ok": "yes" if r.within_tolerance else "NO"} for r in results]).set_index("case")
    print_table(frame, "table")
    print("\nper category (absolute relative error):")
    table = pd.DataFrame(summary).T
    for column in ("median_abs_rel_error", "worst_abs_rel_error"):
        table[column] = table[column].map(lambda v: f"{v:.1%}")
    print_table(table, "table")
    print("\nsources and tolerance reasons: tco validate --format json, or validation/cases.yaml")
    return 0
