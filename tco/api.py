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

from .core.comparison import Analysis, analyse, cost_ratio, npv_usd
from .core.evaluate import BOUND_NAMES, INFEASIBLE_REASONS, evaluate
from .core.outputs import COST_LINES, OptionResult
from .errors import FieldError, InputError
from .params import unknown_name_rule
from .scenario import Scenario
from .solvers import BREAKEVEN_METRICS, STATUS_NAMES, find_crossing
from .util import json_safe, scalar
from .values import read_number

TOKEN_BASIS = "USD per million output tokens (input+output basis reported beside it)"



def scenario_values(scenario: Scenario, updates: Mapping[str, object] | None = None) -> dict[str, object]:
    """The scenario's parameter values with ``updates`` (names to floats or arrays) applied on top
    without range checks (for sweeps); an unknown name is an input error."""
    values = scenario.values()
    if updates:
        unknown = [FieldError(name, value, unknown_name_rule(name, values)) for name, value in updates.items()
                   if name not in values]
        if unknown:
            raise InputError(unknown)
        values.update(updates)
    return values


def evaluate_scenario(scenario: Scenario, updates: Mapping[str, object] | None = None):
    """Core results ``{option: OptionResult}`` and the values used, with ``updates`` applied
    (see :func:`scenario_values`)."""
    values = scenario_values(scenario, updates)
    return evaluate(scenario.structure, values), values


def analyse_scenario(scenario: Scenario, updates: Mapping[str, object] | None = None) -> Analysis:
    """The core pipeline (results, cash flows, comparison against the baseline) at the scenario's values."""
    return analyse(scenario.structure, scenario_values(scenario, updates))


