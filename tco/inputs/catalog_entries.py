"""Catalog entries with a scenario's overrides merged in, validated; bare numbers become edits."""

from __future__ import annotations

import copy
from collections.abc import Iterable

from tco.foundation.errors import InputError
from tco.inputs.catalog import LLM, Catalog, Device, validated


def _merge(entry: dict, overrides: dict, path: str, edits: dict[str, object]) -> dict:
    """Catalog entry with scenario overrides at ``path``.

    A mapping replaces the catalog's quantity (a new value with its own range and source); a
    bare value over a catalog quantity is an edit of its base value, collected in ``edits``
    under its parameter name and applied like ``set:`` (:func:`tco.inputs.parameters.checked_edits`), so
    the sourced range stays and a value outside it gets a warning.
    """
    merged = copy.deepcopy(entry)
    for key, value in overrides.items():
        if key == "memory" and isinstance(value, dict):
            tiers = {t["name"]: t for t in merged.get("memory_tiers", [])}
            for tier_name, tier_over in value.items():
                if not isinstance(tier_over, dict):
                    raise InputError.one(f"{path}.memory.{tier_name}", tier_over,
                                         "must be a mapping of tier fields (capacity_bytes, bandwidth_bytes_per_s)")
                tiers[tier_name] = _merge(tiers.get(tier_name, {"name": tier_name}), tier_over, f"{path}.memory.{tier_name}",
                                          edits)
            merged["memory_tiers"] = list(tiers.values())
        elif isinstance(merged.get(key), dict) and not isinstance(value, (dict, list)):
            edits[f"{path}.{key}"] = value
        else:
            merged[key] = value
    return merged


def lookup_entry(kind: str, ident: str, entries: dict, overrides: dict, model, path: str, edits: dict[str, object]):
    """A catalog entry by id with the scenario's overrides merged in, validated; errors name ``path``.

    Bare-number overrides of catalog quantities are collected in ``edits`` (see :func:`_merge`).

    Parameters
    ----------
    kind : str
        ``model`` or ``device`` (names the entry in errors).
    ident : str
        The entry's id.
    entries : dict
        The catalog's entries of that kind.
    overrides : dict
        The scenario's overrides of that kind, by id.
    model : type
        The entry's schema (``LLM``, ``Device``).
    path : str
        Field path that names the entry where the scenario refers to it.
    edits : dict[str, object]
        Collects the bare-number overrides (updated in place).

    Returns
    -------
    BaseModel
        The validated entry, quantities in SI units.
    """
    if ident not in entries and ident not in overrides:
        known = ", ".join(sorted(entries))
        raise InputError.one(path, ident, f"is not a known {kind}; known: {known}")
    override = overrides.get(ident, {})
    if not isinstance(override, dict):
        raise InputError.one(f"{kind}s.{ident}", override, f"must be a mapping of {kind} fields")
    data = _merge(entries.get(ident, {}), override, f"{kind}s.{ident}", edits)
    data.setdefault("id", ident)
    return validated(model, data, f"{kind}s.{ident}")


def model_and_devices(spec, catalog: Catalog, overrides: dict,
                      uses: Iterable[tuple[str, str]]) -> tuple[LLM, dict[str, Device], dict[str, object]]:
    """A scenario's model and every device it uses, each looked up once (:func:`lookup_entry`), in order.

    Parameters
    ----------
    spec : ScenarioFile or TrainingScenarioFile
        A scenario file (inference or training): its ``model`` and ``models`` overrides.
    catalog : Catalog
        The catalog to resolve against.
    overrides : dict
        The file's device overrides, by id.
    uses : Iterable[tuple[str, str]]
        ``(device id, field path)`` in the file's order, so an unknown device is named at its first use.

    Returns
    -------
    model : LLM
        The model entry.
    devices : dict[str, Device]
        The devices by id.
    edits : dict[str, object]
        The bare-number overrides collected.
    """
    edits: dict[str, object] = {}
    model = lookup_entry("model", spec.model, catalog.models, spec.models, LLM, "model", edits)
    devices: dict[str, Device] = {}
    for ident, where in uses:
        if ident not in devices:
            devices[ident] = lookup_entry("device", ident, catalog.devices, overrides, Device, where, edits)
    return model, devices, edits
