"""The Python API: compare options, find break-evens, list parameters.

    >>> import tco
    >>> s = tco.load_scenario("default")
    >>> result = tco.compare(s)
    >>> result.options[["lcot_usd_per_mtok", "devices"]]

Everything returns pandas DataFrames or plain objects; the numbers come from the
vectorized core (:mod:`tco.core.evaluate`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd

from . import timeviews
from .core.comparison import Analysis, analyse, gap_from_results
from .core.evaluate import evaluate
from .core.outputs import COST_LINES, OptionResult
from .display import param_label, quantity, sig
from .errors import FieldError, InputError
from .params import unknown_name_rule
from .report import bounds, infeasible_reasons, placement, shapes
from .scenario import Scenario
from .solvers import BREAKEVEN_METRICS, scan
from .util import json_safe, scalar
from .values import read_number
from .verdict import DEFAULT_TIE_TOLERANCE, Verdict, decide, explained

TOKEN_BASIS = "USD per million output tokens (input+output basis reported beside it)"



def scenario_values(scenario: Scenario, updates: Mapping[str, object] | None = None) -> dict[str, object]:
    """The scenario's parameter values with ``updates`` applied on top, without range checks (for sweeps).

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario.
    updates : Mapping[str, object] or None
        Values by dotted name (floats or arrays that broadcast), in their fields' units.

    Returns
    -------
    dict[str, object] [unit of each field]
        Every named parameter's value.

    Raises
    ------
    InputError
        An update names no parameter of the scenario.
    """
    values = scenario.values()
    if updates:
        unknown = [FieldError(name, value, unknown_name_rule(name, values)) for name, value in updates.items()
                   if name not in values]
        if unknown:
            raise InputError(unknown)
        values.update(updates)
    return values


def evaluate_scenario(scenario: Scenario, updates: Mapping[str, object] | None = None):
    """Core results and the values used, with ``updates`` applied (see :func:`scenario_values`).

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario.
    updates : Mapping[str, object] or None
        Values by dotted name, applied without range checks.

    Returns
    -------
    results : dict[str, OptionResult]
        ``{option: OptionResult}``, outputs in the units of the output table.
    values : dict[str, object] [unit of each field]
        The parameter values evaluated.
    """
    values = scenario_values(scenario, updates)
    return evaluate(scenario.structure, values), values


def analyse_scenario(scenario: Scenario, updates: Mapping[str, object] | None = None) -> Analysis:
    """The core pipeline (results, cash flows, comparison against the baseline) at the scenario's values.

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario.
    updates : Mapping[str, object] or None
        Values by dotted name applied first (see :func:`scenario_values`).

    Returns
    -------
    Analysis
        Every option's result and cash flows, and each challenger against the baseline.
    """
    return analyse(scenario.structure, scenario_values(scenario, updates))


@dataclass
class Comparison:
    """What ``tco compare`` reports: per-option table, challenger metrics, verdict."""

    scenario: Scenario
    options: pd.DataFrame
    challengers: pd.DataFrame
    verdict: str
    details: list[dict] = field(default_factory=list)
    decision: Verdict | None = None
    results: dict[str, OptionResult] = field(default_factory=dict)
    #: the chip program seen by its owner and its vendor, per option on the built chip (:mod:`tco.timeviews`)
    program: dict = field(default_factory=dict)
    #: the general-purpose generation the baseline runs on each year (empty without a roadmap)
    baseline_roadmap: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The JSON contract of ``tco compare --format json`` (see docs/outputs.md)."""
        best = self._best_challenger()
        comp = {k: json_safe(v) for k, v in (self.challengers.loc[best].items() if best else [])}
        structure = self.scenario.structure
        return {
            "scenario": {"name": self.scenario.name, "title": self.scenario.title, "question": self.scenario.question,
                         "baseline": structure.baseline, "model": structure.model, "token_basis": TOKEN_BASIS,
                         "serving": {"policy": structure.policy, "prefill_queue": structure.prefill_queue}},
            "options": self.details,
            "comparison": {"option": best, "baseline": structure.baseline, **comp,
                           "by_option": {name: {k: json_safe(v) for k, v in row.items()}
                                         for name, row in self.challengers.iterrows()}},
            "program": self.program,
            "baseline_roadmap": self.baseline_roadmap,
            "verdict": self.verdict,
            "verdict_detail": self.decision.to_dict() if self.decision else None,
            "warnings": [{"path": w.path, "value": json_safe(w.value), "message": w.message}
                         for w in self.scenario.warnings],
        }

    def _best_challenger(self) -> str | None:
        rows = self.options.drop(index=self.scenario.structure.baseline)
        rows = rows[np.isfinite(rows["lcot_usd_per_mtok"])]
        feasible = rows[rows["feasible"]]
        pool = feasible if len(feasible) else rows
        return None if pool.empty else str(pool["lcot_usd_per_mtok"].idxmin())


