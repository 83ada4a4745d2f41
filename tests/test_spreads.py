"""A user's choice of an input's Monte Carlo distribution and range (issue 51 item 5): ``uncertainty:`` in a scenario
file, :meth:`Scenario.with_spreads` in the API, the Uncertainty view in the app; one validation for all three."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from tco_app.context import AppContext
from tco_app.pages.uncertainty import monte_carlo_view, spreads_update
from tco_app.state import scenario_choices

import tco
from tco import studies
from tco.cli import main
from tco.inputs.loading import scenario_from_dict
from tco.studies.sampling import inverse_cdf

RATE = "workload.requests_per_s"  # the default's lognormal 30-300 req/s around 100
STATE = {"scenario": "default", "upload": None, "set": {}, "options": []}


@pytest.fixture(scope="module")
def default():
    return tco.load_scenario("default")


def test_a_uniform_distribution_draws_flat_on_the_range_given(default):
    """Uniform on [50, 200] (low given as text, high the input's own 300 replaced): the inverse CDF is
    ``low + u (high - low)``, so u = 0, 0.25, 0.5, 1 give 50, 87.5, 125, 200 req/s."""
    assert default.params[RATE].distribution == "lognormal"
    param = default.with_spreads({RATE: {"distribution": "uniform", "low": "50", "high": 200}}).params[RATE]
    assert (param.distribution, param.low, param.high, param.value) == ("uniform", 50.0, 200.0, 100.0)
    assert np.allclose(inverse_cdf(param, np.array([0.0, 0.25, 0.5, 1.0])), [50.0, 87.5, 125.0, 200.0])


def test_a_range_alone_keeps_the_distribution_and_an_input_without_one_is_drawn_triangular(default):
    """Only low given: the default's rate stays lognormal, on [60, 300]. An input with no range (low == high, so
    'fixed') given one is drawn triangular, as a file's quantity with a range is (parameters.param_from_quantity)."""
    assert default.with_spreads({RATE: {"low": 60}}).params[RATE].distribution == "lognormal"
    fixed = next(p for p in default.params.values_list() if not p.uncertain and p.value > 0)
    drawn = default.with_spreads({fixed.name: {"low": fixed.value / 2, "high": fixed.value * 2}}).params[fixed.name]
    assert (drawn.distribution, drawn.low, drawn.high) == ("triangular", fixed.value / 2, fixed.value * 2)


@pytest.mark.parametrize(("spreads", "path", "rule"), [
    ({"workload.nope": {"low": 1}}, "uncertainty.workload.nope", "is not a parameter"),
    ({RATE: {"distribution": "beta"}}, f"uncertainty.{RATE}.distribution", "must be one of fixed, uniform"),
    ({RATE: {"low": 200}}, f"uncertainty.{RATE}", "must hold the base value 100"),
    ({RATE: {"colour": "red"}}, f"uncertainty.{RATE}", "must map some of distribution, low, high"),
    ({RATE: "uniform"}, f"uncertainty.{RATE}", "must map some of distribution, low, high"),
    ({RATE: {"low": 0}}, f"uncertainty.{RATE}.low", "must be a number in"),  # the field's own domain
    ({RATE: {"low": 100, "high": 100, "distribution": "uniform"}}, f"uncertainty.{RATE}", "needs low < high"),
    ({"economics.discount_rate": {"low": "0%", "distribution": "lognormal"}}, "uncertainty.economics.discount_rate",
     "needs low > 0"),
])
def test_a_broken_rule_is_named_by_its_path_and_nothing_is_applied(default, spreads, path, rule):
    with pytest.raises(tco.InputError) as caught:
        default.with_spreads(spreads)
    assert [(e.path, rule in e.rule) for e in caught.value.errors] == [(path, True)]


def test_every_broken_rule_is_named_at_once(default):
    with pytest.raises(tco.InputError) as caught:
        default.with_spreads({RATE: {"distribution": "beta"}, "workload.nope": {"low": 1}})
    assert sorted(e.path for e in caught.value.errors) == ["uncertainty.workload.nope", f"uncertainty.{RATE}.distribution"]


def test_the_file_written_back_reads_the_same_distributions(default, tmp_path):
    """``to_yaml`` keeps the choice under ``uncertainty:`` (resolved: 9% is written 0.09), and loading that file gives
    the same parameters; a file's ``uncertainty:`` is read by the same rules (a broken one named by its path)."""
    edited = default.with_spreads({RATE: {"distribution": "normal", "low": 80}, "economics.discount_rate": {"low": "6%"}})
    data = yaml.safe_load(edited.to_yaml())
    assert data["uncertainty"] == {RATE: {"distribution": "normal", "low": 80.0, "high": 300.0},
                                   "economics.discount_rate": {"distribution": edited.params["economics.discount_rate"]
                                                               .distribution, "low": 0.06,
                                                               "high": edited.params["economics.discount_rate"].high}}
    again = scenario_from_dict(data)
    assert again.params[RATE] == edited.params[RATE]
    assert again.params["economics.discount_rate"] == edited.params["economics.discount_rate"]
    with pytest.raises(tco.InputError) as caught:
        scenario_from_dict({**data, "uncertainty": {RATE: {"low": 500}}})
    assert [e.path for e in caught.value.errors] == [f"uncertainty.{RATE}"]


