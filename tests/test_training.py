"""The training branch: step model, goodput, siting, second life, flips and the training scenario."""

from __future__ import annotations

import json

import numpy as np
import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tco
from tco.analysis.flips import flip_conditions
from tco.core.fleet import siting
from tco.core.training import cascade, goodput
from tco.core.training import step as training
from tco.core.training.run import evaluate_training
from tco.foundation.errors import InputError
from tco.inputs.loading import scenario_from_dict
from tco.inputs.parameters import Param, ParamSet
from tco.present.training_comparison import compare_training


@pytest.fixture(scope="module")
def run():
    return tco.load_scenario("training-run")


def test_model_flops_llama_70b_at_8k():
    # 6 x 70.55e9 = 4.2332e11 through the weights; causal attention 6 x 80 layers x 8192 x 8192 = 3.2212e10
    flops = training.model_flops_per_token(70.553706496e9, 80, 8192, 8192)
    assert flops == pytest.approx(6 * 70.553706496e9 + 6 * 80 * 8192 * 8192)
    # a full recomputation adds one forward pass: 2/6 more
    assert training.hardware_flops_per_token(70.553706496e9, 80, 8192, 8192, 1.0) == pytest.approx(flops * 4 / 3)


def test_activation_memory_405b_selective_and_full():
    # Korthikanti et al. 2023: 34 s b h / t per layer; 8192 x 16384 x 34 x 126 / 8 = 71.87 GB
    assert training.activation_bytes_per_device(8192, 1, 16384, 126, 8, 0.0) == pytest.approx(8192 * 16384 * 34 * 126 / 8)
    # full recomputation keeps 2 s b h / t per layer plus one layer rebuilt: (2 x 126 + 34) s h / 8
    assert training.activation_bytes_per_device(8192, 1, 16384, 126, 8, 1.0) == pytest.approx(8192 * 16384 * (2 * 126 + 34) / 8)


def test_model_state_405b_tp8_pp16_dp64():
    # weights + grads 405e9 / 128 x 4 B = 12.66 GB; Adam state 12 x 405e9 / 8192 = 0.593 GB
    state = training.model_state_bytes_per_device(405e9, 0.0, 8, 16, 1, 64, 4.0, 12.0)
    assert state == pytest.approx(405e9 / 128 * 4 + 12 * 405e9 / 8192)


def test_moe_expert_params_mixtral():
    # e = (46.7e9 - 12.88e9) / (8 - 2); all routed experts: 8 e
    assert training.routed_expert_params(46.7e9, 12.88e9, 8, 2) == pytest.approx(8 * (46.7e9 - 12.88e9) / 6)
    assert training.routed_expert_params(70e9, 70e9, 1, 1) == 0.0


def test_collectives_and_bubble():
    assert training.ring_allreduce_bytes_per_device(100.0, 4) == pytest.approx(150.0)  # 2 x 3/4 x 100
    assert training.ring_allreduce_bytes_per_device(100.0, 1) == 0.0
    # 1e9 B at 1e11 B/s + 1 collective x 2 log2(8) x 5 us = 0.01 + 3e-5 s
    assert training.collective_time_s(1e9, 1e11, 5e-6, 8.0) == pytest.approx(0.01 + 6 * 5e-6)
    assert training.pipeline_bubble_fraction(16, 4, 32) == pytest.approx(15 / 128)
    # within an 8-device domain the scale-up link, beyond it the scale-out network
    assert training.link_bandwidth(np.array([8.0, 16.0]), 8.0, 450e9, 50e9).tolist() == [450e9, 50e9]


def test_goodput_llama3_405b():
    """Llama 3: 419 interruptions / (54 d x 16,384 GPUs) = 4.74e-4 per device-day, M = 11,130 s; a 405B checkpoint
    at 14 B/param over 2 TB/s blocks 2.835 s; tau = sqrt(2 x 2.835 x M) = 251 s; restart 600 s:
    goodput = (1 - (600 + 125.6) / 11130) / (1 + 2.835 / 251) = 0.924 (published: above 90 %)."""
    rate = 419 / (54 * 16384)
    mtbi = goodput.mean_time_between_interruptions_s(rate, 16384)
    assert mtbi == pytest.approx(86400 * 54 / 419)
    delta = goodput.checkpoint_write_s(405e9, 14.0, 2e12)
    assert delta == pytest.approx(2.835)
    tau = np.sqrt(2 * delta * mtbi)
    expected = (1 - (600 + tau / 2) / mtbi) / (1 + delta / tau)
    assert goodput.goodput_fraction(mtbi, 600.0, delta) == pytest.approx(expected)
    assert 0.92 < expected < 0.93
    assert goodput.goodput_fraction(100.0, 600.0, 2.0) == 0.0  # restarts outlast the time between failures


