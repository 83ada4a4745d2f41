"""The training run as the user sees it: ``tco compare`` on a ``kind: training`` scenario.

    >>> import tco
    >>> s = tco.load_scenario("training-run")
    >>> result = tco.present.training_comparison.compare_training(s)
    >>> result.options[["time_to_train_days", "cost_per_run_usd"]]

Besides the per-option table, the comparison carries the verdict with its flip
conditions (:mod:`tco.analysis.flips`), the siting of training and serving (one combined facility
against facilities split by purpose, :mod:`tco.core.fleet.siting`) and the second life of the
cluster's devices in serving (:mod:`tco.core.training.cascade`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from tco.analysis.flips import Flip, flip_conditions
from tco.analysis.training import cheapest_option, cost_gap, evaluate_training_scenario, second_life, training_siting
from tco.core.outputs import OutputSpec
from tco.core.training.results import (
    SECOND_LIFE_OUTPUTS,
    TRAINING_COMPARISON_OUTPUTS,
    TRAINING_OUTPUTS,
    TrainingChallenger,
    TrainingResult,
)
from tco.core.training.run import training_comparison
from tco.core.training.step import TRAINING_BOUNDS
from tco.foundation.plain_values import json_safe, scalar
from tco.inputs.training_scenario import TrainingScenario
from tco.present.flip_text import describe_flip

#: grid points per parameter of the training verdict's flip search: each point evaluates every option's 960 candidate
#: shapes, so 33 points (a stretch wider than 1/32 of a range is always found) take 0.8 s where the inference verdict's
#: 257 would take 9.5 s (training-run, measured 2026-12-01)
TRAINING_FLIP_POINTS = 33


def _row(spec: OutputSpec, text: bool = False) -> tuple[str, str, str | None, float]:
    """``(key, title with unit, format, scale)`` of a table row showing an output (``text``: shown as words)."""
    return spec.name, spec.title, None if text else spec.fmt, 1.0 if text else spec.scale


#: rows of the options table of a training comparison (``tco compare`` and the app): (key, title with unit, format, scale);
#: titles, formats and scales from the training output table
OPTION_ROWS = [
    ("placement", "cluster", None, 1.0),
    *(_row(TRAINING_OUTPUTS[name]) for name in ("time_to_train_days", "cost_per_run_usd", "usd_per_mtok_trained", "mfu",
                                                "goodput", "mtbi_s", "tokens_per_s_per_device", "tokens_per_joule",
                                                "energy_mwh")),
    ("shape", "parallel shape", None, 1.0),
    _row(TRAINING_OUTPUTS["bound"], text=True),
    _row(TRAINING_OUTPUTS["memory_bytes_per_device"]),
    _row(TRAINING_OUTPUTS["feasible"], text=True),
]


#: rows of each challenger against the baseline
CHALLENGER_ROWS = [_row(spec) for spec in TRAINING_COMPARISON_OUTPUTS.values()]


#: columns of the siting table: one row per site
SITE_COLUMNS = [
    ("site", "site", None, 1.0), ("data hall, USD per kW-month (built)", "facility_usd_per_kw_month", ",.1f", 1.0),
    ("training cluster, M USD/yr (site-dependent)", "training_usd_per_year", ",.3g", 1e-6),
    ("serving fleet, M USD/yr (site-dependent)", "serving_usd_per_year", ",.3g", 1e-6),
    ("user TTFT incl. round trip, ms", "user_ttft_s", ",.0f", 1e3),
    ("meets the serving TTFT target", "serving_meets_ttft", None, 1.0)]


#: columns of the second-life table: one row per training device (titles, formats and scales from its output table)
SECOND_LIFE_COLUMNS = [
    ("device", "device", None, 1.0), (SECOND_LIFE_OUTPUTS["choice"].title, "best", None, 1.0),
    *(SECOND_LIFE_OUTPUTS[name].as_column() for name in ("cascade_usd", "sell_usd", "cascade_premium_usd",
                                                         "tokens_per_year_per_device", "running_usd_per_year"))]


@dataclass
class TrainingComparison:
    """What ``tco compare`` reports for a training scenario: the tables (``options``, ``challengers``) and the typed
    results they show (``results``, ``comparison``)."""

    scenario: TrainingScenario
    options: pd.DataFrame
    challengers: pd.DataFrame
    verdict: str
    flips: list[Flip] = field(default_factory=list)
    siting: dict = field(default_factory=dict)
    second_life: dict = field(default_factory=dict)
    results: dict[str, TrainingResult] = field(default_factory=dict)
    comparison: dict[str, TrainingChallenger] = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The JSON contract of ``tco compare --format json`` for a training scenario (docs/outputs.md)."""
        s = self.scenario
        return {
            "scenario": {"name": s.name, "kind": "training", "title": s.title, "question": s.question,
                         "baseline": s.structure.baseline, "model": s.structure.model, "site": s.structure.site,
                         "objective": "cost per training run (USD), time to train (days)"},
            "options": [{"name": name, **{k: json_safe(v) for k, v in row.items()}} for name, row in self.options.iterrows()],
            "comparison": {name: {k: json_safe(v) for k, v in row.items()} for name, row in self.challengers.iterrows()},
            "verdict": self.verdict,
            "flip_conditions": self.flips,
            "siting": self.siting,
            "second_life": self.second_life,
        }


