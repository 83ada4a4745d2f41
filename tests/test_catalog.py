"""The sourced catalog: every entry validates, every number has a source, a date, a grade and a range."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from pydantic import BaseModel

from tco.inputs.catalog import LLM, Device, Economics, Link, NodeCosts, load_catalog, validated
from tco.inputs.loading import load_scenario, scenario_from_dict
from tco.inputs.parameters import Quantity
from tco.present.comparison import compare
from tco.present.parameter_table import parameters

CATALOG = load_catalog()
REQUIRED_DEVICES = {
    "h100-sxm", "h200-sxm", "gh200", "b200", "b300", "gb200-nvl72", "mi300x", "mi325x", "mi355x", "gaudi3",
    "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-v7", "trainium2", "inferentia2", "groq-lpu", "groq-3-lpx",
    "cerebras-cs3", "sambanova-sn40l", "custom-decode-asic",
}
REQUIRED_MODELS = {
    "llama-2-70b", "llama-3.1-8b", "llama-3.1-70b", "llama-3.3-70b", "llama-3.1-405b", "llama-4-scout",
    "llama-4-maverick", "mixtral-8x7b", "deepseek-v3", "deepseek-r1", "qwen3-32b", "qwen3-235b-a22b", "gpt-oss-120b",
}
REQUIRED_CLASSES = {"hopper", "blackwell", "cdna3", "cdna4", "tpu", "gaudi", "trainium", "groq", "cerebras", "sambanova"}


def quantities(entry):
    for value in entry.__dict__.values():
        if isinstance(value, Quantity):
            yield value
        elif isinstance(value, BaseModel):
            yield from quantities(value)
        elif isinstance(value, list):
            for item in value:
                yield from quantities(item)


def entries():
    for kind, model, table in (("device", Device, CATALOG.devices), ("model", LLM, CATALOG.models),
                               ("link", Link, CATALOG.links), ("node", NodeCosts, CATALOG.nodes)):
        for ident, data in table.items():
            yield f"{kind}:{ident}", model, {**data, "id": ident} if kind in ("link",) else data
    yield "economics", Economics, CATALOG.economics


@pytest.mark.parametrize(("name", "model", "data"), list(entries()), ids=lambda x: x if isinstance(x, str) else "")
def test_entry_validates_and_is_sourced(name, model, data):
    entry = validated(model, data, name)
    for q in quantities(entry):
        assert q.source and q.date and q.grade, (name, q)
        assert q.low is None or q.low <= q.value, (name, q)
        assert q.high is None or q.value <= q.high, (name, q)


def test_required_entries_present():
    assert set(CATALOG.devices) >= REQUIRED_DEVICES and len(CATALOG.devices) >= 20
    assert set(CATALOG.models) >= REQUIRED_MODELS and len(CATALOG.models) >= 10
    assert min(validated(LLM, CATALOG.models[m], m).params_total.value for m in CATALOG.models) <= 8.1e9  # a routing-size model
    assert CATALOG.models["deepseek-v3"].get("kv_elements_per_token")
    assert {"5nm", "7nm"} <= set(CATALOG.nodes)


DEVICES = {ident: validated(Device, data, f"devices.{ident}") for ident, data in CATALOG.devices.items()}
MODELS = {ident: validated(LLM, data, f"models.{ident}") for ident, data in CATALOG.models.items()}


def test_devices_name_status_and_calibration_class():
    assert {d.calibration_class for d in DEVICES.values()} >= REQUIRED_CLASSES
    assert {d.status for d in DEVICES.values()} == {"shipping", "announced", "template"}
    assert DEVICES["custom-decode-asic"].status == "template"
    assert DEVICES["groq-3-lpx"].status == "announced"
    # a fitted efficiency carries the calibration as its source (tests/test_validation.py checks the values);
    # every other one is a grade-C estimate with a wide range
    for d in DEVICES.values():
        for q in (d.compute_efficiency, d.bandwidth_efficiency):
            if q.source.startswith("tco calibrate"):
                assert q.grade in ("A", "B") and d.calibration_class in {"hopper", "blackwell", "cdna3"}, (d.id, q)
            else:
                assert q.grade == "C" and q.high - q.low >= 0.3, (d.id, q)


def test_price_notes_say_their_basis():
    """price_usd's note opens with its basis: a published price (list, street, ASP), an estimate, or a unit cost."""
    for d in DEVICES.values():
        assert d.price_usd.note.startswith(("Basis:", "Estimate", "Unit manufacturing cost")), (d.id, d.price_usd.note[:60])
        if d.price_usd.note.startswith("Estimate"):
            assert d.price_usd.grade == "C", d.id