@settings(max_examples=40, deadline=None)
@given(rate=st.floats(1e-5, 1e-2), devices=st.floats(8, 1e5), restart=st.floats(0, 3600), delta=st.floats(0.1, 600))
def test_goodput_falls_with_failure_rate(rate, devices, restart, delta):
    g1 = goodput.goodput_fraction(goodput.mean_time_between_interruptions_s(rate, devices), restart, delta)
    g2 = goodput.goodput_fraction(goodput.mean_time_between_interruptions_s(rate * 2, devices), restart, delta)
    assert 0.0 <= g2 <= g1 <= 1.0


def test_built_facility_rate():
    # $11.7/W = $11,700/kW over 15 years at 9 %: annuity 8.0607 -> 11,700 / 8.0607 / 12 = 120.96 USD/kW-month
    annuity = (1 - 1.09 ** -15) / 0.09
    assert siting.built_facility_usd_per_kw_month(11.7, 15, 0.09) == pytest.approx(11700 / annuity / 12)


def test_combined_versus_split_sites():
    # two sites: training cheaper at site 1; serving only feasible at site 0 -> combined must use site 0
    combined, split, c_site, t_site, s_site = siting.combined_and_split_usd([10.0, 6.0], [3.0, 2.0], [True, False])
    assert (combined, split, c_site, t_site, s_site) == (13.0, 9.0, 0, 1, 0)
    combined, split, *_ = siting.combined_and_split_usd([10.0, 6.0], [3.0, 2.0], [True, True])
    assert combined == split == 8.0
    assert siting.user_ttft_s(0.2, 0.05) == pytest.approx(0.25)
    assert siting.egress_usd_per_mtok(4.0, 0.09) == pytest.approx(4e6 / 1e9 * 0.09)


def test_cascade_value_and_choice():
    # r = 0: 2 years x (1e10 tokens x $1/M - $2,000) + end value $1,000 = 2 x 8,000 + 1,000 = 17,000
    assert cascade.cascade_value_usd(1e10, 1.0, 2000.0, 2.0, 0.0, 1000.0) == pytest.approx(17000.0)
    assert cascade.market_value_fraction(3.0, 5.0, 0.1) == pytest.approx(1 - 0.9 * 3 / 5)
    choice, premium = cascade.second_life_choice(np.array([17000.0, 5000.0]), 8000.0)
    assert choice.tolist() == [0.0, 1.0] and premium.tolist() == [9000.0, -3000.0]


def test_flip_conditions_on_a_known_gap():
    # gap = x - 3 over [0, 10]: the winner (gap < 0) loses above x = 3; y never flips
    params = ParamSet([Param("a.x", 1.0, "USD", 0.0, 10.0, "uniform"), Param("a.y", 1.0, "USD", 0.0, 2.0, "uniform")])
    flips = flip_conditions(params, lambda u: np.asarray(u.get("a.x", 1.0)) - 3.0 + 0.0 * np.asarray(u.get("a.y", 1.0)),
                            tolerance=1e-12)
    assert len(flips) == 1 and flips[0]["name"] == "a.x" and flips[0]["direction"] == "above"
    assert flips[0]["value"] == pytest.approx(3.0, abs=1e-9)


def test_training_run_scenario_outputs_add_up(run):
    results = evaluate_training(run.structure, run.values())
    v = run.values()
    for name, r in results.items():
        assert r.feasible == 1.0, name
        parts = r.capex_usd + r.energy_usd + r.facility_usd + r.maintenance_usd
        assert r.cost_per_run_usd == pytest.approx(parts)
        assert r.time_to_train_s == pytest.approx(v["training.tokens"] / (r.tokens_per_s * r.goodput))
        assert 0.2 < r.mfu < 0.7, name
        assert r.memory_bytes_per_device <= v[f"devices.{run.structure.option(name).device}.memory.hbm.capacity_bytes"]


