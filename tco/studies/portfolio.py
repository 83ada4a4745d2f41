"""Portfolio study: every device x model x workload x fleet option of a list, under uncertainty.

Each *cell* is a scenario derived from the study's scenario and validated through the
ordinary path (:func:`tco.inputs.loading.scenario_from_dict`): the cell's model, the scenario's
workload with the preset's fields replaced, and two options, the baseline device alone
(colocated) and the challenger:

- ``colocated``: the challenger device alone;
- ``disaggregated``: prefill on the baseline device, decode on the challenger, KV over
  ``kv_link``.

Devices per replica are left to the model (the smallest replica that holds the weights and
one sequence's KV). Every cell is a Monte Carlo of ``samples`` draws from its own sampled
parameters with the study seed, evaluated in chunks on the study's
:class:`~tco.studies.parallel.ChunkRunner` (the chunks of all cells in one queue) and folded
into running aggregates (:mod:`tco.studies.montecarlo`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from tco.foundation import limits
from tco.foundation.errors import FieldError, InputError
from tco.inputs.loading import scenario_from_dict
from tco.inputs.scenario import Scenario
from tco.studies.chunks import CHUNK_SIZE, Cancel, Progress
from tco.studies.metrics import parse_metric
from tco.studies.montecarlo import metric_cell, run_cells, summary_frame
from tco.studies.parallel import ChunkRunner
from tco.studies.sampling import sampling_plan

SHAPES = ("colocated", "disaggregated")
#: scenario keys a cell does not inherit: they name options or parameters the cell may not have
NOT_INHERITED = ("study", "fleet_dynamics", "set", "program")


@dataclass(frozen=True)
class Cell:
    """One portfolio cell: its labels and its validated scenario."""

    model: str
    workload: str
    device: str
    shape: str
    scenario: Scenario

    @property
    def option(self) -> str:
        return self.scenario.structure.challengers[0].name


def cell_data(base: dict, baseline: str, model: str, workload: Mapping[str, object], device: str, shape: str,
              kv_link: str) -> dict:
    """The scenario data of one cell (module docstring), before validation.

    Parameters
    ----------
    base : dict
        The base scenario as plain data (:meth:`tco.inputs.scenario.Scenario.to_dict`); its study,
        fleet settings, edits and program are not inherited (the program is, when the cell's
        device is the program's).
    baseline : str
        The general device every cell is compared against.
    model : str
        Model id.
    workload : Mapping[str, object] [each workload field's unit]
        Workload fields replacing the base scenario's.
    device : str
        The challenger device.
    shape : str
        ``colocated``, or ``disaggregated`` (prefill on the baseline, decode on the device).
    kv_link : str
        Link id of a disaggregated cell.

    Returns
    -------
    dict
        Scenario-file data with two options: the baseline and the challenger.
    """
    data = {k: v for k, v in base.items() if k not in NOT_INHERITED}
    program = base.get("program")
    if program and program.get("device") == device:
        data["program"] = program
    challenger = ({"name": device, "colocated": {"device": device}} if shape == "colocated" else
                  {"name": f"{baseline}+{device}", "prefill": {"device": baseline}, "decode": {"device": device},
                   "kv_link": kv_link})
    data.update(name=f"{base.get('name', 'scenario')}.{model}.{device}.{shape}", model=model,
                workload={**base["workload"], **workload},
                options=[{"name": baseline, "colocated": {"device": baseline}}, challenger], baseline=baseline)
    return data


def portfolio_cells(scenario: Scenario, baseline: str, devices: Sequence[str], models: Sequence[str] | None = None,
                    workloads: Mapping[str, Mapping[str, object]] | None = None, shapes: Sequence[str] = ("colocated",),
                    kv_link: str = "ib-400g", path: str = "analyses.portfolio") -> list[Cell]:
    """Every valid cell, in order model, workload, device, shape; all errors at once, under ``path``.

    A colocated cell whose challenger is the baseline device is skipped (it would compare a
    device with itself).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The base scenario (economics, latency targets, catalog overrides).
    baseline : str
        The general device.
    devices : Sequence[str]
        Challenger devices.
    models : Sequence[str], optional
        Model ids (default: the scenario's).
    workloads : Mapping[str, Mapping[str, object]], optional
        Presets by name: workload fields replaced (default: the scenario's).
    shapes : Sequence[str]
        ``colocated`` and/or ``disaggregated``.
    kv_link : str
        Link id of disaggregated cells.
    path : str
        Field path errors are named under.

    Returns
    -------
    list[Cell]
        The cells, each with its validated scenario.
    """
    base = scenario.to_dict()
    models = list(models or [base["model"]])
    workloads = dict(workloads or {"scenario": {}})
    limits.check_count(path, len(models) * len(workloads) * len(devices) * len(shapes), "cells (models x workloads x "
                       "devices x shapes)", limits.MAX_PORTFOLIO_CELLS, "each cell is a scenario validated in ~5 ms")
    cells, errors = [], []
    for model in models:
        for name, preset in workloads.items():
            for device in devices:
                for shape in shapes:
                    if shape == "colocated" and device == baseline:
                        continue
                    where = f"{path}[model={model}, workload={name}, device={device}, {shape}]"
                    try:
                        data = cell_data(base, baseline, model, preset, device, shape, kv_link)
                        cells.append(Cell(model, name, device, shape, scenario_from_dict(data, path=where)))
                    except InputError as exc:
                        errors.extend(FieldError(f"{where}.{e.path}", e.value, e.rule) for e in exc.errors)
    if errors:
        raise InputError(errors)
    if not cells:
        raise InputError.one(f"{path}.devices", list(devices), "needs at least one device other than the baseline")
    return cells


def check_portfolio_samples(cells: Sequence[Cell], samples: int, chunk_size: int, runner: ChunkRunner) -> None:
    """Refuse ``samples`` draws per cell too long for the processes of ``runner`` (:mod:`tco.foundation.limits`).

    Parameters
    ----------
    cells : Sequence[Cell]
        The cells (their options count toward the work).
    samples : int [draws]
        Draws per cell.
    chunk_size : int [draws]
        Draws per core call.
    runner : ChunkRunner
        Where the chunks run.
    """
    runner.check_run("samples", samples, "samples per cell", samples * sum(len(c.scenario.structure.options) for c in cells),
                     chunk_size)


def portfolio(cells: Sequence[Cell], kind: str = "ratio", samples: int = 10_000, seed: int = 0,
              runner: ChunkRunner | None = None, chunk_size: int = CHUNK_SIZE, progress: Progress = None,
              cancel: Cancel = None) -> pd.DataFrame:
    """One row per cell: labels, the challenger's metric summary and P(win), by one Monte Carlo over every cell.

    Parameters
    ----------
    cells : Sequence[Cell]
        The cells (:func:`portfolio_cells`).
    kind : str
        ``ratio`` or ``npv``: the challenger against the baseline.
    samples : int [draws]
        Draws per cell.
    seed : int [-]
        The seed.
    runner, chunk_size, progress, cancel : ChunkRunner, int [draws], Progress, Cancel, optional
        The portfolio's one Monte Carlo: its runner, its draws per core call, the progress of
        every cell's draws, and a cancellation check between chunks.

    Returns
    -------
    pandas.DataFrame
        ``model``, ``workload``, ``device``, ``shape``, ``option`` and the metric's summary
        (:func:`tco.studies.montecarlo.summary_frame`: mean, P10/P50/P90 [- for ratio, USD for
        npv], ``p_win`` [-]).
    """
    runner = runner or ChunkRunner()
    check_portfolio_samples(cells, samples, chunk_size, runner)
    metrics = [parse_metric(c.scenario, f"{kind}:{c.option}") for c in cells]
    mc_cells = [metric_cell(c.scenario, (m,), sampling_plan(c.scenario), samples) for c, m in zip(cells, metrics, strict=True)]
    results = run_cells(mc_cells, seed, runner, chunk_size, keep=0, label="portfolio", progress=progress, cancel=cancel)
    rows = []
    for cell, metric, result in zip(cells, metrics, results, strict=True):
        row = summary_frame([metric], result.aggregates).iloc[0].to_dict()
        rows.append({"model": cell.model, "workload": cell.workload, "device": cell.device, "shape": cell.shape,
                     "option": cell.option, **row})
    return pd.DataFrame(rows)
