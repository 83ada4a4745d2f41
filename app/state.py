"""Per-user state of the app: which scenario, which edits, and how a URL encodes them.

The state is small JSON kept in the browser (``dcc.Store``), never on the server::

    {"scenario": "default", "upload": None, "set": {"economics.discount_rate": 0.08}}

``upload`` holds the text of an uploaded scenario file (YAML) when ``scenario`` is
``UPLOAD``. Every callback rebuilds the :class:`~tco.scenario.Scenario` from the state;
loading is cached per file or upload text (immutable data, shared safely by all users).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs, urlencode

import yaml

from tco.errors import FieldError, InputError
from tco.params import unknown_name_rule
from tco.scenario import Scenario, bundled_scenarios, load_scenario, scenario_from_dict, scenario_path

UPLOAD = "upload"


def scenario_choices(extra: str | Path | None = None) -> dict[str, str]:
    """Scenario keys shown in the picker -> file path: the bundled ones plus ``extra``."""
    choices = {name: str(scenario_path(name)) for name in bundled_scenarios() + bundled_scenarios("training")}
    if extra is not None:
        path = Path(extra)
        load_scenario(path)  # fail fast, at startup, on a bad --scenario file
        key = path.stem if path.stem not in choices else f"file:{path.stem}"
        choices[key] = str(path)
    return choices


@lru_cache(maxsize=64)
def _load_file(path: str) -> Scenario:
    return load_scenario(path)


@lru_cache(maxsize=32)
def _load_upload(text: str) -> Scenario:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError.one("uploaded file", None, f"is not valid YAML: {getattr(exc, 'problem', exc)}") from None
    return scenario_from_dict(data, path="uploaded file")


def base_scenario(state: Mapping, choices: Mapping[str, str]) -> Scenario:
    """The scenario of ``state`` without its edits."""
    if state.get("scenario") == UPLOAD and state.get("upload"):
        return _load_upload(state["upload"])
    key = state.get("scenario")
    if key not in choices:
        raise InputError.one("scenario", key, f"must be one of {', '.join(choices)}")
    return _load_file(choices[key])


def current_scenario(state: Mapping, choices: Mapping[str, str]) -> Scenario:
    """The scenario of ``state`` with its (already validated) edits applied."""
    return base_scenario(state, choices).with_values(dict(state.get("set") or {}))


def parse_number(text) -> float:
    """A finite float from a table cell or query string; :class:`ValueError` otherwise."""
    if isinstance(text, bool) or text is None:
        raise ValueError
    value = float(str(text).strip()) if isinstance(text, str) else float(text)
    if not math.isfinite(value):
        raise ValueError
    return value


def validated_edits(scenario: Scenario, edits: Mapping[str, object]) -> tuple[dict[str, float], list[FieldError]]:
    """Split raw edits ``{name: text or number}`` into accepted values and broken rules.

    Each value is checked on its own against its field's domain (``tco.fields``), so one
    bad cell never hides the others; an edit back to the base value is dropped.
    """
    accepted, errors = {}, []
    known = set(scenario.params)
    for name, raw in edits.items():
        if name not in known:
            errors.append(FieldError(name, raw, unknown_name_rule(name, known)))
            continue
        param = scenario.params[name]
        try:
            value = parse_number(raw)
        except (TypeError, ValueError):
            errors.append(FieldError(name, raw, f"must be a number; {param.field.rule()}"))
            continue
        if not param.field.admits(value):
            errors.append(FieldError(name, raw, param.field.rule()))
        elif value != param.value:
            accepted[name] = value
    return accepted, errors


def state_from_query(search: str | None, choices: Mapping[str, str], default: str) -> tuple[dict, list[FieldError]]:
    """The state a shared link encodes: ``?scenario=default&set=name:value,name:value``."""
    query = parse_qs((search or "").lstrip("?"))
    key = (query.get("scenario") or [default])[0]
    errors = []
    if key not in choices:
        errors.append(FieldError("scenario", key, f"must be one of {', '.join(choices)}"))
        key = default
    raw = {}
    for chunk in ",".join(query.get("set", [])).split(","):
        if chunk.strip():
            name, sep, value = chunk.partition(":")
            if not sep:
                errors.append(FieldError("set", chunk, "must look like name:value"))
            else:
                raw[name.strip()] = value
    accepted, bad = validated_edits(_load_file(choices[key]), raw)
    return {"scenario": key, "upload": None, "set": accepted}, errors + bad


def query_from_state(state: Mapping) -> str:
    """The query string of a shareable link (an uploaded file is not in the link)."""
    items = {}
    if state.get("scenario") != UPLOAD:
        items["scenario"] = state["scenario"]
    if state.get("set"):
        items["set"] = ",".join(f"{k}:{float(v)!r}" for k, v in sorted(state["set"].items()))
    return "?" + urlencode(items, safe=":,") if items else ""


def scenario_yaml(scenario: Scenario) -> str:
    """The scenario file with edits in its ``set`` section, loadable by ``tco`` again."""
    return yaml.safe_dump(scenario.to_dict(), sort_keys=False, allow_unicode=True)