#: a unit of the training output tables and the word a field name in it carries
UNIT_IN_NAME = {"s": "_s", "d": "_days", "USD": "usd", "USD/Mtok": "usd_per_mtok", "USD/yr": "usd_per_year", "W": "_w",
                "B": "bytes", "MWh": "mwh", "yr": "years"}


def test_training_results_are_typed_with_units(run):
    """Every output of a training option, a challenger and a retired device is a field of its dataclass with a row of
    the output table (unit, meaning, label), its unit in its name where it has one; the JSON shows exactly those
    outputs; the few other fields of a training result are terms of the chosen shape (which the workbook checks),
    and every field of a result broadcasts to one shape."""
    from dataclasses import fields

    from tco.core.training.results import (
        SECOND_LIFE_OUTPUTS,
        TRAINING_COMPARISON_OUTPUTS,
        TRAINING_OUTPUTS,
        SecondLife,
        TrainingChallenger,
        TrainingResult,
    )

    for cls, table in ((TrainingResult, TRAINING_OUTPUTS), (TrainingChallenger, TRAINING_COMPARISON_OUTPUTS),
                       (SecondLife, SECOND_LIFE_OUTPUTS)):
        assert table and set(table) <= {f.name for f in fields(cls)}, cls
        for spec in table.values():
            assert spec.unit and spec.meaning and spec.label, (cls, spec.name)
            assert UNIT_IN_NAME.get(spec.unit, "") in spec.name, (cls, spec.name, spec.unit)
    assert set(TRAINING_COMPARISON_OUTPUTS) == {f.name for f in fields(TrainingChallenger)}
    assert set(SECOND_LIFE_OUTPUTS) == {f.name for f in fields(SecondLife)}
    assert {f.name for f in fields(TrainingResult)} - set(TRAINING_OUTPUTS) < {f.name for f in fields(training.ChosenShape)}
    draws = {"devices.h100-sxm.price_usd": np.array([20e3, 30e3])}
    results = evaluate_training(run.structure, run.values() | draws)
    for name, r in results.items():
        assert list(r.flat()) == list(TRAINING_OUTPUTS)
        assert {np.shape(getattr(r, f.name)) for f in fields(r)} == {(2,) if name == "h100" else ()}, name
    data = compare_training(run, with_flips=False).to_dict()
    for option in data["options"]:
        assert set(option) == {"name", "placement", "shape", *TRAINING_OUTPUTS}, option["name"]
    for name, challenger in data["comparison"].items():
        assert set(challenger) == set(TRAINING_COMPARISON_OUTPUTS), name
    for device, life in data["second_life"]["devices"].items():
        assert set(life) == set(SECOND_LIFE_OUTPUTS) - {"choice"} | {"scrap_usd", "best"}, device


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_a_run_that_never_ends_costs_infinity_without_a_nan(run):
    """Three draws: the scenario as is, a restart of 1e9 s (longer than the time between interruptions, so goodput
    is 0) and 1 byte of HBM (no parallel shape fits, so the step is infinite and 0 tokens/s), all at a free
    electricity price (the energy line's rate is 0). The last two runs never end: time, every cost line (the free
    energy too: 0 x infinity was NaN), the cost per run and the energy are infinite, 0 tokens per joule, infeasible,
    and no divide-by-zero or invalid-value warning on the way (warnings are errors here)."""
    draws = {"training.restart_s": np.array([run.values()["training.restart_s"], 1e9, run.values()["training.restart_s"]]),
             "devices.h100-sxm.memory.hbm.capacity_bytes":
                 np.array([run.values()["devices.h100-sxm.memory.hbm.capacity_bytes"]] * 2 + [1.0]),
             "economics.electricity_usd_per_kwh": 0.0, "sites.metro.electricity_usd_per_kwh": 0.0,
             "sites.remote.electricity_usd_per_kwh": 0.0}
    r = evaluate_training(run.structure, run.values() | draws)["h100"]
    assert r.feasible.tolist() == [1.0, 0.0, 0.0] and r.goodput[1] == 0.0 and r.tokens_per_s[2] == 0.0
    assert np.isfinite(r.time_to_train_s[0]) and r.energy_usd[0] == 0.0
    for key in ("time_to_train_s", "time_to_train_days", "capex_usd", "energy_usd", "facility_usd", "maintenance_usd",
                "cost_per_run_usd", "usd_per_mtok_trained", "energy_mwh"):
        assert np.isposinf(r.flat()[key][1:]).all(), key
    assert r.tokens_per_joule[1:].tolist() == [0.0, 0.0]


