"""The one callback that owns a user's state: URL, scenario picker, upload, table edits, reset.

Every way of changing the scenario goes through here, so the state in the browser's
``dcc.Store``, the shareable URL, the picker and the assumptions table always agree.
"""

from __future__ import annotations

import base64

from dash import Input, Output, State, ctx, html, no_update

from tco.errors import FieldError, InputError

from .context import AppContext
from .pages.assumptions import table_rows
from .state import UPLOAD, _load_upload, base_scenario, query_from_state, state_from_query, validated_edits


def _messages(errors: list[FieldError]):
    return html.Ul([html.Li(str(e)) for e in errors], className="errors") if errors else None


def update_state(trigger, search, picked, upload, upload_name, rows, state, ctx_: AppContext):
    """The new ``(state, search, picker value, table rows, edit messages, upload messages)``."""
    state = dict(state or {"scenario": ctx_.default, "upload": None, "set": {}})
    errors: list[FieldError] = []
    upload_errors: list[FieldError] = []
    raw, problems = {}, {}
    if trigger in (None, "url"):
        state, errors = state_from_query(search, ctx_.choices, ctx_.default)
    elif trigger == "scenario-picker" and picked and picked != state.get("scenario"):
        state = {"scenario": picked, "upload": None, "set": {}}
    elif trigger == "upload" and upload:
        text = base64.b64decode(upload.split(",", 1)[-1]).decode("utf-8", errors="replace")
        try:
            _load_upload(text)
            state = {"scenario": UPLOAD, "upload": text, "set": {}, "upload_name": upload_name}
        except InputError as exc:
            upload_errors = [FieldError(f"{upload_name}: {e.path}", e.value, e.rule) for e in exc.errors]
    elif trigger == "reset-edits":
        state = {**state, "set": {}}
    elif trigger == "params-table" and rows:
        base = base_scenario(state, ctx_.choices)
        accepted, errors = validated_edits(base, {r["name"]: r["value"] for r in rows})
        kept = {e.path: state.get("set", {})[e.path] for e in errors if e.path in state.get("set", {})}
        state = {**state, "set": {**accepted, **kept}}
        raw = {e.path: e.value for e in errors}
        problems = {e.path: e.rule for e in errors}
    scenario = base_scenario(state, ctx_.choices).with_values(state["set"])
    picker = state["scenario"] if state["scenario"] != UPLOAD else no_update
    return (state, query_from_state(state), picker, table_rows(scenario, raw, problems), _messages(errors),
            _messages(upload_errors))


def register(app, ctx_: AppContext) -> None:
    @app.callback(
        Output("state", "data"), Output("url", "search"), Output("scenario-picker", "value"),
        Output("params-table", "data"), Output("edit-errors", "children"), Output("upload-errors", "children"),
        Input("url", "search"), Input("scenario-picker", "value"), Input("upload", "contents"),
        Input("params-table", "data_timestamp"), Input("reset-edits", "n_clicks"),
        State("upload", "filename"), State("params-table", "data"), State("state", "data"))
    def controller(search, picked, upload, _stamp, _reset, upload_name, rows, state):
        trigger = ctx.triggered_id if ctx.triggered else None
        if state is None:
            trigger = None  # first load: the URL decides
        return update_state(trigger, search, picked, upload, upload_name, rows, state, ctx_)
