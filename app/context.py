"""What every page needs from the app it is built into: scenario choices, the default
scenario, the background-callback manager, and helpers to answer bad input politely."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dash import Input, html
from dash.exceptions import PreventUpdate

from tco.foundation.errors import InputError, shown_lines
from tco.foundation.user_numbers import read_number

from .state import current_scenario


@dataclass(frozen=True)
class AppContext:
    """Server-side configuration shared by all users (never per-user state)."""

    choices: dict[str, str]
    default: str
    background_manager: Any = None

    def scenario(self, state):
        """The current scenario of a user's ``state``."""
        return current_scenario(state or {"scenario": self.default}, self.choices)



def error_list(exc: InputError) -> html.Ul:
    """Each broken rule as ``path: got value; rule`` (the first few, then how many more)."""
    return html.Ul([html.Li(line) for line in shown_lines(exc.errors)], className="errors")


def bounded_int(raw, label: str, low: int, high: int) -> int:
    """A whole number from a control, checked on the server (a request can carry anything):
    :class:`InputError` naming ``label`` and the bounds otherwise."""
    rule = f"must be a whole number from {low:,} to {high:,}"
    try:
        value = read_number(raw, None, label)
    except InputError:
        raise InputError.one(label, raw, rule) from None
    if value != int(value) or not low <= value <= high:
        raise InputError.one(label, raw, rule)
    return int(value)


#: the tab bar
TAB = Input("tabs", "value")


def view_state(page_id: str) -> Input:
    """A page's copy of the user's state: updated only while the page is shown, and only when the state changed
    since the page last saw it (a clientside callback, :mod:`tco_app.main`), so an edit recomputes only the page in
    view, and going back to a page whose state did not change recomputes nothing."""
    return Input(f"state-{page_id}", "data")
#: the scenario apart from its edits: lists of options and parameters follow it (:func:`tco_app.controller.scenario_key`)
SCENARIO = Input("scenario-key", "data")


def shown(tab: str, page_id: str) -> None:
    """Skip a view while its tab is hidden (it is computed when the tab is opened), so a scenario
    edit recomputes only what the user is looking at."""
    if tab != page_id:
        raise PreventUpdate
