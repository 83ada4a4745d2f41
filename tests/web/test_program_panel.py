"""The chip program panel in a real browser (headless Chromium): a total NRE typed on the Break-even tab splits over
the node's parts and the break-even volume shown is the core's; a respin and another node follow; the link restores
them."""

from __future__ import annotations

import re

import pytest
from dropdowns import choose
from layout import audit, settle
from playwright.sync_api import expect
from test_browser import open_app
from what_ifs import ASIC_CAN_WIN

import tco
from tco.core.outputs import COMPARISON_OUTPUTS

#: custom-asic where the ASIC can win (tests/what_ifs.py), as a link
QUERY = "?scenario=custom-asic&set=" + ",".join(f"{k}:{v!r}" for k, v in ASIC_CAN_WIN.items())


def shown(key: str, value) -> str:
    return COMPARISON_OUTPUTS[key].format(float(value))


def test_a_total_nre_typed_in_the_panel_moves_the_breakeven_volume_to_the_cores(page, live_app, browser):
    url, log = live_app
    errors = open_app(page, url, QUERY)
    page.click("#tab-sensitivity")
    scenario = tco.load_scenario("custom-asic").with_values(ASIC_CAN_WIN)
    before = tco.analyse_scenario(scenario).challengers["asic"]
    volume = page.locator("#cell-program-breakeven_volume_units-1")
    expect(volume).to_have_text(shown("breakeven_volume_units", before.breakeven_volume_units), timeout=20000)
    expect(page.locator("#program-total")).to_have_value("109M")

    # 150 M USD over the 5 nm parts (109 M USD): every part times 150 / 109
    page.fill("#program-total", "150M")
    page.click("#program-apply")
    expect(page).to_have_url(re.compile(r"program\.nre_scale:1\.376"), timeout=20000)
    edited = scenario.with_values({"program.nre_scale": 150 / 109})
    after = tco.analyse_scenario(edited).challengers["asic"]
    assert float(after.nre_usd) == pytest.approx(150e6, rel=1e-12)
    expect(volume).to_have_text(shown("breakeven_volume_units", after.breakeven_volume_units), timeout=20000)
    expect(page.locator("#cell-program-breakeven_external_units-1")).to_have_text(
        shown("breakeven_external_units", after.breakeven_external_units))
    expect(page.locator("#cell-program-breakeven_demand_rps-1")).to_have_text(
        shown("breakeven_demand_rps", after.breakeven_demand_rps))
    expect(page.locator("#program-parts")).to_contain_text("architecture, RTL and physical design $48.2M")
    # the closed form is the solver's: tco.breakeven on the units sold to others crosses where the panel says
    [solved] = [b for b in tco.breakeven(edited, "program.external_units", 0.0, 1e6) if b.option == "asic"]
    assert solved.value == pytest.approx(float(after.breakeven_external_units), rel=1e-3)
    assert float(after.breakeven_volume_units) > float(before.breakeven_volume_units)

    # a respin (the 2022 survey's rate) that slips deployment a year, and the chip at 3 nm
    page.fill("#program-respin", "0.76")
    page.fill("#program-slip", "1")
    choose(page, "program-node", "3nm")
    page.click("#program-apply")
    expect(page).to_have_url(re.compile(r"option=node:3nm"), timeout=20000)
    expect(page).to_have_url(re.compile(r"program\.respin_probability:0\.76"))
    built = tco.inputs.option_edits.edited_scenario(tco.load_scenario("custom-asic"),
                                                    tco.inputs.option_edits.option_edits(["node:3nm"]))
    respun = built.with_values({**ASIC_CAN_WIN, "program.nre_scale": 150 / 109, "program.respin_probability": 0.76,
                                "program.respin_slip_years": 1.0})
    row = tco.analyse_scenario(respun).challengers["asic"]
    expect(volume).to_have_text(shown("breakeven_volume_units", row.breakeven_volume_units), timeout=20000)
    expect(page.locator("#cell-program-deployment_year-1")).to_have_text("4")
    expect(page.locator("#program-messages")).to_be_empty()

    # the link restores the program in a fresh browser
    fresh = browser.new_context()
    other = fresh.new_page()
    open_app(other, url, "?" + page.url.split("?", 1)[1])
    other.click("#tab-sensitivity")
    expect(other.locator("#cell-program-breakeven_volume_units-1")).to_have_text(
        shown("breakeven_volume_units", row.breakeven_volume_units), timeout=20000)
    expect(other.locator("#program-node")).to_contain_text("3nm")
    fresh.close()
    assert errors == []
    assert log.records == []


def test_a_bad_panel_value_is_named_and_a_scenario_without_a_chip_says_so(page, live_app):
    url, log = live_app
    errors = open_app(page, url, "?scenario=custom-asic")
    page.click("#tab-sensitivity")
    expect(page.locator("#program-total")).to_have_value("109M", timeout=20000)
    page.fill("#program-respin", "1.5")
    page.click("#program-apply")
    expect(page.locator("#program-messages")).to_contain_text(
        "program.respin_probability: got '1.5'; must be a number in [0, 1]", timeout=20000)
    page.goto(url + "/?scenario=default")
    expect(page.locator("#verdict")).not_to_be_empty(timeout=15000)
    page.click("#tab-sensitivity")
    expect(page.locator("#program-result")).to_contain_text("builds no chip of its own", timeout=20000)
    assert errors == []
    assert log.records == []


@pytest.mark.parametrize("width", [1024, 1440])
def test_the_panel_neither_overlaps_nor_clips(page, live_app, artifacts, width):
    """The layout audit (tests/web/layout.py) of the Break-even tab with the panel filled, at both window widths; the
    screenshot is saved as test-artifacts/program-panel-<width>.png."""
    url, log = live_app
    page.set_viewport_size({"width": width, "height": 900})
    open_app(page, url, QUERY)
    page.click("#tab-sensitivity")
    page.locator("#program-table").wait_for(timeout=20000)
    settle(page)
    assert audit(page) == []
    page.locator("#program-panel").screenshot(path=str(artifacts / f"program-panel-{width}.png"))
    assert log.records == []
