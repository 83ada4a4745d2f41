"""The fleet analyses' settings are named parameters: sourced defaults, ranges, edits, and sweeps that move the results."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml

import tco
from tco.cli import main
from tco.dynamics.coordination import coordination
from tco.dynamics.roadmap import roadmap
from tco.dynamics.routing import routing
from tco.dynamics.stranded import quarter_demand
from tco.foundation.errors import InputError
from tco.foundation.fields import FIELDS
from tco.inputs import fleet_settings as config
from tco.inputs.catalog import ASSUMPTIONS_DIR
from tco.inputs.fleet_settings import NAMED_SETTINGS, fleet_config, setting_name
from tco.inputs.loading import bundled_scenarios, scenario_from_dict

NAMES = [setting_name(section, key) for section, keys in NAMED_SETTINGS.items() for key in keys]
SECTION_MODELS = {"stranded": config.Stranded, "coordination": config.Coordination, "routing": config.Routing,
                  "tree": config.Tree, "roadmap": config.Roadmap}


@pytest.fixture(scope="module")
def split():
    return tco.load_scenario("fleet-split")


def test_the_catalog_declares_exactly_the_named_settings():
    """assumptions/fleet_dynamics.yaml holds one sourced quantity per named setting and nothing else;
    the settings' models carry no default of their own (the catalog is the one home of the numbers)."""
    catalog = yaml.safe_load((ASSUMPTIONS_DIR / "fleet_dynamics.yaml").read_text())
    assert {s: tuple(keys) for s, keys in catalog.items()} == NAMED_SETTINGS
    for section, keys in NAMED_SETTINGS.items():
        for key in keys:
            assert key in FIELDS, key  # unit and domain by field name
            assert SECTION_MODELS[section].model_fields[key].is_required(), f"{section}.{key} has a default in code"


@pytest.mark.parametrize("name", bundled_scenarios())
def test_every_scenario_has_every_setting_with_unit_range_and_source(name):
    scenario = tco.load_scenario(name)
    assert list(scenario.dynamics) == NAMES
    for p in scenario.dynamics.values_list():
        assert p.unit == FIELDS[p.name.rsplit(".", 1)[1]].unit
        assert p.low <= p.value <= p.high and p.low < p.high, p
        assert p.source and (p.grade or p.source.startswith("scenario assumption")), p
    assert not set(scenario.dynamics) & set(scenario.params)  # never drawn by a study of the cost model


