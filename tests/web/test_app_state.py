"""The app without a browser: state encoding, edit validation, callbacks driven directly."""

from __future__ import annotations

import base64
import math
import subprocess
import sys

import numpy as np
import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tco_app import create_app
from tco_app.context import AppContext
from tco_app.controller import update_state
from tco_app.fleet_views import coordination_view, kv_view, pareto_view, roadmap_view, routing_view, stranded_view, tree_view
from tco_app.pages.assumptions import cell, table_rows, workbook_download
from tco_app.pages.cases import saved_case
from tco_app.pages.compare import compare_view, verdict_card
from tco_app.pages.decide import bottleneck_answer, change_answer
from tco_app.pages.lifecycle import TIMELINE_GROUPS, half_life_figure, lifecycle_view
from tco_app.pages.sensitivity import breakeven_view
from tco_app.pages.uncertainty import sobol_view
from tco_app.parametric import MAX_VALUES_TEXT, parametric_view
from tco_app.state import query_from_state, scenario_choices, state_from_query, validated_edits

import tco
from tco.core.outputs import COST_LINES
from tco.dynamics.kv_wall import kv_wall
from tco.dynamics.stranded import simulate
from tco.export.reader import import_workbook
from tco.inputs.fleet_settings import fleet_config
from tco.inputs.loading import scenario_from_dict
from tco.present.figure_style import COST_LINE_COLOURS

CHOICES = scenario_choices()
CTX = AppContext(CHOICES, "default")


def test_query_round_trip_and_bad_values():
    state, errors = state_from_query("?scenario=default&set=economics.discount_rate:0.08,economics.pue:7,nope:1",
                                     CHOICES, "default")
    assert state["set"] == {"economics.discount_rate": 0.08}
    assert [str(e) for e in errors] == [
        "economics.pue: got '7'; must be a number in [1, 3] ratio",
        "nope: got '1'; is not a parameter of this scenario; `tco params` lists the names"]
    again, errors = state_from_query(query_from_state(state), CHOICES, "default")
    assert again == state and errors == []


@settings(max_examples=40, deadline=None)
@given(rate=st.floats(0.0, 1.0), price=st.floats(1e-3, 10.0, allow_subnormal=False))
def test_any_valid_edit_survives_the_url_exactly(rate, price):
    state = {"scenario": "batch-offline", "upload": None,
             "set": {"economics.discount_rate": rate, "economics.electricity_usd_per_kwh": price}}
    base = tco.load_scenario("batch-offline").values()
    expected = {k: v for k, v in state["set"].items() if v != base[k]}
    decoded, errors = state_from_query(query_from_state(state), CHOICES, "default")
    assert errors == [] and decoded["set"] == expected


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_table_cell_text_parses_back_exactly(value):
    assert float(cell(value)) == value


def test_a_case_saved_before_the_state_arrives_keeps_the_shown_scenario():
    """Save clicked while the page's state store is still empty (the page shows the default scenario):
    the case names the default scenario and loads, instead of a case whose scenario is None (which the
    side-by-side view refused: 'scenario: got None')."""
    for early in (None, {}):
        case = saved_case(early, "default")
        assert case == {"scenario": "default", "set": None, "upload": None, "upload_name": None}
        assert CTX.scenario(case).values() == tco.load_scenario("default").values()
    edited = {"scenario": "batch-offline", "set": {"economics.pue": 1.2}, "upload": None, "upload_name": None}
    assert saved_case(edited, "default") == edited


def test_validated_edits_names_value_and_rule(default_scenario):
    horizon = str(default_scenario.values()["economics.horizon_years"])
    accepted, errors, warnings = validated_edits(default_scenario, {
        "economics.pue": "0.5", "workload.prompt_tokens": "abc", "economics.discount_rate": "10%",
        "economics.horizon_years": horizon, "devices.groq-lpu.price_usd": "$1,000"})
    # the unchanged horizon is not an edit; "10%" of a rate is 0.1; "$1,000" is read, below the sourced range
    assert accepted == {"economics.discount_rate": 0.1, "devices.groq-lpu.price_usd": 1000.0}
    assert [e.path for e in errors] == ["economics.pue", "workload.prompt_tokens"]
    assert errors[0].rule == "must be a number in [1, 3] ratio"
    assert errors[1].rule.startswith("is not a number tco reads")
    assert [w.path for w in warnings] == ["devices.groq-lpu.price_usd"]
    assert "outside its sourced range [6000, 25000]" in str(warnings[0])


