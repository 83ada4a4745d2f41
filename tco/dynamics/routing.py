"""Routing tiers: a router sends a share of requests to a small model (tco.core.fleet.routing).

Costs per request come from the engine: the scenario as given (large model) and the
same scenario with the model swapped (small model), each at the chosen option's
levelized cost per output token times the output length. Both are levelized costs at
the scenario's full demand; a small tier serving a share ``r`` of it is priced at the
same cost per token (whole-replica rounding at the smaller scale is ignored).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tco.analysis.evaluation import evaluate_arrays
from tco.core import names as named
from tco.core.fleet import routing as core
from tco.foundation.errors import InputError
from tco.foundation.plain_values import scalar
from tco.inputs.fleet_settings import Routing
from tco.inputs.variants import with_model


@dataclass
class RoutingResult:
    summary: dict
    curve: pd.DataFrame


def cost_per_request_usd(scenario, option: str) -> tuple[float, bool]:
    """Levelized cost of one request on ``option`` and whether it meets the latency targets.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario (large or small model).
    option : str
        One of its options.

    Returns
    -------
    usd : float [USD/request]
        Levelized cost per output token times the output length.
    feasible : bool
        Whether the option meets the TTFT and TPOT targets.
    """
    results, values = evaluate_arrays(scenario)
    r = results[option]
    usd = scalar(r.lcot_usd_per_mtok) / 1e6 * values[named.workload.output_tokens]
    return usd, bool(scalar(r.feasible) > 0)


def routing(scenario, cfg: Routing) -> RoutingResult:
    """Routing tier: cost per useful answer with a router sending a share of requests to a small model.

    Costs per request come from the engine (the scenario, and the same scenario serving
    ``cfg.small_model``, both on the chosen option); the closed forms are
    :mod:`tco.core.fleet.routing`: ``c(r) = c_L + r (c_s - c_L) + h r^(1+a) penalty``.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario serving the large model.
    cfg : tco.inputs.fleet_settings.Routing
        ``small_model``, ``option`` (default: the baseline), ``hard_share`` h [-] and
        ``router_skill`` a [-] (named parameters ``fleet_dynamics.routing.*``) and the
        ``penalty`` (``retry`` on the large model, or [USD] per wrong answer).

    Returns
    -------
    RoutingResult
        ``summary`` (costs per request [USD/request], ``breakeven_router_share`` and
        ``optimal_router_share`` [-], ``usd_per_useful_answer_at_optimum`` [USD/answer],
        ``saving_at_optimum`` [-]) and ``curve`` over router shares 0-1.

    References
    ----------
    [routellm-2024] routers between a strong and a weak model.
    """
    option = cfg.option or scenario.structure.baseline
    if option not in [o.name for o in scenario.structure.options]:
        raise InputError.one("fleet_dynamics.routing.option", option, "must name an option of the scenario")
    small_scenario = with_model(scenario, cfg.small_model)
    large, large_ok = cost_per_request_usd(scenario, option)
    small, small_ok = cost_per_request_usd(small_scenario, option)
    penalty = large if cfg.penalty == "retry" else float(cfg.penalty)
    args = (small, large, cfg.hard_share, cfg.router_skill, penalty)
    best = float(core.optimal_router_share(*args))
    summary = {
        "option": option, "large_model": scenario.structure.model, "small_model": cfg.small_model,
        "large_usd_per_request": large, "small_usd_per_request": small, "large_feasible": large_ok, "small_feasible": small_ok,
        "hard_share": cfg.hard_share, "router_skill": cfg.router_skill,
        "penalty": cfg.penalty, "penalty_usd": penalty,
        "breakeven_router_share": float(core.breakeven_router_share(*args)),
        "optimal_router_share": best,
        "usd_per_useful_answer_at_optimum": float(core.cost_per_useful_answer(best, *args)),
        "saving_at_optimum": 1.0 - float(core.cost_per_useful_answer(best, *args)) / large,
    }
    shares = np.linspace(0.0, 1.0, 41)
    curve = pd.DataFrame({"router_share": shares, "usd_per_useful_answer": core.cost_per_useful_answer(shares, *args),
                          "misrouted_share": core.misrouted_share(shares, cfg.hard_share, cfg.router_skill),
                          "large_only_usd_per_answer": large})
    return RoutingResult(summary, curve)
