"""Decide: the checklist of the source talks, step by step, each with the model's answer for the scenario.

Name the workload -> name the objective -> find the bottleneck -> measure the distribution ->
price the split -> test change. Each step states what the model says for the current scenario
(with its edits) and links to the tab that goes deeper; the terms are in the glossary at the foot of every page
(:mod:`tco_app.glossary`). The answers are :mod:`tco.present.decide`'s (``tco decide`` prints the same); this page
draws them.
"""

from __future__ import annotations

from dash import Output, html

from tco.present import decide

from ..callbacks import open_tab_on_click
from ..context import AppContext, view_state

ID = "decide"
LABEL = "Decide"

TAB_LABELS = {"assumptions": "Assumptions", "compare": "Compare", "uncertainty": "Uncertainty", "fleet": "Fleet",
              "sensitivity": "Break-even & sensitivity", "lifecycle": "Lifecycle"}


def layout(ctx_: AppContext):
    return html.Div([
        html.P("The checklist of the source talks, answered by the model for the scenario above (with its edits). "
               "Each step links to the tab that goes deeper.", className="hint"),
        html.Ol(id="decide-steps", className="steps", children=[
            html.Li(className="step", children=[
                html.H3(title), html.Div(id=f"decide-{key}", className="step-answer"),
                html.Button(f"Go deeper: {TAB_LABELS[tab]}", id={"type": "goto", "tab": tab, "step": key},
                            className="small-button")])
            for key, title, tab in decide.STEPS]),
        html.P(["Every term is defined in the ", html.A("glossary", href="#glossary"), " at the foot of the page."],
               className="hint"),
    ])


def drawn(blocks) -> list:
    """An answer's paragraphs and bullet lists as HTML (the verdict's headline in its own style)."""
    return [html.P(b.text, className="verdict-inline") if isinstance(b, decide.Paragraph) and b.verdict
            else html.P(b.text) if isinstance(b, decide.Paragraph) else html.Ul([html.Li(i) for i in b.items])
            for b in blocks]


def bottleneck_answer(scenario, result) -> list:
    """Step 3 drawn (:func:`tco.present.decide.bottleneck_answer`)."""
    return drawn(decide.bottleneck_answer(scenario, result))


def change_answer(scenario, result) -> list:
    """Step 6 drawn (:func:`tco.present.decide.change_answer`)."""
    return drawn(decide.change_answer(scenario, result))


def decide_view(scenario):
    """The six answers for one scenario (the callback body; benchmarked)."""
    return [drawn(step.blocks) for step in decide.checklist(scenario)]


def register(app, ctx_: AppContext) -> None:
    @app.callback(*[Output(f"decide-{key}", "children") for key, _, _ in decide.STEPS], view_state(ID),
                  prevent_initial_call=True)
    def steps(state):
        return decide_view(ctx_.scenario(state))

    open_tab_on_click(app, "tabs", "goto", "tab", "step")