def test_tco_params_lists_the_settings(capsys):
    assert main(["params", "default", "--format", "json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    hard = rows["fleet_dynamics.routing.hard_share"]
    assert (hard["role"], hard["value"], hard["low"], hard["high"], hard["unit"]) == ("setting", 0.3, 0.1, 0.6, "fraction")
    assert "[routellm-2024]" in hard["source"]
    assert rows["fleet_dynamics.roadmap.process_gain_per_decade"]["source"].startswith("[dally-hotchips2023]")
    assert main(["params", "default"]) == 0
    assert "Fleet-analysis settings" in capsys.readouterr().out


def test_a_scenario_file_edits_or_replaces_a_setting(split):
    data = split.to_dict()
    data["fleet_dynamics"]["stranded"]["weekend_ratio"] = 0.9  # a bare number: an edit, the sourced range stays
    data["fleet_dynamics"]["routing"]["hard_share"] = {"value": 0.45, "low": 0.4, "high": 0.5,
                                                       "source": "scenario assumption: a coding assistant"}
    data["set"] = {"fleet_dynamics.coordination.slack": 0.55}  # outside [0, 0.4]: accepted with a warning
    edited = scenario_from_dict(data)
    weekend = edited.dynamics["fleet_dynamics.stranded.weekend_ratio"]
    assert (weekend.value, weekend.low, weekend.high) == (0.9, 0.5, 1.0)
    hard = edited.dynamics["fleet_dynamics.routing.hard_share"]
    assert (hard.value, hard.low, hard.high, hard.source) == (0.45, 0.4, 0.5, "scenario assumption: a coding assistant")
    assert [w.path for w in edited.warnings] == ["fleet_dynamics.coordination.slack"]
    cfg = fleet_config(edited)
    assert (cfg.stranded.weekend_ratio, cfg.routing.hard_share, cfg.coordination.slack) == (0.9, 0.45, 0.55)
    assert scenario_from_dict(edited.to_dict()).dynamics.values() == edited.dynamics.values()  # round trip


@pytest.mark.parametrize(("path", "value", "rule"), [
    (("stranded", "weekend_ratio"), -1.0, "must be a number in [0.01, 3] ratio"),
    (("coordination", "slack"), 1.0, "must be a number in [0, 0.99] fraction"),
    (("tree", "throughput_max_batch"), 10.5, "must be an integer in [1, 65536] sequences"),
    (("roadmap", "years"), 5, "Extra inputs are not permitted"),  # renamed horizon_years
])
def test_a_bad_setting_names_its_path(split, path, value, rule):
    data = split.to_dict()
    data["fleet_dynamics"].setdefault(path[0], {})[path[1]] = value
    with pytest.raises(InputError) as caught:
        fleet_config(scenario_from_dict(data))
    assert f"fleet_dynamics.{path[0]}.{path[1]}" in str(caught.value) and rule in str(caught.value)


def test_the_command_line_edits_settings_like_set(capsys):
    """``--hard-share 0.5`` is ``--set fleet_dynamics.routing.hard_share=0.5``; both read "50%"."""
    outs = []
    for argv in (["--hard-share", "50%"], ["--set", "fleet_dynamics.routing.hard_share=0.5"]):
        assert main(["fleet", "routing", "fleet-split", "--format", "json", *argv]) == 0
        outs.append(json.loads(capsys.readouterr().out)["summary"])
    assert outs[0] == outs[1] and outs[0]["hard_share"] == 0.5
    assert main(["fleet", "routing", "fleet-split", "--hard-share", "2"]) == 2
    assert "fleet_dynamics.routing.hard_share: got '2'; must be a number in [0.001, 1]" in capsys.readouterr().err


def test_sweeping_the_hard_share_moves_the_routing_optimum_as_derived(split):
    """A sweep of ``fleet_dynamics.routing.hard_share`` over its sourced range moves the analysis.

    With misroutes retried on the large model (penalty c_L) and skill a, the cost per useful answer is
    c(r) = c_L + r (c_s - c_L) + h r^(1+a) c_L, minimal at r* = min(((c_L - c_s) / (h (1+a) c_L))^(1/a), 1)
    (docs/fleet-dynamics.md): at a = 2, r* = sqrt((1 - c_s/c_L) / (3 h)). On fleet-split with the calibrated
    catalog c_s / c_L = 0.086 (the 8B model on one H100 against the 70B one), so at the low end (0.1) and the
    default (0.3: sqrt(0.914 / 0.9) = 1.008) the cheap model takes everything (r* clipped to 1), and at the
    high end (0.6) it takes sqrt(0.914 / 1.8) = 0.71 of the traffic. The costs c_L and c_s stay put.
    """
    param = split.dynamics["fleet_dynamics.routing.hard_share"]
    hard = (param.low, param.value, param.high)
    runs = [routing(s, fleet_config(s).routing).summary for s in (split.with_values({param.name: h}) for h in hard)]
    shares = [r["optimal_router_share"] for r in runs]
    assert 0 < shares[2] < shares[1] <= shares[0] == 1.0
    assert len({r["large_usd_per_request"] for r in runs}) == 1
    c_l, c_s = runs[0]["large_usd_per_request"], runs[0]["small_usd_per_request"]
    for h, share in zip(hard, shares, strict=True):
        assert share == pytest.approx(min(math.sqrt((c_l - c_s) / (h * 3.0 * c_l)), 1.0), rel=1e-9)
    assert math.sqrt((c_l - c_s) / (param.high * 3.0 * c_l)) < 1.0 < math.sqrt((c_l - c_s) / (param.low * 3.0 * c_l))


def test_a_tornado_of_the_routing_settings_moves_the_saving(split):
    """One at a time, each routing setting at its low and its high end (a tornado over the settings)
    changes the saving at the optimum; a setting of another analysis does not."""
    base = routing(split, fleet_config(split).routing).summary["saving_at_optimum"]

    def saving(name, value):
        edited = split.with_values({name: value})
        return routing(edited, fleet_config(edited).routing).summary["saving_at_optimum"]

    for name in (n for n in NAMES if n.startswith("fleet_dynamics.routing.")):
        p = split.dynamics[name]
        low, high = saving(name, p.low), saving(name, p.high)
        assert low != high and min(low, high) <= base <= max(low, high), name
    assert saving("fleet_dynamics.stranded.weekend_ratio", 1.0) == base


@pytest.mark.parametrize("weekend", [0.5, 0.7, 1.0])
def test_the_weekend_ratio_and_peak_hour_shape_the_simulated_demand(split, weekend):
    """Weekend days run at ``w`` of a weekday (hour 0 is Monday 00:00, so day 5 is a Saturday) and each
    day peaks at ``peak_hour``; with no growth the weekly mean rate is the scenario's."""
    edited = split.with_values({"fleet_dynamics.stranded.weekend_ratio": weekend, "fleet_dynamics.stranded.peak_hour": 20.0,
                                "fleet_dynamics.stranded.demand_growth_per_year": 0.0})
    d = quarter_demand(edited, fleet_config(edited, {"stranded": {"weeks": 1}}).stranded)
    days = d["arrivals"].reshape(7, 24)
    assert days[5].sum() / days[0].sum() == pytest.approx(weekend, rel=1e-12)
    assert all(int(np.argmax(day)) == 20 for day in days)
    assert d["arrivals"].mean() == pytest.approx(3600.0 * split.values()["workload.requests_per_s"], rel=1e-12)


def test_slack_and_horizon_move_coordination_and_roadmap(split):
    """Coordination runs the specialized pool at u0 (1 - s); the roadmap's process lever divides device
    power by 2.5^(years / 10), so a longer horizon gives a larger first factor."""
    edited = split.with_values({"fleet_dynamics.coordination.slack": 0.4})
    s = coordination(edited, fleet_config(edited).coordination).summary
    assert s["utilization_with_coordination"] == pytest.approx(s["utilization_engine"] * 0.6, rel=1e-12)
    factors = []
    for years in (3.0, 8.0):
        edited = split.with_values({"fleet_dynamics.roadmap.horizon_years": years})
        cfg = fleet_config(edited)
        table = roadmap(edited, cfg.roadmap, cfg.routing).set_index("lever")
        assert f"{2.5 ** (years / 10):.3g}" in table.loc["process node", "detail"]
        assert table.loc["process node", "source"].startswith("[dally-hotchips2023]")
        factors.append(table.loc["process node", "factor"])
    assert 1.0 < factors[0] < factors[1]
