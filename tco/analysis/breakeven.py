"""Break-even of any parameter: every value at which an option starts or stops beating the
baseline, and the feasibility windows between them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tco.analysis.evaluation import MovedCostFigures
from tco.analysis.solvers import BREAKEVEN_METRICS, narrower_than_step, scan
from tco.analysis.training import training_cost_figures
from tco.core.comparison import gap_from_results
from tco.foundation.errors import InputError
from tco.foundation.formatting import distinct, quantity, sig
from tco.foundation.labels import param_label
from tco.foundation.plain_values import json_safe
from tco.foundation.user_numbers import read_number
from tco.inputs.scenario import Scenario

#: grid points of the break-even search (:func:`tco.analysis.solvers.scan`); a window narrower than one step of it is
#: below what it resolves and reads as a cliff or a near-tie (:func:`reading`)
POINTS = 129


@dataclass
class Breakeven:
    """Where one option against the baseline changes, along one parameter.

    ``value`` / ``wins_above`` describe the first crossing (the winner changes there; None
    without one) and ``status`` is ``crosses``, ``always`` (the option wins across the range)
    or ``never``. ``crossings`` lists every change in the range, in order: where the winner
    changes (``flips``) or an option starts or stops meeting its latency targets
    (``feasibility``); ``windows`` cuts the range at them: ``{from, to, option_wins,
    option_feasible, baseline_feasible}`` per piece. :meth:`sentence` says it in words.
    """

    option: str
    param: str
    metric: str
    target: float
    low: float
    high: float
    value: float | None
    status: str
    wins_above: bool | None
    base_value: float
    unit: str
    baseline: str = ""
    integer: bool = False
    crossings: list[dict] = field(default_factory=list)
    windows: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {**{k: json_safe(v) for k, v in self.__dict__.items()}, "sentence": self.sentence()}

    def _criterion(self) -> tuple[str, str]:
        """What "the option wins" means for the metric and target, and its negation (both after the option's name)."""
        if self.metric == "ratio":
            times = f"{sig(self.target)}x {self.baseline}'s"
            return f"costs less than {times}", f"costs at least {times}"
        if self.metric == "npv":
            return (f"has an NPV above {quantity(self.target, 'USD')} over {self.baseline}",
                    f"has an NPV of {quantity(self.target, 'USD')} or less over {self.baseline}")
        if self.target == 0:
            return "is cheaper", "is dearer"
        extra = quantity(self.target, "USD")
        return f"costs less than {self.baseline} + {extra}/Mtok", f"costs at least {self.baseline} + {extra}/Mtok"

    def _regime(self, wins: bool, option_ok: bool, baseline_ok: bool) -> str:
        if not option_ok and not baseline_ok:
            return "neither meets the latency targets"
        if not baseline_ok:
            return f"only {self.option} meets the latency targets"
        if not option_ok:
            return f"{self.option} misses a latency target"
        if self.metric == "lcot" and self.target == 0:
            return f"{self.option} is cheaper" if wins else f"{self.baseline} is cheaper"
        yes, no = self._criterion()
        return f"{self.option} {yes if wins else no}"

    def _span(self, i: int, lo: str, hi: str) -> str:
        """Window ``i`` in words, from ``lo`` to ``hi`` (a whole-number parameter's up to one below the next change)."""
        last = len(self.windows) - 1
        if last == 0:
            return f"across {lo} to {hi}"
        if i == 0:
            return f"up to {hi}" if self.integer else f"below {hi}"
        if i == last:
            return f"from {lo}" if self.integer else f"above {lo}"
        if self.integer and lo == hi:
            return f"at {lo}"
        return f"from {lo} to {hi}"

    def _ends(self) -> list[tuple[str, str]]:
        """Each window's ends in readable units, with :data:`tco.foundation.formatting.CROSSING_DIGITS` significant
        figures or as many as tell neighbouring values apart; a whole-number parameter's window holds whole numbers up
        to one below the next change."""
        last = len(self.windows) - 1
        values = [v for i, w in enumerate(self.windows)
                  for v in (w["from"], w["to"] - 1.0 if self.integer and i < last else w["to"])]
        shown = distinct(values, self.unit)
        return list(zip(shown[::2], shown[1::2], strict=True))

    def sentence(self) -> str:
        """The windows in words: ``groq vs h100, time-per-output-token target: below 3.94 ms, neither meets the
        latency targets; from 3.94 ms to 4.3 ms, only groq meets the latency targets; above 4.3 ms, h100 is cheaper.``;
        a window narrower than one step of the search says what it is (:func:`reading`): ``from 4,385 tokens to
        4,397 tokens, groq is cheaper (a cliff: within one step of the search h100 stops meeting its latency
        targets)``."""
        parts = []
        for i, (w, (lo, hi)) in enumerate(zip(self.windows, self._ends(), strict=True)):
            part = f"{self._span(i, lo, hi)}, {self._regime(w['option_wins'], w['option_feasible'], w['baseline_feasible'])}"
            if w.get("reads_as") == "cliff":
                after = self.windows[i + 1] if i + 1 < len(self.windows) else self.windows[i - 1]
                who = self.baseline if w["baseline_feasible"] and not after["baseline_feasible"] else self.option
                part += f" (a cliff: within one step of the search {who} stops meeting its latency targets)"
            elif w.get("reads_as") == "near-tie":
                part += " (a near-tie: the two cross and cross back within one step of the search)"
            parts.append(part)
        return f"{self.option} vs {self.baseline}, {param_label(self.param)}: " + "; ".join(parts) + "."


def reading(windows: list[dict], low: float, high: float, points: int = POINTS) -> list[str]:
    """What each window of a break-even is when it is narrower than one step of the search
    (:func:`tco.analysis.solvers.narrower_than_step`), below what the search resolves: a ``cliff`` (a neighbouring window
    has another feasibility: one option's cost climbs to its latency wall within the window) or a ``near-tie`` (the
    windows on both sides agree with each other and differ from it: the costs cross and cross back); ``""`` otherwise.

    Parameters
    ----------
    windows : list[dict]
        The break-even's windows in order (``from``, ``to`` [unit of the parameter], ``option_wins``,
        ``option_feasible``, ``baseline_feasible``).
    low, high : float [unit of the parameter]
        The searched range.
    points : int [-]
        Grid points of the search.

    Returns
    -------
    list[str]
        One reading per window.
    """
    def state(w):
        return w["option_feasible"], w["baseline_feasible"]

    out = []
    for i, w in enumerate(windows):
        before, after = (windows[i - 1] if i else None), (windows[i + 1] if i + 1 < len(windows) else None)
        kind = ""
        if narrower_than_step([w["from"], w["to"]], low, high, points):
            if state(w) == (True, True) and any(n is not None and state(n) != state(w) for n in (before, after)):
                kind = "cliff"
            elif before and after and before["option_wins"] == after["option_wins"] != w["option_wins"] and \
                    state(before) == state(after) == state(w):
                kind = "near-tie"
        out.append(kind)
    return out


def breakeven(scenario: Scenario, param: str, low: float | None = None, high: float | None = None,
              metric: str = "lcot", option: str | None = None, target: float | None = None) -> list[Breakeven]:
    """Value of ``param`` at which ``option`` (every challenger by default) ties the baseline.

    ``metric`` is ``lcot`` (cost per output token equal), ``npv`` (NPV of choosing the
    option equals ``target``) or ``ratio`` (option / baseline cost equals ``target``); on a
    training scenario the cost is the cost per run (``npv``: USD saved per run).

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario (inference or training).
    param : str
        Dotted name of the parameter searched.
    low, high : float or None [unit of param]
        Search range; None: the parameter's sourced low/high.
    metric : str
        ``lcot``, ``npv`` or ``ratio``.
    option : str or None
        One challenger, or None for every one.
    target : float or None [USD or -, as the metric]
        Value of the metric at which the option ties; None: the metric's default (0 or 1).

    Returns
    -------
    list of Breakeven
        One per option: ``status`` ``crosses``, ``always`` (the option wins across the range)
        or ``never``, the crossing value [unit of param] and every change in the range.
    """
    spec = scenario.params[param]
    if metric not in BREAKEVEN_METRICS:
        raise InputError.one("metric", metric, f"must be one of {', '.join(BREAKEVEN_METRICS)}")
    target = BREAKEVEN_METRICS[metric][1] if target is None else read_number(target, None, "target")
    low = spec.low if low is None else read_number(low, None, "low")
    high = spec.high if high is None else read_number(high, None, "high")
    for name, bound in (("low", low), ("high", high)):
        if not spec.field.admits_bound(bound):
            raise InputError.one(name, bound, f"{param} {spec.field.rule()}")
    if not high > low:
        given = f"its range in the scenario is {spec.low:g} to {spec.high:g} {spec.unit}".rstrip() \
            if spec.high > spec.low else "it has no range in the scenario, give one"
        raise InputError.one("range", [low, high], f"needs low < high; {param}: {given}")
    names = [o.name for o in scenario.structure.challengers]
    if option is not None and option not in names:
        raise InputError.one("option", option, f"must be a non-baseline option: {', '.join(names)}")
    chosen = [option] if option else names
    # a training scenario: the cost per run instead of the cost per token
    if getattr(scenario, "kind", "inference") == "training":
        def figures(updates):
            return training_cost_figures(scenario, updates)
    else:
        figures = MovedCostFigures(scenario)  # each option evaluated only where a value it reads moves
    base = scenario.structure.baseline

    def evaluate(track, x):
        """Gap and feasibility code (1: the option meets its targets, 2: the baseline does) of option ``track[k]`` at ``x[k]``."""
        results = figures({param: x})
        gaps = np.stack([np.broadcast_to(gap_from_results(results, base, n, metric, target), x.shape) for n in chosen])
        feasible = np.stack([np.broadcast_to(np.asarray(results[n].feasible) > 0, x.shape) for n in chosen])
        pick = (track, np.arange(len(x)))
        return gaps[pick], feasible[pick] + 2 * np.broadcast_to(np.asarray(results[base].feasible) > 0, x.shape)

    integer = spec.field.integer
    scans = scan(evaluate, [low] * len(chosen), [high] * len(chosen), integer=integer, points=POINTS)
    out = []
    for name, result in zip(chosen, scans, strict=True):
        flips = [c for c in result.changes if c.flips]
        status = "crosses" if flips else ("always" if result.wins_at_low else "never")
        crossings = [{"value": c.value, "flips": c.flips, "feasibility": c.feasibility, "wins_below": c.wins_below,
                      "wins_above": c.wins_above, "option_feasible_below": bool(c.state_below & 1),
                      "option_feasible_above": bool(c.state_above & 1),
                      "baseline_feasible_below": bool(c.state_below & 2),
                      "baseline_feasible_above": bool(c.state_above & 2)} for c in result.changes]
        windows = [{"from": a, "to": b, "option_wins": w, "option_feasible": bool(st & 1), "baseline_feasible": bool(st & 2)}
                   for a, b, w, st in result.segments()]
        for window, kind in zip(windows, reading(windows, result.low, result.high), strict=True):
            window["reads_as"] = kind
        out.append(Breakeven(name, param, metric, target, result.low, result.high, flips[0].value if flips else None,
                             status, flips[0].wins_above if flips else None, spec.value, spec.unit, base, integer,
                             crossings, windows))
    return out
