"""What every page needs from the app it is built into: scenario choices, the default
scenario, the background-callback manager, and helpers to answer bad input politely."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from dash import html

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


def optional_module(name: str):
    """An engine module that other issues are adding (``tco.studies``, ``tco.fleet``,
    ``tco.export``), or None while it has not landed."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            return None
        raise


def error_list(exc: InputError) -> html.Ul:
    """Each broken rule as ``path: got value; rule``."""
    return html.Ul([html.Li(str(e)) for e in exc.errors], className="errors")
