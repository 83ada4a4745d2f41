"""``tco fleet``: fleet dynamics -- KV transfer wall, stranded capacity, coordination break-even,
labelled Pareto frontier, specialization tree, routing tiers, tokens-per-watt roadmap.

Settings come from the scenario's ``fleet_dynamics:`` block (see docs/fleet-dynamics.md),
overridden by the options below; the numeric ones are named parameters (``tco params`` lists
them; ``--demand-growth`` ... ``--router-skill`` are shorthands for ``--set fleet_dynamics.<analysis>.<setting>=VALUE``).
"""

from __future__ import annotations

from tco.cli.common import (
    add_format_argument,
    add_scenario_arguments,
    add_wide_argument,
    print_json,
    print_table,
    scenario_from_args,
)
from tco.cli.text import WIDTH, paragraph, table
from tco.foundation.errors import FieldError, InputError
from tco.foundation.files import atomic_write, check_target
from tco.foundation.user_numbers import read_number

#: the analyses (tco.present.fleet_summary.ANALYSES; written out so that --help stays instant)
ANALYSES = ("kv-wall", "stranded", "coordination", "pareto", "interactivity", "tree", "routing", "roadmap")


def add_parser(sub):
    parser = sub.add_parser("fleet", help="fleet dynamics: KV wall, stranded capacity, Pareto, interactivity, tree, "
                                          "routing, roadmap", description=__doc__)
    parser.add_argument("analysis", choices=ANALYSES, help="which analysis to run")
    add_scenario_arguments(parser, writes="--html PATH")
    add_format_argument(parser)
    add_wide_argument(parser)
    parser.add_argument("--option", help="disaggregated option (kv-wall, stranded, coordination) or option (routing)")
    parser.add_argument("--policy", action="append", help="stranded: sizing policy (today, peak, flex); repeatable")
    parser.add_argument("--weeks", type=int, help="stranded: weeks simulated (default 13)")
    parser.add_argument("--demand-growth", help="stranded: request growth [1/yr]")
    parser.add_argument("--prompt-growth", help="stranded: prompt-length growth [1/yr], >= 0")
    parser.add_argument("--output-growth", help="stranded: output-length growth [1/yr], >= 0")
    parser.add_argument("--buffer-share", help="stranded: flexible GPU buffer, share of today's GPU replicas")
    parser.add_argument("--scheduling-overhead", help="coordination: extra device time per token [0-]")
    parser.add_argument("--slack", help="coordination: share of specialized capacity held idle [0-1)")
    parser.add_argument("--small-model", help="routing/roadmap: the small model's id")
    parser.add_argument("--hard-share", help="routing: share of requests only the large model answers")
    parser.add_argument("--router-skill", help="routing: exponent a of the misroute curve h r^(1+a)")
    parser.add_argument("--penalty", help="routing: 'retry' or a dollar penalty per wrong answer")
    parser.add_argument("--devices", help="pareto/tree/interactivity: comma-separated device ids")
    parser.add_argument("--placement", action="append", metavar="PREFILL:DECODE[:N_PREFILL:N_DECODE]",
                        help="pareto: a placement (repeatable); devices per replica optional")
    parser.add_argument("--html", metavar="PATH", help="also write the analysis' plotly figure to an HTML file")
    return parser


def _penalty(text):
    if text is None or text == "retry":
        return text
    try:
        return read_number(text, None, "--penalty")
    except InputError:
        raise InputError.one("--penalty", text, "must be 'retry' or a finite number of USD per wrong answer") from None


def _placement(text: str) -> dict:
    parts = text.split(":")
    if len(parts) not in (2, 4) or not all(parts[:2]):
        raise InputError.one("--placement", text, "must look like PREFILL:DECODE or PREFILL:DECODE:N_PREFILL:N_DECODE")
    out = {"prefill": parts[0], "decode": parts[1]}
    if len(parts) == 4:
        try:
            out.update(prefill_devices_per_replica=int(parts[2]), decode_devices_per_replica=int(parts[3]))
        except ValueError:
            raise InputError.one("--placement", text, "devices per replica must be whole numbers") from None
    return out


def _overrides(args) -> dict:
    """The settings that say what to run, by section (None: the scenario's)."""
    devices = args.devices.split(",") if args.devices else None
    return {
        "stranded": {"option": args.option, "policies": args.policy, "weeks": args.weeks},
        "kv_wall": {"option": args.option},
        "coordination": {"option": args.option},
        "routing": {"option": args.option if args.analysis == "routing" else None, "small_model": args.small_model,
                    "penalty": _penalty(args.penalty)},
        "pareto": {"devices": devices, "placements": [_placement(p) for p in args.placement] if args.placement else None},
        "tree": {"devices": devices},
        "interactivity": {"devices": devices},
    }


