"""numexpr and numba against the engine's numpy on two of its kernels (issue 16 item 3), measured in one run.

Run: ``python benchmarks/accelerators.py`` (``make bench`` runs it). It builds a throwaway virtual environment with
this checkout's numpy and scipy plus ``numba`` and ``numexpr`` (skipped with a message when they cannot be installed,
e.g. offline) and times, on one core, each kernel as the core computes it (numpy, imported from ``tco.core``) against
the same formula fused by numexpr and compiled by numba (a loop over the draws, the same operations in the same
order):

- **staffing** :func:`tco.core.serving.queueing.servers_at_decay` (square-root staffing: arithmetic and one square root per
  draw; the kind of kernel numexpr was measured on first, docs/scale.md);
- **Kingman's exponent** :func:`tco.core.serving.queueing.kingman_exponent` for gamma service (three Newton steps of logs and
  exponentials per draw: the kind of work the queueing and sojourn models spend most of their time on).

Printed per kernel and size (1 draw, the studies' block of 65,536, 1,000,000): microseconds per call, the ratio
numpy / accelerator (above 1: the accelerator is faster), the largest relative difference from numpy's result, and
numba's compile time in a fresh process without a cache. Then, in this process, the share of the engine's time (a
block of 65,536 draws of the default scenario, every uncertain parameter drawn) spent in numpy's transcendental
functions and square roots: the part of the work a compiled loop computes with scalar libm calls instead of numpy's
SIMD loops. Nothing here fails: it informs the choice docs/scale.md records ("Accelerators").
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: run inside the throwaway environment, with this checkout on sys.path; prints one line per measurement
KERNELS = r'''
import math, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
start = time.perf_counter()
import numba
import numexpr
from tco.core import allocator, queueing

allocator.keep_freed_memory()  # as the engine runs (tco.core.evaluate)

numexpr.set_num_threads(1)
numba.set_num_threads(1)
CAP, FLOOR, SCV_FLOOR, STEPS = (queueing.EXPONENT_CAP, queueing.EXPONENT_FLOOR, queueing.SCV_FLOOR,
                                queueing.KINGMAN_NEWTON_STEPS)


@numba.njit(error_model="numpy")
def staffing_numba(a, root, decay, log_term):
    out = np.empty_like(a)
    for i in range(a.size):
        big_k = decay[i] * root[i]
        beta = math.sqrt(big_k * big_k + 2.0 * log_term[i]) - big_k
        out[i] = a[i] + beta * root[i] + 1.0 / (1.0 + decay[i])
    return out


@numba.njit(error_model="numpy")
def kingman_numba(utilization, service_scv):
    out = np.empty_like(utilization)
    for i in range(utilization.size):
        rho = min(max(utilization[i], 1e-300), 1.0)
        log_rho = math.log(rho)
        v = max(service_scv[i], SCV_FLOOR)
        x = min(2.0 * (1.0 - rho) / (rho * (1.0 + v)), (1.0 - math.exp(-v * math.log(1.0 + 1.0 / (v * rho)))) / v)
        for _ in range(STEPS):
            x = max(x, FLOOR)
            inner = max(1.0 - v * x, 1e-300)
            mgf = math.exp(min(-math.log(inner) / v, CAP))
            x = x - (math.log(x) - math.log(mgf - 1.0) - log_rho) / (1.0 / x - mgf / (inner * (mgf - 1.0)))
        out[i] = max(x, FLOOR)
    return out


STAFFING = "a + (sqrt(decay * root * decay * root + 2.0 * log_term) - decay * root) * root + 1.0 / (1.0 + decay)"


def best_us(function, seconds=0.4):
    """Best time of one call over repeated calls [us]."""
    function()
    best, spent = float("inf"), 0.0
    while spent < seconds:
        t = time.perf_counter()
        function()
        elapsed = time.perf_counter() - t
        best, spent = min(best, elapsed), spent + elapsed
    return best * 1e6


def compare(name, reference, accelerated):
    ref_us, acc_us = best_us(reference), best_us(accelerated)
    want, got = reference(), accelerated()
    diff = float(np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)))
    print(f"{name}|{ref_us:.1f}|{acc_us:.1f}|{diff:.1e}", flush=True)


print(f"import|{time.perf_counter() - start:.2f}")
rng = np.random.default_rng(0)
for n in (1, 65_536, 1_000_000):
    a = 10 ** rng.uniform(-1, 3, n)
    root, decay, log_term = np.sqrt(a), 10 ** rng.uniform(-2, 1, n), np.log(0.5 / rng.uniform(1e-4, 0.1, n))
    utilization, scv = rng.uniform(0.01, 0.99, n), 10 ** rng.uniform(-3, 1, n)
    if n == 1:
        for label, call in (("staffing", lambda: staffing_numba(a, root, decay, log_term)),
                            ("kingman", lambda: kingman_numba(utilization, scv))):
            t = time.perf_counter()
            call()
            print(f"compile {label}|{time.perf_counter() - t:.2f}", flush=True)
    compare(f"staffing numexpr {n}", lambda: queueing.servers_at_decay(a, root, decay, log_term),
            lambda: numexpr.evaluate(STAFFING))
    compare(f"staffing numba {n}", lambda: queueing.servers_at_decay(a, root, decay, log_term),
            lambda: staffing_numba(a, root, decay, log_term))
    compare(f"kingman numba {n}", lambda: queueing.kingman_exponent(utilization, scv),
            lambda: kingman_numba(utilization, scv))
'''


def environment(tmp: Path) -> Path:
    """A virtual environment with this checkout's numpy and scipy, numba and numexpr; its python."""
    venv = tmp / "venv"
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    pins = [f"numpy=={version('numpy')}", f"scipy=={version('scipy')}", "numba", "numexpr"]
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *pins],
                   check=True, capture_output=True, timeout=900)
    return python


