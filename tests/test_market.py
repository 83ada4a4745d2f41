"""The market check (tco.analysis.market): API list prices and rented fleets beside the owned fleets' costs.

Figures derived by hand from the formulas' definitions and the catalog's quotes (assumptions/market.yaml,
[genai-prices-2026]; rental rates of devices/*.yaml)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tco
from tco.analysis.market import api_usd_per_mtok_output, hourly_usd_per_mtok_output, market_check
from tco.export.workbook import build_workbook
from tco.foundation.errors import InputError
from tco.foundation.formatting import sig
from tco.inputs.catalog import Catalog, api_quotes
from tco.present.comparison import compare


def test_api_price_of_a_request_by_hand():
    # 1,000 prompt tokens, 200 output, no cache, $0.59 in / $0.79 out:
    # (1000 x 0.59 + 200 x 0.79) / 200 = (590 + 158) / 200 = 3.74 USD per million output tokens
    assert api_usd_per_mtok_output(1000, 200, 0.0, 0.59, 0.79) == pytest.approx(3.74, rel=1e-12)
    # DeepSeek-R1 at standard hours, 56.3 % of the prompt from the cache (DeepSeek's own day-6 figure):
    # prompt price 0.437 x 0.55 + 0.563 x 0.14 = 0.24035 + 0.07882 = 0.31917; (1000 x 0.31917 + 200 x 2.19) / 200
    # = (319.17 + 438) / 200 = 3.78585
    assert api_usd_per_mtok_output(1000, 200, 0.563, 0.55, 2.19, 0.14) == pytest.approx(3.78585, rel=1e-12)
    # no cached price: a hit costs as a miss
    assert api_usd_per_mtok_output(1000, 200, 0.5, 0.59, 0.79) == api_usd_per_mtok_output(1000, 200, 0.0, 0.59, 0.79)


def test_rented_fleet_by_hand():
    # 116 H100 at $2.95 an hour = $342.2 an hour; over 1,000 output tokens/s: 342.2 / 3600 / 1000 x 1e6 = 95.06 USD/Mtok
    assert hourly_usd_per_mtok_output(116 * 2.95, 1000.0) == pytest.approx(342.2 / 3.6, rel=1e-12)


@given(st.floats(1, 1e5), st.floats(1, 1e4), st.floats(0, 1), st.floats(0, 10), st.floats(0, 10), st.floats(0, 1))
def test_more_cache_hits_never_raise_an_api_bill_when_cached_tokens_cost_less(prompt, output, hits, p_in, p_out, share):
    cached = share * p_in
    less = api_usd_per_mtok_output(prompt, output, hits * 0.5, p_in, p_out, cached)
    more = api_usd_per_mtok_output(prompt, output, hits, p_in, p_out, cached)
    assert more <= less * (1 + 1e-12) + 1e-12


def test_default_scenario_against_the_market():
    """The default: Llama 3.1 70B, 5 prompt tokens per output token (its input+output basis 1/6 of the output basis);
    groq's $0.59 / $0.79: 5 x 0.59 + 0.79 = 3.74 per million output tokens, together's 0.88 x 6 = 5.28."""
    result = compare(tco.load_scenario("default"), with_flips=False)
    check = result.market
    values = result.scenario.values()
    ratio = values["workload.prompt_tokens"] / values["workload.output_tokens"]
    by_provider = {p.provider: p for p in check.prices}
    assert by_provider["groq"].usd_per_mtok == pytest.approx(ratio * 0.59 + 0.79, rel=1e-12)
    assert by_provider["together"].usd_per_mtok == pytest.approx((ratio + 1) * 0.88, rel=1e-12)
    assert check.cheapest.provider == "groq"
    # the H100 fleet rented: its devices x $2.95 over its mean output tokens/s
    h100 = result.results["h100"]
    rented = check.rented["h100"]
    devices = float(h100.pools["colocated"].sizing.devices)
    expected = devices * 2.95 / 3600 / float(h100.tokens_per_s) * 1e6
    assert rented.usd_per_mtok == pytest.approx(expected, rel=1e-12)
    # Groq's LPU has no rental rate in the catalog: said, not priced
    assert check.unrented["groq"] == ("groq-lpu",)
    # the sentences: the cheapest owned option against the cheapest quote, the LPU options out of line with Groq's
    # own list price, the H100 fleet rented
    owned = check.lcot_usd_per_mtok["h100"]
    assert f"owning h100 costs {sig(owned / by_provider['groq'].usd_per_mtok, 2)}x that" in result.verdict
    assert "far more than groq's own list price on its groq-lpu ($3.74)" in result.verdict
    assert "Rented around the clock at $2.95 per h100-sxm-hour" in result.verdict
    block = result.to_dict()["market"]
    assert block["cheapest_api"] == "groq" and block["no_rental_rate"] == {"groq": ["groq-lpu"],
                                                                          "h100-prefill+groq-decode": ["groq-lpu"]}


def test_owned_year1_cost_is_the_accounting_cost_over_the_year_tokens():
    result = compare(tco.load_scenario("default"), with_flips=False)
    r = result.results["h100"]
    tokens_per_year = float(r.tokens_per_s) * 8760 * 3600
    assert result.market.year1_usd_per_mtok["h100"] == pytest.approx(
        float(r.accounting_cost_usd_per_year) / tokens_per_year * 1e6, rel=1e-12)


def test_the_quotes_are_reference_figures_never_parameters():
    scenario = tco.load_scenario("default")
    assert "market.llama-3.1-70b.groq.output_usd_per_mtok" in scenario.reference
    assert not any(name.startswith("market.") for name in scenario.params)


def test_a_scenario_whose_model_has_no_quote_says_nothing_of_the_market():
    check = market_check(replace(tco.load_scenario("default"), api_quotes=()), {})
    assert check.prices == () and check.cheapest is None


def test_a_broken_quote_is_named_by_its_path():
    catalog = Catalog(market={"api_prices": {"m": [{"provider": "x", "input_usd_per_mtok": {"value": 1.0}}]}})
    with pytest.raises(InputError) as err:
        api_quotes(catalog, "m")
    assert any(e.path.startswith("market.api_prices.m[0].output_usd_per_mtok") for e in err.value.errors)
    catalog = Catalog(market={"api_prices": {"m": {"provider": "x"}}})
    with pytest.raises(InputError, match="must be a list of quotes"):
        api_quotes(catalog, "m")


def test_every_bundled_quote_prices_the_default_workload_finitely():
    for name in ("default", "voice-agent", "deepseek-service", "reasoning-chat"):
        result = compare(tco.load_scenario(name), with_flips=False)
        assert result.market.prices, name
        assert all(math.isfinite(p.usd_per_mtok) and p.usd_per_mtok > 0 for p in result.market.prices)


@pytest.mark.slow  # a mixture-of-experts workbook (3 s); make test-fast checks the default's Market sheet formulas
def test_the_workbook_prices_the_market_with_live_formulas():
    """The Market sheet: each quote's prices as shaded cells and the request's cost as a formula of the Inputs' names;
    each rented fleet's rent a formula of the Model's device counts; every figure on the Check sheet beside the
    Python model's (LibreOffice recalculates them in tests/test_workbook.py's parity test)."""
    path = Path(__file__).parent / "data" / "workbook-market.yaml"
    wb = build_workbook(tco.load_scenario(path))
    ws = wb["Market"]
    formulas = {ws.cell(row=r, column=4).value: ws.cell(row=r, column=2).value for r in range(1, ws.max_row + 1)
                if ws.cell(row=r, column=4).value}
    api = formulas["deepseek.api_usd_per_mtok"]
    assert api.startswith("=") and "workload.prefix_hit_fraction" in api and "workload.prompt_tokens" in api
    assert "/3600/'Model'!" in formulas["market.rented_usd_per_mtok"]
    check = {(r[0], r[1]): r[2] for r in wb["Check"].iter_rows(min_row=6, values_only=True) if r[0]}
    # 3,619 x (0.437 x 0.27 + 0.563 x 0.07) + 1,000 x 1.10 = 3,619 x 0.1574 + 1,100 = 1,669.63 per 1,000 output tokens
    assert check[("market", "deepseek.api_usd_per_mtok")] == pytest.approx(1.6696306, rel=1e-12)
    assert ("h200-prefill+b200-decode", "market.rented_usd_per_mtok") in check


def test_an_api_cheaper_than_every_owned_fleet_is_said_so():
    """voice-agent (Llama 3.1 8B, 1,500 prompt / 150 output tokens, 40 % of the prompt cached; Groq lists no cached
    price): 10 x 0.05 + 0.08 = $0.58 per million output tokens, below the cheapest owned fleet; the default's H100 at
    0.4x Groq's price is not."""
    voice = compare(tco.load_scenario("voice-agent"), with_flips=False)
    assert voice.market.cheapest.usd_per_mtok == pytest.approx(1500 / 150 * 0.05 + 0.08, rel=1e-12)
    assert voice.market.lcot_usd_per_mtok[voice.decision.winner] > voice.market.cheapest.usd_per_mtok
    assert "buying the tokens costs less than any fleet here" in voice.verdict
    default = compare(tco.load_scenario("default"), with_flips=False)
    assert "buying the tokens" not in default.verdict
