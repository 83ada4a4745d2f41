"""Result tables: numbers formatted with their unit in the row or column title, each with a CSV download.

Every table the app shows is built by :func:`table_block` from a header and rows of cell
text; the same cells go to its "Download CSV" button (one pattern-matched callback,
:func:`csv_download`, written by :func:`tco.foundation.safe_csv.to_csv`: cells that a spreadsheet would run
as a formula are escaped).
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Mapping, Sequence

from dash import dcc, html

from tco.foundation.files import slug
from tco.foundation.safe_csv import to_csv
from tco.present.tables import Column, cell

__all__ = ["Column", "cell", "csv_text", "number", "pairs_table", "records_table", "table_block", "versus_table"]


def number(value, fmt: str, scale: float = 1.0) -> str:
    """``value * scale`` in ``fmt``; the em dash for a missing or non-finite value (:func:`tco.present.tables.cell`)."""
    return cell(value, fmt, scale)


#: a number as the app writes one, with at most one unit word after it (right-aligned): "1,234", "-$52M", "11.1 ms", "9%"
_NUMBER = re.compile(r"^[-+]?\$?[\d,]*\.?\d+(e[-+]?\d+)?[kMBT%x]?( [^\s\d][^\s]{0,14})?$|^—$")


def _is_number(text: str) -> bool:
    return bool(_NUMBER.match(text.strip()))


def table_block(ident: str, header: Sequence[str], rows: Sequence[Sequence], row_header: bool = True,
                cell_ids: bool = False) -> html.Div:
    """A table (``id=ident``) and its "Download CSV" button. The first column holds row titles when
    ``row_header``; numbers are right-aligned, text left-aligned. ``cell_ids`` gives each body cell the
    id ``cell-<row key>-<column index>`` (``rows`` then start with the row key, not shown)."""
    keys = [r[0] for r in rows] if cell_ids else [None] * len(rows)
    shown_rows = [list(r[1:]) if cell_ids else list(r) for r in rows]
    numeric = [sum(_is_number(str(r[j])) for r in shown_rows) * 2 > len(shown_rows) if shown_rows and j < len(shown_rows[0])
               else False for j in range(len(header))]
    head = html.Thead(html.Tr([html.Th(h, className="number" if numeric[j] and j else "text") for j, h in enumerate(header)]))
    body = []
    for key, row in zip(keys, shown_rows, strict=True):
        cells = []
        for j, value in enumerate(row):
            text = str(value)
            kind = "text" if not _is_number(text) else "number"
            props = {"className": kind}
            if key is not None and j:
                props["id"] = f"cell-{key}-{j - 1}"
            cells.append(html.Th(text, **props) if j == 0 and row_header else html.Td(text, **props))
        body.append(html.Tr(cells))
    return html.Div(className="table-block", children=[
        html.Div(html.Table([head, html.Tbody(body)], className="results", id=ident), className="table-box"),
        html.Button("Download CSV", id={"type": "csv-button", "name": ident}, className="small-button"),
        dcc.Store(id={"type": "csv-data", "name": ident}, data={"header": list(header), "rows": shown_rows}),
        dcc.Download(id={"type": "csv-file", "name": ident}),
    ])


def csv_text(data: Mapping) -> str:
    """The CSV of a table block's data, escaped (:func:`tco.foundation.safe_csv.to_csv`)."""
    import pandas as pd

    header = [str(h) for h in data.get("header", [])]
    rows = [[str(c) for c in r] for r in data.get("rows", [])][:10_000]
    width = len(header)
    frame = pd.DataFrame([(r + [""] * width)[:width] for r in rows], columns=header or None)
    out = io.StringIO()
    to_csv(frame, out, index=False)
    return out.getvalue()


def csv_download(data: Mapping, ident) -> dict:
    """The download of a table block's CSV, named after the table."""
    name = ident.get("name", "table") if isinstance(ident, Mapping) else "table"
    return {"content": csv_text(data or {}), "filename": f"{slug(str(name), 'table')}.csv", "type": "text/csv"}


def records_table(records: Iterable[Mapping], columns: list[Column], ident: str) -> html.Div:
    """One row per record, one column per entry of ``columns``."""
    return table_block(ident, [title for title, *_ in columns],
                       [[cell(r.get(key), fmt, scale) for _title, key, fmt, scale in columns] for r in records],
                       row_header=False)


def pairs_table(record: Mapping, rows: list[Column], ident: str) -> html.Div:
    """One row per entry of ``rows``: its title beside the record's value."""
    return table_block(ident, ["", "value"], [[title, cell(record.get(key), fmt, scale)] for title, key, fmt, scale in rows])


def versus_table(table, baseline: str, rows, ident: str = "challengers-table") -> html.Div | html.P:
    """Each challenger (a column) against ``baseline``: one row per ``(key, title, format, scale)`` the table has."""
    if table.empty:
        return html.P("The scenario has no option besides the baseline.")
    header = ["", *(f"{n} vs {baseline}" for n in table.index)]
    body = [[title, *(number(table.loc[n, key], fmt, scale) for n in table.index)]
            for key, title, fmt, scale in rows if key in table]
    return table_block(ident, header, body)


def scenario_download(scenario) -> dict:
    """The scenario file of ``scenario`` (its options as built, its edits under ``set:``) as a YAML download named after
    it (:meth:`tco.inputs.scenario.ScenarioEdits.to_yaml`: ``tco compare FILE`` reads it)."""
    return {"content": scenario.to_yaml(), "filename": f"{slug(scenario.name)}-edited.yaml", "type": "text/yaml"}
