"""Throughput against interactivity per device: the curve serving engineers read first.

For one model and prompt/output shape (the scenario's), each device runs a replica of each tensor-parallel layout that
holds the model, at each concurrency (sequences in flight per replica, the slot cap). At concurrency ``B`` a replica
runs closed-loop at its slot cap: each cycle carries the ``B`` sequences' next tokens and the prefill of the users' next
prompts riding in it, ``t(B)`` (the core's cycle at the slot cap, :class:`tco.core.serving.capacity.PoolFigures`), so

- interactivity, output tokens/s one user sees: ``1 / t(B)`` [tokens/s];
- throughput, output tokens/s per device: ``B / t(B) / devices per replica`` [tokens/s];
- per provisioned megawatt: throughput over ``(TDP + host share) x PUE`` of a device, times 1e6 [tokens/s/MW];
- cost, USD per million output tokens: the core's levelized cost of a fleet of that layout serving the scenario's
  demand with at most ``B`` sequences per replica (its TTFT target kept, its TPOT target lifted so that the slot cap
  is ``B`` wherever memory allows).

These are the quantities of the public throughput-interactivity dashboards (tokens/s per GPU against tokens/s per user
over concurrency); the scenario's own options are marked at their operating point (their batch and TPOT at peak), and
its TPOT target as the interactivity it asks for (``1 / TPOT target``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tco.analysis.evaluation import evaluate_arrays
from tco.core import names as named
from tco.core.evaluate import serving_pools
from tco.dynamics.devices import check_device
from tco.foundation.errors import InputError
from tco.inputs.fleet_settings import Interactivity
from tco.inputs.variants import scenario_devices, with_options

#: tensor-parallel layouts pinned per device [devices per replica] (those that hold the model are kept), beside the
#: layout the core's shape search picks (a multi-chip SRAM part needs hundreds of devices per replica)
LAYOUTS = (1, 2, 4, 8)
#: most devices one frontier compares (each runs every layout at every concurrency: ~40 ms a device here)
MAX_DEVICES = 12
#: the infeasibility bit of a replica whose memory holds no shape of the model (tco.core.outputs infeasible_code)
NO_SHAPE_FITS = 8
#: the TPOT target [s] the sweep sizes at: loose enough that the slot cap is the concurrency asked for
LIFTED_TPOT_TARGET_S = 10.0


@dataclass(frozen=True)
class InteractivityFrontier:
    """The curves and the scenario's operating points.

    Attributes
    ----------
    curves : pandas.DataFrame
        One row per (device, layout, concurrency reached): ``device``, ``layout`` (:data:`SEARCHED`, or ``TP<n>``
        pinned), ``shape`` (the replica shape at that point, ``TP8 x PP72``), ``devices_per_replica`` [devices],
        ``concurrency`` [sequences], ``tokens_per_s_per_user`` and ``tokens_per_s_per_device`` [tokens/s],
        ``tokens_per_s_per_mw`` [tokens/s/MW], ``usd_per_mtok`` [USD per million output tokens, NaN where the fleet
        misses a target: the TTFT target, or the prompt does not fit] and ``meets_tpot_target`` (``1 / t(B)`` at
        least ``1 / TPOT target``).
    operating : pandas.DataFrame
        Per option of the scenario (its decode pool for a split): ``option``, ``device``, ``concurrency`` (its
        batch at peak) [sequences], ``tokens_per_s_per_user`` (``1 / TPOT``) and ``tokens_per_s_per_device``
        [tokens/s].
    tpot_target_s : float [s]
        The scenario's TPOT target.
    """

    curves: pd.DataFrame
    operating: pd.DataFrame
    tpot_target_s: float


#: the layout of an option whose replica shape the core's search picks at each point
SEARCHED = "searched layout"


def _layout_options(devices: Sequence[str]) -> list[tuple[str, str, dict]]:
    """``(device, layout, option)``: each device with its layout searched, then pinned to each of :data:`LAYOUTS`."""
    out = []
    for d in devices:
        out.append((d, SEARCHED, {"name": f"frontier:{d}:searched", "colocated": {"device": d}}))
        out += [(d, f"TP{tp}", {"name": f"frontier:{d}:tp{tp}", "colocated": {"device": d, "tensor_parallel": tp}})
                for tp in LAYOUTS]
    return out


def _shape(figures, k: int) -> str:
    """The replica shape at point ``k``: ``TP8``, ``TP8 x PP72``."""
    tp, pp = (int(np.ravel(np.broadcast_to(np.asarray(x), np.shape(figures.slots)))[k])
              for x in (figures.tensor_parallel, figures.pipeline_stages))
    return f"TP{tp}" + (f" x PP{pp}" if pp > 1 else "")


def provisioned_power_w(values, device: str) -> float:
    """Power provisioned per device: ``(TDP + host share) x PUE`` [W].

    Parameters
    ----------
    values : Mapping[str, float]
        The scenario's values.
    device : str
        Device id.

    Returns
    -------
    float [W]
        Facility power per device at full load.
    """
    d = f"devices.{device}."
    return (float(values[d + "tdp_w"]) + float(values.get(d + "host_power_w", 0.0))) * float(values[named.economics.pue])


def interactivity_frontier(scenario, cfg: Interactivity) -> InteractivityFrontier:
    """Throughput per device against interactivity, per device and layout, over concurrency (module docstring).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its model, prompt and output lengths, TTFT target, demand and economics.
    cfg : tco.inputs.fleet_settings.Interactivity
        ``devices`` (default: the scenario's) and the ``concurrencies`` swept [sequences per replica].

    Returns
    -------
    InteractivityFrontier
        The curves (a layout that holds the model at no concurrency is left out; a concurrency memory does not
        allow is reported once, at the slot cap memory allows) and the scenario's operating points.
    """
    devices = list(dict.fromkeys(cfg.devices)) if cfg.devices else scenario_devices(scenario)
    if len(devices) > MAX_DEVICES:
        raise InputError.one("fleet_dynamics.interactivity.devices", len(devices),
                             f"names {len(devices)} devices; at most {MAX_DEVICES} (each runs {len(LAYOUTS) + 1} layouts)")
    for i, device in enumerate(devices):
        check_device(scenario, device, f"fleet_dynamics.interactivity.devices[{i}]")
    layouts = _layout_options(devices)
    derived = with_options(scenario, [option for *_, option in layouts])
    caps = np.asarray(cfg.concurrencies, float)
    updates = {named.workload.max_batch: caps, named.workload.tpot_target_s: LIFTED_TPOT_TARGET_S}
    results, values = evaluate_arrays(derived, updates)
    target = float(scenario.values()[named.workload.tpot_target_s])
    rows = []
    for device, layout, option in layouts:
        r = results[option["name"]]
        figures = serving_pools(derived.structure, values, option["name"])[0]["colocated"].figures
        slots, cycle_s, per_replica, cost, code = (np.broadcast_to(np.asarray(x, float), caps.shape) for x in (
            figures.slots, figures.cycle_cap_s, figures.devices_per_replica, r.lcot_usd_per_mtok, r.infeasible_code))
        seen = set()
        for k, (b, t, n, c, bad) in enumerate(zip(slots, cycle_s, per_replica, cost, code, strict=True)):
            # a replica whose memory does not hold the model (code 8) has no point; a cap memory stops short of is
            # reported once, at the slot cap memory allows
            if int(bad) & NO_SHAPE_FITS or not b >= 1 or not np.isfinite(t) or b in seen:
                continue
            seen.add(b)
            per_device = b / t / n
            rows.append({"device": device, "layout": layout, "shape": _shape(figures, k), "devices_per_replica": n,
                         "concurrency": b, "tokens_per_s_per_user": 1.0 / t,
                         "tokens_per_s_per_device": per_device,
                         "tokens_per_s_per_mw": per_device / provisioned_power_w(values, device) * 1e6,
                         "usd_per_mtok": np.nan if int(bad) else c, "meets_tpot_target": bool(t <= target)})
    return InteractivityFrontier(pd.DataFrame(rows), operating_points(scenario), target)


def operating_points(scenario) -> pd.DataFrame:
    """Each option's operating point at the scenario's own values: its decode batch at peak and TPOT.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.

    Returns
    -------
    pandas.DataFrame
        ``option``, ``device`` (its colocated or decode pool's), ``concurrency`` [sequences],
        ``tokens_per_s_per_user`` (``1 / TPOT``) and ``tokens_per_s_per_device`` (``batch / TPOT / devices per
        replica``) [tokens/s], ``feasible``.
    """
    results, values = evaluate_arrays(scenario, {})
    rows = []
    for option in scenario.structure.options:
        pools = serving_pools(scenario.structure, values, option.name)[0]
        pool = pools.get("colocated") or pools["decode"]
        f = pool.figures
        batch, tpot, per_replica = (float(np.ravel(x)[0]) for x in (f.batch, f.tpot_s, f.devices_per_replica))
        device = option.pool("colocated" if "colocated" in pools else "decode").device
        rows.append({"option": option.name, "device": device, "concurrency": batch,
                     "tokens_per_s_per_user": 1.0 / tpot, "tokens_per_s_per_device": batch / tpot / per_replica,
                     "feasible": bool(float(np.ravel(results[option.name].feasible)[0]) > 0)})
    return pd.DataFrame(rows)


__all__ = ["InteractivityFrontier", "interactivity_frontier", "operating_points", "provisioned_power_w"]
