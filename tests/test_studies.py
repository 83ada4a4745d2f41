"""Sensitivity studies: expectations derived from independent scalar evaluations, the break-even
solver, analytic probabilities and published Sobol indices (Ishigami)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import tco
from tco.cli import main
from tco.foundation.errors import InputError
from tco.inputs.loading import scenario_from_dict
from tco.inputs.parameters import Param
from tco.present.study_findings import findings, tornado_findings
from tco.studies import grid_map, metric_values, monte_carlo, sobol_analysis, sweep, tornado, win_threshold
from tco.studies.sampling import (
    Z95,
    SamplingPlan,
    _Drawn,
    draw_chunk,
    iman_conover,
    inverse_cdf,
    ordered_pairs,
    rule_breaking_shares,
    sampling_plan,
    values_at_quantiles,
)
from tco.studies.spec import STUDIES_DIR, StudySpec, load_study

DATA = Path(__file__).parent / "data"
BUNDLED = sorted(p.stem for p in STUDIES_DIR.glob("*.yaml"))


def scalar_ratio(scenario, option, updates):
    """Cost ratio from ``tco.compare`` on a scenario with new base values: one scalar evaluation."""
    table = tco.compare(scenario.with_values(updates)).options["lcot_usd_per_mtok"]
    return table[option] / table[scenario.structure.baseline]


# --- study files -----------------------------------------------------------------------------

def test_four_bundled_studies_ship():
    assert {"half-life-vs-volume", "kv-transfer-wall", "monte-carlo-default", "tornado-default"} <= set(BUNDLED)


@pytest.mark.parametrize("name", BUNDLED)
def test_study_files_round_trip_through_validation(name):
    study, scenario = load_study(name)
    assert study.question.strip()
    again = StudySpec.model_validate(json.loads(json.dumps(study.model_dump(mode="json"))))
    assert again == study
    assert scenario.name == study.scenario


def test_scenario_with_study_section(tmp_path):
    data = yaml.safe_load((DATA / "toy.yaml").read_text())
    data["study"] = {"question": "Does the toy SRAM chip win?", "metric": "ratio:sram",
                     "analyses": {"sweep": {"param": "devices.toy-sram.price_usd", "low": 1000, "high": 1e5, "points": 5}}}
    path = tmp_path / "toy-study.yaml"
    path.write_text(yaml.safe_dump(data))
    study, scenario = load_study(path)
    assert study.name == "toy" and scenario.name == "toy"


# --- tornado -----------------------------------------------------------------------------------

@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_tornado_swings_equal_scalar_low_high_evaluations(default_scenario):
    option = "h100-prefill+groq-decode"
    names = ["devices.groq-lpu.price_usd", "economics.discount_rate", "devices.h100-sxm.useful_life_years"]
    frame = tornado(default_scenario, f"ratio:{option}", names).set_index("param")
    base = scalar_ratio(default_scenario, option, {})
    for name in names:
        p = default_scenario.params[name]
        low, high = scalar_ratio(default_scenario, option, {name: p.low}), scalar_ratio(default_scenario, option, {name: p.high})
        row = frame.loc[name]
        assert row["metric_low"] == pytest.approx(low, rel=1e-12)
        assert row["metric_high"] == pytest.approx(high, rel=1e-12)
        assert row["metric_base"] == pytest.approx(base, rel=1e-12)
        assert row["swing"] == pytest.approx(abs(high - low), rel=1e-12)
    assert list(frame["swing"]) == sorted(frame["swing"], reverse=True)


def test_tornado_flags_a_parameter_that_flips_the_winner(asic_can_win):
    frame = tornado(asic_can_win.with_values({"workload.half_life_years": 6.0}), "ratio:asic",
                    ["program.external_units"]).iloc[0]
    winner = [v < 1 for v in (frame["metric_low"], frame["metric_base"], frame["metric_high"])]
    assert frame["crosses_breakeven"] == (len(set(winner)) > 1)


# --- sweep and map -----------------------------------------------------------------------------

@pytest.mark.slow
def test_tornado_marks_the_ends_where_an_option_misses_its_targets_and_names_its_question(default_scenario):
    """Issue 49 item 1: ``tco study tornado-default`` printed a cost ratio of 2.69 for the split against H100 at 8,000
    prompt tokens, where ``tco breakeven`` says neither meets the latency targets, and said "no single input within
    its range flips the winner" beside ``tco compare``'s flip at 4,385 tokens: it asks about one pair. Now that end has
    no ratio, names who misses, and the findings say which question the tornado answers (on the default with a 0.5 s
    TTFT target since the 2026-12-07 refit: at 1 s H100 meets its targets over the whole prompt range)."""
    frame = tornado(default_scenario.with_values(TIGHT_TTFT), "ratio:h100-prefill+groq-decode").set_index("param")
    row = frame.loc["workload.prompt_tokens"]
    assert row["misses_high"] == "h100-prefill+groq-decode, h100" and np.isnan(row["metric_high"]) and row["misses_low"] == ""
    assert np.isfinite(row["metric_low"]) and frame.index[0] == "workload.prompt_tokens"  # an end that misses sorts first
    assert (frame.drop(index="workload.prompt_tokens")["misses_high"] == "").all()
    lines = tornado_findings({"metric": "ratio:h100-prefill+groq-decode", "baseline": "h100", "flips_winner": [],
                              "largest_swing": [{"param": "workload.requests_per_s", "swing": 5.6}],
                              "misses_targets": [{"param": "workload.prompt_tokens", "low": 500.0, "high": 8000.0,
                                                  "unit": "tokens", "misses_low": "",
                                                  "misses_high": "h100-prefill+groq-decode, h100"}]})
    assert lines[1] == ("Mean prompt length: at its high (8,000 tokens) both h100-prefill+groq-decode and h100 miss a "
                        "latency target (no cost comparison there; the tornado leaves that end out).")
    assert lines[2] == ("No single input within its range changes whether h100-prefill+groq-decode beats h100. This "
                        "tornado compares h100-prefill+groq-decode against h100 only; `tco compare` names the inputs "
                        "that change which of all the options is cheapest.")


@pytest.mark.slow
def test_sweep_breakeven_equals_tco_breakeven(asic_can_win):
    asic_scenario = asic_can_win.with_values({"workload.half_life_years": 6.0})  # the ASIC wins with enough external sales
    param = "program.external_units"
    frame = sweep(asic_scenario, param, 5000, 500000, points=40, log=True, metrics=["ratio:asic", "npv:asic"])
    expected = tco.breakeven(asic_scenario, param, 5000, 500000, option="asic")[0]
    found = [b for b in frame.attrs["breakevens"] if b["option"] == "asic"]
    assert expected.status == "crosses" and len(found) == 1
    assert found[0]["value"] == pytest.approx(expected.value, rel=1e-9)
    assert found[0]["wins_above"] == expected.wins_above
    # the metric columns are the metric at each swept value
    i = 7
    assert frame["ratio:asic"][i] == pytest.approx(scalar_ratio(asic_scenario, "asic", {param: frame[param][i]}), rel=1e-12)
    # one stretch where the ASIC wins: from the break-even to the end of the range, the baseline meeting its targets
    [window] = [w for w in frame.attrs["windows"] if w["option"] == "asic"]
    assert window["from"] == found[0]["value"] and window["to"] == 500000 and not window["baseline_misses_targets"]


def test_sweep_of_one_whole_number_has_no_crossings(default_scenario):
    """An integer parameter swept from 10.2 to 10.4 keeps one whole number (rounded and held within the parameter's
    own range): one point, no range for the break-even solver to search, so no crossings and no stretches (not an
    error)."""
    frame = sweep(default_scenario, "workload.max_batch", 10.2, 10.4, points=5, metrics=["ratio:groq"])
    assert len(frame) == 1
    assert frame.attrs["breakevens"] == [] and frame.attrs["windows"] == []


#: the default with a 0.5 s TTFT target, where H100's widest layout meets its targets up to ~4,051-token prompts (at
#: the default 1 s, since prompt tokens' collectives run at NCCL's ring rate, it meets them over the whole range)
TIGHT_TTFT = {"workload.ttft_target_s": 0.5}


def test_sweep_chart_labels_each_winning_stretch_on_its_own_line(default_scenario):
    """The default with a 0.5 s TTFT target over prompt length from 3,000 to 6,000 tokens: Groq wins from ~4,034
    tokens, in two stretches (the baseline misses a target from ~4,051), crossings 0.4 % apart. The chart labelled each
    crossing at the top of the plot, so the labels printed over each other (the browser layout test caught it on
    fleet-split, where the ASIC split's crossings at 308.4 and 309.2 req/s came 0.3 % apart); it now labels each
    stretch, one a line."""
    from tco.present.study_figures import STRETCH_LABEL_STEP, sweep_figure
    from tco.studies.metrics import parse_metric

    scenario = default_scenario.with_values(TIGHT_TTFT)
    param = "workload.prompt_tokens"
    metrics = [parse_metric(scenario, m) for m in ("ratio:h100-prefill+groq-decode", "ratio:groq")]
    frame = sweep(scenario, param, 3000, 6000, points=30, log=True, metrics=metrics)
    figure = sweep_figure(frame, metrics)
    labels = [(a.text, a.y) for a in figure.layout.annotations if " wins " in a.text]
    assert labels == [("groq wins from 4034 to 4051", 1.0),
                      ("groq wins above 4051 (the baseline misses a target)", pytest.approx(1 - STRETCH_LABEL_STEP))]
    assert len(figure.layout.shapes) >= 2  # a dotted line at each crossing


def test_portfolio_finding_says_when_the_best_cell_wins_on_the_baselines_targets():
    """portfolio-chat's best cell, Cerebras on 16,000-token prompts, wins in 99.3 % of draws at a median cost ratio of
    1.28: it wins because the H100 baseline meets the TTFT target in 0.7 % of them. The finding said only "winning in
    99.3 % of draws"; it now gives the median and the baseline's share wherever the baseline misses its targets."""
    from tco.present.study_findings import findings

    cells = [{"model": "m", "workload": "long", "option": "a", "p_win": 0.993, "p50": 1.28, "p_baseline_feasible": 0.007},
             {"model": "m", "workload": "chat", "option": "b", "p_win": 0.4, "p50": 1.02, "p_baseline_feasible": 1.0}]
    text = findings({"results": {"portfolio": {"cells": 2, "metric": "ratio", "p_win": cells}}})
    assert text == ["Portfolio: the best cell is a for m / long, winning in 99.3% of draws (2 cells), at a median cost "
                    "ratio of 1.28: the baseline meets the latency targets in 0.7% of draws."]
    cells[0]["p_win"] = 0.1
    assert findings({"results": {"portfolio": {"cells": 2, "metric": "ratio", "p_win": cells}}}) == [
        "Portfolio: the best cell is b for m / chat, winning in 40% of draws (2 cells)."]


def test_sweep_findings_name_the_windows_and_where_a_latency_target_decides(default_scenario):
    """The default with a 0.5 s TTFT target over prompt length from 3,000 to 6,000 tokens (100 points, 0.7 % apart):
    Groq wins above ~4,034 tokens, first on cost (H100 still meets its targets with its batch held down, dearer than
    the LPUs), then from ~4,051, where H100's longest prompts alone outlast the TTFT target even with one sequence per
    replica, on the targets. The findings name the window's stretches, each checked against the crossings and a direct
    evaluation of the baseline at its middle; a sweep of 10 points over 250-64,000 tokens (93 % apart) finds the same
    crossings, taken from the break-even solver (2026-12-03), not from its grid."""
    from tco.present.study_findings import sweep_findings

    scenario = default_scenario.with_values(TIGHT_TTFT)
    param = "workload.prompt_tokens"
    frame = sweep(scenario, param, 3000, 6000, points=100, log=True,
                  metrics=["ratio:h100-prefill+groq-decode", "ratio:groq"])
    [crossing] = [b["value"] for b in frame.attrs["breakevens"] if b["option"] == "groq"]
    cost, targets = [w for w in frame.attrs["windows"] if w["option"] == "groq"]
    assert cost["from"] == crossing and cost["to"] == targets["from"] and targets["to"] == 6000
    assert not cost["baseline_misses_targets"] and targets["baseline_misses_targets"]
    assert not [w for w in frame.attrs["windows"] if w["option"] == "h100-prefill+groq-decode"]
    middles = np.array([np.sqrt(w["from"] * w["to"]) for w in (cost, targets)])
    results, _ = tco.evaluate_scenario(scenario, {param: middles})
    assert results["h100"].feasible.tolist() == [1.0, 0.0]
    lines = sweep_findings({"param": param, "low": 3000.0, "high": 6000.0, "breakevens": frame.attrs["breakevens"],
                            "windows": frame.attrs["windows"]})
    assert lines == ["groq wins at mean prompt length above 4,034 tokens (the baseline misses a latency target "
                     "above 4,051 tokens)."]
    coarse = sweep(scenario, param, 250, 64000, points=10, log=True, metrics=["ratio:groq"])
    first, last = coarse.attrs["windows"]
    assert (first["from"], first["to"]) == pytest.approx((cost["from"], cost["to"]), rel=1e-9)
    assert last["baseline_misses_targets"]


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_map_cells_and_contour_agree_with_scalar_evaluations_and_the_solver(asic_can_win):
    asic_scenario = asic_can_win
    x, y = "workload.half_life_years", "program.external_units"
    grid = grid_map(asic_scenario, x, y, (4.0, 6.0), (1e4, 1e6), nx=5, ny=200, metric="ratio:asic", y_log=True)
    assert grid.z.shape == (200, 5) and grid.threshold == 1.0
    assert grid.z[17, 3] == pytest.approx(scalar_ratio(asic_scenario, "asic", {x: grid.x[3], y: grid.y[17]}), rel=1e-12)
    contour = grid.contour()
    for xv in grid.x:
        solved = tco.breakeven(asic_scenario.with_values({x: float(xv)}), y, 1e4, 1e6, option="asic")[0].value
        ys = contour.loc[np.isclose(contour[x], xv), y]
        assert len(ys) == 1
        assert ys.iloc[0] == pytest.approx(solved, rel=0.01)  # linear interpolation on a 200-point log grid


def test_map_marks_where_a_latency_target_decides_the_winner(default_scenario):
    """The default's map over demand and prompt length (the app's default map) with a 0.5 s TTFT target: beyond ~4,050
    prompt tokens H100 misses its TTFT target and Groq wins there, at a cost ratio still above 1. The cells where the
    option or the baseline misses a target are the ones the core reports infeasible; they are washed pale, said in the
    hover and counted."""
    from tco.present.study_figures import MISSED_WASH, map_figure

    scenario = default_scenario.with_values(TIGHT_TTFT)
    x, y = "workload.requests_per_s", "workload.prompt_tokens"
    grid = grid_map(scenario, x, y, (30.0, 300.0), (500.0, 8000.0), nx=3, ny=6, metric="ratio:groq")
    for j, i in ((0, 0), (5, 2)):  # a short prompt (both meet the targets) and a long one (H100 misses)
        results, _ = tco.evaluate_scenario(scenario, {x: grid.x[i], y: grid.y[j]})
        assert grid.missed[j, i] == (float(results["h100"].feasible) < 1 or float(results["groq"].feasible) < 1)
    assert not grid.missed[0].any() and grid.missed[-1].all()
    assert (grid.z[grid.missed] > 1.0).all() and grid.wins[grid.missed].all()  # Groq wins there, not on cost
    figure = map_figure(grid)
    wash = next(t for t in figure.data if t.name == "a latency target missed (pale)")
    np.testing.assert_array_equal(np.isfinite(np.asarray(wash.z, float)), grid.missed)
    assert wash.colorscale[0][1] == MISSED_WASH and "pale: a latency target missed" in figure.layout.title.text
    assert "a latency target missed" in figure.data[0].customdata[-1][0] and figure.data[0].customdata[0][0] == ""
    # plotly draws no legend key for a heatmap or a contour: each named one has an empty scatter in its style as its key
    keys = {t.name: t for t in figure.data if t.type == "scatter"}
    assert keys.keys() == {"a latency target missed (pale)", "the winner changes (white line)"}
    assert keys["a latency target missed (pale)"].marker.color == MISSED_WASH
    assert keys["the winner changes (white line)"].line.color == "white"
    assert all(t.showlegend is False and t.legendgroup == t.name for t in figure.data if t.name and t.type != "scatter")
    assert grid.frame()["latency_target_missed"].sum() == grid.missed.sum()


@pytest.mark.slow
def test_breakeven_metric_matches_solver_per_point(asic_can_win):
    asic_scenario = asic_can_win
    half_lives = np.array([4.0, 6.0])
    values = metric_values(asic_scenario, "breakeven:asic:program.external_units", {"workload.half_life_years": half_lives})
    for h, v in zip(half_lives, values, strict=True):
        assert v == pytest.approx(tco.breakeven(asic_scenario.with_values({"workload.half_life_years": h}),
                                                "program.external_units", option="asic")[0].value, rel=1e-9)
    assert math.isnan(win_threshold("breakeven:asic:program.external_units"))
    assert win_threshold("npv") == 0.0 and win_threshold("ratio:asic") == 1.0


@settings(max_examples=60, deadline=None)
@given(st.floats(0.5, 2000.0), st.floats(0.05, 40.0), st.integers(1, 9), st.booleans(), st.sampled_from([1, 5, 60]))
def test_batched_bisection_gives_the_brackets_of_one_halving_per_call(root, slope, teeth, log, halvings):
    """A scalar crossing narrowed 4 halvings per call (15 points a call) ends in the bracket that plain
    bisection (1 point a call) reaches: the same midpoints, the same decisions. The gap is a sawtooth of
    ``teeth`` steps plus a slope (several sign changes in a bracket, as whole device counts make)."""
    from tco.analysis.solvers import _bisection, _bisection_in_batches

    calls = []

    def gap(x):
        x = np.asarray(x, float)
        calls.append(x.size)
        return slope * (x - root) + np.floor(x * teeth / root) % 2 - 0.5

    lo, hi = (np.float64(0.25), np.float64(4000.0))
    g_lo = gap(lo)
    one = _bisection(gap, lo, hi, g_lo, halvings, log)
    calls.clear()
    batched = _bisection_in_batches(gap, lo, hi, g_lo, halvings, log)
    assert (float(batched[0]), float(batched[1])) == (float(one[0]), float(one[1]))
    assert len(calls) == -(-halvings // 4) and max(calls) == 2 ** min(halvings, 4) - 1


# --- sampling ------------------------------------------------------------------------------------

def uncertain(distribution, value=10.0, low=5.0, high=20.0, name="devices.x.price_usd"):
    return Param(name, value, "USD", low, high, distribution)


def test_distribution_moments():
    u = (np.arange(200_000) + 0.5) / 200_000  # exact quantile grid
    tri = inverse_cdf(uncertain("triangular"), u)
    assert tri.mean() == pytest.approx((5 + 10 + 20) / 3, rel=1e-4)  # triangular mean (a + c + b) / 3
    assert inverse_cdf(uncertain("uniform"), u).mean() == pytest.approx(12.5, rel=1e-6)
    # lognormal with value at the geometric midpoint: median = value, P5/P95 of the untruncated law at low/high
    logn = uncertain("lognormal", value=10.0, low=2.5, high=40.0)
    assert np.median(inverse_cdf(logn, u)) == pytest.approx(10.0, rel=1e-4)
    # normal: the truncation keeps 90 % of the mass, so the quantile 0.5 + 0.45 * (u - 0.5)/0.5 ...
    norm = uncertain("normal", value=12.5, low=5.0, high=20.0)
    sd = 7.5 / Z95
    assert inverse_cdf(norm, np.array([0.5]))[0] == pytest.approx(12.5)
    assert inverse_cdf(norm, np.array([0.0, 1.0])).tolist() == pytest.approx([5.0, 20.0])
    assert np.std(inverse_cdf(norm, u)) < sd  # truncation narrows the spread


@settings(max_examples=60, deadline=None)
@given(dist=st.sampled_from(["uniform", "triangular", "normal", "lognormal"]),
       low=st.floats(1.0, 50.0), width=st.floats(0.5, 100.0), where=st.floats(0.0, 1.0),
       u=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=20))
def test_inverse_cdf_stays_in_bounds_and_is_monotone(dist, low, width, where, u):
    p = uncertain(dist, value=low + where * width, low=low, high=low + width)
    u = np.sort(np.array(u))
    x = inverse_cdf(p, u)
    assert np.all(x >= low - 1e-9 * width) and np.all(x <= low + width + 1e-9 * width)
    assert np.all(np.diff(x) >= -1e-9 * width)


@settings(max_examples=60, deadline=None)
@given(dist=st.sampled_from(["uniform", "triangular", "normal", "lognormal"]),
       low=st.floats(1.0, 50.0), width=st.floats(0.5, 100.0), where=st.floats(0.0, 1.0), u=st.floats(0.0, 1.0))
def test_cdf_inverts_the_inverse_cdf(dist, low, width, where, u):
    """The CDF a conditioned draw reads (``_Drawn.cdf``) is the inverse of the draw's inverse CDF."""
    p = uncertain(dist, value=low + where * width, low=low, high=low + width)
    assert _Drawn.of(p).cdf(inverse_cdf(p, np.array([u])))[0] == pytest.approx(u, abs=1e-7)


def test_draws_obey_idle_power_at_most_tdp():
    """Issue 49 item 8: independent draws put groq-3-lpx's idle power (60-240 W) above its TDP (200-800 W), a scenario
    the CLI refuses, in ~1 % of Monte Carlo draws of specialization-over-time; Sobol and Morris designs too. Now the
    TDP is drawn first and the idle power from its distribution conditioned on not exceeding it.

    Hand-derived (both uniform): TDP at u = 0 is 200 W (its floor, the idle power's 60 W low, is below its own low);
    idle power at u = 0.5 is the median of the uniform on [60, 200] = 130 W (u mapped to 0.5 x F(200) = 0.5 x 140/180);
    at u = 1 it is the TDP drawn; with the TDP at 800 W the idle power draws as before, 60 + 0.5 x 180 = 150 W."""
    idle = uncertain("uniform", 120.0, 60.0, 240.0, "devices.groq-3-lpx.idle_power_w")
    tdp = uncertain("uniform", 400.0, 200.0, 800.0, "devices.groq-3-lpx.tdp_w")
    values = {idle.name: 120.0, tdp.name: 400.0}
    pairs = ordered_pairs([idle, tdp], values)
    u = np.array([[0.5, 0.0], [1.0, 0.0], [0.5, 1.0]])
    drawn = values_at_quantiles([idle, tdp], u, pairs)
    assert drawn[tdp.name].tolist() == pytest.approx([200.0, 200.0, 800.0])
    assert drawn[idle.name].tolist() == pytest.approx([130.0, 200.0, 150.0])
    # the TDP alone drawn, the idle power fixed at 250 W: every TDP draw at or above it, uniform on [250, 800]
    fixed = ordered_pairs([tdp], {idle.name: 250.0, tdp.name: 400.0})
    assert values_at_quantiles([tdp], np.array([[0.0], [0.5]]), fixed)[tdp.name].tolist() == pytest.approx([250.0, 525.0])
    # the bundled scenario that holds the part: no Monte Carlo draw breaks the rule the CLI enforces
    scenario = tco.load_scenario("specialization-over-time")
    plan = sampling_plan(scenario, [("economics.electricity_usd_per_kwh", "economics.facility_usd_per_kw_month", 0.5)])
    draws = draw_chunk(plan, seed=5, index=0, size=20_000)  # with a correlation too (the plan's rules survive it)
    assert np.all(draws[idle.name] <= draws[tdp.name])
    for pair in plan.pairs:
        lower = draws[plan.params[pair.lower].name] if pair.lower >= 0 else pair.lower_value
        upper = draws[plan.params[pair.upper].name] if pair.upper >= 0 else pair.upper_value
        assert np.all(np.asarray(lower) <= np.asarray(upper))


def test_the_share_of_draws_taken_within_a_rule_is_reported():
    """Issue 49 item 8, the share left open: each rule a Monte Carlo conditions its draws on is reported with the share
    of independent draws that would break it. Hand-derived, both uniform (idle power on [60, 240] W, TDP on
    [200, 800] W): P(idle > TDP) = integral over t in [200, 240] of (240 - t) / 180 x dt / 600 = 40^2 / 2 / 108,000
    = 0.7407 %; with the idle power fixed at 250 W, P(TDP < 250) = 50 / 600 = 8.333 % (midpoint quadrature on 1,024
    quantiles: within 1 / 1,024)."""
    idle = uncertain("uniform", 120.0, 60.0, 240.0, "devices.groq-3-lpx.idle_power_w")
    tdp = uncertain("uniform", 400.0, 200.0, 800.0, "devices.groq-3-lpx.tdp_w")
    both = SamplingPlan((idle, tdp), pairs=ordered_pairs([idle, tdp], {idle.name: 120.0, tdp.name: 400.0}))
    (rule,) = rule_breaking_shares(both)
    assert (rule.lower, rule.upper) == (idle.name, tdp.name)
    assert rule.share == pytest.approx(800 / 108_000, abs=1 / 1024)
    fixed = SamplingPlan((tdp,), pairs=ordered_pairs([tdp], {idle.name: 250.0, tdp.name: 400.0}))
    assert rule_breaking_shares(fixed)[0].share == pytest.approx(50 / 600, abs=1 / 1024)
    # a Monte Carlo reports them, and the study's findings say so in words
    scenario = tco.load_scenario("specialization-over-time")
    result = monte_carlo(scenario, ["lcot:h100"], 64, seed=1, chunk_size=64)
    assert result.conditioned == rule_breaking_shares(sampling_plan(scenario))
    assert any(r.lower == idle.name and r.share > 0 for r in result.conditioned)
    summary = {"results": {"monte_carlo": {"summary": [], "conditioned_draws": [
        {"lower": idle.name, "upper": tdp.name, "share": rule.share}]}}}
    (line,) = findings(summary)
    assert line.startswith("groq-3-lpx power when idle at most groq-3-lpx thermal design power per device: 0.74% of "
                           "independent draws would break this rule")


def test_integer_parameters_are_rounded(default_scenario):
    plan = sampling_plan(default_scenario)
    draws = draw_chunk(plan, seed=3, index=0, size=2000)
    for p in plan.params:
        if p.field.integer:
            assert np.array_equal(draws[p.name], np.round(draws[p.name]))
            assert draws[p.name].min() >= p.low and draws[p.name].max() <= p.high


def test_iman_conover_induces_rank_correlation_and_keeps_marginals():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(0)
    u = rng.random((20_000, 3))
    target = np.array([[1, 0.6, 0.0], [0.6, 1, -0.3], [0.0, -0.3, 1]])
    v = iman_conover(u, target, rng)
    assert np.allclose(spearmanr(v).statistic, target, atol=0.03)
    assert np.array_equal(np.sort(v, axis=0), np.sort(u, axis=0))


def test_monte_carlo_columns_in_blocks_equal_one_call(default_scenario):
    """Evaluating a chunk in blocks of draws (the engine's cache-sized calls) changes no value: 1,000 draws
    of every sampled parameter in blocks of 64 (16 blocks, the last one short) equal one call bit for bit."""
    from tco.studies.chunk_jobs import MetricColumns
    from tco.studies.chunks import blockwise
    from tco.studies.metrics import parse_metric

    columns = MetricColumns.of(default_scenario, (parse_metric(default_scenario, "ratio:groq"),
                                                  parse_metric(default_scenario, "lcot:h100")))
    updates = draw_chunk(sampling_plan(default_scenario), 3, 0, 1000)
    whole = columns(updates)
    blocked = blockwise(columns, updates, block=64)
    assert blocked.keys() == whole.keys()
    for name, value in whole.items():
        assert np.array_equal(blocked[name], np.broadcast_to(value, (1000,)), equal_nan=True), name


def test_monte_carlo_columns_without_the_scenario_equal_the_metric_table(asic_scenario):
    """A worker's columns (structure and values, no Scenario) give each metric as metric_table does on the
    scenario, the years of advantage over the roadmap included (it reads the drawn parameter values)."""
    from tco.studies.chunk_jobs import MetricColumns
    from tco.studies.metrics import metric_table, parse_metric

    metrics = [parse_metric(asic_scenario, m) for m in ("advantage:asic", "ratio:asic", "lcot:h100")]
    columns = MetricColumns.of(asic_scenario, metrics)
    assert columns.scenario is None
    updates = draw_chunk(sampling_plan(asic_scenario), 5, 0, 300)
    got = columns(updates)
    want = metric_table(asic_scenario, metrics, updates)
    for m in metrics:
        assert np.array_equal(got[m.name], np.broadcast_to(want[m.name], (300,)), equal_nan=True), m.name


def test_quantile_columns_laid_out_contiguously_give_the_same_values(default_scenario):
    """values_at_quantiles copies the quantile matrix column-major, 2,048 rows at a time, before the inverse CDFs:
    the same values as the inverse CDF of each strided column (5,000 rows: two whole blocks and a short one)."""
    from tco.studies.sampling import values_at_quantiles

    params = sampling_plan(default_scenario).params
    u = np.random.default_rng(5).random((5000, len(params)))
    values = values_at_quantiles(params, u)
    for j, p in enumerate(params):
        assert np.array_equal(values[p.name], inverse_cdf(p, u[:, j])), p.name


# --- Monte Carlo ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def toy_uniform_price():
    """Toy scenario whose only uncertain input is the SRAM chip's price, uniform on [1k, 100k] USD."""
    data = yaml.safe_load((DATA / "toy.yaml").read_text())
    data["devices"]["toy-sram"]["price_usd"] = {"value": 10000, "low": 1000, "high": 100000, "distribution": "uniform"}
    return scenario_from_dict(data)


def test_monte_carlo_p_win_matches_the_analytic_probability(toy_uniform_price):
    s = toy_uniform_price
    be = tco.breakeven(s, "devices.toy-sram.price_usd", option="sram")[0]
    assert be.status == "crosses"
    # uniform on [low, high]: P(win) = share of the range on the winning side of the break-even
    share_below = (be.value - 1000) / (100000 - 1000)
    expected = 1 - share_below if be.wins_above else share_below
    result = monte_carlo(s, ["ratio:sram"], samples=20_000, seed=11)
    row = result.summary.iloc[0]
    assert result.params == ["devices.toy-sram.price_usd"]
    assert abs(row["p_win"] - expected) < 3 * row["p_win_std_error"]
    assert row["p_win_std_error"] == pytest.approx(math.sqrt(expected * (1 - expected) / 20_000), rel=0.05)


def every_draw(scenario, metric, samples, seed, chunk_size):
    """The metric at every draw of a Monte Carlo, straight from the core: chunk i evaluates ``draw_chunk(plan, seed, i)``."""
    plan = sampling_plan(scenario)
    sizes = [min(chunk_size, samples - start) for start in range(0, samples, chunk_size)]
    return np.concatenate([np.broadcast_to(metric_values(scenario, metric, draw_chunk(plan, seed, i, size)), (size,))
                           for i, size in enumerate(sizes)])


def test_monte_carlo_is_reproducible_and_chunked_by_seed(default_scenario):
    a = monte_carlo(default_scenario, ["ratio:groq", "lcot:h100"], samples=3000, seed=5, chunk_size=1000)
    b = monte_carlo(default_scenario, ["ratio:groq", "lcot:h100"], samples=3000, seed=5, chunk_size=1000)
    assert a.samples.equals(b.samples) and a.summary.equals(b.summary)
    assert len(a.samples) == 1000  # the kept draws come from the first chunk
    # chunk i depends only on (seed, i): a one-chunk run reproduces chunk 0 exactly, and chunk 1 differs
    first = monte_carlo(default_scenario, ["ratio:groq"], samples=1000, seed=5, chunk_size=1000)
    assert np.array_equal(first.samples["ratio:groq"], a.samples["ratio:groq"])
    plan = sampling_plan(default_scenario)
    assert not np.array_equal(draw_chunk(plan, 5, 0, 10)["economics.discount_rate"],
                              draw_chunk(plan, 5, 1, 10)["economics.discount_rate"])
    # the summary covers every draw: numpy on the 3000 values of the three chunks
    row = a.summary.set_index("metric").loc["lcot:h100"]
    values = every_draw(default_scenario, "lcot:h100", 3000, 5, 1000)
    assert np.array_equal(values[:1000], a.samples["lcot:h100"])
    assert row["mean"] == pytest.approx(values.mean(), rel=1e-12)
    assert row["std_error"] == pytest.approx(values.std(ddof=1) / math.sqrt(3000), rel=1e-9)
    assert (row["min"], row["max"], row["n"]) == (values.min(), values.max(), 3000)
    # P10/P50/P90 from 2048 equal-mass bins fixed on the first chunk: within 1 % of the spread of the exact ones
    exact = np.percentile(values, [10, 50, 90])
    assert np.all(np.abs(row[["p10", "p50", "p90"]].to_numpy(float) - exact) < 0.01 * (values.max() - values.min()))


def test_distribution_is_the_exact_cdf_of_every_draw(default_scenario):
    """At every row the share below ``value`` is the exact share of the 3000 draws (counted, not interpolated)."""
    result = monte_carlo(default_scenario, ["ratio:groq"], samples=3000, seed=8, chunk_size=1000)
    values = every_draw(default_scenario, "ratio:groq", 3000, 8, 1000)
    frame = result.distribution("ratio:groq")
    assert list(frame.columns) == ["value", "cdf", "exceedance"]
    inner = frame.iloc[:-1]  # the last row is the largest draw, where the share at or below it is 1
    assert np.array_equal(inner["cdf"].to_numpy(), (values[None, :] < inner["value"].to_numpy()[:, None]).mean(axis=1))
    assert not frame.duplicated().any()
    assert (frame["value"].iloc[0], frame["value"].iloc[-1]) == (values.min(), values.max())
    assert (frame["cdf"].iloc[0], frame["cdf"].iloc[-1]) == (0.0, 1.0)
    assert np.all(np.diff(frame["value"]) >= 0) and np.all(np.diff(frame["cdf"]) >= 0)
    assert np.array_equal(frame["exceedance"], 1 - frame["cdf"])
    # P(win) of a ratio: the share of draws below 1 where the baseline meets its targets, plus the draws where only
    # the challenger does (with the prompt-length spread drawn up to 1.5 the H100 baseline misses its 1 s p99 TTFT in
    # ~10 % of the draws, by its longest prompts' own prefill: docs/model.md "Queueing"); groq meets them in every draw
    row = result.summary.iloc[0]
    plan = sampling_plan(default_scenario)
    baseline = default_scenario.structure.baseline
    base_ok = np.concatenate([np.broadcast_to(np.asarray(tco.evaluate_scenario(default_scenario, draw_chunk(plan, 8, i, 1000))[0][
        baseline].feasible) > 0, (1000,)) for i in range(3)])
    assert row["p_feasible"] == 1.0 and row["p_baseline_feasible"] == base_ok.mean() and 0.8 < base_ok.mean() < 1.0
    assert row["p_win"] == ((values < 1) & base_ok).mean() + (~base_ok).mean()


# --- Sobol ---------------------------------------------------------------------------------------

def test_sobol_recovers_ishigami_indices():
    """Ishigami & Homma (1990), a = 7, b = 0.1 on [-pi, pi]^3; analytic indices from Saltelli et al.
    (2008), Global Sensitivity Analysis: The Primer, section 4.6: V = a^2/8 + b pi^4/5 + b^2 pi^8/18 + 1/2,
    V1 = (1 + b pi^4/5)^2 / 2, V2 = a^2/8, V13 = b^2 pi^8 (1/18 - 1/50)."""
    a, b = 7.0, 0.1
    v = a**2 / 8 + b * np.pi**4 / 5 + b**2 * np.pi**8 / 18 + 0.5
    v1, v2, v13 = (1 + b * np.pi**4 / 5) ** 2 / 2, a**2 / 8, b**2 * np.pi**8 * (1 / 18 - 1 / 50)
    s1 = np.array([v1, v2, 0.0]) / v
    st_ = np.array([v1 + v13, v2, v13]) / v

    def ishigami(u):
        x = -np.pi + 2 * np.pi * u
        return np.sin(x[:, 0]) + a * np.sin(x[:, 1]) ** 2 + b * x[:, 2] ** 4 * np.sin(x[:, 0])

    frame = sobol_analysis(ishigami, ["x1", "x2", "x3"], n=8192, seed=1)
    assert frame["S1"].to_numpy() == pytest.approx(s1, abs=0.03)
    assert frame["ST"].to_numpy() == pytest.approx(st_, abs=0.03)
    assert (frame["S1_conf"] > 0).all() and (frame["ST_conf"] < 0.1).all()


def test_sobol_and_morris_count_the_runs_where_the_pair_misses_its_targets(default_scenario):
    """Issue 49 item 1: a Sobol analysis of groq's cost ratio to the baseline says which pair it compares, the share of
    its model runs where groq or h100 misses a latency target, and the indices of that event. Oracle: SALib's own
    Saltelli design (the same scrambled sequence for the same seed), each row evaluated by ``tco.evaluate_scenario``,
    the event 1 where either option is infeasible, and SALib's analysis of it. On the default with a 0.5 s TTFT target
    (where H100's longest prompts outlast it from ~4,051-token prompts), over the prompt length and the share of the
    links H100's prompt-token collectives reach."""
    from SALib.analyze import sobol as salib_analyze
    from SALib.sample import sobol as salib_sample

    from tco.studies import morris, sobol
    from tco.studies.sampling import ordered_pairs, values_at_quantiles

    default_scenario = default_scenario.with_values(TIGHT_TTFT)
    names = ["workload.prompt_tokens", "devices.h100-sxm.prefill_collective_efficiency", "devices.groq-lpu.price_usd"]
    result = sobol(default_scenario, "ratio:groq", 64, seed=3, params=names)
    params = [default_scenario.params[n] for n in names]
    problem = {"num_vars": 3, "names": names, "bounds": [[0.0, 1.0]] * 3}
    u = salib_sample.sample(problem, 64, calc_second_order=False, seed=3)
    pairs = ordered_pairs(params, default_scenario.params.values())
    results, _ = tco.evaluate_scenario(default_scenario, values_at_quantiles(params, u, pairs))
    missed = ((np.asarray(results["groq"].feasible) <= 0) | (np.asarray(results["h100"].feasible) <= 0)).astype(float)
    assert result.compares == ("groq", "h100")
    assert result.share_missing_a_target == pytest.approx(missed.mean(), abs=1e-15) and 0.05 < missed.mean() < 0.95
    ref = salib_analyze.analyze(problem, missed, calc_second_order=False, seed=3)
    by_name = result.missing_a_target.set_index("param").loc[names]
    assert by_name["ST"].to_numpy() == pytest.approx(ref["ST"], abs=1e-10)
    assert by_name["S1"].to_numpy() == pytest.approx(ref["S1"], abs=1e-10)
    # the price of a groq chip moves neither fleet's latency: no share of whether the pair meets its targets
    assert by_name.loc["devices.groq-lpu.price_usd", "ST"] == 0.0
    # the metric's own indices are those of the metric alone (sobol_analysis of its first output)
    function, _ = tco.studies.sensitivity.scenario_function(default_scenario, tco.studies.parse_metric(
        default_scenario, "ratio:groq"), names)
    alone = sobol_analysis(lambda x: function(x)[:, 0], names, 64, seed=3).set_index("param").loc[names]
    assert result.indices.set_index("param").loc[names, "ST"].to_numpy() == pytest.approx(alone["ST"].to_numpy(), abs=0)
    # nothing to attribute where no run misses: the price alone never moves feasibility, and the default meets both
    priced = sobol(default_scenario, "ratio:groq", 16, seed=3, params=["devices.groq-lpu.price_usd"])
    assert priced.share_missing_a_target == 0.0 and priced.missing_a_target is None
    # an LCOT compares one option; a break-even compares no single point's fleets
    assert sobol(default_scenario, "lcot:h100", 16, seed=3, params=names).compares == ("h100",)
    screened = morris(default_scenario, "breakeven:groq:devices.groq-lpu.price_usd", 2, seed=3,
                      params=["workload.output_tokens"])
    assert screened.compares == () and math.isnan(screened.share_missing_a_target) and screened.missing_a_target is None
    # Morris counts its own runs: 6 trajectories x 4 points, the event's effects are changes in its probability
    m = morris(default_scenario, "ratio:groq", 6, seed=3, params=names)
    assert m.compares == ("groq", "h100") and 0.0 <= m.share_missing_a_target <= 1.0
    assert m.share_missing_a_target * 24 == pytest.approx(round(m.share_missing_a_target * 24), abs=1e-9)
    if m.missing_a_target is not None:
        assert (m.missing_a_target["mu_star"] <= 1.0 / tco.studies.sensitivity.morris_delta(4) + 1e-12).all()


def test_the_parametric_table_is_every_combination_of_its_inputs(default_scenario, monkeypatch):
    """Issue 51 item 5: 3 x 2 values of two inputs give 6 points per option, the first input varying slowest; each row
    equals the scenario edited to that point and evaluated alone; cost_ratio is the option over the baseline (1 on the
    baseline's rows). Refused: an unknown input, a value outside its field, an input named twice, a fourth input,
    more than 2,000 combinations, an unknown output -- each named."""
    from tco.studies.parametric import MAX_POINTS, parametric

    axes = [("workload.prompt_tokens", [1000, 2000, 4000]), ("devices.groq-lpu.price_usd", [10_000, 20_000])]
    table = parametric(default_scenario, axes, ["lcot_usd_per_mtok", "cost_ratio", "feasible"])
    assert len(table) == 6 * len(default_scenario.structure.options)
    groq = table[table["option"] == "groq"]
    assert groq["workload.prompt_tokens"].tolist() == [1000, 1000, 2000, 2000, 4000, 4000]
    for _, row in groq.iterrows():
        edited = default_scenario.with_values({n: row[n] for n, _ in axes})
        alone, _ = tco.evaluate_scenario(edited)
        assert row["lcot_usd_per_mtok"] == pytest.approx(float(alone["groq"].lcot_usd_per_mtok), rel=1e-12)
        assert row["cost_ratio"] == pytest.approx(float(alone["groq"].lcot_usd_per_mtok)
                                                  / float(alone["h100"].lcot_usd_per_mtok), rel=1e-12)
    assert (table.loc[table["option"] == "h100", "cost_ratio"] == 1.0).all()
    bad = [("nope", [1.0]), ("workload.prompt_tokens", [-5.0]), ("workload.prompt_tokens", [1.0]),
           ("workload.output_tokens", [1.0, 2.0])]
    with pytest.raises(InputError) as refused:
        parametric(default_scenario, bad, ["zzz"])
    assert [e.path for e in refused.value.errors] == ["axes", "axes[0].param", "axes[1].values", "axes[2].param",
                                                      "outputs"]
    # a grid too large is refused before any of its values is read (100,000 values would take minutes to check)
    read = []
    monkeypatch.setattr(type(default_scenario), "with_values", lambda self, updates: read.append(updates))
    with pytest.raises(InputError, match=f"the grid has 100,000 combinations; at most {MAX_POINTS:,}"):
        parametric(default_scenario, [("workload.output_tokens", list(range(1, 100_001)))], ["feasible"])
    assert read == []


# --- command line ----------------------------------------------------------------------------------

def write_study(tmp_path, **changes):
    data = {"name": "toy-sweep", "question": "Where does the toy SRAM chip win?", "scenario": str(DATA / "toy.yaml"),
            "metric": "ratio:sram",
            "analyses": {"sweep": {"param": "devices.toy-sram.price_usd", "low": 1000, "high": 100000, "points": 9}}}
    for path, value in changes.items():
        node = data
        keys = path.split("__")
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_cli_study_writes_tables_figures_and_summary(tmp_path):
    out = tmp_path / "out"
    assert main(["study", str(write_study(tmp_path)), "--out", str(out), "--seed", "4"]) == 0
    files = {p.name for p in out.iterdir()}
    assert {"summary.json", "sweep.csv", "sweep_breakevens.csv", "sweep.html"} <= files
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 4 and summary["tco_version"] == tco.__version__
    assert summary["scenario"]["name"] == "toy" and summary["seconds"]["total"] > 0
    html = (out / "sweep.html").read_text()
    assert "<script src=\"http" not in html and "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js inlined
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_study_says_how_often_the_pair_its_sobol_and_morris_compare_misses_a_target(tmp_path, capsys):
    """Issue 49 item 1 through ``tco study``: summary.json names the pair and the share of runs missing a target, the
    table of what decides it is written, and the findings say it in words (the share printed is the summary's)."""
    names = ["workload.prompt_tokens", "workload.ttft_target_s", "devices.h100-sxm.prefill_collective_efficiency"]
    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump({"name": "pair", "question": "q", "scenario": "default", "metric": "ratio:groq",
                                     "analyses": {"sobol": {"n": 64, "params": names},
                                                  "morris": {"trajectories": 8, "params": names}}}))
    out = tmp_path / "out"
    assert main(["study", str(study), "--out", str(out), "--seed", "3"]) == 0
    printed = capsys.readouterr().out
    results = json.loads((out / "summary.json").read_text())["results"]
    share = results["sobol"]["share_of_runs_missing_a_target"]
    assert results["sobol"]["compares"] == ["groq", "h100"] and 0 < share < 1
    assert results["sobol"]["missing_a_target_top"][0]["param"] in names[:2]
    assert (out / "sobol_missing_a_target.csv").exists()
    assert f"Sobol: in {100 * share:.2g}% of its model runs groq or h100 misses a latency target" in printed
    assert "what most decides whether groq or h100 misses a target (total effect on that event, [0, 1]): mean prompt" \
        in " ".join(printed.split())
    assert results["morris"]["compares"] == ["groq", "h100"] and "Morris: in " in printed
    html = (out / "sobol.html").read_text()
    assert "of its runs groq or h100 misses a latency target" in html


