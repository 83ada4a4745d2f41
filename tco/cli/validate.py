"""``tco validate``: the model against published measurements (validation/cases.yaml).

The summary comes first: how many cases pass in each group -- fitted (in sample), in-sample checks, and out of sample
(MLPerf rounds after v4.1, never fitted) -- and per category, and which failures are not documented known misses;
then each group summarized by scenario, by device class and by model, the device rankings with whether the model
reproduces their order, and every case. The command is a check: it exits 1 when a case fails that is not a documented
known miss (validation/cases.yaml, ``known_miss``), 0 otherwise.
"""

from __future__ import annotations

from tco.cli.common import add_suite_arguments, print_json, print_table
from tco.cli.text import paragraph

_TITLES = {"fitted": "in sample, fitted", "in_sample_check": "in sample, checks (not fitted)",
           "out_of_sample": "out of sample (MLPerf v5.0 and later, public sweeps, 2025 disclosures; never fitted)",
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
    from tco.analysis.validation.suite import (
        category_summary,
        ranking_summary,
        run_suite,
        sample_summary,
        unexpected_failures,
    )

    if args.training:
        from tco.analysis.validation.training import load_training_suite, run_training_suite

        results = run_training_suite(load_training_suite(args.suite))
        groups = {r.case.name: "out" if r.case.out_of_sample else ("fitted" if r.case.fit else "check") for r in results}
    else:
        suite = load_suite(args.suite)
        results = run_suite(suite)
        groups = {r.case.name: r.group for r in results}
    summary = category_summary(results)
    failures = unexpected_failures(results)
    code = 1 if failures else 0
    if args.format == "json":
        data = {"cases": [r.to_dict() for r in results], "categories": summary,
                "all_within_tolerance": all(r.within_tolerance for r in results),
                "unexpected_failures": [r.case.name for r in failures]}
        if not args.training:
            data.update(known_misses=[r.case.name for r in results if r.case.known_miss],
                        samples=sample_summary(results, suite.models), rankings=ranking_summary(results))
        print_json(data)
        return code
    print(paragraph(passed_line(results, failures, groups)))
    print("\nper category (absolute relative error):")
    print_table(_summary_table(summary), "table")
    if not args.training:
        for group, stats in sample_summary(results, suite.models).items():
            print(f"\n{_TITLES[group]}: median |error| {stats['all']['median_abs_rel_error']:.1%}, "
                  f"worst {stats['all']['worst_abs_rel_error']:.1%}, {stats['all']['passes']} of "
                  f"{stats['all']['cases']} cases pass")
            for title, key in (("by scenario", "by_scenario"), ("by device class", "by_class"), ("by model", "by_model"),
                               ("by architecture (mixtures of experts apart from dense models)", "by_architecture")):
                print(f"  {title}:")
                print_table(_summary_table(stats[key]), "table")
        rankings = pd.DataFrame(ranking_summary(results))
        if len(rankings):
            print("\ndevice rankings (per accelerator or per user): the order must hold")
            rankings["published"] = rankings["published"].map(lambda v: f"{v:.3g}")
            rankings["predicted"] = rankings["predicted"].map(lambda v: f"{v:.3g}")
            rankings["order_reproduced"] = rankings["order_reproduced"].map(lambda v: "yes" if v else "NO")
            print_table(rankings.set_index("name"), "table")
    frame = pd.DataFrame([{"case": r.case.name, "class": r.case.device_class or "-",
                           "scenario": getattr(r.case, "scenario", "-"), "predicted": f"{r.predicted:.4g}",
                           "published": f"{r.case.published:.4g}", "unit": r.case.unit, "rel_error": f"{r.rel_error:+.1%}",
                           "band": f"[{r.case.tolerance.low:+.0%}, {r.case.tolerance.high:+.0%}]",
                           "ok": "yes" if r.passes else ("known miss" if getattr(r.case, "known_miss", None) else "NO"),
                           "group": groups[r.case.name]}
                          for r in results]).set_index("case")
    for group in dict.fromkeys(groups.values()):
        part = frame[frame["group"] == group].drop(columns="group")
        print(f"\n{_TITLES.get(group, group)}, every case:")
        print_table(part, "table")
    suite_file = "validation/training.yaml" if args.training else "validation/cases.yaml"
    print(f"\nsources, tolerance reasons and known misses: tco validate{' --training' if args.training else ''} "
          f"--format json, or {suite_file}")
    return code


def passed_line(results, failures, groups: dict[str, str]) -> str:
    """The summary's first sentence: cases passing per group, the documented known misses, and the failures that are not.

    Parameters
    ----------
    results : Sequence[tco.analysis.validation.suite.CaseResult]
        The suite's results.
    failures : Sequence[tco.analysis.validation.suite.CaseResult]
        The failing cases that are not documented known misses.
    groups : dict[str, str]
        Each case's group by name.

    Returns
    -------
    str
        ``128 of 163 cases pass (in sample, fitted: 20 of 20; ...); the other 35 are documented known misses.``
    """
    per = "; ".join(f"{_TITLES.get(g, g)}: {sum(r.passes for r in results if groups[r.case.name] == g)} of "
                    f"{sum(groups[r.case.name] == g for r in results)}" for g in dict.fromkeys(groups.values()))
    passing = sum(r.passes for r in results)
    known = len(results) - passing - len(failures)
    text = f"{passing} of {len(results)} cases pass ({per})"
    text += f"; {known} fail as documented known misses" if known else ""
    if failures:
        return text + (f"; {len(failures)} fail that are not known misses (exit code 1): "
                       + ", ".join(r.case.name for r in failures) + ".")
    return text + "; no other case fails."