def test_table_edit_keeps_last_valid_value_and_flags_bad_cell():
    state = {"scenario": "default", "upload": None, "set": {"economics.pue": 1.4}}
    rows = table_rows(tco.load_scenario("default").with_values(state["set"]))
    for row in rows:
        if row["name"] == "economics.pue":
            row["value"] = "9"
    out = update_state("params-table", "", None, None, None, rows, state, CTX)
    new, search, rows, messages = out.state, out.search, out.rows, out.edit_messages
    assert new["set"] == {"economics.pue": 1.4}
    bad = next(r for r in rows if r["name"] == "economics.pue")
    assert bad["value"] == "9" and bad["check"] == "must be a number in [1, 3] ratio"
    assert "economics.pue: got '9'" in str(messages)
    assert search == "?scenario=default&set=economics.pue:1.4"


def test_upload_valid_and_invalid(toy_scenario):
    text = toy_scenario.to_yaml()
    contents = "data:application/x-yaml;base64," + base64.b64encode(text.encode()).decode()
    out = update_state("upload", "", None, contents, "toy.yaml", None, None, CTX)
    new, upload_messages = out.state, out.messages
    # accepted; the toy's economics lie outside the catalog's sourced ranges, which is said (warnings only)
    assert new["scenario"] == "upload" and "warning: toy.yaml: economics.pue" in str(upload_messages)
    # the picker now lists the uploaded file, and shows it
    _state, _search, picked, options, *_ = out
    assert picked == "upload" and options[-1] == {"label": "uploaded: toy.yaml", "value": "upload"}
    assert "className='errors'" not in str(upload_messages)
    assert CTX.scenario(new).values() == toy_scenario.values()
    bad = "data:;base64," + base64.b64encode(b"name: x\nmodel: [").decode()
    refused = update_state("upload", "", None, bad, "bad.yaml", None, new, CTX)
    kept, upload_errors = refused.state, refused.messages
    assert kept == new and "bad.yaml" in str(upload_errors) and "not valid YAML" in str(upload_errors)


def test_downloaded_yaml_loads_with_the_edits(tmp_path, default_scenario):
    edited = default_scenario.with_values({"economics.discount_rate": 0.123, "workload.prompt_tokens": 4000})
    path = tmp_path / "s.yaml"
    path.write_text(edited.to_yaml())
    assert tco.load_scenario(path).values() == edited.values()


def test_compare_view_shows_the_model_numbers(toy_scenario):
    result = tco.compare(toy_scenario)
    _title, _question, verdict, _table, _challengers, lcot, breakdown = compare_view(toy_scenario)
    assert result.decision.headline in str(verdict)
    assert list(lcot.data[0].y) == list(result.options["lcot_usd_per_mtok"])
    assert lcot.data[1].name.startswith("baseline")  # the baseline's cost as a dashed line, named in the legend
    # the stacked bars add up to each option's PV of cost (M USD)
    totals = np.sum([np.asarray(t.y, float) for t in breakdown.data], axis=0)
    np.testing.assert_allclose(totals, result.options["pv_cost_usd"] / 1e6, rtol=1e-9)
    assert breakdown.layout.yaxis.title.text == "present value, million USD"


@pytest.mark.parametrize("name", ["default", "custom-asic"])
def test_each_cost_line_keeps_one_colour_of_its_own_in_every_chart(name):
    """Eleven cost lines and eight Okabe-Ito colours: taken in turn (``PALETTE[i % 8]``) the workload shift got the
    hardware capex's blue and the bridge the NRE's orange, and the Lifecycle timeline gave its groups other colours
    than Compare gave their lines. Now every line has its own colour, the same in Compare and in the timeline."""
    assert set(COST_LINE_COLOURS) == {line.line for line in COST_LINES}
    assert len(set(COST_LINE_COLOURS.values())) == len(COST_LINE_COLOURS)
    scenario = tco.load_scenario(name)
    breakdown = compare_view(scenario)[-1]
    label_to_line = {line.label: line.line for line in COST_LINES}
    colours = {t.name: t.marker.color for t in breakdown.data}
    assert len(colours) >= 3 and len(set(colours.values())) == len(colours)  # no two stacked lines alike
    assert all(colour == COST_LINE_COLOURS[label_to_line[label]] for label, colour in colours.items())
    timeline = lifecycle_view(scenario)[-1]
    groups = {title: lines for title, lines in TIMELINE_GROUPS}
    for bar in (t for t in timeline.data if t.type == "bar"):
        assert bar.marker.color == COST_LINE_COLOURS[groups[bar.name][0]]


