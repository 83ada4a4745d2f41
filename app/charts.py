"""Charts as the app shows them: the title above the graph (in the page), the legend in a row above the plot.

A figure's legend and its title both want the space above the plot, and plotly reserves the
larger of the two, not their sum: at 1024 px a two-row legend then covers the title. So the
app keeps the title out of the figure (``layout.meta.title``, shown as a heading by a
clientside callback and put back in the HTML download) and the legend in a row above the plot,
where nothing else goes. Every engine figure (``tco.present.study_figures``, ``tco.present.fleet_figures``)
passes through :func:`for_app`; look and palette are :mod:`tco.present.figure_style`'s.
"""

from __future__ import annotations

import plotly.graph_objects as go
from dash import ClientsideFunction, dcc, html

from tco.present.figure_style import COST_LINE_COLOURS, PALETTE, style

__all__ = ["COST_LINE_COLOURS", "PALETTE", "chart", "chart_id", "figure_html", "for_app", "message_figure", "styled"]

#: the height of a chart whose figure does not set one [px]: room for an axis title with its unit
HEIGHT = 420
#: the legend of every app chart: a row above the plot, left-aligned, at the top of the figure's own box (``yref``
#: container; the plot's top margin grows to hold it). Anchored above the plotting area instead (``yref`` paper, y 1.02,
#: the usual recipe), plotly left it where the plot's top had been when the window was resized: on the split fleet's
#: KV wall, narrowed from 1440 to 1024 px, its two rows became one and the row sat 29 px down, over the first
#: break-even label (found by the layout audit, which now widens and narrows every view)
LEGEND = {"orientation": "h", "yref": "container", "yanchor": "top", "y": 1, "xanchor": "left", "x": 0,
          "bgcolor": "rgba(255,255,255,0)", "font": {"size": 11}}


def graph_config(name: str) -> dict:
    """Plotly modebar: PNG download named after the chart; no logo, no cloud upload (offline)."""
    return {"displaylogo": False, "showSendToCloud": False, "showEditInChartStudio": False,
            "modeBarButtonsToRemove": ["sendChartToCloud", "lasso2d", "select2d"],
            "toImageButtonOptions": {"format": "png", "filename": name, "scale": 2}}


def for_app(fig: go.Figure) -> go.Figure:
    """An engine figure as the app shows it: title moved to ``layout.meta`` (its lines in one), legend in a row above
    the plot (in the figure's own legend colours where it sets them: the map's dark legend, where its white keys
    show)."""
    title = fig.layout.title.text if fig.layout.title and fig.layout.title.text else ""
    title = title.replace("<br>", "; ")  # a second title line follows the first: the app's heading wraps itself
    own = fig.layout.legend
    colours = {"bgcolor": own.bgcolor} if own.bgcolor else {}
    font = LEGEND["font"] | ({"color": own.font.color} if own.font and own.font.color else {})
    fig.update_layout(title=None, meta={"title": title}, legend=LEGEND | colours | {"font": font},
                      margin={"t": 10, "l": 10, "r": 10, "b": 10})
    if fig.layout.height is None:
        fig.update_layout(height=HEIGHT)
    return fig


def styled(fig: go.Figure, title: str, x_title: str, y_title: str, height: int | None = None) -> go.Figure:
    """``fig`` with the app's look (:func:`tco.present.figure_style.style`, then :func:`for_app`)."""
    return for_app(style(fig, title, x_title, y_title, height))


def message_figure(text: str, height: int = 160) -> dict:
    """An empty chart that says why there is nothing to draw (a plain dict: no plotly validation)."""
    return {"data": [], "layout": {"height": height, "template": "none", "xaxis": {"visible": False},
                                   "yaxis": {"visible": False}, "margin": {"t": 10, "b": 10, "l": 10, "r": 10},
                                   "annotations": [{"text": text, "showarrow": False, "x": 0.5, "y": 0.5, "xref": "paper",
                                                    "yref": "paper", "font": {"size": 13, "color": "#5a6b7d"}}]}}


def chart_id(name: str) -> dict:
    return {"type": "chart", "name": name}


def chart(name: str, placeholder: str = "computing...", figure=None) -> html.Div:
    """A titled graph (the title comes from the figure's ``meta``) with the PNG modebar button and an HTML download.

    The graph's height is the figure's (``layout.height``), so the box grows with it and never
    overlaps what follows. ``figure`` (when known with the layout) is drawn at once, its title with it.
    """
    title = (figure.layout.meta or {}).get("title", "") if isinstance(figure, go.Figure) else ""
    return html.Div(className="chart", id=f"{name}-box", children=[
        html.H4(title, id={"type": "chart-title", "name": name}, className="chart-title"),
        dcc.Graph(id=chart_id(name), config=graph_config(name), figure=message_figure(placeholder) if figure is None else figure),
        html.Button("Download HTML", id={"type": "chart-html", "name": name}, className="small-button"),
        dcc.Download(id={"type": "chart-file", "name": name}),
    ])


#: the clientside callback that shows a figure's title above it
TITLE_FROM_META = ClientsideFunction(namespace="tco", function_name="chartTitle")


def figure_html(figure: dict) -> str:
    """A self-contained HTML file of a figure (plotly.js inlined: opens offline), its title put back in."""
    fig = go.Figure(figure)
    meta = figure.get("layout", {}).get("meta") or {}
    if isinstance(meta, dict) and meta.get("title"):
        fig.update_layout(title={"text": meta["title"], "x": 0.01}, margin={"t": 60},  # legend on the right: no overlap
                          legend={"orientation": "v", "x": 1.02, "xanchor": "left", "y": 1, "yanchor": "top"})
    return fig.to_html(include_plotlyjs=True, full_html=True)
