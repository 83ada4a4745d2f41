"""One validation path for every command (issue 50, item 7): what one command refuses, every command refuses,
when the scenario is read; a flag an analysis does not read is refused, not ignored; an option name is one every
command accepts."""

from __future__ import annotations

import pytest
from harness import contained, refused, run, tco

BAD_FLEET_DYNAMICS = "fleet_dynamics: {stranded: {weeks: 1e9}, bogus: {}}"


@pytest.fixture
def bad_fleet(tmp_path, default_text) -> str:
    path = tmp_path / "fleet.yaml"
    path.write_text(default_text + "\n" + BAD_FLEET_DYNAMICS + "\n")
    return str(path)


@pytest.mark.parametrize("command", [["compare"], ["params"], ["breakeven", "--param", "economics.pue"], ["export"],
                                     ["fleet", "kv-wall"]])
def test_an_invalid_fleet_dynamics_section_is_refused_by_every_command(tmp_path, bad_fleet, command):
    """``weeks: 1e9`` and an unknown section passed compare, params and export; only ``tco fleet`` refused them."""
    extra = ["--xlsx", str(tmp_path / "b.xlsx")] if command == ["export"] else []
    refused(tco(*command, bad_fleet, *extra, cwd=tmp_path), "fleet_dynamics.stranded.weeks", "fleet_dynamics.bogus")
    assert not (tmp_path / "b.xlsx").exists()


def test_an_invalid_fleet_dynamics_section_is_refused_on_upload(default_text):
    answer = contained(run("attacks:upload_yaml", default_text + "\n" + BAD_FLEET_DYNAMICS + "\n")).result
    assert answer["status"] == 200 and "fleet_dynamics.stranded.weeks" in answer["upload"]
    assert answer["state"]["scenario"] == "default"


def test_a_fleet_dynamics_option_that_is_no_option_is_refused_when_read(tmp_path, default_text):
    path = tmp_path / "s.yaml"
    path.write_text(default_text + "\nfleet_dynamics: {stranded: {option: nope}, routing: {option: nope}}\n")
    refused(tco("compare", str(path)), "fleet_dynamics.stranded.option", "fleet_dynamics.routing.option")


@pytest.mark.parametrize(("analysis", "flags"), [("roadmap", ["--option", "nope"]), ("pareto", ["--policy", "peak"]),
                                                 ("kv-wall", ["--weeks", "4"]), ("tree", ["--placement", "h100-sxm:groq-lpu"]),
                                                 ("stranded", ["--slack", "0.1"])])
def test_a_flag_the_analysis_does_not_read_is_refused(analysis, flags):
    """``tco fleet roadmap --option nope`` ran and ignored the option."""
    refused(tco("fleet", analysis, *flags), flags[0], analysis)


@pytest.mark.parametrize("name", ["groq:fast", "groq,fast"])
def test_an_option_name_every_command_cannot_take_is_refused_when_read(tmp_path, default_text, name):
    """``groq:fast`` was accepted by compare, but its study metric ``ratio:groq:fast`` was refused (and an app link
    separates ``name:value`` edits with commas)."""
    path = tmp_path / "s.yaml"
    path.write_text(default_text.replace("- name: groq\n", f"- name: '{name}'\n", 1))
    assert f"'{name}'" in path.read_text()
    refused(tco("compare", str(path)), "options[1].name", "':'")


def test_every_bundled_option_name_works_as_a_study_metric():
    """The rule keeps what the bundled scenarios use (``h100-prefill+groq-decode``)."""
    from tco.inputs.loading import bundled_scenarios, load_scenario
    from tco.studies.metrics import parse_metric

    for name in bundled_scenarios():
        scenario = load_scenario(name)
        for option in scenario.structure.challengers:
            assert parse_metric(scenario, f"ratio:{option.name}").option == option.name
