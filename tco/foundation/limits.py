"""Upper bounds on every size a user can ask for, derived from time and memory on this machine.

A request above a bound is refused at once with an :class:`~tco.foundation.errors.InputError` that says
what it would have cost ("1e+12 samples would take ~690 hours ...; the limit is ..."), instead
of running until killed or ending in a ``MemoryError``. Two kinds of bound:

- **time**, for the chunked analyses (Monte Carlo, Sobol, Morris, the 2-D map, the portfolio): memory
  is bounded by the chunk size, so the cost is evaluations / rate. A process is allowed
  :data:`MAX_PROCESS_SECONDS`; ``--workers N`` multiplies that by N, ``--scheduler`` by
  :data:`SCHEDULER_PROCESSES` (a cluster of unknown size).
- **memory**, for what is held at once: sweep points, map cells, Morris elementary effects, the
  chunk size.

Rates and sizes were measured with ``python benchmarks/limits.py`` (and
``benchmarks/scale.py``) on this project's machine (2 cores shared with other jobs); the
benchmark prints them beside the constants below (each byte figure is the slope between two
sizes, so the interpreter and one chunk cancel out).
"""

from __future__ import annotations

import math
import os

from tco.foundation.errors import InputError

#: model evaluations per second in one process, for a scenario of :data:`RATE_OPTIONS` options (default
#: scenario, every parameter drawn, with the bundled prompt-length spread; benchmarks/limits.py): 191,920/s at load
#: 1.0 on one 2026-12-01 machine (numpy's out-of-cache add at 26-33 GB/s), 93,776/s at load 0.9 on a later one whose
#: add ran at 8 GB/s. The slower figure, rounded down, so that the hour per process holds on the slower machines too
EVALUATIONS_PER_S = 90_000
#: options of the scenario the rate was measured on (an evaluation costs in proportion to the options)
RATE_OPTIONS = 3
#: longest run allowed in one process [s]
MAX_PROCESS_SECONDS = 3600.0
#: processes assumed behind a ``--scheduler`` address
SCHEDULER_PROCESSES = 64
#: most processes ``--workers`` starts: one per core of this machine
MAX_WORKERS = max(1, os.cpu_count() or 1)

#: bytes of memory one analysis may hold at once, beyond what the interpreter and one chunk use
#: (half of the 500 MB any request may cost)
MEMORY_BUDGET_BYTES = 250e6
#: bytes held per sweep point (core outputs of every option): 1,652 measured 2026-12-01 with the serving model's
#: outputs (benchmarks/limits.py; 445 before it), 2 kB assumed
BYTES_PER_SWEEP_POINT = 2_000
#: bytes held per map cell after evaluation (metric and gap, the x/y/z frame, the contour search): 45 measured
BYTES_PER_MAP_CELL = 48
#: bytes held per Morris elementary effect (trajectories x parameters float64: the chunks' arrays, their
#: concatenation and the absolute values; 4 copies of 8 B, an estimate)
BYTES_PER_MORRIS_EFFECT = 32
#: most draws evaluated in one chunk (~0.1 GB per 100,000 draws for three options, docs/scale.md)
MAX_CHUNK_SIZE = 500_000
#: most cells of a portfolio (each is a scenario validated in ~5 ms)
MAX_PORTFOLIO_CELLS = 2_000

#: how to get more processes (the study command's flags, or the Python API's runner)
PARALLEL_HINT = "use more processes for more: `tco study --workers N` or `--scheduler ADDRESS` (ChunkRunner in Python)"


def duration(seconds: float) -> str:
    """``seconds`` in words: ``~12 s``, ``~40 minutes``, ``~690 hours``, ``~3e+06 years``."""
    for unit, size in (("years", 365.25 * 86400), ("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * size:
            count = seconds / size
            return f"~{count:,.0f} {unit}" if count < 1e6 else f"~{count:.0e} {unit}"
    return f"~{max(seconds, 1):.0f} s"


def processes(workers: int | None, scheduler: str | None) -> int:
    """How many processes a run may count on."""
    return SCHEDULER_PROCESSES if scheduler else max(1, int(workers or 1))


def check_evaluations(path: str, requested: float, what: str, option_evaluations: float, workers: int | None = None,
                      scheduler: str | None = None, hint: str = PARALLEL_HINT) -> None:
    """Refuse a run of ``option_evaluations`` (model evaluations x options) asked for as ``requested``
    ``what`` at ``path``, when it would take longer than :data:`MAX_PROCESS_SECONDS` per process."""
    rate = EVALUATIONS_PER_S * RATE_OPTIONS
    procs = processes(workers, scheduler)
    seconds = option_evaluations / rate / procs
    if seconds > MAX_PROCESS_SECONDS:
        limit = requested * MAX_PROCESS_SECONDS / seconds
        where = f"{procs} processes" if procs > 1 else "one process"
        raise InputError.one(path, requested, (
            f"{requested:,.4g} {what} would take {duration(seconds)} on {where} here ({option_evaluations:,.3g} "
            f"option evaluations at ~{rate:,.0f}/s per process); the limit is {math.floor(limit):,} {what} "
            f"({duration(MAX_PROCESS_SECONDS)} per process)" + (f"; {hint}" if hint else "")))


def check_memory(path: str, requested: float, what: str, bytes_needed: float, budget: float = MEMORY_BUDGET_BYTES) -> None:
    """Refuse ``requested`` ``what`` that would hold ``bytes_needed`` bytes at once (over ``budget``)."""
    if bytes_needed > budget:
        limit = requested * budget / bytes_needed
        raise InputError.one(path, requested, (
            f"{requested:,.4g} {what} would hold ~{bytes_needed / 1e9:,.3g} GB at once; the limit is "
            f"{math.floor(limit):,} {what} ({budget / 1e6:,.0f} MB)"))


def check_chunk_size(chunk_size: int) -> None:
    """Refuse a chunk larger than :data:`MAX_CHUNK_SIZE` draws (what one process holds at once)."""
    check_count("chunk_size", chunk_size, "draws per chunk", MAX_CHUNK_SIZE, "memory: ~0.1 GB per 100,000 draws")


def check_count(path: str, requested: float, what: str, limit: int, why: str) -> None:
    """Refuse more than ``limit`` ``what`` (``why`` says where the limit comes from)."""
    if requested > limit:
        raise InputError.one(path, requested, f"{requested:,.4g} {what} is more than the limit of {limit:,} ({why})")
