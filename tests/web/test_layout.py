"""No overlapping text and no clipped chart on any view of the app, at 1024 and 1440 px (headless Chromium).

The audit (``tests/web/layout.py``) compares bounding boxes of chart titles, legends, axis
titles, tick labels, annotations and form controls. It is first shown to catch each kind of
defect on a page built to have them (the defects issue 14 found: a legend over an axis title,
a dropdown covering the tornado's axis, 'base' and 'break-even' labels on
top of each other, an axis title longer than its axis, a 14 px wide field), then run on every
tab and every Fleet section of the app, with Monte Carlo and Sobol run on the Uncertainty tab.
"""

from __future__ import annotations

import logging
import threading

import plotly.graph_objects as go
import pytest
from dash import Dash, dcc, html
from layout import audit, run_uncertainty, settle, walk
from werkzeug.serving import make_server


@pytest.fixture(scope="module")
def broken_page():
    """A page with one of each defect."""
    legend_on_axis = go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2], name="a long trace name that fills a legend row"))
    legend_on_axis.update_layout(height=300, width=500, xaxis_title="prompt length [tokens]", template="none",
                                 showlegend=True, legend={"orientation": "h", "y": -0.1, "yanchor": "top", "x": 0.1},
                                 margin={"b": 60})
    covered = go.Figure(go.Bar(x=[1, 2], y=[3, 4]))
    covered.update_layout(height=300, template="none", xaxis_title="parameter")
    labels = go.Figure(go.Bar(y=["a", "b"], x=[3, 4], orientation="h"))
    labels.add_vline(3.5, annotation_text="base 3.5", annotation_position="top right")
    labels.add_vline(3.52, annotation_text="break-even", annotation_position="top right")
    labels.update_layout(height=300, width=500, template="none")
    long_axis = go.Figure(go.Scatter(x=[1, 2], y=[1, 2]))
    long_axis.update_layout(height=160, width=500, template="none", margin={"t": 5, "b": 30},
                            yaxis_title="cost [USD per million output tokens served over the quarter]")
    app = Dash(__name__)
    app.layout = html.Div([
        html.Div(className="chart", id="legend-box", children=dcc.Graph(figure=legend_on_axis)),
        html.Div(className="chart", id="covered-box", children=dcc.Graph(figure=covered)),
        html.Div(className="controls", id="sweep-row", style={"marginTop": "-60px", "position": "relative"},
                 children=dcc.Dropdown(id="sweep", options=["a"], value="a")),
        html.Div(className="chart", id="labels-box", children=dcc.Graph(figure=labels)),
        html.Div(className="chart", id="axis-box", children=dcc.Graph(figure=long_axis)),
        html.Div(className="controls", children=[dcc.Input(id="to", type="text", style={"width": "14px"})]),
    ])
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = make_server("127.0.0.1", 0, app.server, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


def test_the_audit_finds_each_defect(page, broken_page):
    page.set_viewport_size({"width": 1024, "height": 900})
    page.goto(broken_page)
    page.wait_for_selector("#axis-box .main-svg")
    settle(page)
    problems = "\n".join(audit(page))
    assert "legend-box: legend" in problems and "overlaps axistitle 'prompt length [tokens]'" in problems
    assert "controls 'sweep-row' cover the chart covered-box" in problems
    assert "labels-box: annotation 'base 3.5' overlaps annotation 'break-even'" in problems
    assert "axis-box: axistitle 'cost [USD per million" in problems and "is clipped" in problems
    assert "field 'to' is 16 px wide" in problems  # 14 px and its padding


#: the scenarios walked (the default, and the split fleet whose Fleet views differ) and the window widths [px]
QUERIES, WIDTHS = ["", "?scenario=fleet-split"], (1024, 1440)


@pytest.fixture(scope="module")
def problems_found(browser, live_app, artifacts):
    """``(query, width) -> {view: problems}``: one walk per scenario (:func:`layout.walk`) audits each view at both
    widths, opening the default at 1024 px and the split fleet at 1440 px, so each width is seen on a fresh page once
    and widened or narrowed once; a view with a problem is saved as ``test-artifacts/layout-<view>-<width>.png``."""
    url, _ = live_app
    found = {(query, width): {} for query in QUERIES for width in WIDTHS}
    for i, query in enumerate(QUERIES):
        page = browser.new_page()
        for name, width, problems in walk(page, url + "/" + query, WIDTHS[::-1] if i % 2 else WIDTHS, run_uncertainty):
            if problems:
                found[query, width][name] = problems
                page.screenshot(path=str(artifacts / f"layout-{name}-{width}.png"), full_page=True)
        page.close()
    return found


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("query", QUERIES)
def test_no_view_overlaps_or_clips(problems_found, live_app, width, query):
    assert problems_found[query, width] == {}
    assert live_app[1].records == []


@pytest.mark.slow
@pytest.mark.parametrize("width", [1024, 1440])
def test_the_assumptions_table_shows_grade_and_source_and_every_row_without_a_nested_scroll(page, live_app, width,
                                                                                           artifacts):
    """Issue 49 item 6: at 1024 and 1440 px the grade and source columns lay beyond the right edge of a table that
    scrolled inside its own 62vh box (rows past the first screen reachable only in that nested scroll), and ranges
    were cut with an ellipsis. Now the grade and source headers lie within the window, the table pages (50 rows a page,
    with filter and sort) instead of scrolling inside itself, and no range cell is cut."""
    url, log = live_app
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(url + "/")
    page.click("#tab-assumptions")
    table = page.locator("#params-table")
    page.locator('td[data-dash-column="range"]').first.wait_for()
    for column in ("grade", "source"):
        box = page.locator(f'#params-table th[data-dash-column="{column}"]').first.bounding_box()
        assert box and box["x"] + box["width"] <= width, (column, box)
    nested = table.evaluate("""t => [...t.querySelectorAll('*')].some(e => {
        const s = getComputedStyle(e);
        return (s.overflowY === 'auto' || s.overflowY === 'scroll') && e.scrollHeight > e.clientHeight + 1; })""")
    assert not nested
    cut = page.locator('#params-table td[data-dash-column="range"] div').evaluate_all(
        "cells => cells.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent)")
    assert cut == []
    assert page.locator("#params-table .previous-next-container").count() == 1  # 85 rows: two pages
    page.screenshot(path=str(artifacts / f"assumptions-{width}.png"), full_page=True)
    assert log.records == []
