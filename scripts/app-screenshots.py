"""Screenshots of every view of the app at 1024 and 1440 px, written to docs/img (``app-<view>-<width>.png``).

Run: ``.venv/bin/python scripts/app-screenshots.py [--scenario NAME] [--out DIR]``. Each view is
taken once it has settled (every callback answered, every chart drawn), after the same layout
audit the browser test runs (``tests/web/layout.py``): a problem is printed and the script exits 1.
Monte Carlo and Sobol are run on the Uncertainty tab first. PNGs are saved with a 256-colour
palette when Pillow is installed (a third of the size; the charts use a few colours).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "web")]

from layout import run_uncertainty, walk  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402
from tco_app import create_app  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

WIDTHS = (1024, 1440)


def shrink(path: Path) -> None:
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as image:
        image.convert("RGB").quantize(256).save(path, optimize=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scenario", default="", help="a bundled scenario to open (default: the default scenario)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "img"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = make_server("127.0.0.1", 0, create_app(cache_dir=tempfile.mkdtemp()).server, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    query = f"?scenario={args.scenario}" if args.scenario else ""
    failed = False
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"])
            page = browser.new_page()
            for name, width, problems in walk(page, f"http://127.0.0.1:{server.server_port}/{query}", WIDTHS,
                                              run_uncertainty):
                path = out / f"app-{name}-{width}.png"
                page.screenshot(path=str(path), full_page=True)
                shrink(path)
                print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}: "
                      + ("ok" if not problems else "; ".join(problems)))
                failed |= bool(problems)
            page.close()
            browser.close()
    finally:
        server.shutdown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
