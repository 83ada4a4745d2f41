"""Rented capacity (a pool with ``rented: true``): its devices paid by the hour at
``options.<name>.<role>.rental_usd_per_hour``, never bought, powered or housed (docs/model.md "Rented capacity").

Figures derived by hand from the definition: rent per year = devices x rate x 8,760 h."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tco
from tco.foundation.errors import InputError
from tco.inputs.loading import scenario_from_dict
from tco.inputs.option_edits import edited_scenario, option_edits

RENTED = Path(__file__).parent / "data" / "workbook-rented.yaml"
RATE = "options.h100-rented.colocated.rental_usd_per_hour"


def _flat(scenario):
    """The rented-scenario without demand growth: every year the same fleet and tokens."""
    return scenario.with_values({"workload.demand_growth_per_year": 0.0})


@pytest.fixture(scope="module")
def rented():
    return _flat(tco.load_scenario(RENTED))


def test_a_rented_pool_pays_rent_and_nothing_else(rented):
    results = tco.evaluate_scenario(rented)[0]
    owned, hired = results["h100"], results["h100-rented"]
    pool = hired.pools["colocated"]
    devices = float(pool.sizing.devices)
    # the catalog's $2.95 per H100-hour, every device around the clock
    assert float(pool.costs.rental_usd_per_year) == pytest.approx(devices * 2.95 * 8760, rel=1e-12)
    for line in ("unit_hardware_usd", "energy_usd_per_year", "facility_usd_per_year", "maintenance_usd_per_year"):
        assert float(getattr(pool.costs, line)) == 0.0, line
    for line in ("pv_capex_usd", "pv_energy_usd", "pv_facility_usd", "pv_maintenance_usd", "pv_residual_usd"):
        assert float(getattr(hired, line)) == 0.0, line
    # the same serving physics as the owned pool: the same fleet
    assert devices == float(owned.pools["colocated"].sizing.devices)
    # a flat demand: the levelized cost is one year's rent over one year's output tokens
    tokens_per_year = float(hired.tokens_per_s) * 8760 * 3600
    assert float(hired.lcot_usd_per_mtok) == pytest.approx(devices * 2.95 * 8760 / tokens_per_year * 1e6, rel=1e-9)
    assert float(owned.pools["colocated"].costs.rental_usd_per_year) == 0.0


def test_the_flip_search_finds_the_rate_at_which_renting_stops_winning(rented):
    """At $1.20 an hour renting the H100s wins; it flips where its rent (linear in the rate) reaches the next cheapest
    option's levelized cost: rate* = LCOT_next / LCOT_rented(2.95) x 2.95."""
    cheap = rented.with_values({RATE: 1.2})
    result = tco.compare(cheap)
    assert result.decision.winner == "h100-rented"
    results = tco.evaluate_scenario(rented)[0]
    others = {name: float(r.lcot_usd_per_mtok) for name, r in results.items() if name != "h100-rented"}
    nearest = min(others, key=others.get)
    expected = others[nearest] / float(results["h100-rented"].lcot_usd_per_mtok) * 2.95
    flip = next(f for f in result.decision.flips if f["name"] == RATE)
    assert flip["becomes"] == nearest and flip["direction"] == "above"
    assert flip["windows"][0][0] == pytest.approx(expected, rel=1e-3)


@settings(max_examples=15, deadline=None)
@given(st.floats(0.5, 10.0), st.floats(1.01, 3.0))
def test_a_dearer_rate_never_lowers_the_rented_cost(rate, factor):
    base = tco.load_scenario(RENTED)
    low = tco.evaluate_scenario(base.with_values({RATE: rate}))[0]["h100-rented"]
    high = tco.evaluate_scenario(base.with_values({RATE: rate * factor}))[0]["h100-rented"]
    assert float(high.lcot_usd_per_mtok) >= float(low.lcot_usd_per_mtok) * (1 - 1e-12)


def test_the_rate_is_a_named_parameter_with_the_catalogs_range(rented):
    p = rented.params[RATE]
    assert (p.value, p.low, p.high, p.unit) == (2.95, 1.99, 5.0, "USD/h")
    given = rented.params["options.h100-prefill+h200-rented-decode.decode.rental_usd_per_hour"]
    assert (given.value, given.low, given.high) == (3.2, 2.5, 7.0)


def _with_option(pool: dict, **scenario):
    data = {**tco.load_scenario("default").to_dict(), **scenario}
    data["options"] = [*data["options"], {"name": "hired", "colocated": pool}]
    return scenario_from_dict(data)


