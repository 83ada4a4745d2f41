"""Silent acceptance: the same rules for a file, ``set:``, ``--set``, the app, a workbook and the API.

Booleans are not numbers, Python-only literals are not numbers, cross-field rules hold for edits,
huge integers are refused by field name, finance-style numbers are read where unambiguous, values
outside their sourced range are accepted with a warning, and tiny demand gives a fleet of one replica.
"""

from __future__ import annotations

import json
import zipfile

import pytest
from harness import contained, refused
from harness import tco as run_tco

import tco
from tco.export import write_workbook
from tco.export.reader import import_workbook
from tco.foundation.errors import InputError


def scenario_file(tmp_path, default_text, extra: str) -> str:
    path = tmp_path / "s.yaml"
    path.write_text(default_text + "\n" + extra + "\n")
    return str(path)


@pytest.mark.parametrize(("extra", "path", "fragment"), [
    ("set: {economics.discount_rate: true}", "economics.discount_rate", "boolean"),
    ("set: {workload.prompt_tokens: 2_56}", "workload.prompt_tokens", "not a number tco reads"),
    ("set: {workload.prompt_tokens: '２５６'}", "workload.prompt_tokens", "not a number tco reads"),
    ("set: {workload.prompt_tokens: 1" + "0" * 400 + "}", "workload.prompt_tokens", "too large"),
    ("set: {devices.h100-sxm.idle_power_w: 800}", "devices.h100-sxm.idle_power_w", "must not exceed devices.h100-sxm.tdp_w"),
    ("devices: {h100-sxm: {tdp_w: 100}}", "devices.h100-sxm.tdp_w", "must be at least devices.h100-sxm.idle_power_w"),
    ("set: {economics.pue: yes}", "economics.pue", "not a number tco reads"),
    ("set: {economics.horizon_years: '1:30'}", "economics.horizon_years", "not a number tco reads"),
    ("devices: {h100-sxm: {price_usd: true}}", "devices.h100-sxm.price_usd", "boolean"),
    ("set: {economics.discount_rate: '9,5%'}", "economics.discount_rate", "ambiguous"),
    ("set: {devices.h100-sxm.price_usd: '9%'}", "devices.h100-sxm.price_usd", "percent"),
])
def test_files_refuse_what_is_not_a_number_or_breaks_a_rule(tmp_path, default_text, extra, path, fragment):
    refused(run_tco("compare", scenario_file(tmp_path, default_text, extra)), path, fragment)


def test_a_boolean_quantity_value_is_refused(tmp_path, default_text):
    text = default_text.replace("requests_per_s: {value: 100,", "requests_per_s: {value: true,")
    (tmp_path / "s.yaml").write_text(text)
    refused(run_tco("compare", str(tmp_path / "s.yaml")), "workload.requests_per_s.value", "boolean")


@pytest.mark.parametrize(("assignment", "fragment"), [
    ("workload.prompt_tokens=2_56", "not a number tco reads"),
    ("workload.prompt_tokens=２５６", "not a number tco reads"),
    ("workload.prompt_tokens=0x10", "not a number tco reads"),
    ("workload.prompt_tokens=nan", "not a number tco reads"),
    ("workload.prompt_tokens=1e999", "too large"),
    ("devices.h100-sxm.idle_power_w=800", "must not exceed devices.h100-sxm.tdp_w"),
    ("devices.h100-sxm.tdp_w=100", "must be at least devices.h100-sxm.idle_power_w"),
    ("devices.groq-lpu.memory.sram.bandwidth_bytes_per_s=1e6", None),
    ("workload.requests_per_s=1e-9", "[1e-05, 1e+09] req/s"),
])
def test_set_on_the_command_line_meets_the_same_rules(assignment, fragment):
    outcome = run_tco("compare", "--set", assignment)
    if fragment is None:  # one tier only: nothing to order; accepted
        assert contained(outcome).code == 0
    else:
        refused(outcome, assignment.split("=")[0], fragment)