def test_a_training_scenario_takes_the_same_choice():
    scenario = tco.load_scenario(tco.inputs.loading.bundled_scenarios("training")[0])
    name = scenario.params.uncertain()[0].name
    assert scenario.with_spreads({name: {"distribution": "uniform"}}).params[name].distribution == "uniform"
    data = scenario.with_spreads({name: {"distribution": "uniform"}}).to_dict()
    assert data["uncertainty"][name]["distribution"] == "uniform"
    assert scenario_from_dict(data).params[name].distribution == "uniform"


def test_every_input_fixed_leaves_no_spread_and_a_narrower_range_a_narrower_one(default):
    """Every drawn input set to 'fixed': each of 400 draws is the base scenario, so P10 = P50 = P90 (the metric at the
    base values). Then only the request rate drawn, uniform on [95, 105] against its own lognormal on [30, 300]: the
    P10-P90 spread of the cost ratio is narrower (not wider) with the narrower range."""
    fixed = {p.name: {"distribution": "fixed"} for p in default.params.uncertain()}
    still = studies.monte_carlo(default.with_spreads(fixed), ["ratio:groq"], 400, seed=3).summary.iloc[0]
    assert still["p10"] == still["p50"] == still["p90"] and still["n"] == 400
    only_rate = {**fixed, RATE: {"distribution": "lognormal"}}
    wide = studies.monte_carlo(default.with_spreads(only_rate), ["ratio:groq"], 400, seed=3).summary.iloc[0]
    narrow = studies.monte_carlo(default.with_spreads({**only_rate, RATE: {"distribution": "uniform", "low": 95,
                                                                            "high": 105}}),
                                 ["ratio:groq"], 400, seed=3).summary.iloc[0]
    assert wide["p90"] - wide["p10"] > narrow["p90"] - narrow["p10"] > 0


def test_the_uncertainty_view_keeps_a_valid_choice_and_names_a_refused_one():
    """The view's Set button: a valid choice is kept in the browser's store and shown; a refused one is named and the
    store keeps what it had; the run draws what the store holds, the same numbers as the API (same seed)."""
    ctx = AppContext(scenario_choices(), "default")
    chosen, shown = spreads_update(ctx, STATE, {}, RATE, "uniform", "50", "")
    assert chosen == {RATE: {"distribution": "uniform", "low": "50"}}
    assert "mc-spreads-table" in str(shown) and "uniform" in str(shown)
    kept, message = spreads_update(ctx, STATE, chosen, RATE, "uniform", "500", "")
    assert kept is not None and type(kept).__name__ == "NoUpdate"
    assert "must hold the base value 100" in str(message)
    _figure, _exceedance, table = monte_carlo_view(ctx, STATE, "ratio:groq", 300, 5, spreads=chosen)
    api = studies.monte_carlo(tco.load_scenario("default").with_spreads(chosen), ["ratio:groq"], 300, 5).summary.iloc[0]
    shown_row = next(c for c in table.children if getattr(c, "data", None)).data["rows"][0]
    assert shown_row[1] == tco.foundation.formatting.sig(api["p50"], 4)
    crafted = monte_carlo_view(ctx, STATE, "ratio:groq", 300, 5, spreads={RATE: {"low": "lots"}})[2]
    assert f"uncertainty.{RATE}.low" in str(crafted)


def test_the_study_command_draws_what_spread_says(tmp_path, capsys):
    """``tco study --spread``: the same draws as the API on the scenario with that choice (same seed, every digit of
    the Monte Carlo summary), the choice written into the study's resolved scenario; a malformed flag or a refused
    value is named by the flag, exit 2, nothing written."""
    study = {"name": "mc", "question": "How often does Groq win?", "scenario": "default", "metric": "ratio:groq",
             "seed": 7, "analyses": {"monte_carlo": {"samples": 600}}}
    (tmp_path / "study.yaml").write_text(yaml.safe_dump(study))
    out = tmp_path / "out"
    assert main(["study", str(tmp_path / "study.yaml"), "--spread", f"{RATE}=uniform,low:50", "--out", str(out)]) == 0
    cli = pd.read_csv(out / "montecarlo_summary.csv")
    chosen = tco.load_scenario("default").with_spreads({RATE: {"distribution": "uniform", "low": "50"}})
    api = studies.monte_carlo(chosen, ["ratio:groq"], 600, 7).summary
    numbers = api.select_dtypes("number").columns
    assert np.array_equal(api[numbers].to_numpy(float), cli[numbers].to_numpy(float), equal_nan=True)
    resolved = yaml.safe_load((out / "summary.json").read_text())["scenario"]["uncertainty"]
    assert resolved == {RATE: {"distribution": "uniform", "low": 50.0, "high": 300.0}}
    capsys.readouterr()
    for flag, named in ((f"{RATE}=beta", f"--spread {RATE}.distribution: got 'beta'"),
                        (RATE, f"--spread: got '{RATE}'; must look like NAME=DISTRIBUTION,low:X,high:Y"),
                        (f"{RATE}=low:1,low:2", "each once")):
        assert main(["study", str(tmp_path / "study.yaml"), "--spread", flag, "--out", str(tmp_path / "no")]) == 2
        assert named in capsys.readouterr().err
        assert not (tmp_path / "no").exists()
