"""Cases: name the current view and keep it in this browser tab; put two cases side by side with their deltas.

A case is the app's state (scenario, edits, an uploaded file): saved in the browser's session
storage (``dcc.Store(storage_type="session")``), never on the server, gone when the tab closes
(the shared link and the YAML download keep a case for longer). The comparison shows each
option's cost, devices and latency in case A and case B with the difference, both verdicts,
and every input whose value differs.
"""

from __future__ import annotations

from dash import Input, Output, State, dcc, html, no_update

from tco.foundation.errors import InputError
from tco.foundation.formatting import quantity, sig
from tco.foundation.labels import param_label
from tco.foundation.plain_values import scalar
from tco.present.comparison import compare

from ..context import AppContext, error_list, view_state
from ..tables import table_block

ID = "cases"
LABEL = "Cases"
CURRENT = "(the current view)"
#: most cases a browser tab keeps
MAX_CASES = 20
#: the outputs compared per option: (title, attribute of the option's result, unit)
COMPARED = (("cost, USD per million output tokens", "lcot_usd_per_mtok", "USD"), ("devices (fleet)", "devices", ""),
            ("time to first token", "ttft_s", "s"), ("time per output token", "tpot_s", "s"),
            ("present value of costs", "pv_cost_usd", "USD"))


def layout(ctx: AppContext):
    return html.Div([
        html.P("Save the current view (scenario and edits) under a name, then put two cases side by side. Cases live in "
               "this browser tab only; the address bar and the YAML download keep a case for longer.", className="hint"),
        html.Div(className="controls", children=[
            html.Div(className="control", children=[html.Label("case name", htmlFor="case-name"),
                                                    dcc.Input(id="case-name", type="text", placeholder="e.g. WACC 12 %",
                                                              maxLength=60, style={"width": "260px"})]),
            html.Button("Save the current view as a case", id="case-save"),
            html.Button("Delete case A", id="case-delete"),
        ]),
        html.Div(id="case-message", className="hint"),
        html.Div(className="controls", children=[
            html.Div(className="control", children=[html.Label("case A", htmlFor="case-a"),
                                                    dcc.Dropdown(id="case-a", clearable=False, style={"width": "320px"})]),
            html.Div(className="control", children=[html.Label("case B", htmlFor="case-b"),
                                                    dcc.Dropdown(id="case-b", clearable=False, style={"width": "320px"})]),
        ]),
        html.Div(id="cases-view"),
    ])


def case_states(cases: dict | None, state: dict | None) -> dict[str, dict]:
    """Every case by name, the current view first."""
    return {CURRENT: state or {}, **{k: v for k, v in (cases or {}).items() if isinstance(v, dict)}}


def saved_case(state: dict | None, default: str) -> dict:
    """The case a save keeps: the state's scenario, edits and upload. A save made before the
    page's state has arrived (an empty state: the page shows the default scenario) keeps the
    default scenario, not a case without one."""
    state = state or {}
    return {"scenario": state.get("scenario") or default,
            **{k: state.get(k) for k in ("set", "upload", "upload_name")}}


def _value(result, option: str, attr: str):
    r = result.results.get(option)
    return None if r is None else scalar(getattr(r, attr))


def _delta(a, b, unit: str) -> tuple[str, str]:
    if a is None or b is None:
        return "—", "—"
    diff = b - a
    if diff == 0:
        return "0", "0%"
    share = diff / a if a else float("nan")
    text = quantity(diff, unit, 3) if unit else sig(diff, 3)
    return ("+" if diff > 0 else "") + text, ("+" if share > 0 else "") + f"{sig(100 * share, 3)}%" if share == share else "—"


def _shown(value, unit: str) -> str:
    return "—" if value is None else (quantity(value, unit, 4) if unit else sig(value, 4))


