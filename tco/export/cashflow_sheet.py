"""The Cash flows sheet: each option's costs by year, present values, LCOT, NPV, payback.

Mirrors :func:`tco.core.cashflow.yearly_cash_flows` (the same lines, year by year), the
option-level sums of :mod:`tco.core.evaluate` and :func:`tco.core.cashflow.payback_and_irr`
(payback). Years run from 0 to the largest horizon the inputs admit, so changing
``economics.horizon_years`` or a device life in the Inputs moves purchases, credits and
totals without rewriting the sheet; years past the horizon hold zeros.
"""

from __future__ import annotations

from dataclasses import dataclass

from openpyxl.utils import get_column_letter

from ..core.outputs import COMPARISON_OUTPUTS, COST_LINES, OPTION_OUTPUTS, POOL_OUTPUTS, YEARLY_COSTS, OutputSpec
from ..core.sizing import SECONDS_PER_YEAR
from ..core.structure import Option, Pool
from ..fields import FIELDS
from ..scenario import Scenario
from . import formulas as fx
from .cells import BOLD, HEADING_FONT, absolute, put_formula, put_text
from .model_sheet import ModelRefs, OptionRefs

LAST_YEAR = int(FIELDS["horizon_years"].maximum)
FIRST_YEAR_COLUMN = 4  # D
PV_COLUMN = 3  # C

#: label of each cash-flow line, from the output table
LINE_LABELS = {line.line: line.label for line in COST_LINES}


@dataclass
class YearRow:
    """A row of yearly values; ``pv`` references its present value."""

    row: int
    pv: str


class CashFlowSheet:
    """Row writer: label (A), unit (B), PV or value (C), years 0..LAST_YEAR (D...)."""

    def __init__(self, ws, rate: str, horizon: str):
        self.ws = ws
        self.row = 1
        self.horizon = horizon
        ws.column_dimensions["A"].width = 52
        ws.column_dimensions["B"].width = 12
        ws.column_dimensions["C"].width = 18
        self.columns = [get_column_letter(FIRST_YEAR_COLUMN + y) for y in range(LAST_YEAR + 1)]
        put_text(ws, 1, 1, "Costs by year (USD, positive = spent) and present values at the Inputs' discount rate. "
                 "Years past the horizon hold zeros.")
        self.row = 3
        put_text(ws, self.row, 1, "year", bold=True)
        put_text(ws, self.row, PV_COLUMN, "PV / value", bold=True)
        self.year_row = self.row
        for y in range(LAST_YEAR + 1):
            ws.cell(row=self.row, column=FIRST_YEAR_COLUMN + y, value=y).font = BOLD
        self.row += 1
        self.discount = self.years("discount factor (1+r)^-t", "", lambda y: fx.discount_factor(rate, self.year(y)), pv=False)
        self.operating = self.years("operating year (1 within years 1..horizon)", "",
                                    lambda y: f"IF(AND({self.year(y)}>=1,{self.year(y)}<={horizon}),1,0)", pv=False)

    def year(self, y: int) -> str:
        """The year number of column ``y`` (header row)."""
        return f"{self.columns[y]}${self.year_row}"

    def op(self, y: int) -> str:
        """1 in operating years (1..horizon), else 0."""
        return f"{self.columns[y]}${self.operating.row}"

    def cell(self, row: int, y: int) -> str:
        return f"{self.columns[y]}{row}"

    def span(self, row: int, fixed_row: bool = False) -> str:
        mark = "$" if fixed_row else ""
        return f"${self.columns[0]}{mark}{row}:${self.columns[-1]}{mark}{row}"

    def heading(self, text: str, level: int = 1) -> None:
        if level == 1:
            self.row += 1
        put_text(self.ws, self.row, 1, text).font = HEADING_FONT if level == 1 else BOLD
        self.row += 1

    def years(self, label: str, unit: str, formula, pv: bool = True) -> YearRow:
        """A row with one formula per year (``formula(y)``) and its PV in column C."""
        r = self.row
        put_text(self.ws, r, 1, label)
        put_text(self.ws, r, 2, unit)
        for y in range(LAST_YEAR + 1):
            put_formula(self.ws, r, FIRST_YEAR_COLUMN + y, formula(y), unit)
        if pv:
            put_formula(self.ws, r, PV_COLUMN, f"SUMPRODUCT({self.span(r)},{self.span(self.discount.row, True)})", unit)
        self.row += 1
        return YearRow(r, absolute(self.ws, r, PV_COLUMN))

    def scalar(self, label: str, unit: str, formula: str) -> str:
        """A single value in column C."""
        put_text(self.ws, self.row, 1, label)
        put_text(self.ws, self.row, 2, unit)
        put_formula(self.ws, self.row, PV_COLUMN, formula, unit)
        self.row += 1
        return absolute(self.ws, self.row - 1, PV_COLUMN)

    def output(self, spec: OutputSpec, formula: str) -> str:
        """A single value of an output (label and unit from the output table)."""
        return self.scalar(spec.meaning, spec.unit, formula)

    def bought(self, y: int, life: str) -> str:
        """Purchase year: ``t mod L = 0`` and ``t < horizon``."""
        t = self.year(y)
        return f"AND(MOD({t},{life})=0,{t}<{self.horizon})"


