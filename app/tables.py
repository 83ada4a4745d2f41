"""Result tables shared by pages: numbers formatted with their unit in the row or column title."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from dash import html

from tco.report import Column, cell

__all__ = ["Column", "cell", "number", "pairs_table", "records_table", "versus_table"]


def number(value, fmt: str, scale: float = 1.0) -> str:
    """``value * scale`` in ``fmt``; the em dash for a missing or non-finite value (:func:`tco.report.cell`)."""
    return cell(value, fmt, scale)


def records_table(records: Iterable[Mapping], columns: list[Column], ident: str) -> html.Table:
    """One row per record, one column per entry of ``columns``."""
    align = ["number" if fmt else "text" for _, _, fmt, _ in columns]
    head = html.Tr([html.Th(title, className=a) for (title, *_), a in zip(columns, align, strict=True)])
    body = [html.Tr([html.Td(cell(r.get(key), fmt, scale), className=a)
                     for (_, key, fmt, scale), a in zip(columns, align, strict=True)]) for r in records]
    return html.Table([html.Thead(head), html.Tbody(body)], className="results", id=ident)


def pairs_table(record: Mapping, rows: list[Column], ident: str) -> html.Table:
    """One row per entry of ``rows``: its title beside the record's value."""
    body = [html.Tr([html.Th(title), html.Td(cell(record.get(key), fmt, scale))]) for title, key, fmt, scale in rows]
    return html.Table(html.Tbody(body), className="results", id=ident)


def versus_table(table, baseline: str, rows, ident: str = "challengers-table") -> html.Table | html.P:
    """Each challenger (a column) against ``baseline``: one row per ``(key, title, format, scale)`` the table has."""
    if table.empty:
        return html.P("The scenario has no option besides the baseline.")
    head = html.Tr([html.Th("")] + [html.Th(f"{n} vs {baseline}") for n in table.index])
    body = [html.Tr([html.Th(title)] + [html.Td(number(table.loc[n, key], fmt, scale)) for n in table.index])
            for key, title, fmt, scale in rows if key in table]
    return html.Table([html.Thead(head), html.Tbody(body)], className="results", id=ident)
