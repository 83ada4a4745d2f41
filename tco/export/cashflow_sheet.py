"""The Cash flows sheet: each option's purchases and costs by year, present values, LCOT, NPV, payback.

Mirrors the year-by-year view of :mod:`tco.core.money.plan` and :mod:`tco.core.money.purchases` (the
same rule, year by year: devices held and bought per pool, renewals at end of life,
residual credits, running costs), the chip program's NRE schedule and bridge, software
porting, re-authoring and workload shifts, the baseline's move along the general-purpose
roadmap (:mod:`tco.core.money.generations`), and :func:`tco.core.money.cashflow.payback_and_irr`
(payback). Years run from 0 to the largest horizon the inputs admit, so changing
``economics.horizon_years``, a device life, demand growth or a time to market in the Inputs
moves purchases, credits and totals without rewriting the sheet; years past the horizon
hold zeros.
"""

from __future__ import annotations

from dataclasses import dataclass

from openpyxl.utils import get_column_letter, quote_sheetname

from tco.core import names as named
from tco.core.evaluate import INFEASIBLE_REASONS
from tco.core.money import cashflow
from tco.core.money.costs import NOT_PER_DEVICE
from tco.core.money.timeline import DESIGN_PARTS, RESPIN_PARTS, TAPEOUT_PARTS
from tco.core.names import demand_year_param, device_param, link_param, roadmap_param
from tco.core.outputs import COMPARISON_OUTPUTS, COST_LINES, OPTION_OUTPUTS, POOL_OUTPUTS, YEARLY_COSTS, OutputSpec
from tco.core.serving.power import HOURS_PER_YEAR
from tco.core.serving.sizing import SECONDS_PER_YEAR
from tco.core.structure import Option, Pool
from tco.export import formulas as fx
from tco.export.cells import BOLD, HEADING_FONT, absolute, put_formula, put_text
from tco.export.model_sheet import ModelRefs, OptionRefs
from tco.foundation.fields import FIELDS
from tco.inputs.scenario import Scenario

LAST_YEAR = int(FIELDS["horizon_years"].maximum)
FIRST_YEAR_COLUMN = 4  # D
PV_COLUMN = 3  # C
#: a cost that is never the cheapest (a generation not released yet)
NOT_RELEASED = "1E300"
#: the epoch start of a fleet that is gone (the numpy walk's ``inf``)
GONE = "1E9"
#: starting guesses of the workbook's IRR, tried in turn (Excel's and LibreOffice's iteration from the default 10 %
#: does not reach an IRR of -50 % or -96 %, which custom-asic's challengers have)
IRR_GUESSES = ("0.1", "-0.5", "-0.9", "-0.99")
#: how the rows that hold these markers show them: in words, never as 1E9 or 1E300 (the value stays a number)
EPOCH_FORMAT = f'[>={GONE}]"gone";[<0]"none yet";0'
OFFERED_FORMAT = '[>=1E+15]"not released";"$"#,##0'
RELEASE_FORMAT = '[<=-1E+9]"always";0.00'

#: label of each cash-flow line, from the output table
LINE_LABELS = {line.line: line.label for line in COST_LINES}


@dataclass
class YearRow:
    """A row of yearly values; ``pv`` references its present value."""

    row: int
    pv: str


class CashFlowSheet:
    """Row writer: label (A), unit (B), PV or value (C), years 0..LAST_YEAR (D...)."""

    def __init__(self, ws, names: dict[str, str]):
        self.ws = ws
        self.names = names
        self.row = 1
        self.horizon = names[named.economics.horizon_years]
        self.rate = names[named.economics.discount_rate]
        ws.column_dimensions["A"].width = 52
        ws.column_dimensions["B"].width = 12
        ws.column_dimensions["C"].width = 18
        self.columns = [get_column_letter(FIRST_YEAR_COLUMN + y) for y in range(LAST_YEAR + 1)]
        put_text(ws, 1, 1, "Costs by year (USD, positive = spent) and present values at the Inputs' discount rate. "
                 "Purchases, NRE and porting fall at the start of a year (t), running costs at its end. "
                 "Years past the horizon hold zeros.")
        self.row = 3
        put_text(ws, self.row, 1, "year", bold=True)
        put_text(ws, self.row, PV_COLUMN, "PV / value", bold=True)
        self.year_row = self.row
        for y in range(LAST_YEAR + 1):
            ws.cell(row=self.row, column=FIRST_YEAR_COLUMN + y, value=y).font = BOLD
        self.row += 1
        self.discount = self.years("discount factor (1+r)^-t", "", lambda y: fx.discount_factor(self.rate, self.year(y)),
                                   pv=False)
        self.operating = self.years("operating year (1 within years 1..horizon)", "",
                                    lambda y: f"IF(AND({self.year(y)}>=1,{self.year(y)}<={self.horizon}),1,0)", pv=False)
        self.demand = self.years("demand in the year as a multiple of year 1 (m_y)", "", self._demand, pv=False)

    def _demand(self, y: int) -> str:
        """:class:`tco.core.money.timeline.DemandPath`: a yearly series, continued (or replaced) by a growth rate."""
        growth = self.names[named.workload.demand_growth_per_year]
        series = [self.names[k] for k in (demand_year_param(i) for i in range(1, LAST_YEAR + 1)) if k in self.names]
        if y == 0:
            return "0"
        if y <= len(series):
            return series[y - 1]
        base, since = (series[-1], len(series)) if series else ("1", 1)
        return f"{base}*(1+{growth})^({y}-{since})"

    def year(self, y: int) -> str:
        """The year number of column ``y`` (header row)."""
        return f"{self.columns[y]}${self.year_row}"

    def op(self, y: int) -> str:
        """1 in operating years (1..horizon), else 0."""
        return f"{self.columns[y]}${self.operating.row}"

    def m(self, y: int) -> str:
        """Demand multiple of year ``y``."""
        return f"{self.columns[y]}${self.demand.row}"

    def cell(self, row: int, y: int) -> str:
        return f"{self.columns[y]}{row}"

    def span(self, row: int, fixed_row: bool = False) -> str:
        mark = "$" if fixed_row else ""
        return f"${self.columns[0]}{mark}{row}:${self.columns[-1]}{mark}{row}"

    def before(self, row: int, y: int, fixed_row: bool = False) -> str:
        """Columns of years ``0..y-1`` of ``row`` (``y >= 1``)."""
        mark = "$" if fixed_row else ""
        return f"${self.columns[0]}{mark}{row}:{self.columns[y - 1]}{mark}{row}"

    def heading(self, text: str, level: int = 1) -> None:
        if level == 1:
            self.row += 1
        put_text(self.ws, self.row, 1, text).font = HEADING_FONT if level == 1 else BOLD
        self.row += 1

    def years(self, label: str, unit: str, formula, pv: bool = True, number_format: str | None = None) -> YearRow:
        """A row with one formula per year (``formula(y)``) and its PV in column C (``number_format``: how its years
        show, default the unit's)."""
        r = self.row
        put_text(self.ws, r, 1, label)
        put_text(self.ws, r, 2, unit)
        for y in range(LAST_YEAR + 1):
            put_formula(self.ws, r, FIRST_YEAR_COLUMN + y, formula(y), unit, number_format)
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

    def table(self, label: str, unit: str, formulas: list[str], number_format: str | None = None) -> list[str]:
        """One value per generation in the year columns (generation ``g`` in column ``D + g``); their references."""
        r = self.row
        put_text(self.ws, r, 1, label)
        put_text(self.ws, r, 2, unit)
        refs = []
        for g, formula in enumerate(formulas):
            put_formula(self.ws, r, FIRST_YEAR_COLUMN + g, formula, unit, number_format)
            refs.append(absolute(self.ws, r, FIRST_YEAR_COLUMN + g))
        self.row += 1
        return refs

    def output(self, spec: OutputSpec, formula: str) -> str:
        """A single value of an output (label and unit from the output table)."""
        return self.scalar(spec.meaning, spec.unit, formula)


