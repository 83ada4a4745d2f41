"""The Summary sheet, first in the workbook: per option, what a finance review reads first, each a live reference to the
cell of the Model or Cash flows sheet that computes it.

Rows: cost per million output tokens (LCOT), NPV of choosing the option over the baseline, IRR of that choice (where it
exists; otherwise the reason), discounted payback year, PV of hardware capex, PV of the operating costs (energy,
facility, maintenance, KV links), accounting cost per year (straight-line depreciation plus opex), devices and whether
the option meets its latency targets. Currency, percentage and thousands formats; the header frozen; printable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter

from tco.export.cells import HEADING_FONT, finish_sheet, put_formula, put_text
from tco.export.model_sheet import OptionRefs
from tco.inputs.scenario import Scenario

#: the present values that are operating costs (the rest of a PV cost is capital, program and credits)
OPEX_LINES = ("pv_energy_usd", "pv_facility_usd", "pv_maintenance_usd", "pv_links_usd")
#: header rows above the first figure
HEADER_ROWS = 3


@dataclass(frozen=True)
class SummaryRow:
    """One row of the Summary: its label, unit, and the formula of an option's cell from its references (None: the
    baseline has no such figure and shows ``text``)."""

    label: str
    unit: str
    formula: Callable[[dict[str, str], str | None], str | None]
    text: str = ""


def _opex(refs: dict[str, str]) -> str:
    return "+".join(refs[line] for line in OPEX_LINES if line in refs) or "0"


def summary_rows(baseline: str) -> list[SummaryRow]:
    """The Summary's rows for a scenario whose baseline is ``baseline``.

    Parameters
    ----------
    baseline : str
        The baseline option's name (its row cells for the comparison figures say "baseline").

    Returns
    -------
    list[SummaryRow]
        In the order they print; each formula takes ``(flat references, irr reference)`` of an option.
    """
    versus = f"the baseline {baseline}"
    return [
        SummaryRow("cost per million output tokens (LCOT)", "USD per million output tokens",
                   lambda refs, irr: refs["lcot_usd_per_mtok"]),
        SummaryRow(f"NPV of choosing it over {versus}", "USD", lambda refs, irr: refs.get("npv_usd"), "baseline"),
        SummaryRow(f"IRR of choosing it over {versus}", "1/yr", lambda refs, irr: irr, "baseline"),
        SummaryRow("discounted payback year", "year", lambda refs, irr: refs.get("payback_year"), "baseline"),
        SummaryRow("PV of hardware capex", "USD", lambda refs, irr: refs["pv_capex_usd"]),
        SummaryRow("PV of operating costs (energy, facility, maintenance, KV links)", "USD",
                   lambda refs, irr: _opex(refs)),
        SummaryRow("accounting cost per year (straight-line depreciation + opex)", "USD/yr",
                   lambda refs, irr: refs["accounting_cost_usd_per_year"]),
        SummaryRow("devices in the fleet (year 1)", "devices", lambda refs, irr: refs["devices"]),
        SummaryRow("meets the latency targets", "", lambda refs, irr: f'IF({refs["feasible"]}=1,"yes","no")'),
    ]


def write_summary(ws, scenario: Scenario, refs: dict[str, OptionRefs], irr: dict[str, str], currency: str) -> None:
    """Fill the Summary sheet: one column per option, one row per figure (:func:`summary_rows`), live references.

    Parameters
    ----------
    ws : openpyxl.worksheet.worksheet.Worksheet
        The empty sheet.
    scenario : Scenario
        The scenario (its title, options and baseline).
    refs : dict[str, OptionRefs]
        Each option's references on the Model, Cash flows and Break-even sheets.
    irr : dict[str, str]
        Each challenger's reference to its IRR cell (Cash flows).
    currency : str
        The year of the USD (the Cover's currency line).
    """
    base = scenario.structure.baseline
    names = [o.name for o in scenario.structure.options]
    put_text(ws, 1, 1, f"Summary: {scenario.title}").font = HEADING_FONT
    put_text(ws, 2, 1, f"USD of {currency}; costs per million OUTPUT tokens; each figure a live reference to the Model "
                       "and Cash flows sheets")
    put_text(ws, HEADER_ROWS, 1, "per option", bold=True)
    put_text(ws, HEADER_ROWS, 2, "unit", bold=True)
    for j, name in enumerate(names):
        put_text(ws, HEADER_ROWS, 3 + j, f"{name} (baseline)" if name == base else name, bold=True).alignment = \
            Alignment(horizontal="right")
    for i, row in enumerate(summary_rows(base), start=HEADER_ROWS + 1):
        put_text(ws, i, 1, row.label)
        put_text(ws, i, 2, row.unit)
        for j, name in enumerate(names):
            formula = row.formula(refs[name].flat(), irr.get(name))
            if formula is None:
                put_text(ws, i, 3 + j, row.text).alignment = Alignment(horizontal="right")
            else:
                put_formula(ws, i, 3 + j, formula, row.unit)
    ws.column_dimensions["A"].width = 62
    ws.column_dimensions["B"].width = 30
    for j in range(len(names)):
        ws.column_dimensions[get_column_letter(3 + j)].width = 26
    finish_sheet(ws, HEADER_ROWS, 2)
