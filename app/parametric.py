"""The parametric table (SAM's parametric tab), on the Break-even & sensitivity tab: up to three inputs and the values
to try, every combination evaluated in one core call (:func:`tco.studies.parametric.parametric`), any outputs, as a
table with its CSV and a chart of the first output against the first input."""

from __future__ import annotations

import re

import numpy as np
from dash import Input, Output, State, dcc, html
from dash.exceptions import PreventUpdate

from tco.analysis.solvers import spans_decades
from tco.foundation.errors import FieldError, InputError
from tco.foundation.formatting import sig
from tco.foundation.labels import param_label
from tco.foundation.user_numbers import read_number
from tco.present import study_figures as figures
from tco.studies.parametric import MAX_AXES, MAX_POINTS, OUTPUTS, parametric

from .charts import chart, chart_id, for_app, message_figure
from .context import SCENARIO, AppContext, error_list, view_state
from .controls import keep, param_options
from .tables import cell, table_block

#: the outputs the table starts with
DEFAULT_OUTPUTS = ["lcot_usd_per_mtok", "feasible"]
#: most characters of one input's values read (a 2,000-value grid written out is well under it)
MAX_VALUES_TEXT = 40_000
#: values are separated by semicolons or spaces (a comma is a thousands separator: "2,000")
SEPARATORS = re.compile(r"[;\s]+")


def output_label(name: str) -> str:
    """An output's label with its unit (none for a yes/no flag)."""
    spec = OUTPUTS[name]
    return spec.label if spec.unit == "bool" else f"{spec.label} [{spec.display_unit or spec.unit}]"


def output_options() -> list[dict]:
    """Every output a table can show, by its label and unit."""
    return [{"label": f"{output_label(name)} ({name})", "value": name, "search": name} for name in OUTPUTS]


def section() -> html.Div:
    """The section's controls, notice, chart and table."""
    rows = [html.Div(className="controls", children=[
        html.Div(className="control", children=[
            html.Label(f"input {i + 1}", htmlFor=f"par-param-{i}"),
            dcc.Dropdown(id=f"par-param-{i}", style={"width": "380px"}, placeholder="(none)" if i else None)]),
        html.Div(className="control", children=[
            html.Label("values (separated by ; or spaces)", htmlFor=f"par-values-{i}"),
            dcc.Input(id=f"par-values-{i}", type="text", debounce=True, style={"width": "300px"})])])
        for i in range(MAX_AXES)]
    return html.Div([
        html.H3("Parametric table"),
        html.P("Up to three inputs and the values to try: every combination is evaluated, every other input at its "
               "value; the chart draws the first output against the first input.", className="hint"),
        *rows,
        html.Div(className="controls", children=[
            html.Div(className="control", children=[
                html.Label("outputs", htmlFor="par-outputs"),
                dcc.Dropdown(id="par-outputs", options=output_options(), value=DEFAULT_OUTPUTS, multi=True,
                             style={"width": "640px"})]),
            html.Button("Run the table", id="par-run", className="small-button")]),
        html.Div(id="par-notice", className="errors-box"),
        chart("parametric", "Pick inputs and their values, then run the table"),
        html.Div(id="par-table-box")])


def suggested_values(scenario, name) -> str:
    """Five values across the input's sourced range to start from (geometric where it spans decades), or "" when
    no input is picked or its range is one value."""
    if not name or name not in scenario.params:
        return ""
    p = scenario.params[name]
    if not p.low < p.high:
        return sig(p.value, 6)
    points = np.geomspace(p.low, p.high, 5) if spans_decades(p.low, p.high) else np.linspace(p.low, p.high, 5)
    if p.field.integer:
        points = np.unique(np.round(points))
    return "; ".join(sig(v, 4) for v in points)


