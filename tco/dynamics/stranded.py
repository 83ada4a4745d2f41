"""Stranded capacity over a quarter: a split fleet (prefill pool -> decode pool) beside the homogeneous GPU fleet.

Per hour: demand from a diurnal and weekly curve with growth; prompt and output lengths
drift at the user's rates; the engine gives each replica's throughput at that hour's mix
(one vectorized evaluation over all hours); :mod:`tco.core.fleet.stranded` runs the queues.
Pool sizes come from a policy:

* ``today`` -- each pool carries the quarter's peak request rate at today's mix;
* ``peak`` -- each pool carries its own peak load of the quarter, drift included;
* ``flex`` -- ``today`` plus a buffer of GPU replicas (the baseline's device) that each
  hour takes whichever phase is short (:func:`tco.core.fleet.stranded.flexible_split`).

The homogeneous fleet is the scenario's baseline option sized by the same rule (under
``flex`` it is sized as ``today``: a colocated fleet is its own buffer).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import pandas as pd

from tco.analysis.evaluation import evaluate_arrays
from tco.core import names as named
from tco.core.evaluate import serving_pools
from tco.core.fleet import stranded as core
from tco.core.money.finance import capital_recovery_usd_per_year
from tco.core.names import device_param, link_param
from tco.core.outputs import OptionResult
from tco.core.serving.candidates import ReplicaTerms
from tco.core.serving.capacity import fleet_capacity_rps
from tco.core.serving.power import running_cost_usd_per_year
from tco.core.serving.shapes import Demand
from tco.core.serving.sizing import link_ports_needed, whole_count
from tco.foundation.errors import InputError
from tco.foundation.plain_values import scalar
from tco.inputs.fleet_settings import Stranded
from tco.inputs.scenario import Scenario
from tco.inputs.variants import disaggregated_option

SECONDS_PER_HOUR = 3600.0


@dataclass
class StrandedResult:
    """Summary per (policy, fleet), the hourly trace per policy, and the settings used."""

    option: str
    baseline: str
    summary: pd.DataFrame
    hourly: pd.DataFrame
    config: Stranded

    def stranded_share(self) -> dict[str, float]:
        """The headline figure per policy: specialized device-hours idle while the other queue waits [0-1]."""
        rows = self.summary[self.summary["fleet"] == self.option]
        return {str(r.policy): float(r.stranded_share) for r in rows.itertuples()}


def quarter_demand(scenario: Scenario, cfg: Stranded) -> dict[str, np.ndarray]:
    """Hourly arrivals and prompt and output lengths over ``cfg.weeks`` weeks.

    ``arrivals = 3600 x mean x growth x diurnal x weekly`` (:func:`tco.core.fleet.stranded.
    demand_requests_per_hour`); lengths grow by ``(1 + g)^(t / 8760 h)``.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its mean request rate, peak-to-mean and prompt and output lengths.
    cfg : tco.inputs.fleet_settings.Stranded
        ``weeks`` [-], the growth rates [1/yr], ``weekend_ratio`` [-] and ``peak_hour`` [h].

    Returns
    -------
    dict[str, numpy.ndarray] [h, req/h, tokens]
        ``hour`` [h] (0 = Monday 00:00), ``arrivals`` [req/h], ``prompt`` and ``output``
        [tokens], one entry per hour.
    """
    v = scenario.values()
    hours = core.hours_of_quarter(cfg.weeks * core.HOURS_PER_WEEK)
    arrivals = core.demand_requests_per_hour(hours, v[named.workload.requests_per_s], v[named.workload.peak_to_mean],
                                             cfg.weekend_ratio, cfg.demand_growth_per_year, cfg.peak_hour)
    prompt = v[named.workload.prompt_tokens] * core.growth_factor(hours, cfg.prompt_growth_per_year)
    output = v[named.workload.output_tokens] * core.growth_factor(hours, cfg.output_growth_per_year)
    return {"hour": hours, "arrivals": arrivals, "prompt": prompt, "output": output}


def _pool_hour_costs(r: OptionResult, role: str, values: dict) -> dict[str, float]:
    """Fixed cost per device-hour and the power terms of one pool, from the engine's pool outputs."""
    pool = r.pool(role)
    c, devices = pool.costs, scalar(pool.sizing.devices)
    per_device_year = (scalar(c.facility_usd_per_year) + scalar(c.maintenance_usd_per_year)) / devices
    fixed = core.fixed_cost_usd_per_device_hour(scalar(c.unit_hardware_usd) + scalar(c.unit_nre_usd),
                                                values[named.economics.discount_rate], scalar(c.life_years),
                                                scalar(c.residual_value_fraction), per_device_year)
    return {"fixed": float(fixed), "pool_usd_per_hour": scalar(c.reauthoring_usd_per_year) / core.HOURS_PER_YEAR,
            "idle": values[device_param(pool.device, "idle_power_w")], "tdp": values[device_param(pool.device, "tdp_w")],
            "host": values[device_param(pool.device, "host_power_w")], "life": scalar(c.life_years)}