#: options that edit a named setting (like ``--set fleet_dynamics.<section>.<setting>=VALUE``): option -> (section,
#: setting) of :data:`tco.inputs.fleet_settings.NAMED_SETTINGS`
SETTING_OPTIONS = {
    "demand_growth": ("stranded", "demand_growth_per_year"),
    "prompt_growth": ("stranded", "prompt_growth_per_year"),
    "output_growth": ("stranded", "output_growth_per_year"),
    "buffer_share": ("stranded", "flex_buffer_share"),
    "scheduling_overhead": ("coordination", "scheduling_overhead"),
    "slack": ("coordination", "slack"),
    "hard_share": ("routing", "hard_share"),
    "router_skill": ("routing", "router_skill"),
}


#: the analyses that read each option (``tco fleet roadmap --option nope`` ran and ignored it): any other refuses it
READ_BY = {
    "option": ("kv-wall", "stranded", "coordination", "routing"),
    **dict.fromkeys(("policy", "weeks", "demand_growth", "prompt_growth", "output_growth", "buffer_share"), ("stranded",)),
    **dict.fromkeys(("scheduling_overhead", "slack"), ("coordination",)),
    **dict.fromkeys(("small_model", "hard_share", "router_skill", "penalty"), ("routing", "roadmap")),
    "devices": ("pareto", "tree", "interactivity"),
    "placement": ("pareto",),
}


def check_flags(args) -> None:
    """Refuse every option given that ``args.analysis`` does not read (:data:`READ_BY`), naming the ones that do."""
    errors = [FieldError(f"--{flag.replace('_', '-')}", getattr(args, flag),
                         f"the {args.analysis} analysis does not read it (it applies to {' and '.join(analyses)})")
              for flag, analyses in READ_BY.items() if getattr(args, flag) is not None and args.analysis not in analyses]
    if errors:
        raise InputError(errors)


def _setting_edits(args) -> dict[str, float]:
    from tco.inputs.fleet_settings import setting_name

    return {setting_name(*setting): value for option, setting in SETTING_OPTIONS.items()
            if (value := getattr(args, option)) is not None}


def run_analysis(name: str, scenario, cfg, training=None) -> tuple[dict, object, object]:
    """``(json payload, table, figure)`` of one analysis; ``training`` feeds the tree's training leaf."""
    from tco.present.fleet_summary import run as run_one

    a = run_one(name, scenario, cfg, training)
    return a.payload, a.table, a.figure


def compact_text(analysis, wide: bool = False) -> str:
    """The analysis' compact table (the app's): one row per record, or (title, value) rows for a single record."""
    from tco.present.tables import cell

    if analysis.pairs:
        record = analysis.records[0]
        return table(["", "value"], [[title, cell(record.get(key), f, scale)] for title, key, f, scale in analysis.columns],
                     None if wide else WIDTH, first_max=60)
    return table([title for title, *_ in analysis.columns],
                 [[cell(r.get(key), f, scale) for _title, key, f, scale in analysis.columns] for r in analysis.records],
                 None if wide else WIDTH)


def run(args) -> int:
    from tco.inputs.fleet_settings import fleet_config
    from tco.present.fleet_summary import kv_sentences
    from tco.present.fleet_summary import run as run_one

    check_flags(args)
    if args.force and not args.html and not args.write_scenario:
        raise InputError.one("--force", True, "applies to --html PATH or --write-scenario PATH only")
    if args.html:
        check_target(args.html, args.force, "--html")
    scenario, training = scenario_from_args(args), None
    if getattr(scenario, "kind", "inference") == "training":  # the analyses run on the fleet serving its model
        from tco.analysis.training import serving_scenario

        training, scenario = scenario, serving_scenario(scenario)
    scenario = scenario.with_values(_setting_edits(args))
    cfg = fleet_config(scenario, _overrides(args))
    analysis = run_one(args.analysis, scenario, cfg, training)
    if args.html:  # plotly.js inlined: the file opens offline, like every HTML tco writes
        atomic_write(args.html, lambda temp: analysis.figure.write_html(temp, include_plotlyjs=True, full_html=True),
                     force=args.force, field="--html")
    if args.format == "json":
        print_json({"analysis": args.analysis, "scenario": scenario.name, "headline": analysis.headline.sentence,
                    **analysis.payload})
        return 0
    if args.format == "csv":
        print_table(analysis.table, "csv")
        return 0
    print(paragraph(f"{analysis.headline.title}: {scenario.title or scenario.name}") + "\n")
    if args.wide:
        print_table(analysis.table, "table", wide=True)
    else:
        print(compact_text(analysis))
    print()
    if args.analysis == "kv-wall":
        from tco.core.names import link_param
        from tco.inputs.variants import scenario_link

        bandwidth = scenario.values()[link_param(scenario_link(scenario), "bandwidth_bytes_per_s")] / 1e9
        print(paragraph(" ".join(kv_sentences(analysis.extra["result"], bandwidth))))
    else:
        print(paragraph(analysis.headline.sentence))
    return 0
