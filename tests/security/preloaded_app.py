"""The Dash app the app attacks are sent to, built once in the fork server (children inherit it built).

Children only call its Flask test client and plain callbacks, never its background-callback cache.
"""

from __future__ import annotations

import tempfile

from tco_app import create_app

APP = create_app(cache_dir=tempfile.mkdtemp(prefix="tco-security-"))
