"""``write_workbook``: the finance workbook of a scenario, live formulas only, written atomically.

Sheets: Summary (per option: LCOT, NPV, IRR, payback, capex, opex), Cover, Inputs, Model, Cash flows, Break-even,
Sensitivity, Market (API list prices and rented fleets beside the owned ones), Check, and a hidden Scenario sheet
holding the scenario file (what ``tco import`` rebuilds the scenario from). Every visible sheet has its header frozen,
a print area and print titles.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from pathlib import Path

import yaml
from openpyxl import Workbook
from openpyxl.packaging.custom import StringProperty
from openpyxl.styles import Alignment

from tco import __version__
from tco.analysis.evaluation import Analysis, analyse_scenario
from tco.analysis.program_views import SERVING_FIELDS, generation_fleets
from tco.export.breakeven_sheet import write_breakeven
from tco.export.cashflow_sheet import write_cash_flows
from tco.export.cells import finish_sheet, lock_formulas, put_text
from tco.export.check_sheet import analysis_values, with_market, write_check
from tco.export.inputs_sheet import write_inputs
from tco.export.market_sheet import write_market
from tco.export.model_sheet import ModelRefs, OptionRefs, write_model
from tco.export.names import excel_names
from tco.export.sensitivity_sheet import write_sensitivity
from tco.export.summary_sheet import write_summary, write_training_summary
from tco.export.training_sheet import training_model_values, write_training_model
from tco.foundation.errors import InputError
from tco.foundation.files import atomic_write, check_target
from tco.inputs.loading import scenario_from_dict
from tco.inputs.scenario import Scenario
from tco.present.comparison import compare
from tco.present.training_comparison import compare_training

SCENARIO_SHEET = "Scenario"
#: the workbook's custom document property holding the SHA-256 of the hidden Scenario sheet's text (``tco import``
#: refuses a sheet that no longer matches it: an edit there would change the result without showing on Inputs)
SCENARIO_DIGEST = "tco scenario sheet sha256"
WRAP, TOP = Alignment(wrap_text=True, vertical="top"), Alignment(vertical="top")
SHEETS = ("Summary", "Cover", "Inputs", "Model", "Cash flows", "Break-even", "Sensitivity", "Market", "Check",
          SCENARIO_SHEET)
#: header rows and label columns of each sheet the Summary does not finish itself (:func:`tco.export.cells.finish_sheet`)
LAYOUT = {"Cover": (0, 1), "Inputs": (None, None), "Model": (0, 1), "Cash flows": (3, 3), "Break-even": (0, 1),
          "Sensitivity": (0, 1), "Market": (0, 1), "Check": (5, 1)}


def currency_year(scenario: Scenario) -> str:
    """The latest year among the parameters' source dates: the USD the catalog is in."""
    years = [int(y) for p in scenario.params.values_list() for y in re.findall(r"\b(20\d\d)\b", p.date)]
    return str(max(years)) if years else "unknown"


def build_workbook(scenario: Scenario) -> Workbook:
    """The workbook of ``scenario`` (in memory)."""
    if getattr(scenario, "kind", "inference") == "training":
        return build_training_workbook(scenario)
    wb, sheets, names = _workbook_with_inputs(scenario, SHEETS)
    analysis = analyse_scenario(scenario)
    model = write_model(sheets["Model"], scenario, names)
    cash = write_cash_flows(sheets["Cash flows"], scenario, names, model)
    closed = write_breakeven(sheets["Break-even"], scenario, names, model, cash)
    comparison = compare(scenario)  # the Cover's verdict and the option of the Sensitivity snapshot
    write_sensitivity(sheets["Sensitivity"], scenario, comparison.to_dict()["comparison"]["option"])
    refs = {o.name: OptionRefs() for o in scenario.structure.options}
    for name, merged in refs.items():
        for part in (model.options[name], cash[name], closed.get(name, OptionRefs())):
            merged.update(part)
    flat, expected = {name: r.flat() for name, r in refs.items()}, analysis_values(analysis)
    _baseline_as_run(analysis, model, flat)
    for row, refs_of_row in write_market(sheets["Market"], scenario, names, comparison.market, comparison.results,
                                         flat).items():
        flat.setdefault(row, {}).update(refs_of_row)
    write_check(sheets["Check"], scenario, flat, with_market(expected, comparison.market))
    _write_cover(sheets["Cover"], scenario, comparison.verdict)
    write_summary(sheets["Summary"], scenario, flat, {name: c.sizing["irr"] for name, c in cash.items() if "irr" in c.sizing},
                  currency_year(scenario))
    _write_scenario(wb, sheets[SCENARIO_SHEET], scenario)
    _finish(sheets)
    for title in ("Summary", "Inputs", "Model", "Cash flows", "Break-even", "Market", "Check"):
        lock_formulas(sheets[title])
    return wb


def _baseline_as_run(analysis: Analysis, model: ModelRefs, refs: dict[str, dict[str, str]]) -> None:
    """A roadmap baseline's column is one fleet (issue 49 item 3): its serving and energy figures (shape, speed, size,
    power, each pool's yearly costs: :data:`tco.analysis.program_views.SERVING_FIELDS`) are read from the Model sheet's
    block of the generation its fleet runs at t = 0, as ``tco compare`` shows them and the Check sheet compares them
    (:func:`tco.export.check_sheet.analysis_values`); its costs over the horizon stay the roadmap's (Cash flows).
    ``refs`` is changed in place; nothing changes without a roadmap or where the fleet starts on its own device."""
    fleets = generation_fleets(analysis)
    if not fleets:
        return
    held, devices = next(iter(fleets)), analysis.baseline.roadmap.devices
    if held == devices[0]:
        return
    first = model.generations[devices.index(held) - 1].flat()
    base = analysis.structure.baseline
    roles = {pool.role for pool in analysis.structure.option(base).pools}
    for key, ref in first.items():
        head = key.split(".")[0]
        if key in refs[base] and (key in SERVING_FIELDS or head in roles or head == "links"):
            refs[base][key] = ref