def pick(values: list[str], index: str) -> str:
    """The generation ``index``'s value: ``INDEX(row, 1, index + 1)`` (the value itself when all generations share it)."""
    if len(set(values)) == 1:
        return values[0]
    first, last = values[0].split("!")[1], values[-1].split("!")[1]
    sheet = values[0].split("!")[0]
    return f"INDEX({sheet}!{first}:{last},1,{index}+1)"


class Path:
    """Which generation the pool buys each year (the baseline on the roadmap) and where the fleet moves."""

    def __init__(self, index_row: int | None = None, switch_row: int | None = None):
        self.index_row, self.switch_row = index_row, switch_row

    def index(self, sheet: CashFlowSheet, y: int) -> str:
        return "0" if self.index_row is None else sheet.cell(self.index_row, y)

    def switch(self, sheet: CashFlowSheet, y: int) -> str:
        return "0" if self.switch_row is None else sheet.cell(self.switch_row, y)


def write_cash_flows(ws, scenario: Scenario, names: dict[str, str], model: ModelRefs) -> dict[str, OptionRefs]:
    """Fill ``ws``; returns per option the references of its PVs, LCOT, NPV, payback, accounting cost, program terms."""
    sheet = CashFlowSheet(ws, names)
    structure = scenario.structure
    out: dict[str, OptionRefs] = {}
    base = None
    for option in (structure.option(structure.baseline), *structure.challengers):
        out[option.name], total = _write_option(sheet, scenario, option, model, base)
        base = base or (out[option.name], total)
    sheet.heading("Accounting view: straight-line depreciation plus opex, by year")
    for option in structure.options:
        generations = model.generations if "generation_bought_first" in out[option.name].sizing else []
        out[option.name].option["accounting_cost_usd_per_year"] = _write_accounting(
            sheet, option, [model.options[option.name], *generations], out[option.name])
    return out


def _pool_terms(sheet: CashFlowSheet, fleets: list[OptionRefs], pool: Pool) -> dict[str, list[str]]:
    """One pool's purchase plan per generation (:func:`tco.core.money.costs.pool_plan`): a small table (a rented pool
    holds no power of its own: it is in the rent)."""
    role = pool.role
    n = sheet.names
    energy_w_year = f"{n[named.economics.pue]}*{HOURS_PER_YEAR:g}/1000*{n[named.economics.electricity_usd_per_kwh]}"
    per_device = {name: line for name, line in YEARLY_COSTS.items() if name not in NOT_PER_DEVICE}
    keys = ("z", "x", "n", "unit", "life", "rv", "energy", "busy", *per_device.values())
    rows: dict[str, list[str]] = {k: [] for k in keys}
    for fleet in fleets:
        p = fleet.pool(role)
        d = fleet.devices[role]
        idle, tdp, host = (n[device_param(d, k)] for k in ("idle_power_w", "tdp_w", "host_power_w"))
        rows["z"].append(p["peak_replicas"])
        rows["x"].append(f"{p['utilization']}*{p['replicas']}")
        rows["n"].append(p["devices_per_replica"])
        rows["unit"].append(p["unit_hardware_usd"])
        rows["life"].append(p["life_years"])
        rows["rv"].append(p["residual_value_fraction"])
        rows["energy"].append("0" if pool.rented else f"({idle}+{host})*{energy_w_year}")
        rows["busy"].append("0" if pool.rented else f"({tdp}-{idle})*{p['devices_per_replica']}*{energy_w_year}")
        for name, line in per_device.items():
            rows[line].append(f"{p[name]}/{p['devices']}")
    labels = {"z": ("replicas for year 1's peak (the serving model's staffing)", "replicas"),
              "x": ("replicas busy at year 1's mean load", "replicas"),
              "n": ("devices per replica", "devices"), "unit": ("hardware per device", "USD"), "life": ("useful life", "yr"),
              "rv": ("residual value", "fraction"), "energy": ("electricity per device held (idle + host)", "USD/yr"),
              "busy": ("electricity per busy replica (TDP - idle)", "USD/yr"),
              **{line: (f"{LINE_LABELS[line]} per device held", "USD/yr") for line in per_device.values()}}
    return {k: sheet.table(f"{labels[k][0]}" + (" (by generation)" if len(fleets) > 1 else ""), labels[k][1], v)
            for k, v in rows.items()}


