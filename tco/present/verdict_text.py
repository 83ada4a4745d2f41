"""The verdict of an inference comparison in words: :func:`tco.analysis.verdict.decide` decides, :func:`explained`
says it, and every reader shows that sentence.

Per million output tokens:

- **a tie** when the two cheapest options that meet the latency targets are within
  ``tolerance`` of each other (default 2 %: closer than the inputs are known);
- otherwise **the winner**, its **margin** over the runner-up and the **main driver** (the
  cost line whose present value differs most between them);
- the **flip conditions**: each uncertain input that, moved alone within its sourced range,
  changes the winner, with the value where it does and, when the winner wins again further on
  (whole replicas make a cost a sawtooth), every window where it loses (:func:`tco.analysis.flips.flip_conditions`);
- what the win **rests on**: a chip program's volume beyond the units this fleet buys, a
  rival that misses a latency target, flip conditions that move an estimate (grade C).

``tco compare`` (table and JSON), the app's Compare and Decide pages and the workbook's
Cover print :attr:`Verdict.text`; the JSON carries :meth:`Verdict.to_dict`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tco.analysis.evaluation import evaluate_scenario
from tco.analysis.flips import Flip
from tco.analysis.program_views import other_generations_held
from tco.analysis.verdict import Verdict, missed_targets
from tco.core import names as named
from tco.core.outputs import COST_LINES, OptionResult
from tco.foundation.formatting import quantity, sig, usd
from tco.foundation.plain_values import scalar
from tco.present.flip_text import describe_flip, describe_window

#: cost lines that are credits (negative present values): more cost is a smaller credit
CREDIT_LINES = ("residual_usd",)


#: flip conditions the sentence names (all are in :attr:`Verdict.flips`)
SHOWN_FLIPS = 3


def main_driver(option: OptionResult, other: OptionResult) -> str:
    """Why ``option`` costs more than ``other``, in words: the cost line that adds most to its present value,
    ``higher hardware capex (PV +$52M)``, and a line that saves more than that one adds, ``higher NRE share
    (PV +$105M), despite lower hardware capex (PV -$127M)`` (a built chip: cheaper devices, dearer program).
    Where no line adds (it serves fewer tokens for its money), the line that differs most.

    Parameters
    ----------
    option : OptionResult
        The dearer option (the runner-up).
    other : OptionResult
        The cheaper one (the winner); the present value of each cost line [USD] is compared.

    Returns
    -------
    str
        The driver in words, with the difference in present value [USD].
    """
    diffs = {line: scalar(getattr(option, line.name)) - scalar(getattr(other, line.name)) for line in COST_LINES}

    def worded(line):
        more = diffs[line] > 0
        word = ("smaller" if more else "larger") if line.line in CREDIT_LINES else ("higher" if more else "lower")
        return f"{word} {line.label} (PV {'+' if more else ''}{quantity(diffs[line], 'USD')})"

    adds, saves = max(diffs, key=diffs.get), min(diffs, key=diffs.get)
    if diffs[adds] <= 0:
        return worded(saves)
    return worded(adds) + (f", despite {worded(saves)}" if -diffs[saves] > diffs[adds] else "")


def explained(verdict: Verdict, scenario, results: Mapping[str, OptionResult]) -> Verdict:
    """``verdict`` (:func:`decide`) with its words: the main driver, what the win rests on, the headline and the text.

    Parameters
    ----------
    verdict : Verdict
        The decision on ``scenario``'s options.
    scenario : Scenario
        The scenario compared.
    results : Mapping[str, OptionResult]
        Its options' results at the base values.

    Returns
    -------
    Verdict
        The same verdict, its ``driver``, ``rests_on``, ``headline`` and ``text`` filled in.
    """
    if verdict.winner is None:
        met = [r for r in results.values() if scalar(r.feasible) > 0]
        if met:
            overflow = any(np.isinf(scalar(r.pv_cost_usd)) for r in met)
            verdict.text = "No option has a finite cost at these inputs: " + (
                "the costs overflow (an input is too large)." if overflow else
                "the cost per token is undefined (0/0); please report these inputs.")
        else:
            verdict.text = "No option meets the latency targets: " + "; ".join(
                f"{n} {missed_targets(r)}" for n, r in results.items()) + "."
        return verdict
    if verdict.runner_up is not None:
        verdict.driver = main_driver(results[verdict.runner_up], results[verdict.winner])
    verdict.rests_on = rests_on(scenario, results, verdict)
    verdict.headline = headline(verdict, results)
    verdict.text = sentence(verdict, results)
    return verdict


def rests_on(scenario, results: Mapping[str, OptionResult], verdict: Verdict) -> list[str]:
    """What the winner's lead depends on, in words (empty when nothing stands out).

    Parameters
    ----------
    scenario : Scenario
        The scenario compared (its program volume and structure).
    results : Mapping[str, OptionResult]
        Its results at the base values.
    verdict : Verdict
        The decision (:func:`tco.analysis.verdict.decide`): winner, kind and flips.

    Returns
    -------
    list of str
        Clauses: the chip program's external sales, rivals that miss a latency target, flips that move an estimate.
    """
    out = []
    winner = verdict.winner
    option = scenario.structure.option(winner)
    built = [p for p in option.pools if p.built]
    values = scenario.values()
    if built and named.program.external_units in values:
        own = sum(scalar(results[winner].pool(p.role).present_values.units_bought) for p in built)
        external = float(values[named.program.external_units])
        if external > 0:
            out.append(own_fleet_volume(scenario, winner, own, own + external))
    rivals = [n for n, r in results.items() if n != winner and scalar(r.feasible) <= 0]
    if rivals and (verdict.kind == "only" or scenario.structure.baseline in rivals):
        out.append("the latency targets: " + "; ".join(f"{n} {missed_targets(results[n])}" for n in rivals))
    estimates = list(dict.fromkeys(f["label"] for f in verdict.flips if f.get("grade") == "C"))
    if estimates:
        more = f" and {len(estimates) - SHOWN_FLIPS} more" if len(estimates) > SHOWN_FLIPS else ""
        out.append("estimates (grade C) that flip it within their range: " + "; ".join(estimates[:SHOWN_FLIPS]) + more)
    return out


def own_fleet_volume(scenario, winner: str, own: float, volume: float) -> str:
    """The built chip's program volume against the units this fleet buys, and what the winner would
    cost on its own fleet's units alone (no external sales).

    Parameters
    ----------
    scenario : Scenario
        The scenario, evaluated again with no units sold to others.
    winner : str
        The option on the built chip that wins.
    own : float [units]
        Units this fleet buys over the horizon.
    volume : float [units]
        The program's volume, own units plus those sold to others.

    Returns
    -------
    str
        The clause, with the winner's cost on its own units [USD/Mtok] and whether it still wins.
    """

    alone, _ = evaluate_scenario(scenario, {named.program.external_units: 0.0})
    costs = {n: scalar(r.lcot_usd_per_mtok) for n, r in alone.items() if scalar(r.feasible) > 0}
    best = min(costs, key=costs.get) if costs else None
    outcome = "still wins" if best == winner else (f"loses to {best}" if best else "and no option meets the targets")
    return (f"a chip program of {sig(volume, 3)} units, {sig(volume - own, 3)} sold beyond the {sig(own, 3)} this fleet "
            "buys over the horizon: "
            f"on its own units alone {winner} costs {usd(costs.get(winner, np.nan))}/M and {outcome}")


def headline(verdict: Verdict, results: Mapping[str, OptionResult]) -> str:
    """Who wins, by how much and why, in one or two sentences. A baseline that follows the general-purpose roadmap is
    named with the generations it runs at its first mention (:func:`on_the_roadmap`).

    Parameters
    ----------
    verdict : Verdict
        The decision: kind, winner, runner-up, costs [USD/Mtok], margin [-] and driver.
    results : Mapping[str, OptionResult]
        The options' results (the baseline's roadmap generations).

    Returns
    -------
    str
        The headline.
    """
    v = verdict
    role = "the baseline " if v.winner == v.baseline else ""
    per = "per million output tokens"
    winner, runner_up = (on_the_roadmap(n, results) if n == v.baseline else n for n in (v.winner, v.runner_up))
    if v.kind == "only":
        text = f"Only {role}{winner} meets the latency targets, at {usd(v.cost)} {per}."
    elif v.kind == "tie":
        text = (f"A tie within {v.tolerance:.0%}: {role}{winner} at {usd(v.cost)} and {runner_up} at "
                f"{usd(v.runner_up_cost)} {per} ({v.runner_up} {v.margin:.1%} dearer, mainly through "
                f"{v.driver}).")
    else:
        ratio = v.runner_up_cost / v.cost
        how = f"costs {ratio:.3g}x as much" if ratio >= 1.5 else f"costs {v.margin:.0%} more"
        text = (f"{role.capitalize()}{winner} is cheapest at {usd(v.cost)} {per}; the runner-up, "
                f"{runner_up}, {how}, mainly through {v.driver}.")
        if v.winner != v.baseline and v.runner_up != v.baseline and scalar(results[v.baseline].feasible) > 0:
            text += (f" The baseline {on_the_roadmap(v.baseline, results)}: "
                     f"{usd(scalar(results[v.baseline].lcot_usd_per_mtok))}/M.")
    return text


def on_the_roadmap(name: str, results: Mapping[str, OptionResult]) -> str:
    """``name``, followed by the generations its fleet runs where it follows the general-purpose roadmap onto devices
    other than its own (``h100 (on the roadmap: b200, then rubin)``): its cost is theirs, not its own device's.

    Parameters
    ----------
    name : str
        An option's name.
    results : Mapping[str, OptionResult]
        The options' results (None-safe for a name not among them).

    Returns
    -------
    str
        The name, with the generations held where they are other than its own device.
    """
    held = other_generations_held(results.get(name))
    return f"{name} (on the roadmap: {', then '.join(held)})" if held else name


def near_tie(tie: Flip, verdict: Verdict) -> str:
    """One near-tie in words: ``mi300x comes within 2% of b200 where mean demand is between 108.9 req/s and 109.7 req/s
    (or in 6 more windows)``.

    Parameters
    ----------
    tie : Flip
        A condition of :attr:`Verdict.ties`: its windows, its label and the rival that comes level (``becomes``).
    verdict : Verdict
        The decision (its winner and tie tolerance [-]).

    Returns
    -------
    str
        The clause.
    """
    more = len(tie["windows"]) - 1
    rival = tie.get("becomes") or "a rival"
    return (f"{rival} comes within {verdict.tolerance:.0%} of {verdict.winner} where {tie['label']} "
            f"{describe_window(tie, tie['windows'][0])}" + (f" (or in {more} more windows)" if more else ""))


def sentence(verdict: Verdict, results: Mapping[str, OptionResult]) -> str:
    """The verdict in words: who wins, by how much, why, what flips it and what it rests on.

    Parameters
    ----------
    verdict : Verdict
        The decision with its headline, flips and what it rests on.
    results : Mapping[str, OptionResult]
        The options' results.

    Returns
    -------
    str
        The verdict paragraph that ``tco compare``, the app and the workbook print.
    """
    v = verdict
    text = v.headline or headline(v, results)
    if v.flips:
        head = "What decides it" if v.kind == "tie" else "It flips if"
        text += f" {head}: " + "; or ".join(describe_flip(f) for f in v.flips[:SHOWN_FLIPS])
        more = len(v.flips) - SHOWN_FLIPS
        text += f" (and {more} more)." if more > 0 else "."
    elif len(results) > 1 and v.kind != "none":
        text += " No single input moved within its range changes the winner."
    if v.ties:
        text += " Near-ties, not flips (windows narrower than the search resolves, whole-replica rounding): " + \
            "; ".join(near_tie(f, v) for f in v.ties[:SHOWN_FLIPS]) + \
            (f" (and {len(v.ties) - SHOWN_FLIPS} more)." if len(v.ties) > SHOWN_FLIPS else ".")
    if v.rests_on:
        text += f" The {'lead' if v.kind == 'tie' else 'win'} rests on " + "; and ".join(v.rests_on) + "."
    return text
