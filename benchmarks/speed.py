"""Every figure of the engine's speed table (issue 16) and the start-up figures (issue 15 item 1), in one run.

Run: ``python benchmarks/speed.py [--quick]`` (``make bench`` runs it first). Prints one table:
figure, measured value, target, and the 1-minute load average of the machine when it was taken
(the machine has 2 cores shared with other jobs: rates per core are CPU time, which other
processes disturb less than wall time; wall time is printed beside it). Nothing here fails.

- **memory bandwidth** (STREAM-like, numpy on one core, arrays of 160 MB): copy ``b[:] = a`` and
  add ``c = a + b`` (one ufunc pass: 2 reads + 1 write, what each of the engine's elementwise steps
  costs once its arrays no longer fit the caches); the triad ``a = b + s c`` takes numpy two passes.
- **engine** [option-evaluations/s per core]: the public core call ``evaluate(structure, values)`` on
  the default scenario (3 options, shape search included), 1,000,000 draws, (a) a few parameters
  drawn, (b) every uncertain parameter drawn (what Monte Carlo and Sobol do), each as one call and in the
  blocks the studies use (:data:`tco.studies.chunks.EVALUATION_BLOCK`). One call of a million draws is
  bound by memory: its result alone holds ~250 arrays of 8 MB, and laying blocks' results end to end
  to give one call the blocks' speed costs more than it saves (measured: 2.5 s of blocks, 1.9-3.7 s to
  join them, against 4.3 s for the one call). Against the bandwidth bound:
  the engine's time per draw expressed in out-of-cache ``add`` passes, and the share of its time that
  streaming its own inputs and outputs once would take.
- **fixed cost of one call** (N = 1) [ms CPU], and the vectorized rate over a loop of such calls.
- **Monte Carlo** 1,000,000 draws x 3 metrics [s].
- **GenZ-LLM-Analyzer** (pip package ``genz-llm``, installed in a throwaway virtual environment; skipped
  with a message when it cannot be installed, e.g. offline): its decode-model evaluations per second on
  one comparable evaluation (Llama-3.1-8B decode at batch 1 on an H100-like system), and tco's vectorized
  rate over it.
- **LibreOffice** recalculating the exported default workbook (one evaluation of every option per
  recalculation), and tco's vectorized rate over it.
- **dask**: a Monte Carlo of 10,000,000 draws on a local cluster of 1 and of 2 single-threaded
  workers: speed-up and the peak resident memory of each worker.
- **start-up**: ``tco --version`` and ``tco compare`` in fresh processes (best and first of three).
"""

# ruff: noqa: E402  (sys.path is fixed before the imports, see below)
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numpy as np

import tco
from tco.core.evaluate import evaluate
from tco.studies.chunks import EVALUATION_BLOCK, chunk_bounds
from tco.studies.sampling import draw_chunk, sampling_plan

#: parameters drawn in the "few parameters" figure
FEW = ("economics.discount_rate", "workload.requests_per_s", "economics.electricity_usd_per_kwh")
GENZ_SCRIPT = """
import time
from GenZ import decode_moddeling
system = {"Flops": 989, "Memory_size": 80, "Memory_BW": 3350, "ICN": 450, "real_values": True}
def once(i):
    return decode_moddeling(model="meta-llama/Llama-3.1-8B", batch_size=1, input_tokens=1024 + i % 997, output_tokens=256,
                            system_name=system, bits="bf16", tensor_parallel=1)
once(0)
n, start, cpu = 0, time.perf_counter(), time.process_time()
while time.perf_counter() - start < 5.0 or n < 3:
    n += 1
    once(n)
print(n / (time.process_time() - cpu), n / (time.perf_counter() - start))
"""

rows: list[tuple[str, str, str, str]] = []