def _link_terms(sheet: CashFlowSheet, fleets: list[OptionRefs], option: Option) -> dict[str, list[str]]:
    """The KV-link ports as a pool (:func:`tco.core.money.costs.link_plan`)."""
    n, link = sheet.names, option.link
    port_w = n[link_param(link, "port_power_w")]
    running = (f"{port_w}*{n[named.economics.pue]}*{HOURS_PER_YEAR:g}/1000*{n[named.economics.electricity_usd_per_kwh]}"
               f"+{port_w}/1000*{n[named.economics.facility_usd_per_kw_month]}*12")
    count = len(fleets)
    return {"z": sheet.table("KV-link ports for year 1's peak, unrounded", "ports",
                             [fleets[0].sizing["link_ports_exact"]] * count),
            "n": ["1"] * count, "unit": sheet.table("price per port", "USD", [n[link_param(link, "port_cost_usd")]] * count),
            "life": sheet.table("port life (the decode devices')", "yr", [f.pool("decode")["life_years"] for f in fleets]),
            "rv": ["0"] * count, "running": sheet.table("running cost per port (electricity and data hall)", "USD/yr",
                                                       [running] * count)}


def _whole(exact: str, whole: bool) -> str:
    """:func:`tco.core.serving.sizing.replicas_needed` rounding: ``ceil(x - 1e-9)``, at least 1 (whole devices)."""
    return f"MAX({fx.ceil(f'{exact}-{fx.CEIL_GUARD_FLEET}')},1)" if whole else exact


def _walk(sheet: CashFlowSheet, terms: dict[str, list[str]], path: Path, t_d: str, live: YearRow,
          whole: bool) -> dict[str, YearRow]:
    """:func:`tco.core.money.purchases.pool_yearly_flows`, row by row (purchase time ``t`` in column ``t``)."""
    horizon = sheet.horizon
    rows = {}

    def g(y):
        return path.index(sheet, y)

    def prev(name, y, first):
        return first if y == 0 else sheet.cell(rows[name].row, y - 1)

    rows["new"] = sheet.years("a new epoch starts (deployment, or a move to another generation)", "",
                              lambda y: f"IF(OR({sheet.year(y)}={t_d},AND({path.switch(sheet, y)}=1,{sheet.year(y)}>{t_d})),1,0)",
                              pv=False)
    new = rows["new"].row
    # closing, epoch start and epoch generation reference each other across years: write them row by row
    rows["closing"] = YearRow(sheet.row, "")
    rows["start"] = YearRow(sheet.row + 1, "")
    rows["generation"] = YearRow(sheet.row + 2, "")
    sheet.years("every device held is credited now (the epoch ends: a move or the horizon)", "",
                lambda y: f"IF(AND(OR({sheet.cell(new, y)}=1,{sheet.year(y)}={horizon}),{prev('start', y, '-1')}>=0,"
                          f"{prev('start', y, '-1')}<{GONE}),1,0)", pv=False)
    sheet.years("start of the current epoch (none yet, or gone: the fleet is retired)", "yr",
                lambda y: f"IF({sheet.cell(new, y)}=1,{sheet.year(y)},IF({sheet.cell(rows['closing'].row, y)}=1,{GONE},"
                          f"{prev('start', y, '-1')}))", pv=False, number_format=EPOCH_FORMAT)
    sheet.years("generation of the fleet in service", "",
                lambda y: f"IF(OR({sheet.cell(new, y)}=1,{prev('start', y, '-1')}<0),{g(y)},{prev('generation', y, g(0))})",
                pv=False)
    gen_row, start_row = rows["generation"].row, rows["start"].row

    def at(name, y):
        return pick(terms[name], sheet.cell(gen_row, y))

    def needed(y):
        if y == LAST_YEAR:
            return "0"
        exact = f"{sheet.m(y + 1)}*{pick(terms['z'], g(y))}"
        return f"IF({sheet.cell(live.row, y)}=1,{_whole(exact, whole)}*{pick(terms['n'], g(y))},0)"

    rows["required"] = sheet.years("devices needed for next year's peak", "devices", needed, pv=False)
    rows["before"] = YearRow(sheet.row, "")
    rows["held"] = YearRow(sheet.row + 1, "")
    sheet.years("devices held before buying", "devices",
                lambda y: f"IF({sheet.cell(new, y)}=1,0,{prev('held', y, '0')})", pv=False)
    sheet.years("devices held (never sold early)", "devices",
                lambda y: f"IF({sheet.cell(live.row, y)}=1,MAX({sheet.cell(rows['required'].row, y)},"
                          f"{sheet.cell(rows['before'].row, y)}),0)", pv=False)
    rows["bought"] = YearRow(sheet.row + 1, "")

    def renewed(y):
        if y == 0:
            return "0"
        bought = sheet.before(rows["bought"].row, y)
        years = sheet.before(sheet.year_row, y, True)
        return (f"IF({sheet.cell(live.row, y)}=1,SUMPRODUCT(({years}={sheet.year(y)}-{at('life', y)})*({years}>="
                f"{sheet.cell(start_row, y)}),{bought}),0)")

    rows["renewed"] = sheet.years("devices renewed at the end of their life", "devices", renewed, pv=False)
    rows["bought"] = sheet.years("devices bought", "devices",
                                 lambda y: f"IF({sheet.cell(live.row, y)}=1,{sheet.cell(rows['held'].row, y)}-"
                                           f"{sheet.cell(rows['before'].row, y)},0)+{sheet.cell(rows['renewed'].row, y)}")
    bought = rows["bought"].row

    def credit(y):
        if y == 0:
            return "0"
        years = sheet.before(sheet.year_row, y, True)
        life, rv = at("life", y - 1), at("rv", y - 1)
        closing, start = sheet.cell(rows["closing"].row, y), sheet.cell(start_row, y - 1)
        t = sheet.year(y)
        value = (f"({closing}*(1-(1-{rv})*({t}-{years})/{life})+(1-{closing})*({years}={t}-{life})*{rv})")
        return f"-{at('unit', y - 1)}*SUMPRODUCT({sheet.before(bought, y)},({years}>={start})*({years}>={t}-{life})*{value})"

    rows["capex"] = sheet.years("hardware bought", "USD", lambda y: f"{sheet.cell(bought, y)}*{at('unit', y)}")
    rows["residual"] = sheet.years("value credited (end of life, a move, the horizon)", "USD", credit)
    held = rows["held"].row
    if "running" in terms:  # KV-link ports
        rows["running"] = sheet.years("running cost", "USD",
                                      lambda y: "0" if y == 0 else f"{sheet.cell(held, y - 1)}*{at('running', y - 1)}")
        return rows

    def busy(y):
        if y == LAST_YEAR:
            return "0"
        return f"IF({sheet.cell(live.row, y)}=1,{sheet.m(y + 1)}*{at('x', y)},0)"

    rows["busy"] = sheet.years("replicas busy next year at the mean load", "replicas", busy, pv=False)
    for key in [k for k in terms if k not in ("z", "x", "n", "unit", "life", "rv", "busy")]:
        line = "energy_usd" if key == "energy" else key

        def running(y, key=key):
            if y == 0:
                return "0"
            cost = f"{sheet.cell(held, y - 1)}*{at(key, y - 1)}"
            if key == "energy":
                cost += f"+{sheet.cell(rows['busy'].row, y - 1)}*{at('busy', y - 1)}"
            return cost

        rows[line] = sheet.years(LINE_LABELS[line], "USD", running)
    return rows