def parse_values(scenario, name: str, text, index: int) -> list[float]:
    """The values typed for input ``index`` (``1,000; 2,000`` or ``1k 2k 4k``), each read in its field's unit."""
    field = scenario.params[name].field
    raw = str(text or "")
    if len(raw) > MAX_VALUES_TEXT:
        raise InputError.one(f"input {index + 1} values", f"{len(raw):,} characters", f"at most {MAX_VALUES_TEXT:,}")
    parts = [p for p in SEPARATORS.split(raw.strip()) if p]
    if len(parts) > MAX_POINTS:
        raise InputError.one(f"input {index + 1} values", f"{len(parts):,} values", f"at most {MAX_POINTS:,}")
    if not parts:
        raise InputError.one(f"input {index + 1} values", text, "type one or more values, separated by ; or spaces")
    return [read_number(p, field, f"input {index + 1} values") for p in parts]


def shown(output: str, value: float) -> str:
    """A table cell: yes/no for a feasibility flag, else the value in the output's format (the em dash if missing)."""
    spec = OUTPUTS[output]
    if spec.unit == "bool":
        return "yes" if value > 0 else "no"
    return cell(value, spec.fmt, spec.scale)


def parametric_view(scenario, params, texts, outputs):
    """``(notice, table, figure)`` of the inputs picked (``params``, None where a row is unused), their values
    (``texts``) and ``outputs``; a refused control is named in the notice."""
    try:
        chosen = [(i, name) for i, name in enumerate(params) if name]
        if not chosen:
            raise InputError([FieldError("input 1", None, "pick at least one input")])
        axes = [(name, parse_values(scenario, name, texts[i], i)) for i, name in chosen]
        frame = parametric(scenario, axes, list(outputs or []))
    except InputError as exc:
        return error_list(exc), None, message_figure("not run: see the message above")
    inputs = [name for name, _ in axes]
    header = [f"{param_label(n)} [{scenario.params[n].unit}]" for n in inputs] + ["option"] + [
        output_label(o) for o in outputs]
    rows = [[f"{row[n]:,.6g}" for n in inputs] + [row["option"]] + [shown(o, row[o]) for o in outputs]
            for row in frame.to_dict(orient="records")]
    figure = figures.parametric_figure(frame, inputs, outputs[0], output_label(outputs[0]))
    return None, table_block("parametric-table", header, rows, row_header=False), for_app(figure)


def register(app, ctx: AppContext) -> None:
    @app.callback(*[Output(f"par-param-{i}", name) for i in range(MAX_AXES) for name in ("options", "value")],
                  SCENARIO, State("state", "data"), *[State(f"par-param-{i}", "value") for i in range(MAX_AXES)],
                  prevent_initial_call=True)
    def choices(_key, state, *current):
        options = param_options(ctx.scenario(state))
        offered = {o["value"] for o in options}
        return [x for i, value in enumerate(current)
                for x in (options, keep(value, options) if not i else value if value in offered else None)]

    for i in range(MAX_AXES):
        @app.callback(Output(f"par-values-{i}", "value"), Input(f"par-param-{i}", "value"), State("state", "data"),
                      prevent_initial_call=True)
        def suggested(name, state):
            return suggested_values(ctx.scenario(state), name)

    @app.callback(Output("par-notice", "children"), Output("par-table-box", "children"),
                  Output(chart_id("parametric"), "figure"), Input("par-run", "n_clicks"), view_state("sensitivity"),
                  *[State(f"par-param-{i}", "value") for i in range(MAX_AXES)],
                  *[State(f"par-values-{i}", "value") for i in range(MAX_AXES)], State("par-outputs", "value"),
                  prevent_initial_call=True)
    def run(clicks, state, *controls):
        if not clicks:  # the table runs when asked, then again on each edit of the scenario
            raise PreventUpdate
        params, texts, outputs = controls[:MAX_AXES], controls[MAX_AXES:2 * MAX_AXES], controls[-1]
        return parametric_view(ctx.scenario(state), params, texts, outputs)
