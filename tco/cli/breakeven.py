"""``tco breakeven``: the value of a parameter at which an option ties the baseline."""

from __future__ import annotations

from ..errors import InputError
from ..solvers import BREAKEVEN_METRICS
from .common import add_format_argument, add_scenario_arguments, print_json, print_table, renamed, scenario_from_args

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
    return parser


def run(args) -> int:
    import pandas as pd

    from ..api import breakeven

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
    frame = pd.DataFrame([r.to_dict() for r in results]).set_index("option")
    print_table(frame, args.format)
    if args.format == "table":
        for r in results:
            if r.status == "crosses":
                side = "above" if r.wins_above else "below"
                print(f"{r.option} wins {side} {r.param} = {r.value:.6g} {r.unit} (base value {r.base_value:g})")
            else:
                print(f"{r.option}: {r.status} within [{r.low:g}, {r.high:g}] {r.unit}")
    return 0