#: option outputs of the ``tco compare`` table, in column order
TABLE_OUTPUTS = ("lcot_usd_per_mtok", "lcot_usd_per_mtok_all_tokens", "pv_cost_usd", "devices", "tokens_per_joule", "ttft_s",
                 "tpot_s", "queue_wait_s", "batch", "spilled_bytes", "power_w", "kv_transfer_s", "link_ports")


def compare(scenario: Scenario, tie_tolerance: float = DEFAULT_TIE_TOLERANCE, with_flips: bool = True) -> Comparison:
    """Evaluate every option of ``scenario`` at its base values and explain the result.

    The verdict (:func:`tco.verdict.decide`): a tie within ``tie_tolerance``, else winner,
    margin, driver, and with ``with_flips`` the inputs that flip it.

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario.
    tie_tolerance : float [-]
        Relative LCOT difference under which the options tie.
    with_flips : bool
        Whether to search the inputs that flip the verdict (slower).

    Returns
    -------
    Comparison
        The per-option table, the challengers' metrics and the verdict, as ``tco compare`` reports them.
    """
    analysis = analyse_scenario(scenario)
    rows, details, comp_rows = [], [], []
    for option in scenario.structure.options:
        r = analysis.options[option.name]
        bound = bounds(r)
        reasons = infeasible_reasons(r)
        where = placement(r)
        row = {"option": option.name, "placement": where, "shape": shapes(r), "feasible": not reasons,
               "bound": ", ".join(f"{phase}: {what}" for phase, what in bound.items()),
               **{k: scalar(getattr(r, k)) for k in TABLE_OUTPUTS}}
        rows.append(row)
        details.append({
            "name": option.name, "placement": where, "specialized": option.specialized,
            "lcot_usd_per_mtok": row["lcot_usd_per_mtok"],
            "lcot_usd_per_mtok_all_tokens": row["lcot_usd_per_mtok_all_tokens"],
            "pv_cost_usd": row["pv_cost_usd"],
            "devices": {role: scalar(p.sizing.devices) for role, p in r.pools.items()},
            "devices_per_replica": {role: scalar(p.performance.devices_per_replica) for role, p in r.pools.items()},
            "utilization": {role: scalar(p.sizing.utilization) for role, p in r.pools.items()},
            "tokens_per_joule": row["tokens_per_joule"], "tokens_per_s": scalar(r.tokens_per_s),
            "power_w": row["power_w"], "ttft_s": row["ttft_s"], "tpot_s": row["tpot_s"],
            "queue_wait_s": row["queue_wait_s"], "shape": row["shape"], "batch": row["batch"],
            "interference_share": {role: scalar(p.performance.interference_share) for role, p in r.pools.items()
                                   if p.performance.interference_share is not None},
            "bound": bound, "spilled_bytes": row["spilled_bytes"], "kv_transfer_s": row["kv_transfer_s"],
            "link_ports": row["link_ports"], "feasible": not reasons, "infeasible_reasons": reasons,
            "cost_breakdown_pv_usd": {line.line: scalar(getattr(r, line.name)) for line in COST_LINES},
            "accounting_cost_usd_per_year": scalar(r.accounting_cost_usd_per_year),
        })
        if option.name in analysis.challengers:
            comp_rows.append({"option": option.name,
                              **{k: scalar(v) for k, v in analysis.challengers[option.name].flat().items()}})
    options = pd.DataFrame(rows).set_index("option")
    table = pd.DataFrame(comp_rows).set_index("option") if comp_rows else pd.DataFrame()
    decision = explained(decide(scenario, analysis.options, tie_tolerance, with_flips), scenario, analysis.options)
    result = Comparison(scenario, options, table, decision.text, details, decision, analysis.options,
                        timeviews.program_view(analysis), timeviews.baseline_generations(analysis))
    wins = {name: bool(scalar(row.npv_usd) > 0) for name, row in analysis.challengers.items()}
    result.verdict = " ".join(filter(None, [decision.text, timeviews.roadmap_sentence(result.baseline_roadmap),
                                            *timeviews.program_sentences(result.program, wins),
                                            *timeviews.advantage_sentences(analysis)]))
    return result


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

    def _span(self, i: int, window: dict) -> str:
        last = len(self.windows) - 1
        lo, hi = window["from"], window["to"]
        if last == 0:
            return f"across {quantity(self.low, self.unit)} to {quantity(self.high, self.unit)}"
        if self.integer:  # whole numbers: a piece holds from its start up to one below the next change
            hi -= 1
            if i == 0:
                return f"up to {quantity(hi, self.unit)}"
            if i == last:
                return f"from {quantity(lo, self.unit)}"
            return f"at {quantity(lo, self.unit)}" if lo == hi else f"from {quantity(lo, self.unit)} to {quantity(hi, self.unit)}"
        if i == 0:
            return f"below {quantity(hi, self.unit)}"
        if i == last:
            return f"above {quantity(lo, self.unit)}"
        return f"from {quantity(lo, self.unit)} to {quantity(hi, self.unit)}"

    def sentence(self) -> str:
        """The windows in words: ``groq vs h100, time-per-output-token target: below 3.94 ms, neither meets the
        latency targets; from 3.94 ms to 4.3 ms, only groq meets the latency targets; above 4.3 ms, h100 is cheaper.``"""
        parts = [f"{self._span(i, w)}, {self._regime(w['option_wins'], w['option_feasible'], w['baseline_feasible'])}"
                 for i, w in enumerate(self.windows)]
        return f"{self.option} vs {self.baseline}, {param_label(self.param)}: " + "; ".join(parts) + "."


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
    figures = cost_figures
    if getattr(scenario, "kind", "inference") == "training":  # cost per run instead of cost per token
        from .training_api import training_cost_figures as figures
    base = scenario.structure.baseline

    def evaluate(track, x):
        """Gap and feasibility code (1: the option meets its targets, 2: the baseline does) of option ``track[k]`` at ``x[k]``."""
        results = figures(scenario, {param: x})
        gaps = np.stack([np.broadcast_to(gap_from_results(results, base, n, metric, target), x.shape) for n in chosen])
        feasible = np.stack([np.broadcast_to(np.asarray(results[n].feasible) > 0, x.shape) for n in chosen])
        pick = (track, np.arange(len(x)))
        return gaps[pick], feasible[pick] + 2 * np.broadcast_to(np.asarray(results[base].feasible) > 0, x.shape)

    integer = spec.field.integer
    scans = scan(evaluate, [low] * len(chosen), [high] * len(chosen), integer=integer)
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
        out.append(Breakeven(name, param, metric, target, result.low, result.high, flips[0].value if flips else None,
                             status, flips[0].wins_above if flips else None, spec.value, spec.unit, base, integer,
                             crossings, windows))
    return out