def _generations(sheet: CashFlowSheet, scenario: Scenario, model: ModelRefs, fleets: list[OptionRefs],
                 terms: dict[str, dict[str, list[str]]]) -> Path:
    """:func:`tco.core.money.generations.generation_path`: the best generation released each year and the policy's moves."""
    structure, n = scenario.structure, sheet.names
    rate = sheet.rate
    sheet.heading("the baseline on the general-purpose roadmap: steady-state cost of each generation", level=2)
    full, running = [], []
    for g in range(len(fleets)):
        capital, run = _steady_state(terms, str(g), rate, sheet.names, structure.whole_devices)
        full.append(capital)
        running.append(run)
    ports = ["0", *(n[device_param(gen.device, "software_port_usd")] for gen in structure.generations)]
    lives = [fleet.pool(next(iter(fleet.devices)))["life_years"] for fleet in fleets]
    tables = {
        "release": sheet.table("released, years after t = 0 (the scenario's device: always)", "yr",
                               ["-1E9", *(f"{n[roadmap_param(gen.device, 'release_year')]}-{n[named.roadmap.start_year]}"
                                          for gen in structure.generations)], RELEASE_FORMAT),
        "running": sheet.table("running cost per year (steady state, year 1's demand)", "USD/yr", running),
        "port": sheet.table("software port to the generation", "USD", ports),
        "life": sheet.table("useful life", "yr", lives),
    }
    tables["full"] = sheet.table("full cost per year: capital recovered + running (+ port over the life)", "USD/yr",
                                 [f"{full[g]}+{ports[g]}/{fx.annuity_factor(rate, lives[g])}" for g in range(len(fleets))])
    codes = sheet.table("infeasible code of the fleet on each generation", "bitmask",
                        [fleet.option["infeasible_code"] for fleet in fleets])

    def released(g, y):
        return f"{tables['release'][g]}<={sheet.year(y)}+1E-9"

    meeting = sheet.years("generations released by t whose fleet meets the latency targets", "generations",
                          lambda y: "+".join(f"IF(AND({released(g, y)},{codes[g]}=0),1,0)" for g in range(len(fleets))),
                          pv=False)
    # the cheapest of the released generations that meet the targets, of all released ones where none does
    offered = [sheet.years(f"cost of generation {g} if released by t (and meeting the targets where one does)", "USD/yr",
                           lambda y, g=g: f"IF(AND({released(g, y)},OR({codes[g]}=0,{sheet.cell(meeting.row, y)}=0)),"
                                          f"{tables['full'][g]},{NOT_RELEASED})",
                           pv=False, number_format=OFFERED_FORMAT) for g in range(len(fleets))]
    first, last = offered[0].row, offered[-1].row

    def column(y):
        return f"{sheet.columns[y]}{first}:{sheet.columns[y]}{last}"

    best = sheet.years("best generation available (cheapest released, meeting the targets where one does)", "",
                       lambda y: f"MATCH(MIN({column(y)}),{column(y)},0)-1", pv=False)
    best_cost = sheet.years("its full cost per year", "USD/yr", lambda y: f"MIN({column(y)})", pv=False)
    policy = structure.refresh_policy
    index_row, moves_row, since_row = sheet.row, sheet.row + 1, sheet.row + 2

    def moves(y):
        if y == 0:
            return "0"
        current = sheet.cell(index_row, y - 1)
        differs = f"{sheet.cell(best.row, y)}<>{current}"
        age = f"({sheet.year(y)}-{sheet.cell(since_row, y - 1)})"
        condition = {"each_generation": "1=1",
                     "at_replacement": f"MOD({age},{pick(tables['life'], current)})=0",
                     "when_cheaper": f"OR({sheet.cell(best_cost.row, y)}<{pick(tables['running'], current)}+"
                                     f"{_holding(terms, current, age, rate, structure.whole_devices)},"
                                     f"AND({pick(codes, current)}>0,{pick(codes, sheet.cell(best.row, y))}=0))"}[policy]
        return f"IF(AND({differs},{condition}),1,0)"

    sheet.years(f"generation the fleet buys ({policy.replace('_', ' ')})", "",
                lambda y: sheet.cell(best.row, 0) if y == 0 else
                f"IF({sheet.cell(moves_row, y)}=1,{sheet.cell(best.row, y)},{sheet.cell(index_row, y - 1)})", pv=False)
    sheet.years("the fleet moves to another generation (1 yes)", "", moves, pv=False)
    sheet.years("year of the last move", "yr",
                lambda y: "0" if y == 0 else f"IF({sheet.cell(moves_row, y)}=1,{sheet.year(y)},{sheet.cell(since_row, y - 1)})",
                pv=False)
    path = Path(index_row, moves_row)
    path.ports, path.codes, path.full = tables["port"], codes, tables["full"]
    return path


