"""``tco breakeven``: where, along one parameter, an option starts or stops beating the baseline.

Every crossing in the range is reported, with the feasibility windows between them (where
an option starts or stops meeting its latency targets), not only the first.
"""

from __future__ import annotations

from tco.analysis.solvers import BREAKEVEN_METRICS
from tco.cli.common import (
    add_format_argument,
    add_scenario_arguments,
    add_wide_argument,
    print_json,
    print_table,
    renamed,
    scenario_from_args,
)
from tco.cli.text import WIDTH, paragraph, table
from tco.foundation.errors import InputError
from tco.foundation.formatting import NONE

#: the API's names for the break-even inputs -> this command's flags
FLAGS = {"parameter": "--param", "low": "--range low", "high": "--range high", "range": "--range", "metric": "--metric",
         "option": "--option", "target": "--target"}


def add_parser(sub):
    parser = sub.add_parser("breakeven", help="find where an option's cost equals the baseline's",
                            description=__doc__)
    add_scenario_arguments(parser)
    parser.add_argument("--param", required=True, metavar="NAME", help="parameter to solve for (see `tco params`)")
    parser.add_argument("--range", nargs=2, type=float, metavar=("LO", "HI"),
                        help="search range (default: the parameter's low and high)")
    parser.add_argument("--metric", choices=list(BREAKEVEN_METRICS), default="lcot",
                        help="lcot: equal cost per output token; npv: NPV of choosing the option = target; "
                             "ratio: option/baseline cost = target")
    parser.add_argument("--target", type=float, default=None, help="target of the metric (npv: 0, ratio: 1)")
    parser.add_argument("--option", default=None, help="option to compare (default: every non-baseline option)")
    add_format_argument(parser)
    add_wide_argument(parser)
    return parser


def windows_text(r, wide: bool = False) -> str:
    """The range cut at every crossing and feasibility edge: one row per window (who wins, who meets the targets)."""
    from tco.foundation.formatting import quantity

    plain = r.metric == "lcot" and r.target == 0
    rows = []
    for w in r.windows:
        if plain:
            verdict = r.option if w["option_wins"] else (r.baseline if w["baseline_feasible"] else NONE)
        else:
            verdict = "yes" if w["option_wins"] else "no"
        rows.append([quantity(w["from"], r.unit, 4), quantity(w["to"], r.unit, 4), verdict,
                     "yes" if w["option_feasible"] else "no", "yes" if w["baseline_feasible"] else "no"])
    header = ["from", "to", "cheaper" if plain else f"{r.option} {r._criterion()[0]}",
              f"{r.option} meets latency targets", f"{r.baseline} meets latency targets"]
    return table(header, rows, None if wide else WIDTH)


def run(args) -> int:
    import pandas as pd

    from tco.analysis.breakeven import breakeven

    scenario = scenario_from_args(args)
    low, high = args.range if args.range else (None, None)
    try:
        results = breakeven(scenario, args.param, low, high, args.metric, args.option, args.target)
    except InputError as exc:
        raise renamed(exc, FLAGS) from None
    if args.format == "json":
        print_json({"scenario": scenario.name, "baseline": scenario.structure.baseline,
                    "results": [r.to_dict() for r in results]})
        return 0
    if args.format == "csv":
        frame = pd.DataFrame([{k: v for k, v in r.to_dict().items() if k not in ("crossings", "windows")}
                              for r in results]).set_index("option")
        print_table(frame, "csv")
        return 0
    for i, r in enumerate(results):
        print(("\n" if i else "") + windows_text(r, args.wide))
        print(paragraph(r.sentence()))
    return 0
