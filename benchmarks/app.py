"""App benchmark: server time per interaction, driving the callback bodies directly.

Run: ``python benchmarks/app.py [--repeat N]``. Targets (issue #6), default scenario:
p95 < 200 ms for a compare view or an assumption edit, < 1 s for a 100 x 100 map and for
each Fleet-tab interaction, < 2 s for the first page load (layout, dependencies and the first
callbacks, server side; and in headless Chromium, from navigation to the verdict on screen) and
for a workbook download.
"""

# ruff: noqa: E402  (sys.path is fixed before the imports, see below)
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

# run as a script, this file's folder comes first on sys.path and its name would shadow
# the `app` package: put the repository root there instead
sys.path[0] = str(Path(__file__).resolve().parents[1])

import numpy as np
from tco_app import create_app
from tco_app.context import AppContext
from tco_app.controller import update_state
from tco_app.fleet_views import coordination_view, kv_view, pareto_view, stranded_view, tree_view
from tco_app.pages.assumptions import table_rows, workbook_download
from tco_app.pages.compare import compare_view
from tco_app.pages.lifecycle import lifecycle_view
from tco_app.pages.sensitivity import map_view
from tco_app.state import scenario_choices

TARGETS_S = {"compare view": 0.2, "assumption edit (controller + compare)": 0.2, "lifecycle view": 0.2,
             "100x100 map": 1.0, "first page load (server)": 2.0, "fleet: KV transfer wall": 1.0,
             "fleet: stranded capacity (policy or drift change)": 1.0, "fleet: Pareto frontier": 1.0,
             "fleet: coordination + tree tables": 1.0, "workbook download (xlsx)": 2.0}


def timed(fn, repeat: int) -> np.ndarray:
    fn()  # warm caches (scenario files are parsed once per process)
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return np.asarray(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    ctx = AppContext(scenario_choices(), "default")
    state = {"scenario": "default", "upload": None, "set": {}}
    scenario = ctx.scenario(state)
    rows = table_rows(scenario)
    edit_row = next(i for i, r in enumerate(rows) if r["name"] == "economics.discount_rate")

    def edit():
        rows[edit_row]["value"] = str(np.random.uniform(0.05, 0.15))
        new = update_state("params-table", "", None, None, None, rows, state, ctx)[0]
        compare_view(ctx.scenario(new))

    def first_load():
        app = create_app(cache_dir=tempfile.mkdtemp())
        client = app.server.test_client()
        for path in ("/", "/_dash-layout", "/_dash-dependencies"):
            assert client.get(path).status_code == 200
        new = update_state(None, "", None, None, None, None, None, ctx)[0]
        compare_view(ctx.scenario(new))

    cases = {"compare view": lambda: compare_view(scenario), "assumption edit (controller + compare)": edit,
             "lifecycle view": lambda: lifecycle_view(scenario),
             "first page load (server)": first_load,
             "fleet: KV transfer wall": lambda: kv_view(scenario, None),
             "fleet: stranded capacity (policy or drift change)":
                 lambda: stranded_view(scenario, str(np.random.choice(["today", "peak", "flex"])),
                                       {"prompt_growth_per_year": np.random.uniform(0.0, 3.0)}),
             "fleet: Pareto frontier": lambda: pareto_view(scenario, "tpot_s"),
             "fleet: coordination + tree tables": lambda: (coordination_view(scenario), tree_view(scenario)),
             "workbook download (xlsx)": lambda: workbook_download(scenario),
             "100x100 map": lambda: map_view(scenario, "workload.requests_per_s", "economics.electricity_usd_per_kwh", 100,
                                             f"ratio:{scenario.structure.challengers[0].name}")}
    print(f"{'interaction':50s} {'p50 ms':>8s} {'p95 ms':>8s} {'target ms':>10s}")
    for name, fn in cases.items():
        t = timed(fn, max(3, args.repeat // 5) if any(w in name for w in ("load", "map", "workbook")) else args.repeat)
        p50, p95 = np.percentile(t, [50, 95]) * 1e3
        flag = "ok" if p95 <= TARGETS_S[name] * 1e3 else "SLOW"
        print(f"{name:50s} {p50:8.1f} {p95:8.1f} {TARGETS_S[name] * 1e3:10.0f}  {flag}")
    loads = browser_first_loads(5)
    print(f"{'first page load in Chromium, to the verdict (s)':50s} first {loads[0]:.2f}, then "
          f"{', '.join(f'{t:.2f}' for t in loads[1:])}  (target < 2 s)")


def browser_first_loads(count: int) -> list[float]:
    """Seconds from navigation to the verdict on screen, each in a new page of headless Chromium,
    the first against a server that has answered nothing yet."""
    import logging
    import threading

    from playwright.sync_api import sync_playwright
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no request log on the console
    server = make_server("127.0.0.1", 0, create_app(cache_dir=tempfile.mkdtemp()).server, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    times = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"])
            for _ in range(count):
                page = browser.new_page()
                start = time.perf_counter()
                page.goto(f"http://127.0.0.1:{server.server_port}/")
                page.wait_for_selector("text=cheapest", timeout=30000)
                times.append(time.perf_counter() - start)
                page.close()
            browser.close()
    finally:
        server.shutdown()
    return times


if __name__ == "__main__":
    main()
