"""What every page needs from the app it is built into: scenario choices, the default
scenario, the background-callback manager, and helpers to answer bad input politely."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dash import Input, html
from dash.exceptions import PreventUpdate

from tco.errors import InputError

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
    """Each broken rule as ``path: got value; rule``."""
    return html.Ul([html.Li(str(e)) for e in exc.errors], className="errors")


#: the tab bar: a page's views depend on it so that they are computed while the page is shown
TAB = Input("tabs", "value")


def shown(tab: str, page_id: str) -> None:
    """Skip a view while its tab is hidden (it is computed when the tab is opened), so a scenario
    edit recomputes only what the user is looking at."""
    if tab != page_id:
        raise PreventUpdate