def cost_figures(scenario: Scenario, updates: Mapping[str, object]) -> dict[str, OptionResult]:
    """What a win gap reads of each option (:class:`CostFigures` fields), with ``updates`` applied.

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario.
    updates : Mapping[str, object]
        Values by dotted name, applied without range checks.

    Returns
    -------
    dict[str, OptionResult]
        Each option's result (LCOT [USD/Mtok], PV cost [USD], feasibility).
    """
    return evaluate_scenario(scenario, updates)[0]


def option_gap(scenario: Scenario, updates: Mapping[str, object], option: str, metric: str, target: float):
    """Signed distance of ``option`` from winning on ``metric`` (negative: it wins).

    An option that misses a latency target never wins; a baseline that misses one
    always loses to a feasible option (:func:`tco.core.comparison.gap_from_results`).

    Parameters
    ----------
    scenario, updates : Scenario, Mapping[str, object]
        The scenario and the values applied to it, as in :func:`cost_figures`.
    option, metric, target : str, str, float [USD/Mtok, USD or -, as the metric]
        The challenger measured, ``lcot``, ``npv`` or ``ratio``, and the value at which it ties.

    Returns
    -------
    ndarray [USD/Mtok, USD or -, as the metric]
        The gap at every evaluated point (:func:`tco.core.comparison.gap_from_results`).
    """
    return gap_from_results(cost_figures(scenario, updates), scenario.structure.baseline, option, metric, target)


class CostFigures(NamedTuple):
    """What a win gap reads of an option: an :class:`~tco.core.outputs.OptionResult` has these
    fields; a training option maps its cost per run onto them (:mod:`tco.training_api`)."""

    lcot_usd_per_mtok: object
    pv_cost_usd: object
    feasible: object


def parameters(scenario: Scenario, reference: bool = False, settings: bool = False) -> pd.DataFrame:
    """Every named parameter: name, value, unit, low, high, distribution, grade, source, date, note.

    ``role`` is ``input`` for the parameters the model reads. With ``settings=True`` the
    settings of the fleet analyses follow (``fleet_dynamics.*``, read by :mod:`tco.dynamics`
    only), with ``role`` ``setting``; with ``reference=True`` the catalog figures shown beside
    them (device list/street/cost-of-goods prices, architecture facts the core does not read
    yet), with ``role`` ``reference``. Neither is drawn by a study of the cost model.

    Parameters
    ----------
    scenario : Scenario
        A loaded scenario (inference or training).
    reference : bool
        Add the reference figures.
    settings : bool
        Add the fleet-analysis settings.

    Returns
    -------
    pandas.DataFrame
        One row per parameter, its value and range in its own ``unit`` column.
    """
    groups = [("input", scenario.params.values_list())]
    if settings and hasattr(scenario, "dynamics"):  # a training scenario runs no fleet analysis
        groups.append(("setting", scenario.dynamics.values_list()))
    if reference and hasattr(scenario, "reference"):  # a training scenario has no reference figures
        groups.append(("reference", scenario.reference.values_list()))
    rows = [{"name": p.name, "value": p.value, "unit": p.unit, "low": p.low, "high": p.high,
             "distribution": p.distribution, "grade": p.grade, "source": p.source, "date": p.date, "note": p.note,
             "role": role}
            for role, params in groups for p in params]
    return pd.DataFrame(rows)