def write_cash_flows(ws, scenario: Scenario, names: dict[str, str], model: ModelRefs) -> dict[str, OptionRefs]:
    """Fill ``ws``; returns per option the references of its PVs, LCOT, NPV, payback, accounting cost."""
    sheet = CashFlowSheet(ws, names["economics.discount_rate"], names["economics.horizon_years"])
    structure = scenario.structure
    out: dict[str, OptionRefs] = {}
    base_total = None
    for option in (structure.option(structure.baseline), *structure.challengers):
        base = None if base_total is None else (out[structure.baseline], base_total)
        out[option.name], total = _write_option(sheet, scenario, option, names, model, base)
        base_total = base_total or total
    sheet.heading("Accounting view: straight-line depreciation plus opex, by year")
    for option in structure.options:
        out[option.name].option["accounting_cost_usd_per_year"] = _write_accounting(sheet, option, model.options[option.name])
    return out


def _write_option(sheet: CashFlowSheet, scenario: Scenario, option: Option, names, model: ModelRefs, base):
    """An option's pool lines, option lines, PVs and (for challengers) NPV and payback."""
    m = model.options[option.name]
    sheet.heading(f"Option {option.name}" + (" (baseline)" if base is None else ""))
    refs = OptionRefs()
    pool_lines, pool_pv = {}, {}
    for pool in option.pools:
        pool_lines[pool.role], pool_pv[pool.role] = _pool_lines(sheet, option, pool, m, refs, names, model.shared, base)
    sheet.heading("option lines", level=2)
    lines = {}
    for spec in COST_LINES:
        rows = [p[spec.line].row for p in pool_lines.values() if spec.line in p]
        if rows:
            lines[spec.line] = sheet.years(spec.label, "USD", lambda y, rs=rows: fx.total([sheet.cell(r, y) for r in rs]))
            refs.option[spec.name] = lines[spec.line].pv
        else:
            refs.option[spec.name] = sheet.scalar(spec.label + " (none)", "USD", "0")
    total = sheet.years("total cost", "USD", lambda y: fx.total([sheet.cell(row.row, y) for row in lines.values()]))
    tokens = sheet.years("output tokens served", "tokens",
                         lambda y: f"{sheet.op(y)}*{m.option['tokens_per_s']}*{SECONDS_PER_YEAR / 3600:g}*3600")
    refs.option["pv_cost_usd"], refs.option["pv_tokens"] = total.pv, tokens.pv
    prompt, output = names["workload.prompt_tokens"], names["workload.output_tokens"]
    refs.option["lcot_usd_per_mtok"] = sheet.output(OPTION_OUTPUTS["lcot_usd_per_mtok"], f"{total.pv}/{tokens.pv}*1E6")
    refs.option["lcot_usd_per_mtok_all_tokens"] = sheet.output(
        OPTION_OUTPUTS["lcot_usd_per_mtok_all_tokens"], f"{total.pv}/({tokens.pv}*({prompt}+{output})/{output})*1E6")
    if option.disaggregated:
        pre, dec = pool_pv["prefill"], pool_pv["decode"]
        share = f"({pre})/(({pre})+({dec}))"
    else:
        share = m.sizing["prefill_time_share"]
    refs.option["prefill_cost_share"] = sheet.output(OPTION_OUTPUTS["prefill_cost_share"], share)
    if base is not None:
        base_refs, base_total = base
        refs.option["npv_usd"] = sheet.output(COMPARISON_OUTPUTS["npv_usd"], f"{base_refs.option['pv_cost_usd']}-{total.pv}")
        refs.option["cost_ratio"] = sheet.output(
            COMPARISON_OUTPUTS["cost_ratio"], f"{refs.option['lcot_usd_per_mtok']}/{base_refs.option['lcot_usd_per_mtok']}")
        refs.option["payback_year"] = _write_payback(sheet, base_total, total)
    return refs, total


def _write_payback(sheet: CashFlowSheet, base_total: YearRow, total: YearRow) -> str:
    """Discounted payback year (:func:`tco.core.finance.payback_year`): start of the final run of
    non-negative cumulative discounted savings; "none" when the last year is still negative."""
    saved = sheet.years("saved vs the baseline", "USD",
                        lambda y: f"{sheet.cell(base_total.row, y)}-{sheet.cell(total.row, y)}", pv=False)
    discount = sheet.discount.row

    def cumulative(y):
        step = f"{sheet.cell(saved.row, y)}*{sheet.columns[y]}${discount}"
        return step if y == 0 else f"{sheet.cell(sheet.row, y - 1)}+{step}"

    cum = sheet.years("cumulative discounted savings", "USD", cumulative, pv=False)

    def paid_back(y):
        here = f"{sheet.cell(cum.row, y)}>=0"
        return f"IF({here},1,0)" if y == LAST_YEAR else f"IF(AND({here},{sheet.cell(sheet.row, y + 1)}=1),1,0)"

    run = sheet.years("paid back from this year on (1 yes)", "", paid_back, pv=False)
    return sheet.scalar("discounted payback year", "year",
                        f'IF({sheet.cell(run.row, LAST_YEAR)}=1,MATCH(1,{sheet.span(run.row)},0)-1,"none")')


