"""Run one attack in a child process with a memory cap and a timeout, and measure what it cost.

Children fork from a ``multiprocessing`` fork server that imported tco, pandas, openpyxl and
the Dash app once (single-threaded: ``OPENBLAS_NUM_THREADS=1``), so an attack starts in ~10 ms
instead of a fresh interpreter's ~1 s. In the child, ``RLIMIT_AS`` allows
:data:`HEADROOM_MB` beyond what the fork server already mapped; the parent kills it after
``timeout`` seconds. The child reports its exit code (or the traceback of an exception it did
not turn into one), what it printed, its CPU time and its peak resident set (which counts
the pages it shares with the fork server, so it over-states, never under-states, its memory).
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import resource
import time
import traceback
from dataclasses import dataclass
from importlib import import_module
from multiprocessing import forkserver
from pathlib import Path

#: address space a child may map beyond the fork server's own [MB]
HEADROOM_MB = 1500
#: modules the fork server imports once
PRELOAD = ["numpy", "pandas", "yaml", "openpyxl", "plotly.graph_objects", "tco", "tco.api", "tco.cli", "tco.inputs.loading",
           "tco.export", "tco.export.reader", "tco.studies", "tco.export.study_folder", "tco.inputs.fleet_settings", "tco_app",
           "tco_app.controller", "tco_app.pages.assumptions", "tco_app.pages.sensitivity", "tco_app.pages.uncertainty",
           "preloaded_app"]

_CONTEXT = None


def _context():
    """The fork-server context, its server started with this folder importable (Python 3.11's fork
    server preloads modules with its own ``sys.path``: the working folder, not the parent's path)."""
    global _CONTEXT
    if _CONTEXT is None:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        _CONTEXT = multiprocessing.get_context("forkserver")
        _CONTEXT.set_forkserver_preload(PRELOAD)
        saved = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).parent), saved) if p)
        try:
            forkserver.ensure_running()
        finally:
            if saved is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = saved
    return _CONTEXT


@dataclass
class Outcome:
    """What one attack did: exit code (None if it raised), output, cost."""

    code: int | None
    stdout: str
    stderr: str
    error: str | None
    wall_s: float
    cpu_s: float
    peak_mb: float
    timed_out: bool
    result: object = None

    @property
    def one_line_error(self) -> bool:
        """Exit 2 with errors on stderr, each one line starting ``tco: error:``, and no traceback."""
        lines = [line for line in self.stderr.splitlines() if line.strip()]
        return (self.code == 2 and self.error is None and bool(lines) and "Traceback" not in self.stderr
                and all(line.startswith(("tco: error:", "tco: warning:")) for line in lines))


def _vm_size_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _child(connection, target: str, args: tuple, cwd: str | None, umask: int | None) -> None:
    if cwd:
        os.chdir(cwd)
    if umask is not None:
        os.umask(umask)
    cap = _vm_size_bytes() + HEADROOM_MB * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    out, err = io.StringIO(), io.StringIO()
    code, error, result = None, None, None
    module, _, name = target.partition(":")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result = getattr(import_module(module), name)(*args)
            code = result if isinstance(result, int) else 0
        except BaseException:  # reported to the parent as a failure of the attack's handling
            error = traceback.format_exc()[-3000:]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    plain = isinstance(result, (str, int, float, dict, list, tuple, type(None)))
    try:
        connection.send({"code": code, "stdout": out.getvalue()[-20000:], "stderr": err.getvalue()[-20000:],
                         "error": error, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
                         "result": result if plain else repr(result)})
    finally:
        connection.close()


def run(target: str, *args, cwd: str | None = None, timeout: float = 30.0, umask: int | None = None) -> Outcome:
    """Call ``module:function(*args)`` in a capped child; a CLI attack calls ``tco.cli:main`` with an argv list."""
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    started = time.perf_counter()
    process = ctx.Process(target=_child, args=(send, target, args, cwd, umask))
    process.start()
    send.close()
    report = receive.recv() if receive.poll(timeout) else None
    process.join(5 if report else 0)
    if process.is_alive():
        process.kill()
        process.join()
    wall = time.perf_counter() - started
    if report is None:
        return Outcome(None, "", "", f"no report (timed out after {timeout} s or died: exit {process.exitcode})", wall,
                       float("nan"), float("nan"), True)
    return Outcome(report["code"], report["stdout"], report["stderr"], report["error"], wall, report["cpu_s"],
                   report["peak_mb"], False, report["result"])


def tco(*argv: str, cwd=None, timeout: float = 30.0, umask: int | None = None) -> Outcome:
    """``tco ARGV...`` (what the ``tco`` command runs) in a capped child."""
    return run("tco.cli:main", list(argv), cwd=str(cwd) if cwd else None, timeout=timeout, umask=umask)


#: CPU seconds an attack may cost (the issue's "ends in under 5 s", measured as CPU time so that other
#: jobs on the shared machine do not count)
ATTACK_CPU_S = 5.0
#: wall seconds, with room for a loaded machine
ATTACK_WALL_S = 20.0
#: peak resident memory of the child, shared pages of the fork server included [MB]
ATTACK_PEAK_MB = 500.0


def contained(outcome: Outcome) -> Outcome:
    """Assert that an attack ended on its own, quickly and within memory; returns it for more checks."""
    assert not outcome.timed_out, outcome.error
    assert outcome.error is None, outcome.error
    assert outcome.cpu_s < ATTACK_CPU_S, f"{outcome.cpu_s:.1f} s of CPU"
    assert outcome.wall_s < ATTACK_WALL_S, f"{outcome.wall_s:.1f} s"
    assert outcome.peak_mb < ATTACK_PEAK_MB, f"{outcome.peak_mb:.0f} MB"
    return outcome


def refused(outcome: Outcome, *fragments: str) -> Outcome:
    """Assert a contained attack that the command line refused: exit 2, one ``tco: error:`` line per
    broken rule, no traceback, each fragment in the message."""
    contained(outcome)
    assert outcome.one_line_error, (outcome.code, outcome.stderr)
    for fragment in fragments:
        assert fragment in outcome.stderr, (fragment, outcome.stderr)
    return outcome
