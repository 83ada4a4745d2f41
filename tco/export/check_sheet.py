"""The Check sheet: the Python model's results beside the workbook's formulas, with the difference.

:func:`model_values` computes what the Python model says for every quantity the workbook
computes; the sheet lists it (a snapshot) next to a live reference to the workbook cell and
their relative difference, so a reader sees both agree.
"""

from __future__ import annotations

import math

from tco.analysis.evaluation import Analysis, analyse_scenario
from tco.analysis.market import MarketCheck, market_check
from tco.analysis.program_views import baseline_as_run, generation_fleets
from tco.core.outputs import COMPARISON_OUTPUTS
from tco.export.cells import BOLD, SNAPSHOT_FILL, put_formula, put_text
from tco.export.market_sheet import market_values
from tco.foundation.plain_values import scalar
from tco.inputs.scenario import Scenario

TOLERANCE = 1e-9
#: text the workbook shows where the Python model has no finite number
NEVER, NONE = "never", "none"
#: the text for a missing comparison output ("never" unless listed)
MISSING_TEXT = {"payback_year": NONE}
HEADER_ROW = 5
FIRST_ROW = HEADER_ROW + 1


def finite_or(value, missing: str):
    """The first element of a model result as a float, or ``missing`` (text the workbook shows) when not finite."""
    value = scalar(value)
    return value if math.isfinite(value) else missing


def model_values(scenario: Scenario) -> dict[str, dict[str, float | str]]:
    """Every quantity the workbook computes, from the Python model: ``{option: {dotted name: value}}``.

    The option's outputs (:meth:`~tco.core.outputs.OptionResult.flat`), for challengers the comparison outputs the
    workbook recomputes (``workbook`` in the output table), and the Market sheet's figures
    (:func:`tco.export.market_sheet.market_values`: per option and under ``market``).
    """
    analysis = analyse_scenario(scenario)
    return with_market(analysis_values(analysis), market_check(scenario, shown_results(analysis)))


def with_market(values: dict[str, dict[str, float | str]], check: MarketCheck) -> dict[str, dict[str, float | str]]:
    """``values`` (:func:`analysis_values`) with the Market sheet's figures of ``check`` added, by Check row."""
    for row, python in market_values(check).items():
        values.setdefault(row, {}).update(python)
    return values


def shown_results(analysis: Analysis) -> dict:
    """Each option's result as a table shows it: a roadmap baseline's serving and energy figures those of the
    generation it runs at t = 0 (:func:`tco.analysis.program_views.baseline_as_run`)."""
    return {**analysis.options, analysis.structure.baseline: baseline_as_run(analysis, generation_fleets(analysis))}


def analysis_values(analysis: Analysis) -> dict[str, dict[str, float | str]]:
    """The options' and challengers' part of :func:`model_values`, of a scenario already analysed; a roadmap baseline as
    a table shows it (:func:`shown_results`)."""
    out: dict[str, dict[str, float | str]] = {}
    for name, r in shown_results(analysis).items():
        row = {k: finite_or(v, NEVER) for k, v in r.flat().items()}
        if name in analysis.challengers:
            row.update({k: finite_or(v, MISSING_TEXT.get(k, NEVER)) for k, v in analysis.challengers[name].flat().items()
                        if COMPARISON_OUTPUTS[k].workbook})
        out[name] = row
    return out


def relative_difference(python: str, workbook: str) -> str:
    """0 when equal; ``|wb - py| / max(|py|, |wb|)`` for numbers; 1 when a text result differs."""
    return (f"IF(ISTEXT({python}),IF({workbook}={python},0,1),IF(ISNUMBER({workbook}),"
            f"ABS({workbook}-{python})/MAX(ABS({python}),ABS({workbook}),1E-300),1))")


def write_check(ws, scenario: Scenario, refs: dict[str, dict[str, str]],
                expected: dict[str, dict[str, float | str]] | None = None) -> list[tuple[str, str]]:
    """Fill ``ws``; returns the ``(option, key)`` of each row, in order (row ``FIRST_ROW + i``).

    ``expected`` is the Python model's values (default: :func:`model_values`, the inference model).
    """
    expected = model_values(scenario) if expected is None else expected
    put_text(ws, 1, 1, "Python model (snapshot when written) beside the workbook's live formulas.", bold=True)
    put_text(ws, 2, 1, "largest relative difference")
    put_text(ws, 3, 1, f"rows differing by more than {TOLERANCE:g}")
    for i, (title, width) in enumerate(zip(("option", "quantity", "Python model", "workbook", "relative difference"),
                                           (30, 40, 20, 20, 20), strict=True), start=1):
        put_text(ws, HEADER_ROW, i, title).font = BOLD
        ws.column_dimensions["ABCDE"[i - 1]].width = width
    keys = []
    row = FIRST_ROW
    for option, values in expected.items():
        for key, value in values.items():
            if key not in refs[option]:
                continue
            put_text(ws, row, 1, option)
            put_text(ws, row, 2, key)
            cell = put_text(ws, row, 3, value) if isinstance(value, str) else ws.cell(row=row, column=3, value=value)
            cell.fill = SNAPSHOT_FILL
            put_formula(ws, row, 4, refs[option][key])
            put_formula(ws, row, 5, relative_difference(f"C{row}", f"D{row}"))
            keys.append((option, key))
            row += 1
    last = row - 1
    put_formula(ws, 2, 3, f"MAX(E{FIRST_ROW}:E{last})")
    put_formula(ws, 3, 3, f'SUMPRODUCT((E{FIRST_ROW}:E{last}>{TOLERANCE:g})*1)')
    return keys
