"""Oversized requests: every size a user can ask for is refused at once, with what it would have cost.

Study files (and ``--samples``/``--workers``) through ``tco study``, and the app's controls through
crafted callback requests. Nothing runs: each refusal costs well under the bounds of conftest.py.
"""

from __future__ import annotations

import attacks
import pytest
import yaml
from harness import contained, refused, run, tco

from tco.foundation.limits import MAX_PROCESS_SECONDS, MAX_WORKERS


def study(tmp_path, analyses: dict, metric: str = "ratio:groq") -> str:
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump({"name": "big", "question": "too big?", "scenario": "default", "metric": metric,
                                    "analyses": analyses}))
    return str(path)


@pytest.mark.parametrize(("analyses", "path", "fragment"), [
    ({"monte_carlo": {"samples": 10**12}}, "analyses.monte_carlo.samples", "hours"),
    ({"map": {"x": {"param": "economics.discount_rate", "points": 10**6},
              "y": {"param": "workload.requests_per_s", "points": 10**6}}}, "analyses.map.points", "GB at once"),
    ({"morris": {"trajectories": 10**9}}, "analyses.morris.trajectories", "GB at once"),
    ({"sobol": {"n": 2**40}}, "analyses.sobol.n", "years"),
    ({"sweep": {"param": "economics.discount_rate", "points": 10**9}}, "analyses.sweep.points", "GB at once"),
    ({"portfolio": {"baseline": "h100-sxm", "devices": ["groq-lpu", "mi300x"], "samples": 10**12}},
     "analyses.portfolio.samples", "hours"),
    ({"portfolio": {"baseline": "h100-sxm", "devices": ["groq-lpu"],
                    "workloads": {f"w{i}": {} for i in range(2001)}}}, "analyses.portfolio", "cells"),
    ({"monte_carlo": {"samples": 1000, "chunk_size": 10**12, "keep_samples": 10}}, "analyses.monte_carlo.chunk_size",
     "less than or equal to 500000"),
])
def test_oversized_study_analyses(tmp_path, analyses, path, fragment):
    outcome = refused(tco("study", study(tmp_path, analyses), "--out", str(tmp_path / "out"), cwd=tmp_path), path, fragment)
    assert not (tmp_path / "out").exists()
    assert "the limit is" in outcome.stderr or "less than or equal" in outcome.stderr or "more than the limit" in outcome.stderr


def test_the_refusal_says_what_it_would_cost_and_how_to_get_more(tmp_path):
    outcome = refused(tco("study", "monte-carlo-default", "--samples", str(10**12), "--out", str(tmp_path / "o")))
    limit = int(outcome.stderr.split("the limit is ")[1].split(" samples")[0].replace(",", ""))
    assert 10**8 <= limit < 10**10  # ~an hour at several hundred thousand draws per second
    assert f"~{MAX_PROCESS_SECONDS / 60:.0f} minutes per process" in outcome.stderr
    assert "--workers N" in outcome.stderr and "--scheduler ADDRESS" in outcome.stderr
    with_workers = refused(tco("study", "monte-carlo-default", "--samples", str(10**12), "--workers", str(MAX_WORKERS),
                               "--out", str(tmp_path / "o")))
    assert f"on {MAX_WORKERS} processes" in with_workers.stderr or MAX_WORKERS == 1


def test_too_many_workers(tmp_path):
    refused(tco("study", "tornado-default", "--workers", "1000", "--out", str(tmp_path / "o")), "--workers", "cores")


@pytest.mark.parametrize("n", [1500, -5, "1e12", "abc", None])
def test_app_map_cells_are_bounded_on_the_server(n):
    answer = contained(run("attacks:map_cells", n)).result
    assert answer["status"] == 200 and answer["bytes"] < 20_000
    assert "cells per axis" in answer["text"] and "must be a whole number from 5 to 150" in answer["text"]


@pytest.mark.parametrize("samples", [10**12, -5, 2_000_001, "lots"])
def test_app_monte_carlo_samples_are_bounded_on_the_server(samples):
    text = contained(run("attacks:monte_carlo", samples)).result
    assert "draws" in text and "must be a whole number from 100 to 2,000,000" in text


def test_app_sobol_n_is_one_of_the_offered_sizes():
    text = contained(run("attacks:sobol", 2**40)).result
    assert "Sobol base samples N" in text and "must be one of" in text


def test_a_link_with_100000_edits_gets_a_short_answer():
    search = "?scenario=default&set=" + ",".join(f"economics.pue:{1 + i / 1e6}" for i in range(100_000))
    answer = contained(run("attacks:controller", "url.search", search)).result
    assert answer["status"] == 200 and answer["state"]["set"] == {}
    assert "too long" in answer["edits"] and answer["bytes"] < 200_000


def test_a_link_with_1000_fields_or_many_edits_is_answered_with_a_rule():
    answer = contained(run("attacks:controller", "url.search", "?" + "&".join(f"set=a:{i}" for i in range(1000)))).result
    assert answer["state"]["set"] == {} and "link" in answer["edits"]
    many = "?set=" + ",".join(f"p{i}:1" for i in range(1500))
    answer = contained(run("attacks:controller", "url.search", many)).result
    assert "too many entries" in answer["edits"]


def test_a_crafted_state_is_reset_with_a_message():
    state = {"scenario": "default", "upload": None, "set": {f"p{i}": i for i in range(50_000)}}
    answer = contained(run("attacks:controller", "scenario-picker.value", "", None, None, None, state)).result
    assert answer["status"] == 200 and answer["state"]["set"] == {} and "too many entries" in answer["edits"]
    state = {"scenario": "../../etc/passwd", "upload": None, "set": {}}
    answer = contained(run("attacks:controller", "scenario-picker.value", "", None, None, None, state)).result
    assert answer["state"]["scenario"] == "default" and "must be one of" in answer["edits"]


def test_an_oversized_upload_and_an_oversized_request():
    answer = contained(run("attacks:upload_yaml", "name: x\n" + "# padding\n" * 40_000)).result
    assert answer["state"]["scenario"] == "default" and "too" in answer["upload"]
    assert contained(run("attacks:oversized_request", 20_000_000)).result == 413


def test_attacks_module_is_importable():
    assert attacks.MAP.endswith(".figure")