def test_the_app_keeps_the_maps_dark_legend_where_its_white_keys_show(default_scenario):
    """The map's legend keys are white (the line) and pale (the wash): the app's legend row is transparent with dark
    text, so it kept the map's white text on the white page and the legend vanished. It now keeps a figure's own
    legend colours; a figure that sets none gets the row's."""
    import plotly.graph_objects as go
    from tco_app.charts import LEGEND, for_app

    from tco.present.study_figures import MAP_LEGEND_BACKGROUND, map_figure
    from tco.studies.gridmap import grid_map

    grid = grid_map(default_scenario, "workload.requests_per_s", "workload.prompt_tokens", (30.0, 300.0), (500.0, 8000.0),
                    nx=3, ny=6, metric="ratio:groq")
    legend = for_app(map_figure(grid)).layout.legend
    assert legend.bgcolor == MAP_LEGEND_BACKGROUND and legend.font.color == "white" and legend.orientation == "h"
    plain = for_app(go.Figure(go.Scatter(x=[1, 2], y=[3, 4], name="a line"))).layout.legend
    assert plain.bgcolor == LEGEND["bgcolor"] and plain.font.color is None and plain.font.size == LEGEND["font"]["size"]


def test_decide_names_the_inputs_that_flip_the_winner_in_good_english(default_scenario):
    """The default with a 0.7 s TTFT target has one flip (the prompt length; at its 1 s target none since the
    2026-12-07 Hopper refit): '1 input changes which option is cheapest within its sourced range', not '1 input flip
    the winner within their sourced range'."""
    scenario = default_scenario.with_values({"workload.ttft_target_s": 0.7})
    said = " ".join(str(part) for part in change_answer(scenario, tco.compare(scenario))[:2])
    assert "1 input changes which option is cheapest within its sourced range:" in said and "mean prompt length" in said


def test_compare_view_shows_the_chip_program(asic_scenario):
    """Compare on a built chip: the program rows (own units, program volume, break-even demand and external sales)
    beside the challengers, and the program in words (what the CLI and JSON verdict say)."""
    result = tco.compare(asic_scenario)
    challengers = str(compare_view(asic_scenario)[4])
    for title in ("the fleet's own units", "program volume", "win needs external sales", "break-even external sales",
                  "break-even demand, req/s"):
        assert title in challengers
    asic = result.program["asic"]
    assert f"{asic['fleet_units']:,.0f}" in challengers and "program-notes" in challengers
    said = f"asic builds its own chip: this fleet buys {asic['fleet_units']:,.0f} units over the horizon"
    assert said in challengers and said in result.verdict  # the same words as the CLI and the JSON verdict
    # the baseline's refresh plan (docs/model.md "The refresh rule against the book-value credit"), as in the verdict
    plan = "The baseline follows the general-purpose roadmap (when cheaper): b200 from year 0 (976 devices, time to first"
    assert "roadmap-note" in challengers and plan in challengers and plan in result.verdict
    assert "rubin from year 1 (238 devices" in challengers
    # the baseline's column is one fleet (issue 49 item 3): the serving figures of b200, the generation of year 0
    assert ("(the fleet runs b200, then rubin: serving figures of b200, the generation of year 0; costs over every "
            "generation)") in str(compare_view(asic_scenario)[3])


def test_decide_says_whose_serving_figures_a_roadmap_baseline_shows(default_scenario, asic_scenario):
    """Decide step 3 on custom-asic: the baseline's fleet runs B200s, then Rubins, and its shape and latency figures are
    the B200 fleet's (the generation of year 0, issue 49 item 3: TTFT 732 ms, not the H100's 959 ms); the step says
    so, as Compare's feasibility row does. Not for the challengers, nor on the default, whose baseline has no
    roadmap."""
    [steps] = bottleneck_answer(asic_scenario, tco.compare(asic_scenario))
    said = [str(item.children) for item in steps.children]
    assert said[0].startswith("h100: ") and "TTFT 732 ms" in said[0] and said[0].endswith(
        "meets the targets (the fleet runs b200, then rubin: serving figures of b200, the generation of year 0; costs "
        "over every generation).")
    assert not any("fleet runs" in s for s in said[1:])
    [steps] = bottleneck_answer(default_scenario, tco.compare(default_scenario))
    assert not any("fleet runs" in str(item.children) for item in steps.children)


def test_compare_view_has_no_refresh_plan_without_a_roadmap(default_scenario):
    """The default's baseline stays on its H100s (no roadmap: block): no refresh plan is shown."""
    assert "roadmap-note" not in str(compare_view(default_scenario)[4])


def test_lifecycle_curves(toy_scenario):
    _table, fig, _half, _timeline = lifecycle_view(toy_scenario)
    result = tco.compare(toy_scenario)
    # the last point of the cumulative discounted cost is the option's PV of cost
    np.testing.assert_allclose([t.y[-1] for t in fig.data], result.options["pv_cost_usd"] / 1e6, rtol=1e-9)
    half = half_life_figure(toy_scenario).data[0]
    h = toy_scenario.values()["workload.half_life_years"]
    i = int(np.argmin(np.abs(np.asarray(half.x) - h)))
    assert math.isclose(half.y[i], 2 ** (-half.x[i] / h))


