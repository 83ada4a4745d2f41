"""Flattening a scenario to named parameters: workload, economics, serving, model, devices,
links, pools, program and roadmap, each under its dotted name; the fleet-analysis settings
and the reference figures beside them."""

from __future__ import annotations

from collections.abc import Mapping

from tco.core import names as named
from tco.core.names import NODE_FIELDS, NRE_PARTS
from tco.core.structure import Structure
from tco.foundation.errors import FieldError, FieldWarning, InputError
from tco.inputs.catalog import (
    CACHE_SERVING_FIELDS,
    LLM,
    MOE_DEVICE_FIELDS,
    MOE_SERVING_FIELDS,
    STRUCTURAL_DEVICE_FIELDS,
    ApiQuote,
    Catalog,
    Device,
    Economics,
    Link,
    NodeCosts,
    ProgramDefaults,
    Roadmap,
    Serving,
    SoftwarePorting,
    Speculation,
    validated,
)
from tco.inputs.catalog_entries import lookup_entry
from tco.inputs.fleet_settings import NAMED_SETTINGS, setting_name
from tco.inputs.parameters import Param, ParamSet, Quantity, param_from_quantity
from tco.inputs.scenario_schema import WORKLOAD_DEFAULTS, Program, ScenarioFile, Workload


def fleet_setting_parameters(block: dict | None, catalog: Catalog,
                             set_: Mapping[str, object]) -> tuple[ParamSet, list[FieldWarning]]:
    """The fleet-analysis settings as named parameters, with the ``fleet_dynamics:`` block's
    numbers and the ``set:`` edits applied.

    A bare number in the block edits the catalog's base value (its sourced range stays; outside
    it, a warning), a mapping replaces the quantity (a value with its own range and source),
    like a device or model override (:func:`tco.inputs.catalog_entries.lookup_entry`). The block's other settings (options,
    policies, grids) are validated with the scenario (:func:`tco.inputs.fleet_settings.fleet_settings`).

    Parameters
    ----------
    block : dict or None
        The scenario file's ``fleet_dynamics:`` block.
    catalog : Catalog
        The catalog (its ``fleet_dynamics`` defaults).
    set_ : Mapping[str, object]
        The file's ``set:`` edits of fleet-analysis settings.

    Returns
    -------
    settings : ParamSet
        The settings as named parameters (``fleet_dynamics.<analysis>.<setting>``).
    warnings : list of FieldWarning
        Edited values outside their sourced ranges.
    """

    block = block if isinstance(block, dict) else {}
    collector, edits = ParamCollector(), {}
    for section, keys in NAMED_SETTINGS.items():
        given = block.get(section) if isinstance(block.get(section), dict) else {}
        for key in keys:
            name, own = setting_name(section, key), given.get(key)
            sourced = catalog.fleet_dynamics.get(section, {}).get(key)
            if sourced is None:
                collector.errors.append(FieldError(f"assumptions/fleet_dynamics.yaml:{section}.{key}", None,
                                                   "is missing: every fleet-analysis setting needs a sourced default"))
            elif isinstance(own, dict):
                collector.add(name, own)
            else:
                collector.add(name, sourced, "assumptions/fleet_dynamics.yaml")
                if own is not None:
                    edits[name] = own
    return collector.param_set().edited({**edits, **set_})


#: a rented pool's paid share of its device-hours unless its file gives one: reserved capacity pays every hour
RESERVED_SHARE = Quantity(value=1.0, low=0.5, high=1.0, grade="C", date="2026-12",
                          source="estimate (reserved capacity, the rate paid for every hour held; low: an autoscaled "
                                 "on-demand fleet paying about the mean over a peak twice the mean)")


def market_name(model_id: str, provider: str) -> str:
    """The dotted prefix of a provider's API prices of a model.

    Parameters
    ----------
    model_id : str
        The model (``llama-3.1-70b``).
    provider : str
        The provider of the quote (``groq``).

    Returns
    -------
    str
        ``market.<model>.<provider>``.
    """
    return f"market.{model_id}.{provider}"