def test_gb200_nvl72_counts_one_gpu_slot_of_the_rack():
    """The rack price is spread over 72 GPU slots: $3M / 72 = $41,667 a slot ([gb200-rack-price])."""
    d = DEVICES["gb200-nvl72"]
    assert d.scale_up_domain_devices.value == 72
    assert "72" in d.price_usd.note


def test_active_parameters_exclude_the_input_embedding():
    """Llama 3.1 70B: 70,553,706,496 in all; the 128,256 x 8,192 input table (1,050,673,152) is a lookup,
    not read as a matrix per token: 70,553,706,496 - 1,050,673,152 = 69,503,033,344 active."""
    m = MODELS["llama-3.1-70b"]
    assert m.params_total.value == 70_553_706_496
    assert m.params_active.value == 70_553_706_496 - 128_256 * 8_192
    assert m.architecture.vocab_size.value == 128_256


def test_prices_and_architecture_are_reference_figures_never_parameters():
    """They are listed by `tco params` (role `reference`) and never enter the ParamSet a study draws from."""
    scenario = load_scenario("default")
    names = {p.name for p in scenario.params.values_list()}
    assert not any(".prices." in n or ".architecture." in n for n in names)
    table = parameters(scenario, reference=True)
    ref = table[table.role == "reference"]
    assert len(ref) and ref.name.str.contains(r"\.prices\.").any() and ref.name.str.contains(r"\.architecture\.").any()
    assert set(table.grade[table.role == "input"]) <= {"A", "B", "C", ""}
    assert (ref.grade != "").all() and (ref.source != "").all()


def _pair_scenario(model: str, devices: list[str]):
    return scenario_from_dict({
        "name": f"pairs-{model}", "model": model,
        "workload": {"requests_per_s": 10, "prompt_tokens": 1000, "output_tokens": 200, "ttft_target_s": 2.0,
                     "tpot_target_s": 0.1, "half_life_years": 3.0},
        "options": [{"name": d, "colocated": {"device": d}} for d in devices], "baseline": "h100-sxm",
    }, CATALOG)


#: h100-sxm first (the baseline), then every other catalog device
PAIR_DEVICES = ["h100-sxm", *sorted(set(CATALOG.devices) - {"h100-sxm"})]


def _check_pairs(scenario, result) -> None:
    """Every pair of :func:`_pair_scenario` either serves the workload with finite numbers or names why it cannot
    (never NaN), and its figures keep bounds derived by hand from the catalog values (peak figures, so each bound is
    below what any efficiency gives):

    * a feasible option meets both targets (2 s TTFT, 100 ms TPOT); an infeasible one that names a missed target
      reports a figure past it;
    * its replicas hold the model: devices per replica x the device's memory (all tiers) >= the weights
      (``params_total x weight_bits / 8``; measured 1.14x at the least over the catalog, 2026-12-06), and the fleet is
      whole replicas;
    * more bandwidth never makes decode faster than the bandwidth allows: a decode cycle reads at least the active
      weights (``params_active x weight_bits / 8``) through the replica's devices at their fastest tier's peak
      bandwidth, so TPOT >= that read time (1.8x at the least);
    * a first token needs the prompt's ``2 x params_active`` FLOPs per token at the replica's best peak FLOP/s
      (2.9x at the least);
    * every option serves the same tokens: the cost per million output tokens over the PV cost is one number
      across the options (to 1e-12), and the cost per million tokens of either kind is that x output / (prompt +
      output) tokens."""
    values = scenario.values()
    model = scenario.structure.model
    prompt, output = values["workload.prompt_tokens"], values["workload.output_tokens"]
    ttft_target, tpot_target = values["workload.ttft_target_s"], values["workload.tpot_target_s"]
    weight_bytes = values["workload.weight_bits"] / 8.0
    active, total = values[f"models.{model}.params_active"], values[f"models.{model}.params_total"]
    numbers = result.options.select_dtypes("number").to_numpy(dtype=float)
    assert np.isfinite(numbers).all(), result.options[~np.isfinite(numbers).all(axis=1)]
    per_pv = []
    for detail in result.details:
        device, name = detail["name"], detail["name"]
        assert detail["feasible"] or detail["infeasible_reasons"], name
        lcot, ttft, tpot = detail["lcot_usd_per_mtok"], detail["ttft_s"], detail["tpot_s"]
        assert math.isfinite(lcot) and lcot > 0
        if detail["feasible"]:
            assert ttft <= ttft_target and tpot <= tpot_target, (name, ttft, tpot)
        reasons = " ".join(detail["infeasible_reasons"])
        assert "time-per-output-token" not in reasons or tpot > tpot_target, (name, reasons, tpot)
        assert "time-to-first-token" not in reasons or ttft > ttft_target, (name, reasons, ttft)
        n, devices = detail["devices_per_replica"]["colocated"], detail["devices"]["colocated"]
        assert devices >= n and (devices / n).is_integer(), (name, devices, n)
        tiers = [key.rpartition(".")[0] for key in values
                 if key.startswith(f"devices.{device}.memory.") and key.endswith(".capacity_bytes")]
        capacity = sum(values[f"{tier}.capacity_bytes"] for tier in tiers)
        bandwidth = max(values[f"{tier}.bandwidth_bytes_per_s"] for tier in tiers)
        flops = max(values[f"devices.{device}.peak_flops_{bits}bit"] for bits in (4, 8, 16))
        if detail["feasible"]:
            assert n * capacity >= total * weight_bytes, (name, n, capacity, total * weight_bytes)
        assert tpot >= active * weight_bytes / (n * bandwidth), (name, tpot, n)
        assert ttft >= 2.0 * active * prompt / (n * flops), (name, ttft, n)
        assert detail["lcot_usd_per_mtok_all_tokens"] * (prompt + output) == pytest.approx(lcot * output, rel=1e-12)
        per_pv.append(lcot / detail["pv_cost_usd"])
    assert max(per_pv) == pytest.approx(min(per_pv), rel=1e-12)
    assert result.verdict
    assert result.to_dict()["options"]


