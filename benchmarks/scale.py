"""Studies at scale: throughput with 1 and 2 workers, parallel efficiency, peak memory, Dask overhead.

Run: ``python benchmarks/scale.py [--samples N] [--big N]``. Prints figures; nothing here fails.

- throughput [evaluations/s]: Monte Carlo draws of the default scenario (three options, four
  metrics as in ``monte-carlo-default``) per second of wall time, in-process and on a
  ``LocalCluster`` of 1 and 2 processes (cluster start-up excluded, reported apart);
- parallel efficiency = throughput(2 workers) / (2 x throughput(1 worker));
- Dask overhead = wall time on a 1-worker cluster / wall time in-process - 1, same study;
- peak memory [GB]: the largest sum of the resident set sizes of this process and its
  children (the workers), sampled every 0.1 s with psutil, for ``--samples`` and ``--big`` draws.
"""

from __future__ import annotations

import argparse
import contextlib
import resource
import threading
import time

import psutil

import tco
from tco.studies import monte_carlo
from tco.studies.parallel import ChunkRunner

METRICS = ["ratio:groq", "ratio:h100-prefill+groq-decode", "lcot:h100", "npv:h100-prefill+groq-decode"]


class PeakMemory:
    """Largest RSS of this process plus its children while the block runs [bytes], sampled every ``period`` s;
    ``children`` the largest RSS of each child process (a dask worker) by process id [bytes]."""

    def __init__(self, period: float = 0.1):
        self.period, self.peak, self.children, self._stop = period, 0, {}, threading.Event()

    def _rss(self) -> int:
        me = psutil.Process()
        total = me.memory_info().rss
        for child in me.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                rss = child.memory_info().rss
                total += rss
                self.children[child.pid] = max(self.children.get(child.pid, 0), rss)
        return total

    def _watch(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._rss())
            time.sleep(self.period)

    def __enter__(self):
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())


def timed_run(scenario, samples: int, runner: ChunkRunner) -> tuple[float, float]:
    """(seconds, peak GB) of a Monte Carlo of ``samples`` draws on ``runner``."""
    with PeakMemory() as memory:
        started = time.perf_counter()
        monte_carlo(scenario, METRICS, samples, seed=1, runner=runner)
        seconds = time.perf_counter() - started
    return seconds, memory.peak / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=10_000_000, help="draws for throughput (default 1e7)")
    parser.add_argument("--big", type=int, default=0, help="also run this many draws in-process (e.g. 100000000)")
    parser.add_argument("--big-workers", type=int, default=0, help="workers for the --big run (0: in-process)")
    args = parser.parse_args()
    scenario = tco.load_scenario("default")
    n = args.samples
    print(f"Monte Carlo of the default scenario, {len(METRICS)} metrics, {n:,} draws, chunks of 250,000")

    t_local, gb_local = timed_run(scenario, n, ChunkRunner(progress=False))
    print(f"  in-process          {t_local:8.1f} s  {n / t_local:12,.0f} evaluations/s  peak {gb_local:5.2f} GB")
    timings = {}
    for workers in (1, 2):
        started = time.perf_counter()
        with ChunkRunner(workers=workers, progress=False) as runner:
            start_s = time.perf_counter() - started
            t, gb = timed_run(scenario, n, runner)
        timings[workers] = t
        print(f"  dask, {workers} worker(s)   {t:8.1f} s  {n / t:12,.0f} evaluations/s  peak {gb:5.2f} GB"
              f"  (cluster start {start_s:.1f} s, not counted)")
    print(f"  parallel efficiency (2 workers vs 1 dask worker): {timings[1] / (2 * timings[2]):.0%}")
    print(f"  parallel efficiency (2 workers vs in-process):    {t_local / (2 * timings[2]):.0%}")
    print(f"  Dask overhead (1 worker vs in-process, same study): {timings[1] / t_local - 1:+.1%}")

    if args.big:
        runner = ChunkRunner(workers=args.big_workers or None, progress=False)
        with runner:
            t, gb = timed_run(scenario, args.big, runner)
        where = f"{args.big_workers} dask workers" if args.big_workers else "in-process"
        print(f"  {args.big:,} draws ({where}): {t:8.1f} s  {args.big / t:12,.0f} evaluations/s  peak {gb:5.2f} GB"
              f"  (ru_maxrss of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} GB)")


if __name__ == "__main__":
    main()
