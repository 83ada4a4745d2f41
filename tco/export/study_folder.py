"""Run a study: every analysis it names, written to one output folder, atomically.

The folder holds ``summary.json`` (resolved scenario, parameters, study, seed, package
version, time taken, headline results), one CSV per table and one self-contained HTML
figure per analysis. Files are written into a temporary sibling folder that is renamed
into place only when every analysis succeeded.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from tco import __version__
from tco.foundation.errors import InputError
from tco.foundation.files import new_folder, process_alive, release_quietly, remove_stale, write_failure
from tco.foundation.plain_values import json_safe
from tco.foundation.safe_csv import to_csv
from tco.inputs.scenario import Scenario
from tco.present.parameter_table import parameters
from tco.present.study_figures import (
    cascade_figure,
    map_figure,
    mc_figure,
    missing_note,
    morris_figure,
    portfolio_figure,
    sobol_figure,
    sweep_figure,
    tornado_figure,
)
from tco.studies.cascade import cascade_under_uncertainty
from tco.studies.chunks import Progress
from tco.studies.gridmap import grid_map
from tco.studies.metrics import parse_metric
from tco.studies.montecarlo import MonteCarloResult, monte_carlo
from tco.studies.parallel import ChunkRunner, StudyInterrupted
from tco.studies.portfolio import portfolio
from tco.studies.sensitivity import Sensitivity, morris, sobol, unconverged_indices
from tco.studies.spec import StudySpec, axis_range, check_study_sizes, outside_sourced, study_portfolio_cells
from tco.studies.sweep import sweep
from tco.studies.tornado import tornado


@dataclass
class StudyRun:
    """What a study produced: tables by file stem, figures by file stem, headline results, timings."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, object] = field(default_factory=dict)
    results: dict[str, object] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def run_analyses(study: StudySpec, scenario: Scenario, seed: int, progress: Progress = None,
                 runner: ChunkRunner | None = None) -> StudyRun:
    """Compute every analysis of the study (nothing is written).

    The chunked analyses (map, Monte Carlo, Sobol, Morris, portfolio) run on ``runner``
    (default: in this process) and report ``progress`` (default: the runner's). If one
    stops, :class:`StudyInterrupted` lists the analyses completed before it.

    Parameters
    ----------
    study : StudySpec
        The validated study, whose analyses all run.
    scenario : tco.inputs.scenario.Scenario
        The scenario it studies.
    seed : int [-]
        The seed.
    progress, runner : Progress, ChunkRunner, optional
        Progress of the chunked analyses (default: the runner's), and the runner they share
        (default: a new one in this process).

    Returns
    -------
    StudyRun
        Tables and figures by file stem, headline results and timings [s].
    """
    run = StudyRun()
    runner = runner or ChunkRunner(progress=progress)
    check_study_sizes(study, scenario, runner)
    try:
        _run_analyses(run, study, scenario, seed, progress, runner)
    except StudyInterrupted as exc:
        exc.completed_analyses = list(run.seconds)
        raise
    return run


