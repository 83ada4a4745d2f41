"""The Summary sheet, first in the workbook: per option, what a finance review reads first, each a live reference to the
cell of the Model or Cash flows sheet that computes it.

Rows of an inference workbook: cost per million output tokens (LCOT), NPV of choosing the option over the baseline, IRR
of that choice (where it exists; otherwise the reason), discounted payback year, PV of hardware capex, PV of the
operating costs (energy, facility, maintenance, KV links), accounting cost per year (straight-line depreciation plus
opex), devices and whether the option meets its latency targets. A training workbook's: cost per run and per million
training tokens, time to train, the cost ratio and saving against the baseline cluster, hardware and operating costs
over the run, the cluster's operating cost per year, devices, IT power and whether the run finishes. Currency,
percentage and thousands formats; the header frozen; printable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from openpyxl.styles import Alignment
from openpyxl.utils import get_column_letter

from tco.export.cells import HEADING_FONT, finish_sheet, put_formula, put_text
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


#: the cost lines of a training run that are operating costs (the rest is the hardware's capital recovery)
TRAINING_OPEX_LINES = ("energy_usd", "facility_usd", "maintenance_usd")


def _when_finished(refs: dict[str, str], formula: str) -> str:
    """``formula`` where the run finishes (its time to train is a number), else the Model sheet's text."""
    return f"IF(ISNUMBER({refs['time_to_train_s']}),{formula},{refs['time_to_train_s']})"


def training_summary_rows(baseline: str) -> list[SummaryRow]:
    """The Summary's rows for a training scenario whose baseline cluster is ``baseline``.

    Parameters
    ----------
    baseline : str
        The baseline option's name (its cells for the comparison figures say "baseline").

    Returns
    -------
    list[SummaryRow]
        In the order they print; each formula takes ``(flat references, None)`` of a cluster.
    """
    versus = f"the baseline {baseline}"
    return [
        SummaryRow("cost per training run", "USD", lambda refs, irr: refs["cost_per_run_usd"]),
        SummaryRow("cost per million training tokens", "USD per million training tokens",
                   lambda refs, irr: refs["usd_per_mtok_trained"]),
        SummaryRow("time to train", "days", lambda refs, irr: _when_finished(refs, f"{refs['time_to_train_s']}/86400")),
        SummaryRow(f"cost per run over {versus}", "ratio", lambda refs, irr: refs.get("cost_ratio"), "baseline"),
        SummaryRow(f"saved per run against {versus}", "USD", lambda refs, irr: refs.get("usd_saved_per_run"), "baseline"),
        SummaryRow("hardware capex over the run (capital recovery)", "USD", lambda refs, irr: refs["capex_usd"]),
        SummaryRow("operating costs over the run (energy, facility, maintenance)", "USD",
                   lambda refs, irr: _when_finished(refs, "+".join(refs[line] for line in TRAINING_OPEX_LINES))),
        SummaryRow("operating cost per year of the cluster (energy, facility, maintenance)", "USD/yr",
                   lambda refs, irr: refs["opex_usd_per_year"]),
        SummaryRow("devices in the cluster", "devices", lambda refs, irr: refs["devices"]),
        SummaryRow("IT power of the cluster", "W", lambda refs, irr: refs["power_w"]),
        SummaryRow("the run finishes on a shape that fits", "", lambda refs, irr: f'IF({refs["feasible"]}=1,"yes","no")'),
    ]


def write_summary(ws, scenario: Scenario, refs: dict[str, dict[str, str]], irr: dict[str, str], currency: str) -> None:
    """Fill the Summary sheet: one column per option, one row per figure (:func:`summary_rows`), live references.

    Parameters
    ----------
    ws : openpyxl.worksheet.worksheet.Worksheet
        The empty sheet.
    scenario : Scenario
        The scenario (its title, options and baseline).
    refs : dict[str, dict[str, str]]
        Each option's references on the Model, Cash flows and Break-even sheets by flat name (a roadmap baseline's
        serving figures those of the generation it runs at t = 0).
    irr : dict[str, str]
        Each challenger's reference to its IRR cell (Cash flows).
    currency : str
        The year of the USD (the Cover's currency line).
    """
    _write_table(ws, scenario, summary_rows(scenario.structure.baseline), refs, irr,
                 f"USD of {currency}; costs per million OUTPUT tokens; each figure a live reference to the Model and "
                 "Cash flows sheets")


def write_training_summary(ws, scenario, refs: dict[str, dict[str, str]], currency: str) -> None:
    """Fill a training workbook's Summary sheet: one column per cluster, one row per figure
    (:func:`training_summary_rows`), live references to the Model sheet.

    Parameters
    ----------
    ws : openpyxl.worksheet.worksheet.Worksheet
        The empty sheet.
    scenario : TrainingScenario
        The scenario (its title, clusters and baseline).
    refs : dict[str, dict[str, str]]
        Each cluster's references on the Model sheet (:func:`tco.export.training_sheet.write_training_model`).
    currency : str
        The year of the USD (the Cover's currency line).
    """
    _write_table(ws, scenario, training_summary_rows(scenario.structure.baseline), refs, {},
                 f"USD of {currency}; costs per training run and per million TRAINING tokens; each figure a live "
                 "reference to the Model sheet")


def _write_table(ws, scenario, rows: list[SummaryRow], refs: dict[str, dict[str, str]], irr: dict[str, str],
                 subtitle: str) -> None:
    """The Summary's layout: title, ``subtitle``, a column per option (the baseline marked), a row per ``rows``."""
    base = scenario.structure.baseline
    names = [o.name for o in scenario.structure.options]
    put_text(ws, 1, 1, f"Summary: {scenario.title}").font = HEADING_FONT
    put_text(ws, 2, 1, subtitle)
    put_text(ws, HEADER_ROWS, 1, "per option", bold=True)
    put_text(ws, HEADER_ROWS, 2, "unit", bold=True)
    for j, name in enumerate(names):
        put_text(ws, HEADER_ROWS, 3 + j, f"{name} (baseline)" if name == base else name, bold=True).alignment = \
            Alignment(horizontal="right")
    for i, row in enumerate(rows, start=HEADER_ROWS + 1):
        put_text(ws, i, 1, row.label)
        put_text(ws, i, 2, row.unit)
        for j, name in enumerate(names):
            formula = row.formula(refs[name], irr.get(name))
            if formula is None:
                put_text(ws, i, 3 + j, row.text).alignment = Alignment(horizontal="right")
            else:
                put_formula(ws, i, 3 + j, formula, row.unit)
    ws.column_dimensions["A"].width = 62
    ws.column_dimensions["B"].width = 30
    for j in range(len(names)):
        ws.column_dimensions[get_column_letter(3 + j)].width = 26
    finish_sheet(ws, HEADER_ROWS, 2)