def _pool_lines(sheet: CashFlowSheet, option: Option, pool: Pool, m: OptionRefs, refs: OptionRefs, names, shared, base):
    """One pool's lines (as in ``yearly_cash_flows``), and the PV of owning and running it (``own_usd``
    of the core's pool present values), which splits a disaggregated option's cost between the pools."""
    role = pool.role
    p = m.pool(role)
    sheet.heading(f"{role} pool on {pool.device}", level=2)
    life, horizon = p["life_years"], names["economics.horizon_years"]
    devices, hardware, nre = p["devices"], p["unit_hardware_usd"], p["unit_nre_usd"]
    units = sheet.years("units bought", "devices", lambda y: f"IF({sheet.bought(y, life)},{devices},0)")
    refs.pool(role)["pv_units_bought"] = units.pv
    lines = {
        "capex_usd": sheet.years(LINE_LABELS["capex_usd"], "USD", lambda y: f"{sheet.cell(units.row, y)}*{hardware}"),
        "nre_usd": sheet.years(LINE_LABELS["nre_usd"], "USD", lambda y: f"{sheet.cell(units.row, y)}*{nre}"),
    }
    for key, line in YEARLY_COSTS.items():
        lines[line] = sheet.years(LINE_LABELS[line], "USD", lambda y, v=p[key]: f"{sheet.op(y)}*{v}")
    spec = POOL_OUTPUTS["shift_exposure_usd_per_year"]
    if base is not None and pool.specialized:
        base_refs = base[0]
        share = {"colocated": "1", "prefill": base_refs.option["prefill_cost_share"],
                 "decode": f"(1-{base_refs.option['prefill_cost_share']})"}[role]
        exposure = sheet.output(spec, f"{shared['tokens_per_year']}*{base_refs.option['lcot_usd_per_mtok']}/1E6*{share}")
    else:
        exposure = sheet.scalar(spec.meaning + " (general pool or baseline: none)", spec.unit, "0")
    refs.pool(role)["shift_exposure_usd_per_year"] = exposure
    half_life, efficiency, offset = names["workload.half_life_years"], p["residual_efficiency"], p["half_life_offset_years"]

    def shift(y):
        served = fx.served_efficiency_in_year(sheet.year(y), half_life, efficiency, offset)
        return f"{sheet.op(y)}*(1-{served})*{exposure}"

    lines["workload_shift_usd"] = sheet.years(LINE_LABELS["workload_shift_usd"], "USD", shift)
    rv = p["residual_value_fraction"]

    def residual(y):
        t = sheet.year(y)
        credited = f"AND({t}>0,OR(AND(MOD({t},{life})=0,{t}<={horizon}),{t}={horizon}))"
        held = f"IF(MOD({t},{life})=0,{life},MOD({t},{life}))"
        return f"-IF({credited},(1-(1-{rv})*{held}/{life})*({devices}*{hardware}),0)"

    lines["residual_usd"] = sheet.years(LINE_LABELS["residual_usd"], "USD", residual)
    if role == "decode" and option.disaggregated:
        capex, yearly = m.links["port_capex_usd"], m.links["usd_per_year"]
        lines["links_usd"] = sheet.years(LINE_LABELS["links_usd"], "USD",
                                         lambda y: f"IF({sheet.bought(y, life)},{capex},0)+{sheet.op(y)}*{yearly}")
    own = fx.total([lines[k].pv for k in ("capex_usd", "nre_usd", "residual_usd", "energy_usd", "facility_usd",
                                          "maintenance_usd")])
    return lines, own


def _write_accounting(sheet: CashFlowSheet, option: Option, m: OptionRefs) -> str:
    """Straight-line depreciation of (price less residual value, plus NRE share) over the life, plus opex.

    Mirrors :func:`tco.core.evaluate.accounting_cost_usd_per_year`: the same sum, year by year.
    """
    sheet.heading(f"{option.name}", level=2)
    depreciation, opex = [], []
    for pool in option.pools:
        p = m.pool(pool.role)
        depreciation.append(f"{p['devices']}*({p['unit_hardware_usd']}*(1-{p['residual_value_fraction']})"
                            f"+{p['unit_nre_usd']})/{p['life_years']}")
        opex += [p[k] for k in YEARLY_COSTS]
    if option.disaggregated:
        depreciation.append(f"{m.links['port_capex_usd']}/{m.pool('decode')['life_years']}")
        opex.append(m.links["usd_per_year"])
    dep = sheet.scalar("depreciation per year", "USD/yr", fx.total(depreciation))
    ops = sheet.scalar("opex per year", "USD/yr", fx.total(opex))
    sheet.years("depreciation", "USD", lambda y: f"{sheet.op(y)}*{dep}", pv=False)
    sheet.years("opex", "USD", lambda y: f"{sheet.op(y)}*{ops}", pv=False)
    return sheet.output(OPTION_OUTPUTS["accounting_cost_usd_per_year"], f"{dep}+{ops}")