def test_program_timeline_shows_the_design_the_bridge_and_the_fleet(asic_scenario):
    """The Lifecycle timeline follows the option on the built chip: its yearly lines add up to its cash flows, the
    NRE bars stop and the fleet starts at its deployment year, and the baseline is labelled with its generation."""
    table, _cumulative, _half, timeline = lifecycle_view(asic_scenario)
    analysis = tco.analyse_scenario(asic_scenario)
    flows = analysis.flows["h100-prefill+asic-decode"]
    bars = [t for t in timeline.data if t.type == "bar"]
    np.testing.assert_allclose(np.sum([np.asarray(t.y, float) for t in bars], axis=0), flows.total_usd / 1e6, rtol=1e-12)
    nre = next(t for t in bars if t.name.startswith("NRE"))
    assert all(y > 0 for y in nre.y[:3]) and all(y == 0 for y in nre.y[3:])
    baseline = next(t for t in timeline.data if t.type == "scatter")
    by_year = tco.compare(asic_scenario).baseline_roadmap["by_year"]
    assert list(baseline.customdata) == [f"<br>on {g}" for g in by_year]  # the generation in each year's hover
    labels = [a.text for a in timeline.layout.annotations]
    assert by_year[0] in labels and "h100-prefill+asic-decode in service from year 3" in labels
    assert "years of advantage" in str(table)


def test_breakeven_view_matches_api(default_scenario):
    p = default_scenario.params["economics.electricity_usd_per_kwh"]
    view = str(breakeven_view(default_scenario, p.name, "lcot", p.low, p.high))
    for r in tco.breakeven(default_scenario, p.name, p.low, p.high):
        assert r.option in view and r.status in ("crosses", "always", "never")


def test_two_apps_in_one_process_each_have_callbacks(tmp_path):
    first, second = create_app(cache_dir=tmp_path / "a"), create_app(cache_dir=tmp_path / "b")
    assert len(first.callback_map) == len(second.callback_map) > 5
    assert first.config.serve_locally and not first.config.external_stylesheets


def test_layout_has_no_external_urls(tmp_path):
    app = create_app(cache_dir=tmp_path)
    client = app.server.test_client()
    page = client.get("/").get_data(as_text=True)
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page


