"""The plotly.js the app's charts load: the cartesian bundle (1.4 MB) instead of the full one (4.8 MB).

Dash's graphs load plotly.js on first use from ``_dash-component-suites/plotly/package_data/
plotly.min.js``; parsing the full bundle blocks the browser for ~1.5 s on a busy machine, the
time the first verdict waits. Every chart of the app is cartesian (bar, scatter, histogram,
heatmap, contour), so the app answers that address with plotly.js's official cartesian
distribution (npm ``plotly.js-cartesian-dist-min`` 3.7.0, MIT licence, ``vendor/``): the same
API (``Plotly.react``), a third of the bytes. Downloaded HTML charts still inline the full
bundle of the plotly Python package (they open offline anywhere).
"""

from __future__ import annotations

from pathlib import Path

from flask import request, send_file

BUNDLE = Path(__file__).with_name("vendor") / "plotly-cartesian-3.7.0.min.js"
#: where Dash's renderer loads plotly.js from (``window._dashPlotlyJSURL``, relative to the app's prefix)
PATH = "_dash-component-suites/plotly/package_data/plotly.min.js"


def serve_cartesian_bundle(app) -> None:
    """Answer requests for Dash's plotly.js with the cartesian bundle (when it is shipped)."""
    if not BUNDLE.is_file():
        return
    target = app.config.requests_pathname_prefix + PATH

    @app.server.before_request
    def cartesian_plotly():
        if request.path == target:
            response = send_file(BUNDLE, mimetype="application/javascript", max_age=31536000)
            return response
        return None
