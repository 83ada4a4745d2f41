"""``tco validate``: the model against published measurements (validation/cases.yaml)."""

from __future__ import annotations

from .common import add_suite_arguments, print_json, print_table


def add_parser(sub):
    parser = sub.add_parser("validate", help="compare the model's predictions with published measurements",
                            description=__doc__)
    add_suite_arguments(parser, "the training suite (validation/training.yaml); out-of-sample cases reported apart")
    return parser


def run(args) -> int:
    import pandas as pd

    from ..validation.cases import load_suite
    from ..validation.suite import category_summary, run_suite

    if args.training:
        from ..validation.training import load_training_suite, run_training_suite

        results = run_training_suite(load_training_suite(args.suite))
    else:
        results = run_suite(load_suite(args.suite))
    summary = category_summary(results)
    if args.format == "json":
        print_json({"cases": [r.to_dict() for r in results], "categories": summary,
                    "all_within_tolerance": all(r.within_tolerance for r in results)})
        return 0
    frame = pd.DataFrame([{"case": r.case.name, "category": r.case.category, "predicted": f"{r.predicted:.4g}",
                           "published": f"{r.case.published:.4g}", "unit": r.case.unit, "rel_error": f"{r.rel_error:+.1%}",
                           "band": f"[{r.case.tolerance.low:+.0%}, {r.case.tolerance.high:+.0%}]",
                           "ok": "yes" if r.within_tolerance else "NO",
                           "sample": "out" if getattr(r.case, "out_of_sample", False) else ("fit" if r.case.fit else "check")}
                          for r in results]).set_index("case")
    for sample, title in (("fit", "in sample (fitted)"), ("check", "checks"), ("out", "out of sample")):
        part = frame[frame["sample"] == sample].drop(columns="sample")
        if len(part):
            print(f"{title}:")
            print_table(part, "table")
            print()
    print("\nper category (absolute relative error):")
    table = pd.DataFrame(summary).T
    for column in ("median_abs_rel_error", "worst_abs_rel_error"):
        table[column] = table[column].map(lambda v: f"{v:.1%}")
    print_table(table, "table")
    where = "validation/training.yaml" if args.training else "validation/cases.yaml"
    print(f"\nsources and tolerance reasons: tco validate --format json, or {where}")
    return 0