def cases_view(scenario_a, scenario_b, name_a: str, name_b: str):
    """Case A beside case B: per option and output, A, B, B - A and (B - A) / A; the two verdicts; the inputs that differ."""
    if "training" in (getattr(scenario_a, "kind", "inference"), getattr(scenario_b, "kind", "inference")):
        return html.P("Cases compare serving (inference) scenarios; a training run's cases differ on the Compare tab "
                      "(cost per run, time to train) and in the workbook.")
    a, b = compare(scenario_a, with_flips=False), compare(scenario_b, with_flips=False)
    options = list(dict.fromkeys([*a.results, *b.results]))
    rows = []
    for option in options:
        for title, attr, unit in COMPARED:
            va, vb = _value(a, option, attr), _value(b, option, attr)
            d, share = _delta(va, vb, unit)
            rows.append([f"{option}: {title}", _shown(va, unit), _shown(vb, unit), d, share])
    pa, pb = scenario_a.params, scenario_b.params
    changed = [[param_label(n), n, quantity(pa[n].value, pa[n].unit, 4) if n in pa else "—",
                quantity(pb[n].value, pb[n].unit, 4) if n in pb else "—"]
               for n in dict.fromkeys([*pa, *pb]) if (n in pa) != (n in pb) or (n in pa and pa[n].value != pb[n].value)]
    return html.Div([
        html.H3("Verdicts"),
        html.Dl(className="verdicts", children=[
            html.Dt(f"A: {name_a} ({scenario_a.name})"), html.Dd(a.decision.headline, id="case-a-verdict"),
            html.Dt(f"B: {name_b} ({scenario_b.name})"), html.Dd(b.decision.headline, id="case-b-verdict")]),
        html.H3("Side by side"),
        table_block("cases-table", ["option: output", f"A: {name_a}", f"B: {name_b}", "B - A", "(B - A) / A"], rows),
        html.H3(f"Inputs that differ ({len(changed)})"),
        table_block("cases-inputs", ["input", "parameter name", f"A: {name_a}", f"B: {name_b}"], changed)
        if changed else html.P("The two cases have the same inputs."),
    ])


def register(app, ctx: AppContext) -> None:
    @app.callback(Output("cases", "data"), Output("case-message", "children"),
                  Output("case-a", "value", allow_duplicate=True), Input("case-save", "n_clicks"),
                  Input("case-delete", "n_clicks"), State("case-name", "value"), State("case-a", "value"),
                  State("state", "data"), State("cases", "data"), prevent_initial_call=True)
    def save(_save, _delete, name, selected, state, cases):
        from dash import ctx as trigger

        cases = dict(cases or {})
        if trigger.triggered_id == "case-delete":
            if selected in cases:
                del cases[selected]
                return cases, f"Deleted case '{selected}'.", CURRENT
            return no_update, "Pick a saved case as case A to delete it.", no_update
        name = (name or "").strip()[:60] or f"case {len(cases) + 1}"
        if name == CURRENT:
            return no_update, "Pick another name.", no_update
        if name not in cases and len(cases) >= MAX_CASES:
            return no_update, f"This tab keeps {MAX_CASES} cases at most: delete one first.", no_update
        cases[name] = case = saved_case(state, ctx.default)
        return cases, f"Saved '{name}' ({case['scenario']}, {len(case['set'] or {})} edits) as case A.", name

    @app.callback(Output("case-a", "options"), Output("case-a", "value"), Output("case-b", "options"),
                  Output("case-b", "value"), Input("cases", "data"), State("case-a", "value"), State("case-b", "value"))
    def choices(cases, a, b):
        names = list(case_states(cases, None))
        options = [{"label": n, "value": n} for n in names]
        a = a if a in names else (names[1] if len(names) > 1 else CURRENT)
        b = b if b in names else CURRENT
        return options, a, options, b

    @app.callback(Output("cases-view", "children"), Input("case-a", "value"), Input("case-b", "value"),
                  Input("cases", "data"), view_state(ID), prevent_initial_call=True)
    def view(a, b, cases, state):
        states = case_states(cases, state)
        if a not in states or b not in states:
            return html.P("Save a case, then pick two.")
        try:
            return cases_view(ctx.scenario(states[a]), ctx.scenario(states[b]), a, b)
        except InputError as exc:
            return error_list(exc)