def _held_generations_code(sheet: CashFlowSheet, path: Path, refs: OptionRefs) -> None:
    """:func:`tco.core.evaluate.held_generations_code`: the baseline's infeasibility bits are those of every generation
    it holds before the horizon, or-ed (``feasible`` follows them)."""
    sheet.heading("latency targets of the generations the fleet holds within the horizon", level=2)
    held = sheet.years("infeasible code of the generation held (0 from the horizon on)", "bitmask",
                       lambda y: f"IF({sheet.year(y)}<{sheet.horizon},{pick(path.codes, path.index(sheet, y))},0)", pv=False)
    # or-ed bit by bit (BITOR is not in every spreadsheet's xlsx reader): a bit is set when some year's code sets it
    code = "+".join(f"{bit}*IF(SUMPRODUCT(MOD(INT({sheet.span(held.row)}/{bit}),2))>0,1,0)" for bit in INFEASIBLE_REASONS)
    infeasible = refs.option["infeasible_code"] = sheet.output(OPTION_OUTPUTS["infeasible_code"], code)
    refs.option["feasible"] = sheet.output(OPTION_OUTPUTS["feasible"], f"IF({infeasible}=0,1,0)")


def _units(t: dict[str, list[str]], g: str, whole: bool) -> str:
    """:meth:`tco.core.money.purchases.PoolPlan.required_units` at year 1's demand on generation ``g``."""
    return f"{_whole(pick(t['z'], g), whole)}*{pick(t['n'], g)}"


def _holding(terms: dict[str, dict[str, list[str]]], g: str, age: str, rate: str, whole: bool) -> str:
    """:func:`tco.core.money.plan.holding_usd_per_year`: keeping the fleet on generation ``g`` one more year at age ``age``
    instead of selling it at book value, ``units x P ((1 - rv) / L + r (1 - (1 - rv) MOD(a, L) / L))``."""
    parts = []
    for t in terms.values():
        life, rv = pick(t["life"], g), pick(t["rv"], g)
        parts.append(f"{_units(t, g, whole)}*{pick(t['unit'], g)}*((1-{rv})/{life}+{rate}*(1-(1-{rv})*MOD({age},{life})/{life}))")
    return fx.total(parts)


def _steady_state(terms: dict[str, dict[str, list[str]]], g: str, rate: str, names, whole: bool) -> tuple[str, str]:
    """:func:`tco.core.money.plan.steady_state_usd_per_year` of generation ``g``: ``(capital, running)`` formulas."""
    capital, running = [], []
    for t in terms.values():
        units = _units(t, g, whole)
        capital.append(f"{units}*{fx.capital_recovery(pick(t['unit'], g), rate, pick(t['life'], g), pick(t['rv'], g))}")
        if "running" in t:
            running.append(f"{units}*{pick(t['running'], g)}")
        else:
            per_device = [pick(t[k], g) for k in t if k not in ("z", "x", "n", "unit", "life", "rv", "busy")]
            running.append(f"{units}*({fx.total(per_device)})+{pick(t['x'], g)}*{pick(t['busy'], g)}")
    run = fx.total(running)
    return f"{fx.total(capital)}+{run}", run