def test_training_evaluation_is_vectorized(run):
    """Five draws at once equal five scalar evaluations."""
    draws = {"devices.h100-sxm.price_usd": np.array([20e3, 25e3, 27.5e3, 30e3, 35e3]),
             "training.failure_rate_per_device_day": np.array([1e-4, 3e-4, 4.74e-4, 1e-3, 3e-3])}
    values = run.values() | draws
    batch = evaluate_training(run.structure, values)["h100"]
    for i in range(5):
        one = evaluate_training(run.structure, run.values() | {k: v[i] for k, v in draws.items()})["h100"]
        assert batch.cost_per_run_usd[i] == pytest.approx(float(one.cost_per_run_usd))
        assert batch.time_to_train_s[i] == pytest.approx(float(one.time_to_train_s))


@pytest.mark.slow
def test_compare_training_verdict_and_flips(run):
    result = compare_training(run)
    cheapest = result.options[result.options["feasible"]]["cost_per_run_usd"].idxmin()
    assert result.verdict.startswith(f"{cheapest} trains cheapest")
    assert result.flips and all(f["low"] <= f["value"] <= f["high"] for f in result.flips)
    data = result.to_dict()
    assert data["scenario"]["kind"] == "training"
    assert {o["name"] for o in data["options"]} == {"h100", "b200", "tpu-v6e", "mi300x"}
    assert data["siting"]["combined_usd_per_year"] >= data["siting"]["split_usd_per_year"]
    assert set(data["second_life"]["devices"]) == {"h100-sxm", "b200", "tpu-v6e", "mi300x"}


@pytest.mark.slow
def test_flip_is_a_real_flip(run):
    """Moving the nearest flip parameter just past its flip value changes the cheapest option."""
    result = compare_training(run)
    flip = result.flips[0]
    step = 1e-3 * (flip["high"] - flip["low"])
    past = flip["value"] + (step if flip["direction"] == "above" else -step)
    moved = compare_training(run.with_values({flip["name"]: past}), with_flips=False)
    feasible = moved.options[moved.options["feasible"]]
    assert feasible["cost_per_run_usd"].idxmin() != result.options["cost_per_run_usd"].idxmin()


def test_inference_only_device_cannot_train(run):
    data = run.to_dict()
    data["options"] = [{"name": "groq", "device": "groq-lpu", "cluster_devices": 576}]
    data["baseline"] = "groq"
    with pytest.raises(InputError) as err:
        scenario_from_dict(data)
    assert err.value.errors[0].path == "options[0].device" and "cannot train" in err.value.errors[0].rule


def test_unknown_site_is_named(run):
    data = run.to_dict() | {"site": "moon"}
    with pytest.raises(InputError) as err:
        scenario_from_dict(data)
    assert err.value.errors[0].path == "site"


@pytest.fixture(scope="module")
def training_suite():
    from tco.analysis.validation.training import load_training_suite

    return load_training_suite()


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_training_validation_cases_within_tolerance(training_suite):
    """Every training case, fitted and out of sample, is within its tolerance at the catalog's
    (calibrated) values; the throughput cases' tolerance is +-20 %."""
    from tco.analysis.validation.training import run_training_suite

    results = run_training_suite(training_suite)
    bad = [(r.case.name, round(r.rel_error, 3)) for r in results if not r.within_tolerance]
    assert not bad
    assert any(r.case.out_of_sample for r in results) and any(r.case.fit for r in results)
    assert all(r.case.tolerance.high <= 0.2 and r.case.tolerance.low >= -0.2 for r in results)


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_catalog_training_efficiencies_are_the_fit(training_suite):
    """assumptions/training.yaml holds the calibrated value of each fitted class (to 1 %)."""
    from tco.analysis.validation.training import calibrate_training
    from tco.inputs.catalog import load_catalog

    classes = load_catalog().training["classes"]
    for fit in calibrate_training(training_suite):
        assert classes[fit.device_class]["training_compute_efficiency"]["value"] == pytest.approx(fit.value[0], rel=0.01)
        assert fit.rms_log_error(after=True) <= fit.rms_log_error(after=False)


