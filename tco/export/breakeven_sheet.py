"""The Break-even sheet: closed-form break-evens as live formulas, solver-only ones as a snapshot.

Closed forms (:mod:`tco.core.nre`, :mod:`tco.core.lifecycle`): the break-even volume
``V* = b NRE / (c - a)``, the NRE that breaks even at the scenario's volume, the
"two-for-two" rule, ``L/H`` and the effective life. Break-evens that need the solver
(:func:`tco.api.breakeven`) are written as values and labelled as a snapshot.
"""

from __future__ import annotations

from ..api import breakeven
from ..core.outputs import COMPARISON_OUTPUTS
from ..core.structure import device_param
from ..scenario import Scenario
from .cells import SNAPSHOT_FILL, QuantitySheet, put_text
from .model_sheet import ModelRefs, OptionRefs

#: parameters the snapshot solves for, when the scenario gives them a range (each search costs
#: ~0.13 s, and export must stay under 2 s; `tco breakeven` solves for any other parameter)
SOLVER_PARAMS = ("workload.half_life_years", "workload.requests_per_s", "program.volume_units")


def write_breakeven(ws, scenario: Scenario, names: dict[str, str], model: ModelRefs,
                    cash: dict[str, OptionRefs]) -> dict[str, OptionRefs]:
    """Fill ``ws``; returns per challenger the references of its closed-form quantities."""
    sheet = QuantitySheet(ws)
    q = sheet.quantity
    structure = scenario.structure
    base = cash[structure.baseline].option
    half_life = names["workload.half_life_years"]
    out: dict[str, OptionRefs] = {}

    def output(name: str, formula: str) -> str:
        """A row for comparison output ``name`` (label and unit from the output table)."""
        spec = COMPARISON_OUTPUTS[name]
        refs[name] = q(spec.meaning, formula, spec.unit, name)
        return refs[name]

    sheet.heading("Closed-form break-evens and specialization indicators (live formulas)")
    for option in structure.challengers:
        out[option.name] = OptionRefs()
        refs = out[option.name].option
        sheet.heading(f"{option.name} vs the baseline {structure.baseline}", level=2)
        lives = [names[device_param(p.device, "useful_life_years")] for p in option.pools if p.specialized]
        if lives:
            life = lives[0] if len(lives) == 1 else f"MAX({','.join(lives)})"
            output("life_over_half_life", f"{life}/{half_life}")
            output("effective_life_years", f"{half_life}/LN(2)*(1-2^(-{life}/{half_life}))")
        built = [p for p in option.pools if p.built]
        if not built:
            continue
        c = cash[option.name]
        nre = output("nre_usd", model.shared["nre"])
        units = q("PV of the units this fleet buys (b)", "+".join(c.pool(p.role)["pv_units_bought"] for p in built), "units")
        without = q("PV cost without the NRE share (a)", f"{c.option['pv_cost_usd']}-{c.option['pv_nre_usd']}", "USD")
        margin = q("baseline PV cost minus a (c - a)", f"{base['pv_cost_usd']}-{without}", "USD")
        output("breakeven_volume_units", f'IF({margin}>0,{units}*{nre}/{margin},"never")')
        output("breakeven_nre_usd", f'IF({margin}>0,{margin}*{names["program.volume_units"]}/{units},"never")')
        yearly = q("baseline TCO per year (PV cost / annuity factor)", f"{base['pv_cost_usd']}/{model.shared['annuity']}",
                   "USD/yr")
        ratio = output("baseline_tco_over_nre", f"{yearly}/{nre}")
        improvement = output("tco_improvement", f"{base['pv_cost_usd']}/{without}")
        output("two_for_two_holds", f"IF(AND({ratio}>=2,{improvement}>=2),1,0)")
    _write_solver_snapshot(sheet, scenario)
    return out


def solver_searches(scenario: Scenario) -> list[tuple[str, str]]:
    """``(parameter, option)`` pairs to solve: the fixed list for every challenger, plus each
    specialized device's price for the options that use it; only parameters with a range."""
    uncertain = {p.name for p in scenario.params.uncertain()}
    pairs = []
    for option in scenario.structure.challengers:
        prices = [device_param(p.device, "price_usd") for p in option.pools if p.specialized]
        pairs += [(name, option.name) for name in (*SOLVER_PARAMS, *dict.fromkeys(prices)) if name in uncertain]
    return sorted(pairs, key=lambda pair: pair[0])


def _write_solver_snapshot(sheet: QuantitySheet, scenario: Scenario) -> None:
    sheet.heading("Solver-only break-evens: SNAPSHOT from tco (values, not live; rerun `tco export` after edits); "
                  "every crossing and feasibility window in each range")
    ws = sheet.ws
    header = ("option", "parameter", "status", "first break-even", "wins", "base value", "low", "high", "unit",
              "every crossing and feasibility edge", "windows in words")
    for i, title in enumerate(header, start=1):
        put_text(ws, sheet.row, i, title, bold=True)
    sheet.row += 1
    for name, option in solver_searches(scenario):
        for r in breakeven(scenario, name, option=option):
            texts = {1: r.option, 2: r.param, 3: r.status, 5: "" if r.wins_above is None else
                     ("above" if r.wins_above else "below"), 9: r.unit,
                     10: ", ".join(f"{c['value']:.6g}" for c in r.crossings), 11: r.sentence()}
            for column, text in texts.items():
                put_text(ws, sheet.row, column, text)
            for column, number in ((4, r.value), (6, r.base_value), (7, r.low), (8, r.high)):
                cell = ws.cell(row=sheet.row, column=column, value=number)
                cell.fill = SNAPSHOT_FILL
            sheet.row += 1
