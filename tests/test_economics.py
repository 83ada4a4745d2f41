"""Specialization economics over time (issue 13): the program timeline, demand growth, the general-purpose
roadmap, node-aware chips, software porting, the program view and an independent finance oracle.

Every expected number is derived by hand in the test's docstring or comments, or computed by an
independent implementation (numpy-financial for NPV and IRR).
"""

from __future__ import annotations

import copy
import math

import numpy as np
import numpy_financial as npf
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from what_ifs import ASIC_CAN_WIN

import tco
import tco.analysis.evaluation
import tco.analysis.program_views
from tco.core.comparison import analyse
from tco.core.evaluate import evaluate
from tco.core.money import cashflow, generations, nodes, nre, timeline
from tco.core.money.purchases import Choice, GenerationPath, PoolPlan, pick, pool_present_values, pool_yearly_flows
from tco.foundation.errors import InputError
from tco.foundation.formatting import sig
from tco.foundation.plain_values import scalar
from tco.inputs.loading import SCENARIOS_DIR, scenario_from_dict
from tco.studies.sampling import draw_chunk, sampling_plan

FAST = settings(max_examples=25, deadline=None)


def spec(name: str) -> dict:
    return yaml.safe_load((SCENARIOS_DIR / f"{name}.yaml").read_text())


# --- timeline: discounted sums, the NRE schedule, deployment -------------------------------------------

def test_geometric_discounted_sum_by_hand():
    # r = 10 %, demand x1.5 a year, years 2..3: 1.5 / 1.1^2 + 2.25 / 1.1^3 = 1.239669 + 1.690458 = 2.930128
    assert timeline.geometric_discounted_sum(0.1, math.log(1.5), 1, 3) == pytest.approx(1.5 / 1.21 + 2.25 / 1.331, rel=1e-14)
    # growth equal to the rate (lambda v = 1): every year is worth v; years 1..4 -> 4 / 1.1
    assert timeline.geometric_discounted_sum(0.1, math.log(1.1), 0, 4) == pytest.approx(4 / 1.1, rel=1e-14)
    # no years, or a start after the end: nothing
    assert timeline.geometric_discounted_sum(0.1, 0.0, 3, 3) == 0.0 == timeline.geometric_discounted_sum(0.1, 0.0, 4, 2)


@FAST
@given(st.floats(0.0, 0.3), st.floats(-0.5, 2.0), st.integers(0, 10), st.integers(0, 20))
def test_geometric_discounted_sum_equals_the_yearly_sum(rate, growth, a, years):
    b = a + years
    brute = sum((1 + growth) ** (y - 1) * (1 + rate) ** -y for y in range(a + 1, b + 1))
    assert timeline.geometric_discounted_sum(rate, math.log1p(growth), a, b) == pytest.approx(brute, rel=1e-11, abs=1e-300)


def test_uniform_spend_over_a_window():
    # 1 USD over [0, 2.5): 0.4 at t = 0, 0.4 at t = 1, 0.2 at t = 2; PV at 10 % = 0.4 + 0.4/1.1 + 0.2/1.21 = 0.928926
    shares = [float(timeline.uniform_spend_share_in_year(t, 2.5)) for t in range(4)]
    assert shares == pytest.approx([0.4, 0.4, 0.2, 0.0])
    assert timeline.uniform_spend_pv_factor(0.1, 2.5) == pytest.approx(0.4 + 0.4 / 1.1 + 0.2 / 1.21, rel=1e-14)
    # an empty window: all of it at once, at t = 0
    assert float(timeline.uniform_spend_share_in_year(0, 0.0)) == 1.0 and timeline.uniform_spend_pv_factor(0.1, 0.0) == 1.0


def test_program_schedule_by_hand():
    """Time to market 2.25 years, 0.75 from tape-out to deployment: tape-out at 1.5.

    Design 10 + verification 5 + IP 3 = 18 over [0, 1.5): 12 at t = 0, 6 at t = 1; masks 6 at tape-out (t = 1);
    software 4 over [0, 2.25): 1.7778 at t = 0 and 1, 0.4444 at t = 2. By year: 13.7778, 13.7778, 0.4444.
    """
    parts = {"design_usd": 10.0, "verification_usd": 5.0, "ip_usd": 3.0, "masks_usd": 6.0, "software_usd": 4.0}
    schedule = timeline.ProgramSchedule(parts, np.float64(2.25), timeline.tapeout_year(2.25, 0.75))
    by_year = [float(schedule.usd_in_year(t)) for t in range(4)]
    assert by_year == pytest.approx([12 + 4 / 2.25, 6 + 6 + 4 / 2.25, 1 / 2.25, 0.0], rel=1e-12)
    assert float(schedule.total_usd) == 28.0
    assert schedule.present_value_usd(0.1) == pytest.approx(by_year[0] + by_year[1] / 1.1 + by_year[2] / 1.21, rel=1e-13)
    assert list(timeline.deployment_year(np.array([0.0, 2.0, 2.25, 2.999]))) == [0.0, 2.0, 3.0, 3.0]



def test_respin_in_the_program_schedule_by_hand():
    """The schedule above with a respin's expected mask set: p = 0.5 of masks 6 is 3, booked at the second tape-out,
    tape-out 1.5 plus a slip of 0.75 = 2.25, so at t = 2; the other parts keep their years. By year: 13.7778,
    13.7778, 0.4444 + 3; total 31."""
    parts = {"design_usd": 10.0, "verification_usd": 5.0, "ip_usd": 3.0, "masks_usd": 6.0, "software_usd": 4.0}
    parts["respin_usd"] = nre.expected_respin_usd(0.5, parts["masks_usd"])
    tapeout = timeline.tapeout_year(2.25, 0.75)
    schedule = timeline.ProgramSchedule(parts, np.float64(2.25), tapeout, tapeout + 0.75)
    by_year = [float(schedule.usd_in_year(t)) for t in range(4)]
    assert by_year == pytest.approx([12 + 4 / 2.25, 6 + 6 + 4 / 2.25, 1 / 2.25 + 3.0, 0.0], rel=1e-12)
    assert float(schedule.total_usd) == 31.0
    assert schedule.present_value_usd(0.1) == pytest.approx(by_year[0] + by_year[1] / 1.1 + by_year[2] / 1.21, rel=1e-13)
    assert float(nre.expected_slip_years(0.5, 0.75)) == 0.375

# --- purchases: the renewal chain and the year walk ------------------------------------------------------

def plan(z, n=1.0, unit=100.0, life=3.0, rv=0.1, per_device=0.0, busy=0.0, x=0.0, whole=True):
    return PoolPlan((np.float64(z),), (np.float64(x),), (np.float64(n),), (np.float64(unit),), (np.float64(life),),
                    (np.float64(rv),), {"energy_usd": (np.float64(per_device),)}, {"energy_usd": (np.float64(busy),)},
                    whole=whole)