def study_metrics(scenario) -> list[str]:
    """Three metrics as ``monte-carlo-default`` has them: the first challenger's cost ratio, the last one's NPV,
    the baseline's LCOT (on the default scenario: ratio:groq, npv:h100-prefill+groq-decode, lcot:h100)."""
    challengers = [o.name for o in scenario.structure.challengers]
    return [f"ratio:{challengers[0]}", f"npv:{challengers[-1]}", f"lcot:{scenario.structure.baseline}"]


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def row(figure: str, measured: str, target: str = "") -> None:
    rows.append((figure, measured, target, load()))
    print(f"  {figure:<64s} {measured:<34s} {target:<14s} load {rows[-1][3]}", flush=True)


def timed(function, repeats: int = 3) -> tuple[float, float]:
    """(best wall s, best CPU s) of ``repeats`` runs."""
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        function()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return min(walls), min(cpus)


def stream() -> float:
    """Bandwidth of numpy's copy and add on arrays far beyond the caches [B/s]; returns the add's."""
    n = 20_000_000
    a, b, c = np.random.default_rng(0).random(n), np.empty(n), np.empty(n)
    _, copy_s = timed(lambda: np.copyto(b, a), 5)
    _, add_s = timed(lambda: np.add(a, b, out=c), 5)
    _, triad_s = timed(lambda: (np.multiply(c, 3.0, out=a), np.add(a, b, out=a)), 5)
    row("memory bandwidth, copy (numpy, 1 core, 160 MB arrays)", f"{16 * n / copy_s / 1e9:.1f} GB/s")
    row("memory bandwidth, add c = a + b (2 reads + 1 write)",
        f"{24 * n / add_s / 1e9:.1f} GB/s ({add_s / n * 1e9:.2f} ns/element)")
    row("memory bandwidth, triad a = b + s c (numpy: two passes)", f"{24 * n / triad_s / 1e9:.1f} GB/s (STREAM bytes)")
    return 24 * n / add_s


def engine(scenario, samples: int, bandwidth: float) -> float:
    """The engine figures; returns the all-drawn rate per core in blocks (as the studies run it) [option-evaluations/s]."""
    structure, options = scenario.structure, len(scenario.structure.options)
    drawn = draw_chunk(sampling_plan(scenario), 0, 0, samples)
    few_drawn = [k for k in FEW if k in drawn] or list(drawn)[:3]
    few = scenario.values() | {k: drawn[k] for k in few_drawn}
    every = scenario.values() | drawn
    def blocks(values):
        for start, stop in chunk_bounds(samples, EVALUATION_BLOCK):
            evaluate(structure, {k: (v[start:stop] if np.ndim(v) else v) for k, v in values.items()})

    wall, cpu = timed(lambda: evaluate(structure, few), 2)
    row(f"engine, {samples:,} draws, {len(few_drawn)} parameters drawn, one call",
        f"{samples * options / cpu / 1e6:.2f} M/s CPU ({samples * options / wall / 1e6:.2f} wall)", ">= 2 M/s")
    wall, cpu = timed(lambda: blocks(few), 2)
    row(f"engine, same, in blocks of {EVALUATION_BLOCK:,} draws (as the studies run it)",
        f"{samples * options / cpu / 1e6:.2f} M/s CPU ({samples * options / wall / 1e6:.2f} wall)", ">= 1 M/s (issue 11)")
    wall, cpu = timed(lambda: evaluate(structure, every), 2)
    rate = samples * options / cpu
    row(f"engine, {samples:,} draws, all {len(drawn)} uncertain parameters drawn, one call",
        f"{rate / 1e6:.2f} M/s CPU ({samples * options / wall / 1e6:.2f} wall)", ">= 2 M/s")
    wall, cpu = timed(lambda: blocks(every), 2)
    blocked = samples * options / cpu
    row(f"engine, same, in blocks of {EVALUATION_BLOCK:,} draws (as the studies run it)",
        f"{blocked / 1e6:.2f} M/s CPU ({samples * options / wall / 1e6:.2f} wall)", ">= 2 M/s")
    add_ns = 24 / bandwidth * 1e9  # one out-of-cache add per element [ns]
    per_draw_ns = options / blocked * 1e9
    results = evaluate(structure, {k: (v[:1000] if np.ndim(v) else v) for k, v in every.items()})
    outputs = sum(len(r.flat()) for r in results.values())
    streamed_ns = (len(drawn) + outputs) * 8 / bandwidth * 1e9
    row("engine vs memory bandwidth: time per draw (blocks) / one out-of-cache add",
        f"{per_draw_ns:,.0f} ns = {per_draw_ns / add_ns:,.0f} add passes")
    row(f"engine vs memory bandwidth: inputs + outputs ({len(drawn)} + {outputs} x 8 B) streamed once",
        f"{streamed_ns:,.0f} ns/draw = {streamed_ns / per_draw_ns:.1%} of the engine's time")
    return blocked


