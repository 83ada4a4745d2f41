"""The Fleet tab's views: each is one call into :mod:`tco.dynamics` for the user's scenario (the callback bodies; benchmarked).

Every view returns ``(notice, *tables, *figures)``. ``notice`` is None when the view has
something to show; otherwise it says why not (the scenario has no disaggregated option, or
an input breaks a rule) and the tables are None and the figures say so too. No view raises
on bad input.
"""

from __future__ import annotations

from dash import html

from tco.core.outputs import OPTION_OUTPUTS
from tco.core.structure import link_param
from tco.dynamics import figures
from tco.dynamics.config import POLICIES, fleet_config
from tco.dynamics.coordination import coordination
from tco.dynamics.derived import scenario_link
from tco.dynamics.kv_wall import kv_wall
from tco.dynamics.pareto import pareto
from tco.dynamics.roadmap import roadmap
from tco.dynamics.routing import routing
from tco.dynamics.stranded import simulate
from tco.dynamics.tree import tree
from tco.errors import InputError
from tco.training_api import serving_scenario
from tco.values import read_number

from .charts import message_figure, restyled
from .context import error_list
from .tables import Column, pairs_table, records_table

GB = 1e9

#: stranded-capacity settings the user edits: field of tco.dynamics.config.Stranded -> label with unit
STRANDED_INPUTS = {"demand_growth_per_year": "demand growth [1/yr]", "prompt_growth_per_year": "prompt-length drift [1/yr]",
                   "output_growth_per_year": "output-length drift [1/yr]",
                   "flex_buffer_share": "flex GPU buffer [share of GPU replicas]", "weeks": "weeks simulated"}

STRANDED_COLUMNS: list[Column] = [
    ("policy", "policy", None, 1.0), ("fleet", "fleet", None, 1.0), ("stranded share, %", "stranded_share", ".2f", 100.0),
    ("SLO-violation hours, h", "violation_hours", ",.0f", 1.0),
    ("output tokens not served, M", "output_tokens_not_served", ",.1f", 1e-6),
    ("cost, USD per M output tokens served", "usd_per_mtok", ",.3f", 1.0), ("devices", "devices", ",.0f", 1.0)]

FRONTIER_COLUMNS: list[Column] = [
    ("placement (prefill>decode)", "placement", None, 1.0), ("TPOT target, ms", "tpot_target_s", ",.0f", 1e3),
    ("batch cap", "batch_cap", ",.0f", 1.0), OPTION_OUTPUTS["lcot_usd_per_mtok"].as_column("usd_per_mtok"),
    *(OPTION_OUTPUTS[k].as_column() for k in ("ttft_s", "tpot_s", "batch", "spilled_bytes"))]

COORDINATION_ROWS: list[Column] = [
    ("split option", "option", None, 1.0), ("specialized pool (device)", "pool", None, 1.0),
    ("scheduling overhead, extra device time per token", "scheduling_overhead", ".0%", 1.0),
    ("slack held idle, share of the pool", "slack", ".0%", 1.0),
    ("pool utilization in the engine", "utilization_engine", ".1%", 1.0),
    ("pool utilization with coordination", "utilization_with_coordination", ".1%", 1.0),
    ("perf-per-watt break-even utilization (– : loses even fully busy)", "perf_per_watt_breakeven_utilization", ".1%", 1.0),
    ("cost break-even utilization (– : loses even fully busy)", "cost_breakeven_utilization", ".1%", 1.0),
    ("split fleet with coordination, output tokens per joule", "split_tokens_per_joule", ",.3g", 1.0),
    ("homogeneous GPU fleet, output tokens per joule", "gpu_tokens_per_joule", ",.3g", 1.0),
    ("split fleet with coordination, USD per M output tokens", "split_usd_per_mtok", ",.3f", 1.0),
    ("homogeneous GPU fleet, USD per M output tokens", "gpu_usd_per_mtok", ",.3f", 1.0)]

