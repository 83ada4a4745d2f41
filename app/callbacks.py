"""Callback patterns several pages register: a dropdown refilled when the scenario changes, a button that opens
a tab, and the controls of a long computation run in the background."""

from __future__ import annotations

from collections.abc import Callable

from dash import ALL, Input, Output, State, ctx
from dash.exceptions import PreventUpdate

from .context import SCENARIO, AppContext
from .controls import keep


def refill_on_scenario(app, context: AppContext, dropdown: str, choices: Callable[[object], list[dict]]) -> None:
    """Refill ``dropdown``'s options with ``choices(scenario)`` whenever the scenario changes, keeping the user's
    pick while it is still offered (else the first choice)."""

    @app.callback(Output(dropdown, "options"), Output(dropdown, "value"), SCENARIO, State("state", "data"),
                  State(dropdown, "value"), prevent_initial_call=True)
    def refill(_key, state, current):
        options = choices(context.scenario(state))
        return options, keep(current, options)


def open_tab_on_click(app, tabs: str, button_type: str, key: str, other: str) -> None:
    """A click on a button with id ``{"type": button_type, key: <tab>, other: ...}`` shows tab ``<tab>`` of ``tabs``."""

    @app.callback(Output(tabs, "value"), Input({"type": button_type, key: ALL, other: ALL}, "n_clicks"),
                  prevent_initial_call=True)
    def open_tab(clicks):
        if not ctx.triggered_id or not any(clicks):
            raise PreventUpdate
        return ctx.triggered_id[key]


def background_run(context: AppContext, prefix: str, status: str) -> dict:
    """Keyword arguments of a callback run in the background from button ``<prefix>-run``: the button is disabled
    and ``<prefix>-cancel`` enabled while it runs, ``<prefix>-status`` says ``status``, ``<prefix>-progress`` shows
    its progress, and ``<prefix>-cancel`` stops it."""
    return {"background": True, "manager": context.background_manager, "prevent_initial_call": True,
            "running": [(Output(f"{prefix}-run", "disabled"), True, False),
                        (Output(f"{prefix}-cancel", "disabled"), False, True),
                        (Output(f"{prefix}-status", "children"), status, "")],
            "cancel": [Input(f"{prefix}-cancel", "n_clicks")], "progress": Output(f"{prefix}-progress", "children")}