@pytest.mark.parametrize(("pool", "extra", "path", "rule"), [
    ({"device": "h100-sxm", "rental_usd_per_hour": {"value": 2.0}}, {}, "options.3.colocated", "applies to a rented pool"),
    ({"device": "groq-lpu", "rented": True}, {}, "options[3].colocated.rental_usd_per_hour", "no rental rate for groq-lpu"),
])
def test_a_broken_rented_pool_is_named_by_its_path(pool, extra, path, rule):
    with pytest.raises(InputError) as err:
        _with_option(pool, **extra)
    assert any(e.path.startswith(path) and rule in e.rule for e in err.value.errors), err.value.errors


def test_a_rented_baseline_does_not_follow_the_roadmap():
    data = tco.load_scenario("custom-asic").to_dict()
    base = next(o for o in data["options"] if o["name"] == data["baseline"])
    base["colocated"]["rented"] = True
    with pytest.raises(InputError, match="a rented baseline does not follow the roadmap"):
        scenario_from_dict(data)


def test_a_chip_the_scenario_builds_cannot_be_rented():
    data = tco.load_scenario("custom-asic").to_dict()
    asic = next(o for o in data["options"] if "colocated" in o and o["colocated"]["device"] == data["program"]["device"])
    asic["colocated"].update(rented=True, rental_usd_per_hour={"value": 1.0})
    with pytest.raises(InputError, match="a chip the scenario builds is bought"):
        scenario_from_dict(data)


def test_the_command_line_rents_an_added_option():
    edits = option_edits(["add:h100-rented=colocated:h100-sxm,rented:yes"])
    scenario = edited_scenario(tco.load_scenario("default"), edits)
    assert scenario.structure.option("h100-rented").pools[0].rented
    assert "options.h100-rented.colocated.rental_usd_per_hour" in scenario.params
    with pytest.raises(InputError, match="valid boolean"):
        option_edits(["add:x=colocated:h100-sxm,rented:maybe"])


def test_drawn_rates_evaluate_as_scalar_calls_do():
    """One vectorized call over four rates of each rented pool equals four scalar calls, to the last bit."""
    base = tco.load_scenario(RENTED)
    split = "options.h100-prefill+h200-rented-decode.decode.rental_usd_per_hour"
    rates = np.array([1.0, 2.0, 2.95, 4.0])
    drawn = tco.evaluate_scenario(base, {RATE: rates, split: rates * 1.1})[0]
    for i, rate in enumerate(rates):
        one = tco.evaluate_scenario(base, {RATE: rate, split: rate * 1.1})[0]
        for name in ("h100-rented", "h100-prefill+h200-rented-decode"):
            assert float(drawn[name].lcot_usd_per_mtok[i]) == float(one[name].lcot_usd_per_mtok)


def test_a_paid_share_scales_the_rent_and_nothing_else(rented):
    """Reserved by default (share 1, range 0.5-1); the split's decode pool pays 0.8 of its H200-hours at $3.20:
    10 devices x 3.2 x 0.8 x 8,760 = $224,256 a year; halving the H100 pool's share halves its rent and its cost."""
    assert (rented.params["options.h100-rented.colocated.rental_paid_share"].value,
            rented.params["options.h100-rented.colocated.rental_paid_share"].low) == (1.0, 0.5)
    results = tco.evaluate_scenario(rented)[0]
    decode = results["h100-prefill+h200-rented-decode"].pools["decode"]
    assert float(decode.costs.rental_usd_per_year) == pytest.approx(
        float(decode.sizing.devices) * 3.2 * 0.8 * 8760, rel=1e-12)
    half = tco.evaluate_scenario(rented, {"options.h100-rented.colocated.rental_paid_share": 0.5})[0]["h100-rented"]
    full = results["h100-rented"]
    assert float(half.pools["colocated"].costs.rental_usd_per_year) == pytest.approx(
        0.5 * float(full.pools["colocated"].costs.rental_usd_per_year), rel=1e-12)
    assert float(half.lcot_usd_per_mtok) == pytest.approx(0.5 * float(full.lcot_usd_per_mtok), rel=1e-12)


def test_the_market_check_rents_a_rented_pool_at_its_own_rate(rented):
    """The split's decode pool is rented at $3.20 for 0.8 of its hours, its prefill pool owned: renting the whole
    fleet prices the prefill H100s at the catalog's $2.95 and the decode H200s at 3.2 x 0.8 = $2.56 an hour."""
    result = tco.compare(rented, with_flips=False)
    split = result.market.rented["h100-prefill+h200-rented-decode"]
    assert split.usd_per_device_hour == {"prefill": 2.95, "decode": pytest.approx(2.56, rel=1e-12)}
    assert result.market.holding == {"h100": "owning", "h100-rented": "renting",
                                     "h100-prefill+h200-rented-decode": "owning and renting"}
    # a fully rented option rented is itself: with a flat demand its rent over its tokens is its levelized cost
    assert result.market.rented["h100-rented"].usd_per_mtok == pytest.approx(
        result.market.lcot_usd_per_mtok["h100-rented"], rel=1e-9)
