"""Fleet: the extension point for fleet-dynamics views (issue #4).

KV transfer wall, stranded capacity over a quarter and the labelled Pareto frontier
plug in here once ``tco.fleet`` lands; until then the page says what will appear.
"""

from __future__ import annotations

from dash import html

from ..context import AppContext, optional_module

ID = "fleet"
LABEL = "Fleet"

PLANNED = ["KV transfer wall: the prompt length (or link bandwidth) at which moving the KV cache eats the decode gain",
           "stranded capacity: specialized device-hours idle while the other pool's queue waits, hourly over a quarter",
           "Pareto frontier of cost vs latency, labelled by phase placement and bytes that did not fit"]


def layout(ctx: AppContext):
    fleet = optional_module("tco.fleet")
    status = ("tco.fleet is installed but its views are not wired into the app yet." if fleet is not None
              else "These views appear here when the fleet-dynamics module (tco.fleet, issue #4) lands:")
    return html.Div(id="fleet-placeholder", children=[html.P(status, className="hint"),
                                                      html.Ul([html.Li(x) for x in PLANNED])])


def register(app, ctx: AppContext) -> None:
    """Nothing to register until the fleet views exist."""