def scalar(scenario, vector_rate: float) -> float:
    """Fixed cost of one call and the vectorized/loop ratio; returns scalar option-evaluations/s."""
    structure, values, options = scenario.structure, scenario.values(), len(scenario.structure.options)
    evaluate(structure, values)
    calls = 300
    _, cpu = timed(lambda: [evaluate(structure, values) for _ in range(calls)], 3)
    row("fixed cost of one call (N = 1)", f"{cpu / calls * 1e3:.2f} ms CPU", "<= 0.5 ms")
    loop_rate = calls * options / cpu
    row("vectorized (all drawn, blocks) / loop of scalar calls", f"{vector_rate / loop_rate:,.0f}x", ">= 300x")
    return loop_rate


def monte_carlo(scenario) -> None:
    from tco.studies import monte_carlo as run

    metrics = study_metrics(scenario)
    run(scenario, metrics, 10_000, seed=1)
    wall, cpu = timed(lambda: run(scenario, metrics, 1_000_000, seed=1), 2)
    row("Monte Carlo 1,000,000 draws, 3 metrics, one process", f"{wall:.2f} s wall ({cpu:.2f} s CPU)", "<= 1.5 s")


def genz(vector_rate: float, scalar_rate: float) -> None:
    """GenZ in a throwaway virtual environment; a message when it cannot be installed."""
    with tempfile.TemporaryDirectory(prefix="genz-") as tmp:
        venv = Path(tmp) / "venv"
        python = venv / "bin" / "python"
        try:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
            subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "genz-llm"],
                           check=True, capture_output=True, timeout=600)
            out = subprocess.run([str(python), "-c", GENZ_SCRIPT], check=True, capture_output=True, text=True, timeout=600,
                                 cwd=tmp)
            rate, wall_rate = (float(x) for x in out.stdout.strip().splitlines()[-1].split())
        except (subprocess.SubprocessError, OSError, ValueError, IndexError) as exc:
            detail = getattr(exc, "stderr", b"") or b""
            detail = detail.decode(errors="replace") if isinstance(detail, bytes) else detail
            row("GenZ-LLM-Analyzer", "skipped: " + (detail.strip().splitlines() or [type(exc).__name__])[-1][:60])
            return
    row("GenZ-LLM-Analyzer, one decode evaluation (Llama-3.1-8B, H100-like)",
        f"{rate:,.1f} evaluations/s CPU ({wall_rate:,.1f} wall)")
    row("tco vectorized (all drawn, blocks) / GenZ", f"{vector_rate / rate:,.0f}x", ">= 250,000x")
    row("tco scalar call / GenZ", f"{scalar_rate / rate:,.0f}x")


