"""The app in a real browser (headless Chromium via Playwright): every page loads, edits change
results, bad values are flagged, downloads round-trip, two users never share state, and neither
the browser console nor the server logs an error."""

from __future__ import annotations

import re

import openpyxl
from playwright.sync_api import expect
from tco_app.pages import PAGES

import tco
from tco.scenario import scenario_from_dict

VALUE_CELL = 'tr:has(td[data-dash-column="name"]:has-text("{name}")) td[data-dash-column="value"]'

def open_app(page, url, query=""):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url + "/" + query)
    expect(page.locator("#verdict")).not_to_be_empty(timeout=15000)
    return errors

def edit(page, name, text):
    page.click("#tab-assumptions")
    cell = page.locator(VALUE_CELL.format(name=name))
    cell.click()
    page.keyboard.type(text)
    page.keyboard.press("Enter")

def baseline_cost_text(scenario) -> str:
    """The Compare page's cost cell of the baseline, formatted as the page does."""
    return f"{tco.compare(scenario).options.iloc[0]['lcot_usd_per_mtok']:,.3f}"

def test_every_page_loads_and_screenshots(page, live_app, artifacts):
    url, log = live_app
    errors = open_app(page, url)
    page.wait_for_timeout(500)
    for name in PAGES:
        page.click(f"#tab-{name}")
        expect(page.locator(f"#page-{name}")).to_be_visible()
        page.wait_for_timeout(800)
        page.screenshot(path=str(artifacts / f"app-{name}.png"), full_page=True)
    assert errors == []
    assert log.records == []

def test_edit_changes_results_and_url(page, live_app):
    url, log = live_app
    errors = open_app(page, url)
    default = tco.load_scenario("default")
    expect(page.locator("#cell-lcot-0")).to_have_text(baseline_cost_text(default))
    edit(page, "economics.discount_rate", "0.2")
    expected = baseline_cost_text(default.with_values({"economics.discount_rate": 0.2}))
    page.click("#tab-compare")
    expect(page.locator("#cell-lcot-0")).to_have_text(expected)
    expect(page).to_have_url(re.compile(r"set=economics\.discount_rate:0\.2"))
    # the link reproduces the view in a fresh page
    shared = page.context.new_page()
    open_app(shared, url, "?" + page.url.split("?", 1)[1])
    expect(shared.locator("#cell-lcot-0")).to_have_text(expected)
    assert errors == []
    assert log.records == []

def test_invalid_value_is_flagged_not_applied(page, live_app):
    url, log = live_app
    errors = open_app(page, url)
    before = page.locator("#cell-lcot-0").inner_text()
    edit(page, "economics.pue", "5")
    message = "economics.pue: got '5'; must be a number in [1, 3] ratio"
    expect(page.locator("#edit-errors")).to_contain_text(message)
    expect(page.locator(VALUE_CELL.format(name="economics.pue"))).to_have_text("5")
    edit(page, "economics.electricity_usd_per_kwh", "cheap")
    refused = "economics.electricity_usd_per_kwh: got 'cheap'; is not a number tco reads"
    expect(page.locator("#edit-errors")).to_contain_text(refused)
    page.click("#tab-compare")
    expect(page.locator("#cell-lcot-0")).to_have_text(before)
    assert errors == []
    assert log.records == []

def test_download_scenario_round_trips(page, live_app, tmp_path):
    url, log = live_app
    open_app(page, url, "?scenario=default&set=economics.discount_rate:0.12")
    page.click("#tab-assumptions")
    with page.expect_download() as info:
        page.click("#download-yaml-button")
    path = tmp_path / "edited.yaml"
    info.value.save_as(path)
    loaded = tco.load_scenario(path)
    assert loaded.params["economics.discount_rate"].value == 0.12
    assert scenario_from_dict(loaded.to_dict()).values() == loaded.values()
    assert log.records == []

def test_chart_html_download(page, live_app, tmp_path):
    url, log = live_app
    open_app(page, url)
    with page.expect_download() as info:
        page.locator("#compare-lcot-box > button").click()
    path = tmp_path / "chart.html"
    info.value.save_as(path)
    text = path.read_text()
    assert "USD per million output tokens" in text and "<script" in text
    assert page.locator("#compare-lcot-box .modebar-btn[data-title='Share chart...']").count() == 0
    assert log.records == []