@pytest.mark.parametrize("changes, field", [
    ({"analyses__sweep__param": "devices.toy-sram.pryce_usd"}, "analyses.sweep.param"),
    ({"metric": "ratio:nonesuch"}, "metric"),
    ({"metric": "speed:sram"}, "metric"),
    ({"analyses__sweep__low": -5}, "analyses.sweep.low"),
    ({"analyses__sweep__points": 0}, "analyses.sweep.points"),
    ({"analyses": {"monte_carlo": {"samples": 0}}}, "analyses.monte_carlo.samples"),
    ({"analyses": {"monte_carlo": {"samples": 2.5}}}, "analyses.monte_carlo.samples"),
    ({"analyses": {"sobol": {"n": 1000}}}, "analyses.sobol"),
    ({"analyses": {"morris": {"levels": 5}}}, "analyses.morris"),
])
def test_cli_bad_study_exits_2_naming_the_field_and_leaves_no_output(tmp_path, capsys, changes, field):
    out = tmp_path / "out"
    assert main(["study", str(write_study(tmp_path, **changes)), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"tco: error: {field}" in err and "Traceback" not in err
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_cli_bad_sample_count_exits_2(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["study", str(write_study(tmp_path)), "--out", str(out), "--samples", "0"]) == 2
    assert "--samples: got 0" in capsys.readouterr().err
    assert not out.exists()


def test_progress_callback_reports_after_each_chunk():
    from tco import studies

    scenario = tco.load_scenario("default")
    seen = []
    studies.monte_carlo(scenario, ["ratio"], 600, seed=3, chunk_size=250, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(250, 600), (500, 600), (600, 600)]


@pytest.mark.slow
def test_app_and_cli_give_the_same_monte_carlo_summary(tmp_path, monkeypatch):
    """The Uncertainty tab and ``tco study`` run the one Monte Carlo with the same defaults: same seed, same numbers."""
    import pandas as pd
    from tco_app.context import AppContext
    from tco_app.pages.uncertainty import monte_carlo_view
    from tco_app.state import scenario_choices

    from tco import studies
    from tco.foundation.formatting import sig

    data = {"name": "mc", "question": "How often does Groq win?", "scenario": "default", "metric": "ratio:groq", "seed": 7,
            "analyses": {"monte_carlo": {"samples": 1500}}}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(data))
    assert main(["study", str(tmp_path / "study.yaml"), "--out", str(tmp_path / "out")]) == 0
    cli = pd.read_csv(tmp_path / "out" / "montecarlo_summary.csv")
    runs, progress = [], []

    def recorded(*args, **kwargs):  # the app's call, kept to compare every digit
        runs.append(monte_carlo(*args, **kwargs))
        return runs[-1]

    monkeypatch.setattr(studies, "monte_carlo", recorded)
    state = {"scenario": "default", "upload": None, "set": {}}
    ctx = AppContext(scenario_choices(), "default")
    _figure, _exceedance, table = monte_carlo_view(ctx, state, "ratio:groq", 1500, 7, progress.append)
    app = runs[0].summary
    # the last run's "100% done" is replaced as soon as a run starts, then each chunk reports
    assert progress == ["0% done: 0 of 1,500 draws", "100% done: 1,500 of 1,500 draws"]
    assert list(app.columns) == list(cli.columns)
    numbers = app.select_dtypes("number").columns
    assert np.array_equal(app[numbers].to_numpy(float), cli[numbers].to_numpy(float), equal_nan=True)
    # the app's table shows the same numbers, as a person reads them (median, P10 - P90 at 4 significant figures)
    shown = next(c for c in table.children if getattr(c, "data", None))  # the table's CSV data
    row = dict(zip(shown.data["header"], shown.data["rows"][0], strict=True))
    assert row["median"] == sig(cli.loc[0, "p50"], 4)
    assert row["P10 – P90"] == f"{sig(cli.loc[0, 'p10'], 4)} – {sig(cli.loc[0, 'p90'], 4)}"
    # a win counts where H100 misses its targets, whatever the ratio: the table says how often it does, and those wins
    # are the ones the share of draws below the break-even does not show
    assert row["P(baseline h100 meets them)"] == f"{sig(100 * cli.loc[0, 'p_baseline_feasible'], 3)}%"
    assert cli.loc[0, "p_baseline_feasible"] < 1.0
    below = (runs[0].samples["ratio:groq"] < 1.0).mean()
    assert cli.loc[0, "p_win"] > below  # Groq wins in more draws than it is cheaper in (the kept draws)
    distribution = pd.read_csv(tmp_path / "out" / "montecarlo_distribution.csv")
    assert set(distribution["metric"]) == {"ratio:groq"} and distribution["cdf"].is_monotonic_increasing


def test_cli_study_replaces_its_own_output_but_never_a_foreign_folder(tmp_path, capsys):
    study = str(write_study(tmp_path))
    out = tmp_path / "out"
    assert main(["study", study, "--out", str(out)]) == 0
    assert main(["study", study, "--out", str(out), "--seed", "9"]) == 0  # a rerun replaces the study's own folder
    assert json.loads((out / "summary.json").read_text())["seed"] == 9
    foreign = tmp_path / "precious"
    (foreign / "keep").mkdir(parents=True)
    (foreign / "notes.txt").write_text("keep me")
    assert main(["study", study, "--out", str(foreign)]) == 2
    assert "--out" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "keep me" and (foreign / "keep").is_dir()


@pytest.mark.parametrize("name", [".", ".."])
def test_study_name_cannot_be_a_relative_folder(tmp_path, capsys, name):
    assert main(["study", str(write_study(tmp_path, name=name))]) == 2
    assert "tco: error: name" in capsys.readouterr().err


def test_feasibility_shares_bound_the_wins_and_agree_with_the_engine(default_scenario):
    from tco import studies
    from tco.core.evaluate import evaluate
    from tco.studies.sampling import draw_chunk, sampling_plan

    result = studies.monte_carlo(default_scenario, ["ratio", "lcot:h100"], 4000, seed=2, chunk_size=1500)
    rows = result.summary.set_index("metric")
    # a win needs the option to meet its latency targets
    assert (rows["p_win"] <= rows["p_feasible"] + 1e-12).all()
    # the baseline's own metric: its option is the baseline
    assert rows.loc["lcot:h100", "p_feasible"] == rows.loc["lcot:h100", "p_baseline_feasible"]
    # the same draws straight through the engine
    plan = sampling_plan(default_scenario)
    feasible = []
    for index, size in enumerate((1500, 1500, 1000)):
        values = default_scenario.values() | draw_chunk(plan, 2, index, size)
        feasible.append(np.broadcast_to(evaluate(default_scenario.structure, values)["h100"].feasible > 0, (size,)))
    assert rows.loc["lcot:h100", "p_feasible"] == pytest.approx(np.concatenate(feasible).mean(), abs=1e-12)
