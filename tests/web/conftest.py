"""Browser fixtures: Playwright on the system Chromium, the app served on a free port.

Recipe B of the shared practices notes: ``playwright install`` cannot download browsers
here, so the Debian ``chromium`` (installed by scripts/install-system-deps.sh) is used.
"""

from __future__ import annotations

import logging
import shutil
import threading
from pathlib import Path

import pytest
from tco_app import create_app
from werkzeug.serving import make_server

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM,
            "args": ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"]}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1000}, "accept_downloads": True}


class ServerLog(logging.Handler):
    """Collects server-side errors (callback exceptions, HTTP 5xx) during a test."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record):
        message = record.getMessage()
        if record.levelno >= logging.ERROR or '" 500 ' in message:
            self.records.append(message)


@pytest.fixture(scope="module")
def live_app(tmp_path_factory):
    """URL of a fresh app (its own factory call and background cache), and its error log."""
    app = create_app(cache_dir=tmp_path_factory.mktemp("cache"))
    log = ServerLog()
    for name in ("werkzeug", app.server.logger.name, "dash"):
        logging.getLogger(name).addHandler(log)
    server = make_server("127.0.0.1", 0, app.server, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", log
    server.shutdown()
    for name in ("werkzeug", app.server.logger.name, "dash"):
        logging.getLogger(name).removeHandler(log)


@pytest.fixture(scope="session")
def artifacts():
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
