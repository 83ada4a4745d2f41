"""Tokens-per-watt roadmap: what each lever the model can move gives toward a target (e.g. 12x).

Seed 003: "24x tokens against 2x power is a required 12x in tokens per watt by 2030. On
Dally's own decomposition of the previous 1000x, process contributed 2.5x across roughly a
decade." Each lever is applied on top of the previous ones and its factor is the ratio of
the engine's output tokens per joule (IT power: devices, hosts, links) after and before:

1. process node -- device TDP and idle power divided by ``gain^(years/10)`` (Dally's
   ~2.5x per decade); host power does not scale, so the model's factor is smaller;
2. number format -- weights, KV cache and arithmetic at ``target_bits``;
3. architecture -- the scenario option (SRAM, disaggregation, ...) with the most tokens/J;
4. utilization -- demand smoothed to its mean (peak-to-mean 1), so fewer idle devices;
5. orchestration -- the routing tier at its cost-optimal share: the mix of small- and
   large-model energy per answer, misroute retries included.
"""

from __future__ import annotations

import pandas as pd

from tco.analysis.evaluation import evaluate_arrays
from tco.core import names as named
from tco.core.fleet import routing as routing_core
from tco.core.names import device_param
from tco.dynamics.routing import routing
from tco.foundation.plain_values import scalar
from tco.inputs.fleet_settings import Roadmap, Routing, setting_name
from tco.inputs.variants import scenario_devices, with_model


def _tpj(scenario, updates, option):
    results, _ = evaluate_arrays(scenario, updates)
    return scalar(results[option].tokens_per_joule), results


def roadmap(scenario, cfg: Roadmap, routing_cfg: Routing) -> pd.DataFrame:
    """One row per lever: its factor, the cumulative factor and the gap left to the target.

    Levers in order, each the ratio of the engine's output tokens per joule after and before:
    process node (device TDP and idle power over ``gain^(horizon_years / 10)``), number format
    (weights, KV and arithmetic at ``target_bits``), architecture (the scenario's option with
    the most tokens per joule), utilization (peak-to-mean 1) and orchestration (the routing
    tier at its cost-optimal share, misroute retries included).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario (its baseline option is the starting point).
    cfg : tco.inputs.fleet_settings.Roadmap
        ``target_tokens_per_watt_gain`` [-], ``horizon_years`` [yr], ``process_gain_per_decade``
        [-] and ``target_bits`` [bits] (named parameters ``fleet_dynamics.roadmap.*``).
    routing_cfg : tco.inputs.fleet_settings.Routing
        The routing tier of the orchestration lever.

    Returns
    -------
    pandas.DataFrame
        ``lever``, ``detail``, ``factor`` [-], ``cumulative`` [-], ``gap_to_target`` [-],
        ``tokens_per_joule`` [tokens/J] and ``source`` per lever.

    References
    ----------
    [dally-hotchips2023] the process node's ~2.5x per decade.
    """
    v = scenario.values()
    base = scenario.structure.baseline
    node_gain = cfg.process_gain_per_decade ** (cfg.horizon_years / 10.0)
    updates: dict[str, float] = {}
    rows = []
    start, _ = _tpj(scenario, {}, base)
    current = start

    def record(lever, detail, tpj, source):
        nonlocal current
        rows.append({"lever": lever, "detail": detail, "factor": tpj / current, "cumulative": tpj / start,
                     "gap_to_target": cfg.target_tokens_per_watt_gain / (tpj / start), "tokens_per_joule": tpj,
                     "source": source})
        current = tpj

    for d in scenario_devices(scenario):
        for key in ("tdp_w", "idle_power_w"):
            updates[device_param(d, key)] = v[device_param(d, key)] / node_gain
    record("process node",
           f"device power / {node_gain:.3g} ({cfg.process_gain_per_decade:g}x per decade, {cfg.horizon_years:g} yr)",
           _tpj(scenario, updates, base)[0], scenario.dynamics[setting_name("roadmap", "process_gain_per_decade")].source)
    widths = (named.workload.weight_bits, named.workload.kv_bits, named.workload.compute_bits)
    bits = {k: min(v[k], cfg.target_bits) for k in widths}
    updates.update(bits)
    record("number format", f"weights, KV and arithmetic at {cfg.target_bits:g} bits", _tpj(scenario, updates, base)[0],
           "engine: fewer bytes per weight and KV element, 4-bit peak FLOP/s where the device has them")
    _, results = _tpj(scenario, updates, base)
    feasible = [o.name for o in scenario.structure.options if scalar(results[o.name].feasible) > 0]
    best = max(feasible or [base], key=lambda n: scalar(results[n].tokens_per_joule))
    record("architecture", f"best option by tokens/J: {best}", _tpj(scenario, updates, best)[0],
           "engine: the scenario's options (SRAM, disaggregation)")
    updates[named.workload.peak_to_mean] = 1.0
    large_tpj, _ = _tpj(scenario, updates, best)
    record("utilization", "demand smoothed to its mean (peak-to-mean 1)", large_tpj, "engine: sizing at peak demand")
    small = with_model(scenario, routing_cfg.small_model)
    small_updates = {k: val for k, val in updates.items() if k in small.values()}
    small_tpj, _ = _tpj(small, small_updates, best)
    share = routing(scenario, routing_cfg.model_copy(update={"option": best})).summary["optimal_router_share"]
    misrouted = float(routing_core.misrouted_share(share, routing_cfg.hard_share, routing_cfg.router_skill))
    retry = misrouted if routing_cfg.penalty == "retry" else 0.0
    # energy per answer in large-model output tokens' worth: share r on the small model, retries on the large one
    out_large, out_small = v[named.workload.output_tokens], small.values()[named.workload.output_tokens]
    joules = (1.0 - share + retry) * out_large / large_tpj + share * out_small / small_tpj
    record("orchestration", f"route {share:.0%} to {routing_cfg.small_model} (misrouted {misrouted:.1%})",
           out_large / joules, "engine: small-model scenario; routing closed form (tco.core.fleet.routing)")
    return pd.DataFrame(rows)
