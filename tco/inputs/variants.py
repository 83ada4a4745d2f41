"""Scenario variants: the same workload and economics with other options (placements) or another
model, built through the ordinary validated path."""

from __future__ import annotations

from collections.abc import Mapping

from tco.core import names as named
from tco.core.names import device_param, model_param, tier_param
from tco.core.serving import llm
from tco.core.structure import Option
from tco.foundation.errors import InputError
from tco.inputs.catalog import load_catalog
from tco.inputs.loading import scenario_from_dict
from tco.inputs.scenario import Scenario

DEFAULT_LINK = "ib-400g"


def replica_minimums(scenario: Scenario) -> dict[str, float]:
    """Devices per replica the scenario gives for each device (the first option that names it).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its options' pools, in order.

    Returns
    -------
    dict[str, float] [devices]
        ``{device id: devices_per_replica}`` for the pools that set one.
    """
    out: dict[str, float] = {}
    for option in scenario.spec.options:
        for pool in option.pools().values():
            if pool.devices_per_replica is not None:
                out.setdefault(pool.device, pool.devices_per_replica.value)
    return out


def scenario_devices(scenario: Scenario) -> list[str]:
    """Device ids used by the scenario's options, in order of appearance.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario whose options are read.

    Returns
    -------
    list[str]
        Each device id once.
    """
    seen: list[str] = []
    for option in scenario.structure.options:
        for pool in option.pools:
            if pool.device not in seen:
                seen.append(pool.device)
    return seen


def scenario_link(scenario: Scenario) -> str:
    """The KV link of the scenario's first disaggregated option (``ib-400g`` when none).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario; its first disaggregated option's link is taken.

    Returns
    -------
    str
        A link id of ``assumptions/links.yaml``.
    """
    return next((o.link for o in scenario.structure.options if o.disaggregated), DEFAULT_LINK)


def pool_spec(device: str, devices_per_replica: float | None) -> dict:
    """A scenario-file pool: the device, and its devices per replica when given.

    Parameters
    ----------
    device : str
        Device id.
    devices_per_replica : float or None [devices]
        Minimum devices per replica (None or 0: searched).

    Returns
    -------
    dict
        ``{"device": ...}`` plus ``devices_per_replica`` when given.
    """
    return {"device": device} | ({"devices_per_replica": devices_per_replica} if devices_per_replica else {})


def placement_name(prefill: str, decode: str) -> str:
    """Option name of a placement.

    Parameters
    ----------
    prefill, decode : str
        Device ids of the two phases.

    Returns
    -------
    str
        ``X`` when colocated (same device), ``X>Y`` when prefill on X and decode on Y.
    """
    return prefill if prefill == decode else f"{prefill}>{decode}"


def placement_spec(prefill: str, decode: str, link: str, minimums: Mapping[str, float],
                   prefill_n: float | None = None, decode_n: float | None = None) -> dict:
    """Scenario-file option for a placement (colocated when both phases share the device).

    Parameters
    ----------
    prefill, decode : str
        Device ids of the two phases.
    link : str
        KV link id of a disaggregated placement.
    minimums : Mapping[str, float] [devices]
        Devices per replica by device id (:func:`replica_minimums`), used where
        ``prefill_n`` / ``decode_n`` are not given.
    prefill_n, decode_n : float, optional [devices]
        Devices per replica of each pool.

    Returns
    -------
    dict
        An ``options[]`` entry of a scenario file, named by :func:`placement_name`.
    """
    name = placement_name(prefill, decode)
    if prefill == decode:
        return {"name": name, "colocated": pool_spec(prefill, prefill_n or minimums.get(prefill))}
    return {"name": name, "prefill": pool_spec(prefill, prefill_n or minimums.get(prefill)),
            "decode": pool_spec(decode, decode_n or minimums.get(decode)), "kv_link": link}


