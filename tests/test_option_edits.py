"""The options builder's edits (tco.inputs.option_edits): a built scenario equals the hand-written file with the same
options, each edit does what it says and nothing else, and a bad edit is refused with its field, value and rule."""

from __future__ import annotations

import pytest
import yaml

from tco.analysis.evaluation import evaluate_scenario
from tco.foundation.errors import InputError
from tco.inputs.loading import load_scenario, scenario_from_dict, scenario_path
from tco.inputs.option_edits import (
    AddOption,
    RemoveOption,
    RenameOption,
    SetBaseline,
    SetModel,
    SetNode,
    builder_choices,
    edit_text,
    edited_scenario,
    option_edit,
    option_edits,
)
from tco.inputs.references import APP_REFERENCES


def built(name: str, *texts: str):
    return edited_scenario(load_scenario(name), option_edits(list(texts)))


def hand_written(name: str, options: list[dict]):
    """The bundled scenario's file with ``options`` appended by hand, read as any file is."""
    data = yaml.safe_load(scenario_path(name).read_text())
    data["options"] += options
    return scenario_from_dict(data)


def lcot(scenario, option: str) -> float:
    return float(evaluate_scenario(scenario)[0][option].lcot_usd_per_mtok)


def test_adding_b200_to_voice_agent_costs_what_the_hand_written_file_does():
    scenario = built("voice-agent", "add:b200=colocated:b200")
    by_hand = hand_written("voice-agent", [{"name": "b200", "colocated": {"device": "b200"}}])
    assert [o.name for o in scenario.structure.options] == ["h100", "groq", "cerebras", "h100-prefill+groq-decode", "b200"]
    assert scenario.to_dict() == by_hand.to_dict()
    assert lcot(scenario, "b200") == lcot(by_hand, "b200")
    # the issue's answer: B200 about two thirds of H100's cost per output token (B200 $0.54/M, H100 $0.82/M; H100
    # $1.07/M before the 2026-12-07 refit of the Hopper class)
    assert lcot(scenario, "b200") < 0.7 * lcot(scenario, "h100")


def test_a_split_with_a_pinned_layout_equals_its_hand_written_file():
    text = "split=prefill:h100-sxm,prefill.tp:2,decode:groq-lpu,link:ib-400g"
    scenario = built("voice-agent", f"add:{text}")
    by_hand = hand_written("voice-agent", [{"name": "split", "prefill": {"device": "h100-sxm", "tensor_parallel": 2},
                                            "decode": {"device": "groq-lpu"}, "kv_link": "ib-400g"}])
    assert lcot(scenario, "split") == lcot(by_hand, "split")
    prefill = scenario.structure.option("split").pools[0]
    assert [(s.tensor, s.pipeline) for s in prefill.shapes] == [(2, 1)]  # pinned, not searched


def test_an_added_option_of_an_existing_name_is_swapped_in_where_it_stands():
    scenario = built("voice-agent", "add:h100=colocated:b200")
    assert scenario.structure.options[0].name == "h100"
    assert scenario.structure.option("h100").pools[0].device == "b200"
    assert scenario.structure.baseline == "h100"
    data = yaml.safe_load(scenario_path("voice-agent").read_text())
    data["options"][0]["colocated"]["device"] = "b200"
    assert scenario.to_dict() == scenario_from_dict(data).to_dict()
    # as the baseline it pays no software port: cheaper than the same b200 as a challenger (a port from h100-sxm)
    challenger = evaluate_scenario(built("voice-agent", "add:b200=colocated:b200"))[0]["b200"]
    swapped = evaluate_scenario(scenario)[0]["h100"]
    assert swapped.pv_porting_usd == 0 < challenger.pv_porting_usd
    assert swapped.pv_cost_usd == pytest.approx(challenger.pv_cost_usd - challenger.pv_porting_usd, rel=1e-12)


def test_remove_rename_baseline_and_model():
    scenario = built("voice-agent", "add:b200=colocated:b200", "baseline:b200", "remove:h100", "rename:groq=lpu",
                     "model:llama-3.1-70b")
    assert [o.name for o in scenario.structure.options] == ["lpu", "cerebras", "h100-prefill+groq-decode", "b200"]
    assert scenario.structure.baseline == "b200"
    assert scenario.structure.model == "llama-3.1-70b"
    assert "models.llama-3.1-70b.params_total" in scenario.params and "models.llama-3.1-8b.params_total" not in scenario.params


def test_a_rename_carries_the_baseline_and_the_options_own_edits():
    base = load_scenario("specialization-over-time")
    name = "options.h100.colocated.devices_per_replica"
    edited = base.with_values({name: 4})
    scenario = edited_scenario(edited, [option_edit("rename:h100=gpu")])
    assert scenario.structure.baseline == "gpu"
    assert scenario.params["options.gpu.colocated.devices_per_replica"].value == 4
    assert name not in scenario.params
    # the parameter edits of a scenario stay through option edits
    kept = edited_scenario(base.with_values({"economics.discount_rate": 0.12}), [option_edit("add:b200=colocated:b200")])
    assert kept.params["economics.discount_rate"].value == 0.12


def test_removing_an_option_drops_its_own_edits():
    split = "h100-prefill+lpx-decode"
    base = load_scenario("specialization-over-time").with_values({f"options.{split}.prefill.devices_per_replica": 2})
    scenario = edited_scenario(base, [option_edit(f"remove:{split}")])
    assert split not in [o.name for o in scenario.structure.options]
    assert base.spec.set and not scenario.spec.set


