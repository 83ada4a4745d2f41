"""The decision on an inference comparison: a tie, or the winner, its margin over the runner-up
and the inputs that flip it (:func:`decide`); :mod:`tco.present.verdict_text` words it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

from tco.analysis.evaluation import MovedCostFigures, evaluate_scenario
from tco.analysis.flips import GRID_POINTS, Flip, beyond, flip_conditions, probe_updates, winner_gap
from tco.analysis.solvers import narrower_than_step, scan
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
    #: inputs whose every losing window is narrower than the flip search's step and within the tie tolerance there:
    #: whole-replica rounding that brings a rival level with the winner, a tie rather than a flip
    ties: list[Flip] = field(default_factory=list)
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


#: points probed from just past a flip to one step of the search beyond it (:func:`tco.analysis.flips.beyond`): a
#: cliff's wall is placed to 1/15 of a step
CLIFF_PROBES = 16


def explain_flips(scenario, results: Mapping[str, OptionResult], winner: str, flips: list[Flip],
                  tolerance: float = DEFAULT_TIE_TOLERANCE) -> tuple[list[Flip], list[Flip]]:
    """What happens past each flip, from one evaluation of every flip at once: the option that becomes cheapest
    (``becomes``), why the winner loses when a latency target decides it (``cause``: the winner misses one there,
    ``h100 misses its time-to-first-token target even with idle replicas``, or the new winner meets its targets only
    beyond the flip, ``groq meets its latency targets``; ``""`` where the costs alone cross), and where a winner that
    still meets its targets just past the flip stops meeting them within one step of the search (``misses_from``:
    its cost climbs to a latency wall, a cliff). A flip whose every window is narrower than one step of the search
    (:func:`tco.analysis.solvers.narrower_than_step`) with the costs within ``tolerance`` at its middle is a tie, not
    a flip.

    Parameters
    ----------
    scenario : Scenario
        The scenario compared.
    results : Mapping[str, OptionResult]
        Its results at the base values.
    winner : str
        The option that wins at the base values.
    flips : list[Flip]
        Its flip conditions (:func:`tco.analysis.flips.flip_conditions`), each given ``becomes``, ``cause`` and
        ``misses_from``.
    tolerance : float [-]
        Share of the cheaper cost within which two options tie.

    Returns
    -------
    flips : list[Flip]
        The flips, in order.
    ties : list[Flip]
        The conditions that are ties, in order.
    """
    if not flips:
        return [], []
    narrow = [[w for w in f["windows"] if narrower_than_step(w, f["low"], f["high"], GRID_POINTS)] for f in flips]
    middles = [np.array([0.5 * (w[0] + w[1]) for w in ws]) for ws in narrow]
    probes = [beyond(f, CLIFF_PROBES) for f in flips]
    updates, owner = probe_updates(flips, scenario.params.values(),
                                   [np.concatenate([p, m]) for p, m in zip(probes, middles, strict=True)])
    moved, _ = evaluate_scenario(scenario, updates)
    count = len(owner)
    feasible = {n: np.broadcast_to(np.asarray(r.feasible) > 0, (count,)) for n, r in moved.items()}
    costs = {n: np.broadcast_to(np.where(feasible[n], r.lcot_usd_per_mtok, np.inf), (count,)) for n, r in moved.items()}
    codes = np.broadcast_to(np.asarray(moved[winner].infeasible_code), (count,))
    gap = winner_gap(costs, feasible, winner)
    kept, ties, brackets = [], [], []
    for k, flip in enumerate(flips):
        at = np.flatnonzero(owner == k)
        past, walk, middle = at[0], at[:CLIFF_PROBES], at[CLIFF_PROBES:]
        cheapest = min(costs, key=lambda n: costs[n][past])
        flip["becomes"] = cheapest if np.isfinite(costs[cheapest][past]) else ""
        flip["misses_from"] = float("nan")
        if not feasible[winner][past]:
            flip["cause"] = f"{winner} {misses(int(codes[past]))}"
        elif np.isfinite(costs[cheapest][past]) and scalar(results[cheapest].feasible) <= 0:
            flip["cause"] = f"{cheapest} meets its latency targets"
        else:
            flip["cause"] = ""
            wall = [i for i in walk if not feasible[winner][i]]
            if wall:
                flip["misses_from"] = float(updates[flip["name"]][wall[0]])
                flip["cause"] = f"{winner} {misses(int(codes[wall[0]]))}"
                brackets.append((flip, float(updates[flip["name"]][wall[0] - 1]), flip["misses_from"]))
        level = [np.isfinite(gap[i]) and gap[i] <= tolerance * costs[winner][i] for i in middle]
        tie = len(narrow[k]) == len(flip["windows"]) and all(level) and not np.isfinite(flip["misses_from"])
        (ties if tie else kept).append(flip)
    place_walls(scenario, winner, brackets)
    return kept, ties


def place_walls(scenario, winner: str, brackets: list[tuple[Flip, float, float]]) -> None:
    """Each cliff's wall where the solver of the break-even places it (:func:`tco.analysis.solvers.scan`, the winner's
    feasibility as its state): ``misses_from`` of each flip set to the first value at which the winner misses a target.

    Parameters
    ----------
    scenario : Scenario
        The scenario compared.
    winner : str
        The option that wins at the base values.
    brackets : list[tuple[Flip, float, float]] [unit of each flip's parameter]
        Per cliff: the flip, the last probe where the winner meets its targets and the first where it misses them.
    """
    if not brackets:
        return
    flips = [b[0] for b in brackets]

    def evaluate(track, x):
        moved, _ = evaluate_scenario(scenario, probe_updates([flips[t] for t in track], scenario.params.values(),
                                                             [np.array([v]) for v in x])[0])
        ok = np.broadcast_to(np.asarray(moved[winner].feasible) > 0, np.shape(x))
        return np.where(ok, -1.0, 1.0), ok.astype(int)

    scans = scan(evaluate, [min(b[1], b[2]) for b in brackets], [max(b[1], b[2]) for b in brackets],
                 integer=[bool(f.get("integer")) for f in flips], points=2, levels=0, tolerance=1e-6)
    for flip, result in zip(flips, scans, strict=True):
        changes = [c.value for c in result.changes]
        if changes:
            flip["misses_from"] = changes[0] if flip["direction"] == "above" else changes[-1]


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
        figures = MovedCostFigures(scenario)  # each option evaluated only where a value it reads moves

        def gap(updates):
            moved = figures(updates)
            return winner_gap({n: f.lcot_usd_per_mtok for n, f in moved.items()},
                              {n: f.feasible for n, f in moved.items()}, winner)

        verdict.flips, verdict.ties = explain_flips(scenario, results, winner, flip_conditions(scenario.params, gap),
                                                    tolerance)
    return verdict
