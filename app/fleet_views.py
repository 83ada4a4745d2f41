"""The Fleet tab's views: each is one analysis of :mod:`tco.dynamics` for the user's scenario (the callback bodies;
benchmarked), run through :func:`tco.present.fleet_summary.run` like ``tco fleet``.

Every view returns ``(notice, *tables, *figures)``. ``notice`` is None when the view has
something to show; otherwise it says why not (the scenario has no disaggregated option, or
an input breaks a rule) and the tables are None and the figures say so too. No view raises
on bad input. :func:`summary_view` is the tab's opening: one card per analysis with its
headline figure, and why its costs differ from the Compare tab's.
"""

from __future__ import annotations

from dash import html

from tco.analysis.training import serving_scenario
from tco.core.names import link_param
from tco.foundation.errors import InputError
from tco.foundation.formatting import quantity
from tco.foundation.user_numbers import read_number
from tco.inputs.fleet_settings import NAMED_SETTINGS, POLICIES, fleet_config, setting_name
from tco.inputs.variants import scenario_link
from tco.present import fleet_figures as figures
from tco.present.fleet_summary import ANALYSES, NEEDS_SPLIT, TITLES, kv_sentences, reconciliation
from tco.present.fleet_summary import run as run_analysis

from .charts import for_app, message_figure
from .context import error_list
from .tables import pairs_table, records_table, table_block

GB = 1e9

#: stranded-capacity settings the user edits: field of tco.inputs.fleet_settings.Stranded -> label with unit (the
#: named ones are edits of the parameters ``fleet_dynamics.stranded.<field>``, local to the tab)
STRANDED_INPUTS = {"demand_growth_per_year": "demand growth [1/yr]", "prompt_growth_per_year": "prompt-length drift [1/yr]",
                   "output_growth_per_year": "output-length drift [1/yr]",
                   "flex_buffer_share": "flex GPU buffer [share of GPU replicas]", "weeks": "weeks simulated"}
#: the sub-tab that shows each analysis
SECTION = {"kv-wall": "kv", "stranded": "stranded", "pareto": "pareto", "interactivity": "interactivity",
           "coordination": "coordination", "tree": "coordination", "routing": "routing", "roadmap": "routing"}


def not_applicable(scenario) -> str | None:
    """Why the split-fleet views do not apply to ``scenario``, or None when they do."""
    if any(o.disaggregated for o in scenario.structure.options):
        return None
    return (f"Does not apply to scenario '{scenario.name}': it has no disaggregated option (prefill on one device type, "
            "decode on another, joined by a KV link). Add one to the scenario, or pick 'default' or 'fleet-split'.")


def _skip(notice, tables: int, figs: int) -> tuple:
    reason = notice if isinstance(notice, str) else "see the message above"
    return (html.P(notice, className="hint not-applicable") if isinstance(notice, str) else notice,
            *[None] * tables, *[message_figure(reason) for _ in range(figs)])


def _serving(scenario):
    """``(the scenario the fleet analyses run on, the training scenario for the tree's training leaf or None)``."""
    if getattr(scenario, "kind", "inference") == "training":
        return serving_scenario(scenario), scenario
    return scenario, None


def _answer(view, tables: int, figs: int, needs_split: bool):
    """``view`` with a plain explanation instead of an error (scenario without a split, or an input breaking a rule).

    On a ``kind: training`` scenario the views run on its serving scenario (``serving.scenario``),
    the tree's training leaf from the training scenario.
    """

    def guarded(scenario, *args):
        try:
            scenario, training = _serving(scenario)
        except InputError as exc:
            return _skip(error_list(exc), tables, figs)
        reason = not_applicable(scenario) if needs_split else None
        if reason:
            return _skip(reason, tables, figs)
        try:
            return (None, *view(scenario, training, *args))
        except InputError as exc:
            return _skip(error_list(exc), tables, figs)

    guarded.__doc__ = view.__doc__
    return guarded


def _table(analysis, ident: str):
    if analysis.pairs:
        return pairs_table(analysis.records[0], analysis.columns, ident)
    return records_table(analysis.records, analysis.columns, ident)


def _kv(scenario, _training, bandwidth_gbps=None):
    """KV transfer wall at the scenario's link bandwidth (or ``bandwidth_gbps`` [GB/s])."""

    link = scenario_link(scenario)
    if bandwidth_gbps not in (None, ""):
        gbps = read_number(bandwidth_gbps, None, "KV link bandwidth [GB/s]")
        scenario = scenario.with_values({link_param(link, "bandwidth_bytes_per_s"): gbps * GB})
    a = run_analysis("kv-wall", scenario, fleet_config(scenario))
    bandwidth = scenario.values()[link_param(link, "bandwidth_bytes_per_s")] / GB
    result = a.extra["result"]
    summary = html.Ul(id="kv-breakevens", children=[html.Li(line) for line in kv_sentences(result, bandwidth)])
    return summary, for_app(figures.kv_wall_figure(result)), for_app(figures.kv_gain_figure(result))