def test_two_users_do_not_share_state(browser, live_app):
    url, log = live_app
    alice, bob = browser.new_context(), browser.new_context()
    a, b = alice.new_page(), bob.new_page()
    open_app(a, url)
    open_app(b, url)
    default = tco.load_scenario("default")
    edit(a, "economics.discount_rate", "0.2")
    edit(b, "economics.electricity_usd_per_kwh", "0.3")
    a.click("#tab-compare")
    b.click("#tab-compare")
    expect(a.locator("#cell-lcot-0")).to_have_text(baseline_cost_text(default.with_values({"economics.discount_rate": 0.2})))
    expect(b.locator("#cell-lcot-0")).to_have_text(
        baseline_cost_text(default.with_values({"economics.electricity_usd_per_kwh": 0.3})))
    assert "electricity" not in a.url and "discount" not in b.url
    alice.close()
    bob.close()
    assert log.records == []


def test_sensitivity_and_monte_carlo_run(page, live_app):
    url, log = live_app
    errors = open_app(page, url)
    page.click("#tab-sensitivity")
    expect(page.locator("#breakeven-list li").first).to_be_visible(timeout=15000)
    expect(page.locator("#tornado-box .gtitle")).to_contain_text("Tornado", timeout=15000)
    expect(page.locator("#map-box .gtitle")).to_contain_text("wins in", timeout=15000)
    page.click("#tab-uncertainty")
    page.fill("#mc-samples", "300000")  # two chunks of the studies' 250,000: progress is reported after each
    page.click("#mc-run")
    expect(page.locator("#mc-table")).to_contain_text("p_win", timeout=60000)
    expect(page.locator("#monte-carlo-box .gtitle")).to_contain_text("Monte Carlo, 300,000 draws", timeout=15000)
    expect(page.locator("#mc-progress")).to_have_text("100% done: 300,000 of 300,000 samples")
    assert errors == []
    assert log.records == []


def test_fleet_tab_policy_changes_the_stranded_chart(page, live_app, artifacts):
    url, log = live_app
    errors = open_app(page, url)
    page.click("#tab-fleet")
    hourly = page.locator("#fleet-stranded-hourly-box .gtitle")
    expect(hourly).to_have_text("Backlog per hour, policy 'today'", timeout=15000)
    expect(page.locator("#stranded-table")).to_contain_text("flex")
    expect(page.locator("#kv-breakevens")).to_contain_text("beats the cheaper colocated option", timeout=15000)
    expect(page.locator("#fleet-pareto-box .gtitle")).to_contain_text("Cost against latency")
    expect(page.locator("#tree-table")).to_contain_text("interactive batch-one")
    page.click("#stranded-policy")
    page.get_by_text("peak: sized for the quarter's peak load").click()
    expect(hourly).to_have_text("Backlog per hour, policy 'peak'", timeout=15000)
    page.fill("#stranded-prompt-growth-per-year", "-1")
    page.keyboard.press("Enter")
    expect(page.locator("#stranded-notice")).to_contain_text(
        "fleet_dynamics.stranded.prompt_growth_per_year: got -1; Input should be greater than or equal to 0")
    page.screenshot(path=str(artifacts / "app-fleet-bad-drift.png"), full_page=True)
    assert errors == []
    assert log.records == []


def test_workbook_download(page, live_app, tmp_path):
    url, log = live_app
    open_app(page, url, "?scenario=default&set=economics.discount_rate:0.12")
    page.click("#tab-assumptions")
    with page.expect_download(timeout=30000) as info:
        page.click("#download-xlsx-button")
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    assert path.suffix == ".xlsx"
    inputs = openpyxl.load_workbook(path)["Inputs"]
    assert {r[0].value: r[1].value for r in inputs.iter_rows(min_row=4)}["economics.discount_rate"] == 0.12
    assert log.records == []


def test_training_scenario_in_every_tab(page, live_app, artifacts):
    """A training scenario: Compare gives time to train, cost per run and the verdict; Lifecycle the second life;
    Fleet the tree with its training leaf; no tab logs an error."""
    url, log = live_app
    errors = open_app(page, url, "?scenario=training-run")
    expect(page.locator("#verdict")).to_contain_text("trains cheapest")
    expect(page.locator("#options-table")).to_contain_text("time to train, days")
    expect(page.locator("#options-table")).to_contain_text("cost per run, M USD")
    expect(page.locator("#siting-table")).to_be_visible()
    page.screenshot(path=str(artifacts / "app-training-compare.png"), full_page=True)
    page.click("#tab-lifecycle")
    expect(page.locator("#second-life-table")).to_contain_text("cascade", timeout=15000)
    page.click("#tab-fleet")
    expect(page.locator("#tree-table")).to_contain_text("training", timeout=30000)
    for name in PAGES:
        page.click(f"#tab-{name}")
        page.wait_for_timeout(600)
    assert errors == []
    assert log.records == []
