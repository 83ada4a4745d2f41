"""The figures behind ``tco.foundation.limits``: evaluation rate of the (chunked) Monte Carlo, and the memory each
held-at-once size costs, measured here and printed beside the constants the limits use.

Run: ``python benchmarks/limits.py`` (``make bench``). Each memory figure is measured in a fresh
child process (peak resident set above the interpreter's), so the runs do not disturb each other.
A constant is "ok" when the measurement does not exceed it (the limits are then conservative).
"""

from __future__ import annotations

import multiprocessing
import resource
import time

from tco.foundation import limits

SCENARIO = "default"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _measure(kind: str, size: int, queue) -> None:
    import tco
    from tco import studies

    scenario = tco.load_scenario(SCENARIO)
    before = _peak_mb()
    started = time.perf_counter()
    try:
        if kind == "monte carlo":
            studies.monte_carlo(scenario, ["ratio:groq"], size, 0)
        elif kind == "sweep":
            p = scenario.params["economics.discount_rate"]
            studies.sweep(scenario, p.name, p.low, p.high, size)
        elif kind == "map":
            px, py = scenario.params["economics.discount_rate"], scenario.params["workload.requests_per_s"]
            studies.grid_map(scenario, px.name, py.name, (px.low, px.high), (py.low, py.high), size, size, "ratio:groq",
                             chunk_size=50_000).frame()
    except Exception as exc:  # the parent waits on the queue: report, never leave it hanging
        queue.put(exc)
        return
    queue.put((time.perf_counter() - started, _peak_mb() - before, len(scenario.structure.options)))


def measure(kind: str, size: int) -> tuple[float, float, int]:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(target=_measure, args=(kind, size, queue))
    process.start()
    result = queue.get()
    process.join()
    if isinstance(result, Exception):
        raise SystemExit(f"{kind} of {size:,}: {result}")
    return result


def main() -> None:
    seconds, _, options = measure("monte carlo", 1_000_000)
    rate = 1_000_000 * options / seconds / limits.RATE_OPTIONS
    verdict = "ok" if rate >= limits.EVALUATIONS_PER_S else "SLOWER than assumed: the time limits are too generous"
    print(f"Monte Carlo (chunked), {SCENARIO} ({options} options): {rate:,.0f} draws/s per process "
          f"(limits assume {limits.EVALUATIONS_PER_S:,}: {verdict})")
    # the large size is the most the limits allow (so the measurement checks the constant where it binds)
    largest_sweep = int(limits.MEMORY_BUDGET_BYTES // limits.BYTES_PER_SWEEP_POINT)
    rows = [("sweep", largest_sweep // 4, largest_sweep, 1, limits.BYTES_PER_SWEEP_POINT, "sweep point"),
            ("map", 500, 1_000, 2, limits.BYTES_PER_MAP_CELL, "map cell")]
    for kind, small, large, power, assumed, unit in rows:  # the slope between two sizes: fixed costs cancel
        _s, small_mb, _ = measure(kind, small)
        seconds, large_mb, _ = measure(kind, large)
        per = (large_mb - small_mb) * 1e6 / (large**power - small**power)
        print(f"{kind}: {per:,.0f} B per {unit} ({small:,} to {large:,}{' per axis' if power == 2 else ''}: "
              f"{small_mb:,.0f} to {large_mb:,.0f} MB, {seconds:.2f} s; limits assume {assumed:,}: "
              f"{'ok' if per <= assumed else 'MORE than assumed'})")
    print(f"limits: {limits.MAX_PROCESS_SECONDS / 60:.0f} minutes per process, {limits.MEMORY_BUDGET_BYTES / 1e6:.0f} MB held "
          f"at once, chunks of at most {limits.MAX_CHUNK_SIZE:,} draws, {limits.MAX_WORKERS} local workers")


if __name__ == "__main__":
    main()