def _run_analyses(run: StudyRun, study: StudySpec, scenario: Scenario, seed: int, progress: Progress,
                  runner: ChunkRunner) -> None:
    a = study.analyses
    if a.cascade:

        started = time.perf_counter()
        frame = cascade_under_uncertainty(scenario, a.cascade.samples, seed, runner, progress)
        run.tables["cascade"], run.figures["cascade"] = frame, cascade_figure(frame)
        run.results["cascade"] = {"samples": a.cascade.samples, "devices": frame.reset_index().to_dict(orient="records")}
        run.seconds["cascade"] = time.perf_counter() - started
        return
    metric = parse_metric(scenario, study.metric)
    if a.tornado:
        started = time.perf_counter()
        frame = tornado(scenario, metric, a.tornado.params)
        run.tables["tornado"], run.figures["tornado"] = frame, tornado_figure(frame, metric)
        swings = frame[frame["swing"].notna()]
        misses = frame[(frame["misses_low"] != "") | (frame["misses_high"] != "")]
        run.results["tornado"] = {"metric": metric.name, "baseline": scenario.structure.baseline,
                                  "flips_winner": frame.loc[frame["crosses_breakeven"], "param"].tolist(),
                                  "largest_swing": swings.head(5)[["param", "swing"]].to_dict(orient="records"),
                                  "misses_targets": misses[["param", "low", "high", "unit", "misses_low",
                                                            "misses_high"]].to_dict(orient="records")}
        run.seconds["tornado"] = time.perf_counter() - started
    if a.sweep:
        started = time.perf_counter()
        metrics = [parse_metric(scenario, m) for m in a.sweep.metrics or [study.metric]]
        frame = sweep(scenario, a.sweep.param, *axis_range(scenario, a.sweep), a.sweep.points, a.sweep.log, metrics)
        breakevens = frame.attrs["breakevens"]
        run.tables["sweep"], run.tables["sweep_breakevens"] = frame, pd.DataFrame(breakevens)
        run.figures["sweep"] = sweep_figure(frame, metrics)
        run.results["sweep"] = {"param": a.sweep.param, "low": float(frame[a.sweep.param].iloc[0]),
                                "high": float(frame[a.sweep.param].iloc[-1]), "breakevens": breakevens,
                                "windows": frame.attrs["windows"]}
        if outside_sourced(scenario, a.sweep):  # swept as given; said only where it applies
            run.results["sweep"]["outside_sourced_range"] = outside_sourced(scenario, a.sweep)
        run.seconds["sweep"] = time.perf_counter() - started
    if a.map:
        started = time.perf_counter()
        map_metric = parse_metric(scenario, a.map.metric or study.metric)
        grid = grid_map(scenario, a.map.x.param, a.map.y.param, axis_range(scenario, a.map.x), axis_range(scenario, a.map.y),
                        a.map.x.points, a.map.y.points, map_metric, a.map.x.log, a.map.y.log, runner, progress=progress)
        run.tables["map"], run.tables["map_contour"] = grid.frame(), grid.contour()
        run.figures["map"] = map_figure(grid)
        run.results["map"] = {"share_of_map_where_option_wins": float(grid.wins.mean()), "option": map_metric.option,
                              "share_of_map_where_a_latency_target_is_missed": float(grid.missed.mean())}
        outside = {side: o for side, ax in (("x", a.map.x), ("y", a.map.y)) if (o := outside_sourced(scenario, ax))}
        if outside:
            run.results["map"]["outside_sourced_range"] = outside
        run.seconds["map"] = time.perf_counter() - started
    if a.monte_carlo:
        started = time.perf_counter()
        metrics = [parse_metric(scenario, m) for m in a.monte_carlo.metrics or [study.metric]]
        correlations = [(c.a, c.b, c.rho) for c in a.monte_carlo.correlations]
        mc = a.monte_carlo
        result = monte_carlo(scenario, metrics, mc.samples, seed, correlations, mc.chunk_size, keep=mc.keep_samples,
                             runner=runner, progress=progress)
        run.tables["montecarlo_summary"], run.tables["montecarlo_samples"] = result.summary, result.samples
        run.tables["montecarlo_distribution"] = distribution_table(result, metrics)
        for i, m in enumerate(metrics):
            run.figures[f"montecarlo_{i}" if i else "montecarlo"] = mc_figure(result, m)
        run.results["monte_carlo"] = {"samples": a.monte_carlo.samples, "chunk_size": result.chunk_size,
                                      "sampled_params": result.params, "summary": result.summary.to_dict(orient="records"),
                                      "conditioned_draws": [asdict(r) for r in result.conditioned]}
        run.seconds["monte_carlo"] = time.perf_counter() - started
    if a.sobol:
        started = time.perf_counter()
        result = sobol(scenario, metric, a.sobol.n, seed, a.sobol.params, runner=runner, progress=progress)
        frame = result.indices
        run.tables["sobol"] = frame
        run.figures["sobol"] = sobol_figure(frame, title=f"Sobol indices of {metric.name}{missing_note(result)}")
        run.results["sobol"] = {"n": a.sobol.n, "metric": metric.name, "top": frame.head(5).to_dict(orient="records"),
                                **missing_a_target(result, "sobol", run.tables)}
        unconverged = unconverged_indices(frame)
        if unconverged:  # shares of variance outside [0, 1] beyond their interval: no finding (present only then)
            run.results["sobol"]["unconverged"] = unconverged
        run.seconds["sobol"] = time.perf_counter() - started
    if a.morris:
        started = time.perf_counter()
        result = morris(scenario, metric, a.morris.trajectories, a.morris.levels, seed, a.morris.params, runner=runner,
                        progress=progress)
        frame = result.indices
        run.tables["morris"], run.figures["morris"] = frame, morris_figure(frame, metric, missing_note(result))
        run.results["morris"] = {"metric": metric.name, "top": frame.head(5).to_dict(orient="records"),
                                 **missing_a_target(result, "morris", run.tables)}
        run.seconds["morris"] = time.perf_counter() - started
    if a.portfolio:
        started = time.perf_counter()
        p = a.portfolio
        frame = portfolio(study_portfolio_cells(scenario, p), p.metric, p.samples, seed, runner, progress=progress)
        run.tables["portfolio"], run.figures["portfolio"] = frame, portfolio_figure(frame)
        run.results["portfolio"] = {"cells": len(frame), "samples_per_cell": p.samples, "baseline": p.baseline,
                                    "metric": p.metric,
                                    "p_win": frame[["model", "workload", "option", "p_win", "p50",
                                                    "p_baseline_feasible"]].to_dict(orient="records")}
        run.seconds["portfolio"] = time.perf_counter() - started