def test_flat_fleet_renewed_and_credited():
    """3 replicas (2.5 rounded up) of 2 devices at 100 USD, life 3, horizon 5, rate 10 %, residual 10 %.

    Bought at t = 0 and t = 3 (6 units each); the first credited rv = 0.1 at t = 3, the second cut off at the
    horizon after 2 of 3 years: 1 - 0.9 x 2/3 = 0.4, credited at t = 5. Running 7 USD per device-year over years 1..5.
    """
    p = plan(2.5, n=2.0, per_device=7.0)
    demand = timeline.DemandPath(np.float64(0.1), np.float64(0.0), (), 5)
    pv = pool_present_values(p, GenerationPath.fixed(5.0, 5), demand, 0.0, 5.0, 0.1)
    assert float(pv.units) == 12.0
    assert float(pv.capex_usd) == pytest.approx(600 * (1 + 1.1 ** -3), rel=1e-13)
    assert float(pv.residual_usd) == pytest.approx(-600 * (0.1 * 1.1 ** -3 + 0.4 * 1.1 ** -5), rel=1e-13)
    assert float(pv.yearly_usd["energy_usd"]) == pytest.approx(6 * 7 * sum(1.1 ** -y for y in range(1, 6)), rel=1e-13)


def test_growing_fleet_year_by_year():
    """Demand x1.5 a year, one device per replica of capacity 1, life 2, horizon 4, no residual value.

    Devices needed: ceil(1), ceil(1.5), ceil(2.25), ceil(3.375) = 1, 2, 3, 4. Bought: t0 1; t1 +1; t2 +1 growth
    + 1 renewal of t0's; t3 +1 growth + 1 renewal of t1's = 1, 1, 2, 2 (6 units). Credits: none at end of life
    (rv 0); at the horizon t = 4 the two bought at t = 2 are at the end of their life (value 0), the two bought at
    t = 3 have half of it left: 2 x 0.5 = 1 unit's price.
    """
    p = plan(1.0, life=2.0, rv=0.0, unit=10.0)
    demand = timeline.DemandPath(np.float64(0.0), np.float64(0.5), (), 4)
    flows = pool_yearly_flows(p, GenerationPath.fixed(4.0, 4), demand, 0.0, 4.0)
    assert [float(b) for b in flows.bought] == [1, 1, 2, 2, 0]
    assert [float(h) for h in flows.held] == [0, 1, 2, 3, 4]
    assert [float(c) for c in flows.residual_usd] == [0, 0, 0, 0, -10.0]
    pv = pool_present_values(p, GenerationPath.fixed(4.0, 4), demand, 0.0, 4.0, 0.0)
    assert float(pv.units) == 6 and float(pv.capex_usd) == 60.0 and float(pv.residual_usd) == -10.0


def test_a_move_to_another_generation_retires_the_fleet_at_book_value():
    """Generation 0 (2 devices per replica of capacity 1, 100 USD, life 4) until t = 2, then generation 1 (one device,
    300 USD, life 4); horizon 3, rv 0, flat demand of 1 replica. Bought: 2 at t = 0; at t = 2 the two are retired
    after 2 of 4 years (book value 0.5 x 100 each) and 1 of generation 1 is bought, credited at the horizon after
    1 of 4 years (0.75 x 300)."""
    p = PoolPlan((1.0, 1.0), (0.0, 0.0), (2.0, 1.0), (100.0, 300.0), (4.0, 4.0), (0.0, 0.0), {})
    path = GenerationPath.from_switches([0.0, 0.0, 1.0], [False, False, True], 3.0)
    demand = timeline.DemandPath(np.float64(0.0), np.float64(0.0), (), 3)
    flows = pool_yearly_flows(p, path, demand, 0.0, 3.0)
    assert [float(b) for b in flows.bought] == [2, 0, 1, 0]
    assert [float(c) for c in flows.capex_usd] == [200, 0, 300, 0]
    assert [float(c) for c in flows.residual_usd] == [0, 0, -100, -225]
    pv = pool_present_values(p, path, demand, 0.0, 3.0, 0.0)
    assert float(pv.capex_usd) == 500 and float(pv.residual_usd) == -325 and float(pv.units) == 3


@pytest.mark.parametrize("name", [*tco.bundled_scenarios(), "specialization-over-time"])
def test_yearly_flows_equal_the_closed_form_on_random_draws(name):
    """The two views of one money plan agree line by line (growth, roadmap moves, programs included)."""
    scenario = tco.load_scenario(name)
    values = scenario.values() | draw_chunk(sampling_plan(scenario), 7, 0, 300)
    results = evaluate(scenario.structure, values)
    for option in scenario.structure.options:
        r = results[option.name]
        flows = cashflow.yearly_cash_flows(option, r, values)
        for line, pv in ((k, getattr(r, "pv_" + k)) for k in flows.lines):
            np.testing.assert_allclose(flows.present_value(flows.lines[line]), pv, rtol=1e-10, atol=1e-6, err_msg=line)
        np.testing.assert_allclose(flows.present_value(flows.output_tokens), r.pv_tokens, rtol=1e-10)
        for role, bought in flows.bought.items():
            if role != "links":
                np.testing.assert_allclose(bought.sum(axis=-1), r.pool(role).present_values.units_bought, rtol=1e-12)


# --- the program: timeline, own units against volume, break-evens, the vendor's price --------------------

def test_program_timeline_in_the_cash_flows(asic_scenario):
    """The ASIC (5 nm, 2.25 years to market) enters service in year 3: its NRE is paid in years 0-2 (masks at
    tape-out, t = 1.5 -> year 1), its demand is bridged at the baseline's levelized cost in years 1-3, and it
    buys nothing before year 3."""
    analysis = tco.analyse_scenario(asic_scenario)
    asic = analysis.options["asic"]
    flows = analysis.flows["asic"]
    assert float(asic.deployment_year) == 3.0
    nre_by_year = flows.lines["nre_usd"]
    assert np.all(nre_by_year[:3] > 0) and np.all(nre_by_year[3:] == 0)
    assert nre_by_year.sum() == pytest.approx(float(analysis.challengers["asic"].nre_usd))  # own use: all of it
    bridge = flows.lines["bridge_usd"]
    tokens = flows.output_tokens
    lcot = float(analysis.baseline.lcot_usd_per_mtok)
    assert bridge[0] == 0 and bridge[1:4] == pytest.approx(tokens[1:4] * lcot / 1e6) and np.all(bridge[4:] == 0)
    assert np.all(flows.lines["capex_usd"][:3] == 0) and flows.lines["capex_usd"][3] > 0
    assert analysis.baseline.deployment_year == 0 and "bridge_usd" not in [k for k, v in analysis.flows["h100"].lines.items()
                                                                           if np.any(v)]


