"""Resolving a validated scenario file against the catalog: options and pools, the baseline's
roadmap generations, candidate replica shapes, cross-field rules, edits and warnings."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import replace

from tco.core import names as named
from tco.core.serving.expert import wide_shapes
from tco.core.serving.parallelism import Shape, candidate_shapes
from tco.core.structure import Generation, Option, Pool, Structure
from tco.foundation.errors import FieldError, FieldWarning, InputError
from tco.inputs.catalog import LLM, Catalog, Device, Economics, Roadmap, api_quotes, validated
from tco.inputs.catalog_entries import lookup_entry, model_and_devices
from tco.inputs.fleet_settings import fleet_settings, option_reference_errors
from tco.inputs.parameters import ParamSet, cross_field_errors, outside_range_message, param_from_quantity, spreads_of
from tco.inputs.scenario import Scenario, split_settings
from tco.inputs.scenario_flatten import fleet_setting_parameters, reference_parameters, scenario_parameters
from tco.inputs.scenario_schema import PREFIX_REUSE_FIELDS, PoolSpec, ScenarioFile

#: the on-die SRAM tier of a built device: the tier a change of process node rescales
SRAM_TIER = "sram"


def resolved_params(params: ParamSet, edits: Mapping[str, object], set_: Mapping[str, object],
                    spreads: Mapping[str, object] | None = None) -> tuple[ParamSet, list[FieldWarning]]:
    """A scenario's parameters with the cross-field rules checked, then its overrides applied.

    The rules are checked on the catalog's values; the bare-number overrides and ``set:``
    are then applied as edits (:meth:`tco.inputs.parameters.ParamSet.edited`), then ``uncertainty:``'s distributions and
    ranges (:meth:`tco.inputs.parameters.ParamSet.spread`).

    Parameters
    ----------
    params : ParamSet
        The parameters at the catalog's values.
    edits : Mapping[str, object]
        Bare-number overrides of the file.
    set_ : Mapping[str, object]
        The file's ``set:`` edits.
    spreads : Mapping[str, object] or None
        The file's ``uncertainty:``: distribution, low and high by name.

    Returns
    -------
    params : ParamSet
        The edited parameters.
    warnings : list of FieldWarning
        Edited values outside their sourced ranges.
    """
    crossed = cross_field_errors(params.values())
    if crossed:
        raise InputError(crossed)
    edited, warnings = params.edited({**edits, **set_})
    return (edited.spread(spreads) if spreads else edited), warnings



#: characters no option name holds: a study metric names an option after ``:`` (``ratio:<option>``,
#: ``breakeven:<option>:<param>``) and an app link separates ``name:value`` edits (whose names may hold an option's:
#: ``options.<option>.cluster_devices``) with ``,``; so every command takes every name
OPTION_NAME_SEPARATORS = ":,"


def option_name_errors(names: list[str], baseline: str, derived: Collection[str] = ()) -> list[FieldError]:
    """Broken rules of a scenario's option names: each unique, none holding :data:`OPTION_NAME_SEPARATORS`, and the
    baseline one of them.

    Parameters
    ----------
    names : list of str
        The options' names, in order.
    baseline : str
        The baseline's name.
    derived : Collection of str
        Names tco gave options it derived (``leaf:h100-sxm``, ``retired:b200``): they hold a ``:`` so that they never
        meet a user's option.

    Returns
    -------
    list of FieldError
        Every broken rule (empty when the names are fine).
    """
    errors = [FieldError(f"options[{i}].name", name, "option names must be unique")
              for i, name in enumerate(names) if names.index(name) != i]
    errors += [FieldError(f"options[{i}].name", name, "must not hold ':' or ',' (a study metric is ratio:<option>, an app "
                                                      "link separates edits with ','): e.g. " + re.sub("[:,]", "-", name))
               for i, name in enumerate(names) if name not in derived and any(c in name for c in OPTION_NAME_SEPARATORS)]
    if baseline not in names:
        errors.append(FieldError("baseline", baseline, f"must name one of the options: {', '.join(names)}"))
    return errors


def resolved_scenario(spec: ScenarioFile, catalog: Catalog, path: str | None, derived: Collection[str] = ()) -> Scenario:
    """A validated scenario file resolved against the catalog into a :class:`Scenario`.

    Parameters
    ----------
    spec : ScenarioFile
        The validated file.
    catalog : Catalog
        The catalog to resolve against.
    path : str or None
        Where the file came from, kept on the scenario.
    derived : Collection of str
        Option names tco derived (:func:`option_name_errors`).

    Returns
    -------
    Scenario
        Its structure with candidate shapes, named parameters with edits applied, settings and warnings;
        an :class:`InputError` lists every broken rule.
    """
    errors = option_name_errors([o.name for o in spec.options], spec.baseline, derived)
    if errors:
        raise InputError(errors)

    model, devices, edits = model_and_devices(spec, catalog, spec.devices,
                                              [(pool.device, f"options[{i}].{role}.device") for i, opt in enumerate(spec.options)
                                               for role, pool in opt.pools().items()])
    options = []
    for i, opt in enumerate(spec.options):
        pools = []
        for role, pool in opt.pools().items():
            device = devices[pool.device]
            built = spec.program is not None and spec.program.device == pool.device
            pools.append(Pool(role, pool.device, tuple(t.name for t in device.memory_tiers), device.specialized or built,
                              built, pool.devices_per_replica is not None,
                              streamed_prefill=device.pipeline_prefill == "streamed",
                              purchase_unit_devices=purchase_unit(device),
                              rental_param=named.pool_param(opt.name, role, "rental_usd_per_hour") if pool.rented else None,
                              rental_share_param=named.pool_param(opt.name, role, "rental_paid_share") if pool.rented
                              else None))
            if pool.rented and built:
                errors.append(FieldError(f"options[{i}].{role}.rented", True, "a chip the scenario builds is bought, "
                                         "not rented"))
            elif pool.rented and pool.rental_usd_per_hour is None and device.prices.rental_usd_per_hour is None:
                errors.append(FieldError(f"options[{i}].{role}.rental_usd_per_hour", None,
                                         f"is needed: the catalog has no rental rate for {pool.device}"))
        if opt.kv_link and opt.kv_link not in catalog.links and opt.kv_link not in spec.links:
            errors.append(FieldError(f"options[{i}].kv_link", opt.kv_link,
                                     f"is not a known link; known: {', '.join(sorted(catalog.links))}"))
        speculates = opt.speculation is not None and opt.speculation.method != "none"
        options.append(Option(opt.name, tuple(pools), opt.kv_link, speculates))
    baseline = next(o for o in options if o.name == spec.baseline)
    if spec.roadmap is not None and any(p.rented for p in baseline.pools):
        errors.append(FieldError("roadmap", "given", "a rented baseline does not follow the roadmap: its generations "
                                 "have no rental rates; rent it without a roadmap block, or own it"))
    if baseline.specialized:
        errors.append(FieldError("baseline", spec.baseline, "the baseline must run on general-purpose devices only"))
    if spec.program is not None and spec.program.device not in devices:
        errors.append(FieldError("program.device", spec.program.device, "must be a device used by one of the options"))
    if spec.program is not None:
        for key in ("node", "specs_node"):
            node = getattr(spec.program, key)
            if node is not None and node not in catalog.nodes:
                errors.append(FieldError(f"program.{key}", node, f"must be one of {', '.join(sorted(catalog.nodes))}"))
    for i, opt in enumerate(spec.options):
        for role, pool in opt.pools().items():
            if pool.pipeline_stages is not None and pool.pipeline_stages > model.layers.value:
                errors.append(FieldError(f"options[{i}].{role}.pipeline_stages", pool.pipeline_stages,
                                         f"must be at most the model's {model.layers.value:g} layers (a stage holds whole "
                                         "layers)"))
    generations = _generations(spec, catalog, baseline, devices, errors, edits)
    given = [key for key in PREFIX_REUSE_FIELDS if getattr(spec.workload, key) is not None]
    reuse = bool(given)
    if reuse and len(given) < len(PREFIX_REUSE_FIELDS):
        missing = next(key for key in PREFIX_REUSE_FIELDS if key not in given)
        errors.append(FieldError(f"workload.{missing}", None, f"is needed with workload.{given[0]}: prefix reuse takes "
                                 "the hit fraction and the time a prefix waits for its reuse"))
    if errors:
        raise InputError(errors)

    structure = Structure(spec.model, tuple(options), spec.baseline, spec.fleet.sizing == "whole",
                          spec.program.device if spec.program else None, policy=spec.serving.policy,
                          prefill_queue=spec.serving.prefill_queue, moe=model.experts_routed.value > 1, generations=generations,
                          refresh_policy=spec.roadmap.policy if spec.roadmap else "keep",
                          demand_series_years=len(spec.workload.demand_by_year or ()),
                          node_scaled_tiers=_node_scaled_tiers(spec, devices),
                          prefix_cache_tier=(spec.serving.prefix_cache_tier or "hbm") if reuse else None)
    settings, set_ = split_settings(spec.set)
    params, warnings = resolved_params(scenario_parameters(spec, catalog, model, devices, edits, structure), edits, set_,
                                       spec.uncertainty)
    dynamics, dynamics_warnings = fleet_setting_parameters(spec.fleet_dynamics, catalog, settings)
    warnings += dynamics_warnings
    # the block's other settings, checked here so every command refuses what `tco fleet` would (not only it)
    errors = option_reference_errors(fleet_settings(spec.fleet_dynamics, dynamics.values()),
                                     {o.name: o.disaggregated for o in structure.options})
    if errors:
        raise InputError(errors)
    quotes = api_quotes(catalog, spec.model)
    warnings += _economics_warnings(spec, catalog, params)
    structure = _with_shapes(structure, spec, model, devices, params)
    spec = spec.model_copy(update={"set": {name: (dynamics if name in settings else params)[name].value for name in spec.set},
                                   "uncertainty": spreads_of(params, spec.uncertainty)})
    return Scenario(spec.name, spec.title, spec.description, spec.question, params, structure, spec, path=path,
                    devices=devices, warnings=tuple(warnings), reference=reference_parameters(model, devices, quotes),
                    dynamics=dynamics, api_quotes=quotes)


def _economics_warnings(spec, catalog: Catalog, params: ParamSet) -> list[FieldWarning]:
    """A bare number under ``economics:`` replaces the catalog's quantity (a fixed value of the
    scenario's own); one outside the catalog's sourced range gets the same warning as an edit."""
    bare = [key for key, value in spec.economics.items() if not isinstance(value, dict)]
    if not bare:
        return []
    sourced = validated(Economics, catalog.economics, "economics")
    warnings = []
    for key in bare:
        name = named.economics.name(key)
        if name in params and hasattr(sourced, key):
            source = param_from_quantity(name, getattr(sourced, key))
            if not source.low <= params[name].value <= source.high:
                warnings.append(FieldWarning(name, params[name].value, outside_range_message(source)))
    return warnings


def _with_shapes(structure: Structure, spec: ScenarioFile, model: LLM, devices: dict[str, Device],
                 params: ParamSet) -> Structure:
    """``structure`` with the candidate replica shapes of every pool (:func:`_shapes`), the baseline's roadmap
    generations included (each baseline pool on the generation's device)."""
    specs = {o.name: o.pools() for o in spec.options}
    options = tuple(replace(o, pools=tuple(
        replace(p, shapes=_shapes(specs[o.name][p.role], p.role, model, devices[p.device], params, o.name))
        for p in o.pools)) for o in structure.options)
    base = structure.option(structure.baseline)
    generations = tuple(replace(g, shapes=tuple(
        _shapes(specs[base.name][p.role], p.role, model, devices[g.device], params, base.name) for p in base.pools))
        for g in structure.generations)
    return replace(structure, options=options, generations=generations)


def purchase_unit(device: Device) -> int:
    """Devices a pool of ``device`` is bought in (``purchase_unit_devices``: a rack-scale system's GPUs; absent: 1).

    Structural, like the device's ``pipeline_prefill``: not a drawn parameter (whole units are a static grain).

    Parameters
    ----------
    device : Device
        The catalog device.

    Returns
    -------
    int [devices]
        Devices sold together.
    """
    return 1 if device.purchase_unit_devices is None else int(device.purchase_unit_devices.value)


def _shapes(pool: PoolSpec, role: str, model: LLM, device: Device, params: ParamSet, option: str) -> tuple[Shape, ...]:
    """The pinned shape, or the static candidate shapes of the search (:func:`tco.core.serving.parallelism.candidate_shapes`).

    The memory-fit minimum is bounded over the parameter ranges: weights at the low
    (high) parameter count and weight bits over the high (low) usable capacity, plus the
    KV cache of one sequence at base values.
    """
    if pool.data_parallel is not None:
        return (Shape(1, 1, True, pool.data_parallel, pool.micro_batches or 1),)
    if pool.tensor_parallel is not None:
        return (Shape(pool.tensor_parallel, pool.pipeline_stages or 1, bool(pool.expert_parallel)),)
    m, d = model.id, device.id
    weights = [params[named.model_param(m, "params_total")].low * params[named.workload.weight_bits].low / 8.0,
               params[named.model_param(m, "params_total")].high * params[named.workload.weight_bits].high / 8.0]
    tiers = [params[named.tier_param(d, t.name, "capacity_bytes")] for t in device.memory_tiers]
    usable = params[named.device_param(d, "memory_usable_fraction")]
    room = [sum(t.high for t in tiers) * usable.high, sum(t.low for t in tiers) * usable.low]
    output = params[named.workload.output_tokens].value if role != "prefill" else 0.0
    tokens = params[named.workload.prompt_tokens].value + output
    layers = params[named.model_param(m, "layers")].value
    kv_heads = params[named.model_param(m, "kv_heads")].value if model.kv_elements_per_token is None else 1.0
    if model.kv_elements_per_token is None:
        kv = 2.0 * layers * kv_heads * params[named.model_param(m, "head_dim")].value
    else:
        kv = params[named.model_param(m, "kv_elements_per_token")].value
    kv *= params[named.workload.kv_bits].value / 8.0 * tokens
    low, high = (max(math.ceil((w + kv) / r - 1e-12), 1) for w, r in zip(weights, room, strict=True))
    minimum_name = named.pool_param(option, role, "devices_per_replica")
    if minimum_name in params:
        low, high = max(low, int(params[minimum_name].low)), max(high, int(params[minimum_name].high))
    domain = params[named.device_param(d, "scale_up_domain_devices")]
    domains = (int(domain.low), int(domain.high))
    shapes = candidate_shapes(domains, int(layers), int(kv_heads), low, high, moe=model.experts_routed.value > 1,
                              streamed=device.pipeline_prefill == "streamed", latent=model.kv_elements_per_token is not None)
    if model.experts_routed.value > 1 and device.pipeline_prefill != "streamed" and not pool.has_minimum:
        shapes += _wide_shapes(model, params, room[0], kv, domains)
    return shapes


def _wide_shapes(model: LLM, params: ParamSet, room: float, kv: float, domains: tuple[int, int]) -> tuple[Shape, ...]:
    """The wide expert-parallel candidates of a pool (:func:`tco.core.serving.expert.wide_shapes`): from the fewest
    attention ranks whose devices hold a copy of the non-routed weights, their share of the routed experts with the
    redundant ones and one sequence, at the parameters' most favourable values (a candidate that does not fit in a draw
    is masked there); none where one device cannot hold the non-routed weights and a sequence."""
    m = model.id
    total = params[named.model_param(m, "params_total")].low
    active = params[named.model_param(m, "params_active")].low
    experts = params[named.model_param(m, "experts_routed")].value
    per_token = params[named.model_param(m, "experts_per_token")].value
    bits = params[named.workload.weight_bits].low / 8.0
    routed = experts * (total - active) / max(experts - per_token, 1.0) * bits
    redundant = params[named.serving.redundant_expert_share]
    rest = total * bits - routed
    free = room - rest - kv
    if free <= 0.0:
        return ()
    ranks = max(math.ceil(routed * (1.0 + redundant.low) / free - 1e-12), 2)
    return wide_shapes(domains, ranks, int(experts * (1.0 + redundant.value)))


def _generations(spec: ScenarioFile, catalog: Catalog, baseline: Option, devices: dict[str, Device],
                 errors: list[FieldError], edits: dict[str, object]) -> tuple[Generation, ...]:
    """The roadmap devices the baseline may move to (added to ``devices``); the baseline's own
    device is generation 0 when it runs colocated."""
    if spec.roadmap is None:
        return ()
    listed = validated(Roadmap, catalog.roadmap, "roadmap").generations
    chosen = spec.roadmap.generations if spec.roadmap.generations is not None else list(listed)
    out = []
    for i, ident in enumerate(chosen):
        where = f"roadmap.generations[{i}]"
        if ident not in listed:
            errors.append(FieldError(where, ident, f"must be a device of assumptions/roadmap.yaml: {', '.join(listed)}"))
            continue
        device = devices.get(ident) or lookup_entry("device", ident, catalog.devices, spec.devices, Device, where, edits)
        if device.specialized:
            errors.append(FieldError(where, ident, "the baseline's roadmap holds general-purpose devices only"))
            continue
        devices.setdefault(ident, device)
        if not (len(baseline.pools) == 1 and baseline.pools[0].device == ident):
            out.append(Generation(ident, tuple(t.name for t in device.memory_tiers),
                                  purchase_unit_devices=purchase_unit(device)))
    return tuple(out)


def _node_scaled_tiers(spec: ScenarioFile, devices: dict[str, Device]) -> tuple[str, ...] | None:
    """The built device's SRAM tiers when its figures move from ``specs_node`` to ``node`` (None: no move)."""
    program = spec.program
    if program is None or program.specs_node in (None, program.node):
        return None
    return tuple(t.name for t in devices[program.device].memory_tiers if t.name == SRAM_TIER)
