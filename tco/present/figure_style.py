"""The look of every plotly figure tco draws (studies, fleet analyses, the app): one palette, one layout.

Okabe-Ito palette (Okabe & Ito 2008, "Color Universal Design", jfly.iam.u-tokyo.ac.jp/color),
distinguishable under the common colour-vision deficiencies. The white look is set
property by property on plotly's empty template ("none"): the built-in "plotly_white"
template costs ~25 ms per figure to copy, which the app pays on every edit.

The title is left-aligned at the top and the legend on the right (plotly's place: it never
covers an axis title). The app moves the title out of the figure and the legend into a row
above the plot (``tco_app.charts``).
"""

from __future__ import annotations

import plotly.graph_objects as go

#: Okabe-Ito colours: blue, orange, bluish green, reddish purple, sky blue, vermillion, yellow, black
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: a credit (residual value) is grey in every chart
CREDIT_GREY = "#999999"
#: one colour per cost line, the same in every chart that stacks them (Compare's present values, Lifecycle's timeline,
#: the training run's costs): the eight Okabe-Ito colours, then two of Paul Tol's "muted" scheme, also told apart under
#: the common colour-vision deficiencies (wine and olive; Tol 2021, "Colour Schemes", SRON/EPS/TN/09-002,
#: personal.sron.nl/~pault): eleven lines, so ``PALETTE[i % 8]`` gave the workload shift the capex's blue and the
#: bridge the NRE's orange
COST_LINE_COLOURS = {"capex_usd": PALETTE[0], "nre_usd": PALETTE[1], "energy_usd": PALETTE[2], "facility_usd": PALETTE[3],
                     "maintenance_usd": PALETTE[4], "links_usd": PALETTE[5], "reauthoring_usd": PALETTE[6],
                     "porting_usd": PALETTE[7], "workload_shift_usd": "#882255", "bridge_usd": "#999933",
                     "rental_usd": "#44AA99",
                     "residual_usd": CREDIT_GREY}
GRID = "#E5EAF0"
AXIS = {"gridcolor": GRID, "zerolinecolor": "#C8D0DA", "linecolor": "#C8D0DA", "automargin": True, "title": {"standoff": 8}}


def style(fig: go.Figure, title: str | None = None, x_title: str | None = None, y_title: str | None = None,
          height: int | None = None) -> go.Figure:
    """``fig`` with tco's look: title, axis titles (with units), palette, white background."""
    fig.update_layout(template="none", paper_bgcolor="white", plot_bgcolor="white", colorway=list(PALETTE),
                      font={"family": "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", "size": 12, "color": "#1d2733"},
                      margin={"l": 10, "r": 10, "t": 40, "b": 10, "autoexpand": True},
                      hoverlabel={"namelength": -1})
    if title is not None:
        fig.update_layout(title={"text": title, "x": 0, "xref": "paper", "xanchor": "left", "y": 1, "yref": "container",
                                 "yanchor": "top", "pad": {"t": 8}, "font": {"size": 14}, "automargin": True})
    if height is not None:
        fig.update_layout(height=height)
    fig.update_xaxes(**AXIS)
    fig.update_yaxes(**AXIS)
    if x_title is not None:
        fig.update_xaxes(title_text=x_title)
    if y_title is not None:
        fig.update_yaxes(title_text=y_title)
    return fig