def test_cascade_under_uncertainty_study(run):
    """The bundled cascade study runs on the training scenario; its draws agree with the base-value decision's sign
    for the device whose premium is far from zero, and probabilities add up to one."""
    from tco.analysis.training import second_life
    from tco.studies.cascade import cascade_under_uncertainty
    from tco.studies.spec import load_study

    study, scenario = load_study("cascade-value")
    assert scenario.name == "training-run" and study.analyses.cascade is not None
    frame = cascade_under_uncertainty(run, 400, 7)
    assert np.allclose(frame[["p_cascade_best", "p_sell_best", "p_scrap_best"]].sum(axis=1), 1.0)
    base = second_life(run, run.values())["devices"]
    strongest = max(base, key=lambda d: abs(base[d]["cascade_premium_usd"]))
    assert (frame.loc[strongest, "premium_p50_usd"] > 0) == (base[strongest]["cascade_premium_usd"] > 0)
    row = frame.loc[strongest]
    assert row["premium_p5_usd"] <= row["premium_p50_usd"] <= row["premium_p95_usd"]


def test_inference_analyses_refuse_a_training_scenario():
    from tco.studies.spec import check_study, parse_study

    study = parse_study({"name": "x", "question": "q", "analyses": {"tornado": {}}})
    with pytest.raises(InputError) as err:
        check_study(study, tco.load_scenario("training-run"))
    assert err.value.errors[0].path == "analyses.tornado"


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_cli_validate_and_calibrate_training(capsys):
    from tco.cli import main

    assert main(["validate", "--training"]) == 0
    out = capsys.readouterr().out
    assert "out of sample:" in out and "bridge-gb200x64-llama3-70b-fp8" in out and " NO " not in out
    assert main(["calibrate", "--training", "--format", "json"]) == 0
    assert '"class": "hopper"' in capsys.readouterr().out
    assert main(["calibrate", "--training", "--cases", "x.csv"]) == 2


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_cli_compare_training_run(capsys):
    from tco.cli import main

    assert main(["compare", "training-run"]) == 0
    out = capsys.readouterr().out
    assert "cost per run, M USD" in out and "trains cheapest" in out and "second life" in out and "combined facility" in out
    assert main(["compare", "training-run", "--set", "options.h100.cluster_devices=0"]) == 2


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_app_views_on_a_training_scenario(run):
    """Compare, Lifecycle and Fleet show the training objective (time to train, cost per run) instead of failing."""
    from tco_app.fleet_views import kv_view, tree_view
    from tco_app.pages.compare import compare_view
    from tco_app.pages.sensitivity import breakeven_view, metric_options
    from tco_app.state import scenario_choices
    from tco_app.training_views import training_lifecycle_view

    assert "training-run" in scenario_choices()
    title, _question, verdict, table, details, cost_fig, time_fig = compare_view(run)
    assert title == run.title and "trains cheapest" in verdict and "options-table" in str(table)
    assert "siting-table" in str(details) and "flip-list" in str(details)
    assert "cost per training run" in cost_fig.layout.meta["title"].lower()  # shown above the chart
    assert "time to train" in time_fig.layout.meta["title"].lower()
    assert "cost per run, M USD" in str(table)
    life, run_fig, second_fig = training_lifecycle_view(run)
    assert "second-life-table" in str(life) and len(run_fig.data) == 4 and len(second_fig.data) == 2
    notice, tree_table = tree_view(run)
    assert notice is None and "training" in str(tree_table)
    assert kv_view(run, None)[0] is None  # runs on the serving scenario (default has a split option)
    assert metric_options(run) == []
    with pytest.raises(InputError):
        breakeven_view(run, "training.tokens", "lcot", 1e13, 2e13)