def reference_parameters(model: LLM, devices: dict[str, Device], quotes: tuple[ApiQuote, ...] = ()) -> ParamSet:
    """Reference figures (prices, architecture facts) as named, domain-checked quantities.

    Named like parameters (``devices.b200.prices.street_usd``, ``models.gpt-oss-120b.architecture.
    sliding_window_tokens``, ``market.llama-3.1-70b.groq.output_usd_per_mtok``) so ``tco params`` can list them
    beside the inputs; they are not in the scenario's :class:`ParamSet`, so no study can draw or sweep them.

    Parameters
    ----------
    model : LLM
        The scenario's model (its ``architecture`` block).
    devices : dict[str, Device]
        The devices it uses (their ``prices`` blocks).
    quotes : tuple of ApiQuote
        The model's API list prices (``assumptions/market.yaml``).

    Returns
    -------
    ParamSet
        The reference figures by dotted name.
    """
    blocks = [(f"models.{model.id}.architecture", model.architecture)]
    blocks += [(f"devices.{d.id}.prices", d.prices) for d in devices.values()]
    blocks += [(market_name(model.id, q.provider), q) for q in quotes]
    collected, errors = [], []
    for prefix, block in blocks:
        for key in type(block).model_fields:
            q = getattr(block, key)
            if not isinstance(q, Quantity):  # absent, or a quote's provider and device
                continue
            try:
                collected.append(param_from_quantity(f"{prefix}.{key}", q, "catalog"))
            except InputError as exc:
                errors.extend(exc.errors)
    if errors:
        raise InputError(errors)
    return ParamSet(collected)


class ParamCollector:
    """Named parameters gathered in order; every broken rule is kept and raised together by :meth:`param_set`."""

    def __init__(self):
        self.params: list[Param] = []
        self.errors: list[FieldError] = []

    def add(self, name: str, q, default_source: str = "scenario file") -> None:
        """Add ``q`` (a :class:`Quantity`, a raw catalog mapping or None: skipped) as parameter ``name``."""
        if q is None:
            return
        try:
            quantity = q if isinstance(q, Quantity) else validated(Quantity, q, name)
            self.params.append(param_from_quantity(name, quantity, default_source))
        except InputError as exc:
            self.errors.extend(exc.errors)

    def param_set(self) -> ParamSet:
        if self.errors:
            raise InputError(self.errors)
        return ParamSet(self.params)


def scenario_parameters(spec: ScenarioFile, catalog: Catalog, model: LLM, devices: dict[str, Device],
                        edits: dict[str, object], structure: Structure) -> ParamSet:
    """Flatten everything the scenario uses into named parameters, in a stable order.

    Parameters
    ----------
    spec : ScenarioFile
        The validated scenario file.
    catalog : Catalog
        The catalog it resolves against.
    model : LLM
        Its model.
    devices : dict[str, Device]
        The devices its options (and the baseline's roadmap) use.
    edits : dict[str, object]
        Collects the bare-number overrides of the links it looks up (updated in place).
    structure : Structure
        Its resolved structure (which devices are built, adopted or on the roadmap).

    Returns
    -------
    ParamSet
        Every named input at the catalog's and the file's values, before edits.
    """
    collector = ParamCollector()
    add, errors = collector.add, collector.errors

    workload = spec.workload
    for key in Workload.model_fields:
        if key != "demand_by_year":
            add(named.workload.name(key), getattr(workload, key) or WORKLOAD_DEFAULTS.get(key))
    for year, multiple in enumerate(workload.demand_by_year or (), start=1):
        add(named.demand_year_param(year), multiple)
    economics = validated(Economics, {**catalog.economics, **spec.economics}, "economics")
    for key in Economics.model_fields:
        add(named.economics.name(key), getattr(economics, key))
    overrides = {k: v.model_dump() for k in Serving.model_fields if (v := getattr(spec.serving, k)) is not None}
    serving = validated(Serving, {**catalog.serving, **overrides}, "serving")
    cached = CACHE_SERVING_FIELDS.get(structure.prefix_cache_tier, ())
    for key in Serving.model_fields:
        if key in MOE_SERVING_FIELDS and not structure.moe:
            continue
        if any(key in fields for fields in CACHE_SERVING_FIELDS.values()) and key not in cached:
            continue
        add(named.serving.name(key), getattr(serving, key))
    for key in ("params_total", "params_active", "layers", "kv_heads", "head_dim", "attention_dim", "hidden_size",
                "experts_routed", "experts_per_token", "kv_elements_per_token", "moe_layers", "context_max_tokens"):
        if key in ("kv_heads", "head_dim") and model.kv_elements_per_token is not None:
            continue
        if key == "moe_layers" and model.moe_layers is None:
            continue
        add(named.model_param(model.id, key), getattr(model, key))
    for device in devices.values():
        for tier in device.memory_tiers:
            add(named.tier_param(device.id, tier.name, "capacity_bytes"), tier.capacity_bytes)
            add(named.tier_param(device.id, tier.name, "bandwidth_bytes_per_s"), tier.bandwidth_bytes_per_s)
        for key in Device.model_fields:
            value = getattr(device, key)
            if key == "peak_flops_4bit" and value is None:
                value = device.peak_flops_8bit.model_copy(update={"note": "no 4-bit unit: the 8-bit figure applies"})
            if key == "software_port_usd":
                value = _software_port(device, catalog, structure)
            if (key in MOE_DEVICE_FIELDS and not structure.moe) or key in STRUCTURAL_DEVICE_FIELDS:
                continue
            if isinstance(value, Quantity):
                add(named.device_param(device.id, key), value)
    links_used = sorted({o.kv_link for o in spec.options if o.kv_link})
    for link_id in links_used:
        link = lookup_entry("link", link_id, catalog.links, spec.links, Link, "kv_link", edits)
        for key in ("bandwidth_bytes_per_s", "latency_s", "port_cost_usd", "port_power_w"):
            add(named.link_param(link_id, key), getattr(link, key))
    for option in spec.options:
        for role, pool in option.pools().items():
            add(named.pool_param(option.name, role, "devices_per_replica"), pool.devices_per_replica)
            if pool.rented:
                add(named.pool_param(option.name, role, "rental_usd_per_hour"),
                    pool.rental_usd_per_hour or devices[pool.device].prices.rental_usd_per_hour)
                add(named.pool_param(option.name, role, "rental_paid_share"), pool.rental_paid_share or RESERVED_SHARE)
        _speculation_parameters(option, catalog, add, errors)
    if spec.program is not None:
        _program_parameters(spec.program, catalog, add, errors, structure)
    if structure.generations:
        roadmap = validated(Roadmap, catalog.roadmap, "roadmap")
        add(named.roadmap.start_year, roadmap.start_year)
        add(named.roadmap.cost_halving_years, roadmap.cost_halving_years)
        base = structure.option(structure.baseline)
        listed = [base.pools[0].device] if len(base.pools) == 1 and base.pools[0].device in roadmap.generations else []
        for device in (*listed, *(g.device for g in structure.generations)):
            add(named.roadmap_param(device, "release_year"), roadmap.generations[device].release_year)
    return collector.param_set()