@pytest.mark.parametrize(("texts", "message"), [
    (["add:b200=colocated:b2000"], "options.b200.colocated.device: got 'b2000'; is not a known device; known: b200, b300"),
    (["add:s=prefill:h100-sxm,decode:groq-lpu,link:ib-4"], "options.s.kv_link: got 'ib-4'; is not a known link; known: "
                                                           "eth-800g, ib-400g, nvlink-c2c"),
    (["add:s=prefill:h100-sxm,decode:groq-lpu"], "options.s: a disaggregated option needs a kv_link"),
    (["add:x=colocated:b200,tp:0"], "options.x.colocated.tensor_parallel: got '0'; Input should be greater than or equal to 1"),
    (["add:x=colocated:b200,foo:1"], "options[0]: got 'x=colocated:b200,foo:1'; 'foo' is not a key it takes"),
    (["add:g:x=colocated:b200"], "options.g:x.name: got 'g:x'; must not hold ':' or ','"),
    (["remove:nope"], "remove: got 'nope'; must name an option of the scenario: h100, groq, cerebras"),
    (["remove:h100"], "remove: got 'h100'; is the baseline: choose another baseline first"),
    (["rename:groq=cerebras"], "rename: got 'groq=cerebras'; the scenario has an option called cerebras already"),
    (["baseline:groq"], "baseline: got 'groq'; the baseline must run on general-purpose devices only"),
    (["model:llama-9"], "model: got 'llama-9'; is not a known model; known: deepseek-r1"),
    (["node:3nm"], "node: got '3nm'; applies to a scenario that builds its own chip (a program: block)"),
    (["delete:h100"], "options[0]: got 'delete:h100'; must look like KIND:ARGUMENT"),
    ("add:b200=colocated:b200", "options: got 'str'; must be a list of option edits"),
    (["add:b200=colocated:b200"] * 41, "options: got '41 edits'; has too many edits: at most 40"),
])
def test_a_bad_edit_names_its_field_value_and_rule(texts, message):
    with pytest.raises(InputError) as info:
        edited_scenario(load_scenario("voice-agent"), option_edits(texts))
    assert message in str(info.value)


def test_every_bad_text_is_named_at_once():
    with pytest.raises(InputError) as info:
        option_edits(["bogus", "add:b200=colocated:b200", "rename:x"])
    assert [e.path for e in info.value.errors] == ["options[0]", "options[2]"]


def test_each_edit_reads_back_from_its_text():
    split = "add:s=prefill:h100-sxm,decode:groq-lpu,link:ib-400g,decode.tp:8,decode.pp:4"
    edits = [option_edit(t) for t in (split, "remove:groq", "rename:groq=lpu", "baseline:h100", "model:llama-3.1-70b",
                                      "node:3nm")]
    assert [type(e) for e in edits] == [AddOption, RemoveOption, RenameOption, SetBaseline, SetModel, SetNode]
    assert [option_edit(edit_text(e)) for e in edits] == edits


def test_a_built_scenario_keeps_the_app_policy_and_refuses_training_scenarios():
    app_scenario = scenario_from_dict(load_scenario("voice-agent").to_dict(), references=APP_REFERENCES)
    assert edited_scenario(app_scenario, [option_edit("add:b200=colocated:b200")]).references is APP_REFERENCES
    with pytest.raises(InputError, match="option edits apply to inference scenarios; training-run is a training"):
        edited_scenario(load_scenario("training-run"), [option_edit("add:b200=colocated:b200")])


def test_builder_choices_list_the_catalog():
    choices = builder_choices(load_scenario("voice-agent"))
    assert {"b200", "h100-sxm", "groq-lpu"} <= set(choices.devices)
    assert "ib-400g" in choices.links and "llama-3.1-70b" in choices.models
    assert list(choices.devices) == sorted(choices.devices)


def test_a_node_edit_builds_the_chip_at_that_node_as_the_hand_written_file_does():
    """custom-asic at 3 nm: the program takes the 3 nm node's NRE (50 + 35 + 40 + 14 + 30 = 169 M USD), wafer price
    (20,000 USD) and time to market (2.5 years), the device's figures stay given at 5 nm (its specs node), so compute
    scales by min(250 / 171.3, 1 / 0.89) = 1.124; the file's own edits of the former node's figures are dropped."""
    scenario = edited_scenario(load_scenario("custom-asic").with_values({"program.nre.design_usd": 1e6}),
                               option_edits(["node:3nm"]))
    data = yaml.safe_load(scenario_path("custom-asic").read_text())
    data["program"]["node"] = "3nm"
    by_hand = scenario_from_dict(data)
    values = scenario.values()
    assert values == by_hand.values()
    assert sum(values[f"program.nre.{p}"] for p in ("design_usd", "verification_usd", "masks_usd", "ip_usd",
                                                    "software_usd")) == 169e6
    assert values["program.wafer_price_usd"] == 20000.0 and values["program.time_to_market_years"] == 2.5
    assert scenario.spec.program.specs_node == "5nm" and lcot(scenario, "asic") == lcot(by_hand, "asic")
    assert "3nm" in builder_choices(scenario).nodes
    with pytest.raises(InputError, match=r"program\.node: got '2nm'; must be one of"):
        edited_scenario(load_scenario("custom-asic"), option_edits(["node:2nm"]))