def _write_option(sheet: CashFlowSheet, scenario: Scenario, option: Option, model: ModelRefs, base):
    """An option's purchases and lines, PVs, LCOT, steady-state cost and (for challengers) NPV and payback."""
    structure, n = scenario.structure, sheet.names
    m = model.options[option.name]
    is_base = base is None
    sheet.heading(f"Option {option.name}" + (" (baseline)" if is_base else ""))
    refs = OptionRefs()
    built = [p for p in option.pools if p.built]
    slip = f"{n[named.program.respin_probability]}*{n[named.program.respin_slip_years]}" if built else ""
    deploy = fx.ceil(f"{n[named.program.time_to_market_years]}+{slip}-{fx.CEIL_GUARD_FLEET}") if built else "0"
    t_d = refs.option["deployment_year"] = sheet.output(OPTION_OUTPUTS["deployment_year"], deploy)
    live = sheet.years("the fleet serves next year (deployed and within the horizon)", "",
                       lambda y: f"IF(AND({sheet.year(y)}+1>{t_d},{sheet.year(y)}<{sheet.horizon}),1,0)", pv=False)
    moving = is_base and bool(structure.generations) and structure.refresh_policy != "keep"
    fleets = [m, *model.generations] if moving else [m]
    sheet.heading("purchase plan by pool", level=2)
    terms = {pool.role: _pool_terms(sheet, fleets, pool) for pool in option.pools}
    if option.disaggregated:
        terms["links"] = _link_terms(sheet, fleets, option)
    path = _generations(sheet, scenario, model, fleets, terms) if moving else Path()
    if moving:
        _held_generations_code(sheet, path, refs)
    walks = {}
    for role in terms:
        sheet.heading(f"{role} pool, year by year" if role != "links" else "KV-link ports, year by year", level=2)
        walks[role] = _walk(sheet, terms[role], path, t_d, live, structure.whole_devices)
        if role != "links":
            refs.pool(role)["units_bought"] = sheet.scalar("units bought over the horizon", "devices",
                                                           f"SUM({sheet.span(walks[role]['bought'].row)})")
            refs.pool(role)["pv_units_bought"] = walks[role]["bought"].pv
    sheet.heading("option lines", level=2)
    lines: dict[str, list[int]] = {}
    for role, walk in walks.items():
        for key, walk_row in walk.items():
            line = {"capex": "capex_usd", "residual": "residual_usd", "running": "links_usd"}.get(key, key)
            if line in LINE_LABELS:
                lines.setdefault("links_usd" if role == "links" else line, []).append(walk_row.row)
    extra = _program_lines(sheet, scenario, option, m, refs, walks, t_d, is_base)
    extra.update(_service_lines(sheet, scenario, option, m, refs, base, path, t_d))
    line_rows = {}
    for spec in COST_LINES:
        rows = lines.get(spec.line, []) + extra.get(spec.line, [])
        if rows:
            line_rows[spec.line] = sheet.years(spec.label, "USD", lambda y, rs=rows: fx.total([sheet.cell(r, y) for r in rs]))
            refs.option[spec.name] = line_rows[spec.line].pv
        else:
            refs.option[spec.name] = sheet.scalar(spec.label + " (none)", "USD", "0")
    total = sheet.years("total cost", "USD", lambda y: fx.total([sheet.cell(row.row, y) for row in line_rows.values()]))
    tokens = sheet.years("output tokens served", "tokens",
                         lambda y: f"{sheet.op(y)}*{sheet.m(y)}*{m.option['tokens_per_s']}*{SECONDS_PER_YEAR / 3600:g}*3600")
    refs.option["pv_cost_usd"], refs.option["pv_tokens"] = total.pv, tokens.pv
    refs.option["units_bought"] = sheet.output(OPTION_OUTPUTS["units_bought"],
                                               fx.total([refs.pool(p.role)["units_bought"] for p in option.pools]))
    prompt, output = n[named.workload.prompt_tokens], n[named.workload.output_tokens]
    refs.option["lcot_usd_per_mtok"] = sheet.output(OPTION_OUTPUTS["lcot_usd_per_mtok"], f"{total.pv}/{tokens.pv}*1E6")
    refs.option["lcot_usd_per_mtok_all_tokens"] = sheet.output(
        OPTION_OUTPUTS["lcot_usd_per_mtok_all_tokens"], f"{total.pv}/({tokens.pv}*({prompt}+{output})/{output})*1E6")
    if option.disaggregated:
        own = {}
        for role in ("prefill", "decode"):
            pvs = [absolute(sheet.ws, row.row, PV_COLUMN) for k, row in walks[role].items()
                   if k in ("capex", "residual") or k in LINE_LABELS]
            if any(p.built and p.role == role for p in option.pools):
                pvs.append(f"{refs.option['pv_nre_usd']}/{len(built)}")
            own[role] = sheet.scalar(f"PV of owning and running the {role} pool", "USD", fx.total(pvs))
        both = f"({own['prefill']}+{own['decode']})"
        share = f"IF({both}>0,{own['prefill']}/{both},0)"
    else:
        share = m.sizing["prefill_time_share"]
    refs.option["prefill_cost_share"] = sheet.output(OPTION_OUTPUTS["prefill_cost_share"], share)
    hardware, _ = _steady_state({role: t for role, t in terms.items()}, "0", sheet.rate, n, structure.whole_devices)
    refs.sizing["hardware_usd_per_year"] = sheet.scalar("steady-state hardware and running cost per year (year 1's demand)",
                                                        "USD/yr", hardware)
    full = [refs.sizing["hardware_usd_per_year"], refs.sizing["reauthoring_usd_per_year"]]
    if moving:  # tco.core.evaluate: the generation bought at t = 0, its port recovered, as the roadmap ranks it
        held = sheet.years("steady-state cost of the generation held: full cost per year, as ranked above", "USD/yr",
                           lambda y: pick(path.full, path.index(sheet, y)), pv=False)
        refs.sizing["held_full_usd_per_year"] = f"{quote_sheetname(sheet.ws.title)}!{sheet.span(held.row, True)}"
        refs.sizing["generation_bought_first"] = path.index(sheet, 0)
        full[0] = sheet.cell(held.row, 0)
    for pool in built:
        c = m.pool(pool.role)
        full.append(f"{c['devices']}*{fx.capital_recovery(refs.pool(pool.role)['unit_nre_usd'], sheet.rate, c['life_years'])}")
    for device in structure.adopted_devices(option):
        full.append(f"{n[device_param(device, 'software_port_usd')]}/"
                    f"{fx.annuity_factor(sheet.rate, n[device_param(device, 'useful_life_years')])}")
    tokens_per_year = f"{m.option['tokens_per_s']}*{SECONDS_PER_YEAR / 3600:g}*3600"
    refs.option["eac_usd_per_mtok"] = sheet.output(OPTION_OUTPUTS["eac_usd_per_mtok"],
                                                   f"({fx.total(full)})/({tokens_per_year})*1E6")
    if base is not None:
        base_refs, base_total = base
        refs.option["npv_usd"] = sheet.output(COMPARISON_OUTPUTS["npv_usd"], f"{base_refs.option['pv_cost_usd']}-{total.pv}")
        refs.option["cost_ratio"] = sheet.output(
            COMPARISON_OUTPUTS["cost_ratio"], f"{refs.option['lcot_usd_per_mtok']}/{base_refs.option['lcot_usd_per_mtok']}")
        refs.option["payback_year"], refs.sizing["irr"] = _write_payback(sheet, base_total, total)
    return refs, total


