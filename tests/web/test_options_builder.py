"""The options builder in a real browser (headless Chromium): options added by clicking (a B200 to voice-agent, an
H100-prefill / LPU-decode split), the baseline changed; the cost shown equals ``tco compare`` on the downloaded YAML,
and the link restores the built scenario in a fresh browser."""

from __future__ import annotations

import json
import re

from dropdowns import choose
from playwright.sync_api import expect
from test_browser import download, open_app

import tco
from tco.cli import main
from tco.core.outputs import OPTION_OUTPUTS
from tco.inputs.option_edits import edited_scenario, option_edits


def cost_cell(name_index: int) -> str:
    return f"#cell-lcot_usd_per_mtok-{name_index}"


def compare_costs(capsys, path) -> dict[str, str]:
    """``tco compare FILE --format json``: each option's cost per million output tokens as the app formats it."""
    assert main(["compare", str(path), "--format", "json"]) == 0
    options = json.loads(capsys.readouterr().out)["options"]
    return {o["name"]: OPTION_OUTPUTS["lcot_usd_per_mtok"].format(o["lcot_usd_per_mtok"]) for o in options}


def test_options_built_by_clicking_cost_what_tco_compare_says(page, live_app, tmp_path, capsys, browser):
    url, log = live_app
    errors = open_app(page, url, "?scenario=voice-agent")
    choose(page, "builder-device", "b200", "b200")
    page.click("#option-add")
    header = page.locator("#options-table-box thead")
    expect(header).to_contain_text("b200", timeout=15000)
    expect(page).to_have_url(re.compile(r"option=add:b200%3Dcolocated:b200"))
    # the answer: B200 $0.45/M beats H100 $0.73/M (B200 a challenger, paying its software port from H100; $0.54
    # and $0.82 before voice-agent had its conversation cache)
    expect(page.locator("#verdict")).to_contain_text("b200 is cheapest at $0.454 per million output tokens", timeout=15000)
    assert round(float(page.locator(cost_cell(4)).inner_text()), 2) == 0.45
    assert round(float(page.locator(cost_cell(0)).inner_text()), 2) == 0.73
    # a split: prefill on H100, decode on the LPU, over InfiniBand
    page.get_by_text("prefill / decode split").click()
    choose(page, "builder-prefill", "h100-sxm", "h100")
    choose(page, "builder-decode", "groq-lpu", "groq")
    choose(page, "builder-link", "ib-400g")
    page.fill("#builder-name", "split")
    page.click("#option-add")
    expect(header).to_contain_text("split", timeout=15000)
    expect(page.locator("#builder-messages")).to_be_empty()
    choose(page, "baseline-picker", "b200")
    expect(page.locator("#options-table-box thead")).to_contain_text("b200 (baseline)", timeout=15000)

    path = download(page, page.locator("#builder-download-button"), tmp_path)
    costs = compare_costs(capsys, path)
    assert list(costs) == ["h100", "groq", "cerebras", "h100-prefill+groq-decode", "b200", "split"]
    for i, name in enumerate(costs):
        expect(page.locator(cost_cell(i))).to_have_text(costs[name])

    # the link restores the built scenario in a fresh browser
    fresh = browser.new_context()
    other = fresh.new_page()
    open_app(other, url, "?" + page.url.split("?", 1)[1])
    expect(other.locator("#options-table-box thead")).to_contain_text("b200 (baseline)", timeout=15000)
    for i, name in enumerate(costs):
        expect(other.locator(cost_cell(i))).to_have_text(costs[name])
    fresh.close()
    assert errors == []
    assert log.records == []


def test_a_refused_option_is_named_and_not_applied(page, live_app):
    url, log = live_app
    errors = open_app(page, url, "?scenario=voice-agent")
    page.get_by_text("prefill / decode split").click()
    choose(page, "builder-prefill", "h100-sxm", "h100")
    choose(page, "builder-decode", "groq-lpu", "groq")
    page.fill("#builder-name", "a:b")
    page.click("#option-add")
    expect(page.locator("#builder-messages")).to_contain_text("options.a:b.name: got 'a:b'; must not hold ':' or ','")
    expect(page.locator("#options-table-box thead")).not_to_contain_text("a:b")
    assert "option=" not in page.url
    # a link naming a server path as the model is refused by the same rules, the scenario's own options shown
    open_app(page, url, "?scenario=voice-agent&option=model:/etc/passwd")
    expect(page.locator("#messages")).to_contain_text("shared link: model: got '/etc/passwd'; is not a known model")
    assert errors == []
    assert log.records == []


def test_a_rented_option_is_built_by_clicking_and_costs_what_tco_compare_says(page, live_app):
    """Tick "rent the devices", add an H100: the default gains h100-sxm-rented, its devices paid at the catalog's
    $2.95 an hour, its cost the one tco compare gives on the same edit; renting a device without a rate is named."""
    url, log = live_app
    errors = open_app(page, url)
    choose(page, "builder-device", "h100-sxm", "h100")
    page.get_by_text("rent the devices").click()
    page.click("#option-add")
    expect(page.locator("#options-table-box thead")).to_contain_text("h100-sxm-rented", timeout=15000)
    expect(page).to_have_url(re.compile(r"rented:yes"))
    scenario = edited_scenario(tco.load_scenario("default"), option_edits(["add:h100-sxm-rented=colocated:h100-sxm,"
                                                                          "rented:yes"]))
    cost = tco.compare(scenario, with_flips=False).options.loc["h100-sxm-rented", "lcot_usd_per_mtok"]
    expect(page.locator(cost_cell(3))).to_have_text(OPTION_OUTPUTS["lcot_usd_per_mtok"].format(cost))
    choose(page, "builder-device", "groq-lpu", "groq")
    page.click("#option-add")
    expect(page.locator("#builder-messages")).to_contain_text("the catalog has no rental rate for groq-lpu")
    assert errors == []
    assert log.records == []
