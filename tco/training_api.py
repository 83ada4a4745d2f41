"""The training run as the user sees it: ``tco compare`` on a ``kind: training`` scenario.

    >>> import tco
    >>> s = tco.load_scenario("training-run")
    >>> result = tco.training_api.compare_training(s)
    >>> result.options[["time_to_train_days", "cost_per_run_usd"]]

Besides the per-option table, the comparison carries the verdict with its flip
conditions (:mod:`tco.flips`), the siting of training and serving (one combined facility
against facilities split by purpose, :mod:`tco.core.siting`) and the second life of the
cluster's devices in serving (:mod:`tco.core.cascade`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .core import cascade, power, siting
from .core.structure import device_param
from .core.training import TRAINING_BOUNDS
from .core.training_run import TRAINING_OUTPUTS, device_usd_per_year, evaluate_training, training_comparison
from .errors import FieldError, InputError
from .flips import Flip, describe_flip, flip_conditions, winner_gap
from .params import unknown_name_rule
from .training_scenario import TrainingScenario, site_param
from .util import json_safe, scalar

if TYPE_CHECKING:
    from .studies.chunks import Cancel, Progress
    from .studies.parallel import ChunkRunner

#: grid points per parameter of the training verdict's flip search: each point evaluates every option's 960 candidate
#: shapes, so 33 points (a stretch wider than 1/32 of a range is always found) take 0.8 s where the inference verdict's
#: 257 would take 9.5 s (training-run, measured 2026-12-01)
TRAINING_FLIP_POINTS = 33

#: rows of the options table of a training comparison (``tco compare`` and the app): (key, title with unit, format, scale)
OPTION_ROWS = [
    ("placement", "cluster", None, 1.0),
    ("time_to_train_days", "time to train, days", ",.3g", 1.0),
    ("cost_per_run_usd", "cost per run, M USD", ",.3g", 1e-6),
    ("usd_per_mtok_trained", "cost, USD per million training tokens", ",.3g", 1.0),
    ("mfu", "model FLOPs utilization (16-bit peak), %", ".1f", 100.0),
    ("goodput", "goodput after failures and checkpoints, %", ".1f", 100.0),
    ("mtbi_s", "mean time between interruptions, h", ",.3g", 1 / 3600),
    ("tokens_per_s_per_device", "training tokens/s per device", ",.0f", 1.0),
    ("tokens_per_joule", "training tokens per joule (IT power)", ",.3g", 1.0),
    ("energy_mwh", "IT energy of the run, MWh", ",.0f", 1.0),
    ("shape", "parallel shape", None, 1.0),
    ("bound", "bound by", None, 1.0),
    ("memory_bytes_per_device", "memory per device, GB", ",.1f", 1e-9),
    ("feasible", "trains within its limits", None, 1.0),
]
#: rows of each challenger against the baseline
CHALLENGER_ROWS = [("cost_ratio", "cost ratio to the baseline (wins below 1)", ".3f", 1.0),
                   ("time_ratio", "time ratio to the baseline", ".3f", 1.0),
                   ("usd_saved_per_run", "saved per run, M USD", ",.3g", 1e-6)]
#: columns of the siting table: one row per site
SITE_COLUMNS = [
    ("site", "site", None, 1.0), ("data hall, USD per kW-month (built)", "facility_usd_per_kw_month", ",.1f", 1.0),
    ("training cluster, M USD/yr (site-dependent)", "training_usd_per_year", ",.3g", 1e-6),
    ("serving fleet, M USD/yr (site-dependent)", "serving_usd_per_year", ",.3g", 1e-6),
    ("user TTFT incl. round trip, ms", "user_ttft_s", ",.0f", 1e3),
    ("meets the serving TTFT target", "serving_meets_ttft", None, 1.0)]
#: columns of the second-life table: one row per training device
SECOND_LIFE_COLUMNS = [
    ("device", "device", None, 1.0), ("best use at retirement", "best", None, 1.0),
    ("cascade to serving, USD per device (PV)", "cascade_usd", ",.0f", 1.0), ("sell, USD per device", "sell_usd", ",.0f", 1.0),
    ("cascade premium over the better of sell and scrap, USD", "cascade_premium_usd", ",.0f", 1.0),
    ("output tokens served per device-year, M", "tokens_per_year_per_device", ",.0f", 1e-6),
    ("running cost in serving, USD per device-year", "running_usd_per_year", ",.0f", 1.0)]


def evaluate_training_scenario(scenario: TrainingScenario, updates: Mapping[str, object] | None = None):
    """Core results of every cluster option at the scenario's values with ``updates`` on top.

    Parameters
    ----------
    scenario : tco.training_scenario.TrainingScenario
        The training scenario.
    updates : Mapping[str, object], optional [each parameter's unit]
        Parameter values replacing the base values; arrays broadcast. Unknown names are an
        :class:`~tco.errors.InputError`.

    Returns
    -------
    results : dict[str, dict[str, numpy.ndarray]] [each output's unit]
        ``{option: {output: array}}`` (:func:`tco.core.training_run.evaluate_training`).
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


def cheapest_option(results: Mapping[str, dict]) -> str | None:
    """The feasible option with the lowest cost per run (None when none finishes).

    Parameters
    ----------
    results : Mapping[str, dict]
        ``{option: outputs}`` of :func:`evaluate_training_scenario` at one point.

    Returns
    -------
    str or None
        The option name.
    """
    costs = {n: scalar(r["cost_per_run_usd"]) for n, r in results.items() if scalar(r["feasible"]) > 0}
    return min(costs, key=costs.get) if costs else None


def cost_gap(results: Mapping[str, dict], winner: str):
    """Signed gap of ``winner`` against the cheapest other option: negative while it stays cheapest.

    Parameters
    ----------
    results : Mapping[str, dict]
        ``{option: outputs}`` (arrays broadcast).
    winner : str
        The option whose lead is measured.

    Returns
    -------
    numpy.ndarray [USD per run]
        :func:`tco.flips.winner_gap` of the costs per run.
    """
    return winner_gap({n: r["cost_per_run_usd"] for n, r in results.items()},
                      {n: r["feasible"] for n, r in results.items()}, winner)


def training_cost_figures(scenario: TrainingScenario, updates: Mapping[str, object]):
    """:func:`tco.api.cost_figures` for a training scenario: the cost per run stands for the cost per token.

    A break-even on ``lcot`` is USD per run apart; ``npv``: USD saved per run; ``ratio``: cost ratio.

    Parameters
    ----------
    scenario : tco.training_scenario.TrainingScenario
        The training scenario.
    updates : Mapping[str, object] [each parameter's unit]
        Parameter values; arrays broadcast.

    Returns
    -------
    dict[str, tco.api.CostFigures]
        Per option: cost per run [USD] in both cost fields, and feasibility.
    """
    from .api import CostFigures

    results, _ = evaluate_training_scenario(scenario, updates)
    return {name: CostFigures(r["cost_per_run_usd"], r["cost_per_run_usd"], r["feasible"]) for name, r in results.items()}


@dataclass
class TrainingComparison:
    """What ``tco compare`` reports for a training scenario."""

    scenario: TrainingScenario
    options: pd.DataFrame
    challengers: pd.DataFrame
    verdict: str
    flips: list[Flip] = field(default_factory=list)
    siting: dict = field(default_factory=dict)
    second_life: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The JSON contract of ``tco compare --format json`` for a training scenario (docs/outputs.md)."""
        s = self.scenario
        return {
            "scenario": {"name": s.name, "kind": "training", "title": s.title, "question": s.question,
                         "baseline": s.structure.baseline, "model": s.structure.model, "site": s.structure.site,
                         "objective": "cost per training run (USD), time to train (days)"},
            "options": [{"name": name, **{k: json_safe(v) for k, v in row.items()}} for name, row in self.options.iterrows()],
            "comparison": {name: {k: json_safe(v) for k, v in row.items()} for name, row in self.challengers.iterrows()},
            "verdict": self.verdict,
            "flip_conditions": self.flips,
            "siting": self.siting,
            "second_life": self.second_life,
        }


def compare_training(scenario: TrainingScenario, with_flips: bool = True) -> TrainingComparison:
    """Evaluate every cluster option at the base values and explain the result.

    Parameters
    ----------
    scenario : tco.training_scenario.TrainingScenario
        The training scenario.
    with_flips : bool
        Search the inputs that flip the cheapest option (:func:`tco.flips.flip_conditions`).

    Returns
    -------
    TrainingComparison
        The options table (cost per run [USD], time to train [days], shape, bound, ...), the
        challengers against the baseline, the verdict, the flips, the siting and the second life.
    """
    results, values = evaluate_training_scenario(scenario)
    rows = []
    for option in scenario.structure.options:
        r = results[option.name]
        row = {k: scalar(r[k]) for k in TRAINING_OUTPUTS}
        row["feasible"] = row["feasible"] > 0
        row["placement"] = f"{row['devices']:.0f} x {option.device}"
        shape = (f"TP{row['tensor_parallel']:.0f} PP{row['pipeline_parallel']:.0f} DP{row['data_parallel']:.0f}"
                 + (f" EP{row['expert_parallel']:.0f}" if row["expert_parallel"] > 1 else "")
                 + (f" recompute {row['recompute']:.2g}" if row["recompute"] > 0 else "")
                 + (" FSDP" if row["fsdp"] > 0 else ""))
        row["shape"] = shape if row["feasible"] else "none fits"
        row["bound"] = TRAINING_BOUNDS[int(row["bound"])] if row["feasible"] else "memory"
        rows.append({"option": option.name, **row})
    table = pd.DataFrame(rows).set_index("option")
    comp = training_comparison(scenario.structure, results)
    challengers = pd.DataFrame([{"option": n, **{k: scalar(v) for k, v in c.items()}} for n, c in comp.items()])
    challengers = challengers.set_index("option") if len(challengers) else pd.DataFrame()
    winner = cheapest_option(results)
    flips = []
    if with_flips and winner is not None and len(results) > 1:
        flips = flip_conditions(scenario.params, lambda updates: cost_gap(evaluate_training_scenario(scenario, updates)[0],
                                                                          winner), points=TRAINING_FLIP_POINTS)
    result = TrainingComparison(scenario, table, challengers, "", flips)
    result.siting = training_siting(scenario, results, values)
    result.second_life = second_life(scenario, values)
    result.verdict = training_verdict(result, winner)
    return result


def training_verdict(result: TrainingComparison, winner: str | None) -> str:
    """One paragraph: the cheapest and the fastest cluster, by how much, and what would flip it.

    Parameters
    ----------
    result : TrainingComparison
        The comparison (its options table and flips).
    winner : str or None
        The cheapest feasible option.

    Returns
    -------
    str
        The verdict (costs in USD millions per run, times in days).
    """
    table = result.options
    if winner is None:
        return "No option can train the model: no parallel shape fits memory, or failures outpace restarts."
    base = result.scenario.structure.baseline
    cost = table.loc[winner, "cost_per_run_usd"]
    days = table.loc[winner, "time_to_train_days"]
    feasible = table[table["feasible"]]
    fastest = str(feasible["time_to_train_days"].idxmin())
    text = f"{winner} trains cheapest at ${cost / 1e6:.3g}M per run in {days:.3g} days"
    base_cost = table.loc[base, "cost_per_run_usd"]
    if winner != base and table.loc[base, "feasible"]:
        text += f" ({cost / base_cost:.2f}x the baseline {base}'s ${base_cost / 1e6:.3g}M)"
    elif winner == base and len(feasible) > 1:
        runner = str(feasible.drop(index=winner)["cost_per_run_usd"].idxmin())
        text += f"; the next cheapest, {runner}, costs {feasible.loc[runner, 'cost_per_run_usd'] / cost:.2f}x as much"
    text += "."
    if fastest != winner:
        text += f" {fastest} is fastest: {feasible.loc[fastest, 'time_to_train_days']:.3g} days."
    if result.flips:
        text += " It stops being cheapest if " + "; or ".join(describe_flip(f) for f in result.flips[:3]) + "."
    elif len(feasible) > 1:
        text += " No single input moved across its range changes the winner."
    return text


def serving_scenario(scenario: TrainingScenario):
    """The inference scenario a training scenario's model serves (``serving.scenario``).

    Parameters
    ----------
    scenario : tco.training_scenario.TrainingScenario
        The training scenario.

    Returns
    -------
    tco.scenario.Scenario
        The serving scenario; an :class:`~tco.errors.InputError` names ``serving.scenario``
        when it is a training scenario.
    """
    from .scenario import load_scenario

    serving = load_scenario(scenario.spec.serving.scenario)
    if getattr(serving, "kind", "inference") == "training":
        raise InputError.one("serving.scenario", scenario.spec.serving.scenario, "must name an inference scenario")
    return serving


def training_siting(scenario: TrainingScenario, results: Mapping[str, dict], values: Mapping[str, object]) -> dict:
    """Site-dependent yearly cost of the training cluster and of the serving fleet, per site,
    and one combined facility against facilities split by purpose.

    Hardware costs the same anywhere; what a site changes is electricity, PUE, the data
    hall and egress, and whether its round trip to users fits the serving TTFT target.
    Yearly basis: the cluster trains continuously; the fleet serves the serving scenario.

    Parameters
    ----------
    scenario : tco.training_scenario.TrainingScenario
        The training scenario (its serving scenario is evaluated too).
    results : Mapping[str, dict]
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
    from .api import evaluate_scenario
    from .catalog import load_catalog

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
    rate = values["economics.discount_rate"]

    def quantity(site: str, key: str) -> float:
        return values[site_param(site, key)]

    life = values["sites.facility_life_years"]
    bytes_per_token = values["sites.bytes_per_token"]
    devices = scalar(results[winner]["devices"])
    train_it_w = scalar(results[winner]["power_w"])
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
        ok = ttft <= serve_values["workload.ttft_target_s"]
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
                       serving_updates: Mapping[str, object] | None = None) -> tuple[dict, np.ndarray, str]:
    """Cascade, sell and premium per training device, vectorized over the arrays in ``values``
    (training parameters) and ``serving_updates`` (serving-scenario parameters), which broadcast.

    The serving tokens are valued at the cheapest feasible new option of the serving scenario
    (per draw); a retired device that misses the serving latency targets cannot cascade.

    Parameters
    ----------
    scenario : tco.training_scenario.TrainingScenario
        The training scenario.
    values : Mapping[str, object] [each parameter's unit]
        Its parameter values (arrays broadcast).
    serving_updates : Mapping[str, object], optional [each parameter's unit]
        Serving-scenario parameter values.

    Returns
    -------
    rows : dict[str, dict[str, numpy.ndarray]] [USD, tokens/yr, USD/yr, yr]
        Per device (:mod:`tco.core.cascade`): ``cascade_usd``, ``sell_usd``,
        ``cascade_premium_usd`` [USD per device], ``tokens_per_year_per_device`` [tokens/yr],
        ``running_usd_per_year`` [USD/yr], ``remaining_years`` [yr], ``feasible``, ``choice``.
    value_per_mtok : numpy.ndarray [USD/Mtok]
        Value of a served token: the cheapest feasible new option's levelized cost.
    new_option : str
        That option at the base values.
    """
    from .api import evaluate_scenario
    from .dynamics.derived import placement_spec, replica_minimums, with_options

    serving = serving_scenario(scenario)
    devices = sorted({o.device for o in scenario.structure.options})
    minimums = replica_minimums(serving)
    derived = with_options(serving, [placement_spec(d, d, "ib-400g", minimums) | {"name": f"retired:{d}"} for d in devices])
    results, serve_values = evaluate_scenario(derived, serving_updates)
    new = [o.name for o in serving.structure.options]
    lcot = np.stack([np.where(results[n].feasible > 0, results[n].lcot_usd_per_mtok, np.inf) for n in new])
    value_per_mtok = np.min(lcot, axis=0)
    base_option = new[int(np.argmin(lcot.reshape(len(new), -1)[:, 0]))]
    age = np.asarray(values["second_life.retire_after_years"], float)
    rate = np.asarray(values["economics.discount_rate"], float)
    site = scenario.spec.serving.site
    merged = {**serve_values, **{k: v for k, v in values.items() if k.startswith(("sites.", "economics.", "devices."))}}

    def get(name):
        return np.asarray(merged[name], float)

    out = {}
    for d in devices:  # a structural loop over the few training devices
        r = results[f"retired:{d}"]
        tokens_per_year = r.tokens_per_s / r.devices * 8760.0 * 3600.0
        yearly = device_usd_per_year(get, d, r.power_w / r.devices, site)
        running = yearly["energy"] + yearly["facility"] + yearly["maintenance"]
        unit = get(device_param(d, "price_usd")) + get(device_param(d, "system_overhead_usd"))
        life, rv = get(device_param(d, "useful_life_years")), get(device_param(d, "residual_value_fraction"))
        sell = unit * cascade.market_value_fraction(age, life, rv)
        keep = cascade.cascade_value_usd(tokens_per_year, value_per_mtok, running, life - age, rate, unit * rv)
        ok = r.feasible > 0
        choice, premium = cascade.second_life_choice(np.where(ok, keep, -np.inf), sell, 0.0)
        out[d] = {"feasible": ok.astype(float), "tokens_per_year_per_device": tokens_per_year, "running_usd_per_year": running,
                  "remaining_years": life - age, "cascade_usd": keep, "sell_usd": sell, "choice": choice,
                  "cascade_premium_usd": np.where(ok, premium, -sell)}
    return out, value_per_mtok, base_option


def second_life(scenario: TrainingScenario, values: Mapping[str, object]) -> dict:
    """Per training device at the base values: the value at retirement of cascading it to serving,
    of selling it and of scrapping it, and which wins (:mod:`tco.core.cascade`).

    Parameters
    ----------
    scenario : tco.training_scenario.TrainingScenario
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
    devices = {d: {"feasible": bool(scalar(r["feasible"]) > 0),
                   **{k: scalar(r[k]) for k in ("tokens_per_year_per_device", "running_usd_per_year", "remaining_years",
                                                 "cascade_usd", "sell_usd", "cascade_premium_usd")},
                   "scrap_usd": 0.0, "best": ("cascade", "sell", "scrap")[int(scalar(r["choice"]))]}
               for d, r in rows.items()}
    return {"serving_scenario": scenario.spec.serving.scenario, "value_usd_per_mtok": scalar(value_per_mtok),
            "priced_against": new_option, "retire_after_years": float(values["second_life.retire_after_years"]),
            "devices": devices}


@dataclass(frozen=True)
class SecondLifeColumns:
    """Per-draw columns of the second-life decision (:func:`second_life_arrays`) for the Monte Carlo
    engine (:mod:`tco.studies.montecarlo`): ``premium:<device>`` [USD per device], the boolean columns
    ``cascade:<device>``, ``sell:<device>``, ``scrap:<device>`` (which wins) and ``value_usd_per_mtok``.
    A draw of a parameter both scenarios have goes to both (one quantity, one value). Picklable."""

    scenario: TrainingScenario
    training: tuple[str, ...]
    serving: tuple[str, ...]

    def __call__(self, draws: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        values = self.scenario.values() | {k: draws[k] for k in self.training}
        rows, value_per_mtok, _ = second_life_arrays(self.scenario, values, {k: draws[k] for k in self.serving})
        out = {"value_usd_per_mtok": value_per_mtok}
        for d, r in rows.items():
            out[f"premium:{d}"] = r["cascade_premium_usd"]
            out |= {f"{name}:{d}": r["choice"] == i for i, name in enumerate(("cascade", "sell", "scrap"))}
        return out

    @property
    def aggregated(self) -> tuple[tuple[str, dict[str, str]], ...]:
        devices = sorted({o.device for o in self.scenario.structure.options})
        return (*((f"premium:{d}", {f"{n}_best": f"{n}:{d}" for n in ("cascade", "sell", "scrap")}) for d in devices),
                ("value_usd_per_mtok", {}))


def cascade_under_uncertainty(scenario: TrainingScenario, samples: int, seed: int, runner: ChunkRunner | None = None,
                              progress: Progress = None, cancel: Cancel = None) -> pd.DataFrame:
    """Monte Carlo of the second-life decision.

    Every uncertain parameter of the training scenario and of its serving scenario is drawn
    from its distribution, run by the package's one Monte Carlo
    (:func:`tco.studies.montecarlo.run_cells`: seeded chunks, running aggregates).

    Parameters
    ----------
    scenario : tco.training_scenario.TrainingScenario
        The training scenario.
    samples : int [draws]
        Number of draws.
    seed : int [-]
        The seed.
    runner, progress, cancel : ChunkRunner, Progress, Cancel, optional
        Where the second-life draws run, how their progress shows, and what cancels them (as in
        :func:`tco.studies.montecarlo.run_cells`).

    Returns
    -------
    pandas.DataFrame
        One row per training device: ``p_cascade_best``, ``p_sell_best``, ``p_scrap_best`` [-],
        the premium's mean and P5/P50/P95 [USD per device] (from the aggregates' histogram) and
        the median value of the serving tokens [USD/Mtok].
    """
    from .studies.montecarlo import MonteCarloCell, run_cells
    from .studies.parallel import ChunkRunner
    from .studies.sampling import SamplingPlan, is_sampled

    serving = serving_scenario(scenario)
    train_params = [p for p in scenario.params.values_list() if is_sampled(p)]
    training = {p.name for p in train_params}
    serve_params = [p for p in serving.params.values_list() if is_sampled(p)]
    plan = SamplingPlan(tuple(train_params + [p for p in serve_params if p.name not in training]))
    columns = SecondLifeColumns(scenario, tuple(sorted(training)), tuple(p.name for p in serve_params))
    cell = MonteCarloCell(columns, columns.aggregated, plan, int(samples))
    (result,) = run_cells([cell], seed, runner or ChunkRunner(), keep=0, label="cascade", progress=progress, cancel=cancel)
    a = result.aggregates
    out = []
    for name, _ in columns.aggregated[:-1]:
        premium = a[name]
        p5, p50, p95 = premium.quantiles([0.05, 0.5, 0.95])
        out.append({"device": name.removeprefix("premium:"), "samples": int(samples),
                    **{f"p_{n}_best": premium.share(f"{n}_best") for n in ("cascade", "sell", "scrap")},
                    "premium_mean_usd": premium.moments.mean, "premium_p5_usd": p5, "premium_p50_usd": p50,
                    "premium_p95_usd": p95, "value_usd_per_mtok_p50": float(a["value_usd_per_mtok"].quantiles([0.5])[0])})
    return pd.DataFrame(out).set_index("device")