TREE_COLUMNS: list[Column] = [
    ("view", "view", None, 1.0), ("branch", "branch", None, 1.0), ("leaf", "leaf", None, 1.0),
    ("precious resource", "precious_resource", None, 1.0), ("winner", "winner", None, 1.0),
    ("winner's cost, USD per M tokens (training tokens for the training leaf)", "usd_per_mtok", ",.3f", 1.0),
    ("runner-up", "runner_up", None, 1.0), ("margin (runner-up cost / winner cost)", "margin", ",.2f", 1.0)]


ROUTING_ROWS: list[Column] = [
    ("option whose costs are used", "option", None, 1.0), ("large model", "large_model", None, 1.0),
    ("small model", "small_model", None, 1.0), ("large model, USD per request", "large_usd_per_request", ",.5f", 1.0),
    ("small model, USD per request", "small_usd_per_request", ",.5f", 1.0),
    ("share of requests only the large model answers", "hard_share", ".0%", 1.0),
    ("misroute penalty, USD per wrong answer", "penalty_usd", ",.5f", 1.0),
    ("router share at which routing stops paying", "breakeven_router_share", ".1%", 1.0),
    ("best router share", "optimal_router_share", ".1%", 1.0),
    ("cost per useful answer at the best share, USD", "usd_per_useful_answer_at_optimum", ",.5f", 1.0),
    ("saving against the large model alone", "saving_at_optimum", ".1%", 1.0)]

ROADMAP_COLUMNS: list[Column] = [
    ("lever (applied in order)", "lever", None, 1.0), ("what the model changes", "detail", None, 1.0),
    ("factor, x tokens/J", "factor", ",.2f", 1.0), ("cumulative, x", "cumulative", ",.2f", 1.0),
    ("gap left to the target, x", "gap_to_target", ",.2f", 1.0), ("source", "source", None, 1.0)]


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


def _answer(view, tables: int, figs: int, needs_split: bool, takes_training: bool = False):
    """``view`` with a plain explanation instead of an error (scenario without a split, or an input breaking a rule).

    On a ``kind: training`` scenario the views run on its serving scenario (``serving.scenario``);
    a view that ``takes_training`` (the tree) also gets the training scenario for its training leaf.
    """

    def guarded(scenario, *args):
        extra = {}
        if getattr(scenario, "kind", "inference") == "training":
            extra = {"training": scenario} if takes_training else {}
            try:
                scenario = serving_scenario(scenario)
            except InputError as exc:
                return _skip(error_list(exc), tables, figs)
        reason = not_applicable(scenario) if needs_split else None
        if reason:
            return _skip(reason, tables, figs)
        try:
            return (None, *view(scenario, *args, **extra))
        except InputError as exc:
            return _skip(error_list(exc), tables, figs)

    guarded.__doc__ = view.__doc__
    return guarded


def _crossing(b: dict, subject: str, unit: str, scale: float = 1.0) -> str:
    if b["status"] == "crosses":
        side = "above" if b["split_wins_above"] else "below"
        return f"The split beats the cheaper colocated option {side} a {subject} of {b['value'] * scale:,.4g} {unit}."
    verb = "beats" if b["status"] == "always" else "never beats"
    return (f"The split {verb} the cheaper colocated option at any {subject} in "
            f"[{b['low'] * scale:,.4g}, {b['high'] * scale:,.4g}] {unit}.")


def _spill(b: dict) -> str:
    if b["status"] == "crosses":
        return (f"The decode pool's KV spills out of the decode device's fastest memory from {b['value']:,.0f} prompt "
                "tokens on: beyond it the decode chip's advantage shrinks.")
    where = "at every" if b["status"] == "always" else "at no"
    return f"The decode pool's KV spills out of the decode device's fastest memory {where} prompt length in the range."


