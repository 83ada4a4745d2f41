"""The Break-even sheet: closed-form break-evens as live formulas, solver-only ones as a snapshot.

Closed forms (:mod:`tco.core.money.nre`, :mod:`tco.core.money.lifecycle`, :func:`tco.core.comparison._program_view`):
the break-even volume ``V* = N own / (c - a)`` and external sales, the NRE that breaks even at
the program's volume, the break-even demand, the NPV on own use alone, the vendor's unit
price, the "two-for-two" rule, ``L/H``, the effective life and the software amortisation. Break-evens that need the solver
(:func:`tco.analysis.breakeven.breakeven`) are written as values and labelled as a snapshot.
"""

from __future__ import annotations

from tco.analysis.breakeven import breakeven
from tco.core import names as named
from tco.core.names import device_param
from tco.core.outputs import COMPARISON_OUTPUTS
from tco.core.serving.sizing import SECONDS_PER_YEAR
from tco.export.cells import SNAPSHOT_FILL, QuantitySheet, put_text
from tco.export.model_sheet import ModelRefs, OptionRefs
from tco.inputs.scenario import Scenario

#: parameters the snapshot solves for, when the scenario gives them a range (each search costs
#: ~0.13 s, and export must stay under 2 s; `tco breakeven` solves for any other parameter)
SOLVER_PARAMS = (named.workload.half_life_years, named.workload.requests_per_s, named.program.external_units)


def write_breakeven(ws, scenario: Scenario, names: dict[str, str], model: ModelRefs,
                    cash: dict[str, OptionRefs]) -> dict[str, OptionRefs]:
    """Fill ``ws``; returns per challenger the references of its closed-form quantities."""
    sheet = QuantitySheet(ws)
    q = sheet.quantity
    structure = scenario.structure
    base = cash[structure.baseline].option
    half_life = names[named.workload.half_life_years]
    out: dict[str, OptionRefs] = {}

    def baseline_steady_state(year: str) -> str:
        """:func:`tco.core.comparison.baseline_steady_state_usd_per_year`: the baseline's steady-state cost per year
        [USD/yr] at ``year``: on the roadmap, that of the generation held then (from the horizon on, the last year's
        before it: the baseline's path ends there)."""
        held = cash[structure.baseline].sizing.get("held_full_usd_per_year")
        if held is None:
            return f"{base['eac_usd_per_mtok']}*{model.shared['tokens_per_year']}/1E6"
        return f"INDEX({held},1,MIN({year},INT({names[named.economics.horizon_years]})-1)+1)"

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
        c = cash[option.name]
        software = [names[device_param(d, "software_port_usd")] for d in structure.adopted_devices(option)]
        built = [p for p in option.pools if p.built]
        if built:
            software.append(f"{names[named.program_nre.software_usd]}*{names[named.program.nre_scale]}")
        if software:
            saving = q("yearly saving of the option's hardware over the baseline (steady state, from its deployment)",
                       f"{baseline_steady_state(c.option['deployment_year'])}-{c.sizing['hardware_usd_per_year']}"
                       f"-{c.sizing['reauthoring_usd_per_year']}", "USD/yr")
            output("software_payback_years", f'IF({saving}>0,({"+".join(software)})/{saving},"never")')
        if not built:
            continue
        nre = output("nre_usd", c.sizing["nre_total"])
        own, volume = c.option["fleet_units"], c.option["program_volume_units"]
        nre_pv = q("PV of the program's whole NRE schedule (N)", c.sizing["nre_pv"], "USD")
        without = q("PV cost without the NRE line (a)", f"{c.option['pv_cost_usd']}-{c.option['pv_nre_usd']}", "USD")
        margin = q("baseline PV cost minus a (c - a)", f"{base['pv_cost_usd']}-{without}", "USD")
        breakeven = output("breakeven_volume_units", f'IF(AND({margin}>0,{own}>0),{own}*{nre_pv}/{margin},"never")')
        output("breakeven_external_units", f'IF(ISNUMBER({breakeven}),MAX({breakeven}-{own},0),"never")')
        output("breakeven_nre_usd", f'IF(AND({margin}>0,{own}>0),{margin}*{volume}/({own}*{nre_pv}/{nre}),"never")')
        own_npv = output("npv_own_use_usd", f"{base['pv_cost_usd']}-({without}+{nre_pv})")
        output("needs_external_sales", f"IF(AND({c.option['npv_usd']}>0,{own_npv}<=0),1,0)")
        base_fixed = q("fixed PV of the baseline: porting, re-authoring",
                       f"{base['pv_reauthoring_usd']}+{base['pv_porting_usd']}", "USD")
        fixed = q("fixed PV of the option: NRE, porting, re-authoring, and the baseline's fixed share in the bridge and "
                  "shifted work", f"{nre_pv}+{c.option['pv_reauthoring_usd']}+{c.option['pv_porting_usd']}+{base_fixed}*("
                  f"{c.option['pv_bridge_usd']}+{c.option['pv_workload_shift_usd']})/{base['pv_cost_usd']}", "USD")
        variable = q("baseline's demand-driven PV minus the option's", f"({base['pv_cost_usd']}-{base_fixed})"
                     f"-({without}+{nre_pv}-{fixed})", "USD")
        gap = f"({fixed}-{base_fixed})"
        demand = output("breakeven_demand_rps", f'IF({variable}>0,MAX({names[named.workload.requests_per_s]}*{gap}/{variable},0),'
                                                f'IF({gap}<0,0,"never"))')
        output("breakeven_tokens_per_year", f'IF(ISNUMBER({demand}),{demand}*{names[named.workload.output_tokens]}'
                                            f'*{SECONDS_PER_YEAR / 3600:g}*3600,"never")')
        price = model.options[option.name].pool(built[0].role)["unit_price_usd"]
        output("vendor_unit_price_usd", f'({price}+{nre}/MAX({volume},1))/(1-{names[named.program.vendor_gross_margin]})')
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
