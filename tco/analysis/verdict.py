"""The decision on an inference comparison: a tie, or the winner, its margin over the runner-up
and the inputs that flip it (:func:`decide`); :mod:`tco.present.verdict_text` words it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

from tco.analysis.evaluation import evaluate_scenario
from tco.analysis.flips import Flip, flip_conditions, past_flips, winner_gap
from tco.core.evaluate import CONTEXT_TOO_LONG, NO_FIT, TPOT_MISSED, TTFT_MISSED
from tco.core.outputs import OptionResult
from tco.foundation.fields import Field
from tco.foundation.plain_values import scalar

#: two options closer than this share of the cheaper one's cost are a tie
DEFAULT_TIE_TOLERANCE = 0.02


#: the tie tolerance a user may give ("2%", "0.02")
TIE_TOLERANCE = Field("fraction", 0.0, 0.5, description="share of the cheaper option's cost within which two options tie")


@dataclass
class Verdict:
    """What the comparison decides (see the module docstring). Costs in USD per million output tokens."""

    kind: str  # "win", "tie", "only" (one option meets the targets) or "none" (no option does)
    baseline: str
    winner: str | None = None
    runner_up: str | None = None
    cost: float | None = None
    runner_up_cost: float | None = None
    margin: float | None = None  # runner-up cost / winner cost - 1
    driver: str = ""
    tolerance: float = DEFAULT_TIE_TOLERANCE
    flips: list[Flip] = field(default_factory=list)  # each input that flips it, with its windows, nearest first
    rests_on: list[str] = field(default_factory=list)
    headline: str = ""  # who wins, by how much and why (the first sentence of ``text``)
    text: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


#: what an option that misses a latency target does, by infeasibility bit (:data:`tco.core.evaluate.INFEASIBLE_REASONS`)
MISSES = {
    TPOT_MISSED: "misses its time-per-output-token target even at batch 1",
    TTFT_MISSED: "misses its time-to-first-token target even with idle replicas",
    CONTEXT_TOO_LONG: "cannot hold prompt and output in the model's context window",
    NO_FIT: "has no replica shape that holds the model and one sequence",
}


def misses(code: int) -> str:
    """What an option with infeasibility code ``code`` misses, in words after its name (``misses its ...``).

    Parameters
    ----------
    code : int [bitmask]
        Sum of the bits of :data:`tco.core.evaluate.INFEASIBLE_REASONS` the option misses.

    Returns
    -------
    str
        Each missed target in words, joined by "and".
    """
    return " and ".join(text for bit, text in MISSES.items() if code & bit) or "misses a latency target"


def missed_targets(result: OptionResult) -> str:
    """What an option misses, in words after its name (:func:`misses` of its first draw's infeasibility code).

    Parameters
    ----------
    result : OptionResult
        The option, whose infeasibility code (first draw) is read.

    Returns
    -------
    str
        ``misses its time-per-output-token target even at batch 1`` and the like.
    """
    return misses(int(scalar(result.infeasible_code)))


def flip_causes(scenario, results: Mapping[str, OptionResult], winner: str, flips: list[Flip]) -> list[str]:
    """Why the winner loses just past each flip, when a latency target decides it: the winner misses one there
    (``h100 misses its time-to-first-token target even with idle replicas``), or the option that wins there
    meets its targets only beyond the flip (``groq meets its latency targets``); ``""`` where the costs alone
    cross. One evaluation of every flip at once (:func:`tco.analysis.flips.past_flips`).

    Parameters
    ----------
    scenario : Scenario
        The scenario compared.
    results : Mapping[str, OptionResult]
        Its results at the base values.
    winner : str
        The option that wins at the base values.
    flips : list[Flip]
        Its flip conditions.

    Returns
    -------
    list[str]
        One cause per flip, in order.
    """
    if not flips:
        return []

    moved, _ = evaluate_scenario(scenario, past_flips(flips, scenario.params.values()))
    count = len(flips)
    feasible = {n: np.broadcast_to(np.asarray(r.feasible) > 0, (count,)) for n, r in moved.items()}
    costs = {n: np.broadcast_to(np.where(feasible[n], r.lcot_usd_per_mtok, np.inf), (count,)) for n, r in moved.items()}
    codes = np.broadcast_to(np.asarray(moved[winner].infeasible_code), (count,))
    causes = []
    for k in range(count):
        cheapest = min(costs, key=lambda n: costs[n][k])
        if not feasible[winner][k]:
            causes.append(f"{winner} {misses(int(codes[k]))}")
        elif np.isfinite(costs[cheapest][k]) and scalar(results[cheapest].feasible) <= 0:
            causes.append(f"{cheapest} meets its latency targets")
        else:
            causes.append("")
    return causes


def decide(scenario, results: Mapping[str, OptionResult], tolerance: float = DEFAULT_TIE_TOLERANCE,
           with_flips: bool = True) -> Verdict:
    """The decision on ``scenario``'s options (``results`` at its base values; see the module docstring): kind,
    winner, runner-up, costs, margin and flip conditions; :func:`explained` words it.

    Parameters
    ----------
    scenario : Scenario
        The scenario compared.
    results : Mapping[str, OptionResult]
        Its options' results at the base values.
    tolerance : float [-]
        Share of the cheaper option's cost within which two options tie.
    with_flips : bool
        Whether to search the inputs that flip the winner.

    Returns
    -------
    Verdict
        The decision, its words (``driver``, ``rests_on``, ``headline``, ``text``) still empty.
    """
    base = scenario.structure.baseline
    costs = {n: scalar(r.lcot_usd_per_mtok) for n, r in results.items()}
    ok = {n: scalar(r.feasible) > 0 and np.isfinite(costs[n]) for n, r in results.items()}
    feasible = sorted((n for n in results if ok[n]), key=costs.get)
    verdict = Verdict("none", base, tolerance=tolerance)
    if not feasible:
        return verdict
    winner = feasible[0]
    verdict.winner, verdict.cost = winner, costs[winner]
    if len(feasible) == 1:
        verdict.kind = "only"
    else:
        runner = feasible[1]
        margin = costs[runner] / costs[winner] - 1.0
        verdict.kind = "tie" if margin <= tolerance else "win"
        verdict.runner_up, verdict.runner_up_cost, verdict.margin = runner, costs[runner], margin
    if with_flips and len(results) > 1:

        def gap(updates):
            moved, _ = evaluate_scenario(scenario, updates)
            return winner_gap({n: r.lcot_usd_per_mtok for n, r in moved.items()},
                              {n: r.feasible for n, r in moved.items()}, winner)

        verdict.flips = flip_conditions(scenario.params, gap)
        for flip, cause in zip(verdict.flips, flip_causes(scenario, results, winner, verdict.flips), strict=True):
            flip["cause"] = cause
    return verdict
