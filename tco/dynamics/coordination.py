"""Coordination break-even: the specialized pool's utilization at which the split fleet's
perf-per-watt and cost edge over the homogeneous GPU fleet is gone (tco.core.fleet.coordination).

Everything but the specialized pool is held at the engine's values; the specialized pool's
per-token energy and cost follow ``fixed / (u R) + variable / R`` with ``R`` its full-load
output tokens/s per device, reduced by the scheduling overhead. At the engine's
utilization ``u0`` and zero overhead this reproduces the engine's split-fleet figures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tco.analysis.evaluation import evaluate_arrays
from tco.core import names as named
from tco.core.fleet import coordination as core
from tco.core.fleet.stranded import fixed_cost_usd_per_device_hour
from tco.core.names import device_param
from tco.core.outputs import OptionResult
from tco.core.serving.power import energy_price_usd_per_joule
from tco.foundation.plain_values import scalar
from tco.inputs.fleet_settings import Coordination
from tco.inputs.variants import disaggregated_option


@dataclass
class CoordinationResult:
    option: str
    pool: str
    summary: dict
    curve: pd.DataFrame
    #: the specialized pool's per-device ``(fixed, variable)`` rates: J/s for "energy", USD/s for "cost"
    terms: dict


def coordination(scenario, cfg: Coordination, gpu_fleet: OptionResult | None = None) -> CoordinationResult:
    """Coordination break-even of a split fleet's specialized pool against the homogeneous GPU fleet.

    Everything but the specialized pool is held at the engine's values; the pool's per-token
    energy and cost follow ``fixed / (u R) + variable / R`` (:mod:`tco.core.fleet.coordination`),
    ``R = R0 / (1 + o)`` its full-load output tokens/s per device after the scheduling
    overhead ``o``; the pool runs at ``u0 (1 - s)`` with slack ``s``.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        A scenario with a disaggregated option.
    cfg : tco.inputs.fleet_settings.Coordination
        The option (default: the first disaggregated one), ``scheduling_overhead`` [-] and
        ``slack`` [-] (named parameters ``fleet_dynamics.coordination.*``).
    gpu_fleet : OptionResult or None
        The homogeneous GPU fleet compared, its levelized cost [USD/Mtok] and output tokens per joule read (default:
        the scenario's baseline; a roadmap baseline's caller passes the fleet it runs at t = 0). The split option's
        figures are always the scenario's own (Compare's).

    Returns
    -------
    CoordinationResult
        ``summary`` (break-even utilizations [-] for perf per watt and cost, tokens per joule
        [tokens/J] and cost [USD/Mtok] of both fleets at ``u0 (1 - s)``), ``curve`` (the same
        over utilization 0.02-1) and the pool's ``terms``: per-device ``(fixed, variable)``
        rates, [J/s] for energy and [USD/s] for cost.

    References
    ----------
    [splitwise-isca2024] prefill and decode on separate machines.
    """
    option = disaggregated_option(scenario, cfg.option, "fleet_dynamics.coordination.option")
    results, values = evaluate_arrays(scenario)
    r, base = results[option.name], gpu_fleet or results[scenario.structure.baseline]
    prefill, decode = option.pool("prefill"), option.pool("decode")
    pool = prefill if prefill.specialized and not decode.specialized else decode
    role, device = pool.role, pool.device

    costs, sizing = r.pool(role).costs, r.pool(role).sizing
    u0 = scalar(sizing.utilization)
    devices = scalar(sizing.devices)
    rate0 = scalar(r.tokens_per_s) / (devices * u0)  # full-load output tokens/s per device
    rate = float(core.effective_tokens_per_device_s(rate0, cfg.scheduling_overhead))
    idle, tdp, host = (values[device_param(device, k)] for k in ("idle_power_w", "tdp_w", "host_power_w"))
    usd_per_j = energy_price_usd_per_joule(values[named.economics.pue], values[named.economics.electricity_usd_per_kwh])
    per_device_year = (scalar(costs.facility_usd_per_year) + scalar(costs.maintenance_usd_per_year)) / devices
    fixed_usd_s = float(fixed_cost_usd_per_device_hour(scalar(costs.unit_hardware_usd) + scalar(costs.unit_nre_usd),
                                                       values[named.economics.discount_rate], scalar(costs.life_years),
                                                       scalar(costs.residual_value_fraction), per_device_year)) / 3600.0
    terms = {"energy": (idle + host, tdp - idle), "cost": (fixed_usd_s + usd_per_j * (idle + host), usd_per_j * (tdp - idle))}
    split_now = {"energy": 1.0 / scalar(r.tokens_per_joule), "cost": scalar(r.lcot_usd_per_mtok) / 1e6}
    gpu = {"energy": 1.0 / scalar(base.tokens_per_joule), "cost": scalar(base.lcot_usd_per_mtok) / 1e6}
    rest = {k: split_now[k] - core.per_token_at_utilization(*terms[k], rate0, u0) for k in terms}
    u_run = u0 * (1.0 - cfg.slack)
    summary = {"option": option.name, "specialized_pool": role, "device": device, "scheduling_overhead": cfg.scheduling_overhead,
               "slack": cfg.slack, "utilization_engine": u0, "utilization_with_coordination": u_run,
               "full_load_tokens_per_s_per_device": rate0}
    for k, label in (("energy", "perf_per_watt"), ("cost", "cost")):
        u_star = float(core.breakeven_utilization(*terms[k], rate, gpu[k] - rest[k]))
        summary[f"{label}_breakeven_utilization"] = None if np.isnan(u_star) else u_star
        summary[f"{label}_slack_at_breakeven"] = None if np.isnan(u_star) else float(core.slack_at_breakeven(u_star, u0))
    summary["split_tokens_per_joule"] = 1.0 / (rest["energy"] + core.per_token_at_utilization(*terms["energy"], rate, u_run))
    summary["gpu_tokens_per_joule"] = 1.0 / gpu["energy"]
    summary["split_usd_per_mtok"] = 1e6 * (rest["cost"] + core.per_token_at_utilization(*terms["cost"], rate, u_run))
    summary["gpu_usd_per_mtok"] = 1e6 * gpu["cost"]
    u = np.linspace(0.02, 1.0, 50)
    curve = pd.DataFrame({
        "utilization": u,
        "split_tokens_per_joule": 1.0 / (rest["energy"] + core.per_token_at_utilization(*terms["energy"], rate, u)),
        "gpu_tokens_per_joule": 1.0 / gpu["energy"],
        "split_usd_per_mtok": 1e6 * (rest["cost"] + core.per_token_at_utilization(*terms["cost"], rate, u)),
        "gpu_usd_per_mtok": 1e6 * gpu["cost"]})
    return CoordinationResult(option.name, role, summary, curve, terms)