#: numpy's functions of one transcendental or root evaluation per element that the core calls as ``np.<name>``
TRANSCENDENTALS = ("exp", "expm1", "exp2", "log", "log1p", "log2", "sqrt", "power")


def transcendental_share(scenario_name: str, repeats: int = 5) -> dict[str, float]:
    """Share of an evaluation's wall time in each of :data:`TRANSCENDENTALS` [-], timed by wrapping numpy's attribute
    for the run (``**`` on arrays is not seen: the core raises to powers with it in a few places)."""
    import time

    import numpy as np

    import tco
    from tco.core.evaluate import evaluate
    from tco.studies.chunks import EVALUATION_BLOCK
    from tco.studies.sampling import draw_chunk, sampling_plan

    scenario = tco.load_scenario(scenario_name)
    values = scenario.values() | draw_chunk(sampling_plan(scenario), 0, 0, EVALUATION_BLOCK)
    spent = dict.fromkeys(TRANSCENDENTALS, 0.0)
    originals = {name: getattr(np, name) for name in TRANSCENDENTALS}

    def timed(name):
        function = originals[name]

        def call(*args, **kwargs):
            start = time.perf_counter()
            out = function(*args, **kwargs)
            spent[name] += time.perf_counter() - start
            return out
        return call

    evaluate(scenario.structure, values)
    try:
        for name in TRANSCENDENTALS:
            setattr(np, name, timed(name))
        start = time.perf_counter()
        for _ in range(repeats):
            evaluate(scenario.structure, values)
        total = time.perf_counter() - start
    finally:
        for name, function in originals.items():
            setattr(np, name, function)
    return {name: seconds / total for name, seconds in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="default", help="bundled scenario of the time-share figure")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    shares = transcendental_share(args.scenario)
    print(f"engine time in numpy's transcendentals and roots, {args.scenario}, one block of all-drawn draws: "
          f"{sum(shares.values()):.1%} ("
          + ", ".join(f"{name} {share:.1%}" for name, share in sorted(shares.items(), key=lambda kv: -kv[1]) if share)
          + ")")
    with tempfile.TemporaryDirectory(prefix="accelerators-") as tmp:
        try:
            python = environment(Path(tmp))
            out = subprocess.run([str(python), "-c", KERNELS, str(ROOT)], check=True, capture_output=True, text=True,
                                 timeout=900, cwd=tmp).stdout
        except (subprocess.SubprocessError, OSError) as exc:
            detail = getattr(exc, "stderr", b"") or b""
            detail = detail.decode(errors="replace") if isinstance(detail, bytes) else detail
            print("accelerators: skipped: " + (detail.strip().splitlines() or [type(exc).__name__])[-1][:100])
            return
    print("numexpr and numba against the engine's numpy, one core (ratio above 1: the accelerator is faster)")
    print(f"  {'kernel, accelerator, draws':<34s} {'numpy us':>11s} {'accel. us':>11s} {'ratio':>7s} {'max rel. diff':>14s}")
    for line in out.strip().splitlines():
        name, *figures = line.split("|")
        if len(figures) == 1:
            print(f"  {name + ' [s]':<34s} {figures[0]:>11s}")
            continue
        numpy_us, accelerated_us, diff = figures
        print(f"  {name:<34s} {float(numpy_us):>11,.1f} {float(accelerated_us):>11,.1f} "
              f"{float(numpy_us) / float(accelerated_us):>6.2f}x {diff:>14s}")


if __name__ == "__main__":
    main()
