"""Form controls every page uses: a labelled dropdown or number field, and keeping a choice across scenarios."""

from __future__ import annotations

from dash import dcc, html

from tco.foundation.labels import param_label


def dropdown(ident: str, label: str, width: str = "420px", **kw) -> html.Div:
    return html.Div(className="control", children=[html.Label(label, htmlFor=ident),
                                                   dcc.Dropdown(id=ident, clearable=False, style={"width": width}, **kw)])


def number(ident: str, label: str, width: str = "150px", **kw) -> html.Div:
    """A labelled text field read by :func:`tco.foundation.user_numbers.read_number` on the server ('2,000', '20k', '9%')."""
    return html.Div(className="control", children=[html.Label(label, htmlFor=ident),
                                                   dcc.Input(id=ident, type="text", debounce=True, style={"width": width},
                                                             **kw)])


def keep(value, options: list[dict], fallback_index: int = 0):
    """``value`` if it is still among ``options``, else the option at ``fallback_index``."""
    values = [o["value"] for o in options]
    if value in values:
        return value
    return values[min(fallback_index, len(values) - 1)] if values else None


def param_options(scenario, ranged_only: bool = False) -> list[dict]:
    """Parameters as dropdown entries: the human label with the unit, searchable by the dotted name too."""
    return [{"label": f"{param_label(p.name)} [{p.unit}]", "value": p.name, "search": p.name}
            for p in scenario.params.values_list() if p.uncertain or not ranged_only]
