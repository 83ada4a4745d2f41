"""Cost per million output tokens against latency over placements, TPOT targets and batch caps.

Every point is labelled with which phase ran on which device and with the bytes of a
decode step that did not fit the decode device's fastest memory (seed 003: "label each
point with which phase ran on which device, and with the bytes that did not fit").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tco.analysis.evaluation import evaluate_arrays
from tco.analysis.program_views import other_generations_held
from tco.core import names as named
from tco.core.fleet.pareto import pareto_mask
from tco.foundation.errors import InputError
from tco.inputs.catalog import load_catalog
from tco.inputs.fleet_settings import Pareto
from tco.inputs.variants import (
    check_replica_holds_model,
    placement_name,
    placement_spec,
    replica_minimums,
    scenario_devices,
    scenario_link,
    with_options,
)


def _check_device(scenario, device: str, path: str) -> None:
    known = set(scenario_devices(scenario)) | set(load_catalog().devices) | set(scenario.spec.devices)
    if device not in known:
        raise InputError.one(path, device, f"is not a known device; known: {', '.join(sorted(known))}")


def roadmap_devices_held(scenario) -> list[str]:
    """The general-purpose generations a roadmap baseline's fleet runs within the horizon other than its own device
    (:func:`tco.analysis.program_views.other_generations_held`; empty without a roadmap): the frontier's default
    devices include them, so the GPU fleet the baseline's costs are of is on the chart.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario (evaluated at its base values when it has a roadmap).

    Returns
    -------
    list[str]
        Device ids, in the order the fleet holds them, none of the scenario's own.
    """
    if not scenario.structure.generations:
        return []
    results, _ = evaluate_arrays(scenario, {})
    own = scenario_devices(scenario)
    return [d for d in other_generations_held(results[scenario.structure.baseline]) if d not in own]


def placements(scenario, cfg: Pareto) -> list[dict]:
    """Scenario-file options for each placement (explicit, or every device pair), validated.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario whose devices, replica minimums and KV link are used.
    cfg : tco.inputs.fleet_settings.Pareto
        Explicit ``placements`` (each replica checked to hold the model), or ``devices``
        (default: the scenario's, then the roadmap generations its baseline runs: :func:`roadmap_devices_held`),
        and the ``link``.

    Returns
    -------
    list[dict]
        One option mapping per placement, named ``X`` (colocated) or ``X>Y`` (prefill on X,
        decode on Y), as :func:`tco.inputs.variants.placement_spec` writes them.
    """
    minimums = replica_minimums(scenario)
    link = cfg.link or scenario_link(scenario)
    if cfg.placements is not None:
        specs = []
        for i, p in enumerate(cfg.placements):
            for role, device, n in (("prefill", p.prefill, p.prefill_devices_per_replica),
                                    ("decode", p.decode, p.decode_devices_per_replica)):
                path = f"fleet_dynamics.pareto.placements[{i}].{role}"
                _check_device(scenario, device, path)
                check_replica_holds_model(scenario, device, n, path)
            specs.append(placement_spec(p.prefill, p.decode, link, minimums, p.prefill_devices_per_replica,
                                        p.decode_devices_per_replica))
        return specs
    devices = cfg.devices or [*scenario_devices(scenario), *roadmap_devices_held(scenario)]
    for i, device in enumerate(devices):
        _check_device(scenario, device, f"fleet_dynamics.pareto.devices[{i}]")
    return [placement_spec(x, y, link, minimums) for x in devices for y in devices]


def pareto(scenario, cfg: Pareto) -> pd.DataFrame:
    """Cost per million output tokens against latency over placements, TPOT targets and batch caps.

    One engine call broadcasts the TPOT targets (rows) against the batch caps (columns).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario the placements are added to.
    cfg : tco.inputs.fleet_settings.Pareto
        Placements or devices, ``tpot_targets_s`` [s] and ``batch_caps`` [sequences].

    Returns
    -------
    pandas.DataFrame
        One row per (placement, TPOT target, batch cap): ``usd_per_mtok`` [USD/Mtok],
        ``ttft_s`` and ``tpot_s`` [s], ``batch`` [sequences], ``spilled_bytes`` [B],
        ``feasible``, the flags ``on_frontier_tpot`` / ``on_frontier_ttft`` (feasible points no
        other point beats on cost and that latency), ``roadmap_generation`` (a device of the placement is a roadmap
        generation the baseline runs, added to the default devices: :func:`roadmap_devices_held`) and a ``label``.
    """
    specs = placements(scenario, cfg)
    roadmap = set(roadmap_devices_held(scenario)) if cfg.devices is None and cfg.placements is None else set()
    derived = with_options(scenario, specs)
    tpot = np.asarray(cfg.tpot_targets_s, float)[:, None]
    caps = np.asarray(cfg.batch_caps, float)[None, :]
    results, _ = evaluate_arrays(derived, {named.workload.tpot_target_s: tpot, named.workload.max_batch: caps})
    frames = []
    for spec in specs:
        r = results[spec["name"]]
        prefill = spec.get("colocated", spec.get("prefill"))["device"]
        decode = spec.get("colocated", spec.get("decode"))["device"]
        grid_t, grid_b = np.broadcast_arrays(tpot, caps)
        frames.append(pd.DataFrame({
            "placement": spec["name"], "prefill_device": prefill, "decode_device": decode,
            "tpot_target_s": grid_t.ravel(), "batch_cap": grid_b.ravel(),
            "usd_per_mtok": r.lcot_usd_per_mtok.ravel(), "ttft_s": r.ttft_s.ravel(), "tpot_s": r.tpot_s.ravel(),
            "batch": r.batch.ravel(), "spilled_bytes": r.spilled_bytes.ravel(), "feasible": r.feasible.ravel() > 0}))
    table = pd.concat(frames, ignore_index=True)
    ok = table["feasible"].to_numpy()
    cost = np.where(ok, table["usd_per_mtok"], np.nan)
    table["on_frontier_tpot"] = pareto_mask(cost, table["tpot_s"])
    table["on_frontier_ttft"] = pareto_mask(cost, table["ttft_s"])
    table["roadmap_generation"] = table["prefill_device"].isin(roadmap) | table["decode_device"].isin(roadmap)
    table["label"] = [f"prefill {p} / decode {d}, {s / 1e9:.3g} GB spilled"
                      + (" (a roadmap generation the baseline runs)" if g else "")
                      for p, d, s, g in zip(table["prefill_device"], table["decode_device"], table["spilled_bytes"],
                                            table["roadmap_generation"], strict=True)]
    return table


__all__ = ["pareto", "placement_name", "placements"]
