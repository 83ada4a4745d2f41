"""The Sensitivity sheet: a tornado and one sweep, as values, with charts.

Both are computed by :func:`tco.analysis.evaluation.evaluate_scenario` with array updates (one vectorized
call each) and written as a snapshot: they do not follow edits to the Inputs.
"""

from __future__ import annotations

import numpy as np
from openpyxl.chart import BarChart, LineChart, Reference

from tco.analysis.evaluation import evaluate_scenario
from tco.analysis.solvers import grid
from tco.core import names as named
from tco.core.comparison import npv_usd
from tco.export.cells import SNAPSHOT_FILL, put_text
from tco.inputs.scenario import Scenario

SWEEP_PARAM = named.workload.requests_per_s
SWEEP_POINTS = 21
TORNADO_BARS = 15


def npv_of(results, option: str, baseline: str):
    """NPV of choosing ``option`` over the baseline [USD] (:func:`tco.core.comparison.npv_usd`)."""
    return npv_usd(results[baseline], results[option])


def tornado(scenario: Scenario, option: str) -> list[tuple[str, float, float, float, float]]:
    """``(name, low, high, NPV at low, NPV at high)`` per uncertain parameter, largest swing first.

    One vectorized evaluation: parameter ``i`` takes its low and high at positions ``2i``
    and ``2i + 1`` of the sample axis, every other parameter its base value.
    """
    params = scenario.params.uncertain()
    if not params:
        return []
    updates = {}
    for i, p in enumerate(params):
        column = np.full(2 * len(params), p.value)
        column[2 * i:2 * i + 2] = (p.low, p.high)
        updates[p.name] = column
    results, _ = evaluate_scenario(scenario, updates)
    # an output no uncertain input moves comes back as one value: broadcast it over the 2 x n evaluations
    npv = np.broadcast_to(npv_of(results, option, scenario.structure.baseline), (2 * len(params),)).reshape(-1, 2)
    rows = [(p.name, p.low, p.high, float(a), float(b)) for p, (a, b) in zip(params, npv, strict=True)]
    return sorted(rows, key=lambda r: -abs(r[4] - r[3]))


def sweep(scenario: Scenario, name: str = SWEEP_PARAM, points: int = SWEEP_POINTS):
    """``(x, {option: LCOT USD per million output tokens})`` over ``name``'s range."""
    p = scenario.params[name]
    low, high = (p.low, p.high) if p.uncertain else (p.value / 4, p.value * 4)
    xs = grid(low, high, points)
    results, _ = evaluate_scenario(scenario, {name: xs})
    return xs, {o: np.broadcast_to(r.lcot_usd_per_mtok, xs.shape) for o, r in results.items()}


def write_sensitivity(ws, scenario: Scenario, option: str | None) -> None:
    """The snapshot sheet: the tornado of ``option``'s NPV over the baseline (none without a challenger) and the sweep.

    Parameters
    ----------
    ws : openpyxl.worksheet.worksheet.Worksheet
        The Sensitivity sheet.
    scenario : Scenario
        The scenario.
    option : str or None
        The challenger of the tornado (the one ``tco compare`` reports against the baseline).
    """
    structure = scenario.structure
    put_text(ws, 1, 1, "SNAPSHOT from tco, not live: computed when the workbook was written; rerun `tco export` after "
             "editing the Inputs.", bold=True)
    ws.column_dimensions["A"].width = 52
    row = 3
    if option is not None:
        base_npv = float(npv_of(evaluate_scenario(scenario)[0], option, structure.baseline))
        put_text(ws, row, 1, f"Tornado: NPV of choosing {option} over {structure.baseline} (USD; base {base_npv:,.0f})",
                 bold=True)
        row += 1
        for i, title in enumerate(("parameter", "low", "high", "NPV at low", "NPV at high", "swing"), start=1):
            put_text(ws, row, i, title, bold=True)
        first = row + 1
        bars = tornado(scenario, option)
        for name, low, high, at_low, at_high in bars:
            row += 1
            put_text(ws, row, 1, name)
            for column, value in ((2, low), (3, high), (4, at_low), (5, at_high), (6, abs(at_high - at_low))):
                ws.cell(row=row, column=column, value=value).fill = SNAPSHOT_FILL
        if bars:
            chart = BarChart()
            chart.type, chart.grouping, chart.overlap = "bar", "clustered", 100
            chart.title, chart.y_axis.title = f"Tornado: NPV of {option} (USD)", "USD"
            last = first + min(len(bars), TORNADO_BARS) - 1
            chart.add_data(Reference(ws, min_col=4, max_col=5, min_row=first - 1, max_row=last), titles_from_data=True)
            chart.set_categories(Reference(ws, min_col=1, min_row=first, max_row=last))
            chart.height, chart.width = 12, 22
            ws.add_chart(chart, "H3")
        row += 2
    xs, lcot = sweep(scenario)
    put_text(ws, row, 1, f"Sweep: levelized cost (USD per million output tokens) vs {SWEEP_PARAM}", bold=True)
    row += 1
    put_text(ws, row, 1, SWEEP_PARAM, bold=True)
    for j, name in enumerate(lcot, start=2):
        put_text(ws, row, j, name, bold=True)
    header = row
    for i, x in enumerate(xs):
        row += 1
        ws.cell(row=row, column=1, value=float(x)).fill = SNAPSHOT_FILL
        for j, values in enumerate(lcot.values(), start=2):
            ws.cell(row=row, column=j, value=float(values[i])).fill = SNAPSHOT_FILL
    chart = LineChart()
    chart.title, chart.y_axis.title, chart.x_axis.title = "LCOT vs demand", "USD per million output tokens", SWEEP_PARAM
    chart.add_data(Reference(ws, min_col=2, max_col=1 + len(lcot), min_row=header, max_row=row), titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=header + 1, max_row=row))
    chart.height, chart.width = 12, 22
    ws.add_chart(chart, f"H{header}")
