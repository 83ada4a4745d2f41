"""Hostile YAML: alias bombs, deep nesting, recursive aliases, huge and binary files, object tags.

Each runs the real command (or the app's upload) in a capped child (harness.py) and must end
in a one-line error, exit 2, within the bounds of conftest.py.
"""

from __future__ import annotations

import pytest
from harness import contained, refused, run, tco

#: 9 levels of 9 aliases: under 500 bytes of text, 9^9 = 387 million strings once expanded
ALIAS_BOMB = "\n".join(
    ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9)])


def bomb_under(key: str) -> str:
    """The bomb as the value of ``key`` (indented under it)."""
    return f"{key}:\n" + "\n".join("  " + line for line in ALIAS_BOMB.splitlines())


def test_the_bomb_is_small_and_would_expand_to_hundreds_of_millions_of_values():
    assert len(ALIAS_BOMB) < 500 and ALIAS_BOMB.count("*a") == 72


def test_alias_bomb_as_a_scenario_file(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(ALIAS_BOMB)
    refused(tco("compare", str(path)), str(path), "alias")


def test_alias_bomb_in_the_study_section_of_an_exported_scenario(tmp_path, default_text):
    path = tmp_path / "s.yaml"
    path.write_text(default_text + "\n" + bomb_under("study"))
    refused(tco("export", str(path), "--xlsx", str(tmp_path / "x.xlsx")), "alias")
    assert not (tmp_path / "x.xlsx").exists()


def test_alias_bomb_uploaded_to_the_app():
    answer = contained(run("attacks:upload_yaml", ALIAS_BOMB)).result
    assert answer["status"] == 200 and "attack.yaml" in answer["upload"] and "alias" in answer["upload"]
    assert answer["state"]["scenario"] == "default"  # the state is unchanged


@pytest.mark.parametrize(("text", "fragment"), [
    ("a: " + "[" * 10_000 + "]" * 10_000, "nesting"),
    ("a:\n" + "- " * 2000 + "x", "nesting"),
    ("a: &a [*a]", "recursive alias"),
    ("a: !!python/object/apply:os.system ['touch pwned']", "could not determine a constructor"),
    ("study: [" + ", ".join(["1"] * 200_000) + "]", "too long"),
    ("x: [" + ",".join(["1"] * 100_001) + "]", "100,000 values"),
])
def test_hostile_scenario_files(tmp_path, text, fragment):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    refused(tco("compare", str(path), cwd=tmp_path), fragment)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]


def test_a_binary_file_where_yaml_or_csv_is_expected(tmp_path):
    path = tmp_path / "cases.yaml"
    path.write_bytes(bytes(range(256)) * 40)
    refused(tco("validate", "--suite", str(path)), "not UTF-8")
    csv = tmp_path / "cases.csv"
    csv.write_bytes(b"\xff\xfe" + bytes(range(256)) * 40)
    refused(tco("calibrate", "--cases", str(csv)), "not UTF-8")


def test_a_device_file_that_is_not_a_file(tmp_path):
    refused(tco("compare", str(tmp_path)), str(tmp_path))
    refused(tco("compare", "/dev/zero"), "/dev/zero")