def _kv(scenario, bandwidth_gbps: float | None = None):
    """KV transfer wall at the scenario's link bandwidth (or ``bandwidth_gbps`` [GB/s])."""
    link = scenario_link(scenario)
    if bandwidth_gbps is not None:
        gbps = read_number(bandwidth_gbps, None, "KV link bandwidth [GB/s]")
        scenario = scenario.with_values({link_param(link, "bandwidth_bytes_per_s"): gbps * GB})
    r = kv_wall(scenario, fleet_config(scenario.spec.fleet_dynamics).kv_wall)
    bandwidth = scenario.values()[link_param(link, "bandwidth_bytes_per_s")] / GB
    summary = html.Ul(id="kv-breakevens", children=[
        html.Li(f"{r.option} against {' and '.join(r.counterparts.values())} (colocated; only those meeting the "
                f"latency targets count); KV link {link} at {bandwidth:,.4g} GB/s."),
        html.Li(_crossing(r.breakevens["prompt_tokens"], "prompt length", "tokens")),
        html.Li(_crossing(r.breakevens["link_bandwidth_bytes_per_s"], "link bandwidth", "GB/s", 1 / GB)),
        html.Li(_spill(r.breakevens["spill_onset_prompt_tokens"]))])
    return summary, restyled(figures.kv_wall_figure(r)), restyled(figures.kv_gain_figure(r))


def _stranded(scenario, policy: str, settings: dict):
    """Quarter simulation of every policy beside the homogeneous GPU fleet; the hourly backlog of ``policy``."""
    cfg = fleet_config(scenario.spec.fleet_dynamics, {"stranded": {**settings, "policies": list(POLICIES)}}).stranded
    r = simulate(scenario, cfg)
    table = records_table(r.summary.to_dict(orient="records"), STRANDED_COLUMNS, "stranded-table")
    return table, restyled(figures.stranded_figure(r)), restyled(figures.backlog_figure(r, policy))


def _pareto(scenario, latency: str):
    """The labelled cost-latency frontier (``latency``: ``tpot_s`` or ``ttft_s``) and its points as a table."""
    t = pareto(scenario, fleet_config(scenario.spec.fleet_dynamics).pareto)
    front = t[t[f"on_frontier_{latency[:4]}"]].sort_values(latency)
    return records_table(front.to_dict(orient="records"), FRONTIER_COLUMNS, "frontier-table"), \
        restyled(figures.pareto_figure(t, latency))


def _coordination(scenario):
    """Coordination break-even of the split's specialized pool against the homogeneous GPU fleet."""
    r = coordination(scenario, fleet_config(scenario.spec.fleet_dynamics).coordination)
    return (pairs_table({**r.summary, "pool": f"{r.summary['specialized_pool']} ({r.summary['device']})"},
                        COORDINATION_ROWS, "coordination-table"),)


def _tree(scenario, training=None):
    """Which device wins each leaf of the specialization tree, on the datasheet and with NRE and half-life;
    the training leaf from ``training`` (the user's training scenario) or the tree's configured one."""
    _costs, winners = tree(scenario, fleet_config(scenario.spec.fleet_dynamics).tree, training)
    return (records_table(winners.to_dict(orient="records"), TREE_COLUMNS, "tree-table"),)


def _routing(scenario):
    """Cost per useful answer when a router sends a share of requests to a small model."""
    result = routing(scenario, fleet_config(scenario.spec.fleet_dynamics).routing)
    return pairs_table(result.summary, ROUTING_ROWS, "routing-table"), restyled(figures.routing_figure(result))


def _roadmap(scenario):
    """What each lever gives toward the tokens-per-watt target (process, format, architecture, utilization, routing)."""
    cfg = fleet_config(scenario.spec.fleet_dynamics)
    table = roadmap(scenario, cfg.roadmap, cfg.routing)
    return (records_table(table.to_dict(orient="records"), ROADMAP_COLUMNS, "roadmap-table"),
            restyled(figures.roadmap_figure(table, cfg.roadmap.target_tokens_per_watt_gain)))


kv_view = _answer(_kv, tables=1, figs=2, needs_split=True)
stranded_view = _answer(_stranded, tables=1, figs=2, needs_split=True)
pareto_view = _answer(_pareto, tables=1, figs=1, needs_split=False)
coordination_view = _answer(_coordination, tables=1, figs=0, needs_split=True)
tree_view = _answer(_tree, tables=1, figs=0, needs_split=False, takes_training=True)
routing_view = _answer(_routing, tables=1, figs=1, needs_split=False)
roadmap_view = _answer(_roadmap, tables=1, figs=1, needs_split=False)
