"""Training runs evaluated: every cluster option's results, the cheapest, the cost gap a flip
search reads, the siting of training and serving, and the second life of its devices."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tco.analysis.evaluation import CostFigures, evaluate_scenario
from tco.analysis.flips import winner_gap
from tco.core import names as named
from tco.core.fleet import siting
from tco.core.names import device_param
from tco.core.serving import power
from tco.core.training import cascade
from tco.core.training.results import SecondLife, TrainingResult
from tco.core.training.run import device_usd_per_year, evaluate_training
from tco.foundation.errors import FieldError, InputError
from tco.foundation.plain_values import json_safe, scalar
from tco.inputs.catalog import load_catalog
from tco.inputs.loading import load_reference
from tco.inputs.parameters import unknown_name_rule
from tco.inputs.training_scenario import TrainingScenario, site_param
from tco.inputs.variants import placement_spec, replica_minimums, with_options


def evaluate_training_scenario(scenario: TrainingScenario, updates: Mapping[str, object] | None = None):
    """Core results of every cluster option at the scenario's values with ``updates`` on top.

    Parameters
    ----------
    scenario : tco.inputs.training_scenario.TrainingScenario
        The training scenario.
    updates : Mapping[str, object], optional [each parameter's unit]
        Parameter values replacing the base values; arrays broadcast. Unknown names are an
        :class:`~tco.foundation.errors.InputError`.

    Returns
    -------
    results : dict[str, tco.core.training.results.TrainingResult] [each output's unit]
        Each option's result (:func:`tco.core.training.run.evaluate_training`).
    values : dict[str, object]
        The parameter values evaluated.
    """
    values = scenario.values()
    if updates:
        unknown = [FieldError(n, v, unknown_name_rule(n, values)) for n, v in updates.items() if n not in values]
        if unknown:
            raise InputError(unknown)
        values.update(updates)
    return evaluate_training(scenario.structure, values), values


def cheapest_option(results: Mapping[str, TrainingResult]) -> str | None:
    """The feasible option with the lowest cost per run (None when none finishes).

    Parameters
    ----------
    results : Mapping[str, tco.core.training.results.TrainingResult]
        Each option's result (:func:`evaluate_training_scenario`) at one point.

    Returns
    -------
    str or None
        The option name.
    """
    costs = {n: scalar(r.cost_per_run_usd) for n, r in results.items() if scalar(r.feasible) > 0}
    return min(costs, key=costs.get) if costs else None


def cost_gap(results: Mapping[str, TrainingResult], winner: str):
    """Signed gap of ``winner`` against the cheapest other option: negative while it stays cheapest.

    Parameters
    ----------
    results : Mapping[str, tco.core.training.results.TrainingResult]
        Each option's result (arrays broadcast).
    winner : str
        The option whose lead is measured.

    Returns
    -------
    numpy.ndarray [USD per run]
        :func:`tco.analysis.flips.winner_gap` of the costs per run.
    """
    return winner_gap({n: r.cost_per_run_usd for n, r in results.items()},
                      {n: r.feasible for n, r in results.items()}, winner)


def training_cost_figures(scenario: TrainingScenario, updates: Mapping[str, object]):
    """:func:`tco.analysis.evaluation.cost_figures` for a training scenario: the cost per run stands for the cost per token.

    A break-even on ``lcot`` is USD per run apart; ``npv``: USD saved per run; ``ratio``: cost ratio.

    Parameters
    ----------
    scenario : tco.inputs.training_scenario.TrainingScenario
        The training scenario.
    updates : Mapping[str, object] [each parameter's unit]
        Parameter values; arrays broadcast.

    Returns
    -------
    dict[str, tco.analysis.evaluation.CostFigures]
        Per option: cost per run [USD] in both cost fields, and feasibility.
    """

    results, _ = evaluate_training_scenario(scenario, updates)
    return {name: CostFigures(r.cost_per_run_usd, r.cost_per_run_usd, r.feasible) for name, r in results.items()}


def serving_scenario(scenario: TrainingScenario):
    """The inference scenario a training scenario's model serves (``serving.scenario``).

    Parameters
    ----------
    scenario : tco.inputs.training_scenario.TrainingScenario
        The training scenario.

    Returns
    -------
    tco.inputs.scenario.Scenario
        The serving scenario; an :class:`~tco.foundation.errors.InputError` names ``serving.scenario``
        when it is a training scenario.
    """

    # read under the scenario's own policy: an upload to the app names a bundled scenario, never a server file
    serving = load_reference(scenario.references, scenario.spec.serving.scenario, "serving.scenario")
    if getattr(serving, "kind", "inference") == "training":
        raise InputError.one("serving.scenario", scenario.spec.serving.scenario, "must name an inference scenario")
    return serving


def training_siting(scenario: TrainingScenario, results: Mapping[str, TrainingResult], values: Mapping[str, object]) -> dict:
    """Site-dependent yearly cost of the training cluster and of the serving fleet, per site,
    and one combined facility against facilities split by purpose.

    Hardware costs the same anywhere; what a site changes is electricity, PUE, the data
    hall and egress, and whether its round trip to users fits the serving TTFT target.
    Yearly basis: the cluster trains continuously; the fleet serves the serving scenario.

    Parameters
    ----------
    scenario : tco.inputs.training_scenario.TrainingScenario
        The training scenario (its serving scenario is evaluated too).
    results : Mapping[str, tco.core.training.results.TrainingResult]
        Its results at the base values.
    values : Mapping[str, object]
        Its parameter values (sites, economics, devices).

    Returns
    -------
    dict
        Per site: facility [USD/kW-month], training and serving cost [USD/yr], user TTFT [s] and
        whether it meets the target; ``combined_usd_per_year``, ``split_usd_per_year`` and
        ``split_saves_usd_per_year`` [USD/yr] with the chosen sites. Empty without sites or a
        feasible serving option.
    """

    catalog = load_catalog()
    sites = catalog.sites.get("sites", {})
    if not sites:
        return {}
    serving = serving_scenario(scenario)
    serve_results, serve_values = evaluate_scenario(serving)
    feasible = [n for n, r in serve_results.items() if scalar(r.feasible) > 0]
    if not feasible:
        return {}
    serve_option = min(feasible, key=lambda n: scalar(serve_results[n].lcot_usd_per_mtok))
    sr = serve_results[serve_option]
    winner = cheapest_option(results) or scenario.structure.baseline
    option = scenario.structure.option(winner)
    rate = values[named.economics.discount_rate]

    def quantity(site: str, key: str) -> float:
        return values[site_param(site, key)]

    life = values["sites.facility_life_years"]
    bytes_per_token = values["sites.bytes_per_token"]
    devices = scalar(results[winner].devices)
    train_it_w = scalar(results[winner].power_w)
    provisioned_train_w = devices * (values[device_param(option.device, "tdp_w")]
                                     + values[device_param(option.device, "host_power_w")])
    serve_it_w = scalar(sr.power_w)
    serve_provisioned_w = sum(
        scalar(sr.pool(p.role).sizing.devices) * (serve_values[device_param(p.device, "tdp_w")]
                                             + serve_values[device_param(p.device, "host_power_w")])
        for p in serving.structure.option(serve_option).pools)
    tokens_per_year = scalar(sr.tokens_per_s) * 8760.0 * 3600.0
    rows, train_cost, serve_cost, serve_ok = [], [], [], []
    for site in sites:
        facility = siting.built_facility_usd_per_kw_month(quantity(site, "construction_usd_per_w"), life, rate)
        price, pue = quantity(site, "electricity_usd_per_kwh"), quantity(site, "pue")
        t = (power.energy_cost_usd_per_year(train_it_w, pue, price)
             + power.facility_cost_usd_per_year(provisioned_train_w, facility))
        egress = siting.egress_usd_per_mtok(bytes_per_token, quantity(site, "egress_usd_per_gb")) * tokens_per_year / 1e6
        s = (power.energy_cost_usd_per_year(serve_it_w, pue, price)
             + power.facility_cost_usd_per_year(serve_provisioned_w, facility) + egress)
        ttft = float(siting.user_ttft_s(scalar(sr.ttft_s), quantity(site, "rtt_to_users_s")))
        ok = ttft <= serve_values[named.workload.ttft_target_s]
        rows.append({"site": site, "name": sites[site].get("name", site), "facility_usd_per_kw_month": float(facility),
                     "training_usd_per_year": float(t), "serving_usd_per_year": float(s), "user_ttft_s": ttft,
                     "serving_meets_ttft": bool(ok)})
        train_cost.append(t)
        serve_cost.append(s)
        serve_ok.append(ok)
    combined, split, c_site, t_site, s_site = siting.combined_and_split_usd(train_cost, serve_cost, serve_ok)
    names = list(sites)

    def site_name(i):
        return None if int(i) < 0 else names[int(i)]

    return {"training_option": winner, "serving_scenario": serving.name, "serving_option": serve_option,
            "sites": rows, "combined_usd_per_year": json_safe(float(combined)), "split_usd_per_year": json_safe(float(split)),
            "combined_site": site_name(c_site), "split_training_site": site_name(t_site),
            "split_serving_site": site_name(s_site),
            "split_saves_usd_per_year": json_safe(float(combined - split))}


def second_life_arrays(scenario: TrainingScenario, values: Mapping[str, object],
                       serving_updates: Mapping[str, object] | None = None) -> tuple[dict[str, SecondLife], np.ndarray, str]:
    """Cascade, sell and premium per training device, vectorized over the arrays in ``values``
    (training parameters) and ``serving_updates`` (serving-scenario parameters), which broadcast.

    The serving tokens are valued at the cheapest feasible new option of the serving scenario
    (per draw); a retired device that misses the serving latency targets cannot cascade.

    Parameters
    ----------
    scenario : tco.inputs.training_scenario.TrainingScenario
        The training scenario.
    values : Mapping[str, object] [each parameter's unit]
        Its parameter values (arrays broadcast).
    serving_updates : Mapping[str, object], optional [each parameter's unit]
        Serving-scenario parameter values.

    Returns
    -------
    rows : dict[str, tco.core.training.results.SecondLife] [USD, tokens/yr, USD/yr, yr]
        Per device (:mod:`tco.core.training.cascade`): ``cascade_usd``, ``sell_usd``,
        ``cascade_premium_usd`` [USD per device], ``tokens_per_year_per_device`` [tokens/yr],
        ``running_usd_per_year`` [USD/yr], ``remaining_years`` [yr], ``feasible``, ``choice``.
    value_per_mtok : numpy.ndarray [USD/Mtok]
        Value of a served token: the cheapest feasible new option's levelized cost.
    new_option : str
        That option at the base values.
    """

    serving = serving_scenario(scenario)
    devices = sorted({o.device for o in scenario.structure.options})
    minimums = replica_minimums(serving)
    derived = with_options(serving, [placement_spec(d, d, "ib-400g", minimums) | {"name": f"retired:{d}"} for d in devices])
    results, serve_values = evaluate_scenario(derived, serving_updates)
    new = [o.name for o in serving.structure.options]
    lcot = np.stack([np.where(results[n].feasible > 0, results[n].lcot_usd_per_mtok, np.inf) for n in new])
    value_per_mtok = np.min(lcot, axis=0)
    base_option = new[int(np.argmin(lcot.reshape(len(new), -1)[:, 0]))]
    age = np.asarray(values[named.second_life.retire_after_years], float)
    rate = np.asarray(values[named.economics.discount_rate], float)
    site = scenario.spec.serving.site
    merged = {**serve_values, **{k: v for k, v in values.items() if k.startswith(("sites.", "economics.", "devices."))}}

    def get(name):
        return np.asarray(merged[name], float)

    out = {}
    for d in devices:  # a structural loop over the few training devices
        r = results[f"retired:{d}"]
        tokens_per_year = r.tokens_per_s / r.devices * 8760.0 * 3600.0
        yearly = device_usd_per_year(get, d, r.power_w / r.devices, site)
        running = yearly.running_usd_per_year
        unit = get(device_param(d, "price_usd")) + get(device_param(d, "system_overhead_usd"))
        life, rv = get(device_param(d, "useful_life_years")), get(device_param(d, "residual_value_fraction"))
        sell = unit * cascade.market_value_fraction(age, life, rv)
        keep = cascade.cascade_value_usd(tokens_per_year, value_per_mtok, running, life - age, rate, unit * rv)
        ok = r.feasible > 0
        choice, premium = cascade.second_life_choice(np.where(ok, keep, -np.inf), sell, 0.0)
        out[d] = SecondLife(feasible=ok.astype(float), tokens_per_year_per_device=tokens_per_year,
                            running_usd_per_year=running, remaining_years=life - age, cascade_usd=keep, sell_usd=sell,
                            choice=choice, cascade_premium_usd=np.where(ok, premium, -sell))
    return out, value_per_mtok, base_option


def second_life(scenario: TrainingScenario, values: Mapping[str, object]) -> dict:
    """Per training device at the base values: the value at retirement of cascading it to serving,
    of selling it and of scrapping it, and which wins (:mod:`tco.core.training.cascade`).

    Parameters
    ----------
    scenario : tco.inputs.training_scenario.TrainingScenario
        The training scenario.
    values : Mapping[str, object] [each parameter's unit]
        Its parameter values.

    Returns
    -------
    dict
        ``serving_scenario``, ``value_usd_per_mtok`` [USD/Mtok], ``priced_against``,
        ``retire_after_years`` [yr] and per device the values [USD], tokens [tokens/yr],
        running cost [USD/yr], remaining life [yr] and the best choice; empty when no new
        serving option is feasible.
    """
    rows, value_per_mtok, new_option = second_life_arrays(scenario, values)
    if not np.isfinite(scalar(value_per_mtok)):
        return {}
    devices = {d: {"feasible": bool(scalar(r.feasible) > 0), "tokens_per_year_per_device": scalar(r.tokens_per_year_per_device),
                   "running_usd_per_year": scalar(r.running_usd_per_year), "remaining_years": scalar(r.remaining_years),
                   "cascade_usd": scalar(r.cascade_usd), "sell_usd": scalar(r.sell_usd),
                   "cascade_premium_usd": scalar(r.cascade_premium_usd), "scrap_usd": 0.0,
                   "best": ("cascade", "sell", "scrap")[int(scalar(r.choice))]}
               for d, r in rows.items()}
    return {"serving_scenario": scenario.spec.serving.scenario, "value_usd_per_mtok": scalar(value_per_mtok),
            "priced_against": new_option, "retire_after_years": float(values[named.second_life.retire_after_years]),
            "devices": devices}