def test_program_view_by_hand(asic_can_win):
    """Own units, volume and the NRE per unit follow their definitions; external sales lower the NRE the fleet
    carries by own / (own + external)."""
    scenario = asic_can_win.with_values({"workload.half_life_years": 6.0})
    alone, shared = (tco.analyse_scenario(scenario.with_values({"program.external_units": e})) for e in (0.0, 1e6))
    for analysis, external in ((alone, 0.0), (shared, 1e6)):
        row, option = analysis.challengers["asic"], analysis.options["asic"]
        own = float(option.pool("colocated").present_values.units_bought)
        assert float(row.fleet_units) == own and float(row.program_volume_units) == own + external
        assert float(option.pool("colocated").costs.unit_nre_usd) == pytest.approx(109e6 / max(own + external, 1), rel=1e-12)
    ratio = float(shared.options["asic"].pv_nre_usd) / float(alone.options["asic"].pv_nre_usd)
    own = float(alone.challengers["asic"].fleet_units)
    assert ratio == pytest.approx(own / (own + 1e6), rel=1e-12)
    # a million units sold to others make the ASIC win; on its own units it does not: the win needs external sales
    assert float(shared.challengers["asic"].npv_usd) > 0 >= float(shared.challengers["asic"].npv_own_use_usd)
    assert float(shared.challengers["asic"].needs_external_sales) == 1.0
    assert float(alone.challengers["asic"].needs_external_sales) == 0.0



def test_total_nre_splits_by_the_node_shares_by_hand(asic_can_win):
    """A 150 M USD program at 5 nm: the node's parts (design 35, verification 25, masks 15, IP 9, software 25 M USD)
    sum to 109 M USD, so ``program.nre_scale`` = 150 / 109 = 1.37615; design carries 35 x 150 / 109 = 48.165 M USD,
    masks 15 x 150 / 109 = 20.642 M USD. Every NRE figure is linear in the parts, so the PV of the NRE and the NRE
    each unit carries scale by 150 / 109; the default scale (1) changes nothing."""
    values = asic_can_win.values()
    parts = {k.removeprefix("program.nre."): values[k] for k in asic_can_win.values() if k.startswith("program.nre.")}
    assert sum(parts.values()) == 109e6
    scale = float(nre.nre_scale_for_total(150e6, parts))
    assert scale == pytest.approx(150 / 109, rel=1e-15)
    assert tco.analysis.program_views.nre_scale_for_total(asic_can_win.values(), 150e6) == scale
    split = nre.scaled_nre_parts(parts, scale)
    assert float(split["design_usd"]) == pytest.approx(48.1651376e6, rel=1e-8)
    assert float(split["masks_usd"]) == pytest.approx(20.6422018e6, rel=1e-8)
    base, big = (tco.analyse_scenario(asic_can_win, {"program.nre_scale": k}) for k in (1.0, scale))
    assert float(big.challengers["asic"].nre_usd) == pytest.approx(150e6, rel=1e-12)
    assert float(big.options["asic"].pv_nre_usd) == pytest.approx(float(base.options["asic"].pv_nre_usd) * 150 / 109,
                                                                  rel=1e-12)
    assert float(big.options["asic"].money.program.parts["design_usd"]) == pytest.approx(48.1651376e6, rel=1e-8)
    plain = tco.analyse_scenario(asic_can_win)
    assert float(plain.options["asic"].pv_cost_usd) == float(base.options["asic"].pv_cost_usd)


def test_respin_expected_cost_and_slip_by_hand(asic_can_win):
    """custom-asic at 5 nm with ``p = 0.76`` (the 2022 survey's respin rate, 1 - 0.24): the expected mask set is
    0.76 x 15 = 11.4 M USD, so the program's NRE is 109 + 11.4 = 120.4 M USD. Tape-out is at 2.25 - 0.75 = 1.5 years;
    with a slip of 0.5 the second tape-out is at 2.0, so the 11.4 M USD is discounted two years: the NRE's PV rises
    by 11.4 / (1 + r)^2. The expected slip 0.76 x 0.5 = 0.38 leaves deployment at ceil(2.25 + 0.38) = 3; a slip of
    1 year (0.76 x 1 = 0.76: ceil(3.01) = 4) delays it a year."""
    values = asic_can_win.values()
    rate = float(values["economics.discount_rate"])
    base = tco.analyse_scenario(asic_can_win)
    respin = tco.analyse_scenario(asic_can_win, {"program.respin_probability": 0.76, "program.respin_slip_years": 0.5})
    assert float(respin.challengers["asic"].nre_usd) == pytest.approx(120.4e6, rel=1e-12)
    pv = [float(a.options["asic"].money.program.present_value_usd(rate)) for a in (base, respin)]
    assert pv[1] - pv[0] == pytest.approx(11.4e6 / (1 + rate) ** 2, rel=1e-12)
    assert float(respin.options["asic"].deployment_year) == 3.0
    late = tco.analyse_scenario(asic_can_win, {"program.respin_probability": 0.76, "program.respin_slip_years": 1.0})
    assert float(late.options["asic"].deployment_year) == 4.0
    assert float(late.challengers["asic"].breakeven_volume_units) > float(respin.challengers["asic"].breakeven_volume_units)

def test_breakeven_formulas_by_hand():
    """V* = own N / (c - a) = 100 x 50 / 20 = 250, of which 150 sold to others; demand: fixed 60 vs 10, variable
    parts 90 and 130 at D = 10 -> D* = 10 x 50 / 40 = 12.5; vendor: (5,000 + 1e8 / 1e5) / (1 - 0.5) = 12,000 USD."""
    volume = nre.breakeven_volume_units(50.0, 100.0, 80.0, 100.0)
    assert volume == 250 and nre.breakeven_external_units(volume, 100.0) == 150
    assert nre.breakeven_demand(10.0, 60.0, 150.0, 10.0, 140.0) == 12.5
    assert nre.breakeven_demand(10.0, 5.0, 150.0, 10.0, 160.0) == 0.0  # cheaper fixed and variable costs: any demand
    assert nre.breakeven_demand(10.0, 60.0, 150.0, 10.0, 90.0) == np.inf  # dearer per unit of demand: never
    assert nre.vendor_unit_price_usd(5000.0, 1e8, 1e5, 0.5) == pytest.approx(12000.0)
    assert nre.nre_per_unit_usd(1e8, 0.0) == 1e8  # nothing built: carried on one unit


