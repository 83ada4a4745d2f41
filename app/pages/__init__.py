"""The registry of pages: each is a module with ``ID``, ``LABEL``, ``layout(ctx)`` and ``register(app, ctx)``.

Adding an analysis to the app is one module here plus one name in :data:`PAGES`.
"""

from __future__ import annotations

import importlib

#: page modules under app.pages, in tab order
PAGES = ("compare", "decide", "cases", "assumptions", "sensitivity", "uncertainty", "lifecycle", "fleet")


def page_modules():
    return [importlib.import_module(f".{name}", __name__) for name in PAGES]