def test_finance_style_numbers_are_read_and_out_of_range_values_warned_about():
    outcome = contained(run_tco("compare", "--format", "json", "--set", "economics.discount_rate=9%", "--set",
                                "devices.groq-lpu.price_usd=$1,000", "--set", "workload.requests_per_s=20k"))
    assert outcome.code == 0, outcome.stderr
    warnings = [line for line in outcome.stderr.splitlines() if line.startswith("tco: warning:")]
    assert len(warnings) == 2 and all("outside its sourced range" in w for w in warnings)
    assert "devices.groq-lpu.price_usd: 1000.0 USD" in outcome.stderr and "workload.requests_per_s: 20000.0" in outcome.stderr
    scenario = tco.load_scenario("default").with_values({"economics.discount_rate": "9%", "devices.groq-lpu.price_usd": "$1,000",
                                                         "workload.requests_per_s": "20k"})
    assert scenario.values()["economics.discount_rate"] == 0.09 and len(scenario.warnings) == 2


def test_the_api_refuses_a_huge_integer_by_field_name():
    with pytest.raises(InputError, match=r"devices.h100-sxm.price_usd: got <integer of about 401 digits>; is too large"):
        tco.load_scenario("default").with_values({"devices.h100-sxm.price_usd": 10**400})


def test_tiny_demand_gives_a_fleet_of_one_replica_and_a_finite_cost():
    """At the lowest accepted demand (1e-5 req/s, under one request a day) every pool has one replica: its
    devices are one replica's, the cost per token is large and finite, and the verdict blames no overflow.

    "Large": one replica of the cheapest shape that fits (a single H100 for the default's 70B
    model at 8 bits: about $10k a year) serving about 8,000 output tokens a year costs over
    $10,000 per million tokens (the serving model searches the shape; it was an 8-GPU replica)."""
    outcome = contained(run_tco("compare", "--format", "json", "--set", "workload.requests_per_s=1e-5"))
    result = json.loads(outcome.stdout)
    for option in result["options"]:
        assert option["devices"] == option["devices_per_replica"]
        assert option["lcot_usd_per_mtok"] is not None and option["lcot_usd_per_mtok"] > 1e4
    assert "overflow" not in result["verdict"] and "undefined" not in result["verdict"]


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_a_workbook_cell_is_read_like_any_other_edit(tmp_path):
    """A value typed as text in the Inputs sheet ("9%") is read by the same reader as --set."""
    import openpyxl

    path = write_workbook(tco.load_scenario("default"), tmp_path / "b.xlsx")
    wb = openpyxl.load_workbook(path)
    ws = wb["Inputs"]
    row = next(r for r in range(1, ws.max_row + 1) if ws.cell(r, 1).value == "economics.discount_rate")
    ws.cell(row, 2).value = "9.5%"
    ws.cell(row + 1, 2).value = True  # the horizon as a boolean
    wb.save(path)
    assert zipfile.is_zipfile(path)
    with pytest.raises(InputError) as refused_cell:
        import_workbook(path)
    assert "economics.horizon_years" in str(refused_cell.value) and "boolean" in str(refused_cell.value)
    ws.cell(row + 1, 2).value = 5
    wb.save(path)
    scenario, data = import_workbook(path)
    assert data["set"] == {"economics.discount_rate": 0.095} and scenario.values()["economics.discount_rate"] == 0.095


def test_app_errors_name_no_command_line_flag(default_scenario):
    from tco_app.pages.sensitivity import breakeven_view

    with pytest.raises(InputError) as error:
        breakeven_view(default_scenario, "economics.pue", "lcot", 0.5, 2.0)
    assert "--" not in str(error.value) and str(error.value).startswith("low: got 0.5")
    with pytest.raises(InputError) as error:
        default_scenario.params["economics.bogus"]
    assert "--" not in str(error.value)
