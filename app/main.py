"""The app factory: ``create_app(scenario=None)`` builds a Dash app and registers its callbacks on it.

Runs offline (Dash serves its own scripts; no external stylesheets, fonts or CDNs) and
keeps per-user state in the browser (``dcc.Store``), so one server serves many users.
Every tab shares a header (scenario picker, upload, the edits banner with its reset, the
messages of a broken link or upload) and the named cases saved in the browser session.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

import diskcache
from dash import MATCH, ClientsideFunction, Dash, DiskcacheManager, Input, Output, State, dcc, html
from flask import Response, has_request_context, request

from tco.foundation.errors import InputError
from tco.foundation.files import new_folder, slug
from tco.inputs.loading import DEFAULT_SCENARIO

from . import builder, controller, plotlyjs
from .charts import TITLE_FROM_META, figure_html
from .context import AppContext
from .glossary import glossary_block
from .pages import page_modules
from .pages.compare import compare_view
from .state import MAX_QUERY_CHARS, scenario_choices, state_from_query
from .tables import csv_download

ASSETS = Path(__file__).with_name("assets")
#: largest request body the server reads (an upload at the YAML limit is ~0.35 MB; a 150 x 150 map figure sent
#: back for its HTML download ~2 MB); a larger request is refused with 413 before any callback runs
MAX_REQUEST_BYTES = 16_000_000


#: the Host names the server answers by default: this machine's own (a page of another site that resolves its own
#: name to 127.0.0.1, "DNS rebinding", sends that name and is refused); ``tco app --allowed-host NAME`` adds one
DEFAULT_ALLOWED_HOSTS = ("127.0.0.1", "localhost")


def host_name(host: str) -> str:
    """The name of a ``Host`` header without its port, lower case, without a trailing dot (``[::1]:8050`` -> ``::1``)."""
    host = (host or "").strip().lower()
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


def answer_allowed_hosts(server, allowed_hosts: Iterable[str]) -> None:
    """Refuse (400, before any route or callback runs) a request whose ``Host`` is not one of ``allowed_hosts``."""
    allowed = frozenset(host_name(h) for h in allowed_hosts)

    @server.before_request
    def _host_allowed():
        name = host_name(request.host)
        if name not in allowed:
            return Response(f"tco app answers for {', '.join(sorted(allowed))} only, not {name[:100]!r}; to serve this "
                            f"name start it with --allowed-host {name[:100] or 'NAME'}\n", status=400, mimetype="text/plain")
        return None


def create_app(scenario: str | Path | None = None, cache_dir: str | Path | None = None,
               allowed_hosts: Iterable[str] = DEFAULT_ALLOWED_HOSTS) -> Dash:
    """A new Dash app on the bundled scenarios (plus ``scenario``, a file, shown first).

    ``cache_dir`` holds the background-callback jobs (Monte Carlo, Sobol); by default a fresh
    temporary folder the app removes at exit (:func:`own_cache_folder`). The server answers
    requests whose ``Host`` is one of ``allowed_hosts`` only (:func:`answer_allowed_hosts`).
    """
    choices = scenario_choices(scenario)
    default = next(reversed(choices)) if scenario is not None else DEFAULT_SCENARIO
    cache = diskcache.Cache(str(cache_dir or own_cache_folder()))
    ctx = AppContext(choices, default, DiskcacheManager(cache))
    app = Dash(__name__, title="tco: cost per token, general vs specialized hardware", serve_locally=True,
               assets_folder=str(ASSETS), suppress_callback_exceptions=True, update_title=None,
               background_callback_manager=ctx.background_manager, on_error=keep_view_on_input_error)
    pages = page_modules()

    @lru_cache(maxsize=32)
    def first_view(query: str):
        return initial_compare(ctx, query)

    def layout():
        return page_layout(ctx, choices, default, pages, first_view(_referrer_query()))

    app.layout = layout
    first_view("")  # the default scenario's Compare view, computed at start-up: the first visitor does not wait for it
    app.server.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    answer_allowed_hosts(app.server, allowed_hosts)
    plotlyjs.serve_cartesian_bundle(app)
    controller.register(app, ctx)
    builder.register(app, ctx)
    for page in pages:
        page.register(app, ctx)
    register_shared(app)
    return app


def keep_view_on_input_error(error: Exception):
    """A view sent a state it refuses (a crafted request, the controller never saw it): the view stays as it was,
    answered with 200 rather than a bare 500 (the controller names the broken rule under the header when it next runs);
    any other exception is a bug and still fails the request."""
    if isinstance(error, InputError):
        return None
    raise error


#: the app's own background-job caches in the temporary folder: ``tco-app-<pid>.<hex>``
CACHE_PREFIX = "tco-app-"


def own_cache_folder() -> Path:
    """A fresh background-job cache (0700) in the temporary folder, removed when the server exits; those of servers
    that were killed (their process gone) are removed first (:func:`tco.foundation.files.new_folder`)."""
    folder = new_folder(Path(tempfile.gettempdir()), CACHE_PREFIX, mode=0o700)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def _referrer_query() -> str:
    """The query string of the page that asks for the layout (``/_dash-layout`` is fetched by the page itself)."""
    if not has_request_context() or not request.referrer:
        return ""
    return urlsplit(request.referrer).query[: MAX_QUERY_CHARS]


def initial_compare(ctx: AppContext, query: str):
    """The Compare view of the state a page's address encodes, computed with the layout, so the verdict is on screen
    as soon as the page is (the callbacks then confirm it); None when it cannot be computed (they fill it in)."""
    try:
        state, _errors = state_from_query(query, ctx.choices, ctx.default)
        return compare_view(ctx.scenario(state))
    except Exception:  # a broken link is the callbacks' to explain; the layout must always load
        return None


def page_layout(ctx: AppContext, choices, default: str, pages, compare_initial) -> html.Div:
    """The page: header, edits banner, messages, the tabs, footer; the Compare tab filled in when ``compare_initial``."""
    return html.Div(className="shell", children=[
        dcc.Location(id="url", refresh=False),
        dcc.Store(id="state", storage_type="memory"),
        dcc.Store(id="scenario-key", storage_type="memory"),
        *[dcc.Store(id=f"state-{page}", storage_type="memory") for page in VIEW_PAGES],
        dcc.Store(id="cases", storage_type="session", data={}),
        html.Header(className="header", children=[
            html.Div(className="brand", children=[html.H1("tco"), html.Span(
                "total cost of ownership of AI inference hardware", className="subtitle")]),
            html.Div(className="picker", children=[
                html.Label("Scenario", htmlFor="scenario-picker"),
                dcc.Dropdown(id="scenario-picker", options=[{"label": k, "value": k} for k in choices], value=default,
                             clearable=False, style={"width": "230px"}),
                dcc.Upload(id="upload", children=html.Button("Upload scenario YAML"), accept=".yaml,.yml",
                           multiple=False),
            ]),
        ]),
        html.Div(id="edit-banner", className="banner", hidden=True, children=[
            html.Span(id="edit-banner-text"),
            html.Button("Reset all edits", id="reset-edits", className="small-button"),
        ]),
        html.Div(id="messages", className="errors-box"),
        dcc.Tabs(id="tabs", value=pages[0].ID, className="tabs", children=[
            dcc.Tab(label=page.LABEL, value=page.ID, id=f"tab-{page.ID}",
                    children=html.Div(page.layout(ctx, compare_initial) if page.ID == "compare" else page.layout(ctx),
                                      className="page", id=f"page-{page.ID}"))
            for page in pages]),
        html.Footer(className="footer", children=[
            "Costs per million output tokens unless a label says otherwise. Every table has a CSV download; charts: "
            "PNG from the camera icon, HTML from the button below each chart. The address bar holds a shareable link "
            "to this view; named cases live in this browser tab (Cases).", glossary_block()]),
    ])


#: pages whose views follow their own copy of the state (:func:`tco_app.context.view_state`)
VIEW_PAGES = ("compare", "decide", "cases", "sensitivity", "lifecycle", "fleet")


def register_shared(app: Dash) -> None:
    """Callbacks every page shares: the state copied to the page in view (in the browser: an edit recomputes only
    that page), chart titles, HTML and CSV downloads (pattern-matched by name)."""
    app.clientside_callback(ClientsideFunction(namespace="tco", function_name="viewStates"),
                            *[Output(f"state-{page}", "data") for page in VIEW_PAGES],
                            Input("state", "data"), Input("tabs", "value"),
                            *[State(f"state-{page}", "data") for page in VIEW_PAGES])
    app.clientside_callback(TITLE_FROM_META, Output({"type": "chart-title", "name": MATCH}, "children"),
                            Input({"type": "chart", "name": MATCH}, "figure"))

    @app.callback(Output({"type": "chart-file", "name": MATCH}, "data"),
                  Input({"type": "chart-html", "name": MATCH}, "n_clicks"),
                  State({"type": "chart", "name": MATCH}, "figure"), State({"type": "chart", "name": MATCH}, "id"),
                  prevent_initial_call=True)
    def chart_html(_clicks, figure, ident):
        return {"content": figure_html(figure), "filename": f"{slug(ident.get('name', ''), 'chart')}.html",
                "type": "text/html"}

    @app.callback(Output({"type": "csv-file", "name": MATCH}, "data"), Input({"type": "csv-button", "name": MATCH}, "n_clicks"),
                  State({"type": "csv-data", "name": MATCH}, "data"), State({"type": "csv-data", "name": MATCH}, "id"),
                  prevent_initial_call=True)
    def table_csv(_clicks, data, ident):
        return csv_download(data, ident)
