"""``tco decide``: the decision checklist of the source talks, step by step, answered by the model for a scenario.

Name the workload -> name the objective -> find the bottleneck -> measure the distribution -> price the split ->
test change: the app's Decide page in the terminal (the same answers, :mod:`tco.present.decide`), each step naming
the app tab and the command that go deeper.
"""

from __future__ import annotations

import textwrap

from tco.cli.common import add_scenario_arguments, print_json, scenario_from_args
from tco.cli.text import WIDTH, paragraph

#: the command that goes deeper for each step's app tab
DEEPER = {"assumptions": "tco params", "compare": "tco compare", "uncertainty": "tco study (monte_carlo, sobol)",
          "fleet": "tco fleet", "sensitivity": "tco breakeven"}


def add_parser(sub):
    parser = sub.add_parser("decide", help="the decision checklist, step by step, answered for a scenario",
                            description=__doc__)
    add_scenario_arguments(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    return parser


def steps_text(steps) -> str:
    """The checklist as text: each step's title, its paragraphs wrapped, its lists as bullets, and where to go deeper."""
    from tco.present.decide import Paragraph

    out = []
    for step in steps:
        out.append(step.title)
        for block in step.blocks:
            if isinstance(block, Paragraph):
                out.append(textwrap.indent(paragraph(block.text, WIDTH - 3), "   "))
            else:
                out += [textwrap.fill(item, WIDTH, initial_indent="   - ", subsequent_indent="     ",
                                      break_on_hyphens=False) for item in block.items]
        out.append(f"   Deeper: {DEEPER.get(step.tab, step.tab)}\n")
    return "\n".join(out).rstrip("\n")


def run(args) -> int:
    from tco.present.decide import checklist

    scenario = scenario_from_args(args)
    steps = checklist(scenario)
    if args.format == "json":
        print_json({"scenario": scenario.name, "steps": [s.to_dict() for s in steps]})
        return 0
    print(paragraph(f"Decide: {scenario.title or scenario.name}") + "\n")
    print(steps_text(steps))
    return 0
