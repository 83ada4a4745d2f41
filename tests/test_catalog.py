"""The sourced catalog: every entry validates, every number has a source, a date, a grade and a range."""

from __future__ import annotations

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


@pytest.mark.parametrize("model", sorted(CATALOG.models))
def test_compare_runs_on_every_device_for_every_model(model):
    """One generated colocated option per catalog device (replica size from memory fit): every pair either
    serves the workload with finite numbers or names why it cannot (an infeasibility reason), never NaN.

    The verdict's flip search (12 more evaluations of every pair along the parameter ranges, ~90 % of the
    time) runs for one model, DeepSeek-V3 (mixture of experts, latent attention: the widest replicas); the
    others check the base values, which are what this test is about."""
    devices = ["h100-sxm", *sorted(set(CATALOG.devices) - {"h100-sxm"})]
    result = compare(_pair_scenario(model, devices), with_flips=model == "deepseek-v3")
    numbers = result.options.select_dtypes("number").to_numpy(dtype=float)
    assert np.isfinite(numbers).all(), result.options[~np.isfinite(numbers).all(axis=1)]
    for detail in result.details:
        assert detail["feasible"] or detail["infeasible_reasons"], detail["name"]
        assert math.isfinite(detail["lcot_usd_per_mtok"]) and detail["lcot_usd_per_mtok"] > 0
    assert result.verdict
    assert result.to_dict()["options"]
