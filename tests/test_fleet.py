"""Fleet dynamics: hand-derived cases, closed forms checked against the engine, invariants, CLI contract."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tco
from tco.analysis.evaluation import evaluate_arrays
from tco.cli import main
from tco.core.fleet import coordination as coord
from tco.core.fleet import routing
from tco.core.fleet import stranded as core
from tco.core.fleet.pareto import pareto_mask
from tco.dynamics.coordination import coordination
from tco.dynamics.kv_wall import kv_wall
from tco.dynamics.pareto import pareto
from tco.dynamics.roadmap import roadmap
from tco.dynamics.routing import routing as routing_analysis
from tco.dynamics.stranded import simulate
from tco.dynamics.tree import tree
from tco.foundation.errors import InputError
from tco.inputs.fleet_settings import fleet_config
from tco.inputs.variants import baseline_on
from tco.present.fleet_summary import reconciliation
from tco.present.fleet_summary import run as fleet_run

TOY_SPLIT = Path(__file__).parent / "data" / "toy-split.yaml"


@pytest.fixture(scope="module")
def toy():
    scenario = tco.load_scenario(TOY_SPLIT)
    return scenario, fleet_config(scenario)


# --- stranded capacity -------------------------------------------------------------------------------------------

def test_two_pool_stranded_share_by_hand():
    # 10 req/h arrive for 4 hours; prefill finishes 5, 15, 10, 10; decode could finish 20 every hour.
    # prefill backlog: 10-5 = 5, 5+10-15 = 0, 0, 0 -> prefill completions 5, 15, 10, 10 feed decode,
    # which never queues; decode busy shares 5/20, 15/20, 10/20, 10/20.
    q1, d1, q2, d2 = core.tandem([10, 10, 10, 10], [5, 15, 10, 10], [20, 20, 20, 20])
    np.testing.assert_allclose(q1, [5, 0, 0, 0])
    np.testing.assert_allclose(d1, [5, 15, 10, 10])
    np.testing.assert_allclose(q2, 0)
    np.testing.assert_allclose(d2, d1)
    # decode idle while the prefill queue is non-empty: only hour 0, 1 - 5/20 = 0.75 of its N devices,
    # over 4 N device-hours -> 0.75 / 4 = 0.1875; prefill is never idle while decode waits -> 0.
    busy = d2 / 20.0
    assert core.stranded_share(7.0, busy, core.nonempty(q1, [5, 15, 10, 10])) == pytest.approx(0.1875)
    assert core.stranded_share(3.0, d1 / np.array([5, 15, 10, 10]), core.nonempty(q2, 20.0)) == 0.0
    # a pool that finished its capacity up to round-off (busy 1 - 1e-16) is busy: exactly 0, not 1e-16
    assert core.stranded_share(3.0, np.array([1.0 - 1e-16, 0.5]), np.array([True, False])) == 0.0


def lindley_loop(arrivals, capacity):
    q, out = 0.0, []
    for a, c in zip(arrivals, capacity, strict=True):
        q = max(q + a - c, 0.0)
        out.append(q)
    return np.array(out)


flows = st.lists(st.tuples(st.floats(0, 100), st.floats(0.1, 100)), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(flows)
def test_backlog_closed_form_matches_the_recursion_and_conserves_work(pairs):
    a, c = np.array(pairs).T
    q = core.backlog(a, c)
    np.testing.assert_allclose(q, lindley_loop(a, c), atol=1e-9 * (1 + a.sum()))
    done = core.completions(a, q)
    assert np.all(done <= c + 1e-9 * (1 + a.sum()))
    assert a.sum() == pytest.approx(done.sum() + q[-1], abs=1e-9 * (1 + a.sum()))


@settings(max_examples=40, deadline=None)
@given(flows, st.floats(0.1, 100))
def test_tandem_serves_no_more_than_its_bottleneck_and_stranded_share_is_a_share(pairs, decode):
    a, c1 = np.array(pairs).T
    c2 = np.full_like(c1, decode)
    q1, d1, _, d2 = core.tandem(a, c1, c2)
    assert d2.sum() <= min(a.sum(), d1.sum()) + 1e-6
    share = core.stranded_share(5.0, np.minimum(d2 / c2, 1.0), core.nonempty(q1, c1))
    assert 0.0 <= share <= 1.0


@settings(max_examples=40, deadline=None)
@given(st.floats(0, 100), st.floats(0, 100), st.floats(0.1, 50), st.floats(0.1, 50))
def test_flexible_buffer_never_lowers_the_bottleneck(c1, c2, bp, bd):
    f = core.flexible_split(c1, c2, bp, bd)
    assert 0 <= f <= 1
    assert min(c1 + f * bp, c2 + (1 - f) * bd) >= min(c1, c2) - 1e-9


def test_demand_curve_means_and_peak():
    hours = core.hours_of_quarter(core.HOURS_PER_WEEK)
    d = core.demand_requests_per_hour(hours, 1.0, 1.5, 0.7, 0.0, 14.0)
    assert d.mean() == pytest.approx(3600.0)  # diurnal and weekly factors average to 1 over a week
    assert core.diurnal_factor(14.0, 1.5, 14.0) == pytest.approx(1.5)
    assert core.diurnal_factor(20.0, 1.5, 20.0) == pytest.approx(1.5)  # the peak follows peak_hour
    assert core.growth_factor(8760.0, 0.5) == pytest.approx(1.5)


def test_quarter_simulation_policies(toy):
    scenario, cfg = toy
    result = simulate(scenario, cfg.stranded)
    s = result.summary.set_index(["policy", "fleet"])
    assert len(core.hours_of_quarter()) == 2184 and len(result.hourly) == 3 * 2184
    # sizing for the quarter's own peak load never queues past an hour, so no stranding and no lateness
    assert s.loc[("peak", "split"), "stranded_share"] == 0.0
    assert s.loc[("peak", "split"), "output_tokens_not_served"] == pytest.approx(0.0, abs=1e-3)
    assert s.loc[("peak", "split"), "devices"] >= s.loc[("today", "split"), "devices"]
    assert all(0.0 <= v <= 1.0 for v in result.stranded_share().values())
    # with the prompt growing and the output steady, today's sizing leaves decode idle behind a prefill queue
    drift = cfg.stranded.model_copy(update={"prompt_growth_per_year": 3.0, "output_growth_per_year": 0.0})
    assert simulate(scenario, drift).stranded_share()["today"] > 0.0


# --- KV transfer wall --------------------------------------------------------------------------------------------

def test_kv_transfer_of_known_size_over_known_link(toy):
    scenario, cfg = toy
    result = kv_wall(scenario, cfg.kv_wall.model_copy(update={"prompt_range": (1000.0, 10000.0), "points": 3}))
    row = result.table.iloc[0]
    # P = 1000 tokens x k = 2 x 10 layers x 1 head x 100 x 1 B = 2,000 B/token -> 2e6 B per request;
    # over 10 GB/s with 10 us latency: 2e6 / 1e10 + 1e-5 = 2.1e-4 s; peak traffic 100 req/s x 2e6 B = 2e8 B/s
    # -> 0.02 ports (continuous sizing), 0.02 x 20 W = 0.4 W.
    assert row["kv_bytes_per_request"] == pytest.approx(2e6)
    assert row["kv_transfer_s"] == pytest.approx(2.1e-4)
    assert row["link_ports"] == pytest.approx(0.02)
    assert row["link_power_w"] == pytest.approx(0.4)


def test_kv_wall_breakeven_ties_the_split_to_the_best_colocated(toy):
    scenario, cfg = toy
    result = kv_wall(scenario, cfg.kv_wall)
    for key, name in (("prompt_tokens", "workload.prompt_tokens"), ("link_bandwidth_bytes_per_s",
                                                                   "links.toy-link.bandwidth_bytes_per_s")):
        b = result.breakevens[key]
        assert b["status"] == "crosses", key
        r, _ = evaluate_arrays(scenario, {name: b["value"]})
        best = min(float(r[n].lcot_usd_per_mtok) for n in result.counterparts.values())
        assert float(r["split"].lcot_usd_per_mtok) == pytest.approx(best, rel=1e-6)
    # spill onset: decode bytes = W + B x C x k exceed 2 GB of SRAM (1 GB of weights), found where spilled bytes turn > 0
    onset = result.breakevens["spill_onset_prompt_tokens"]["value"]
    r_below, _ = evaluate_arrays(scenario, {"workload.prompt_tokens": onset * 0.99})
    r_above, _ = evaluate_arrays(scenario, {"workload.prompt_tokens": onset * 1.01})
    assert float(r_below["split"].flat()["decode.spilled_bytes"]) == 0.0 < float(r_above["split"].flat()["decode.spilled_bytes"])


# --- coordination --------------------------------------------------------------------------------------------------

def test_coordination_pool_terms_rebuild_the_engine_pool(toy):
    # The specialized pool's per-token energy and cost at the engine's utilization u0, from the analysis' own
    # (fixed, variable) per-device terms, must equal the engine's figures for that pool. The toy has a 0 discount
    # rate, life = horizon = 5 yr and no residual value, so capital recovery per year = unit capex / 5 exactly.
    scenario, cfg = toy
    result = coordination(scenario, cfg.coordination.model_copy(update={"slack": 0.0, "scheduling_overhead": 0.0}))
    s, role = result.summary, result.pool
    rate0, u0 = s["full_load_tokens_per_s_per_device"], s["utilization_engine"]
    r, _ = evaluate_arrays(scenario)
    split = {k: float(np.asarray(v).reshape(-1)[0]) for k, v in r["split"].flat().items()}
    tokens_s = split["tokens_per_s"]
    joules_per_token = coord.per_token_at_utilization(*result.terms["energy"], rate0, u0)
    assert joules_per_token == pytest.approx(split[f"{role}.power_w"] / tokens_s, rel=1e-12)
    yearly = split[f"{role}.energy_usd_per_year"] + split[f"{role}.facility_usd_per_year"] \
        + split[f"{role}.maintenance_usd_per_year"]
    capital = split[f"{role}.devices"] * (split[f"{role}.unit_hardware_usd"] + split[f"{role}.unit_nre_usd"]) / 5.0
    usd_per_token = coord.per_token_at_utilization(*result.terms["cost"], rate0, u0)
    assert usd_per_token == pytest.approx((capital + yearly) / (tokens_s * 8760 * 3600), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.01, 10), st.floats(0, 10), st.floats(0.1, 100), st.floats(0.01, 10))
def test_breakeven_utilization_solves_the_cost_equation(fixed, variable, rate, budget):
    u = float(coord.breakeven_utilization(fixed, variable, rate, budget))
    if math.isnan(u):  # even fully busy the pool costs more than the budget
        assert coord.per_token_at_utilization(fixed, variable, rate, 1.0) >= budget * (1 - 1e-9)
    else:
        assert 0 < u <= 1
        assert coord.per_token_at_utilization(fixed, variable, rate, u) == pytest.approx(budget, rel=1e-9)


# --- routing -------------------------------------------------------------------------------------------------------

def test_routing_closed_form_by_hand():
    # c_s = 1, c_L = 3, h = 0.5, a = 1, penalty 8: c(r) = 3 - 2 r + 0.5 x 8 r^2 = 3 - 2 r + 4 r^2.
    args = (1.0, 3.0, 0.5, 1.0, 8.0)
    assert routing.cost_per_useful_answer(0.25, *args) == pytest.approx(2.75)
    assert routing.breakeven_router_share(*args) == pytest.approx(0.5)  # 3 - 2 r + 4 r^2 = 3
    assert routing.optimal_router_share(*args) == pytest.approx(0.25)  # -2 + 8 r = 0
    # a random router (a = 0) is linear: pays at every share iff c_L - c_s > h x penalty (2 > 4: no)
    assert routing.breakeven_router_share(1.0, 3.0, 0.5, 0.0, 8.0) == 0.0
    assert routing.breakeven_router_share(1.0, 3.0, 0.5, 0.0, 3.0) == 1.0


@settings(max_examples=60, deadline=None)
@given(st.floats(0.01, 1), st.floats(1.01, 10), st.floats(0.05, 1), st.floats(0.1, 5), st.floats(0.1, 20))
def test_routing_breakeven_and_optimum_invariants(cs, ratio, h, a, penalty):
    cl = cs * ratio
    r_star = float(routing.breakeven_router_share(cs, cl, h, a, penalty))
    r_opt = float(routing.optimal_router_share(cs, cl, h, a, penalty))
    assert 0 <= r_opt <= r_star <= 1
    if r_star < 1:
        assert routing.cost_per_useful_answer(r_star, cs, cl, h, a, penalty) == pytest.approx(cl, rel=1e-9)
    shares = np.linspace(0, 1, 201)
    costs = routing.cost_per_useful_answer(shares, cs, cl, h, a, penalty)
    assert routing.cost_per_useful_answer(r_opt, cs, cl, h, a, penalty) <= costs.min() + 1e-12 * cl


def test_routing_uses_the_engine_costs(toy):
    scenario, cfg = toy
    s = routing_analysis(scenario, cfg.routing).summary
    c = tco.compare(scenario).options
    assert s["large_usd_per_request"] == pytest.approx(c.loc["gpu", "lcot_usd_per_mtok"] * 1000 / 1e6, rel=1e-12)
    assert s["small_usd_per_request"] < s["large_usd_per_request"]


def test_routing_headline_says_where_routing_stops_paying():
    """A share clipped at 1 is no break-even: routing pays everywhere (fleet-split: the retry costs one large answer,
    so sending every request to the 8B model first and retrying the 30 % hard ones pays: 0.05 + 0.3 x 0.68 < 0.68)."""
    from types import SimpleNamespace

    from tco.present.fleet_summary import routing_headline

    summary = {"saving_at_optimum": 0.625, "optimal_router_share": 1.0, "small_model": "s", "large_model": "l",
               "usd_per_useful_answer_at_optimum": 2.56e-4, "breakeven_router_share": 1.0}
    assert routing_headline(SimpleNamespace(summary=summary)).sentence.endswith("it pays at any share, all requests included.")
    summary.update(breakeven_router_share=0.4, optimal_router_share=0.2)
    assert routing_headline(SimpleNamespace(summary=summary)).sentence.endswith("it stops paying beyond 40%.")


# --- Pareto, tree, roadmap ----------------------------------------------------------------------------------------

def test_the_frontier_includes_the_generations_a_roadmap_baseline_runs():
    """Issue 49 item 3: custom-asic's baseline runs B200 from year 0, then Rubin (``tco compare``: 0.434 USD per million
    output tokens, "the fleet runs b200, then rubin"); the frontier used to place only the scenario's own devices (H100,
    the ASIC: 1.0-3.8 USD per million), so the GPU fleet the verdict prices was not on it. Its default devices now add
    those generations, each placement of one labelled; an explicit device list, and a scenario without a roadmap, are
    as before."""
    from tco.dynamics.devices import roadmap_devices_held

    asic = tco.load_scenario("custom-asic")
    assert roadmap_devices_held(asic) == ["b200", "rubin"]
    table = pareto(asic, fleet_config(asic).pareto)
    placed = set(table["placement"])
    assert {"b200", "rubin", "b200>rubin", "h100-sxm>rubin"} <= placed and "h100-sxm" in placed
    marked = table["roadmap_generation"]
    assert marked.any() and (~marked).any()
    labelled = table["label"].str.contains("a roadmap generation the baseline runs", regex=False)
    assert (labelled == marked).all()
    assert (table.loc[marked, "prefill_device"].isin(["b200", "rubin"]) | table.loc[marked, "decode_device"].isin(
        ["b200", "rubin"])).all()
    # as in the verdict, where the baseline on those generations (0.434) undercuts the ASIC (1.10): the cheapest
    # feasible point is on a roadmap generation and cheaper than any on the scenario's own devices
    feasible = table[table["feasible"]]
    cheapest = feasible.loc[feasible["usd_per_mtok"].idxmin()]
    assert cheapest["roadmap_generation"]
    assert cheapest["usd_per_mtok"] < feasible.loc[~feasible["roadmap_generation"], "usd_per_mtok"].min()
    own = fleet_config(asic).pareto.model_copy(update={"devices": ["h100-sxm", "custom-decode-asic"]})
    assert set(pareto(asic, own)["placement"]) == {"h100-sxm", "custom-decode-asic", "h100-sxm>custom-decode-asic",
                                                   "custom-decode-asic>h100-sxm"}
    default = tco.load_scenario("default")
    assert roadmap_devices_held(default) == [] and not pareto(default, fleet_config(default).pareto)["roadmap_generation"].any()
    # the specialization tree places the same devices: Rubin, which the baseline runs from year 1, wins the batch leaf
    costs, winners = tree(asic, fleet_config(asic).tree)
    assert {"b200", "rubin"} <= set(costs["device"])
    assert winners.set_index(["view", "leaf"]).loc[("datasheet", "throughput batch"), "winner"] == "rubin"


def test_the_frontier_prices_speculation_and_the_prefix_cache_as_the_verdict_does():
    """Issue 48 item 6 (fleet analyses take the cache and speculation into account): reasoning-chat's options
    draft with EAGLE-3 on H100 and the LPU; the frontier places every device pair plain and with that speculation
    block (``+eagle``), and at the scenario's own TPOT target (20 ms) and batch cap (256) each of those four
    placements costs and decodes exactly as the verdict's option of the same fleet (h100 0.450, h100-eagle3 0.269,
    groq 6.09, groq-eagle3 2.87 USD per million output tokens). A scenario whose options do not speculate places no
    twin."""
    scenario = tco.load_scenario("reasoning-chat")
    table = pareto(scenario, fleet_config(scenario).pareto)
    assert {"h100-sxm+eagle", "groq-lpu+eagle", "h100-sxm>groq-lpu+eagle"} <= set(table["placement"])
    assert set(table.loc[table["placement"].str.endswith("+eagle"), "speculation"]) == {"eagle"}
    assert (table.loc[~table["placement"].str.endswith("+eagle"), "speculation"] == "none").all()
    v = scenario.values()
    own = table[np.isclose(table["tpot_target_s"], v["workload.tpot_target_s"]) & (table["batch_cap"] == v["workload.max_batch"])]
    results, _ = evaluate_arrays(scenario, {})
    for placement, option in (("h100-sxm", "h100"), ("h100-sxm+eagle", "h100-eagle3"), ("groq-lpu", "groq"),
                              ("groq-lpu+eagle", "groq-eagle3")):
        row = own[own["placement"] == placement].iloc[0]
        assert row["usd_per_mtok"] == pytest.approx(float(results[option].lcot_usd_per_mtok), rel=1e-12)
        assert row["tpot_s"] == pytest.approx(float(results[option].tpot_s), rel=1e-12)
    assert "eagle speculation" in own.loc[own["placement"] == "groq-lpu+eagle", "label"].iloc[0]
    # the tree's leaves too: at batch one a decode step reads every weight for one token, so drafting 2.73 accepted
    # tokens a step (k = 3, a = 0.75) more than halves the LPU's interactive cost; the prefill leaf has no twin
    costs, _ = tree(scenario, fleet_config(scenario).tree)
    leaf = costs[costs["view"] == "datasheet"].set_index(["leaf", "device"])["usd_per_mtok"]
    assert leaf["interactive batch-one", "groq-lpu+eagle"] < 0.5 * leaf["interactive batch-one", "groq-lpu"]
    assert not costs.loc[costs["leaf"] == "prefill only", "device"].str.contains("+", regex=False).any()
    default = tco.load_scenario("default")
    assert not pareto(default, fleet_config(default).pareto)["placement"].str.contains("+", regex=False).any()
    # the prefix cache is the workload's: agentic-coding's placements carry it (95 % of prompt tokens asked to hit),
    # each of its four options equal to its placement at the scenario's own target and cap (h100 6.40 USD per million)
    agentic = tco.load_scenario("agentic-coding")
    table = pareto(agentic, fleet_config(agentic).pareto)
    v = agentic.values()
    own = table[np.isclose(table["tpot_target_s"], v["workload.tpot_target_s"]) & (table["batch_cap"] == v["workload.max_batch"])]
    results, _ = evaluate_arrays(agentic, {})
    for placement, option in (("h100-sxm", "h100"), ("groq-lpu", "groq"), ("h100-sxm>groq-lpu", "h100-prefill+groq-decode"),
                              ("custom-decode-asic", "asic")):
        row = own[own["placement"] == placement].iloc[0]
        assert (row["usd_per_mtok"], row["ttft_s"]) == pytest.approx(
            (float(results[option].lcot_usd_per_mtok), float(results[option].ttft_s)), rel=1e-12)


INTERACTIVITY_DEVICES = ["h100-sxm", "h200-sxm", "b200", "mi300x", "mi355x"]


def test_the_interactivity_frontier_is_the_cores_cycle_at_each_concurrency(default_scenario):
    """Issue 51 item 2. A point is one replica closed-loop at its slot cap B: 1 / t(B) output tokens/s per user, B / t(B)
    per replica. Oracle: the validation suite's own scenario for a measured system (tco.analysis.validation.predict,
    one H100 TP8 replica, 2,000 / 400 tokens, squared CV 0.79, 8-bit, TPOT bound lifted) gives the same per-user
    speed at 64 sequences; per device is B x per user / 8; per provisioned MW: over (700 W TDP + 575 W host share)
    x PUE 1.25 = 1,593.75 W per device."""
    from tco.analysis.validation.cases import Conditions
    from tco.analysis.validation.predict import per_user_tokens_per_s_under_load, scenario_for
    from tco.dynamics.interactivity import interactivity_frontier

    f = interactivity_frontier(default_scenario, fleet_config(default_scenario, {"interactivity": {
        "devices": INTERACTIVITY_DEVICES}}).interactivity)
    c = f.curves
    point = c[(c["device"] == "h100-sxm") & (c["layout"] == "TP8") & (c["concurrency"] == 64)].iloc[0]
    measured = Conditions(model="llama-3.1-70b", device="h100-sxm", devices_per_replica=8, system_devices=8,
                          prompt_tokens=2000, prompt_tokens_scv=0.79, output_tokens=400, tpot_target_s=10.0, max_batch=64,
                          bits=8)
    oracle = scenario_for(measured, {}, "oracle")
    assert point["tokens_per_s_per_user"] == pytest.approx(
        float(per_user_tokens_per_s_under_load(oracle, oracle.values(), measured)), rel=1e-12)
    assert point["tokens_per_s_per_device"] == pytest.approx(64 * point["tokens_per_s_per_user"] / 8, rel=1e-12)
    assert point["tokens_per_s_per_mw"] == pytest.approx(point["tokens_per_s_per_device"] / 1593.75 * 1e6, rel=1e-12)
    assert set(c["device"]) == set(INTERACTIVITY_DEVICES)
    assert np.allclose(c["tokens_per_s_per_device"], c["concurrency"] * c["tokens_per_s_per_user"] / c["devices_per_replica"],
                       rtol=1e-12, atol=0)
    for _, curve in c[c["layout"] != "searched layout"].groupby(["device", "layout"]):  # one shape along the curve
        curve = curve.sort_values("concurrency")
        assert (np.diff(curve["tokens_per_s_per_user"]) <= 1e-9).all()  # more users in flight: each one slower
        assert (np.diff(curve["tokens_per_s_per_device"]) >= -1e-9).all()  # and more output per device
    # the TPOT target's interactivity: a point meets it where 1 / t(B) is at least 1 / 40 ms = 25 tokens/s
    assert (c["meets_tpot_target"] == (c["tokens_per_s_per_user"] >= 25.0 - 1e-9)).all()
    ops = f.operating.set_index("option")
    assert set(ops.index) == {o.name for o in default_scenario.structure.options} and ops.loc["h100", "feasible"]


@pytest.mark.parametrize("prompt, output", [(1000, 1000), (8000, 1000)])
def test_the_interactivity_frontier_of_five_gpus_on_a_70b_model(default_scenario, prompt, output):
    """The issue's views: H100, H200, B200, MI300X, MI355X on Llama 3.1 70B at 1k/1k and 8k/1k, each with a searched
    curve; the figure marks the operating points and the TPOT target; a device the catalog lacks is named."""
    from tco.dynamics.interactivity import MAX_DEVICES, interactivity_frontier
    from tco.inputs.catalog import load_catalog
    from tco.present.fleet_figures import interactivity_figure

    scenario = default_scenario.with_values({"workload.prompt_tokens": prompt, "workload.output_tokens": output})
    f = interactivity_frontier(scenario, fleet_config(scenario, {"interactivity": {
        "devices": INTERACTIVITY_DEVICES}}).interactivity)
    searched = f.curves[f.curves["layout"] == "searched layout"]
    assert set(searched["device"]) == set(INTERACTIVITY_DEVICES)
    fig = interactivity_figure(f)
    assert "the scenario's options at peak" in [t.name for t in fig.data]
    assert any(shape.x0 == pytest.approx(1 / 0.04) for shape in fig.layout.shapes)
    for y in ("usd_per_mtok", "tokens_per_s_per_mw"):
        assert len(interactivity_figure(f, y).data) == f.curves.groupby(["device", "layout"]).ngroups
    with pytest.raises(InputError, match=r"fleet_dynamics.interactivity.devices\[0\]: got 'h900'"):
        interactivity_frontier(scenario, fleet_config(scenario, {"interactivity": {"devices": ["h900"]}}).interactivity)
    # a device named twice runs once; more than MAX_DEVICES distinct devices is refused before anything runs
    twice = interactivity_frontier(scenario, fleet_config(scenario, {"interactivity": {
        "devices": ["b200", "b200"]}}).interactivity).curves
    assert not twice.duplicated(["device", "layout", "concurrency"]).any()
    many = sorted(load_catalog().devices)[:MAX_DEVICES + 1]
    with pytest.raises(InputError, match=f"names {MAX_DEVICES + 1} devices; at most {MAX_DEVICES}"):
        interactivity_frontier(scenario, fleet_config(scenario, {"interactivity": {"devices": many}}).interactivity)


def test_the_kv_wall_prices_the_split_with_the_prefix_cache_as_the_verdict_does():
    """Issue 48 item 6 for the KV wall: its split option at the scenario's own prompt length costs exactly what the
    verdict says (agentic-coding, 85 % of prompt tokens asked to hit: 75.95 USD per million output tokens), which
    differs from the same split without the cache (87.9): the wall carries the cache."""
    scenario = tco.load_scenario("agentic-coding")
    prompt = scenario.values()["workload.prompt_tokens"]
    wall = kv_wall(scenario, fleet_config(scenario, {"kv_wall": {"prompt_range": (prompt, 4 * prompt), "points": 3}}).kv_wall)
    first = wall.table.iloc[0]
    results, _ = tco.evaluate_scenario(scenario)
    uncached, _ = tco.evaluate_scenario(scenario.with_values({"workload.prefix_hit_fraction": 0.0}))
    assert first["prompt_tokens"] == prompt
    assert first["split_usd_per_mtok"] == pytest.approx(float(results[wall.option].lcot_usd_per_mtok), rel=1e-12)
    assert float(uncached[wall.option].lcot_usd_per_mtok) > 1.1 * first["split_usd_per_mtok"]


def test_the_frontier_at_fixed_power_is_output_per_provisioned_mw(default_scenario):
    """Issue 52 item 3 (the fixed-power Pareto): each point's output tokens/s per provisioned MW is the mean output
    served over its fleet's provisioned power, every device at (TDP + host) x PUE. On the default, an H100 draws
    (700 + 575) W x 1.25 = 1,593.75 W provisioned, so an H100 fleet of N devices serving the default's 100 req/s x
    400 output tokens = 40,000 tokens/s delivers 40,000 / (N x 1,593.75 W) x 1e6 per MW; no point on that frontier
    is beaten by another that delivers more per MW at no longer a TPOT."""
    table = pareto(default_scenario, fleet_config(default_scenario).pareto)
    h100 = table[(table["placement"] == "h100-sxm") & table["feasible"]]
    values = default_scenario.values()
    served = values["workload.requests_per_s"] * values["workload.output_tokens"]
    assert served == 40_000.0
    for _, point in h100.head(8).iterrows():
        edited = default_scenario.with_values({"workload.tpot_target_s": point["tpot_target_s"],
                                               "workload.max_batch": point["batch_cap"]})
        r = tco.evaluate_scenario(edited)[0]["h100"]
        assert point["tokens_per_s_per_mw"] == pytest.approx(served / (float(r.devices) * 1593.75) * 1e6, rel=1e-9)
    ok = table[table["feasible"]]
    front = ok[ok["on_frontier_power"]]
    assert len(front) > 0 and not table.loc[~table["feasible"], "on_frontier_power"].any()
    for _, p in front.iterrows():
        better = (ok["tokens_per_s_per_mw"] >= p["tokens_per_s_per_mw"]) & (ok["tpot_s"] <= p["tpot_s"]) & (
            (ok["tokens_per_s_per_mw"] > p["tokens_per_s_per_mw"]) | (ok["tpot_s"] < p["tpot_s"]))
        assert not better.any()


def test_pareto_mask_by_hand():
    cost = [1, 2, 3, 4, 2, np.nan]
    latency = [5, 3, 4, 1, 6, 0]
    # (3,4) is beaten by (2,3); (2,6) by (1,5); NaN is never on the frontier
    assert pareto_mask(cost, latency).tolist() == [True, True, False, True, False, False]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 10), st.floats(0, 10)), min_size=1, max_size=40))
def test_no_frontier_point_is_dominated(points):
    cost, latency = np.array(points).T
    mask = pareto_mask(cost, latency)
    assert mask.any()
    for i in np.flatnonzero(mask):
        dominated = (cost <= cost[i]) & (latency <= latency[i]) & ((cost < cost[i]) | (latency < latency[i]))
        assert not dominated.any()


def test_tree_winner_is_the_cheapest_feasible_device(toy):
    scenario, cfg = toy
    costs, winners = tree(scenario, cfg.tree)
    assert len(winners) == 10  # the training leaf and four inference leaves, in two views
    assert winners["branch"].iloc[0] == "training" and set(winners["branch"]) == {
        "training", "inference > interactive", "inference > batch", "inference > prefill", "inference > decode"}
    for w in winners.itertuples():
        group = costs[(costs["view"] == w.view) & (costs["leaf"] == w.leaf) & costs["feasible"]]
        assert w.winner == group.loc[group["usd_per_mtok"].idxmin(), "device"]
        assert w.margin >= 1.0


def test_tree_training_leaf_is_the_cheapest_training_cluster(toy):
    """The training leaf's winner is the device of the training scenario's cheapest run per token."""
    from tco.present.training_comparison import compare_training

    scenario, cfg = toy
    _, winners = tree(scenario, cfg.tree)
    training = tco.load_scenario(cfg.tree.training_scenario)
    table = compare_training(training, with_flips=False).options
    cheapest = table.loc[table["usd_per_mtok_trained"].idxmin()]
    leaf = winners[(winners["leaf"] == "training") & (winners["view"] == "datasheet")].iloc[0]
    assert leaf["winner"] == training.structure.option(cheapest.name).device
    assert leaf["usd_per_mtok"] == pytest.approx(cheapest["usd_per_mtok_trained"])


def test_roadmap_process_lever_by_hand(toy):
    scenario, cfg = toy
    table = roadmap(scenario, cfg.roadmap, cfg.routing).set_index("lever")
    # toy devices have no host power, so dividing TDP and idle power by 2.5^(5/10) divides fleet power by the same
    assert table.loc["process node", "factor"] == pytest.approx(2.5 ** 0.5, rel=1e-9)
    assert table["cumulative"].iloc[-1] == pytest.approx(np.prod(table["factor"]), rel=1e-9)


# --- command line --------------------------------------------------------------------------------------------------

def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_stranded_json_contract(capsys):
    code, out, _ = run(capsys, "fleet", "stranded", str(TOY_SPLIT), "--format", "json", "--policy", "today",
                       "--policy", "flex")
    data = json.loads(out)
    assert code == 0 and set(data["stranded_share"]) == {"today", "flex"}
    assert {p["fleet"] for p in data["policies"]} == {"split", "gpu"}


@pytest.mark.parametrize("analysis", ["kv-wall", "coordination", "pareto", "tree", "routing", "roadmap"])
def test_cli_every_analysis_writes_csv(capsys, analysis):
    code, out, _ = run(capsys, "fleet", analysis, str(TOY_SPLIT), "--format", "csv")
    assert code == 0 and len(out.splitlines()) > 1


def test_cli_writes_the_figure(capsys, tmp_path):
    target = tmp_path / "pareto.html"
    code, _, _ = run(capsys, "fleet", "pareto", str(TOY_SPLIT), "--html", str(target))
    assert code == 0 and "plotly" in target.read_text()


@pytest.mark.parametrize(("argv", "field"), [
    (["--prompt-growth", "-0.1"], "fleet_dynamics.stranded.prompt_growth_per_year"),
    (["--policy", "biggest"], "fleet_dynamics.stranded.policies.0"),
    (["--placement", "toy-gpu:toy-sram:1:1", "--format", "json"], None),
])
def test_cli_bad_input_exits_2_naming_the_field(capsys, argv, field):
    analysis = "pareto" if "--placement" in argv else "stranded"
    code, out, err = run(capsys, "fleet", analysis, str(TOY_SPLIT), *argv)
    if field is None:  # 1 device of 10 GB holds the 1 GB toy model: accepted
        assert code == 0
        return
    assert code == 2 and field in err and "Traceback" not in err and out == ""


def test_cli_placement_on_a_device_too_small_for_the_model(capsys):
    code, _, err = run(capsys, "fleet", "pareto", "default", "--placement", "h100-sxm:groq-lpu:8:4")
    assert code == 2 and "fleet_dynamics.pareto.placements[0].decode" in err and "cannot hold the model" in err


def test_kv_wall_says_where_the_split_wins_only_on_feasibility():
    """fleet-split: the split wins from ~1,208 to ~3,227 and from ~3,482 to ~8,028 prompt tokens (the second stretch
    in two pieces: the colocated ASIC stops meeting the TTFT target at ~3,603). Since the 2026-12-07 refit (H100 prompt
    tokens' collectives at NCCL's ring rate) the colocated H100 meets its targets as far as the split does, so no piece
    is a win on feasibility alone (until then, beyond ~4,397 tokens the longest prompts alone outlast H100's 1 s TTFT
    target and the split won on feasibility up to ~4,412, the sentence said so). Each piece's flag is checked against
    direct evaluations at its middle, and the sentence names the stretches without a feasibility clause."""
    from tco.present.fleet_summary import kv_sentences

    scenario = tco.load_scenario("fleet-split")
    result = kv_wall(scenario, fleet_config(scenario).kv_wall)
    b = result.breakevens["prompt_tokens"]
    assert [round(a) for w in b["split_wins"] for a in w] == [1208, 3227, 3482, 3603, 3603, 8028]
    assert b["split_alone_meets_targets"] == [False, False, False]
    middles = np.array([np.sqrt(a * c) for a, c in b["split_wins"]])
    r, _ = evaluate_arrays(scenario, {"workload.prompt_tokens": middles})
    met = np.logical_or.reduce([np.asarray(r[n].feasible) > 0 for n in result.counterparts.values()])
    assert (~met).tolist() == b["split_alone_meets_targets"] and (np.asarray(r[result.option].feasible) > 0).all()
    sentence = kv_sentences(result, 50.0)[1]
    assert sentence == ("The split beats the cheaper colocated option at a prompt length from 1,208 to 3,227 tokens and "
                        "from 3,482 to 8,028 tokens.")
    assert result.breakevens["link_bandwidth_bytes_per_s"]["split_alone_meets_targets"] == [False]


def test_kv_wall_figure_dots_the_points_that_miss_a_latency_target():
    from tco.present.fleet_figures import kv_gain_figure, kv_wall_figure

    scenario = tco.load_scenario("fleet-split")
    result = kv_wall(scenario, fleet_config(scenario).kv_wall)
    figure = kv_wall_figure(result)
    lines = {trace.name: np.asarray(trace.y, float) for trace in figure.data}
    for role, name in result.counterparts.items():
        solid = lines[f"{name} (colocated, {role} device)"]
        feasible = result.table[f"{name}_feasible"].to_numpy()
        np.testing.assert_array_equal(np.isnan(solid), ~feasible)
        assert (f"{name} (colocated, {role} device): misses a latency target" in lines) == (not feasible.all())
    # the costs span decades (short prompts cost a few USD per million, 100k-token prompts hundreds, the link a
    # thousandth): a log axis, and the link drawn in the colour it has in the gain chart beside it
    assert figure.layout.yaxis.type == "log"
    link = next(t for t in figure.data if t.name == "KV link cost")
    assert link.line.color == next(t for t in kv_gain_figure(result).data if t.name == "KV transfer cost (link)").line.color


def test_a_fleet_analysis_says_what_its_gpu_fleet_is_where_the_baseline_follows_the_roadmap(asic_scenario):
    """custom-asic's baseline is called h100 but runs B200s, then Rubins in Compare. The stranded-capacity analysis
    simulated the baseline on its own H100s at their costs (2,716 devices, $1.57/M under 'today'); it now simulates
    the fleet the verdict prices at t = 0, the baseline on B200 (issue 49 item 3: 1,178 devices, $0.858/M, the same
    rows as the scenario with its baseline moved to B200 and no roadmap). The coordination analysis took Compare's
    roadmap cost ($0.434/M) with the H100's tokens per joule (0.330); it now compares the same B200 fleet, its cost and
    its tokens per joule ($0.809/M, 0.544 tokens/J: the perf-per-watt break-even utilization of the ASIC pool moves
    from 0.097 to 0.426), while the split stays Compare's (plus the overhead: $1.24/M, the Fleet tab's reconciliation
    row; moving the whole scenario to B200 would price its bridge years at B200's cost, $1.41/M). Each card says so;
    fleet-split's baseline, with no roadmap, gets no such sentence and is simulated as before."""
    note = "In Compare the baseline h100 follows the general-purpose roadmap (b200, then rubin); "
    analysed = fleet_run("stranded", asic_scenario, fleet_config(asic_scenario))
    assert analysed.headline.sentence.endswith(note + "the GPU fleet simulated here is the baseline on b200, the "
                                               "generation it runs at t = 0, at that generation's costs.")
    on_b200 = simulate(baseline_on(asic_scenario, "b200"), fleet_config(asic_scenario).stranded).summary
    pd.testing.assert_frame_equal(analysed.extra["result"].summary, on_b200)
    gpu = on_b200[(on_b200["fleet"] == "h100") & (on_b200["policy"] == "today")].iloc[0]
    assert gpu["devices"] == 1178 and gpu["usd_per_mtok"] == pytest.approx(0.8581, rel=1e-3)
    compared = fleet_run("coordination", asic_scenario, fleet_config(asic_scenario))
    assert compared.headline.sentence.endswith(note + "the GPU fleet compared here is the baseline on b200, the "
                                               "generation it runs at t = 0: its cost and output tokens per joule.")
    b200 = tco.evaluate_scenario(baseline_on(asic_scenario, "b200"))[0]["h100"]
    summary = compared.payload["summary"]
    assert summary == coordination(asic_scenario, fleet_config(asic_scenario).coordination, b200).summary
    own = coordination(asic_scenario, fleet_config(asic_scenario).coordination).summary  # the split as Compare has it
    assert summary["split_usd_per_mtok"] == own["split_usd_per_mtok"] == pytest.approx(1.2409, rel=1e-3)
    assert summary["split_usd_per_mtok"] == next(r["usd_per_mtok"] for r in reconciliation(asic_scenario,
                                                 fleet_config(asic_scenario)) if r["where"] == "Coordination")
    assert summary["gpu_tokens_per_joule"] == pytest.approx(float(b200.tokens_per_joule), rel=1e-12)
    assert summary["gpu_usd_per_mtok"] == pytest.approx(float(b200.lcot_usd_per_mtok), rel=1e-12)
    assert (round(summary["gpu_tokens_per_joule"], 3), round(summary["gpu_usd_per_mtok"], 3)) == (0.544, 0.809)
    split = tco.load_scenario("fleet-split")
    assert "general-purpose roadmap" not in fleet_run("stranded", split, fleet_config(split)).headline.sentence


