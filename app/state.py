"""Per-user state of the app: which scenario, which edits, and how a URL encodes them.

The state is small JSON kept in the browser (``dcc.Store``), never on the server::

    {"scenario": "voice-agent", "upload": None, "options": ["add:b200=colocated:b200"],
     "set": {"economics.discount_rate": 0.08}}

``upload`` holds the text of an uploaded scenario file (YAML) when ``scenario`` is
``UPLOAD``; ``options`` the options builder's edits in order (:mod:`tco.inputs.option_edits`), applied to the file
before the ``set`` edits. Every callback rebuilds the :class:`~tco.inputs.scenario.Scenario` from the state;
loading and building are cached per file or upload text and edits (immutable data, shared safely by all users).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs, urlencode

from tco.foundation.errors import FieldError, FieldWarning, InputError
from tco.inputs.loading import bundled_scenarios, load_scenario, scenario_from_dict, scenario_path
from tco.inputs.option_edits import MAX_OPTION_EDITS, edited_scenario, option_edits
from tco.inputs.parameters import checked_edits
from tco.inputs.references import APP_REFERENCES
from tco.inputs.scenario import Scenario
from tco.inputs.yaml_files import parse_yaml

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
    """An uploaded (or crafted) scenario, read under the app's policy: what it names is a bundled scenario, never a
    file on the server (:data:`tco.inputs.references.APP_REFERENCES`)."""
    return scenario_from_dict(parse_yaml(text, "uploaded file"), path="uploaded file", references=APP_REFERENCES)


@lru_cache(maxsize=64)
def _built_file(path: str, edits: tuple[str, ...]) -> Scenario:
    """A scenario file with the options builder's ``edits``, read under the app's policy like an upload: the edits
    come from a browser or a link."""
    return edited_scenario(replace(_load_file(path), references=APP_REFERENCES), option_edits(list(edits)))


@lru_cache(maxsize=32)
def _built_upload(text: str, edits: tuple[str, ...]) -> Scenario:
    return edited_scenario(_load_upload(text), option_edits(list(edits)))


def base_scenario(state: Mapping, choices: Mapping[str, str]) -> Scenario:
    """The scenario of ``state`` with its options built, without its value edits.

    ``state`` comes from the browser and may be crafted: an upload is bounded by the YAML
    reader's limits, an unknown scenario key is refused by name, the option edits are read and checked as the
    command line's (:func:`tco.inputs.option_edits.option_edits`).
    """
    edits = tuple(edit_texts(state.get("options")))
    if state.get("scenario") == UPLOAD and state.get("upload"):
        upload = state["upload"]
        if not isinstance(upload, str):
            raise InputError.one("uploaded file", type(upload).__name__, "must be the text of a YAML file")
        return _built_upload(upload, edits)
    key = state.get("scenario")
    if not isinstance(key, str) or key not in choices:
        raise InputError.one("scenario", key, f"must be one of {', '.join(choices)}")
    return _built_file(choices[key], edits) if edits else _load_file(choices[key])


def edit_texts(texts: object, where: str = "options") -> list[str]:
    """The option edits of a state (a list of edit texts), each checked (:func:`tco.inputs.option_edits.option_edits`).

    Parameters
    ----------
    texts : object
        What the state (a browser, a link) holds under ``options``; None is no edit.
    where : str
        What errors name.

    Returns
    -------
    list of str
        The texts; an :class:`InputError` names every one that is no edit.
    """
    option_edits(texts, where)
    return list(texts or [])


def current_scenario(state: Mapping, choices: Mapping[str, str]) -> Scenario:
    """The scenario of ``state`` with its edits applied (the same rules as every other edit)."""
    edits = state.get("set") or {}
    if not isinstance(edits, Mapping):
        raise InputError.one("set", type(edits).__name__, "must map parameter names to values")
    return base_scenario(state, choices).with_values(dict(edits))


def validated_edits(scenario: Scenario, edits: Mapping[str, object]) -> tuple[dict[str, float], list[FieldError],
                                                                               list[FieldWarning]]:
    """Split raw edits ``{name: text or number}`` into accepted values, broken rules and warnings
    (:func:`tco.inputs.parameters.checked_edits`, the rules every edit meets); an edit back to the base value is dropped."""
    accepted, errors, warnings = checked_edits(scenario.params, edits)
    base = scenario.values()
    return {k: v for k, v in accepted.items() if v != base[k]}, errors, [w for w in warnings if w.path in accepted]


#: longest query string of a shared link read (a link with every parameter edited is ~6 kB)
MAX_QUERY_CHARS = 20_000


def state_from_query(search: str | None, choices: Mapping[str, str], default: str) -> tuple[dict, list[FieldError]]:
    """The state a shared link encodes: ``?scenario=voice-agent&option=add:b200%3Dcolocated%3Ab200&set=name:value,...``
    (``option`` once per option edit, in order). Option edits the scenario refuses are named and left out (all of them:
    each may need the one before); the value edits are then read against the scenario as built."""
    search = search or ""
    try:
        if len(search) > MAX_QUERY_CHARS:
            raise ValueError(f"is too long: at most {MAX_QUERY_CHARS:,} characters")
        query = parse_qs(search.lstrip("?"), max_num_fields=MAX_OPTION_EDITS + 3)
    except ValueError as exc:
        return ({"scenario": default, "upload": None, "set": {}},
                [FieldError("link", f"{len(search):,} characters", f"{exc}; the default scenario is shown")])
    key = (query.get("scenario") or [default])[0]
    errors = []
    if key not in choices:
        errors.append(FieldError("scenario", key, f"must be one of {', '.join(choices)}; the default scenario is shown"))
        key = default
    state = {"scenario": key, "upload": None, "set": {}, "options": []}
    try:
        base = base_scenario({**state, "options": edit_texts(query.get("option"), "option")}, choices)
        state["options"] = query.get("option") or []
    except InputError as exc:
        errors += [FieldError(e.path, e.value, f"{e.rule}; the scenario's own options are shown") for e in exc.errors]
        base = base_scenario(state, choices)
    raw = {}
    for chunk in ",".join(query.get("set", [])).split(","):
        if chunk.strip():
            name, sep, value = chunk.partition(":")
            if not sep:
                errors.append(FieldError("set", chunk, "must look like name:value"))
            else:
                raw[name.strip()] = value
    accepted, bad, _warnings = validated_edits(base, raw)
    return {**state, "set": accepted}, errors + bad


def query_from_state(state: Mapping) -> str:
    """The query string of a shareable link: the scenario's key, its option edits in order, its value edits (an
    uploaded file is not in the link)."""
    items = []
    if state.get("scenario") != UPLOAD:
        items.append(("scenario", state["scenario"]))
        items += [("option", text) for text in state.get("options") or []]
    if state.get("set"):
        items.append(("set", ",".join(f"{k}:{float(v)!r}" for k, v in sorted(state["set"].items()))))
    return "?" + urlencode(items, safe=":,") if items else ""
