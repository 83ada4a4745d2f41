"""Assumptions: every named parameter with its label, value, range, evidence grade and source; edit values,
see what was edited (the file's value beside it), read each source in full, download the scenario as YAML or
as the finance workbook (``tco export``).

Edits are validated cell by cell in :mod:`app.controller` (one callback owns the table); an
invalid value stays in its cell, marked, with the rule it breaks in the ``check`` column.
Selecting a row shows its provenance: source, date, grade, note, and the bibliography entries
it cites (``docs/sources.md``) with their public addresses as links.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from dash import Input, Output, State, dash_table, dcc, html

from tco.export import write_workbook
from tco.foundation.files import slug
from tco.foundation.formatting import quantity
from tco.foundation.labels import param_label
from tco.inputs.bibliography import cited

from ..context import AppContext
from ..tables import scenario_download

ID = "assumptions"
LABEL = "Assumptions"

#: the table's columns, what a reader needs first leftmost: at 1024 px the input, its value, range, grade and source
#: fit the window; the rest follow
COLUMNS = [("label", "input"), ("value", "value (edit, SI unit)"), ("reads", "reads as"), ("range", "sourced range"),
           ("grade", "grade"), ("source", "source (select a row for all of it)"), ("date", "date"),
           ("original", "scenario file's value"), ("unit", "unit"), ("check", "check"), ("name", "parameter name")]
#: rows a page of the table shows (filter and sort work across every page; no scroll box inside the page)
PAGE_ROWS = 50
GRADES = {"A": "A: measured, list price or vendor specification", "B": "B: analyst or press estimate",
          "C": "C: our estimate (see the note)", "": "no grade given (a scenario assumption)"}


def cell(value: float) -> str:
    """A value as table text that parses back to exactly the same float."""
    text = f"{value:.12g}"
    return text if float(text) == value else repr(float(value))


def _range(p) -> str:
    lo, hi = quantity(p.low, p.unit), quantity(p.high, p.unit)
    return lo if lo == hi else f"{lo} – {hi}"


def table_rows(scenario, raw: dict | None = None, problems: dict | None = None, base=None) -> list[dict]:
    """One row per parameter; ``raw`` keeps a user's rejected text, ``problems`` its rule; ``base`` (the
    scenario without edits) gives the file's value of each edited row."""
    raw, problems = raw or {}, problems or {}
    originals = base.params if base is not None else scenario.params
    rows = []
    for p in scenario.params.values_list():
        original = originals[p.name].value if p.name in originals else p.value
        edited = original != p.value
        rows.append({"name": p.name, "label": param_label(p.name), "value": raw.get(p.name, cell(p.value)), "unit": p.unit,
                     "reads": quantity(p.value, p.unit, 4), "original": quantity(original, p.unit, 4) if edited else "",
                     "range": _range(p), "grade": p.grade, "date": p.date, "source": p.source,
                     "note": p.note, "distribution": p.distribution, "check": problems.get(p.name, "")})
    return rows


def tooltips(rows: list[dict]) -> list[dict]:
    """Per row: the full source, date, grade and note on the source cell; the dotted name on the input cell."""
    return [{"source": {"value": "\n\n".join(x for x in (r["source"], f"date: {r['date']}" if r["date"] else "",
                                                          GRADES.get(r["grade"], ""), r["note"]) if x),
                        "type": "text"},
             "label": {"value": r["name"], "type": "text"}} for r in rows]


def provenance(row: dict | None) -> html.Div:
    """Everything known about one parameter's number, readable: value, range, grade, date, source, note, citations."""
    if not row:
        return html.Div(html.P("Select a row to read its source, note and the bibliography entries it cites.",
                               className="hint"), id="provenance")
    entries = cited(row.get("source", ""))
    cites = [html.Li([html.B(f"[{e.key}] "), e.text, " ",
                      html.A("open", href=e.url, target="_blank", rel="noopener noreferrer") if e.url else ""])
             for e in entries]
    facts = [("parameter", row["name"]), ("value", row["reads"] + (f" (the scenario file says {row['original']})"
                                                                  if row.get("original") else "")),
             ("sourced range", f"{row['range']} ({row.get('distribution', '')})"), ("grade", GRADES.get(row["grade"], "")),
             ("date", row["date"] or "—"), ("source", row["source"] or "—"), ("note", row["note"] or "—")]
    return html.Div(id="provenance", className="provenance", children=[
        html.H4(row["label"]),
        html.Dl([part for k, v in facts for part in (html.Dt(k), html.Dd(v))]),
        html.Div([html.H5("Cited (docs/sources.md)"), html.Ul(cites)]) if cites else None,
    ])