@pytest.mark.slow
def test_breakeven_demand_ties_the_option_with_continuous_sizing():
    """The closed form takes every cost but NRE, porting and re-authoring as proportional to demand. With
    continuous sizing that holds but for square-root staffing (slots grow a little slower than the load), so at
    the closed-form demand, on own use alone, the ASIC ties the baseline within 0.1 % of cost, and the demand is
    within 0.5 % of the solver's crossing (measured: 0.01 % and 0.1 % at a 6-year half-life)."""
    data = copy.deepcopy(spec("custom-asic"))
    data["fleet"] = {"sizing": "continuous"}
    scenario = scenario_from_dict(data).with_values({"workload.half_life_years": 6.0, **ASIC_CAN_WIN})
    demand = float(tco.compare(scenario).challengers.loc["asic", "breakeven_demand_rps"])
    assert math.isfinite(demand) and demand > 0
    at = tco.analyse_scenario(scenario.with_values({"workload.requests_per_s": demand}))
    assert float(at.options["asic"].pv_cost_usd) == pytest.approx(float(at.baseline.pv_cost_usd), rel=1e-3)
    [solved] = tco.breakeven(scenario, "workload.requests_per_s", 100, 1e6, option="asic")
    assert solved.status == "crosses" and demand == pytest.approx(solved.value, rel=5e-3)


def test_volume_units_is_refused_with_the_new_field_named():
    data = copy.deepcopy(spec("custom-asic"))
    data["program"]["volume_units"] = 50000
    with pytest.raises(InputError) as err:
        scenario_from_dict(data)
    assert "external_units" in str(err.value)


# --- the roadmap: policies, years of advantage --------------------------------------------------------------

ROADMAP = generations.RoadmapCosts(("old", "mid", "new"), (0.0, -1.0, 2.0), (10.0, 8.0, 6.0), (4.0, 3.0, 2.0))


def test_refresh_policies_by_hand():
    """Steady-state costs 10 / 8 / 6 (running 4 / 3 / 2); 'mid' released a year before t = 0, 'new' at t = 2.
    Every policy but keep starts on 'mid' (the cheapest released); each_generation moves at t = 2; when_cheaper does
    not (6 is not below mid's running 3); at_replacement with a 3-year life moves at t = 3."""
    life = (3.0, 3.0, 3.0)
    path = {p: generations.generation_path(p, ROADMAP, life, 5.0, 5) for p in generations.POLICIES}
    assert [float(g) for g in path["keep"].index] == [0, 0, 0, 0, 0]
    assert [float(g) for g in path["each_generation"].index] == [1, 1, 2, 2, 2]
    assert [float(g) for g in path["when_cheaper"].index] == [1, 1, 1, 1, 1]
    assert [float(g) for g in path["at_replacement"].index] == [1, 1, 1, 2, 2]
    assert [float(e) for e in path["each_generation"].end] == [2, 2, 5, 5, 5]
    cheap_running = generations.RoadmapCosts(ROADMAP.devices, ROADMAP.release_years, ROADMAP.full_usd_per_year, (4.0, 7.0, 2.0))
    assert [float(g) for g in generations.generation_path("when_cheaper", cheap_running, life, 5.0, 5).index] == [1, 1, 2, 2, 2]


def test_when_cheaper_counts_the_cost_of_holding_the_fleet():
    """ROADMAP: the fleet buys 'mid' at t = 0 (running 3); 'new' (full cost 6) is released at t = 2. With a holding
    cost of 3.5 - 0.5 a USD/yr at age ``a``, keeping 'mid' costs 3 + 2.5 = 5.5 at t = 2, 5 at t = 3 and 4.5 at t = 4,
    each below 6: it stays. With a flat 3.5 keeping costs 6.5 > 6: it moves at t = 2, as each_generation does. With
    no holding cost (None, the capital taken as sunk) keeping costs 3: it never moves."""
    life = (3.0, 3.0, 3.0)
    declining = generations.generation_path("when_cheaper", ROADMAP, life, 5.0, 5, lambda index, age: 3.5 - 0.5 * age)
    assert [float(g) for g in declining.index] == [1, 1, 1, 1, 1]
    flat = generations.generation_path("when_cheaper", ROADMAP, life, 5.0, 5, lambda index, age: 3.5 + 0.0 * age)
    assert [float(g) for g in flat.index] == [1, 1, 2, 2, 2]
    assert [float(g) for g in generations.generation_path("when_cheaper", ROADMAP, life, 5.0, 5).index] == [1] * 5


def test_holding_a_fleet_costs_its_book_value_decline_and_the_interest_on_it():
    """4 replicas of 2 devices at $10,000, 5-year life, 10 % residual, 8 % discount rate: 8 devices x $10,000 =
    $80,000. At age 2 the book value is ``1 - 0.9 x 2/5 = 0.64`` of the price, so a year more forgoes the decline
    ``0.9/5 = 0.18`` and the interest ``0.08 x 0.64 = 0.0512``: $80,000 x 0.2312 = $18,496 a year; at age 7 (renewed at
    5, so age 2 again) the same; at age 0, $80,000 x (0.18 + 0.08) = $20,800."""
    plan = PoolPlan((4.0,), (4.0,), (2.0,), (10_000.0,), (5.0,), (0.1,), {})
    demand = timeline.DemandPath(np.asarray(0.08), np.asarray(0.0))
    held = plan.holding_usd_per_year(0, np.array([2.0, 7.0, 0.0]), demand)
    np.testing.assert_allclose(held, [18_496.0, 18_496.0, 20_800.0], rtol=1e-12)


def test_the_roadmap_buys_the_cheapest_generation_that_meets_the_targets():
    """ROADMAP's steady-state costs 10 / 8 / 6 (running 4 / 3 / 2; 'mid' released at -1, 'new' at 2), two draws: in
    the first 'mid' misses a target (code 2), in the second every generation meets them.

    - each_generation: the first draw starts on 'old' (10, the cheapest that meets them; 'mid' is cheaper but misses),
      the second on 'mid' (8); both move to 'new' (6, meets them) at t = 2;
    - when_cheaper: neither moves at t = 2 (6 is not below old's running 4 nor mid's 3, and both fleets meet them);
    - 'old' and 'mid' both missing (codes 1, 2), 'new' meeting them: the cheapest released, 'mid', is bought first;
      when_cheaper leaves it for 'new' at t = 2 because 'new' meets the targets, though 6 is not below mid's 3.
    """
    codes = (np.array([0.0, 0.0]), np.array([2.0, 0.0]), np.array([0.0, 0.0]))
    roadmap = generations.RoadmapCosts(ROADMAP.devices, ROADMAP.release_years, ROADMAP.full_usd_per_year,
                                       ROADMAP.running_usd_per_year, infeasible_codes=codes)
    life = (3.0, 3.0, 3.0)
    path = generations.generation_path("each_generation", roadmap, life, 5.0, 5)
    assert [g.tolist() for g in path.index] == [[0, 1], [0, 1], [2, 2], [2, 2], [2, 2]]
    stays = generations.generation_path("when_cheaper", roadmap, life, 5.0, 5)
    assert [g.tolist() for g in stays.index] == [[0, 1]] * 5
    missing = generations.RoadmapCosts(ROADMAP.devices, ROADMAP.release_years, ROADMAP.full_usd_per_year,
                                       ROADMAP.running_usd_per_year, infeasible_codes=(1.0, 2.0, 0.0))
    assert [float(g) for g in generations.generation_path("when_cheaper", missing, life, 5.0, 5).index] == [1, 1, 2, 2, 2]