def missing_a_target(result: Sensitivity, kind: str, tables: dict[str, pd.DataFrame]) -> dict:
    """The summary's account of the fleets a Sobol or Morris analysis compares: which options, the share of its model
    runs where one misses a latency target and, where that share is neither 0 nor 1, the five inputs that most decide
    it (their table ``<kind>_missing_a_target`` added to ``tables``); nothing for a metric that compares no fleet.

    Parameters
    ----------
    result : tco.studies.sensitivity.Sensitivity
        The analysis.
    kind : str
        ``"sobol"`` or ``"morris"``.
    tables : dict[str, pandas.DataFrame]
        The run's tables.

    Returns
    -------
    dict
        ``compares``, ``share_of_runs_missing_a_target`` [-] and ``missing_a_target_top`` (where there is one; for
        Sobol, ``missing_a_target_unconverged`` where some of those indices lie outside [0, 1] beyond their interval).
    """
    if not result.compares:
        return {}
    out = {"compares": list(result.compares), "share_of_runs_missing_a_target": result.share_missing_a_target}
    if result.missing_a_target is not None:
        tables[f"{kind}_missing_a_target"] = result.missing_a_target
        out["missing_a_target_top"] = result.missing_a_target.head(5).to_dict(orient="records")
        unconverged = unconverged_indices(result.missing_a_target) if kind == "sobol" else []
        if unconverged:  # as the metric's own: no driver is named from them
            out["missing_a_target_unconverged"] = unconverged
    return out


def distribution_table(result: MonteCarloResult, metrics) -> pd.DataFrame:
    """Every metric's CDF and exceedance over all draws (:meth:`MonteCarloResult.distribution`), one block per metric.

    Parameters
    ----------
    result : MonteCarloResult
        A Monte Carlo run.
    metrics : Sequence[Metric]
        Its metrics.

    Returns
    -------
    pandas.DataFrame
        ``metric``, ``unit``, ``value`` [unit of the metric], ``cdf`` and ``exceedance`` [-].
    """
    return pd.concat([result.distribution(m).assign(metric=m.name, unit=m.unit) for m in metrics],
                     ignore_index=True)[["metric", "unit", "value", "cdf", "exceedance"]]


def summary(study: StudySpec, scenario: Scenario, seed: int, run: StudyRun, total_s: float) -> dict:
    """The contents of ``summary.json``.

    Parameters
    ----------
    study : StudySpec
        The study, dumped as run.
    scenario : tco.inputs.scenario.Scenario
        Its scenario, dumped with its parameters.
    seed : int [-]
        The seed used.
    run : StudyRun
        What the analyses produced.
    total_s : float [s]
        Wall time of the whole study.

    Returns
    -------
    dict
        The study, question, seed, version, timings [s], results, scenario, parameters and files.
    """
    return {
        "study": study.model_dump(mode="json", exclude_none=True),
        "question": study.question,
        "seed": seed,
        "tco_version": __version__,
        "seconds": {"total": total_s, **run.seconds},
        "results": run.results,
        "scenario": scenario.to_dict(),
        "params": parameters(scenario).to_dict(orient="records"),
        "files": sorted([f"{k}.csv" for k in run.tables] + [f"{k}.html" for k in run.figures] + ["summary.json"]),
    }