def test_training_workbook_formulas_are_live_and_allowed(run):
    from openpyxl.formula.tokenizer import Tokenizer

    from tco.export import build_workbook
    from tco.export.formulas import ALLOWED_FUNCTIONS

    wb = build_workbook(run)
    assert wb.sheetnames == ["Summary", "Cover", "Inputs", "Model", "Check", "Scenario"]
    used, count = set(), 0
    for ws in wb:
        for row in ws.iter_rows():
            for cell in row:
                if cell.data_type == "f":
                    count += 1
                    used |= {t.value.rstrip("(").upper() for t in Tokenizer(cell.value).items
                             if t.type == "FUNC" and t.subtype == "OPEN"}
    assert count > 300 and used <= ALLOWED_FUNCTIONS, used - ALLOWED_FUNCTIONS


@pytest.mark.libreoffice
def test_training_workbook_agrees_with_the_python_model(run, tmp_path):
    """LibreOffice recalculates every training quantity to within 1e-9 of the Python model; every output is covered."""
    from workbook_helpers import agrees, check_rows, error_cells, recalculate

    from tco.export import write_workbook
    from tco.export.training_sheet import training_model_values

    path = write_workbook(run, tmp_path / "training.xlsx")
    converted = recalculate(path, tmp_path)
    assert error_cells(converted) == []
    rows = check_rows(converted)
    expected = training_model_values(run)
    covered = {(option, key) for option, key, *_ in rows}
    assert not {(o, k) for o, values in expected.items() for k in values} - covered
    bad = [row for row in rows if not agrees(row[2], row[3])]
    assert not bad, bad[:10]
    # issue 49 item 7: a Summary first, per cluster, each figure a live reference recalculated like the Python model
    book = openpyxl.load_workbook(path)
    assert book.sheetnames[0] == "Summary" and book["Summary"].freeze_panes == "C4" and book["Summary"].print_area
    assert book["Summary"]["C4"].value.startswith("='Model'!") and book["Summary"]["C4"].number_format == '"$"#,##0'
    summary = {row[0]: [x if x == "baseline" else float(x) for x in row[2:] if x not in ("yes", "")]
               for row in converted.rows("Summary")[3:]}
    names = [o.name for o in run.structure.options]
    for j, name in enumerate(names):
        r = expected[name]
        assert agrees(r["cost_per_run_usd"], summary["cost per training run"][j])
        assert agrees(r["time_to_train_s"] / 86400, summary["time to train"][j])
        opex = r["energy_usd"] + r["facility_usd"] + r["maintenance_usd"]
        assert agrees(opex, summary["operating costs over the run (energy, facility, maintenance)"][j])
        # the yearly opex is the run's over its share of a 8,760-hour year
        per_year = summary["operating cost per year of the cluster (energy, facility, maintenance)"][j]
        assert agrees(opex / (r["time_to_train_s"] / (8760 * 3600)), per_year)
        assert agrees(r["cost_per_run_usd"] - r["capex_usd"], opex)
    assert summary["cost per run over the baseline h100"][0] == "baseline"


def test_training_workbook_imports_back(run, tmp_path, capsys):
    from tco.cli import main

    book, back = tmp_path / "t.xlsx", tmp_path / "t.yaml"
    assert main(["export", "training-run", "--xlsx", str(book)]) == 0
    assert main(["import", str(book), "--out", str(back)]) == 0
    assert tco.load_scenario(back).values() == run.values()


def test_breakeven_on_a_training_scenario_is_a_cost_per_run_crossing(run):
    """Where the TPU's price makes its run cost what the H100 run costs: at that price the two costs agree."""
    from tco.analysis.breakeven import breakeven

    [result] = breakeven(run, "devices.tpu-v6e.price_usd", 5000.0, 200000.0, option="tpu-v6e")
    assert result.status == "crosses" and result.wins_above is False
    tied = evaluate_training(run.structure, run.values() | {"devices.tpu-v6e.price_usd": result.value})
    assert tied["tpu-v6e"].cost_per_run_usd == pytest.approx(float(tied["h100"].cost_per_run_usd), rel=1e-6)


def test_fleet_analyses_on_a_training_scenario_use_its_serving_fleet(capsys):
    from tco.cli import main

    assert main(["fleet", "tree", "training-run", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["scenario"] == "default" and payload["winners"][0]["leaf"] == "training"