def test_years_of_advantage_by_hand():
    """Option 8 against one general generation of 10:
    - drift only (kappa 0.5, H 2): cheaper while 8 < 10 (1 - 0.5 (1 - 2^(-t/2))), until 2^(-t/2) = 0.6: t = 1.474;
    - pace only (halving every year after the last release at 0, no drift): 8 = 10 x 2^-t at t = log2 1.25 = 0.3219;
    - a cheaper generation (7) released at t = 2: the advantage ends at its release, 2 years after a deployment at 0;
    - deployed at t = 1 against 7 released at t = -1: behind by 2 years (-2).
    """
    one = generations.RoadmapCosts(("g",), (0.0,), (10.0,), (10.0,))
    assert generations.years_of_advantage(8.0, one, 0.0, 0.5, 2.0) == pytest.approx(-2 * math.log2(0.6), abs=1e-9)
    paced = generations.RoadmapCosts(("g",), (0.0,), (10.0,), (10.0,), 1.0)
    assert generations.years_of_advantage(8.0, paced, 0.0, 0.0, 2.0) == pytest.approx(math.log2(1.25), abs=1e-9)
    step = generations.RoadmapCosts(("g", "h"), (0.0, 2.0), (10.0, 7.0), (10.0, 7.0))
    assert generations.years_of_advantage(8.0, step, 0.0, 0.0, 2.0) == pytest.approx(2.0, abs=1e-9)
    behind = generations.RoadmapCosts(("g", "h"), (-3.0, -1.0), (10.0, 7.0), (10.0, 7.0))
    assert generations.years_of_advantage(8.0, behind, 1.0, 0.0, 2.0) == pytest.approx(-2.0, abs=1e-9)
    # cheaper than every generation listed, for ever (no pace): the century bound
    assert generations.years_of_advantage(5.0, step, 0.0, 0.0, 2.0) == generations.ADVANTAGE_SEARCH_YEARS


def test_no_years_of_advantage_without_a_roadmap():
    """fleet-split keeps its H100 baseline on one generation (no roadmap block): its decode ASIC, 0.69x the H100
    fleet's cost, was once reported ahead of "the general roadmap" for a century. No roadmap, no years of advantage:
    the row is absent, the verdict says the lead's length is not measured, a study metric of it is refused; given
    the catalog roadmap the same ASIC is behind it (B200 from year 0 is cheaper)."""
    scenario = tco.load_scenario("fleet-split")
    rows = tco.analyse_scenario(scenario).challengers
    assert float(rows["asic"].cost_ratio) < 1.0
    assert rows["asic"].years_of_advantage is None and rows["h100-prefill+asic-decode"].years_of_advantage is None
    verdict = tco.compare(scenario).verdict
    assert "century" not in verdict and "ahead of newer general-purpose generations is not measured" in verdict
    with pytest.raises(InputError, match="roadmap"):
        tco.studies.metric_values(scenario, "advantage:asic")
    data = yaml.safe_load((SCENARIOS_DIR / "fleet-split.yaml").read_text())
    data["roadmap"] = {"policy": "at_replacement"}
    rows = tco.analyse_scenario(scenario_from_dict(data)).challengers
    assert float(rows["asic"].years_of_advantage) < 0.0


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
@FAST
@given(st.floats(1.5, 4.0), st.floats(1.01, 3.0))
def test_a_faster_roadmap_never_lengthens_an_advantage(halving, factor):
    scenario = tco.load_scenario("specialization-over-time")
    edits = {"program.external_units": 1e6, "workload.half_life_years": 6.0}
    slow, fast = (tco.studies.metric_values(scenario, "advantage:asic", {**edits, "roadmap.cost_halving_years": h})
                  for h in (halving * factor, halving))
    assert float(fast) <= float(slow) + 1e-9


def test_the_baseline_follows_the_roadmap(asic_scenario):
    """custom-asic: the baseline starts on the cheapest generation per token released by mid-2026 (B200 with the
    calibrated catalog: B300 at the same fitted Blackwell share of peak costs more per token on this chat, $21.1M
    a year against $18.3M; the scenario's H100 $37.8M), and every roadmap policy but keep is at least as cheap as
    keep, whose fleet stays on the H100."""
    analysis = tco.analyse_scenario(asic_scenario)
    roadmap = analysis.baseline.roadmap
    assert roadmap.devices == ("h100-sxm", "b200", "b300", "rubin")
    released = [g for g, r in enumerate(roadmap.release_years) if float(r) <= 0]
    cheapest = min(released, key=lambda g: float(roadmap.full_usd_per_year[g]))
    assert float(analysis.flows["h100"].generation[0]) == cheapest == 1
    lcot = {}
    for policy in generations.POLICIES:
        data = copy.deepcopy(spec("custom-asic"))
        data["roadmap"]["policy"] = policy
        lcot[policy] = float(tco.analyse_scenario(scenario_from_dict(data)).baseline.lcot_usd_per_mtok)
    assert all(lcot[p] < lcot["keep"] for p in ("at_replacement", "each_generation", "when_cheaper"))


def test_a_roadmap_baseline_meets_the_targets_of_the_generations_it_holds():
    """The or of the infeasibility bits of the generations held before the horizon, by hand: generation 0 misses
    the TTFT target (bit 2), generation 1 meets every target (0), generation 2 misses the TPOT target (1).
    Path 1, 1, 1 over a 3-year horizon: 0 (generation 0 never held). Path 0, 1, 2: 2 | 0 | 1 = 3. Path 1, 1, 2 over a
    2-year horizon: 0 (generation 2 is bought in year 2, after it). Vectorized over three draws at once."""
    from tco.core.evaluate import held_generations_code

    codes = [np.array([2.0] * 3), np.array([0.0] * 3), np.array([1.0] * 3)]
    path = GenerationPath([np.array([1.0, 0.0, 1.0]), np.array([1.0, 1.0, 1.0]), np.array([1.0, 2.0, 2.0])],
                          [False] * 3, [3.0] * 3)
    assert held_generations_code(codes, path, np.array([3.0, 3.0, 2.0])).tolist() == [0, 3, 0]


