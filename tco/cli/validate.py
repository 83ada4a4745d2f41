"""``tco validate``: the model against published measurements (validation/cases.yaml).

Cases are reported in three groups -- fitted (in sample), in-sample checks, and out of sample
(MLPerf rounds after v4.1, never fitted) -- each summarized by scenario, by device class and by model,
then the device rankings with whether the model reproduces their order.
"""

from __future__ import annotations

from tco.cli.common import add_suite_arguments, print_json, print_table

_TITLES = {"fitted": "in sample, fitted", "in_sample_check": "in sample, checks (not fitted)",
           "out_of_sample": "out of sample (MLPerf v5.0 and later, never fitted)",
           "check": "checks", "out": "out of sample"}


def add_parser(sub):
    parser = sub.add_parser("validate", help="compare the model's predictions with published measurements",
                            description=__doc__)
    add_suite_arguments(parser, "the training suite (validation/training.yaml); out-of-sample cases reported apart")
    return parser


def _percent(frame, columns):
    for column in columns:
        frame[column] = frame[column].map(lambda v: f"{v:.1%}")
    return frame


def _summary_table(stats: dict):
    import pandas as pd

    table = pd.DataFrame(stats).T
    table = table[[c for c in ("cases", "median_abs_rel_error", "worst_abs_rel_error", "passes", "within_tolerance",
                               "worst_case") if c in table]]
    table = table.drop(columns="within_tolerance") if "passes" in table else table
    return _percent(table.rename(columns={"median_abs_rel_error": "median", "worst_abs_rel_error": "worst",
                                          "within_tolerance": "pass", "passes": "pass"}), ("median", "worst"))


def run(args) -> int:
    import pandas as pd

    from tco.analysis.validation.cases import load_suite
    from tco.analysis.validation.suite import category_summary, ranking_summary, run_suite, sample_summary

    if args.training:
        from tco.analysis.validation.training import load_training_suite, run_training_suite

        results = run_training_suite(load_training_suite(args.suite))
        groups = {r.case.name: "out" if r.case.out_of_sample else ("fitted" if r.case.fit else "check") for r in results}
    else:
        suite = load_suite(args.suite)
        results = run_suite(suite)
        groups = {r.case.name: r.group for r in results}
    summary = category_summary(results)
    if args.format == "json":
        data = {"cases": [r.to_dict() for r in results], "categories": summary,
                "all_within_tolerance": all(r.within_tolerance for r in results)}
        if not args.training:
            data["known_misses"] = [r.case.name for r in results if r.case.known_miss]
        if not args.training:
            data.update(samples=sample_summary(results, suite.models), rankings=ranking_summary(results))
        print_json(data)
        return 0
    frame = pd.DataFrame([{"case": r.case.name, "class": r.case.device_class or "-",
                           "scenario": getattr(r.case, "scenario", "-"), "predicted": f"{r.predicted:.4g}",
                           "published": f"{r.case.published:.4g}", "unit": r.case.unit, "rel_error": f"{r.rel_error:+.1%}",
                           "band": f"[{r.case.tolerance.low:+.0%}, {r.case.tolerance.high:+.0%}]",
                           "ok": "yes" if getattr(r, "passes", r.within_tolerance) else "NO", "group": groups[r.case.name]}
                          for r in results]).set_index("case")
    for group in dict.fromkeys(groups.values()):
        part = frame[frame["group"] == group].drop(columns="group")
        print(f"{_TITLES.get(group, group)}:")
        print_table(part, "table")
        print()
    if args.training:
        print("per category (absolute relative error):")
        print_table(_summary_table(summary), "table")
        print("\nsources and tolerance reasons: tco validate --training --format json, or validation/training.yaml")
        return 0
    for group, stats in sample_summary(results, suite.models).items():
        print(f"{_TITLES[group]}: median |error| {stats['all']['median_abs_rel_error']:.1%}, "
              f"worst {stats['all']['worst_abs_rel_error']:.1%} ({stats['all']['cases']} cases)")
        print("  by scenario:")
        print_table(_summary_table(stats["by_scenario"]), "table")
        print("  by device class:")
        print_table(_summary_table(stats["by_class"]), "table")
        print("  by model:")
        print_table(_summary_table(stats["by_model"]), "table")
        print("  by architecture (mixtures of experts apart from dense models):")
        print_table(_summary_table(stats["by_architecture"]), "table")
        print()
    rankings = pd.DataFrame(ranking_summary(results))
    if len(rankings):
        print("device rankings (per accelerator or per user): the order must hold")
        rankings["published"] = rankings["published"].map(lambda v: f"{v:.3g}")
        rankings["predicted"] = rankings["predicted"].map(lambda v: f"{v:.3g}")
        rankings["order_reproduced"] = rankings["order_reproduced"].map(lambda v: "yes" if v else "NO")
        print_table(rankings.set_index("name"), "table")
    print("\nsources and tolerance reasons: tco validate --format json, or validation/cases.yaml")
    return 0
