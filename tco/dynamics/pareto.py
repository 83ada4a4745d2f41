"""Cost per million output tokens against latency over placements, TPOT targets and batch caps.

Every point is labelled with which phase ran on which device and with the bytes of a
decode step that did not fit the decode device's fastest memory (seed 003: "label each
point with which phase ran on which device, and with the bytes that did not fit").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tco.analysis.evaluation import evaluate_arrays
from tco.core import names as named
from tco.core.fleet.pareto import pareto_mask
from tco.dynamics.devices import analysis_devices, check_device, with_speculation
from tco.dynamics.interactivity import provisioned_power_w
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


def placements(scenario, cfg: Pareto) -> list[dict]:
    """Scenario-file options for each placement (explicit, or every device pair), validated.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario whose devices, replica minimums and KV link are used.
    cfg : tco.inputs.fleet_settings.Pareto
        Explicit ``placements`` (each replica checked to hold the model), or ``devices``
        (default: the scenario's, then the roadmap generations its baseline runs:
        :func:`tco.dynamics.devices.analysis_devices`),
        and the ``link``.

    Returns
    -------
    list[dict]
        One option mapping per placement, named ``X`` (colocated) or ``X>Y`` (prefill on X,
        decode on Y), as :func:`tco.inputs.variants.placement_spec` writes them; then, where the scenario's options
        decode speculatively, each placement again with each of their speculation blocks
        (:func:`tco.dynamics.devices.with_speculation`).
    """
    return with_speculation(scenario, device_placements(scenario, cfg))


def device_placements(scenario, cfg: Pareto) -> list[dict]:
    """:func:`placements` before speculation: one option per explicit placement or device pair.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario whose devices, replica minimums and KV link are used.
    cfg : tco.inputs.fleet_settings.Pareto
        As in :func:`placements`.

    Returns
    -------
    list[dict]
        One option mapping per placement.
    """
    minimums = replica_minimums(scenario)
    link = cfg.link or scenario_link(scenario)
    if cfg.placements is not None:
        specs = []
        for i, p in enumerate(cfg.placements):
            for role, device, n in (("prefill", p.prefill, p.prefill_devices_per_replica),
                                    ("decode", p.decode, p.decode_devices_per_replica)):
                path = f"fleet_dynamics.pareto.placements[{i}].{role}"
                check_device(scenario, device, path)
                check_replica_holds_model(scenario, device, n, path)
            specs.append(placement_spec(p.prefill, p.decode, link, minimums, p.prefill_devices_per_replica,
                                        p.decode_devices_per_replica))
        return specs
    devices = analysis_devices(scenario, cfg.devices, "fleet_dynamics.pareto.devices")
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
        ``ttft_s`` and ``tpot_s`` [s], ``batch`` [sequences], ``spilled_bytes`` [B], ``feasible``,
        ``speculation`` (the method, ``none``), ``tokens_per_s_per_mw`` [output tokens/s per MW: the mean output tokens
        per second served over the fleet's provisioned power, every device's ``(TDP + host) x PUE``, the frontier at
        fixed power], the flags ``on_frontier_tpot`` / ``on_frontier_ttft`` (feasible points no other point beats on
        cost and that latency), ``on_frontier_power`` (feasible points no other point beats on output per provisioned
        MW and TPOT), ``roadmap_generation`` (a device of the placement is
        a roadmap generation the baseline runs, added to the default devices:
        :func:`tco.dynamics.devices.roadmap_devices_held`) and a ``label``.
    """
    specs = placements(scenario, cfg)
    # the default devices are the scenario's then the generations its baseline runs (analysis_devices): any other
    # device placed there is one of those generations (read off the placements, not by evaluating the scenario again)
    placed = {p["device"] for spec in specs for p in (spec.get("colocated"), spec.get("prefill"), spec.get("decode")) if p}
    roadmap = placed - set(scenario_devices(scenario)) if cfg.devices is None and cfg.placements is None else set()
    derived = with_options(scenario, specs)
    tpot = np.asarray(cfg.tpot_targets_s, float)[:, None]
    caps = np.asarray(cfg.batch_caps, float)[None, :]
    results, _ = evaluate_arrays(derived, {named.workload.tpot_target_s: tpot, named.workload.max_batch: caps})
    frames = []
    values = derived.values()
    for spec in specs:
        r = results[spec["name"]]
        provisioned_w = sum(pool.sizing.devices * provisioned_power_w(values, pool.device) for pool in r.pools.values())
        prefill = spec.get("colocated", spec.get("prefill"))["device"]
        decode = spec.get("colocated", spec.get("decode"))["device"]
        grid_t, grid_b = np.broadcast_arrays(tpot, caps)
        frames.append(pd.DataFrame({
            "placement": spec["name"], "prefill_device": prefill, "decode_device": decode,
            "speculation": spec.get("speculation", {}).get("method", "none"),
            "tpot_target_s": grid_t.ravel(), "batch_cap": grid_b.ravel(),
            "usd_per_mtok": r.lcot_usd_per_mtok.ravel(), "ttft_s": r.ttft_s.ravel(), "tpot_s": r.tpot_s.ravel(),
            "batch": r.batch.ravel(), "spilled_bytes": r.spilled_bytes.ravel(), "feasible": r.feasible.ravel() > 0,
            "tokens_per_s_per_mw": np.broadcast_to(r.tokens_per_s / provisioned_w * 1e6, grid_t.shape).ravel()}))
    table = pd.concat(frames, ignore_index=True)
    ok = table["feasible"].to_numpy()
    cost = np.where(ok, table["usd_per_mtok"], np.nan)
    table["on_frontier_tpot"] = pareto_mask(cost, table["tpot_s"])
    table["on_frontier_ttft"] = pareto_mask(cost, table["ttft_s"])
    table["on_frontier_power"] = pareto_mask(np.where(ok, -table["tokens_per_s_per_mw"], np.nan), table["tpot_s"])
    table["roadmap_generation"] = table["prefill_device"].isin(roadmap) | table["decode_device"].isin(roadmap)
    table["label"] = [f"prefill {p} / decode {d}{f', {m} speculation' if m != 'none' else ''}, {s / 1e9:.3g} GB spilled"
                      + (" (a roadmap generation the baseline runs)" if g else "")
                      for p, d, m, s, g in zip(table["prefill_device"], table["decode_device"], table["speculation"],
                                               table["spilled_bytes"], table["roadmap_generation"], strict=True)]
    return table


__all__ = ["pareto", "placement_name", "placements"]