def _energy(pool: dict, busy, values: dict):
    return core.energy_cost_usd_per_device_hour(pool["idle"], pool["tdp"], pool["host"], busy,
                                                values[named.economics.pue], values[named.economics.electricity_usd_per_kwh])


def _link_usd_per_hour(link: str, split: OptionResult, arrivals, values: dict, life_years: float, whole) -> float:
    """KV-link cost per hour [USD/h]: ports for the quarter's peak KV traffic, each costing its capital
    recovery over the decode devices' life plus its electricity and data hall."""
    bw = values[link_param(link, "bandwidth_bytes_per_s")]
    kv_bytes = (split.kv_transfer_s - values[link_param(link, "latency_s")]) * bw
    ports = np.max(link_ports_needed(arrivals / SECONDS_PER_HOUR, kv_bytes, bw, whole))
    per_port_year = capital_recovery_usd_per_year(values[link_param(link, "port_cost_usd")],
                                                  values[named.economics.discount_rate], life_years) \
        + running_cost_usd_per_year(values[link_param(link, "port_power_w")], values[named.economics.pue],
                                    values[named.economics.electricity_usd_per_kwh],
                                    values[named.economics.facility_usd_per_kw_month])
    return ports * per_port_year / core.HOURS_PER_YEAR


class _HourlyPool:
    """One pool of a fixed replica shape, hour by hour: replicas needed within the percentile targets,
    the rate a given fleet carries within them (the serving model's queues inside each hour), and
    the rate it carries flat out (every slot and lane busy) [req/s]."""

    def __init__(self, role: str, terms: dict, demand: Demand, extra_s):
        self.role, self.terms, self.demand, self.extra_s = role, terms, demand, extra_s
        self.figures = ReplicaTerms(**{f.name: terms[f.name] for f in fields(ReplicaTerms)})

    @property
    def replicas_needed(self):
        return self.terms["replicas"]

    @property
    def devices_per_replica(self) -> float:
        return float(np.max(self.terms["devices_per_replica"]))

    def within_targets_rps(self, replicas):
        return fleet_capacity_rps(self.role, self.figures, replicas, self.demand, self.extra_s)

    def flat_out_rps(self, replicas):
        t = self.terms
        lanes = t["lanes"] / np.maximum(t["prefill_work_s"], 1e-300)
        slots = t["slots"] / np.maximum(t["residence_s"], 1e-300)
        per_replica = {"prefill": lanes, "decode": slots, "colocated": np.minimum(slots, lanes)}[self.role]
        return replicas * per_replica


def _hourly_pools(scenario: Scenario, option_name: str, d: dict[str, np.ndarray]) -> dict[str, _HourlyPool]:
    """The option's pools at the shapes chosen for the quarter's peak rate at today's mix, evaluated at
    every hour's rate and mix (the core's :func:`tco.core.serving.search.size_pool` terms of that shape)."""
    structure = scenario.structure
    base = scenario.values()
    peak = float(np.max(d["arrivals"])) / SECONDS_PER_HOUR
    design = {**base, named.workload.requests_per_s: peak, named.workload.peak_to_mean: 1.0,
              named.workload.prompt_tokens: float(d["prompt"][0]), named.workload.output_tokens: float(d["output"][0])}
    chosen, _, _ = serving_pools(structure, design, option_name)
    hourly = {**base, named.workload.requests_per_s: d["arrivals"] / SECONDS_PER_HOUR, named.workload.peak_to_mean: 1.0,
              named.workload.prompt_tokens: d["prompt"], named.workload.output_tokens: d["output"]}
    pools, demand, transfer = serving_pools(structure, hourly, option_name)
    out = {}
    for role, pool in pools.items():
        k = int(np.asarray(chosen[role].figures.shape_index).reshape(-1)[0])
        candidate = pool.candidate(k)
        terms = {f.name: np.broadcast_to(np.asarray(getattr(candidate, f.name), float), d["arrivals"].shape)
                 for f in fields(ReplicaTerms)}
        terms["today_replicas"] = float(np.asarray(chosen[role].figures.replicas).reshape(-1)[0])
        out[role] = _HourlyPool(role, terms, demand, transfer if role == "prefill" and transfer is not None else 0.0)
    return out