def run_study(study: StudySpec, scenario: Scenario, out_dir: Path | str, seed: int | None = None,
              progress: Progress = None, runner: ChunkRunner | None = None) -> Path:
    """Run the study and write its folder at ``out_dir`` (replaced if it exists); returns the folder.

    Nothing is written until every analysis has completed: an interrupted study
    (:class:`StudyInterrupted`) leaves neither ``out_dir`` nor a temporary folder behind.

    Parameters
    ----------
    study : StudySpec
        What to run and write.
    scenario : tco.inputs.scenario.Scenario
        The scenario written beside the results (``summary.json``).
    out_dir : pathlib.Path or str
        The output folder (:func:`check_output_dir`).
    seed : int, optional [-]
        Overrides the study's seed.
    progress, runner : Progress, ChunkRunner, optional
        Passed to :func:`run_analyses`: the display or callback of its progress and the
        processes its chunked analyses use.

    Returns
    -------
    pathlib.Path
        The folder written: a CSV per table, an HTML per figure, ``summary.json``.
    """
    out_dir = check_output_dir(Path(out_dir))
    seed = study.seed if seed is None else int(seed)
    started = time.perf_counter()
    run = run_analyses(study, scenario, seed, progress, runner)
    tmp, failure = None, None
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        _recover_interrupted_swap(out_dir)
        tmp = new_folder(out_dir.parent, f".{out_dir.name}.")
        for stem, frame in run.tables.items():
            to_csv(frame, tmp / f"{stem}.csv", index=False)
        for stem, figure in run.figures.items():
            figure.write_html(tmp / f"{stem}.html", include_plotlyjs=True, full_html=True)
        (tmp / STUDY_MARKER).write_text("written by tco study; the folder is replaced when the study runs again\n")
        data = summary(study, scenario, seed, run, time.perf_counter() - started)
        (tmp / "summary.json").write_text(json.dumps(json_safe(data), indent=2, default=str) + "\n", encoding="utf-8")
        _replace_dir(tmp, out_dir)
    except OSError as exc:
        failure = write_failure(exc)
        release_quietly(exc)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if failure:
        raise InputError.one("--out", str(out_dir), failure)
    return out_dir


def _recover_interrupted_swap(target: Path) -> None:
    """Undo what a run killed between moving the previous output aside and moving the new one in left behind: the
    previous output goes back to ``target`` (when it is missing), and the killed run's folders are removed
    (:func:`tco.foundation.files.remove_stale`)."""
    pattern = f".{target.name}.old."
    for entry in sorted(target.parent.glob(f"{pattern}*")):
        previous = entry / target.name
        pid = entry.name[len(pattern):].split(".")[0]
        if not target.exists() and previous.is_dir() and pid.isdigit() and not process_alive(int(pid)):
            previous.rename(target)
    remove_stale(target.parent, pattern)
    remove_stale(target.parent, f".{target.name}.")


#: file that marks a folder as a study's output, so a rerun may replace it (and nothing else)
STUDY_MARKER = ".tco-study"


def check_output_dir(out_dir: Path) -> Path:
    """The output folder as an absolute path, refused when it would replace what is not a study.

    Parameters
    ----------
    out_dir : pathlib.Path
        The folder asked for.

    Returns
    -------
    pathlib.Path
        The resolved folder; an :class:`~tco.foundation.errors.InputError` names ``--out`` when it exists
        without the study marker, or is the current folder or one of its parents.
    """
    resolved = out_dir.resolve()
    if resolved == Path.cwd().resolve() or resolved in Path.cwd().resolve().parents or resolved.parent == resolved:
        raise InputError.one("--out", str(out_dir), "is the current folder or one above it: name a folder for the study "
                                                    "(e.g. exports/<study-name>)")
    if resolved.exists() and not (resolved / STUDY_MARKER).is_file() and (not resolved.is_dir() or any(resolved.iterdir())):
        raise InputError.one("--out", str(out_dir), f"exists and is not a tco study folder (no {STUDY_MARKER} marker); "
                                                    "a study replaces its own output only: choose another folder")
    return resolved


def _replace_dir(new: Path, target: Path) -> None:
    """Move ``new`` to ``target``, replacing a previous output folder only once ``new`` is complete."""
    if target.exists():
        old = new_folder(target.parent, f".{target.name}.old.")
        target.rename(old / target.name)
        new.rename(target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        new.rename(target)