def test_cli_rejects_bad_scenario_file_with_exit_2(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tco", "app", "--scenario", str(tmp_path / "missing.yaml")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "missing.yaml" in done.stderr and "Traceback" not in done.stderr


def test_scenario_file_option_is_listed_first_choice(tmp_path, toy_scenario):
    path = tmp_path / "mine.yaml"
    path.write_text(toy_scenario.to_yaml())
    app = create_app(path, cache_dir=tmp_path / "c")
    assert "mine" in str(app.layout())
    assert scenario_from_dict(tco.load_scenario(path).to_dict()).values() == toy_scenario.values()


def _axis_titles(fig):
    return fig.layout.xaxis.title.text, fig.layout.yaxis.title.text


@pytest.mark.parametrize("name", ["default", "fleet-split"])
def test_fleet_views_show_the_fleet_analyses(name):
    scenario = tco.load_scenario(name)
    notice, summary, wall, gain = kv_view(scenario, None)
    assert notice is None and "beats the cheaper colocated option" in str(summary) and "spills" in str(summary)
    table = kv_wall(scenario, fleet_config(scenario).kv_wall).table
    # solid where the split meets its latency targets (a dotted trace carries the rest)
    np.testing.assert_allclose(np.asarray(wall.data[0].y, float),
                               table["split_usd_per_mtok"].where(table["split_feasible"]), equal_nan=True)
    assert _axis_titles(wall) == ("prompt length [tokens]", "cost [USD per million output tokens]")
    assert all("USD per million output tokens" in t.hovertemplate for t in wall.data + gain.data)
    notice, table, policies, hourly = stranded_view(scenario, "today", {})
    every_policy = {"stranded": {"policies": ["today", "peak", "flex"]}}
    expected = simulate(scenario, fleet_config(scenario, every_policy).stranded).summary
    assert notice is None and str(table).count("Tr(") == 1 + len(expected) == 7
    split = expected[expected["fleet"] != scenario.structure.baseline]
    np.testing.assert_allclose(policies.data[0].y, split["usd_per_mtok"])
    assert f"{split['stranded_share'].iloc[0] * 100:.2f}" in str(table)
    assert hourly.layout.meta["title"] == "Backlog per hour, policy 'today'"  # shown above the chart
    notice, frontier, pareto_fig = pareto_view(scenario, "ttft_s")
    assert notice is None and pareto_fig.data[-1].name == "Pareto frontier"
    assert len(pareto_fig.data[-1].x) == str(frontier).count("Tr(") - 1 > 0
    assert all("prefill" in label and "GB spilled" in label for label in pareto_fig.data[0].text)
    notice, frontier, power_fig = pareto_view(scenario, "ttft_s", "tokens_per_s_per_mw")  # at fixed power: against TPOT
    assert notice is None and power_fig.layout.yaxis.title.text == "output tokens/s served per provisioned MW"
    assert power_fig.layout.xaxis.title.text == "TPOT [ms]" and len(power_fig.data[-1].x) == str(frontier).count("Tr(") - 1
    assert coordination_view(scenario)[0] is None and "break-even utilization" in str(coordination_view(scenario)[1])
    notice, tree_table = tree_view(scenario)
    assert notice is None and "interactive batch-one" in str(tree_table)


def test_changing_the_policy_changes_the_hourly_chart(default_scenario):
    charts = {p: stranded_view(default_scenario, p, {})[3] for p in ("today", "peak", "flex")}
    backlogs = {p: np.concatenate([np.asarray(trace.y, float) for trace in fig.data]) for p, fig in charts.items()}
    assert not np.array_equal(backlogs["today"], backlogs["peak"])  # backlog per hour, every pool
    assert charts["flex"].layout.meta["title"].endswith("'flex'")


def test_fleet_views_say_when_they_do_not_apply():
    scenario = tco.load_scenario("batch-offline")
    assert not any(o.disaggregated for o in scenario.structure.options)
    for notice, *rest in (kv_view(scenario, None), stranded_view(scenario, "today", {}), coordination_view(scenario)):
        assert "Does not apply to scenario 'batch-offline'" in str(notice) and rest[0] is None
    assert pareto_view(scenario, "tpot_s")[0] is None and tree_view(scenario)[0] is None


def test_bad_fleet_inputs_are_flagged_inline(default_scenario):
    notice, table, *figs = stranded_view(default_scenario, "today", {"prompt_growth_per_year": -0.5})
    assert "fleet_dynamics.stranded.prompt_growth_per_year: got -0.5; must be a number in [0, 100] 1/yr" in str(notice)
    assert table is None and all(f["layout"]["annotations"][0]["text"] == "see the message above" for f in figs)
    notice, summary, *_ = kv_view(default_scenario, -1)
    assert "bandwidth_bytes_per_s" in str(notice) and "must be a number in [1e+06, 1e+18] B/s" in str(notice) and summary is None


def test_workbook_download_is_the_export_of_the_edited_scenario(tmp_path):
    state = {"scenario": "default", "upload": None, "set": {"economics.discount_rate": 0.123}}
    download = workbook_download(CTX.scenario(state))
    path = tmp_path / download["filename"]
    path.write_bytes(base64.b64decode(download["content"]))
    inputs = openpyxl.load_workbook(path)["Inputs"]
    values = {row[0].value: row[1].value for row in inputs.iter_rows(min_row=4)}
    assert values["economics.discount_rate"] == 0.123
    assert import_workbook(path)[0].values() == CTX.scenario(state).values()


@pytest.mark.parametrize(("name", "figure"), [("agentic-coding", "colocated.prefix_hit_fraction"),
                                              ("reasoning-chat", "colocated.accepted_tokens_per_step")])
def test_a_scenario_with_prefix_reuse_or_speculation_downloads_its_workbook(name, figure, tmp_path):
    """The workbook carries prefix reuse and speculative decoding as formulas (issue 48): the button is enabled once
    the page has a state, and the download's Check sheet lists the pools' hit fraction and tokens per step beside
    the Python model's."""
    app = create_app(cache_dir=tmp_path)
    (key,) = [k for k in app.callback_map if "download-xlsx-button.disabled" in k]
    ready = app.callback_map[key]["callback"].__wrapped__
    assert ready({"scenario": name, "upload": None, "set": {}}) == (False, False) and ready(None) == (True, True)
    download = workbook_download(CTX.scenario({"scenario": name, "upload": None, "set": {}}))
    path = tmp_path / download["filename"]
    path.write_bytes(base64.b64decode(download["content"]))
    check = [(row[1].value, row[3].value) for row in openpyxl.load_workbook(path)["Check"].iter_rows(min_row=6)]
    rows = [formula for quantity, formula in check if quantity == figure]
    assert rows and all(str(f).startswith("=") for f in rows)


@pytest.mark.parametrize("name", ["default", "fleet-split"])
def test_routing_and_roadmap_views_show_tco_fleet(name):
    from tco.dynamics.roadmap import roadmap
    from tco.dynamics.routing import routing
    from tco.inputs.fleet_settings import fleet_config

    scenario = tco.load_scenario(name)
    cfg = fleet_config(scenario)
    notice, table, figure = routing_view(scenario)
    expected = routing(scenario, cfg.routing)
    assert notice is None and f"{expected.summary['breakeven_router_share'] * 100:.1f}%" in str(table)
    # per 1,000 useful answers, the table's unit (USD per answer is a fraction of a cent)
    np.testing.assert_allclose(figure.data[0].y, expected.curve["usd_per_useful_answer"] * 1e3)
    assert all("USD per 1,000 useful answers" in trace.hovertemplate for trace in figure.data)
    notice, table, figure = roadmap_view(scenario)
    levers = roadmap(scenario, cfg.roadmap, cfg.routing)
    assert notice is None and str(table).count("Tr(") == 1 + len(levers)
    np.testing.assert_allclose(figure.data[0].y, levers["factor"])


def test_routing_view_flags_an_unknown_small_model():
    scenario = tco.load_scenario("default")
    broken = scenario.spec.model_copy(update={"fleet_dynamics": {"routing": {"small_model": "llama-0b"}}})
    from dataclasses import replace

    notice, table, _figure = routing_view(replace(scenario, spec=broken))
    assert "fleet_dynamics.routing.small_model" in str(notice) and table is None


def test_downloads_wait_for_the_page_state(tmp_path):
    """The download buttons start disabled and a callback on the page's state enables them: a click before the state
    arrives would download the default scenario, not the one a link (``?set=...``) or an upload opened (the
    workbook-download browser test read a discount rate of 0.09 for a link's 0.12 under load)."""
    from tco_app.pages.assumptions import layout

    def buttons(node):
        if getattr(node, "id", None) in ("download-yaml-button", "download-xlsx-button"):
            yield node
        children = getattr(node, "children", None)
        for child in children if isinstance(children, list) else [children] if children is not None else []:
            yield from buttons(child)

    found = list(buttons(layout(CTX)))
    assert [b.id for b in found] == ["download-yaml-button", "download-xlsx-button"]
    assert all(b.disabled is True for b in found)
    app = create_app(cache_dir=tmp_path)
    (key,) = [k for k in app.callback_map if "download-xlsx-button.disabled" in k]
    assert "download-yaml-button.disabled" in key
    assert [i["id"] + "." + i["property"] for i in app.callback_map[key]["inputs"]] == ["state.data"]


def test_compare_lists_the_near_ties_apart_from_the_flips():
    """Issue 49 item 1: batch-offline's demand windows (MI300X within 2 % of B200 in windows narrower than the flip
    search's step) are near-ties: the Compare card lists them under their own heading, not among the flips."""
    card = str(verdict_card(tco.compare(tco.load_scenario("batch-offline")).decision))
    flips, _, ties = card.partition("Near-ties, not flips")
    assert "mi300x comes within 2% of b200 where mean demand is between" in ties
    assert "mean demand" not in flips.split("flip-list")[1]


# --- the options builder (tco_app.builder): its edits go through the controller, the link and the one validated path --

def builder_click(trigger: str, state: dict, **fields):
    from tco_app.builder import BuilderForm

    return update_state(trigger, "", None, None, None, None, state, CTX, BuilderForm(**fields))


def test_options_built_in_the_app_are_the_command_lines_and_survive_the_link():
    from tco.inputs.option_edits import edited_scenario, option_edits

    start = state_from_query("?scenario=voice-agent", CHOICES, "default")[0]
    added = builder_click("option-add", start, kind="colocated", device="b200")
    split = builder_click("option-add", added.state, kind="split", prefill="h100-sxm", decode="groq-lpu", link="ib-400g",
                          name="split")
    based = builder_click("baseline-picker", split.state, baseline="b200", model="llama-3.1-8b")
    again = builder_click("baseline-picker", based.state, baseline="h100", model="llama-3.1-8b")
    assert based.state["options"] == ["add:b200=colocated:b200", "add:split=prefill:h100-sxm,decode:groq-lpu,link:ib-400g",
                                      "baseline:b200"]
    assert again.state["options"][-1] == "baseline:h100" and len(again.state["options"]) == 3  # one baseline edit
    scenario = CTX.scenario(based.state)
    by_flags = edited_scenario(tco.load_scenario("voice-agent"), option_edits(based.state["options"]))
    assert scenario.to_dict() == by_flags.to_dict()
    assert based.search == ("?scenario=voice-agent&option=add:b200%3Dcolocated:b200"
                            "&option=add:split%3Dprefill:h100-sxm,decode:groq-lpu,link:ib-400g&option=baseline:b200")
    restored, errors = state_from_query(based.search, CHOICES, "default")
    assert errors == [] and restored == based.state
    assert based.builder_messages is None


def test_a_refused_option_edit_is_named_and_the_state_kept():
    start = state_from_query("?scenario=voice-agent", CHOICES, "default")[0]
    out = builder_click("option-add", start, kind="split", prefill="h100-sxm", decode="groq-lpu", link="ib-400g", name="a,b")
    assert out.state == start
    assert "options.a,b.name: got 'a,b'; must not hold ':' or ','" in str(out.builder_messages)
    removed = builder_click("option-remove", start, option="h100")
    assert removed.state == start and "is the baseline: choose another baseline first" in str(removed.builder_messages)
    assert builder_click("option-rename", start, option=None).state == start  # nothing chosen: nothing asked


def test_a_value_edit_the_built_scenario_lacks_is_dropped_and_named():
    start = {**state_from_query("?scenario=voice-agent", CHOICES, "default")[0], "set": {"devices.cerebras-cs3.price_usd": 2e6}}
    out = builder_click("option-remove", start, option="cerebras")
    assert out.state["options"] == ["remove:cerebras"] and out.state["set"] == {}
    assert "devices.cerebras-cs3.price_usd: got 2000000.0; is not a parameter" in str(out.builder_messages)
    assert "this value edit is dropped with the options changed" in str(out.builder_messages)
    reset = update_state("reset-edits", "", None, None, None, None, out.state, CTX)
    assert reset.state["options"] == [] and reset.state["set"] == {}


def test_a_crafted_or_broken_option_state_is_refused_by_the_same_rules():
    crafted = {"scenario": "voice-agent", "upload": None, "set": {}, "options": "model:/etc/passwd"}
    out = update_state("tie-tolerance", "?scenario=voice-agent", None, None, None, None, crafted, CTX)
    assert out.state == {"scenario": "voice-agent", "upload": None, "set": {}, "options": []}
    assert "options: got 'str'; must be a list of option edits" in str(out.messages)
    state, errors = state_from_query("?scenario=voice-agent&option=add:x%3Dcolocated:/etc/passwd&set=economics.pue:1.3",
                                     CHOICES, "default")
    assert state["options"] == [] and state["set"] == {"economics.pue": 1.3}
    assert [str(e).split(";")[0] for e in errors] == ["options.x.colocated.device: got '/etc/passwd'"]


def test_the_builder_follows_the_built_scenario_and_hides_on_training():
    from tco_app.builder import builder_view

    baselines, baseline, _models, model, options, _option, hidden = builder_view(
        CTX.scenario({"scenario": "voice-agent", "options": ["add:b200=colocated:b200"]}))
    assert [o["value"] for o in baselines] == ["h100", "b200"] and baseline == "h100" and model == "llama-3.1-8b"
    assert [o["value"] for o in options][-1] == "b200" and not hidden
    assert builder_view(CTX.scenario({"scenario": "training-run"}))[-1] is True


def _cells(component, key: str) -> dict[int, str]:
    """The Compare table's cells of output ``key`` by option column (ids ``cell-<key>-<column>``)."""
    found = {}

    def walk(node):
        if isinstance(node, (list, tuple)):
            for child in node:
                walk(child)
        elif hasattr(node, "to_plotly_json"):
            props = node.to_plotly_json()["props"]
            if str(props.get("id", "")).startswith(f"cell-{key}-"):
                found[int(props["id"].rsplit("-", 1)[1])] = props["children"]
            walk(props.get("children"))

    walk(component)
    return found


def test_compare_shows_each_options_cache_hit_rate_and_accepted_tokens_per_step():
    """Issue 48: the Compare table's cache hit rate (percent of prompt tokens a pool serves from its prefix cache) and
    accepted tokens per decode step, per option, as the core computes them; rows absent where no option has them.
    agentic-coding (85 % of prompt tokens reusable): an H100 or ASIC pool keeps its cache in HBM and serves all 85 %;
    the Groq LPU has no room for one (0 %); the split's H100 prefill pool serves part, its LPU decode pool none."""
    scenario = tco.load_scenario("agentic-coding")
    results, _ = tco.evaluate_scenario(scenario)
    cells = _cells(compare_view(scenario)[3], "prefix_hit_fraction")
    names = [o.name for o in scenario.structure.options]
    assert sorted(cells) == list(range(len(names)))
    for j, name in enumerate(names):
        pools = results[name].pools
        shown = [f"{100 * float(p.performance.prefix_hit_fraction):.0f}" for p in pools.values()]
        expected = shown[0] if len(pools) == 1 else ", ".join(f"{role} {s}" for role, s in zip(pools, shown, strict=True))
        assert cells[j] == expected, name
    assert cells[names.index("groq")] == "0" and cells[names.index("h100")] == "85"

    reasoning = tco.load_scenario("reasoning-chat")
    results, _ = tco.evaluate_scenario(reasoning)
    accepted = _cells(compare_view(reasoning)[3], "accepted_tokens_per_step")
    # the EAGLE-3 options draft k = 3 tokens, each accepted at a = 0.75 (assumptions/speculation.yaml), so a step emits
    # tau = 1 + a + a^2 + a^3 = 1 + 0.75 + 0.5625 + 0.421875 = 2.734375 tokens by hand (shown to two decimals: 2.73);
    # the options without speculation (and the split, whose pools do not speculate) show an empty cell
    for j, option in enumerate(reasoning.structure.options):
        values = [p.performance.accepted_tokens_per_step for p in results[option.name].pools.values()]
        speculating = "eagle3" in option.name
        assert values == ([pytest.approx(2.734375, rel=1e-12)] if speculating else [None] * len(values)), option.name
        assert (accepted.get(j) or "") == ("2.73" if speculating else ""), option.name
    assert _cells(compare_view(tco.load_scenario("default"))[3], "prefix_hit_fraction") == {}


def test_the_sobol_chart_says_how_often_the_pair_it_compares_misses_a_target():
    """Issue 49 item 1 in the app: the Sobol chart of groq's cost ratio names the share of its model runs where groq or
    the baseline h100 misses a latency target (the runs its indices include), in the one heading line the app shows;
    the share is the API's for the same request."""
    fig = sobol_view(CTX, None, "ratio:groq", 64, 1)
    expected = tco.studies.sobol(tco.load_scenario("default"), "ratio:groq", 64, 1).share_missing_a_target
    title = fig.layout.meta["title"]
    assert 0 < expected < 1 and "<br>" not in title
    assert f"; in {100 * expected:.2g}% of its runs groq or h100 misses a latency target" in title


def test_the_parametric_table_refuses_oversized_values_by_name():
    """The app's parametric table reads what a browser sends, so it caps it before reading a value: more values than
    the grid may hold, or a text longer than any grid written out, is one line naming the input; nothing runs."""
    scenario = tco.load_scenario("default")
    many = "; ".join(str(v) for v in range(1, 2_002))
    notice, table, _figure = parametric_view(scenario, ["workload.output_tokens", None, None], [many, "", ""],
                                             ["feasible"])
    assert table is None and "input 1 values: got '2,001 values'; at most 2,000" in str(notice)
    notice, table, _figure = parametric_view(scenario, ["workload.output_tokens", None, None],
                                             ["1 " * (MAX_VALUES_TEXT // 2 + 1), "", ""], ["feasible"])
    assert table is None and f"characters'; at most {MAX_VALUES_TEXT:,}" in str(notice)


# --- the chip program panel (tco_app.program_panel): its fields become edits through the controller -----------------

def program_apply(state: dict, **fields):
    from tco_app.program_panel import ProgramForm, panel_view

    shown = dict(zip(("total", "node", "respin", "slip", "external"),
                     (v for i, v in enumerate(panel_view(CTX.scenario(state))[:6]) if i != 1), strict=True))
    return update_state("program-apply", "", None, None, None, None, state, CTX, None, ProgramForm(**{**shown, **fields}))


def test_the_program_panel_asks_only_for_what_changed_and_splits_a_total_over_the_node():
    """The fields as shown ask for nothing; a total of 150 M USD is ``program.nre_scale`` = 150 / 109 at 5 nm; a new
    node alone is the edit node:3nm and keeps the scale (the 3 nm parts, 169 M USD, times 150 / 109); a refused value
    is named and the others are applied."""
    start = state_from_query("?scenario=custom-asic", CHOICES, "default")[0]
    assert program_apply(start).state == start
    total = program_apply(start, total="150M")
    assert total.state["set"] == {"program.nre_scale": 150 / 109} and total.program_messages is None
    assert "program.nre_scale:1.376" in total.search
    node = program_apply(total.state, node="3nm")
    assert node.state["options"] == ["node:3nm"] and node.state["set"] == total.state["set"]
    assert float(tco.analyse_scenario(CTX.scenario(node.state)).challengers["asic"].nre_usd) == pytest.approx(
        169e6 * 150 / 109, rel=1e-12)
    bad = program_apply(start, respin="0.3", external="lots")
    assert bad.state["set"] == {"program.respin_probability": 0.3}
    assert "program.external_units: got 'lots'" in str(bad.program_messages)
    default = state_from_query("", CHOICES, "default")[0]
    assert "builds no chip" in str(program_apply(default).program_messages)