def test_a_baseline_on_the_roadmap_is_judged_by_the_fleet_it_runs():
    """custom-asic at 10,000-token prompts: an H100 replica misses the 1 s TTFT target even when idle (prefill of the
    longest prompts alone takes longer; 4,400 tokens did until the 2026-12-07 refit made H100 prompt tokens'
    collectives cheaper), a B200 one meets it. The baseline runs B200 from year 0 and Rubin from year 1, so
    it meets the targets and is the cheapest option (before: reported infeasible by its H100 figures, which left the
    split the only feasible option). On a roadmap of Rubin alone (released at t = 0.25) it holds H100s in year 0:
    infeasible."""
    from tco.analysis.program_views import held_generations

    data = copy.deepcopy(spec("custom-asic"))
    data.setdefault("workload", {})["prompt_tokens"] = 10000
    analysis = tco.analyse_scenario(scenario_from_dict(data))
    base = analysis.baseline
    assert not bool(base.pool("colocated").performance.ttft_s <= 1.0)  # the scenario device's own figure
    assert held_generations(base) == ["b200", "rubin"] and float(base.infeasible_code) == 0.0
    assert min(analysis.options, key=lambda n: float(analysis.options[n].lcot_usd_per_mtok)
               if float(analysis.options[n].feasible) else np.inf) == "h100"
    data["roadmap"]["generations"] = ["rubin"]
    base = tco.analyse_scenario(scenario_from_dict(data)).baseline
    assert held_generations(base) == ["h100-sxm", "rubin"] and float(base.infeasible_code) == 2.0


def test_the_when_cheaper_rule_counts_what_holding_the_fleet_forgoes(monkeypatch):
    """custom-asic at base values (demand growing 50 % a year). A move credits every device held at book value, so
    keeping the B200 fleet one more year forgoes the value's decline and the interest on it: at age 1 on the 8-year
    horizon's first move, B200's running cost plus that holding cost exceeds Rubin's full cost and the fleet moves to
    Rubin in year 1, costing 0.434 USD per million output tokens, as ``each_generation`` does. Counting the running
    cost alone (the capital taken as sunk, the rule before 2026-12-05) it kept the B200s and bought more as demand
    grew: 0.810 (1.87x; docs/model.md "The refresh rule against the book-value credit")."""
    from tco.analysis.program_views import held_generations

    data = spec("custom-asic")
    assert data["roadmap"]["policy"] == "when_cheaper"
    results = {}
    for policy in ("when_cheaper", "each_generation"):
        analysis = tco.analyse_scenario(scenario_from_dict({**data, "roadmap": {**data["roadmap"], "policy": policy}}))
        results[policy] = (held_generations(analysis.baseline), float(analysis.baseline.lcot_usd_per_mtok))
    assert results["when_cheaper"][0] == results["each_generation"][0] == ["b200", "rubin"]
    assert results["when_cheaper"][1] == pytest.approx(0.434, abs=5e-4) == results["each_generation"][1]
    from tco.core import evaluate as evaluate_module

    # the rule with the capital taken as sunk: no holding cost passed to the path
    monkeypatch.setattr(evaluate_module, "generation_path", lambda *args: generations.generation_path(*args[:5]))
    analysis = tco.analyse_scenario(scenario_from_dict(data))
    assert held_generations(analysis.baseline) == ["b200"]
    assert float(analysis.baseline.lcot_usd_per_mtok) == pytest.approx(0.810, abs=5e-4)


def test_the_software_amortisation_is_against_the_generation_the_baseline_runs_at_deployment(asic_scenario):
    """custom-asic's ASIC enters service in year 3 and its software NRE is repaid by the yearly steady-state saving of
    its hardware over the baseline's. The baseline is called h100 but buys B200s and moves to Rubin in year 1, so the
    saving is against Rubin's full cost: none (Rubin costs less than the ASIC's hardware), the period never. With the
    ASIC at its best achievable share and Rubin past the horizon (what_ifs ASIC_CAN_WIN) the fleet holds B200s, and the
    period is ``software / (C_B200 - C_ASIC - reauthoring)`` with ``C_B200`` the B200 fleet's full cost per year as the
    roadmap ranks it; with Rubin in 2029 (year 3) the fleet holds Rubins when the ASIC arrives: never again. Before,
    the saving was taken against a fresh H100 fleet, which this baseline never buys: 1.00 years at base values (and
    0.09 years for specialization-over-time's LPX split, which saves nothing against B200s)."""
    from tco.core.money import plan as money

    assert float(tco.analyse_scenario(asic_scenario).challengers["asic"].software_payback_years) == math.inf
    for rubin, held in ((2032.0, 1), (2029.0, 3)):
        analysis = tco.analyse_scenario(asic_scenario, {**ASIC_CAN_WIN, "roadmap.rubin.release_year": rubin})
        base, asic = analysis.baseline, analysis.options["asic"]
        assert float(asic.deployment_year) == 3.0 and float(base.money.path.held_at(3.0)) == held
        assert base.roadmap.devices[held] == ("b200" if held == 1 else "rubin")
        hardware, _ = money.steady_state_usd_per_year(asic.money.pools, 0.0, asic.money.demand)
        saving = float(base.roadmap.full_usd_per_year[held] - hardware - asic.money.reauthoring_usd_per_year)
        software = float(analysis.values["program.nre.software_usd"])
        payback = float(analysis.challengers["asic"].software_payback_years)
        if held == 1:
            assert saving > 0 and payback == pytest.approx(software / saving, rel=1e-12)
            assert payback == pytest.approx(3.75, abs=0.01)
        else:
            assert saving <= 0 and payback == math.inf
    # the baseline's own steady-state cost: the generation it buys at t = 0 (B200), its port recovered
    base = tco.analyse_scenario(asic_scenario).baseline
    assert float(base.eac_usd_per_mtok) == pytest.approx(
        float(base.roadmap.full_usd_per_year[1]) / float(base.money.tokens_per_year) * 1e6, rel=1e-12)


def test_a_roadmap_baseline_accounts_for_the_fleet_it_buys(asic_scenario):
    """custom-asic's baseline is called h100 and buys B200s at t = 0: its accounting cost (straight-line depreciation
    plus year-1 opex) is that of the same scenario with the baseline on B200s and no roadmap, $16.8M a year, not that of
    a fleet of 2,656 H100s it never buys ($36.1M, before 2026-12-05)."""
    from tco.inputs.loading import scenario_from_dict

    base = tco.analyse_scenario(asic_scenario).baseline
    data = asic_scenario.to_dict()
    data.pop("roadmap")
    data["options"] = [{**o, "colocated": {"device": "b200"}} if o["name"] == "h100" else o for o in data["options"]]
    on_b200 = tco.analyse_scenario(scenario_from_dict(data)).baseline
    assert float(base.accounting_cost_usd_per_year) == pytest.approx(float(on_b200.accounting_cost_usd_per_year), rel=1e-12)
    assert float(base.accounting_cost_usd_per_year) == pytest.approx(16.82e6, rel=1e-3)


