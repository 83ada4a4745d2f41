"""Each fleet analysis as a person reads it: a headline sentence, one key figure, and a compact table.

``tco fleet ANALYSIS`` prints the headline under its table; the app's Fleet tab opens with one
card per analysis (title, key figure, sentence) and the same tables. :func:`run` is the one
place an analysis is run for either of them. :func:`reconciliation` says why the Fleet tab's
costs per token differ from the Compare view's (they answer different questions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from tco.analysis.evaluation import evaluate_scenario
from tco.analysis.program_views import other_generations_held
from tco.dynamics.coordination import coordination
from tco.dynamics.interactivity import interactivity_frontier
from tco.dynamics.kv_wall import kv_wall
from tco.dynamics.pareto import pareto
from tco.dynamics.roadmap import roadmap
from tco.dynamics.routing import routing
from tco.dynamics.stranded import simulate
from tco.dynamics.tree import tree
from tco.foundation.formatting import quantity, sig
from tco.foundation.plain_values import scalar
from tco.inputs.variants import baseline_on, disaggregated_option
from tco.present.tables import Column

#: the analyses, in the order the CLI and the app list them
ANALYSES = ("kv-wall", "stranded", "coordination", "pareto", "interactivity", "tree", "routing", "roadmap")
#: the title of each analysis
TITLES = {"kv-wall": "KV transfer wall", "stranded": "Stranded capacity over a quarter",
          "coordination": "Coordination break-even", "pareto": "Pareto frontier: cost against latency",
          "interactivity": "Throughput against interactivity per device",
          "tree": "Specialization tree", "routing": "Routing easy queries to a small model",
          "roadmap": "Tokens per watt: what each lever gives"}
#: analyses that need a disaggregated option (prefill on one device, decode on another)
NEEDS_SPLIT = ("kv-wall", "stranded", "coordination")

KV_COLUMNS: list[Column] = [
    ("prompt length, tokens", "prompt_tokens", ",.0f", 1.0), ("split, USD/M output tokens", "split_usd_per_mtok", ",.4g", 1.0),
    ("KV link, USD/M output tokens", "link_usd_per_mtok", ",.3g", 1.0),
    ("decode gain before the link, USD/M (—: a fleet misses its targets)", "decode_gain_usd_per_mtok", ",.3g", 1.0),
    ("KV transfer, ms", "kv_transfer_s", ",.3g", 1e3), ("split meets targets", "split_feasible", None, 1.0)]

STRANDED_COLUMNS: list[Column] = [
    ("policy", "policy", None, 1.0), ("fleet", "fleet", None, 1.0), ("stranded share, %", "stranded_share", ".2f", 100.0),
    ("SLO-violation hours, h", "violation_hours", ",.0f", 1.0),
    ("largest backlog, requests", "peak_backlog_req", ",.0f", 1.0),
    ("queued at the end, requests", "backlog_at_end_req", ",.0f", 1.0),
    ("output tokens not served, M", "output_tokens_not_served", ",.3g", 1e-6),
    ("cost, USD per M output tokens served", "usd_per_mtok", ",.4g", 1.0), ("devices", "devices", ",.0f", 1.0)]

FRONTIER_COLUMNS: list[Column] = [
    ("placement (prefill>decode)", "placement", None, 1.0), ("TPOT target, ms", "tpot_target_s", ",.0f", 1e3),
    ("batch cap", "batch_cap", ",.0f", 1.0), ("cost, USD per million output tokens", "usd_per_mtok", ",.4g", 1.0),
    ("time to first token, ms", "ttft_s", ",.0f", 1e3), ("time per output token, ms", "tpot_s", ",.1f", 1e3),
    ("decode batch, sequences", "batch", ",.0f", 1.0), ("bytes spilled below the fastest tier, GB", "spilled_bytes", ",.2f",
                                                          1e-9),
    ("output tokens/s per provisioned MW", "tokens_per_s_per_mw", ",.4g", 1.0)]

COORDINATION_ROWS: list[Column] = [
    ("split option", "option", None, 1.0), ("specialized pool (device)", "pool", None, 1.0),
    *[(title, key, ".0%", 1.0) for title, key in (
        ("scheduling overhead, extra device time per token", "scheduling_overhead"),
        ("slack held idle, share of the pool", "slack"))],
    *[(title, key, ".1%", 1.0) for title, key in (
        ("pool utilization in the engine", "utilization_engine"),
        ("pool utilization with coordination", "utilization_with_coordination"),
        ("perf-per-watt break-even utilization (— : loses even fully busy)", "perf_per_watt_breakeven_utilization"),
        ("cost break-even utilization (— : loses even fully busy)", "cost_breakeven_utilization"))],
    *[(f"{fleet}, {unit}", key, fmt, 1.0) for fleet, unit, key, fmt in (
        ("split fleet with coordination", "output tokens per joule", "split_tokens_per_joule", ",.3g"),
        ("homogeneous GPU fleet", "output tokens per joule", "gpu_tokens_per_joule", ",.3g"),
        ("split fleet with coordination", "USD per M output tokens", "split_usd_per_mtok", ",.4g"),
        ("homogeneous GPU fleet", "USD per M output tokens", "gpu_usd_per_mtok", ",.4g"))]]

TREE_COLUMNS: list[Column] = [
    ("view", "view", None, 1.0), ("branch", "branch", None, 1.0), ("leaf", "leaf", None, 1.0),
    ("precious resource", "precious_resource", None, 1.0), ("winner", "winner", None, 1.0),
    ("winner's cost, USD per M tokens (training tokens for the training leaf)", "usd_per_mtok", ",.4g", 1.0),
    ("runner-up", "runner_up", None, 1.0), ("margin (runner-up cost / winner cost)", "margin", ",.3g", 1.0)]

ROUTING_ROWS: list[Column] = [
    ("option whose costs are used", "option", None, 1.0), ("large model", "large_model", None, 1.0),
    ("small model", "small_model", None, 1.0),
    ("large model, USD per 1,000 requests", "large_usd_per_request", ",.4g", 1e3),
    ("small model, USD per 1,000 requests", "small_usd_per_request", ",.4g", 1e3),
    ("share of requests only the large model answers", "hard_share", ".0%", 1.0),
    ("misroute penalty, USD per 1,000 wrong answers", "penalty_usd", ",.4g", 1e3),
    ("router share beyond which routing stops paying (—: it pays at any share)", "breakeven_router_share", ".1%", 1.0),
    ("best router share", "optimal_router_share", ".1%", 1.0),
    ("cost per 1,000 useful answers at the best share, USD", "usd_per_useful_answer_at_optimum", ",.4g", 1e3),
    ("saving against the large model alone", "saving_at_optimum", ".1%", 1.0)]

ROADMAP_COLUMNS: list[Column] = [
    ("lever (applied in order)", "lever", None, 1.0), ("what the model changes", "detail", None, 1.0),
    ("factor, x tokens/J", "factor", ",.2f", 1.0), ("cumulative, x", "cumulative", ",.2f", 1.0),
    ("gap left to the target, x", "gap_to_target", ",.2f", 1.0), ("source", "source", None, 1.0)]


@dataclass
class Headline:
    """What an analysis says in one card: its title, one key figure (with what it is) and a sentence."""

    analysis: str
    figure: str
    figure_label: str
    sentence: str

    @property
    def title(self) -> str:
        return TITLES[self.analysis]


@dataclass
class FleetAnalysis:
    """One analysis run: the JSON payload, the full table, the compact table (records and columns), the figure
    (drawn on first use: the Fleet summary's cards and the decide steps read the headline only) and the headline."""

    name: str
    payload: dict
    table: pd.DataFrame
    records: list[dict]
    columns: list[Column]
    draw: Callable[[], object]
    headline: Headline
    pairs: bool = False  # the compact table is one record shown as (title, value) rows
    extra: dict = field(default_factory=dict)

    @cached_property
    def figure(self):
        """The analysis's plotly figure."""
        return self.draw()


def _alone_note(alone: list[list[float]], lo: float, hi: float, unit: str, scale: float) -> str:
    """Where, within the stretch ``lo``..``hi`` the split wins, no colocated option meets the latency targets: all of
    it, or its pieces (``""`` where none)."""
    inside = [w for w in alone if lo <= w[0] and w[1] <= hi]
    if not inside:
        return ""
    if inside == [[lo, hi]]:
        return " (where no colocated option meets the latency targets)"
    pieces = " and ".join(f"from {sig(a * scale, 4)} to {sig(b * scale, 4)} {unit}" for a, b in inside)
    return f" (no colocated option meets the latency targets {pieces})"


def _crossing(b: dict, subject: str, unit: str, scale: float = 1.0) -> str:
    """Where the split beats its colocated counterparts along one input: the stretches of ``split_wins`` (the pieces
    of the KV wall's scan where it wins, adjacent ones joined); where it wins because no colocated option meets the
    latency targets, it says so."""
    pieces, low, high = b["split_wins"], b["low"], b["high"]
    alone = [w for w, a in zip(pieces, b["split_alone_meets_targets"], strict=True) if a]
    spans: list[list[float]] = []
    for a, c in pieces:
        if spans and spans[-1][1] == a:
            spans[-1][1] = c
        else:
            spans.append([a, c])
    if not spans or spans == [[low, high]]:
        verb = "beats" if spans else "never beats"
        return (f"{verb} the cheaper colocated option at any {subject} in {sig(low * scale, 3)}–{sig(high * scale, 3)} "
                f"{unit}" + _alone_note(alone, low, high, unit, scale))
    words = [("below " + sig(hi * scale, 4) if lo == low else "above " + sig(lo * scale, 4) if hi == high else
              f"from {sig(lo * scale, 4)} to {sig(hi * scale, 4)}") + f" {unit}" + _alone_note(alone, lo, hi, unit, scale)
             for lo, hi in spans]
    return f"beats the cheaper colocated option at a {subject} {' and '.join(words)}"


def kv_sentences(result, bandwidth_gbps: float) -> list[str]:
    """The KV-wall break-evens in words: the prompt length, the link bandwidth and the decode KV spill.

    Parameters
    ----------
    result : tco.dynamics.kv_wall.KVWallResult
        The KV-wall analysis whose break-evens are worded.
    bandwidth_gbps : float [GB/s]
        The link bandwidth the scenario uses (quoted).

    Returns
    -------
    list[str]
        Four sentences: what is compared, and where the split wins along prompt length, along
        link bandwidth, and where the decode KV spills.
    """
    b = result.breakevens
    spill = b["spill_onset_prompt_tokens"]
    if spill["status"] == "crosses":
        spilled = (f"The decode pool's KV spills out of the decode device's fastest memory from {sig(spill['value'], 4)} "
                   "prompt tokens on: beyond it the decode chip's advantage shrinks.")
    else:
        spilled = ("The decode pool's KV spills out of the decode device's fastest memory "
                   f"{'at every' if spill['status'] == 'always' else 'at no'} prompt length in the range.")
    return [f"{result.option} against {' and '.join(result.counterparts.values())} (colocated; only those meeting the "
            f"latency targets count); KV link at {sig(bandwidth_gbps, 4)} GB/s.",
            f"The split {_crossing(b['prompt_tokens'], 'prompt length', 'tokens')}.",
            f"At the scenario's prompt length ({sig(b['link_bandwidth_bytes_per_s']['at_prompt_tokens'], 4)} tokens) the "
            f"split {_crossing(b['link_bandwidth_bytes_per_s'], 'link bandwidth', 'GB/s', 1e-9)}.", spilled]


def kv_headline(result) -> Headline:
    """The KV wall's card: the prompt length where the split starts or stops paying.

    Parameters
    ----------
    result : tco.dynamics.kv_wall.KVWallResult
        Its prompt-length break-even makes the figure.

    Returns
    -------
    Headline
        Figure in [tokens] (or ``always`` / ``never``) and a sentence over every crossing.
    """
    b = result.breakevens["prompt_tokens"]
    figure = f"{sig(b['value'], 3)} tokens" if b["status"] == "crosses" else ("always" if b["status"] == "always" else "never")
    return Headline("kv-wall", figure, "prompt length where the split starts or stops paying",
                    f"The split {result.option} {_crossing(b, 'prompt length', 'tokens')}.")


def stranded_headline(result) -> Headline:
    """The stranded-capacity card: the share of specialized device-hours idle under the first policy.

    Parameters
    ----------
    result : tco.dynamics.stranded.StrandedResult
        The quarter simulation; its first policy is the headline.

    Returns
    -------
    Headline
        Figure in [%], and a sentence with the other policies' shares and the costs per million
        output tokens served [USD/Mtok].
    """
    s = result.summary
    split = s[s["fleet"] == result.option].set_index("policy")
    gpu = s[s["fleet"] != result.option].set_index("policy")
    first = split.index[0]
    shares = ", ".join(f"{p} {sig(100 * split.loc[p, 'stranded_share'], 2)}%" for p in split.index[1:])
    cost = (f"cost per million output tokens served under '{first}': split {quantity(split.loc[first, 'usd_per_mtok'], 'USD')}"
            + (f", GPU fleet {quantity(gpu.loc[first, 'usd_per_mtok'], 'USD')}" if first in gpu.index else ""))
    return Headline("stranded", f"{sig(100 * split.loc[first, 'stranded_share'], 2)}%",
                    f"specialized device-hours stranded ('{first}' sizing)",
                    f"Sized by '{first}', the split fleet leaves {sig(100 * split.loc[first, 'stranded_share'], 2)}% of its "
                    f"specialized device-hours idle while the other pool's queue waits"
                    + (f" ({shares})" if shares else "") + f"; {cost}. " + backlog_words(split.loc[first], "the split fleet"))


def backlog_words(row, fleet: str) -> str:
    """What a fleet's SLO-violation hours and backlog mean, so the two never read as a contradiction: an hour violates
    the targets when its load exceeds what the fleet serves within them; a backlog forms only above flat-out capacity
    and is served in later hours; what is still queued at the quarter's end is not served.

    Parameters
    ----------
    row : Mapping
        One fleet's row of the quarter's summary (``violation_hours`` [h], ``peak_backlog_req`` [requests],
        ``backlog_at_end_req`` [requests], ``output_tokens_not_served`` [tokens]).
    fleet : str
        What the sentence calls the fleet.

    Returns
    -------
    str
        The sentence.
    """
    hours, peak, end = int(row["violation_hours"]), float(row["peak_backlog_req"]), float(row["backlog_at_end_req"])
    if not hours and not peak:
        return f"{fleet.capitalize()} meets the latency targets every hour."
    text = f"{fleet.capitalize()} misses the latency targets in {hours:,} hours (load above what it serves within them)"
    if peak:
        left = (f"{sig(end, 3)} requests ({quantity(row['output_tokens_not_served'], 'tokens')}) are still queued at "
                "the quarter's end, never served" if end else "all of it is served within the quarter")
        text += f"; its backlog peaks at {sig(peak, 3)} requests (load above flat-out capacity), {left}"
    return text + "."


def coordination_headline(result) -> Headline:
    """The coordination card: the specialized pool's utilization where the split's cost edge ends.

    Parameters
    ----------
    result : tco.dynamics.coordination.CoordinationResult
        The coordination summary (break-even utilization, costs).

    Returns
    -------
    Headline
        Figure in [%] (or ``never``) and a sentence with both fleets' costs [USD/Mtok].
    """
    s = result.summary
    u = s["cost_breakeven_utilization"]
    where = (f"keeps its cost edge above {sig(100 * u, 3)}% utilization of the {s['specialized_pool']} pool"
             if u is not None else "loses on cost even with its specialized pool fully busy")
    return Headline("coordination", "never" if u is None else f"{sig(100 * u, 3)}%",
                    f"{s['specialized_pool']}-pool utilization where the split's cost edge ends",
                    f"With {sig(100 * s['scheduling_overhead'], 2)}% scheduling overhead and {sig(100 * s['slack'], 2)}% "
                    f"slack held idle, the split costs {quantity(s['split_usd_per_mtok'], 'USD')} against "
                    f"{quantity(s['gpu_usd_per_mtok'], 'USD')} per million output tokens for the GPU fleet; it {where}.")


INTERACTIVITY_COLUMNS: list[Column] = [
    ("device", "device", None, 1.0), ("layout", "layout", None, 1.0), ("replica shape", "shape", None, 1.0),
    ("concurrency, sequences per replica", "concurrency", ",.0f", 1.0),
    ("output tokens/s per user", "tokens_per_s_per_user", ",.4g", 1.0),
    ("output tokens/s per device", "tokens_per_s_per_device", ",.4g", 1.0),
    ("output tokens/s per provisioned MW", "tokens_per_s_per_mw", ",.4g", 1.0),
    ("cost, USD per million output tokens (—: misses the TTFT target)", "usd_per_mtok", ",.4g", 1.0),
    ("meets the TPOT target", "meets_tpot_target", None, 1.0)]


def interactivity_headline(frontier) -> Headline:
    """The interactivity card: the layout with the most output per device at the interactivity the TPOT target asks.

    Parameters
    ----------
    frontier : tco.dynamics.interactivity.InteractivityFrontier
        The curves and operating points.

    Returns
    -------
    Headline
        Figure: output tokens/s per device [tokens/s]; a sentence naming the device, layout and concurrency, and the
        scenario's first option's operating point.
    """
    curves = frontier.curves
    ok = curves[curves["meets_tpot_target"]] if len(curves) else curves
    per_user = 1.0 / frontier.tpot_target_s
    if ok.empty:
        return Headline("interactivity", "—", "output tokens/s per device at the TPOT target",
                        f"No device and layout reaches {sig(per_user, 3)} output tokens/s per user (the TPOT target).")
    best = ok.loc[ok["tokens_per_s_per_device"].idxmax()]
    line = (f"At the TPOT target ({quantity(frontier.tpot_target_s, 's')}: {sig(per_user, 3)} output tokens/s per user), "
            f"{best['device']} ({best['shape']}) gives the most output per device: "
            f"{sig(best['tokens_per_s_per_device'], 4)} tokens/s at {best['concurrency']:,.0f} sequences per replica")
    if len(frontier.operating):
        first = frontier.operating.iloc[0]
        line += (f"; the scenario's {first['option']} runs at {sig(first['tokens_per_s_per_user'], 3)} tokens/s per user "
                 f"and {sig(first['tokens_per_s_per_device'], 4)} per device at its peak")
    return Headline("interactivity", sig(best["tokens_per_s_per_device"], 4),
                    "output tokens/s per device at the TPOT target", line + ".")


def pareto_headline(table: pd.DataFrame, latency: str = "tpot_s") -> Headline:
    """The Pareto card: how many configurations meeting the targets are on the cost-latency frontier.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`tco.dynamics.pareto.pareto`'s table.
    latency : str
        ``tpot_s`` or ``ttft_s``.

    Returns
    -------
    Headline
        Figure ``k of n`` and a sentence naming the frontier's fastest and cheapest ends
        [USD/Mtok, s].
    """
    ok = table[table["feasible"]]
    front = ok[ok[f"on_frontier_{latency[:4]}"]].sort_values(latency)
    name = "TPOT" if latency == "tpot_s" else "TTFT"
    if front.empty:
        return Headline("pareto", "0", "configurations on the frontier", "No configuration meets the latency targets.")
    fast, cheap = front.iloc[0], front.iloc[-1]
    return Headline("pareto", f"{len(front)} of {len(ok)}", "configurations on the cost-latency frontier",
                    f"{len(front)} of {len(ok)} configurations that meet the targets are on the cost-{name} frontier: "
                    f"from {quantity(fast['usd_per_mtok'], 'USD')}/M at {name} {quantity(fast[latency], 's')} "
                    f"({fast['placement']}) to {quantity(cheap['usd_per_mtok'], 'USD')}/M at {quantity(cheap[latency], 's')} "
                    f"({cheap['placement']}).")


def tree_headline(winners: pd.DataFrame) -> Headline:
    """The tree card: how many devices win the leaves (NRE and half-life included).

    Parameters
    ----------
    winners : pandas.DataFrame
        The tree's ``winners`` (:func:`tco.dynamics.tree.tree`): one row per view and leaf.

    Returns
    -------
    Headline
        Figure in devices and a sentence naming each leaf's winner.
    """
    real = winners[winners["view"] != "datasheet"]
    real = real if len(real) else winners
    leaves = "; ".join(f"{r.leaf}: {r.winner or 'none'}" for r in real.itertuples())
    devices = real["winner"].dropna().nunique()
    return Headline("tree", f"{devices} device{'s' if devices != 1 else ''}", "win the leaves (NRE and half-life included)",
                    f"With NRE and the workload half-life, the cheapest device per leaf: {leaves}.")


def routing_headline(result) -> Headline:
    """The routing card: the saving per useful answer at the best router share.

    Parameters
    ----------
    result : tco.dynamics.routing.RoutingResult
        The routing summary at the best share.

    Returns
    -------
    Headline
        Figure in [%] and a sentence with the best share [%], the cost per 1,000 useful answers
        [USD] and the share where routing stops paying [%].
    """
    s = result.summary
    share = s["breakeven_router_share"]
    limit = ("it pays at any share, all requests included" if share >= 1.0
             else f"it stops paying beyond {sig(100 * share, 3)}%")
    return Headline("routing", f"{sig(100 * s['saving_at_optimum'], 3)}%", "saved per useful answer at the best router share",
                    f"Routing {sig(100 * s['optimal_router_share'], 3)}% of requests to {s['small_model']} saves "
                    f"{sig(100 * s['saving_at_optimum'], 3)}% per useful answer against {s['large_model']} alone "
                    f"({quantity(1e3 * s['usd_per_useful_answer_at_optimum'], 'USD')} per 1,000 useful answers); {limit}.")


def roadmap_headline(table: pd.DataFrame, target: float) -> Headline:
    """The roadmap card: the levers' cumulative factor against the target.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`tco.dynamics.roadmap.roadmap`'s table.
    target : float [-]
        The tokens-per-watt factor aimed at.

    Returns
    -------
    Headline
        Figure in [x] and a sentence naming the gap left and the largest lever.
    """
    total = float(table["cumulative"].iloc[-1])
    top = table.loc[table["factor"].idxmax()]
    return Headline("roadmap", f"{sig(total, 3)}x", f"tokens per joule from every lever, against a {sig(target, 3)}x target",
                    f"The levers together give {sig(total, 3)}x output tokens per joule against a {sig(target, 3)}x target "
                    f"(gap left {sig(target / total, 3)}x); the largest is {top['lever']} ({sig(top['factor'], 3)}x).")


def run(name: str, scenario, cfg, training=None, latency: str = "tpot_s", frontier_y: str = "usd_per_mtok") -> FleetAnalysis:
    """Run one fleet analysis: the one place the CLI and the app run them.

    Parameters
    ----------
    name : str
        One of :data:`ANALYSES`.
    scenario : tco.inputs.scenario.Scenario
        The scenario (its named settings already in ``cfg``).
    cfg : tco.inputs.fleet_settings.FleetDynamics
        The settings (:func:`tco.inputs.fleet_settings.fleet_config`).
    training : tco.inputs.training_scenario.TrainingScenario, optional
        Feeds the tree's training leaf.
    latency : str
        ``tpot_s`` or ``ttft_s``: the Pareto frontier's latency.
    frontier_y : str
        ``usd_per_mtok`` (cost against latency) or ``tokens_per_s_per_mw`` (output per provisioned MW against TPOT:
        the frontier at fixed power): the Pareto frontier's other quantity, in its figure and compact table.

    Returns
    -------
    FleetAnalysis
        The JSON payload, the full and the compact table, the figure and the headline.
    """
    # lazy: figures are drawn on demand (the lambdas below), so plotly loads with one, not with a table-only `tco fleet`
    from tco.present import fleet_figures

    if name == "kv-wall":
        r = kv_wall(scenario, cfg.kv_wall)
        table = r.table
        return FleetAnalysis(name, {"option": r.option, "counterparts": r.counterparts, "breakevens": r.breakevens,
                                    "rows": table.to_dict(orient="records")}, table, table.to_dict(orient="records"),
                             KV_COLUMNS, lambda: fleet_figures.kv_wall_figure(r), kv_headline(r), extra={"result": r})
    if name == "stranded":  # the GPU fleet simulated: the baseline on the generation it runs at t = 0 (issue 49 item 3)
        held = generations_held(scenario)
        r = simulate(baseline_on(scenario, held[0]) if held else scenario, cfg.stranded)
        headline = stranded_headline(r)
        if held:
            headline = with_roadmap_note(headline, scenario, f"the GPU fleet simulated here is the baseline on {held[0]}, "
                                         "the generation it runs at t = 0, at that generation's costs", held)
        return FleetAnalysis(name, {"option": r.option, "baseline": r.baseline, "stranded_share": r.stranded_share(),
                                    "settings": cfg.stranded.model_dump(), "policies": r.summary.to_dict(orient="records")},
                             r.summary.set_index(["policy", "fleet"]), r.summary.to_dict(orient="records"),
                             STRANDED_COLUMNS, lambda: fleet_figures.stranded_figure(r), headline, extra={"result": r})
    if name == "coordination":  # the GPU fleet: the baseline on the generation it runs at t = 0 (the split: Compare's)
        held = generations_held(scenario)
        gpu = evaluate_scenario(baseline_on(scenario, held[0]))[0][scenario.structure.baseline] if held else None
        r = coordination(scenario, cfg.coordination, gpu)
        record = {**r.summary, "pool": f"{r.summary['specialized_pool']} ({r.summary['device']})"}
        headline = coordination_headline(r)
        if held:
            headline = with_roadmap_note(headline, scenario, f"the GPU fleet compared here is the baseline on {held[0]}, "
                                         "the generation it runs at t = 0: its cost and output tokens per joule", held)
        return FleetAnalysis(name, {"summary": r.summary, "curve": r.curve.to_dict(orient="records")},
                             pd.DataFrame([r.summary]).T.rename(columns={0: "value"}), [record], COORDINATION_ROWS,
                             lambda: fleet_figures.coordination_figure(r), headline, pairs=True)
    if name == "pareto":
        t = pareto(scenario, cfg.pareto)
        power = frontier_y == "tokens_per_s_per_mw"  # the frontier at fixed power: output per MW against TPOT
        front = t[t["on_frontier_power" if power else f"on_frontier_{latency[:4]}"]].sort_values(
            "tpot_s" if power else latency)
        return FleetAnalysis(name, {"points": t.to_dict(orient="records")},
                             t[t["on_frontier_tpot"] | t["on_frontier_ttft"] | t["on_frontier_power"]].set_index("placement"),
                             front.to_dict(orient="records"), FRONTIER_COLUMNS,
                             lambda: fleet_figures.pareto_figure(t, latency, frontier_y), pareto_headline(t, latency))
    if name == "interactivity":
        f = interactivity_frontier(scenario, cfg.interactivity)
        return FleetAnalysis(name, {"tpot_target_s": f.tpot_target_s, "curves": f.curves.to_dict(orient="records"),
                                    "operating": f.operating.to_dict(orient="records")},
                             f.curves.set_index(["device", "layout", "concurrency"]),
                             f.curves.to_dict(orient="records"), INTERACTIVITY_COLUMNS,
                             lambda: fleet_figures.interactivity_figure(f), interactivity_headline(f), extra={"result": f})
    if name == "tree":
        costs, winners = tree(scenario, cfg.tree, training)
        return FleetAnalysis(name, {"winners": winners.to_dict(orient="records"), "costs": costs.to_dict(orient="records")},
                             winners.set_index(["view", "leaf"]), winners.to_dict(orient="records"), TREE_COLUMNS,
                             lambda: fleet_figures.tree_figure(costs), tree_headline(winners))
    if name == "routing":
        r = routing(scenario, cfg.routing)
        shown = {**r.summary, "breakeven_router_share": r.summary["breakeven_router_share"]
                 if r.summary["breakeven_router_share"] < 1.0 else float("nan")}  # 100 %: it never stops paying
        return FleetAnalysis(name, {"summary": r.summary, "curve": r.curve.to_dict(orient="records")},
                             pd.DataFrame([shown]).T.rename(columns={0: "value"}), [shown], ROUTING_ROWS,
                             lambda: fleet_figures.routing_figure(r), routing_headline(r), pairs=True)
    t = roadmap(scenario, cfg.roadmap, cfg.routing)
    target = cfg.roadmap.target_tokens_per_watt_gain
    return FleetAnalysis(name, {"target_tokens_per_watt_gain": target, "levers": t.to_dict(orient="records")},
                         t.set_index("lever"), t.to_dict(orient="records"), ROADMAP_COLUMNS,
                         lambda: fleet_figures.roadmap_figure(t, target), roadmap_headline(t, target))


def generations_held(scenario) -> list[str]:
    """The general-purpose generations a roadmap baseline's fleet runs within the horizon, in order, where they are
    other than its own device (:func:`tco.analysis.program_views.other_generations_held`); empty otherwise.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario analysed.

    Returns
    -------
    list of str
        Device ids.
    """
    if not scenario.structure.generations:
        return []
    return other_generations_held(evaluate_scenario(scenario)[0][scenario.structure.baseline])


def with_roadmap_note(headline: Headline, scenario, what: str, held: list[str] | None = None) -> Headline:
    """``headline`` with a sentence on what its GPU fleet is where the scenario's baseline follows the general-purpose
    roadmap onto other devices (Compare's costs are those of the generations it runs,
    :func:`tco.present.tables.other_generations`).

    Parameters
    ----------
    headline : Headline
        The analysis's card.
    scenario : tco.inputs.scenario.Scenario
        The scenario analysed.
    what : str
        What the analysis's GPU fleet is; ``{device}`` stands for the baseline's own device.
    held : list of str, optional
        :func:`generations_held` when the caller has it.

    Returns
    -------
    Headline
        ``headline``, its sentence extended where the baseline runs other generations.
    """
    held = generations_held(scenario) if held is None else held
    if not held:
        return headline
    own = scenario.structure.option(scenario.structure.baseline).pools[0].device
    note = (f" In Compare the baseline {scenario.structure.baseline} follows the general-purpose roadmap "
            f"({', then '.join(held)}); {what.format(device=own)}.")
    return Headline(headline.analysis, headline.figure, headline.figure_label, headline.sentence + note)


def reconciliation(scenario, cfg) -> list[dict]:
    """Why the split option's cost per million output tokens differs between Compare and the Fleet analyses.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.
    cfg : tco.inputs.fleet_settings.FleetDynamics
        The settings of the coordination and stranded-capacity analyses.

    Returns
    -------
    list[dict]
        ``{where, usd_per_mtok [USD/Mtok], why}`` for Compare, the KV wall, coordination and
        each stranded-capacity policy; empty when the scenario has no disaggregated option.
    """

    if not any(o.disaggregated for o in scenario.structure.options):
        return []
    option = disaggregated_option(scenario, cfg.coordination.option, "fleet_dynamics.coordination.option")
    results, _ = evaluate_scenario(scenario)
    compare = scalar(results[option.name].lcot_usd_per_mtok)
    rows = [{"where": "Compare", "usd_per_mtok": compare,
             "why": "the engine's sizing at the scenario's inputs: pools sized at peak demand, held for the horizon, PV "
                    "of costs over PV of tokens"},
            {"where": "KV transfer wall", "usd_per_mtok": compare,
             "why": "the same option re-priced across prompt lengths: at the scenario's prompt length it is the Compare "
                    "figure"}]
    c = coordination(scenario, cfg.coordination).summary
    rows.append({"where": "Coordination", "usd_per_mtok": c["split_usd_per_mtok"],
                 "why": f"Compare plus {sig(100 * c['scheduling_overhead'], 2)}% scheduling overhead per token and "
                        f"{sig(100 * c['slack'], 2)}% of the {c['specialized_pool']} pool held idle as slack"})

    stranded = simulate(scenario, cfg.stranded)
    split = stranded.summary[stranded.summary["fleet"] == stranded.option]
    for r in split.itertuples():
        rows.append({"where": f"Stranded capacity, '{r.policy}' sizing", "usd_per_mtok": float(r.usd_per_mtok),
                     "why": "a quarter of hourly demand with growth and drift, per token actually served, pools sized by "
                            "this policy: not the horizon's levelized cost"})
    return rows
