"""Derived scenarios: the same workload and economics with other options (placements) or another model.

The fleet analyses never rewrite the core; they build scenario variants through the
ordinary validated path (:func:`tco.scenario.scenario_from_dict`) and evaluate them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..api import evaluate_scenario
from ..catalog import load_catalog
from ..core import llm
from ..core.structure import Option, device_param, model_param, tier_param
from ..errors import InputError
from ..scenario import Scenario, scenario_from_dict

DEFAULT_LINK = "ib-400g"


def replica_minimums(scenario: Scenario) -> dict[str, float]:
    """Devices per replica the scenario gives for each device (first option that names it)."""
    out: dict[str, float] = {}
    for option in scenario.spec.options:
        for pool in option.pools().values():
            if pool.devices_per_replica is not None:
                out.setdefault(pool.device, pool.devices_per_replica.value)
    return out


def scenario_devices(scenario: Scenario) -> list[str]:
    """Device ids used by the scenario's options, in order of appearance."""
    seen: list[str] = []
    for option in scenario.structure.options:
        for pool in option.pools:
            if pool.device not in seen:
                seen.append(pool.device)
    return seen


def scenario_link(scenario: Scenario) -> str:
    """The KV link of the scenario's first disaggregated option (``ib-400g`` when none)."""
    return next((o.link for o in scenario.structure.options if o.disaggregated), DEFAULT_LINK)


def pool_spec(device: str, devices_per_replica: float | None) -> dict:
    return {"device": device} | ({"devices_per_replica": devices_per_replica} if devices_per_replica else {})


def placement_name(prefill: str, decode: str) -> str:
    """Option name of a placement: ``X`` when colocated, ``X>Y`` when prefill on X and decode on Y."""
    return prefill if prefill == decode else f"{prefill}>{decode}"


def placement_spec(prefill: str, decode: str, link: str, minimums: Mapping[str, float],
                   prefill_n: float | None = None, decode_n: float | None = None) -> dict:
    """Scenario-file option for a placement (colocated when both phases share the device)."""
    name = placement_name(prefill, decode)
    if prefill == decode:
        return {"name": name, "colocated": pool_spec(prefill, prefill_n or minimums.get(prefill))}
    return {"name": name, "prefill": pool_spec(prefill, prefill_n or minimums.get(prefill)),
            "decode": pool_spec(decode, decode_n or minimums.get(decode)), "kv_link": link}


def with_options(scenario: Scenario, options: list[dict], baseline: str | None = None) -> Scenario:
    """The scenario with ``options`` added to its own (a same-named option is replaced)."""
    data = scenario.to_dict()
    names = {o["name"] for o in options}
    data["options"] = [o for o in data["options"] if o["name"] not in names] + options
    if baseline is not None:
        data["baseline"] = baseline
    return scenario_from_dict(data, path=scenario.path)


def with_model(scenario: Scenario, model: str, path: str = "fleet_dynamics.routing.small_model") -> Scenario:
    """The scenario serving another model (e.g. the small model of a routing tier); errors name ``path``."""
    data = scenario.to_dict()
    data["model"] = model
    data["set"] = {k: v for k, v in data.get("set", {}).items() if not k.startswith("models.")}
    try:
        return scenario_from_dict(data, path=scenario.path)
    except InputError as exc:
        raise InputError.one(path, model, exc.errors[0].rule) from None


def disaggregated_option(scenario: Scenario, name: str | None, path: str) -> Option:
    """The named disaggregated option, or the scenario's first one; errors name ``path``."""
    split = [o for o in scenario.structure.options if o.disaggregated]
    if name is None:
        if not split:
            raise InputError.one(path, None, "the scenario has no disaggregated option (prefill + decode + kv_link)")
        return split[0]
    names = [o.name for o in split]
    if name not in names:
        raise InputError.one(path, name, f"must name a disaggregated option of the scenario: {', '.join(names) or 'none'}")
    return scenario.structure.option(name)


def colocated_counterparts(scenario: Scenario, option: Option) -> tuple[Scenario, dict[str, str]]:
    """The scenario plus colocated options on each of ``option``'s devices.

    Returns the derived scenario and ``{role: option name}`` for the prefill device's and
    the decode device's colocated counterparts.
    """
    minimums = replica_minimums(scenario)
    names, extra = {}, []
    for pool in option.pools:
        existing = next((o.name for o in scenario.structure.options
                         if not o.disaggregated and o.pools[0].device == pool.device), None)
        if existing is None:
            existing = f"{pool.device} (colocated)"
            extra.append(placement_spec(pool.device, pool.device, DEFAULT_LINK, minimums) | {"name": existing})
        names[pool.role] = existing
    return (with_options(scenario, extra) if extra else scenario), names


def check_replica_holds_model(scenario: Scenario, device: str, devices_per_replica: float | None, path: str) -> None:
    """Error naming ``path`` when ``devices_per_replica`` devices cannot hold the model's weights plus one sequence."""
    if devices_per_replica is None:
        return
    values = scenario.values()
    if device_param(device, "price_usd") not in values:
        catalog = load_catalog()
        if device not in catalog.devices:
            raise InputError.one(path, device, f"is not a known device; known: {', '.join(sorted(catalog.devices))}")
        scenario = with_options(scenario, [placement_spec(device, device, DEFAULT_LINK, {}) | {"name": f"{device} (check)"}])
        values = scenario.values()
    tiers = scenario.devices[device].memory_tiers
    usable = values[device_param(device, "memory_usable_fraction")]
    capacity = devices_per_replica * usable * sum(values[tier_param(device, t.name, "capacity_bytes")] for t in tiers)
    m = scenario.structure.model
    weight_bytes = float(llm.weight_bytes(values[model_param(m, "params_total")], values["workload.weight_bits"]))
    if capacity < weight_bytes:
        raise InputError.one(path, f"{device} x {devices_per_replica:g}",
                             f"cannot hold the model: {capacity / 1e9:.3g} GB usable < {weight_bytes / 1e9:.3g} GB of weights")


def evaluate(scenario: Scenario, updates: Mapping[str, object] | None = None):
    """Core results ``{option: {output: array}}`` and the values used (updates may be arrays)."""
    return evaluate_scenario(scenario, {k: np.asarray(v, float) for k, v in (updates or {}).items()})