@pytest.mark.parametrize("model", sorted(CATALOG.models))
def test_compare_runs_on_every_device_for_every_model(model):
    """One generated colocated option per catalog device (replica size from memory fit) for every catalog model: the
    bounds of :func:`_check_pairs`. The verdict's flip search runs for one model, in
    :func:`test_the_flip_search_runs_on_every_device_for_the_widest_model`."""
    scenario = _pair_scenario(model, PAIR_DEVICES)
    _check_pairs(scenario, compare(scenario, with_flips=False))


@pytest.mark.slow
def test_the_flip_search_runs_on_every_device_for_the_widest_model():
    """The verdict's flip search (every pair evaluated along the parameter ranges, each option only where its own values
    move: ~8 s, so in `make test` only) on DeepSeek-V3 (mixture of experts, latent attention: the widest replicas): the
    pairs keep the bounds of :func:`_check_pairs`, and each flip condition says what its windows say, derived by hand:
    its value is the near end of its first window, on its side of the base value and within the range; the windows run
    away from the base, nearest first, and the flips come nearest first; its share is the windows' length over the
    side's (whole numbers counted, both ends included, for an integer parameter), its distance ``|value - base| / (high
    - low)``; and inside its first window (at the middle) the winner is no longer the winner."""
    scenario = _pair_scenario("deepseek-v3", PAIR_DEVICES)
    result = compare(scenario, with_flips=True)
    _check_pairs(scenario, result)
    winner, flips = result.decision.winner, result.decision.flips
    assert winner and flips
    assert [f["distance"] for f in flips] == sorted(f["distance"] for f in flips)
    for f in flips:
        base, value, low, high, windows = f["base"], f["value"], f["low"], f["high"], f["windows"]
        end, sign = (low, -1.0) if f["direction"] == "below" else (high, 1.0)
        assert low <= value <= high and sign * (value - base) > 0, f
        assert value == windows[0][0] if sign > 0 else value == windows[0][1], f
        assert all(a <= b for a, b in windows), f
        for (a, b), (c, d) in itertools.pairwise(windows):
            assert b < c if sign > 0 else d < a, f
        extra = 1.0 if f["integer"] else 0.0
        length = sum(abs(b - a) + extra for a, b in windows)
        assert f["share"] == pytest.approx(length / abs(base - end), rel=1e-9), f
        assert f["distance"] == pytest.approx(abs(value - base) / (high - low), rel=1e-9), f
        inside = (windows[0][0] + windows[0][1]) / 2.0
        inside = round(inside) if f["integer"] else inside
        moved = compare(scenario.with_values({f["name"]: inside}), with_flips=False)
        assert moved.decision.winner != winner, (f["name"], inside, moved.decision.winner)
