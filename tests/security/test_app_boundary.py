"""The app's trust boundary (issue 50, item 1): what an uploaded or linked scenario may name, and which Host names
the server answers.

An uploaded scenario named server files in the fields that name another scenario (a training scenario's
``serving.scenario``, ``fleet_dynamics.tree.training_scenario``): the upload was accepted, the Compare or Lifecycle
callback read the file (up to 256 kB), its text reached the server log inside a validation message and the views
broke with a bare 500. Now such a field names a bundled scenario (by name) or a file uploaded in the same session,
never a server path; the upload is refused with the rule, and the views never read the file. The server answers
configured Host names only (a DNS-rebinding page resolves its own name to 127.0.0.1).
"""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest
from attacks import DEFAULT_STATE, controller, dash_post, upload_yaml
from harness import contained, run
from tco_app.pages.uncertainty import FRAGMENT_PREFIX, scenario_tag

import tco
from tco.foundation.errors import InputError
from tco.inputs.loading import SCENARIOS_DIR, scenario_from_dict

#: files a crafted scenario might name on the server
SERVER_FILES = ["/etc/passwd", "/proc/self/environ", "../../../../etc/hostname", "~/.ssh/id_rsa",
                str(SCENARIOS_DIR / "default.yaml"), "default.yaml", "file:///etc/passwd"]


def training_text(serving: str) -> str:
    text = (SCENARIOS_DIR / "training-run.yaml").read_text()
    assert "serving: {scenario: default, site: metro}" in text
    return text.replace("serving: {scenario: default, site: metro}", f"serving: {{scenario: '{serving}', site: metro}}")


def inference_text(tree_training: str) -> str:
    text = (SCENARIOS_DIR / "default.yaml").read_text()
    return text + f"\nfleet_dynamics: {{tree: {{training_scenario: '{tree_training}'}}}}\n"


def state_of(text: str) -> dict:
    return {"scenario": "upload", "upload": text, "set": {}, "upload_name": "attack"}


def compare_request(state: dict) -> dict:
    """The Compare view's callback for ``state`` (as a crafted request sends it)."""
    from preloaded_app import APP

    key = next(k for k in APP.callback_map if "scenario-title.children" in k)
    return dash_post(key, {"state-compare.data": state, "tie-tolerance.value": "2%"}, {}, "state-compare.data")


def opened_files(target: str, *args) -> dict:
    """Call ``attacks:<target>(*args)`` in this child while recording every file opened for reading."""
    import builtins
    import io
    import pathlib

    import attacks
    import test_app_boundary

    seen: list[str] = []
    real_open, real_io_open, real_path_open = builtins.open, io.open, pathlib.Path.open

    def watch(file, *a, **k):
        seen.append(str(file))
        return real_open(file, *a, **k)

    def watch_path(self, *a, **k):
        seen.append(str(self))
        return real_path_open(self, *a, **k)

    builtins.open, io.open, pathlib.Path.open = watch, watch, watch_path
    try:
        answer = getattr(attacks if hasattr(attacks, target) else test_app_boundary, target)(*args)
    finally:
        builtins.open, io.open, pathlib.Path.open = real_open, real_io_open, real_path_open
    return {"answer": answer, "opened": seen}


@pytest.mark.slow
@pytest.mark.parametrize("path", SERVER_FILES)
def test_an_uploaded_training_scenario_naming_a_server_file_is_refused(path):
    answer = contained(run("attacks:upload_yaml", training_text(path), "training-run.yaml")).result
    assert answer["status"] == 200
    assert "serving.scenario" in answer["upload"] and "bundled scenario" in answer["upload"], answer["upload"]
    assert answer["state"]["scenario"] == "default" and "root:" not in answer["text"]


@pytest.mark.parametrize("path", ["/etc/passwd", "/proc/self/environ", "default.yaml"])
def test_an_uploaded_inference_scenario_naming_a_server_file_for_its_tree_is_refused(path):
    answer = contained(run("attacks:upload_yaml", inference_text(path))).result
    assert "fleet_dynamics.tree.training_scenario" in answer["upload"] and "bundled scenario" in answer["upload"]
    assert answer["state"]["scenario"] == "default"


def test_a_crafted_state_naming_a_server_file_reads_nothing_and_gets_no_500():
    """The state lives in the browser: a request can carry an upload the controller never saw. The Compare view
    (which priced the second life on the file's 'scenario') answers with the rule, opening no file outside the
    package."""
    result = contained(run("test_app_boundary:opened_files", "compare_request", state_of(training_text("/etc/passwd")))).result
    answer = result["answer"]
    assert answer["status"] != 500, answer["text"][:300]
    assert not [p for p in result["opened"] if "passwd" in p]
    crafted = contained(run("attacks:controller", "scenario-picker.value", "", None, None, None,
                            state_of(training_text("/etc/passwd")))).result
    assert crafted["state"]["scenario"] == "default" and "serving.scenario" in crafted["edits"]


