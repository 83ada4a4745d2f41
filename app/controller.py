"""The one callback that owns a user's state: URL, scenario picker, upload, table edits, reset.

Every way of changing the scenario goes through here, so the state in the browser's
``dcc.Store``, the shareable URL, the picker and the assumptions table always agree.
"""

from __future__ import annotations

import base64

from dash import Input, Output, State, ctx, html, no_update

from tco.errors import FieldError, FieldWarning, InputError, shown_lines
from tco.params import MAX_EDITS
from tco.util import slug
from tco.yamlio import MAX_YAML_BYTES

from .context import AppContext
from .pages.assumptions import table_rows
from .state import UPLOAD, _load_upload, base_scenario, current_scenario, query_from_state, state_from_query, validated_edits


def _messages(errors: list[FieldError], warnings: list[FieldWarning] = ()):
    """Broken rules, then warnings (accepted values outside their sourced range), each as a list item."""
    if not errors and not warnings:
        return None
    return html.Div([html.Ul([html.Li(line) for line in shown_lines(errors)], className="errors") if errors else None,
                     html.Ul([html.Li(f"warning: {line}") for line in shown_lines(list(warnings))], className="warnings")
                     if warnings else None])


#: largest upload read (base64 text of a YAML file at the YAML reader's size limit)
MAX_UPLOAD_CHARS = MAX_YAML_BYTES * 4 // 3 + 1024


def update_state(trigger, search, picked, upload, upload_name, rows, state, ctx_: AppContext):
    """The new ``(state, search, picker value, table rows, edit messages, upload messages)``."""
    state = dict(state or {"scenario": ctx_.default, "upload": None, "set": {}})
    errors: list[FieldError] = []
    upload_errors: list[FieldError] = []
    raw, problems = {}, {}
    try:
        current_scenario(state, ctx_.choices)
    except InputError as exc:  # a crafted or stale state: start again from the link
        trigger, errors = None, exc.errors
    if trigger in (None, "url"):
        state, link_errors = state_from_query(search, ctx_.choices, ctx_.default)
        errors = errors + link_errors
    elif trigger == "scenario-picker" and picked and picked != state.get("scenario"):
        state = {"scenario": picked, "upload": None, "set": {}}
    elif trigger == "upload" and upload:
        name = slug(upload_name or "uploaded file", "uploaded-file")
        try:
            text = uploaded_text(upload)
            scenario = _load_upload(text)
            state = {"scenario": UPLOAD, "upload": text, "set": {}, "upload_name": name}
            upload_errors = [FieldWarning(f"{name}: {w.path}", w.value, w.message) for w in scenario.warnings]
        except InputError as exc:
            upload_errors = [FieldError(f"{name}: {e.path}", e.value, e.rule) for e in exc.errors]
    elif trigger == "reset-edits":
        state = {**state, "set": {}}
    elif trigger == "params-table" and rows:
        base = base_scenario(state, ctx_.choices)
        accepted, errors, _warnings = validated_edits(base, {r.get("name"): r.get("value") for r in rows[:MAX_EDITS]})
        kept = {e.path: state.get("set", {})[e.path] for e in errors if e.path in state.get("set", {})}
        state = {**state, "set": {**accepted, **kept}}
        raw = {e.path: e.value for e in errors}
        problems = {e.path: e.rule for e in errors}
    scenario = base_scenario(state, ctx_.choices).with_values(state["set"])
    picker = state["scenario"] if state["scenario"] != UPLOAD else no_update
    edit_warnings = [w for w in scenario.warnings if w.path in state["set"]]
    upload_messages = _messages([e for e in upload_errors if isinstance(e, FieldError)],
                                [w for w in upload_errors if isinstance(w, FieldWarning)])
    return (state, query_from_state(state), picker, table_rows(scenario, raw, problems), _messages(errors, edit_warnings),
            upload_messages)


def uploaded_text(contents: str) -> str:
    """The UTF-8 text of a ``dcc.Upload`` data URL; :class:`InputError` when too large or not text."""
    if not isinstance(contents, str) or len(contents) > MAX_UPLOAD_CHARS:
        raise InputError.one("uploaded file", f"{len(contents) if isinstance(contents, str) else 0:,} characters",
                             f"is too large: a scenario file is at most {MAX_YAML_BYTES:,} bytes")
    try:
        data = base64.b64decode(contents.split(",", 1)[-1], validate=True)
    except ValueError:
        raise InputError.one("uploaded file", None, "is not a file upload (base64 data URL)") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError.one("uploaded file", None, f"is not UTF-8 text (byte {exc.start}): is it a binary file?") from None


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
