"""The README's figures are the model's: its example outputs are what the commands print, and each number its prose
quotes for the bundled scenarios (and docs/model.md's GPU/GPU split, docs/studies.md's study example,
docs/fleet-dynamics.md's quarter of fleet-split) is recomputed
here and looked up, formatted as the prose writes it.

A recalibration or a model change that moves a quoted figure fails here until the README says the new one (before
this test the dvd-effect figures and the half-life-vs-volume example of docs/studies.md had drifted by up to 2.3
years and 2 % of the map)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from what_ifs import ASIC_CAN_WIN

import tco
from tco.cli import main
from tco.inputs.loading import scenario_from_dict

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def folded(text: str) -> str:
    """``text`` with its line breaks and runs of spaces folded, so a quoted phrase is found whatever the wrapping."""
    return re.sub(r"\s+", " ", text)


def doc(name: str) -> str:
    """docs/``name``, folded."""
    return folded((ROOT / "docs" / name).read_text())


PROSE = folded(README)


def block_after(marker: str) -> str:
    """The first fenced block after ``marker`` in the README, without its fences."""
    start = README.index("```", README.index(marker))
    body = README.index("\n", start) + 1
    return README[body:README.index("```", body)]


def block_holding(text: str) -> str:
    """The fenced block of the README in which ``text`` stands, without its fences."""
    at = README.index(text)
    body = README.index("\n", README.rindex("```", 0, at)) + 1
    return README[body:README.index("```", at)]


def printed(capsys, *argv) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def normalized(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def quoted(phrase: str) -> None:
    assert phrase in PROSE, f"README does not say {phrase!r}"


def test_the_compare_example_is_what_tco_compare_prints(capsys):
    assert normalized(block_after("Example (`tco compare`, default scenario")) == normalized(printed(capsys, "compare"))


def test_the_breakeven_example_is_what_tco_breakeven_prints(capsys):
    argv = ["breakeven", "--param", "workload.tpot_target_s", "--range", "0.003", "0.05", "--option", "groq"]
    quoted(" ".join(["tco", *argv]))
    assert normalized(block_after("Every crossing in a range")) == normalized(printed(capsys, *argv))


@pytest.mark.slow
def test_the_training_example_is_an_excerpt_of_what_tco_compare_prints(capsys):
    """The README shows the training comparison's table and verdict, leaving out the ratios, sites and second life
    between them: each of its lines is a line of the output, in order."""
    shown = normalized(block_holding("Pre-train Llama 3.1 70B on 15T tokens"))
    output = iter(normalized(printed(capsys, "compare", "training-run")))
    missing = [line for line in shown if not any(line == out for out in output)]
    assert not missing, f"README lines not in the output (in order): {missing}"


def _costs(result):
    return result, result.options["lcot_usd_per_mtok"], result.challengers["cost_ratio"]


@pytest.mark.slow
def test_the_bundled_scenarios_figures(compared):
    """"What it says on the bundled scenarios": costs per million output tokens (2 decimals), ratios to the baseline
    (1 decimal), fleet sizes."""
    result, lcot, ratio = _costs(compared("default"))
    devices = result.options["devices"]
    quoted(f"${lcot['h100']:.2f}/M output tokens on {devices['h100']:,.0f} GPUs in {result.options.loc['h100', 'shape']} "
           "replicas")
    quoted(f"Groq LPUs cost {ratio['groq']:.1f}x as much ({devices['groq']:,.0f} chips")
    quoted(f"H100 prefill + LPU decode {ratio['h100-prefill+groq-decode']:.1f}x")
    result, lcot, ratio = _costs(compared("voice-agent"))
    quoted(f"H100 costs ${lcot['h100']:.2f}/M on {result.options.loc['h100', 'shape']}, Cerebras {ratio['cerebras']:.1f}x, "
           f"H100 + LPU {ratio['h100-prefill+groq-decode']:.1f}x, Groq {ratio['groq']:.1f}x")
    _, lcot, _ = _costs(compared("fleet-split"))
    quoted(f"(${lcot['h100-prefill+asic-decode']:.2f}/M against the decode ASIC colocated's ${lcot['asic']:.2f} and "
           f"all-H100's ${lcot['h100']:.2f};")


def test_the_options_builder_figures():
    from tco.analysis.evaluation import evaluate_scenario
    from tco.inputs.option_edits import edited_scenario, option_edit

    results, _ = evaluate_scenario(edited_scenario(tco.load_scenario("voice-agent"), [option_edit("add:b200=colocated:b200")]))
    quoted(f"B200 is cheapest at ${float(results['b200'].lcot_usd_per_mtok):.2f} per million output tokens against H100's "
           f"${float(results['h100'].lcot_usd_per_mtok):.2f}")
    assert min(results, key=lambda name: float(results[name].lcot_usd_per_mtok)) == "b200"


def test_the_fleet_split_figures_with_the_catalog_roadmap():
    data = tco.load_scenario("fleet-split").to_dict()
    data["roadmap"] = {"policy": "at_replacement"}
    ratio = tco.compare(scenario_from_dict(data)).challengers["cost_ratio"]
    quoted(f"the ASIC costs {ratio['asic']:.2f}x it, the split {ratio['h100-prefill+asic-decode']:.2f}x")


@pytest.mark.slow  # over a second of CPU (measured 2026-12-06): make test only
def test_the_specialization_over_time_figures():
    """"Specialization over time": custom-asic at base values, with a million units sold and a 6-year half-life (at the
    catalog's base and high share of peak FLOP/s), and where it can win (tests/what_ifs.py ASIC_CAN_WIN: the high share
    and Rubin past the horizon; the break-even sales, the vendor's price at that volume, the demand)."""
    scenario = tco.load_scenario("custom-asic")
    result = tco.compare(scenario)
    quoted(f"buys {result.program['asic']['fleet_units']:,.0f} units over the five years")
    quoted(f"it costs {result.challengers.loc['asic', 'cost_ratio']:.2f}x and loses at any volume")
    sold = {"program.external_units": 1e6, "workload.half_life_years": 6.0}
    ratio = tco.compare(scenario.with_values(sold)).challengers.loc["asic", "cost_ratio"]
    best = tco.compare(scenario.with_values({**sold, "devices.custom-decode-asic.compute_efficiency": 0.75}))
    quoted(f"leave it at {ratio:.3f}x ({best.challengers.loc['asic', 'cost_ratio']:.3f}x at the catalog's high")
    high = {**ASIC_CAN_WIN, "workload.half_life_years": 6.0}
    program = tco.compare(scenario.with_values(high)).program["asic"]
    units = program["breakeven_external_units"]
    price = tco.compare(scenario.with_values({**high, "program.external_units": units})).program["asic"]["vendor_unit_price_usd"]
    quoted(f"once {units:,.0f} units are sold to others (about ${units * price / 1e9:.2f}B at the ${price:,.0f} a vendor "
           "would charge")
    quoted(f"once demand reaches {program['breakeven_demand_rps']:,.0f} req/s")
    three = tco.compare(scenario.with_values(ASIC_CAN_WIN)).program["asic"]
    quoted(f"at the 3-year half-life it needs {three['breakeven_external_units']:,.0f} units sold to others")


@pytest.mark.slow
def test_the_dvd_effect_figures(tmp_path):
    """The seeded dvd-effect study (20,000 draws): P10/P50/P90 of each option's years of advantage, as years behind."""
    from tco.export.study_folder import run_study
    from tco.studies.spec import load_study

    folder = run_study(*load_study(ROOT / "scenarios" / "studies" / "dvd-effect.yaml"), tmp_path / "dvd")
    rows = {r["metric"]: r for r in json.loads((folder / "summary.json").read_text())["results"]["monte_carlo"]["summary"]}

    def behind(metric, digits):
        r = rows[metric]
        return " / ".join(f"{-r[q]:.{digits}f}" for q in ("p10", "p50", "p90"))

    quoted(f"P10/P50/P90 = {behind('advantage:asic', 2)} years *after*")
    quoted(f"P10/P50/P90 {behind('advantage:h100-prefill+lpx-decode', 2)} years")


def test_the_gpu_gpu_split_figures(gpu_split_scenario):
    """"An H100/H100 split beats colocated H100 ...": the split's cost over colocated H100 on the default scenario
    (the chat trace's prompt spread; then every prompt at the mean length, as docs/model.md quotes them)."""
    from tco.core.evaluate import evaluate

    scenario = gpu_split_scenario

    def ratio(prompt, tpot, scv=None):
        edits = {"workload.prompt_tokens": prompt, "workload.tpot_target_s": tpot}
        if scv is not None:
            edits["workload.prompt_tokens_scv"] = scv
        r = evaluate(scenario.structure, {**scenario.values(), **edits})
        return f"{float(r['h100-split'].lcot_usd_per_mtok / r['h100'].lcot_usd_per_mtok):.2f}x"

    quoted(f"({ratio(2000, 0.04)} at the default 2,000/400 tokens and 40 ms, {ratio(2000, 0.02)} at 20 ms; with every "
           f"prompt at the mean length {ratio(2000, 0.04, 0.0)}, and {ratio(16000, 0.01, 0.0)} at 16,000 tokens and 10 ms)")
    quoted(f"({ratio(100, 0.04, 0.0)} at 100 tokens and 40 ms, {ratio(200, 0.08, 0.0)} at 200 tokens and 80 ms)")
    model_md = doc("model.md")
    for phrase in (f"costs {ratio(2000, 0.04, 0.0)} colocated H100 at a 40 ms TPOT", f"{ratio(2000, 0.02, 0.0)} at 20 ms",
                   f"{ratio(8000, 0.04, 0.0)} with 8,000-token prompts at 40 ms",
                   f"{ratio(16000, 0.01, 0.0)} with 16,000-token prompts at 10 ms"):
        assert phrase in model_md, f"docs/model.md does not say {phrase!r}"


def test_the_studies_example_is_what_the_study_finds(tmp_path):
    """docs/studies.md's ``tco study half-life-vs-volume`` example: its findings block and the map's lowest ratio."""
    import pandas as pd

    from tco.export.study_folder import run_study
    from tco.present.study_findings import findings
    from tco.studies.spec import load_study

    folder = run_study(*load_study(ROOT / "scenarios" / "studies" / "half-life-vs-volume.yaml"), tmp_path / "map")
    text = (ROOT / "docs" / "studies.md").read_text()
    block = text[text.index("findings:", text.index("`tco study half-life-vs-volume`")):]
    block = block[:block.index("```")]
    said = ["findings:", *(f"- {line}" for line in findings(json.loads((folder / "summary.json").read_text())))]
    assert normalized(block) == said
    lowest = pd.read_csv(folder / "map.csv")["ratio:asic"].min()
    assert f"is {lowest:.3f})" in folded(text)


def test_the_catalog_and_scenario_counts():
    from tco.inputs.catalog import load_catalog
    from tco.inputs.loading import bundled_scenarios

    catalog = load_catalog()
    quoted(f"the sourced catalog: {len(catalog.devices)} devices (the custom decode ASIC template among them), "
           f"{len(catalog.models)} models")
    for name in (*bundled_scenarios("inference"), *bundled_scenarios("training")):
        assert f"| `{name}` |" in README, f"README's scenario table misses {name}"


def test_the_stranded_capacity_figures(capsys):
    """docs/fleet-dynamics.md's fleet-split quarter: stranded share, cost per M tokens served, late hours and devices,
    per sizing policy, for the split and the all-H100 fleet."""
    data = json.loads(printed(capsys, "fleet", "stranded", "fleet-split", "--format", "json"))
    rows = {(r["policy"], r["fleet"] == data["option"]): r for r in data["policies"]}
    policies = ("today", "peak", "flex")

    def series(split, key, fmt):
        return " / ".join(format(rows[(p, split)][key], fmt) for p in policies)

    shares = [rows[(p, True)]["stranded_share"] for p in policies]
    text = doc("fleet-dynamics.md")
    for phrase in (f"stranded share {100 * shares[0]:.1f} % (`today`), {100 * shares[1]:.0f} (`peak`), "
                   f"{100 * shares[2]:.0f} (`flex`)",
                   f"cost {series(True, 'usd_per_mtok', '.2f')} USD per M output tokens served against the all-H100 "
                   f"fleet's {series(False, 'usd_per_mtok', '.2f')}",
                   f"with {series(True, 'violation_hours', ',')} late hours against {series(False, 'violation_hours', ',')}",
                   f"on {series(True, 'devices', ',.0f')} devices against {series(False, 'devices', ',.0f')}"):
        assert phrase in text, f"docs/fleet-dynamics.md does not say {phrase!r}"


@pytest.mark.slow
def test_the_kv_wall_figures(capsys):
    """docs/fleet-dynamics.md's KV wall on fleet-split: the windows of prompt length where the split wins, and the one
    where no colocated option meets the targets; the README's custom-asic wall, which the split never reaches."""
    wall = json.loads(printed(capsys, "fleet", "kv-wall", "fleet-split", "--format", "json"))["breakevens"]["prompt_tokens"]
    c = [f"{x:,.0f}" for x in wall["crossings"]]
    text = doc("fleet-dynamics.md")
    assert f"from {c[0]} to {c[1]} and from {c[2]} to {c[3]} prompt tokens" in text
    assert not any(wall["split_alone_meets_targets"])  # no piece won on feasibility alone since the 2026-12-07 refit
    assert "`fleet-split` has no such piece since the Hopper refit of 2026-12-07" in text
    custom = json.loads(printed(capsys, "fleet", "kv-wall", "custom-asic", "--format", "json"))["breakevens"]
    assert custom["prompt_tokens"]["status"] == custom["link_bandwidth_bytes_per_s"]["status"] == "never"
    low, high = custom["prompt_tokens"]["low"], custom["prompt_tokens"]["high"]
    quoted(f"never beats its colocated rivals at any prompt length from {low:,.0f} to {round(high, -3):,.0f} tokens nor at "
           "any link bandwidth")
