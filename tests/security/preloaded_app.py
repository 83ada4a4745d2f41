"""The Dash app the app attacks are sent to, built once in the fork server (children inherit it built).

Children only call its Flask test client and plain callbacks, never its background-callback cache.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile

from tco_app import create_app

CACHE = tempfile.mkdtemp(prefix="tco-security-")
atexit.register(shutil.rmtree, CACHE, True)  # the fork server's: its children exit without running it
APP = create_app(cache_dir=CACHE)