def simulate(scenario: Scenario, cfg: Stranded) -> StrandedResult:
    """Run every policy of ``cfg`` for the split option and the homogeneous baseline fleet.

    Within each hour the serving model's queues decide (:func:`tco.core.serving.capacity.fleet_capacity_rps`):
    an hour whose arrivals exceed the rate a pool carries within the percentile targets is late;
    arrivals beyond what it carries flat out queue into the next hour (a fluid backlog, Lindley's
    recursion in closed form, :mod:`tco.core.fleet.stranded`).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        A scenario with a disaggregated option and a colocated baseline.
    cfg : tco.inputs.fleet_settings.Stranded
        The option, ``policies``, ``weeks``, growth rates [1/yr], ``weekend_ratio`` [-],
        ``peak_hour`` [h] and ``flex_buffer_share`` [-].

    Returns
    -------
    StrandedResult
        ``summary`` per (policy, fleet): devices, ``stranded_share`` [-], late hours [h],
        output tokens not served [tokens], ``cost_usd`` [USD], ``usd_per_mtok`` [USD/Mtok];
        ``hourly`` per (policy, hour): capacities [req/h], backlogs [requests], busy shares [-].

    References
    ----------
    [lindley-1952] the backlog recursion.
    """
    option = disaggregated_option(scenario, cfg.option, "fleet_dynamics.stranded.option")
    structure = scenario.structure
    base_option = structure.option(structure.baseline)
    if base_option.disaggregated:
        raise InputError.one("baseline", structure.baseline, "the stranded-capacity study needs a colocated baseline")
    d = quarter_demand(scenario, cfg)
    arrivals, prompt, output = d["arrivals"], d["prompt"], d["output"]
    results, values = evaluate_arrays(scenario, {named.workload.prompt_tokens: prompt, named.workload.output_tokens: output})
    split, base = results[option.name], results[structure.baseline]
    pools = _hourly_pools(scenario, option.name, d)
    colo_pool = _hourly_pools(scenario, structure.baseline, d)["colocated"]
    pre, dec = pools["prefill"], pools["decode"]
    n_pre, n_dec, n_colo = pre.devices_per_replica, dec.devices_per_replica, colo_pool.devices_per_replica

    whole = structure.whole_devices
    today = {"pre": pre.terms["today_replicas"], "dec": dec.terms["today_replicas"], "colo": colo_pool.terms["today_replicas"]}
    peak_of = {"pre": float(np.max(pre.replicas_needed)), "dec": float(np.max(dec.replicas_needed)),
               "colo": float(np.max(colo_pool.replicas_needed))}
    sizing = {
        "today": (today["pre"], today["dec"], 0.0, today["colo"]),
        "peak": (peak_of["pre"], peak_of["dec"], 0.0, peak_of["colo"]),
        "flex": (today["pre"], today["dec"], whole_count(cfg.flex_buffer_share * today["colo"], whole), today["colo"]),
    }
    policies = list(dict.fromkeys(cfg.policies))
    r_pre, r_dec, r_buf, r_colo = (np.array([float(sizing[p][i]) for p in policies])[:, None] for i in range(4))

    # capacities per hour [req/h]: flat out (the queues between hours) and within the targets (lateness)
    per_h = SECONDS_PER_HOUR
    colo_terms = colo_pool.terms
    buf_pre = per_h * colo_terms["lanes"] / colo_terms["prefill_work_s"]  # a GPU buffer replica prefilling only
    buf_dec = per_h * colo_terms["slots"] / (output * colo_terms["cycle_cap_s"])  # ... or decoding only
    c1_own, c2_own = per_h * pre.flat_out_rps(r_pre), per_h * dec.flat_out_rps(r_dec)
    share = core.flexible_split(c1_own, c2_own, r_buf * buf_pre, r_buf * buf_dec)
    c1 = c1_own + share * r_buf * buf_pre
    c2 = c2_own + (1.0 - share) * r_buf * buf_dec
    slo1 = per_h * pre.within_targets_rps(r_pre) * c1 / c1_own  # the buffer adds in proportion
    slo2 = per_h * dec.within_targets_rps(r_dec) * c2 / c2_own
    q1, d1, q2, d2 = core.tandem(arrivals, c1, c2)
    busy1, busy2 = np.minimum(d1 / c1, 1.0), np.minimum(d2 / c2, 1.0)
    prefill_pool, decode_pool = option.pool("prefill"), option.pool("decode")
    strand_pre = core.stranded_share(r_pre * n_pre, busy1, core.nonempty(q2, c2))
    strand_dec = core.stranded_share(r_dec * n_dec, busy2, core.nonempty(q1, c1))
    headline = strand_pre if prefill_pool.specialized and not decode_pool.specialized else strand_dec
    carried1 = np.concatenate([np.zeros_like(q1[..., :1]), q1[..., :-1]], axis=-1)
    carried2 = np.concatenate([np.zeros_like(q2[..., :1]), q2[..., :-1]], axis=-1)
    late_split = ((arrivals + carried1 > slo1 * (1 + 1e-12)) | (d1 + carried2 > slo2 * (1 + 1e-12))
                  | (split.feasible < 1))
    pre_cost = _pool_hour_costs(split, "prefill", values)
    dec_cost = _pool_hour_costs(split, "decode", values)
    colo_cost = _pool_hour_costs(base, "colocated", values)
    port_usd_per_hour = _link_usd_per_hour(option.link, split, arrivals, values, dec_cost["life"], whole)
    busy_buf = share * busy1 + (1.0 - share) * busy2
    cost_split = (r_pre * n_pre * (pre_cost["fixed"] + _energy(pre_cost, busy1, values)) + pre_cost["pool_usd_per_hour"]
                  + r_dec * n_dec * (dec_cost["fixed"] + _energy(dec_cost, busy2, values)) + dec_cost["pool_usd_per_hour"]
                  + r_buf * n_colo * (colo_cost["fixed"] + _energy(colo_cost, busy_buf, values)) + port_usd_per_hour)

    # homogeneous fleet: one queue
    c = per_h * colo_pool.flat_out_rps(r_colo)
    q = core.backlog(arrivals, c)
    done = core.completions(arrivals, q)
    busy = np.minimum(done / c, 1.0)
    carried = np.concatenate([np.zeros_like(q[..., :1]), q[..., :-1]], axis=-1)
    late_base = (arrivals + carried > per_h * colo_pool.within_targets_rps(r_colo) * (1 + 1e-12)) | (base.feasible < 1)
    cost_base = r_colo * n_colo * (colo_cost["fixed"] + _energy(colo_cost, busy, values)) + colo_cost["pool_usd_per_hour"]

    demanded = np.sum(arrivals * output)
    # per fleet and policy; ``decode_busy_share`` is the mean busy share of the pool that generates output
    # tokens: the decode pool of the split fleet, the whole colocated GPU fleet
    rows = []
    for i, policy in enumerate(policies):
        for fleet, queued, late, cost, devices, util, strands in (
                (option.name, q1[i] + q2[i], late_split[i], cost_split[i],
                 {"prefill": r_pre[i, 0] * n_pre, "decode": r_dec[i, 0] * n_dec, "buffer": r_buf[i, 0] * n_colo},
                 float(np.mean(busy2[i])), (headline[i], strand_pre[i], strand_dec[i])),
                (structure.baseline, q[i], late_base[i], cost_base[i], {"colocated": r_colo[i, 0] * n_colo},
                 float(np.mean(busy[i])), (0.0, 0.0, 0.0))):
            left = queued[-1]
            not_served = float(left * output[-1])  # requests still queued at the end, at the last hour's length
            tokens = float(demanded) - not_served
            rows.append({
                "policy": policy, "fleet": fleet, "devices": float(sum(devices.values())),
                **{f"{k}_devices": float(v) for k, v in devices.items()},
                "stranded_share": float(strands[0]), "stranded_share_prefill": float(strands[1]),
                "stranded_share_decode": float(strands[2]), "decode_busy_share": util,
                "violation_hours": int(np.sum(late)), "violation_share": float(np.mean(late)),
                "peak_backlog_req": float(np.max(queued)), "backlog_at_end_req": float(left),
                "output_tokens_demanded": float(demanded), "output_tokens_not_served": not_served,
                "not_served_share": float(1.0 - tokens / demanded), "cost_usd": float(np.sum(cost)),
                "usd_per_mtok": float(np.sum(cost) / tokens * 1e6) if tokens > 0 else float("nan"),
            })
    summary = pd.DataFrame(rows)
    hourly = pd.concat([pd.DataFrame({
        "policy": policy, "hour": d["hour"], "arrivals_req_per_h": arrivals, "prompt_tokens": prompt,
        "output_tokens": output, "prefill_capacity_req_per_h": c1[i], "decode_capacity_req_per_h": c2[i],
        "prefill_backlog_req": q1[i], "decode_backlog_req": q2[i], "served_req_per_h": d2[i],
        "decode_busy_share": busy2[i], "prefill_busy_share": busy1[i], "gpu_fleet_backlog_req": q[i]})
        for i, policy in enumerate(policies)], ignore_index=True)
    return StrandedResult(option.name, structure.baseline, summary, hourly, cfg)
