"""What ``tco compare`` reports on an inference scenario: the options table, the challengers,
the verdict in words and the JSON contract (docs/outputs.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from tco.analysis import program_views
from tco.analysis.evaluation import analyse_scenario
from tco.analysis.market import MarketCheck, market_check
from tco.analysis.verdict import DEFAULT_TIE_TOLERANCE, Verdict, decide
from tco.core.money import cashflow
from tco.core.outputs import COST_LINES, OptionResult
from tco.foundation.plain_values import json_safe, scalar
from tco.inputs.scenario import Scenario
from tco.present import program_text
from tco.present.market_text import against_the_market, market_sentences
from tco.present.tables import OPTIONAL_ROWS, bounds, infeasible_reasons, placement, shapes
from tco.present.verdict_text import explained

TOKEN_BASIS = "USD per million output tokens (input+output basis reported beside it)"


@dataclass
class Comparison:
    """What ``tco compare`` reports: per-option table, challenger metrics, verdict."""

    scenario: Scenario
    options: pd.DataFrame
    challengers: pd.DataFrame
    verdict: str
    details: list[dict] = field(default_factory=list)
    decision: Verdict | None = None
    #: each option's result as the table shows it: a roadmap baseline with the serving figures of the generation its
    #: fleet runs at t = 0 (:func:`tco.analysis.program_views.baseline_as_run`)
    results: dict[str, OptionResult] = field(default_factory=dict)
    #: the chip program seen by its owner and its vendor, per option on the built chip (:mod:`tco.analysis.program_views`)
    program: dict = field(default_factory=dict)
    #: the general-purpose generation the baseline runs on each year (empty without a roadmap)
    baseline_roadmap: dict = field(default_factory=dict)
    #: the options against the market: the model's API prices, each option owned and rented (:mod:`tco.analysis.market`)
    market: MarketCheck | None = None

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
            "market": self.market.to_dict() if self.market else None,
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

    The verdict (:func:`tco.analysis.verdict.decide`): a tie within ``tie_tolerance``, else winner,
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
    fleets = program_views.generation_fleets(analysis)
    shown = {**analysis.options, scenario.structure.baseline: program_views.baseline_as_run(analysis, fleets)}
    rows, details, comp_rows = [], [], []
    for option in scenario.structure.options:
        r = shown[option.name]
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
            **{name: {role: scalar(getattr(p.performance, name)) for role, p in r.pools.items()
                      if getattr(p.performance, name) is not None}
               for name in OPTIONAL_ROWS if any(getattr(p.performance, name) is not None for p in r.pools.values())},
            "bound": bound, "spilled_bytes": row["spilled_bytes"], "kv_transfer_s": row["kv_transfer_s"],
            "link_ports": row["link_ports"], "feasible": not reasons, "infeasible_reasons": reasons,
            "cost_breakdown_pv_usd": {line.line: scalar(getattr(r, line.name)) for line in COST_LINES},
            "accounting_cost_usd_per_year": scalar(r.accounting_cost_usd_per_year),
        })
        if option.name in analysis.challengers:
            challenger = {k: scalar(v) for k, v in analysis.challengers[option.name].flat().items()}
            comp_rows.append({"option": option.name, **challenger,
                              "irr_note": cashflow.no_irr_reason(challenger["irr"], challenger["outlay_in_year_0"])})
    options = pd.DataFrame(rows).set_index("option")
    table = pd.DataFrame(comp_rows).set_index("option") if comp_rows else pd.DataFrame()
    decision = explained(decide(scenario, analysis.options, tie_tolerance, with_flips), scenario, analysis.options)
    result = Comparison(scenario, options, table, decision.text, details, decision, shown,
                        program_views.program_view(analysis), program_views.baseline_generations(analysis, fleets))
    result.market = market_check(scenario, shown)
    wins = {name: bool(scalar(row.npv_usd) > 0) for name, row in analysis.challengers.items()}
    result.verdict = " ".join(filter(None, [decision.text, program_text.roadmap_sentence(result.baseline_roadmap),
                                            *program_text.program_sentences(result.program, wins),
                                            *program_text.advantage_sentences(analysis),
                                            *against_the_market(market_sentences(result.market, shown, decision.winner))]))
    return result
