"""Chart conventions shared by every page: palette, layout, units in titles and hovers.

Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design", jfly.iam.u-tokyo.ac.jp/color),
distinguishable under the common colour-vision deficiencies.
"""

from __future__ import annotations

import plotly.graph_objects as go
from dash import dcc, html

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")

def graph_config(name: str) -> dict:
    """Plotly modebar: PNG download named after the chart; no logo, no cloud upload (offline)."""
    return {"displaylogo": False, "showSendToCloud": False, "showEditInChartStudio": False,
            "modeBarButtonsToRemove": ["sendChartToCloud", "lasso2d", "select2d"],
            "toImageButtonOptions": {"format": "png", "filename": name, "scale": 2}}


def styled(fig: go.Figure, title: str, x_title: str, y_title: str) -> go.Figure:
    """``fig`` with the app's look: title, axis titles (with units), palette, white background."""
    fig.update_layout(title={"text": title, "x": 0.01, "font": {"size": 15}}, template="plotly_white",
                      colorway=list(OKABE_ITO), margin={"l": 70, "r": 20, "t": 50, "b": 60},
                      legend={"orientation": "h", "y": -0.2}, font={"family": "system-ui, sans-serif", "size": 12},
                      hoverlabel={"namelength": -1})
    fig.update_xaxes(title_text=x_title)
    fig.update_yaxes(title_text=y_title)
    return fig


def restyled(fig: go.Figure) -> go.Figure:
    """A figure built by an engine module (e.g. ``tco.dynamics.figures``) with the app's look, its titles kept."""
    return styled(fig, fig.layout.title.text, fig.layout.xaxis.title.text, fig.layout.yaxis.title.text)


def message_figure(text: str) -> go.Figure:
    """An empty chart that says why there is nothing to draw."""
    fig = go.Figure()
    fig.add_annotation(text=text, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper", font={"size": 14})
    fig.update_layout(template="plotly_white", xaxis={"visible": False}, yaxis={"visible": False}, height=300)
    return fig


def chart(name: str, height: int = 420) -> html.Div:
    """A graph with the PNG modebar button and an HTML download button (see :func:`figure_html`)."""
    return html.Div(className="chart", id=f"{name}-box", children=[
        dcc.Graph(id={"type": "chart", "name": name}, config=graph_config(name), style={"height": f"{height}px"},
                  figure=message_figure("computing...")),
        html.Button("Download HTML", id={"type": "chart-html", "name": name}, className="small-button"),
        dcc.Download(id={"type": "chart-file", "name": name}),
    ])


def chart_id(name: str) -> dict:
    return {"type": "chart", "name": name}


def figure_html(figure: dict) -> str:
    """A self-contained HTML file of a figure (plotly.js inlined: opens offline)."""
    return go.Figure(figure).to_html(include_plotlyjs=True, full_html=True)