def test_a_roadmap_baseline_does_not_buy_a_cheaper_generation_that_misses_the_targets():
    """custom-asic with a 150 ms TTFT target and a B200 at the low end of its catalog ranges of price ($25,000) and
    share of peak FLOP/s (0.313): the B200 fleet is the cheapest generation released at t = 0 ($20.0M a year, reported
    at its cheapest shape, which misses the TTFT target only, against B300's $40.8M) but misses that target (code 2,
    as the H100's); the baseline buys B300s, the cheapest that meets it, then Rubin, and is feasible. Before, it bought
    the B200s and reported their miss (code 2). (At catalog values a 250 ms target showed it until the B200, which holds
    the model on one GPU, was searched up to TP8; 180 ms until a replica that misses the TTFT target at its full batch
    held its batch down; 170 ms until the held batch searched down to a quarter of the cap; and 160 ms until it took
    the largest cap that meets the TTFT target: the B200 now meets 160 ms itself, at $65.6M a year.)"""
    from tco.analysis.program_views import held_generations

    edits = {"workload.ttft_target_s": 0.15, "devices.b200.compute_efficiency": 0.313, "devices.b200.price_usd": 25000.0}
    analysis = tco.analyse_scenario(tco.load_scenario("custom-asic"), edits)
    roadmap = analysis.baseline.roadmap
    assert roadmap.devices[1:3] == ("b200", "b300")
    assert float(roadmap.full_usd_per_year[1]) < float(roadmap.full_usd_per_year[2])
    assert [float(c) for c in roadmap.infeasible_codes[:3]] == [2.0, 2.0, 0.0]
    assert held_generations(analysis.baseline) == ["b300", "rubin"] and float(analysis.baseline.infeasible_code) == 0.0


# --- nodes ---------------------------------------------------------------------------------------------

def test_node_scaling_by_hand():
    """5 nm figures built at 28 nm: compute x min(14.4 / 171.3, 1.0 / 2.5) = x0.0841 (area-limited), SRAM
    x 0.021 / 0.127 = x0.165; at 3 nm: compute x min(250 / 171.3, 1 / 0.89) = x1.124 (power-limited)."""
    values = {"program.logic_density_mtr_per_mm2": 14.4, "program.specs.logic_density_mtr_per_mm2": 171.3,
              "program.relative_energy_per_op": 2.5, "program.specs.relative_energy_per_op": 1.0,
              "program.sram_bitcell_um2": 0.127, "program.specs.sram_bitcell_um2": 0.021}
    assert nodes.compute_scale(values) == pytest.approx(14.4 / 171.3)
    assert nodes.sram_scale(values) == pytest.approx(0.021 / 0.127)
    values.update({"program.logic_density_mtr_per_mm2": 250.0, "program.relative_energy_per_op": 0.89,
                   "program.sram_bitcell_um2": 0.021})
    assert nodes.compute_scale(values) == pytest.approx(1 / 0.89)


def test_the_build_node_moves_speed_energy_and_unit_cost():
    """The same ASIC design built at 28 nm instead of 5 nm: less compute and SRAM (slower, fewer tokens per
    joule), a different wafer (unit cost), a different NRE; at 5 nm with its own specs node nothing is scaled."""
    results = {}
    for node in ("5nm", "28nm"):
        data = copy.deepcopy(spec("custom-asic"))
        data["program"].update(node=node, specs_node="5nm", die={"die_area_mm2": 400, "package_memory_board_usd": 4750})
        scenario = scenario_from_dict(data)
        assert (scenario.structure.node_scaled_tiers is None) == (node == "5nm")
        results[node] = tco.analyse_scenario(scenario)
    old, new = results["28nm"].options["asic"], results["5nm"].options["asic"]
    assert float(old.tokens_per_joule) < float(new.tokens_per_joule)
    assert float(old.devices) > float(new.devices)
    assert float(old.pool("colocated").costs.unit_price_usd) != float(new.pool("colocated").costs.unit_price_usd)
    assert float(results["28nm"].challengers["asic"].nre_usd) < float(results["5nm"].challengers["asic"].nre_usd)


# --- software porting ----------------------------------------------------------------------------------

def test_software_porting_per_hardware_generation(default_scenario):
    """Groq (specialized, adopted at t = 0) pays its class default port once: 3,000,000 USD at t = 0; the H100
    prefill pool of the split option runs the baseline's software (no port); the baseline pays none."""
    analysis = tco.analyse_scenario(default_scenario)
    assert float(analysis.options["groq"].pv_porting_usd) == pytest.approx(3e6)
    assert float(analysis.options["h100-prefill+groq-decode"].pv_porting_usd) == pytest.approx(3e6)
    assert float(analysis.baseline.pv_porting_usd) == 0.0
    assert analysis.challengers["groq"].software_payback_years == np.inf  # no saving to repay it


# --- an independent finance oracle: numpy-financial ----------------------------------------------------

@pytest.mark.parametrize("name", [*tco.bundled_scenarios(), "specialization-over-time"])
def test_npv_and_irr_agree_with_numpy_financial(name):
    """Every option's PV cost is numpy-financial's NPV of its yearly cash flows (npf.npv discounts year 0 by 1,
    the model's convention); every challenger's NPV is the NPV of the yearly saving, and its IRR (when the saving
    starts with an outlay) is npf.irr's."""
    scenario = tco.load_scenario(name)
    analysis = tco.analyse_scenario(scenario)
    rate = float(scenario.values()["economics.discount_rate"])
    base = analysis.flows[scenario.structure.baseline]
    for option in scenario.structure.options:
        flows = analysis.flows[option.name]
        assert npf.npv(rate, flows.total_usd) == pytest.approx(float(analysis.options[option.name].pv_cost_usd), rel=1e-9)
        if option.name == scenario.structure.baseline:
            continue
        years = max(base.total_usd.shape[-1], flows.total_usd.shape[-1])
        saved = np.pad(base.total_usd, (0, years - base.total_usd.shape[-1])) - np.pad(
            flows.total_usd, (0, years - flows.total_usd.shape[-1]))
        row = analysis.challengers[option.name]
        assert npf.npv(rate, saved) == pytest.approx(float(row.npv_usd), rel=1e-9, abs=1e-6)
        oracle = npf.irr(saved)
        if saved[0] < 0 and np.isfinite(oracle) and -0.99 < oracle < 10:
            assert float(row.irr) == pytest.approx(oracle, abs=1e-9)


