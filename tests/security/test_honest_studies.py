"""No silent wrong number from a study (issue 50, items 2 and 3): a range is swept as given (and marked where it
leaves the sourced one), and a Sobol sample too small for its estimator is refused instead of reported as findings."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from harness import contained, refused, tco


def run_study(tmp_path, analyses: dict) -> tuple[object, dict | None]:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump({"name": "s", "question": "q", "scenario": "default", "metric": "ratio:groq",
                                    "analyses": analyses}))
    outcome = tco("study", str(path), "--out", str(tmp_path / "out"), cwd=tmp_path, timeout=120)
    summary = tmp_path / "out" / "summary.json"
    return outcome, json.loads(summary.read_text()) if summary.exists() else None


# --- item 2: a swept range is never narrowed silently ------------------------------------------------------


def test_an_integer_sweep_beyond_the_sourced_range_is_swept_as_given_and_marked(tmp_path):
    """``economics.horizon_years`` 2 -> 20 in 10 points gave only 3, 4, 6, 8 (clipped to the sourced 3-8)."""
    outcome, summary = run_study(tmp_path, {"sweep": {"param": "economics.horizon_years", "low": 2, "high": 20, "points": 10}})
    contained(outcome)
    assert outcome.code == 0, outcome.stderr
    xs = pd.read_csv(tmp_path / "out" / "sweep.csv")["economics.horizon_years"].tolist()
    assert xs == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0]
    result = summary["results"]["sweep"]
    assert (result["low"], result["high"]) == (2.0, 20.0)
    assert result["outside_sourced_range"] == {"sourced_low": 3.0, "sourced_high": 8.0}
    warnings = [line for line in outcome.stderr.splitlines() if line.startswith("tco: warning:")]
    assert any("analyses.sweep" in w and "sourced range" in w for w in warnings), outcome.stderr
    assert "Traceback" not in outcome.stderr


def test_a_sweep_inside_the_sourced_range_is_not_marked(tmp_path):
    outcome, summary = run_study(tmp_path, {"sweep": {"param": "economics.horizon_years", "points": 6}})
    assert contained(outcome).code == 0, outcome.stderr
    assert "outside_sourced_range" not in summary["results"]["sweep"] and "tco: warning:" not in outcome.stderr
    xs = pd.read_csv(tmp_path / "out" / "sweep.csv")["economics.horizon_years"].tolist()
    assert xs == [3.0, 4.0, 5.0, 6.0, 7.0, 8.0]


def test_a_map_axis_beyond_the_sourced_range_is_marked(tmp_path):
    outcome, summary = run_study(tmp_path, {"map": {"x": {"param": "economics.discount_rate", "low": 0.0, "high": 0.5,
                                                          "points": 5},
                                                    "y": {"param": "workload.requests_per_s", "points": 5}}})
    assert contained(outcome).code == 0, outcome.stderr
    assert summary["results"]["map"]["outside_sourced_range"] == {"x": {"sourced_low": 0.06, "sourced_high": 0.15}}
    assert "analyses.map.x" in outcome.stderr


def test_an_axis_over_a_fixed_parameter_names_its_sourced_value_not_a_range():
    """The kv-transfer-wall study maps links.ib-400g.bandwidth_bytes_per_s, which the catalog fixes at 5e10 B/s
    (low = high): the findings said "beyond the sourced range (50,000,000,000 to 50,000,000,000)"; a range of one
    value is a sourced value."""
    from tco.present.study_findings import sourced_span

    assert sourced_span({"sourced_low": 5e10, "sourced_high": 5e10}) == "the sourced value (50,000,000,000)"
    assert sourced_span({"sourced_low": 500.0, "sourced_high": 8000.0}) == "the sourced range (500 to 8,000)"


# --- item 3: a Sobol sample too small for its estimator ---------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_a_sobol_sample_below_what_the_estimator_needs_is_refused(tmp_path, n):
    """n = 1 reported S1 = 5.24 with a 3e-7 interval and "top drivers ... ST 4.1"."""
    outcome, summary = run_study(tmp_path, {"sobol": {"n": n}})
    refused(outcome, "analyses.sobol.n", "at least 16")
    assert summary is None


def test_the_api_refuses_it_too():
    from tco.foundation.errors import InputError
    from tco.studies import sobol_analysis

    with pytest.raises(InputError, match="at least 16"):
        sobol_analysis(lambda u: u.sum(axis=1), ["a", "b"], 4)


def test_indices_outside_0_1_beyond_their_interval_are_flagged():
    """An index the estimator puts outside [0, 1] by more than its interval has not converged: the findings say so
    instead of reporting it as a driver."""
    from tco.present.study_findings import findings
    from tco.studies.sensitivity import unconverged_indices

    frame = pd.DataFrame({"param": ["a", "b", "c"], "S1": [5.24, 0.3, -0.4], "S1_conf": [3e-7, 0.1, 0.5],
                          "ST": [4.1, 0.35, 0.2], "ST_conf": [0.01, 0.1, 0.1]})
    flagged = unconverged_indices(frame)
    assert [(f["param"], f["index"]) for f in flagged] == [("a", "S1"), ("a", "ST")]
    lines = findings({"results": {"sobol": {"n": 16, "top": frame.to_dict(orient="records"), "unconverged": flagged}}})
    text = " ".join(lines)
    assert "outside [0, 1]" in text and "not converged" in text and "larger n" in text
    assert np.isfinite(frame["S1"]).all()


def test_a_morris_screening_of_one_trajectory_is_refused(tmp_path):
    """One trajectory gave sigma = NaN and mu_star_conf = NaN in morris.csv."""
    outcome, summary = run_study(tmp_path, {"morris": {"trajectories": 1}})
    refused(outcome, "analyses.morris.trajectories", "greater than or equal to 2")
    assert summary is None


@pytest.mark.parametrize("analyses", [
    {"tornado": {"params": ["devices.mi300x.collective_efficiency", "devices.h100-sxm.price_usd"]}},
    {"sobol": {"n": 16, "params": ["devices.mi300x.collective_efficiency", "devices.tpu-v6e.price_usd"]}},
    {"morris": {"trajectories": 3, "params": ["devices.mi300x.collective_efficiency", "devices.tpu-v6e.price_usd"]}},
])
def test_parameters_the_metric_does_not_depend_on_answer_zero_effects(tmp_path, analyses):
    """Found by the study fuzz: when none of the parameters moves the metric the core answers a scalar, and the
    tornado ("too many indices for array"), Sobol and Morris ("cannot reshape array") stopped with an error."""
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump({"name": "s", "question": "q", "scenario": "batch-offline", "metric": "lcot:b200",
                                    "analyses": analyses}))
    outcome = contained(tco("study", str(path), "--out", str(tmp_path / "out"), cwd=tmp_path, timeout=120))
    assert outcome.code == 0, outcome.stderr
    kind = next(iter(analyses))
    frame = pd.read_csv(tmp_path / "out" / f"{kind}.csv")
    effect = {"tornado": "swing", "sobol": "ST", "morris": "mu_star"}[kind]
    numbers = frame.drop(columns=["misses_low", "misses_high"], errors="ignore")  # text: who misses a target (none here)
    assert (frame[effect] == 0).all() and np.isfinite(numbers.select_dtypes("number").to_numpy(float)).all()


def test_a_lognormal_parameter_edited_to_zero_is_refused_for_draws_not_crashed(tmp_path):
    """Found by the study fuzz: ``devices.rubin.sync_latency_s`` edited to 0 (inside its domain) widens its range
    to [0, 5e-6]; the Monte Carlo's lognormal draw then divided by zero inside a chunk ("monte carlo: stopped after 0
    of 1 chunks"). The scenario stays valid (compare runs); its draws are refused by name before anything runs."""
    from tco.foundation.errors import InputError
    from tco.inputs.loading import load_scenario
    from tco.studies import monte_carlo, sobol

    scenario = load_scenario("custom-asic")
    name = next(p.name for p in scenario.params.values_list() if p.distribution == "lognormal" and p.field.minimum == 0
                and p.uncertain)
    edited = scenario.with_values({name: 0.0})
    assert edited.params[name].low == 0.0
    for run in (lambda: monte_carlo(edited, ["ratio"], 100, 1), lambda: sobol(edited, "ratio", 16, 1, [name])):
        with pytest.raises(InputError, match="lognormal"):
            run()
