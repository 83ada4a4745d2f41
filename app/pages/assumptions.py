"""Assumptions: every named parameter with unit, range, evidence grade and source; edit values, download the scenario
as YAML or as the finance workbook (``tco export``).

Edits are validated cell by cell in :mod:`app.controller` (one callback owns the table);
an invalid value stays in its cell, marked, with the rule it breaks in the ``check`` column.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from dash import Input, Output, State, dash_table, dcc, html

from tco.export import write_workbook
from tco.util import slug

from ..context import AppContext
from ..state import scenario_yaml

ID = "assumptions"
LABEL = "Assumptions"

COLUMNS = [("name", "parameter"), ("value", "value (edit)"), ("unit", "unit"), ("low", "low"), ("high", "high"),
           ("distribution", "distribution"), ("grade", "grade"), ("source", "source"), ("check", "check")]


def cell(value: float) -> str:
    """A value as table text that parses back to exactly the same float."""
    text = f"{value:.12g}"
    return text if float(text) == value else repr(float(value))


def table_rows(scenario, raw: dict | None = None, problems: dict | None = None) -> list[dict]:
    """One row per parameter; ``raw`` keeps a user's rejected text, ``problems`` its rule."""
    raw, problems = raw or {}, problems or {}
    return [{"name": p.name, "value": raw.get(p.name, cell(p.value)), "unit": p.unit, "low": f"{p.low:.4g}",
             "high": f"{p.high:.4g}", "distribution": p.distribution, "grade": p.grade,
             "source": " ".join(x for x in (p.source, p.date, p.note) if x), "check": problems.get(p.name, "")}
            for p in scenario.params.values_list()]


def layout(ctx: AppContext):
    return html.Div([
        html.P("Every named input of the scenario. Edit a value (units in the next column); invalid values are "
               "flagged in the check column with the rule they break and are not applied.", className="hint"),
        html.Div(className="toolbar", children=[
            html.Button("Download scenario YAML", id="download-yaml-button"),
            html.Button("Download finance workbook", id="download-xlsx-button",
                        title="the xlsx of `tco export` for this scenario and its edits: live formulas"),
            html.Button("Reset all edits", id="reset-edits"),
            dcc.Download(id="download-yaml"),
            dcc.Download(id="download-xlsx"),
        ]),
        html.Div(id="edit-errors", className="errors-box"),
        dash_table.DataTable(
            id="params-table", columns=[{"name": label, "id": key, "editable": key == "value"} for key, label in COLUMNS],
            data=[], page_action="none", filter_action="native", sort_action="native", fixed_rows={"headers": True},
            style_table={"height": "60vh", "overflowY": "auto"},
            style_cell={"fontFamily": "system-ui, sans-serif", "fontSize": 13, "textAlign": "left", "padding": "4px 8px",
                        "maxWidth": 420, "overflow": "hidden", "textOverflow": "ellipsis", "whiteSpace": "nowrap"},
            style_cell_conditional=[{"if": {"column_id": "value"}, "backgroundColor": "#eef5fb", "minWidth": 120},
                                    {"if": {"column_id": "name"}, "minWidth": 260}],
            style_data_conditional=[{"if": {"filter_query": '{check} != ""'}, "backgroundColor": "#fde8e0", "color": "#8a2a0a"}],
            tooltip_duration=None, css=[{"selector": ".dash-spreadsheet td div", "rule": "max-height: 22px;"}]),
    ])


def register(app, ctx: AppContext) -> None:
    @app.callback(Output("download-yaml", "data"), Input("download-yaml-button", "n_clicks"), State("state", "data"),
                  prevent_initial_call=True)
    def download_yaml(_clicks, state):
        scenario = ctx.scenario(state)
        return {"content": scenario_yaml(scenario), "filename": f"{slug(scenario.name)}-edited.yaml", "type": "text/yaml"}

    @app.callback(Output("download-xlsx", "data"), Input("download-xlsx-button", "n_clicks"), State("state", "data"),
                  prevent_initial_call=True)
    def download_xlsx(_clicks, state):
        return workbook_download(ctx.scenario(state))


def workbook_download(scenario) -> dict:
    """The finance workbook of ``scenario`` (what ``tco export`` writes), as a download."""
    with tempfile.TemporaryDirectory(prefix="tco-xlsx-") as folder:  # the name is a slug: it stays in the folder
        path = write_workbook(scenario, Path(folder) / f"{slug(scenario.name)}-edited.xlsx")
        return dcc.send_bytes(path.read_bytes(), path.name)