def test_some_bundled_challenger_has_an_irr_and_it_is_numpy_financials():
    """The IRR is reported for an investment (an outlay in year 0); at least one bundled challenger is one."""
    checked = 0
    for name in tco.bundled_scenarios():
        analysis = tco.analyse_scenario(tco.load_scenario(name))
        base = analysis.flows[analysis.structure.baseline]
        for option, row in analysis.challengers.items():
            flows = analysis.flows[option]
            if np.isfinite(row.irr) and base.total_usd.shape == flows.total_usd.shape:
                assert float(row.irr) == pytest.approx(npf.irr(base.total_usd - flows.total_usd), abs=1e-9)
                checked += 1
    assert checked >= 1


def test_a_challenger_without_an_irr_says_why_in_the_json():
    """Issue 49 item 7: the JSON ``irr`` is null only with the reason, in the workbook's words. Derivation: the
    saving is ``baseline cost - option cost`` per year; custom-asic's challengers spend more than the H100 fleet in
    year 0 (the NRE and the chips) and have an IRR (-49.5 % and -96.0 %); the default's groq and split spend more
    in year 0 (their port and fleet) and the saving never turns the NPV's sign, so "never repay"; an option whose
    year-0 saving is positive has no outlay to earn a rate on."""
    for name in ("custom-asic", "default"):
        analysis = tco.analyse_scenario(tco.load_scenario(name))
        base = analysis.flows[analysis.structure.baseline]
        rows = tco.compare(tco.load_scenario(name), with_flips=False).to_dict()["comparison"]["by_option"]
        for option, row in rows.items():
            flows = analysis.flows[option]
            years = max(base.total_usd.shape[-1], flows.total_usd.shape[-1])
            saved = np.pad(base.total_usd, (0, years - base.total_usd.shape[-1])) - np.pad(
                flows.total_usd, (0, years - flows.total_usd.shape[-1]))
            assert row["outlay_in_year_0"] == float(saved[0] < 0)
            if row["irr"] is not None:
                assert row["irr_note"] is None
            elif saved[0] < 0:
                assert row["irr_note"] == "none: the savings never repay the outlay"
            else:
                assert row["irr_note"] == "none: no outlay in year 0, cheaper from the start"
    assert rows["groq"]["irr_note"] == "none: the savings never repay the outlay"
    assert cashflow.no_irr_reason(np.nan, False) == "none: no outlay in year 0, cheaper from the start"
    assert cashflow.no_irr_reason(0.12, True) is None


# --- vectorized -----------------------------------------------------------------------------------------

@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_a_million_draws_of_the_time_model_in_one_call():
    """Years are a structural axis: one call evaluates every draw (growth, roadmap moves, programs)."""
    scenario = tco.load_scenario("specialization-over-time")
    values = scenario.values() | draw_chunk(sampling_plan(scenario), 3, 0, 20_000)
    analysis = analyse(scenario.structure, values)
    assert analysis.challengers["asic"].years_of_advantage.shape == (20_000,)
    assert np.all(np.isfinite(analysis.options["h100"].pv_cost_usd))


def test_a_prepared_choice_picks_what_the_element_wise_chain_picks():
    rng = np.random.default_rng(5)
    index = rng.integers(0, 4, 10_000).astype(float)
    options = (rng.random(10_000), 2.5, rng.random(10_000), np.float64(7.0))
    stacks = {}
    choice = Choice.of(index, options, stacks)
    assert isinstance(choice, Choice)
    assert np.array_equal(pick(options, choice), pick(options, index))
    assert np.array_equal(pick(options, choice), np.choose(index.astype(int), np.broadcast_arrays(*options)))
    odd = (np.ones((2, 10_000)), 1.0, 2.0, 3.0)  # shaped unlike the draws: the chain
    assert np.array_equal(pick(odd, choice), pick(odd, index))
    assert Choice.of(index[:10], options, stacks) is not None and not isinstance(Choice.of(index[:10], options, {}), Choice)


def test_large_and_small_batches_of_the_roadmap_agree():
    """Large batches pick generations by one gather (:class:`Choice`), small ones element-wise; the same draws
    give the same results either way."""
    scenario = tco.load_scenario("custom-asic")
    values = scenario.values() | draw_chunk(sampling_plan(scenario), 11, 0, 8_000)
    large = evaluate(scenario.structure, values)
    small = evaluate(scenario.structure, {k: (v[:50] if np.ndim(v) else v) for k, v in values.items()})
    for option, result in small.items():
        for name in ("pv_cost_usd", "pv_capex_usd", "pv_residual_usd", "units_bought", "pv_energy_usd"):
            np.testing.assert_allclose(getattr(result, name), getattr(large[option], name)[:50], rtol=1e-12)


def test_a_roadmap_baseline_column_is_one_fleet(asic_scenario):
    """Issue 49 item 3: custom-asic's "h100 (baseline)" column showed the cost of the B200/Rubin roadmap beside 2,656
    H100s, 959 ms TTFT and 39.1 ms TPOT (the scenario device's fleet, which never serves). Now its serving and energy
    figures are the B200 fleet's, the generation it runs from year 0 (the generation whose fleet the core's accounting
    cost already reads: the two agree to the dollar), and the roadmap sentence names each generation's fleet by year."""
    comparison = tco.compare(asic_scenario, with_flips=False)
    shown = comparison.results["h100"]
    [b200, rubin] = [comparison.baseline_roadmap["fleets"][d] for d in ("b200", "rubin")]
    assert scalar(shown.devices) == b200["devices"] and scalar(shown.ttft_s) == pytest.approx(b200["ttft_s"])
    assert all(p.device == "b200" for p in shown.pools.values()) and b200["devices"] != 2656
    analysis = tco.analysis.evaluation.analyse_scenario(asic_scenario)
    fleets = tco.analysis.program_views.generation_fleets(analysis)
    assert scalar(fleets["b200"].accounting_cost_usd_per_year) == pytest.approx(
        scalar(analysis.baseline.accounting_cost_usd_per_year), rel=1e-12)
    assert scalar(shown.lcot_usd_per_mtok) == scalar(analysis.baseline.lcot_usd_per_mtok)  # the roadmap's cost
    assert (b200["from_year"], rubin["from_year"]) == (0, 1) and rubin["devices"] < b200["devices"]
    row = comparison.options.loc["h100"]
    assert row["devices"] == b200["devices"] and row["placement"] == "prefill+decode on b200"
    assert f"b200 from year 0 ({sig(b200['devices'], 4)} devices, time to first token" in comparison.verdict