def _stranded(scenario, _training, policy: str, settings: dict):
    """Quarter simulation of every policy beside the homogeneous GPU fleet; the hourly backlog of ``policy``."""

    named = {setting_name("stranded", k): v for k, v in settings.items() if k in NAMED_SETTINGS["stranded"]}
    run = {k: v for k, v in settings.items() if k not in NAMED_SETTINGS["stranded"]}
    scenario = scenario.with_values(named)
    cfg = fleet_config(scenario, {"stranded": {**run, "policies": list(POLICIES)}})
    a = run_analysis("stranded", scenario, cfg)
    return (_table(a, "stranded-table"), for_app(a.figure),
            for_app(figures.backlog_figure(a.extra["result"], policy)))


def _pareto(scenario, _training, latency: str, y: str = "usd_per_mtok"):
    """The labelled frontier of cost against latency (``latency``: ``tpot_s`` or ``ttft_s``), or of output per
    provisioned MW against TPOT (``y``: ``tokens_per_s_per_mw``), and its points as a table."""
    a = run_analysis("pareto", scenario, fleet_config(scenario), latency=latency, frontier_y=y)
    return _table(a, "frontier-table"), for_app(a.figure)


def _interactivity(scenario, _training, y: str, devices):
    """Throughput (or cost, or output per provisioned MW: ``y``) against output tokens/s per user over concurrency,
    per device and layout; ``devices`` the ids picked (none: the scenario's)."""
    cfg = fleet_config(scenario, {"interactivity": {"devices": list(devices) or None}})
    a = run_analysis("interactivity", scenario, cfg)
    return _table(a, "interactivity-table"), for_app(figures.interactivity_figure(a.extra["result"], y))


def _coordination(scenario, _training):
    """Coordination break-even of the split's specialized pool against the homogeneous GPU fleet."""
    return (_table(run_analysis("coordination", scenario, fleet_config(scenario)), "coordination-table"),)


def _tree(scenario, training):
    """Which device wins each leaf of the specialization tree, on the datasheet and with NRE and half-life;
    the training leaf from ``training`` (the user's training scenario) or the tree's configured one."""
    return (_table(run_analysis("tree", scenario, fleet_config(scenario), training), "tree-table"),)


def _routing(scenario, _training):
    """Cost per useful answer when a router sends a share of requests to a small model."""
    a = run_analysis("routing", scenario, fleet_config(scenario))
    return _table(a, "routing-table"), for_app(a.figure)


def _roadmap(scenario, _training):
    """What each lever gives toward the tokens-per-watt target (process, format, architecture, utilization, routing)."""
    a = run_analysis("roadmap", scenario, fleet_config(scenario))
    return _table(a, "roadmap-table"), for_app(a.figure)


kv_view = _answer(_kv, tables=1, figs=2, needs_split=True)
stranded_view = _answer(_stranded, tables=1, figs=2, needs_split=True)
pareto_view = _answer(_pareto, tables=1, figs=1, needs_split=False)
interactivity_view = _answer(_interactivity, tables=1, figs=1, needs_split=False)
coordination_view = _answer(_coordination, tables=1, figs=0, needs_split=True)
tree_view = _answer(_tree, tables=1, figs=0, needs_split=False)
routing_view = _answer(_routing, tables=1, figs=1, needs_split=False)
roadmap_view = _answer(_roadmap, tables=1, figs=1, needs_split=False)


def card(name: str, scenario, training) -> html.Div:
    """One analysis as a card: its title, its key figure, its headline sentence, and a link to its section."""
    try:
        if name in NEEDS_SPLIT and not_applicable(scenario):
            figure, label, sentence = "—", "no split option", not_applicable(scenario)
        else:
            h = run_analysis(name, scenario, fleet_config(scenario), training).headline
            figure, label, sentence = h.figure, h.figure_label, h.sentence
    except InputError as exc:
        figure, label, sentence = "—", "an input breaks a rule", str(exc.errors[0])
    return html.Div(className="card", id=f"card-{name}", children=[
        html.H4(TITLES[name]), html.Div(figure, className="card-figure"), html.Div(label, className="card-label"),
        html.P(sentence, className="card-sentence"),
        html.Button("Details", id={"type": "fleet-goto", "section": SECTION[name], "card": name}, className="small-button")])


def summary_view(scenario):
    """The Fleet tab's opening: one card per analysis, and the split's cost per token in each view with why it differs
    from the Compare tab's (the callback body; benchmarked)."""
    try:
        scenario, training = _serving(scenario)
    except InputError as exc:
        return error_list(exc), None
    cards = html.Div([card(name, scenario, training) for name in ANALYSES], className="cards", id="fleet-cards")
    try:
        rows = reconciliation(scenario, fleet_config(scenario))
    except InputError as exc:
        return cards, error_list(exc)
    if not rows:
        return cards, html.P(not_applicable(scenario), className="hint")
    table = table_block("reconciliation-table", ["view", "split option, USD per million output tokens", "why"],
                        [[r["where"], quantity(r["usd_per_mtok"], "USD", 4), r["why"]] for r in rows])
    return cards, table


__all__ = ["ANALYSES", "STRANDED_INPUTS", "coordination_view", "interactivity_view", "kv_view", "pareto_view",
           "roadmap_view", "routing_view", "stranded_view", "summary_view", "tree_view"]