def with_options(scenario: Scenario, options: list[dict], baseline: str | None = None) -> Scenario:
    """The scenario with ``options`` added to its own (a same-named option is replaced).

    Built through the validated scenario path (:func:`tco.inputs.loading.scenario_from_dict`), so
    its edits (``set:``) and settings carry over.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario to extend.
    options : list[dict]
        Scenario-file options (:func:`placement_spec`).
    baseline : str, optional
        A new baseline option name.

    Returns
    -------
    tco.inputs.scenario.Scenario
        The derived scenario.
    """
    data = scenario.to_dict()
    names = {o["name"] for o in options}
    data["options"] = [o for o in data["options"] if o["name"] not in names] + options
    if baseline is not None:
        data["baseline"] = baseline
    # the scenario's own names passed the rules when it was read; the added ones are tco's
    return scenario_from_dict(data, path=scenario.path, derived=[o["name"] for o in data["options"]],
                              references=scenario.references)


def baseline_on(scenario: Scenario, device: str) -> Scenario:
    """The scenario with its baseline's pools on ``device`` and no roadmap: the fleet a roadmap baseline runs on that
    generation (as :func:`tco.analysis.program_views.generation_fleets` evaluates it), for the analyses that simulate
    one fleet over time.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario (its baseline follows the general-purpose roadmap).
    device : str
        A generation of the roadmap.

    Returns
    -------
    tco.inputs.scenario.Scenario
        The derived scenario.
    """
    data = scenario.to_dict()
    data.pop("roadmap", None)
    for option in data["options"]:
        if option["name"] == data["baseline"]:
            for role in ("colocated", "prefill", "decode"):
                if role in option:
                    option[role] = {**option[role], "device": device}
    return scenario_from_dict(data, path=scenario.path, references=scenario.references)


def with_model(scenario: Scenario, model: str, path: str = "fleet_dynamics.routing.small_model") -> Scenario:
    """The scenario serving another model (e.g. the small model of a routing tier); errors name ``path``.

    Edits of the original model's parameters are dropped; everything else carries over.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario to derive from.
    model : str
        Model id of ``assumptions/models``.
    path : str
        Field path an error names.

    Returns
    -------
    tco.inputs.scenario.Scenario
        The derived scenario.
    """
    data = scenario.to_dict()
    data["model"] = model
    data["set"] = {k: v for k, v in data.get("set", {}).items() if not k.startswith("models.")}
    try:
        return scenario_from_dict(data, path=scenario.path, derived=[o["name"] for o in data["options"]],
                                  references=scenario.references)
    except InputError as exc:
        raise InputError.one(path, model, exc.errors[0].rule) from None


def disaggregated_option(scenario: Scenario, name: str | None, path: str) -> Option:
    """The named disaggregated option, or the scenario's first one; errors name ``path``.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario whose options are read.
    name : str or None
        Option name (None: the first disaggregated option).
    path : str
        Field path an error names.

    Returns
    -------
    tco.core.structure.Option
        An option with a prefill and a decode pool joined by a KV link.
    """
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

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.
    option : tco.core.structure.Option
        A disaggregated option of it.

    Returns
    -------
    scenario : tco.inputs.scenario.Scenario
        The scenario with the colocated options that were missing added.
    names : dict[str, str]
        ``{role: option name}`` of the prefill device's and the decode device's colocated
        counterparts.
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
    """Error naming ``path`` when ``devices_per_replica`` devices cannot hold the model's weights.

    Usable capacity ``n x usable fraction x sum of tier capacities`` against the weight bytes
    ``params_total x weight_bits / 8`` (:func:`tco.core.serving.llm.weight_bytes`).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario (its model, weight bits and, when it uses the device, its edits).
    device : str
        Device id (of the scenario or the catalog).
    devices_per_replica : float or None [devices]
        The replica size to check (None: nothing to check).
    path : str
        Field path the error names.
    """
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
    weight_bytes = float(llm.weight_bytes(values[model_param(m, "params_total")], values[named.workload.weight_bits]))
    if capacity < weight_bytes:
        raise InputError.one(path, f"{device} x {devices_per_replica:g}",
                             f"cannot hold the model: {capacity / 1e9:.3g} GB usable < {weight_bytes / 1e9:.3g} GB of weights")