def libreoffice(scenario, vector_rate: float) -> None:
    from workbook_helpers import RECALC_ALWAYS, soffice

    from tco.export import write_workbook

    if shutil.which("soffice") is None and shutil.which("libreoffice") is None:
        row("LibreOffice recalculation", "skipped: LibreOffice is not installed")
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        book = write_workbook(scenario, tmp / "book.xlsx")
        profile = tmp / "profile"
        (profile / "user").mkdir(parents=True)
        (profile / "user" / "registrymodifications.xcu").write_text(RECALC_ALWAYS)
        times = []
        for _ in range(3):  # the first warms the profile up
            start = time.perf_counter()
            subprocess.run([soffice(), "--headless", "--norestore", f"-env:UserInstallation={profile.as_uri()}",
                            "--convert-to", "xlsx", "--outdir", str(tmp / "out"), str(book)], check=True, capture_output=True)
            times.append(time.perf_counter() - start)
    best = min(times[1:])
    options = len(scenario.structure.options)
    row("LibreOffice: recalculate + save the scenario's workbook", f"{best:.2f} s ({options / best:.1f} option-evaluations/s)")
    row("tco vectorized (all drawn, blocks) / LibreOffice", f"{vector_rate * best / options:,.0f}x")


def dask(scenario, draws: int) -> None:
    from scale import PeakMemory

    from tco.studies import monte_carlo as run
    from tco.studies.parallel import ChunkRunner

    seconds, memory, results = {}, {}, {}
    for workers in (1, 2):
        with ChunkRunner(workers=workers, progress=False) as runner:
            run(scenario, study_metrics(scenario), 10_000, seed=1, runner=runner)  # workers warm (imports, scenario)
            with PeakMemory(0.05) as watch:
                start = time.perf_counter()
                results[workers] = run(scenario, study_metrics(scenario), draws, seed=1, runner=runner)
                seconds[workers] = time.perf_counter() - start
            memory[workers] = max(watch.children.values(), default=0) / 1e9
        row(f"dask Monte Carlo {draws:,} draws, {workers} worker(s)",
            f"{seconds[workers]:.1f} s, {draws / seconds[workers] / 1e6:.2f} M draws/s, peak {memory[workers]:.2f} GB/worker",
            "<= 0.7 GB/worker")
    same = results[1].summary.equals(results[2].summary)
    row("dask speed-up, 2 workers vs 1", f"{seconds[1] / seconds[2]:.2f}x (results identical: {same})", ">= 1.7x idle")


def startup() -> None:
    exe = Path(sys.executable).with_name("tco")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "tco"]
    for args, target in ((["--version"], "< 0.3 s"), (["compare"], "< 1.5 s")):
        times = []
        for _ in range(3):
            start = time.perf_counter()
            subprocess.run([*command, *args], check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        row(f"start-up: tco {' '.join(args)} (fresh process; first of 3)",
            f"best {min(times):.2f} s (first {times[0]:.2f} s)", target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", default="default", help="bundled scenario or path (default: default)")
    parser.add_argument("--samples", type=int, default=1_000_000, help="draws of the engine figures")
    parser.add_argument("--dask-draws", type=int, default=None, help="draws of the dask figure (0: skip; default 1e7)")
    parser.add_argument("--no-genz", action="store_true", help="skip the GenZ comparison (it installs a package)")
    parser.add_argument("--quick", action="store_true", help="100,000 draws, 1,000,000 for dask, no GenZ")
    args = parser.parse_args()
    if args.quick:
        args.samples, args.no_genz = 100_000, True
    if args.dask_draws is None:
        args.dask_draws = 1_000_000 if args.quick else 10_000_000
    scenario = tco.load_scenario(args.scenario)
    print(f"speed of the engine and the start-up, scenario {scenario.name} ({len(scenario.structure.options)} options; "
          f"{os.cpu_count()} cores; load = 1-minute load average)")
    print(f"  {'figure':<64s} {'measured':<34s} {'target':<14s}")
    startup()
    bandwidth = stream()
    vector_rate = engine(scenario, args.samples, bandwidth)
    scalar_rate = scalar(scenario, vector_rate)
    monte_carlo(scenario)
    libreoffice(scenario, vector_rate)
    if args.no_genz:
        row("GenZ-LLM-Analyzer", "skipped (--no-genz)")
    else:
        genz(vector_rate, scalar_rate)
    if args.dask_draws:
        dask(scenario, args.dask_draws)


if __name__ == "__main__":
    main()