# --- issue 49 item 4: fleet views that do not contradict themselves ------------------------------------------------

@pytest.fixture(scope="module")
def default_fleet():
    scenario = tco.load_scenario("default")
    return scenario, fleet_config(scenario)


def test_routing_that_pays_at_any_share_names_no_share_where_it_stops(default_fleet):
    """The routing table said "router share at which routing stops paying 100.0 %" beside "it pays at any share": the
    default's small model pays at every share, so the table shows no such share (—) and the sentence says why."""
    analysis = fleet_run("routing", *default_fleet)
    assert analysis.payload["summary"]["breakeven_router_share"] >= 1.0  # the core caps it at the whole range
    assert math.isnan(analysis.records[0]["breakeven_router_share"])
    assert analysis.headline.sentence.endswith("it pays at any share, all requests included.")


def test_stranded_reports_its_backlog_beside_its_violation_hours(default_fleet):
    """The stranded table gave the split fleet 221 SLO-violation hours (196 since the 2026-12-07 refit of the Hopper
    class) and the GPU fleet a 357,010-request backlog with
    "0.0 M output tokens not served" and no backlog line. The two figures measure different things: an hour violates
    the targets when its load exceeds what the fleet serves within them; a backlog forms above flat-out capacity and
    is served in later hours. Now each row carries its largest backlog and what is queued at the end (0 here: the
    tokens not served are that end backlog x the last hour's output length = 0), and the sentence says so."""
    analysis = fleet_run("stranded", *default_fleet)
    rows = {(r["policy"], r["fleet"]): r for r in analysis.records}
    split = rows["today", "h100-prefill+groq-decode"]
    assert split["violation_hours"] == 196 and split["peak_backlog_req"] > 0 and split["backlog_at_end_req"] == 0
    assert split["output_tokens_not_served"] == 0
    gpu = rows["flex", "h100"]
    hourly = analysis.extra["result"].hourly
    assert gpu["peak_backlog_req"] == pytest.approx(hourly[hourly["policy"] == "flex"]["gpu_fleet_backlog_req"].max())
    assert "misses the latency targets in 196 hours" in analysis.headline.sentence
    assert "all of it is served within the quarter" in analysis.headline.sentence
    assert {"largest backlog, requests", "queued at the end, requests"} <= {c[0] for c in analysis.columns}


def test_kv_wall_decode_gain_only_where_both_fleets_meet_their_targets(default_fleet):
    """The KV wall's decode gain jumped to +16.3 USD/M at 30,929 tokens and back: there neither the split nor the H100
    fleet meets its targets, so the difference compared costs that buy no service. It is now given only where both
    meet them."""
    scenario, cfg = default_fleet
    table = kv_wall(scenario, cfg.kv_wall).table
    both = table["split_feasible"] & table["h100_feasible"]
    assert not both.all() and both.any()
    assert table.loc[~both, "decode_gain_usd_per_mtok"].isna().all()
    assert np.isfinite(table.loc[both, "decode_gain_usd_per_mtok"]).all()