def _program_lines(sheet: CashFlowSheet, scenario: Scenario, option: Option, m: OptionRefs, refs: OptionRefs, walks,
                   t_d: str, is_base: bool) -> dict[str, list[int]]:
    """The chip program's NRE by year (:class:`tco.core.money.timeline.ProgramSchedule`) and the fleet's share of it."""
    built = [p for p in option.pools if p.built]
    if not built:
        return {}
    n = sheet.names
    sheet.heading("chip program: NRE during design, shared over the program's volume", level=2)
    ttm = n[named.program.time_to_market_years]
    tapeout = sheet.scalar("tape-out: time to market minus tape-out to deployment, at least 0", "yr",
                           f"MAX({ttm}-{n[named.program.tapeout_to_deployment_years]},0)")
    scale = n[named.program.nre_scale]
    parts = {part: f"{n[k]}*{scale}" for part, k in zip(named.program_nre.fields, named.program_nre, strict=True) if k in n}
    parts["respin_usd"] = f"{n[named.program.respin_probability]}*{parts['masks_usd']}"
    respin = sheet.scalar("second tape-out after a respin: tape-out plus the slip a respin costs", "yr",
                          f"{tapeout}+{n[named.program.respin_slip_years]}")

    def share(part: str, y: int) -> str:
        t = sheet.year(y)
        if part in TAPEOUT_PARTS or part in RESPIN_PARTS:
            return f"IF(INT({tapeout if part in TAPEOUT_PARTS else respin}+{fx.CEIL_GUARD_FLEET})={t},1,0)"
        window = tapeout if part in DESIGN_PARTS else ttm
        return f"IF({window}>0,MAX(MIN({t}+1,{window})-{t},0)/{window},IF({t}=0,1,0))"

    program = sheet.years("the program's NRE paid this year (all of it)", "USD",
                          lambda y: fx.total([f"{name}*{share(part, y)}" for part, name in parts.items()]))
    own = refs.option["fleet_units"] = sheet.scalar("built chips this fleet buys over the horizon", "units",
                                                    fx.total([refs.pool(p.role)["units_bought"] for p in built]))
    volume = refs.option["program_volume_units"] = sheet.scalar(
        "the program's volume: own units + units sold to others", "units", f"{own}+{n[named.program.external_units]}")
    refs.sizing["nre_total"] = sheet.scalar("the program's NRE (sum of its parts, a respin's expected mask set included)",
                                            "USD", fx.total(list(parts.values())))
    refs.sizing["nre_pv"] = program.pv
    fraction = sheet.scalar("share of the NRE this fleet carries: own / volume (all of it when nothing is built)", "fraction",
                            f"IF({volume}>0,{own}/{volume},1)")
    for pool in built:
        refs.pool(pool.role)["unit_nre_usd"] = sheet.output(
            POOL_OUTPUTS["unit_nre_usd"], f"{refs.sizing['nre_total']}/MAX({volume},1)")
    nre = sheet.years("NRE carried by this fleet", "USD", lambda y: f"{fraction}*{sheet.cell(program.row, y)}")
    return {"nre_usd": [nre.row]}