def _speculation_parameters(option, catalog: Catalog, add, errors: list[FieldError]) -> None:
    """An option's speculation as ``options.<name>.speculation.<field>``: its block's quantities, else its method's
    sourced defaults (``assumptions/speculation.yaml``); nothing for no speculation."""
    spec = option.speculation
    if spec is None or spec.method == "none":
        return
    if spec.method not in catalog.speculation:
        errors.append(FieldError("assumptions/speculation.yaml", spec.method,
                                 "is missing: every speculation method needs sourced defaults"))
        return
    defaults = validated(Speculation, catalog.speculation[spec.method], f"speculation.{spec.method}")
    for key in Speculation.model_fields:
        add(named.speculation_param(option.name, key), getattr(spec, key) or getattr(defaults, key))


def _software_port(device: Device, catalog: Catalog, structure: Structure) -> Quantity | None:
    """A device's porting cost (its own figure, else its class default), for the devices an option
    may adopt: not the baseline's own devices, not the built chip (its software is NRE)."""
    if device.id in structure.incumbent_devices or device.id == structure.program_device:
        return None
    if device.software_port_usd is not None:
        return device.software_port_usd
    defaults = validated(SoftwarePorting, catalog.software, "software")
    return defaults.specialized if device.specialized else defaults.general


def _program_parameters(program: Program, catalog: Catalog, add, errors: list[FieldError], structure: Structure) -> None:
    node = validated(NodeCosts, catalog.nodes[program.node], f"nodes.{program.node}")
    defaults = validated(ProgramDefaults, catalog.program, "program")
    for key in program.nre:
        if key not in NRE_PARTS:
            errors.append(FieldError(f"program.nre.{key}", key, f"must be one of {', '.join(NRE_PARTS)}"))
    for key in ProgramDefaults.model_fields:
        add(named.program.name(key), getattr(program, key) or getattr(defaults, key))
    add(named.program.time_to_market_years, program.time_to_market_years or node.time_to_market_years)
    for part in NRE_PARTS:
        add(named.program_nre.name(part), program.nre.get(part) or getattr(node, part))
    if structure.node_scaled_tiers is not None:
        specs = validated(NodeCosts, catalog.nodes[program.specs_node], f"nodes.{program.specs_node}")
        for key in NODE_FIELDS:
            add(named.program.name(key), getattr(node, key))
            add(named.program_specs.name(key), getattr(specs, key))
    if program.die is not None:
        add(named.program.die_area_mm2, program.die.die_area_mm2)
        add(named.program.package_memory_board_usd, program.die.package_memory_board_usd)
        add(named.program.wafer_price_usd, program.die.wafer_price_usd or node.wafer_price_usd)
        add(named.program.defect_density_per_cm2, program.die.defect_density_per_cm2 or node.defect_density_per_cm2)