@dataclass
class Comparison:
    """What ``tco compare`` reports: per-option table, challenger metrics, verdict."""

    scenario: Scenario
    options: pd.DataFrame
    challengers: pd.DataFrame
    verdict: str
    details: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The JSON contract of ``tco compare --format json`` (see docs/outputs.md)."""
        best = self._best_challenger()
        comp = {k: json_safe(v) for k, v in (self.challengers.loc[best].items() if best else [])}
        structure = self.scenario.structure
        return {
            "scenario": {"name": self.scenario.name, "title": self.scenario.title, "question": self.scenario.question,
                         "baseline": structure.baseline, "model": structure.model, "token_basis": TOKEN_BASIS},
            "options": self.details,
            "comparison": {"option": best, "baseline": structure.baseline, **comp,
                           "by_option": {name: {k: json_safe(v) for k, v in row.items()}
                                         for name, row in self.challengers.iterrows()}},
            "verdict": self.verdict,
        }

    def _best_challenger(self) -> str | None:
        rows = self.options.drop(index=self.scenario.structure.baseline)
        rows = rows[np.isfinite(rows["lcot_usd_per_mtok"])]
        feasible = rows[rows["feasible"]]
        pool = feasible if len(feasible) else rows
        return None if pool.empty else str(pool["lcot_usd_per_mtok"].idxmin())


#: option outputs of the ``tco compare`` table, in column order
TABLE_OUTPUTS = ("lcot_usd_per_mtok", "lcot_usd_per_mtok_all_tokens", "pv_cost_usd", "devices", "tokens_per_joule", "ttft_s",
                 "tpot_s", "batch", "spilled_bytes", "power_w", "kv_transfer_s", "link_ports")


def bounds(result: OptionResult) -> dict[str, str]:
    """What limits each phase: ``{"prefill": "compute", "decode": "bandwidth"}`` (first draw)."""
    bound = {}
    for pool in result.pools.values():
        if pool.performance.prefill_bound is not None:
            bound["prefill"] = BOUND_NAMES[int(scalar(pool.performance.prefill_bound))]
        if pool.performance.decode_bound is not None:
            bound["decode"] = BOUND_NAMES[int(scalar(pool.performance.decode_bound))]
    return bound


def placement(result: OptionResult) -> str:
    """Which phase runs on which device, in words."""
    return "; ".join(f"{'prefill+decode' if role == 'colocated' else role} on {p.device}" for role, p in result.pools.items())


def compare(scenario: Scenario) -> Comparison:
    """Evaluate every option of ``scenario`` at its base values and explain the result."""
    analysis = analyse_scenario(scenario)
    rows, details, comp_rows = [], [], []
    for option in scenario.structure.options:
        r = analysis.options[option.name]
        bound = bounds(r)
        code = int(scalar(r.infeasible_code))
        reasons = [text for bit, text in INFEASIBLE_REASONS.items() if code & bit]
        where = placement(r)
        row = {"option": option.name, "placement": where, "feasible": code == 0,
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
            "power_w": row["power_w"], "ttft_s": row["ttft_s"], "tpot_s": row["tpot_s"], "batch": row["batch"],
            "bound": bound, "spilled_bytes": row["spilled_bytes"], "kv_transfer_s": row["kv_transfer_s"],
            "link_ports": row["link_ports"], "feasible": code == 0, "infeasible_reasons": reasons,
            "cost_breakdown_pv_usd": {line.line: scalar(getattr(r, line.name)) for line in COST_LINES},
            "accounting_cost_usd_per_year": scalar(r.accounting_cost_usd_per_year),
        })
        if option.name in analysis.challengers:
            comp_rows.append({"option": option.name,
                              **{k: scalar(v) for k, v in analysis.challengers[option.name].flat().items()}})
    options = pd.DataFrame(rows).set_index("option")
    table = pd.DataFrame(comp_rows).set_index("option") if comp_rows else pd.DataFrame()
    result = Comparison(scenario, options, table, "", details)
    result.verdict = verdict(result, analysis.options)
    return result


def verdict(result: Comparison, results: Mapping[str, OptionResult]) -> str:
    """One sentence: which option is cheapest per output token, by how much, and why."""
    structure = result.scenario.structure
    table = result.options
    feasible = table[table["feasible"]]
    if feasible.empty:
        return "No option meets the latency targets; " + "; ".join(
            f"{d['name']}: {', '.join(d['infeasible_reasons'])}" for d in result.details)
    finite = feasible[np.isfinite(feasible["lcot_usd_per_mtok"])]
    if finite.empty:
        overflow = np.isinf(feasible["pv_cost_usd"]).any()
        return ("No option has a finite cost at these inputs: " + (
            "the costs overflow (an input is too large)." if overflow else
            "the cost per token is undefined (0/0); please report these inputs."))
    feasible = finite
    best = str(feasible["lcot_usd_per_mtok"].idxmin())
    base = structure.baseline
    cost = feasible.loc[best, "lcot_usd_per_mtok"]
    if best == base:
        others = feasible.drop(index=base)
        if others.empty:
            return f"{base} is the only option that meets the latency targets (${cost:.3g}/M output tokens)."
        runner = str(others["lcot_usd_per_mtok"].idxmin())
        ratio = others.loc[runner, "lcot_usd_per_mtok"] / cost
        return (f"The baseline {base} is cheapest at ${cost:.3g}/M output tokens; the best alternative, {runner}, "
                f"costs {ratio:.2f}x as much, mainly through {_main_reason(results[runner], results[base])}.")
    ratio = cost / table.loc[base, "lcot_usd_per_mtok"]
    return (f"{best} is cheapest at ${cost:.3g}/M output tokens, {ratio:.2f}x the baseline {base} "
            f"(${table.loc[base, 'lcot_usd_per_mtok']:.3g}/M), mainly through "
            f"{_main_reason(results[best], results[base])}.")


def _main_reason(option: OptionResult, base: OptionResult) -> str:
    """The cost line whose PV differs most between two options, in words."""
    diffs = {line: scalar(getattr(option, line.name)) - scalar(getattr(base, line.name)) for line in COST_LINES}
    line = max(diffs, key=lambda k: abs(diffs[k]))
    word = "higher" if diffs[line] > 0 else "lower"
    what = line.line.removesuffix("_usd").replace("_", " ")
    return f"{word} {what} (PV {diffs[line] / 1e6:+.3g} M USD)"


@dataclass
class Breakeven:
    """One break-even search result."""

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

    def to_dict(self) -> dict:
        return {k: json_safe(v) for k, v in self.__dict__.items()}


def breakeven(scenario: Scenario, param: str, low: float | None = None, high: float | None = None,
              metric: str = "lcot", option: str | None = None, target: float | None = None) -> list[Breakeven]:
    """Value of ``param`` at which ``option`` (every challenger by default) ties the baseline.

    ``metric`` is ``lcot`` (cost per output token equal), ``npv`` (NPV of choosing the
    option equals ``target``) or ``ratio`` (option / baseline cost equals ``target``); on a
    training scenario the cost is the cost per run (``npv``: USD saved per run).
    Returns one :class:`Breakeven` per option; ``status`` is ``crosses``, ``always``
    (the option wins across the range) or ``never``.
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
        raise InputError.one("range", [low, high], f"needs low < high; {param} has no range in the scenario, give one")
    names = [o.name for o in scenario.structure.challengers]
    if option is not None and option not in names:
        raise InputError.one("option", option, f"must be a non-baseline option: {', '.join(names)}")
    gap = option_gap
    if getattr(scenario, "kind", "inference") == "training":  # cost per run instead of cost per token
        from .training_api import training_option_gap as gap
    out = []
    for name in [option] if option else names:
        x, status, above = find_crossing(lambda xs, n=name: gap(scenario, {param: xs}, n, metric, target), low, high)
        found = int(status) == 0
        out.append(Breakeven(name, param, metric, target, low, high, float(x) if found else None,
                             STATUS_NAMES[int(status)], bool(above) if found else None, spec.value, spec.unit))
    return out


