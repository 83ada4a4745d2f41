"""Messages a user can act on, and no traceback where a message belongs (issue 50, items 5 and 9).

Each case runs the real command in a capped child (harness.py) and must end in one ``tco: error:``
line per broken rule, exit 2, naming the field path and the rule (and never echoing a whole file).
"""

from __future__ import annotations

import yaml
from harness import contained, refused, run, tco

from tco.foundation.errors import VALUE_CHARS

#: the columns every row of a ``tco calibrate --cases`` CSV gives (docs/calibration.md)
CSV_HEADER = ("name,class,model,device,devices_per_replica,system_devices,prompt_tokens,output_tokens,tpot_target_s,"
              "metric,published")
CSV_ROW = "x,hopper,llama-2-70b,h200-sxm,8,8,1024,256,10,system_output_tokens_per_s,{published}"


def calibration_csv(tmp_path, published: str, bom: bool = False) -> str:
    path = tmp_path / "cases.csv"
    path.write_text(("\ufeff" if bom else "") + CSV_HEADER + "\n" + CSV_ROW.format(published=published) + "\n",
                    encoding="utf-8")
    return str(path)


# --- item 9: messages a user can act on ------------------------------------------------------------------


def test_a_missing_field_names_the_field_not_the_whole_file(tmp_path, default_text):
    """A scenario without ``baseline`` said ``baseline: got {'description': ...the whole file...}``."""
    path = tmp_path / "s.yaml"
    path.write_text("\n".join(line for line in default_text.splitlines() if not line.startswith("baseline:")))
    outcome = refused(tco("compare", str(path)), "baseline", "required")
    assert "description" not in outcome.stderr and "got {" not in outcome.stderr
    assert all(len(line) < VALUE_CHARS + 100 for line in outcome.stderr.splitlines())


def test_a_small_chunk_size_alone_is_accepted(tmp_path):
    """``chunk_size: 1000`` failed on the default ``keep_samples (10000)`` the user never set: the default now
    follows the chunk; a ``keep_samples`` the user gives above the chunk is still refused, by name."""
    spec = {"name": "mc", "question": "q", "scenario": "default", "metric": "ratio:groq",
            "analyses": {"monte_carlo": {"samples": 2000, "chunk_size": 1000}}}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    outcome = contained(tco("study", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "out"), cwd=tmp_path, timeout=60))
    assert outcome.code == 0, outcome.stderr
    spec["analyses"]["monte_carlo"]["keep_samples"] = 5000
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    outcome = refused(tco("study", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "o2"), cwd=tmp_path),
                      "analyses.monte_carlo", "keep_samples (5000) must not exceed chunk_size (1000)")
    assert "got {" not in outcome.stderr


def test_a_calibration_csv_with_a_byte_order_mark_is_read(tmp_path):
    """Spreadsheets save CSV with a UTF-8 BOM; it made the first column ``\\ufeffname`` ("misses the columns name")."""
    from tco.analysis.validation.cases import cases_from_csv

    [case] = cases_from_csv(calibration_csv(tmp_path, "12000", bom=True))
    assert case.name == "x" and case.published == 12000.0


# --- item 5: tracebacks where a message belongs ------------------------------------------------------------


def test_a_5000_digit_integer_in_a_scenario_file_is_refused_by_field(tmp_path, default_text):
    """The YAML reader raised Python's "Exceeds the limit (4300 digits)" ValueError: a traceback."""
    path = tmp_path / "s.yaml"
    path.write_text(default_text + "\nset: {workload.prompt_tokens: 1" + "0" * 5000 + "}\n")
    refused(tco("compare", str(path)), "set.workload.prompt_tokens", "5,001 digits", "too large")


def test_a_5000_digit_integer_uploaded_to_the_app_is_named_and_the_state_kept(default_text):
    answer = contained(run("attacks:upload_yaml", default_text + "\nset: {workload.prompt_tokens: 1" + "0" * 5000 + "}\n")).result
    assert answer["status"] == 200, answer["text"][:500]
    assert "set.workload.prompt_tokens" in answer["upload"] and "too large" in answer["upload"]
    assert answer["state"]["scenario"] == "default"


def test_a_5000_digit_number_typed_as_an_edit_is_refused():
    """(Already one line: the number reader refuses text over 64 characters.)"""
    refused(tco("compare", "--set", "workload.prompt_tokens=1" + "0" * 5000), "workload.prompt_tokens", "longer than 64")


def test_a_scheduler_address_that_is_not_one_is_refused(tmp_path):
    """``--scheduler file:///etc/passwd`` reached dask's "unknown address scheme" ValueError: a traceback."""
    for address in ("file:///etc/passwd", "http://example.invalid:8786", "tcp://", "tcp://host:notaport"):
        refused(tco("study", "tornado-default", "--scheduler", address, "--out", str(tmp_path / "o")), "--scheduler",
                "tcp://HOST:PORT")
    assert not (tmp_path / "o").exists()


def test_a_non_finite_published_figure_is_refused(tmp_path):
    """``published: inf`` reached scipy's "Residuals are not finite in the initial point" ValueError: a traceback."""
    for value in ("inf", "Infinity", "-inf", "nan"):
        refused(tco("calibrate", "--cases", calibration_csv(tmp_path, value)), "cases.csv:2.published")