def _service_lines(sheet: CashFlowSheet, scenario: Scenario, option: Option, m: OptionRefs, refs: OptionRefs, base,
                   path: Path, t_d: str) -> dict[str, list[int]]:
    """Bridge, software porting, re-authoring and workload-shift lines (:class:`tco.core.money.plan.MoneyPlan`)."""
    structure, n = scenario.structure, sheet.names
    horizon = sheet.horizon
    out: dict[str, list[int]] = {}
    specialized = [p for p in option.pools if p.specialized]
    tokens_per_year = f"{m.option['tokens_per_s']}*{SECONDS_PER_YEAR / 3600:g}*3600"
    if base is not None and any(p.built for p in option.pools):
        bridge = sheet.scalar("year 1's demand at the baseline's levelized cost (the bridge until deployment)", "USD/yr",
                              f"{tokens_per_year}*{base[0].option['lcot_usd_per_mtok']}/1E6")
        out["bridge_usd"] = [sheet.years(LINE_LABELS["bridge_usd"], "USD",
                                         lambda y: f"{sheet.op(y)}*IF({sheet.year(y)}<={t_d},1,0)*{sheet.m(y)}*{bridge}").row]
    if option.name == structure.baseline and path.index_row is not None:
        ports = path.ports

        def port(y):
            adopts = f"OR({path.switch(sheet, y)}=1,AND({sheet.year(y)}=0,{path.index(sheet, y)}<>0))"
            return f"IF(AND({adopts},{sheet.year(y)}<{horizon}),{pick(ports, path.index(sheet, y))},0)"

        out["porting_usd"] = [sheet.years(LINE_LABELS["porting_usd"], "USD", port).row]
    elif structure.adopted_devices(option):
        amount = fx.total([n[device_param(d, "software_port_usd")] for d in structure.adopted_devices(option)])
        out["porting_usd"] = [sheet.years(LINE_LABELS["porting_usd"], "USD",
                                          lambda y: f"IF(AND({sheet.year(y)}={t_d},{sheet.year(y)}<{horizon}),{amount},0)").row]
    reauthoring = fx.total([m.pool(p.role)["reauthoring_usd_per_year"] for p in specialized]) if specialized else "0"
    refs.sizing["reauthoring_usd_per_year"] = sheet.scalar("re-authoring per year (specialized pools)", "USD/yr", reauthoring)
    if specialized:
        out["reauthoring_usd"] = [sheet.years(LINE_LABELS["reauthoring_usd"], "USD",
                                              lambda y: f"{sheet.op(y)}*IF({sheet.year(y)}>{t_d},1,0)*"
                                                        f"{refs.sizing['reauthoring_usd_per_year']}").row]
    exposures = []
    for pool in option.pools:
        spec = POOL_OUTPUTS["shift_exposure_usd_per_year"]
        if base is not None and pool.specialized:
            share = {"colocated": "1", "prefill": base[0].option["prefill_cost_share"],
                     "decode": f"(1-{base[0].option['prefill_cost_share']})"}[pool.role]
            exposure = sheet.output(spec, f"{tokens_per_year}*{base[0].option['lcot_usd_per_mtok']}/1E6*{share}")
            exposures.append((exposure, m.pool(pool.role)["residual_efficiency"]))
        else:
            exposure = sheet.scalar(spec.meaning + " (general pool or baseline: none)", spec.unit, "0")
        refs.pool(pool.role)["shift_exposure_usd_per_year"] = exposure
    if exposures:
        half_life = n[named.workload.half_life_years]

        def shift(y):
            lost = fx.total([f"(1-{fx.served_efficiency_in_year(sheet.year(y), half_life, eta)})*{e}" for e, eta in exposures])
            return f"{sheet.op(y)}*IF({sheet.year(y)}>{t_d},1,0)*{sheet.m(y)}*({lost})"

        out["workload_shift_usd"] = [sheet.years(LINE_LABELS["workload_shift_usd"], "USD", shift).row]
    return out


def _write_payback(sheet: CashFlowSheet, base_total: YearRow, total: YearRow) -> tuple[str, str]:
    """Discounted payback year (:func:`tco.core.money.finance.payback_year`): start of the final run of
    non-negative cumulative discounted savings; "none" when the last year is still negative. Then the IRR of the savings
    (:func:`tco.core.money.cashflow.payback_and_irr`: only for an outlay in year 0; otherwise, or where the savings
    never repay it, "none" with the reason). Their references."""
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
    payback = sheet.scalar("discounted payback year", "year",
                           f'IF({sheet.cell(run.row, LAST_YEAR)}=1,MATCH(1,{sheet.span(run.row)},0)-1,"none")')
    span = sheet.span(saved.row)
    tries = "".join(f"IFERROR(IRR({span},{guess})," for guess in IRR_GUESSES)
    irr = sheet.scalar("IRR of the savings (an outlay in year 0 repaid by later savings)", "1/yr",
                       f'IF({sheet.cell(saved.row, 0)}<0,{tries}"{cashflow.NO_IRR_NEVER_REPAID}"'
                       f'{")" * len(IRR_GUESSES)},"{cashflow.NO_IRR_WITHOUT_OUTLAY}")')
    return payback, irr


def _write_accounting(sheet: CashFlowSheet, option: Option, fleets: list[OptionRefs], cash: OptionRefs) -> str:
    """Straight-line depreciation of (price less residual value, plus NRE share) over the life, plus opex.

    Mirrors :func:`tco.core.evaluate.accounting_cost_usd_per_year`: the same sum, year by year; ``fleets`` the
    option's, then (a baseline on the roadmap) its fleet on each generation, of which the one bought at t = 0 counts.
    """
    sheet.heading(f"{option.name}", level=2)
    depreciation, opex = [], []
    for m in fleets:
        parts, running = [], []
        for pool in option.pools:
            p = m.pool(pool.role)
            nre = cash.pool(pool.role).get("unit_nre_usd", "0")
            parts.append(f"{p['devices']}*({p['unit_hardware_usd']}*(1-{p['residual_value_fraction']})"
                         f"+{nre})/{p['life_years']}")
            running += [p[k] for k in YEARLY_COSTS]
        if option.disaggregated:
            parts.append(f"{m.links['port_capex_usd']}/{m.pool('decode')['life_years']}")
            running.append(m.links["usd_per_year"])
        depreciation.append(fx.total(parts))
        opex.append(fx.total(running))
    suffix = ""
    if len(fleets) > 1:
        first, suffix = cash.sizing["generation_bought_first"], " (the generation bought at t = 0)"
        depreciation = [pick(sheet.table("depreciation per year of the fleet on each generation", "USD/yr", depreciation),
                             first)]
        opex = [pick(sheet.table("opex per year of the fleet on each generation", "USD/yr", opex), first)]
    dep = sheet.scalar("depreciation per year" + suffix, "USD/yr", depreciation[0])
    ops = sheet.scalar("opex per year" + suffix, "USD/yr", opex[0])
    sheet.years("depreciation", "USD", lambda y: f"{sheet.op(y)}*{dep}", pv=False)
    sheet.years("opex", "USD", lambda y: f"{sheet.op(y)}*{ops}", pv=False)
    return sheet.output(OPTION_OUTPUTS["accounting_cost_usd_per_year"], f"{dep}+{ops}")