def _finish(sheets: dict) -> None:
    """Frozen headers, print areas and titles on every visible sheet but the Summary (:data:`LAYOUT`); the Inputs sheet
    keeps the panes it froze."""
    for title, (header_rows, label_columns) in LAYOUT.items():
        if title in sheets:
            if header_rows is None:
                sheets[title].print_area = sheets[title].dimensions
            else:
                finish_sheet(sheets[title], header_rows, label_columns)


TRAINING_SHEETS = ("Summary", "Cover", "Inputs", "Model", "Check", SCENARIO_SHEET)


def _workbook_with_inputs(scenario, titles) -> tuple[Workbook, dict, dict[str, str]]:
    """A workbook with one sheet per title and the Inputs sheet filled; returns it, the sheets and the defined names."""
    wb = Workbook()
    sheets = {title: (wb.active if i == 0 else wb.create_sheet()) for i, title in enumerate(titles)}
    for title, ws in sheets.items():
        ws.title = title
    params = scenario.params.values_list()
    names = excel_names(p.name for p in params)
    write_inputs(wb, sheets["Inputs"], params, names, file_values(scenario))
    return wb, sheets, names


def file_values(scenario) -> dict[str, float]:
    """The values of ``scenario`` before its ``set:`` edits (what its file and the catalog give); empty when
    there are no edits or the unedited scenario cannot be rebuilt."""
    data = scenario.to_dict()
    if not data.get("set"):
        return {}
    try:
        return scenario_from_dict({**data, "set": {}}).values()
    except InputError:
        return {}


def build_training_workbook(scenario) -> Workbook:
    """The workbook of a ``kind: training`` scenario: Summary, Cover, Inputs, the Model of every cluster, Check,
    Scenario."""

    wb, sheets, names = _workbook_with_inputs(scenario, TRAINING_SHEETS)
    refs = write_training_model(sheets["Model"], scenario, names)
    write_check(sheets["Check"], scenario, refs, training_model_values(scenario))
    write_training_summary(sheets["Summary"], scenario, refs, currency_year(scenario))
    _write_cover(sheets["Cover"], scenario, compare_training(scenario, with_flips=False).verdict,
                 "cost per training run (USD) and time to train (days); costs per million TRAINING tokens")
    _write_scenario(wb, sheets[SCENARIO_SHEET], scenario)
    _finish(sheets)
    for title in ("Summary", "Inputs", "Model", "Check"):
        lock_formulas(sheets[title])
    return wb


def _write_cover(ws, scenario: Scenario, verdict: str,
                 basis: str = "costs per million OUTPUT tokens unless labelled input+output") -> None:
    ws.column_dimensions["A"].width = 22
    ws.column_dimensions["B"].width = 120
    rows = [
        ("scenario", scenario.name), ("title", scenario.title), ("question", scenario.question),
        ("description", scenario.description), ("baseline", scenario.structure.baseline),
        ("tco version", __version__), ("written", dt.date.today().isoformat()),
        ("currency", f"USD of {currency_year(scenario)} (the latest source date in the catalog)"),
        ("token basis", basis),
        ("verdict", verdict),
        ("how to use", "Edit only the shaded value cells on Inputs; Model, Cash flows, Break-even and Check recalculate."),
        ("", "Every formula refers to inputs by defined name (the Inputs sheet lists each parameter's name)."),
        ("", "Sensitivity and the solver break-evens are snapshots from tco: rerun `tco export` after edits."),
        ("", "Check compares the Python model (as written) with the formulas; after edits its Python column is stale."),
        ("", "Send edits back with `tco import WORKBOOK.xlsx --out scenario.yaml`."),
    ]
    for i, (label, text) in enumerate(rows, start=1):
        put_text(ws, i, 1, label, bold=True).alignment = TOP
        put_text(ws, i, 2, text).alignment = WRAP  # the verdict runs to a paragraph


def _write_scenario(wb: Workbook, ws, scenario: Scenario) -> None:
    """The scenario file, one YAML line per row (as text), for ``tco import``, and the digest of what the sheet holds."""
    text = yaml.safe_dump(scenario.to_dict(), sort_keys=False, allow_unicode=True)
    lines = [put_text(ws, i, 1, line).value for i, line in enumerate(text.splitlines(), start=1)]
    ws.sheet_state = "hidden"
    wb.custom_doc_props.append(StringProperty(name=SCENARIO_DIGEST, value=scenario_digest(lines)))


def scenario_digest(lines: list[str]) -> str:
    """The SHA-256 (hex) of the hidden Scenario sheet's text: its rows of column A, joined by newlines.

    Parameters
    ----------
    lines : list of str
        The rows' text, in order (an empty row is ``""``).

    Returns
    -------
    str
        64 hex digits.
    """
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()


def write_workbook(scenario: Scenario, path: str | Path, force: bool = False) -> Path:
    """Write the workbook to ``path`` through a temporary file and a rename (:func:`tco.foundation.files.atomic_write`).

    Refuses to overwrite an existing file unless ``force`` (which keeps its permissions; a new
    file gets the umask's); a failure leaves no partial file.
    """
    path = Path(path)
    if path.suffix.lower() != ".xlsx":
        raise InputError.one("--xlsx", str(path), "must end in .xlsx")
    check_target(path, force, "--xlsx")  # before the workbook is built
    return atomic_write(path, build_workbook(scenario).save, force=force, field="--xlsx")