@pytest.mark.parametrize("edit", ["model:/etc/passwd", "add:x=colocated:/etc/passwd", "add:x=prefill:h100-sxm,"
                                  "decode:../../etc/passwd,link:/proc/self/environ"])
def test_option_edits_naming_a_server_file_are_refused_and_read_nothing(edit):
    """The options builder's edits in a crafted state or a shared link name catalog ids only: refused by the rules of
    an upload, opening no file."""
    crafted = contained(run("test_app_boundary:opened_files", "controller", "scenario-picker.value", "", None, None, None,
                            {**DEFAULT_STATE, "options": [edit]})).result
    link = contained(run("test_app_boundary:opened_files", "controller", "url.search",
                         "?scenario=default&option=" + edit.replace("=", "%3D"), None, None, None, None)).result
    for result in (crafted, link):
        answer = result["answer"]
        assert answer["status"] == 200 and answer["state"]["options"] == [], answer["text"][:300]
        assert "is not a known" in answer["edits"]
        assert not [p for p in result["opened"] if "passwd" in p or "environ" in p]


def test_the_policy_itself():
    """Bundled names and same-session uploads pass; anything that is a path never does, even one that exists."""
    from tco.inputs.references import APP_REFERENCES, References

    assert APP_REFERENCES.check("serving.scenario", "default") is None
    for path in [*SERVER_FILES, "", " default", "default\x00", "DEFAULT", 7]:
        assert APP_REFERENCES.check("serving.scenario", path) is not None, path
    mine = (SCENARIOS_DIR / "default.yaml").read_text().replace("name: default", "name: my-serving", 1)
    session = References(paths=False, uploads=(("my-serving", mine),))
    scenario = scenario_from_dict(tco.inputs.yaml_files.parse_yaml(training_text("my-serving"), "upload"),
                                  references=session)
    from tco.analysis.training import serving_scenario

    assert serving_scenario(scenario).name == "my-serving"
    with pytest.raises(InputError, match=r"serving\.scenario"):
        scenario_from_dict(tco.inputs.yaml_files.parse_yaml(training_text("/etc/passwd"), "upload"), references=session)


def test_a_scenario_loaded_under_the_policy_keeps_it_through_edits_and_variants():
    from tco.inputs.references import APP_REFERENCES
    from tco.inputs.variants import with_options

    scenario = scenario_from_dict(tco.inputs.yaml_files.parse_yaml(inference_text("training-run"), "upload"),
                                  references=APP_REFERENCES)
    assert scenario.with_values({"economics.pue": 1.3}).references is APP_REFERENCES
    assert with_options(scenario, []).references is APP_REFERENCES


def test_the_command_line_still_reads_the_users_own_files(tmp_path):
    """The policy is the app's: on the command line a scenario may name the user's own files, as before."""
    from tco.analysis.training import serving_scenario

    (tmp_path / "serving.yaml").write_text((SCENARIOS_DIR / "default.yaml").read_text().replace("name: default", "name: mine"))
    (tmp_path / "t.yaml").write_text(training_text(str(tmp_path / "serving.yaml")))
    assert serving_scenario(tco.load_scenario(tmp_path / "t.yaml")).name == "mine"


# --- the Host header ------------------------------------------------------------------------------------


def host_status(host: str, allowed: tuple[str, ...] | None = None) -> int:
    """The status of ``GET /`` sent with ``Host: host`` (to a fresh app when ``allowed`` is given)."""
    from preloaded_app import APP

    app = APP
    if allowed is not None:
        import tempfile

        from tco_app import create_app

        app = create_app(cache_dir=tempfile.mkdtemp(prefix="tco-security-"), allowed_hosts=allowed)
    return app.server.test_client().get("/_dash-layout", headers={"Host": host}).status_code


@pytest.mark.parametrize(("host", "status"), [("127.0.0.1:8050", 200), ("localhost:8050", 200), ("localhost", 200),
                                              ("evil.example", 400), ("evil.example:8050", 400), ("127.0.0.1.evil.example", 400),
                                              ("", 400)])
def test_the_app_answers_only_its_own_host_names(host, status):
    """A DNS-rebinding page (its own name resolved to 127.0.0.1) sends its own Host: refused before any callback."""
    assert contained(run("test_app_boundary:host_status", host)).result == status


@pytest.mark.slow
def test_an_allowed_host_is_answered():
    assert contained(run("test_app_boundary:host_status", "tco.lan:8050", ("tco.lan",))).result == 200
    assert contained(run("test_app_boundary:host_status", "localhost:8050", ("tco.lan",))).result == 400