def compare_training(scenario: TrainingScenario, with_flips: bool = True) -> TrainingComparison:
    """Evaluate every cluster option at the base values and explain the result.

    Parameters
    ----------
    scenario : tco.inputs.training_scenario.TrainingScenario
        The training scenario.
    with_flips : bool
        Search the inputs that flip the cheapest option (:func:`tco.analysis.flips.flip_conditions`).

    Returns
    -------
    TrainingComparison
        The options table (cost per run [USD], time to train [days], shape, bound, ...), the
        challengers against the baseline, the verdict, the flips, the siting and the second life.
    """
    results, values = evaluate_training_scenario(scenario)
    rows = []
    for option in scenario.structure.options:
        r = results[option.name]
        feasible = scalar(r.feasible) > 0
        # the outputs in the table's order; feasible and bound in words, then the cluster and its shape as text
        rows.append({"option": option.name, **{k: scalar(v) for k, v in r.flat().items()}, "feasible": feasible,
                     "bound": TRAINING_BOUNDS[int(scalar(r.bound))] if feasible else "memory",
                     "placement": f"{scalar(r.devices):.0f} x {option.device}",
                     "shape": shape_text(r) if feasible else "none fits"})
    table = pd.DataFrame(rows).set_index("option")
    comp = training_comparison(scenario.structure, results)
    challengers = pd.DataFrame([{"option": n, **{k: scalar(v) for k, v in c.flat().items()}} for n, c in comp.items()])
    challengers = challengers.set_index("option") if len(challengers) else pd.DataFrame()
    winner = cheapest_option(results)
    flips = []
    if with_flips and winner is not None and len(results) > 1:
        flips = flip_conditions(scenario.params, lambda updates: cost_gap(evaluate_training_scenario(scenario, updates)[0],
                                                                          winner), points=TRAINING_FLIP_POINTS)
    result = TrainingComparison(scenario, table, challengers, "", flips, results=results, comparison=comp)
    result.siting = training_siting(scenario, results, values)
    result.second_life = second_life(scenario, values)
    result.verdict = training_verdict(result, winner)
    return result


def shape_text(result: TrainingResult) -> str:
    """The chosen parallel shape in words: ``TP8 PP4 DP16``, then `` EP8``, `` recompute 0.25`` and `` FSDP`` where they apply.

    Parameters
    ----------
    result : tco.core.training.results.TrainingResult
        One option's result at one point (a shape fits).

    Returns
    -------
    str
        The tensor, pipeline and data-parallel degrees [devices, stages, replicas], the expert degree above 1,
        the recomputed share [-] above 0 and FSDP when sharded.
    """
    tensor, pipeline, data = scalar(result.tensor_parallel), scalar(result.pipeline_parallel), scalar(result.data_parallel)
    expert, recompute = scalar(result.expert_parallel), scalar(result.recompute)
    return (f"TP{tensor:.0f} PP{pipeline:.0f} DP{data:.0f}" + (f" EP{expert:.0f}" if expert > 1 else "")
            + (f" recompute {recompute:.2g}" if recompute > 0 else "") + (" FSDP" if scalar(result.fsdp) > 0 else ""))


def training_verdict(result: TrainingComparison, winner: str | None) -> str:
    """One paragraph: the cheapest and the fastest cluster, by how much, and what would flip it.

    Parameters
    ----------
    result : TrainingComparison
        The comparison (its results and flips).
    winner : str or None
        The cheapest feasible option.

    Returns
    -------
    str
        The verdict (costs in USD millions per run, times in days).
    """
    if winner is None:
        return "No option can train the model: no parallel shape fits memory, or failures outpace restarts."
    runs = result.results
    base = result.scenario.structure.baseline

    def cost(name):
        return scalar(runs[name].cost_per_run_usd)

    def days(name):
        return scalar(runs[name].time_to_train_days)

    feasible = [name for name, r in runs.items() if scalar(r.feasible) > 0]
    fastest = min(feasible, key=days)
    text = f"{winner} trains cheapest at ${cost(winner) / 1e6:.3g}M per run in {days(winner):.3g} days"
    if winner != base and base in feasible:
        text += f" ({cost(winner) / cost(base):.2f}x the baseline {base}'s ${cost(base) / 1e6:.3g}M)"
    elif winner == base and len(feasible) > 1:
        runner = min((name for name in feasible if name != winner), key=cost)
        text += f"; the next cheapest, {runner}, costs {cost(runner) / cost(winner):.2f}x as much"
    text += "."
    if fastest != winner:
        text += f" {fastest} is fastest: {days(fastest):.3g} days."
    if result.flips:
        text += " It stops being cheapest if " + "; or ".join(describe_flip(f) for f in result.flips[:3]) + "."
    elif len(feasible) > 1:
        text += " No single input moved across its range changes the winner."
    return text