def layout(ctx: AppContext):
    return html.Div([
        html.P("Every named input of the scenario, with its sourced range, evidence grade and source. Edit a value in "
               "its SI unit ('9%', '2,000' and '20k' are read too); an edited row is marked and shows the scenario "
               "file's value beside it; a value outside its sourced range is accepted with a warning; an invalid one "
               "is flagged in the check column and not applied. Select a row to read its source in full.", className="hint"),
        html.Div(className="toolbar", children=[
            # disabled until the page's state arrives: a click before it would download the default scenario, not
            # the one a link or an upload opened (enabled by ``downloads_ready``)
            html.Button("Download scenario YAML", id="download-yaml-button", disabled=True),
            html.Button("Download finance workbook", id="download-xlsx-button", disabled=True, title=XLSX_TITLE),
            dcc.Download(id="download-yaml"),
            dcc.Download(id="download-xlsx"),
        ]),
        html.Div(id="edit-errors", className="errors-box"),
        html.Div(className="assumptions-grid", children=[
            dash_table.DataTable(
                id="params-table", columns=[{"name": label, "id": key, "editable": key == "value"} for key, label in COLUMNS],
                data=[], page_action="native", page_size=PAGE_ROWS, filter_action="native", sort_action="native",
                row_selectable=False, tooltip_delay=300, tooltip_duration=None,
                style_table={"overflowX": "auto"},
                style_header={"fontWeight": "600", "backgroundColor": "#f0f3f7", "whiteSpace": "normal", "height": "auto"},
                style_cell={"fontFamily": "system-ui, sans-serif", "fontSize": 13, "textAlign": "left", "padding": "4px 8px",
                            "maxWidth": 320, "overflow": "hidden", "textOverflow": "ellipsis", "whiteSpace": "nowrap"},
                style_cell_conditional=[
                    {"if": {"column_id": "value"}, "backgroundColor": "#eef5fb", "minWidth": 96, "width": 96, "maxWidth": 96},
                    {"if": {"column_id": "label"}, "minWidth": 200, "width": 220, "maxWidth": 220},
                    {"if": {"column_id": "reads"}, "minWidth": 90, "width": 100, "maxWidth": 110},
                    {"if": {"column_id": "source"}, "minWidth": 180, "width": 200, "maxWidth": 200},
                    {"if": {"column_id": "original"}, "minWidth": 110, "width": 110},
                    {"if": {"column_id": "range"}, "minWidth": 150, "whiteSpace": "normal", "textOverflow": "clip"},
                    {"if": {"column_id": "name"}, "color": "#5a6b7d", "fontSize": 12},
                    {"if": {"column_id": "grade"}, "width": 50, "textAlign": "center"}],
                style_data_conditional=[
                    {"if": {"filter_query": '{original} != ""'}, "backgroundColor": "#fff4d6"},
                    {"if": {"filter_query": '{original} != ""', "column_id": "value"}, "backgroundColor": "#ffe08a",
                     "fontWeight": "600"},
                    {"if": {"filter_query": '{check} != ""'}, "backgroundColor": "#fde8e0", "color": "#8a2a0a"}],
                css=[{"selector": ".dash-spreadsheet td:not([data-dash-column='range']) div", "rule": "max-height: 22px;"},
                     {"selector": ".dash-table-tooltip", "rule": "max-width: 520px; white-space: pre-wrap; font-size: 12px;"}]),
            html.Div(id="provenance-box", children=provenance(None)),
        ]),
    ])


def register(app, ctx: AppContext) -> None:
    @app.callback(Output("provenance-box", "children"), Input("params-table", "active_cell"),
                  State("params-table", "derived_viewport_data"), prevent_initial_call=True)
    def details(active, rows):
        if not active or not rows or active.get("row") is None or active["row"] >= len(rows):
            return provenance(None)
        return provenance(rows[active["row"]])

    @app.callback(Output("download-yaml-button", "disabled"), Output("download-xlsx-button", "disabled"),
                  Input("state", "data"))
    def downloads_ready(state):
        return state is None, state is None

    @app.callback(Output("download-yaml", "data"), Input("download-yaml-button", "n_clicks"), State("state", "data"),
                  prevent_initial_call=True)
    def download_yaml(_clicks, state):
        return scenario_download(ctx.scenario(state))

    @app.callback(Output("download-xlsx", "data"), Input("download-xlsx-button", "n_clicks"), State("state", "data"),
                  prevent_initial_call=True)
    def download_xlsx(_clicks, state):
        return workbook_download(ctx.scenario(state))


#: the workbook button's tooltip
XLSX_TITLE = "the xlsx of `tco export` for this scenario and its edits: live formulas"


def workbook_download(scenario) -> dict:
    """The finance workbook of ``scenario`` (what ``tco export`` writes), as a download."""
    with tempfile.TemporaryDirectory(prefix="tco-xlsx-") as folder:  # the name is a slug: it stays in the folder
        path = write_workbook(scenario, Path(folder) / f"{slug(scenario.name)}-edited.xlsx")
        return dcc.send_bytes(path.read_bytes(), path.name)