def test_the_cli_takes_allowed_hosts_and_refuses_a_wildcard():
    from harness import refused
    from harness import tco as run_tco

    refused(run_tco("app", "--allowed-host", "*"), "--allowed-host", "wildcard")
    refused(run_tco("app", "--allowed-host", "evil example"), "--allowed-host")


def test_attacks_module_has_what_this_file_uses():
    assert controller and upload_yaml and DEFAULT_STATE and base64



SPREADS = "..mc-spreads.data...mc-spreads-shown.children...url.hash.."


def spread_request(current, name, distribution, low) -> dict:
    """The Uncertainty view's Set button as a crafted request would press it: the callback's outputs by id."""
    answer = dash_post(SPREADS, {"mc-spread-set.n_clicks": 1}, {
        "state.data": DEFAULT_STATE, "mc-spreads.data": current, "mc-spread-param.value": name,
        "mc-spread-distribution.value": distribution, "mc-spread-low.value": low, "mc-spread-high.value": ""},
        "mc-spread-set.n_clicks")
    assert answer["status"] == 200, answer["text"][:300]
    return json.loads(answer["text"])["response"]


@pytest.mark.parametrize(("current", "name", "distribution", "low"), [
    ({}, "/etc/passwd", "uniform", "1"),                      # a parameter name that is a server path
    ({}, "workload.requests_per_s", "=HYPERLINK(\"x\")", "1"),  # a distribution that is a formula
    ({"economics.discount_rate": {"low": {"nested": [1, 2]}}}, "workload.requests_per_s", "uniform", "50"),
    ({f"p{i}": {"low": 1} for i in range(2000)}, "workload.requests_per_s", "uniform", "50"),
])
def test_a_crafted_distribution_choice_is_named_and_never_kept(current, name, distribution, low):
    """The Uncertainty view's distribution choice (issue 51 item 5) comes from the browser: a crafted request that
    names a server path, sends a formula as the distribution, or carries a crafted store gets 200 with the broken
    rules and keeps nothing (the store is written only when the whole choice holds)."""
    outputs = spread_request(current, name, distribution, low)
    assert "mc-spreads" not in outputs  # no_update: the store keeps what it had
    assert "errors" in str(outputs["mc-spreads-shown"])


def test_a_store_that_is_not_a_mapping_is_dropped_for_the_valid_choice():
    outputs = spread_request("not a mapping", "workload.requests_per_s", "uniform", "50")
    assert outputs["mc-spreads"]["data"] == {"workload.requests_per_s": {"distribution": "uniform", "low": "50"}}


DEFAULT_KEY = {"scenario": "default", "upload": None, "size": 0, "hash": "", "options": []}


def fragment_request(fragment: str) -> dict:
    """A page opened from a link whose fragment carries a distribution choice (the scenario key set by the controller),
    as a crafted request would send it."""
    answer = dash_post(SPREADS, {"scenario-key.data": DEFAULT_KEY}, {
        "state.data": DEFAULT_STATE, "mc-spreads.data": {}, "url.hash": fragment}, "scenario-key.data")
    assert answer["status"] == 200, answer["text"][:300]
    return json.loads(answer["text"])["response"]


def _fragment(spreads, tag=None) -> str:
    return FRAGMENT_PREFIX + quote(json.dumps({"for": tag or scenario_tag(DEFAULT_KEY), "spreads": spreads}))


@pytest.mark.parametrize("fragment", [
    _fragment({"/etc/passwd": {"distribution": "uniform"}}),                    # a server path as an input
    _fragment({"workload.requests_per_s": {"distribution": "=HYPERLINK(\"x\")"}}),  # a formula as the distribution
    _fragment({"workload.requests_per_s": {"low": {"nested": [1, 2]}}}),          # a nested value
    FRAGMENT_PREFIX + "%7Bnot json",                                               # no JSON
    FRAGMENT_PREFIX + quote(json.dumps({"for": "x", "spreads": ["a"]})),          # no mapping
    FRAGMENT_PREFIX + "a" * 20_000,                                                # oversized
])
def test_a_crafted_link_fragment_sets_no_distribution_and_is_named(fragment):
    """A link's fragment comes from anyone who sends a link: each broken rule is named, nothing is kept, and the
    fragment is dropped from the address."""
    outputs = fragment_request(fragment)
    assert outputs["mc-spreads"]["data"] == {}
    assert "errors" in str(outputs["mc-spreads-shown"])
    assert outputs["url"]["hash"] == ""


def test_a_link_fragment_for_its_scenario_sets_the_choice_and_one_for_another_is_ignored():
    chosen = {"workload.requests_per_s": {"distribution": "uniform", "low": "50"}}
    assert fragment_request(_fragment(chosen))["mc-spreads"]["data"] == chosen
    other = fragment_request(_fragment(chosen, tag="another scenario"))
    assert other["mc-spreads"]["data"] == {} and other["url"]["hash"] == ""