def option_gap(scenario: Scenario, updates: Mapping[str, object], option: str, metric: str, target: float):
    """Signed distance of ``option`` from winning on ``metric`` (negative: it wins).

    An option that misses a latency target never wins; a baseline that misses one
    always loses to a feasible option.
    """
    results, _values = evaluate_scenario(scenario, updates)
    return gap_from_results(results, scenario.structure.baseline, option, metric, target)


class CostFigures(NamedTuple):
    """What a win gap reads of an option: an :class:`~tco.core.outputs.OptionResult` has these
    fields; a training option maps its cost per run onto them (:mod:`tco.training_api`)."""

    lcot_usd_per_mtok: object
    pv_cost_usd: object
    feasible: object


def gap_from_results(results: Mapping[str, OptionResult | CostFigures], baseline: str, option: str, metric: str,
                     target: float):
    """:func:`option_gap` from core results already computed (``{option: OptionResult}``)."""
    r, base = results[option], results[baseline]
    if metric == "lcot":
        gap = r.lcot_usd_per_mtok - base.lcot_usd_per_mtok - target
    elif metric == "npv":
        gap = target - npv_usd(base, r)
    else:
        gap = cost_ratio(base, r) - target
    ok, base_ok = r.feasible > 0, base.feasible > 0
    return np.where(ok, np.where(base_ok, gap, -np.abs(gap) - 1.0), np.abs(gap) + 1.0)


def parameters(scenario: Scenario, reference: bool = False) -> pd.DataFrame:
    """Every named parameter: name, value, unit, low, high, distribution, grade, source, date, note.

    ``role`` is ``input`` for the parameters the model reads. With ``reference=True`` the
    catalog figures shown beside them follow (device list/street/cost-of-goods prices,
    architecture facts the core does not read yet), with ``role`` ``reference``: they are
    never drawn by a study.
    """
    groups = [("input", scenario.params.values_list())]
    if reference:
        groups.append(("reference", scenario.reference.values_list()))
    rows = [{"name": p.name, "value": p.value, "unit": p.unit, "low": p.low, "high": p.high,
             "distribution": p.distribution, "grade": p.grade, "source": p.source, "date": p.date, "note": p.note,
             "role": role}
            for role, params in groups for p in params]
    return pd.DataFrame(rows)
