"""Scenario files: what is compared, under which workload, against which baseline.

``load_scenario(path_or_name)`` validates a scenario against the catalog and resolves it
into a :class:`Scenario`: the discrete :class:`~tco.core.structure.Structure` the core
needs, and the :class:`~tco.params.ParamSet` of every named input it uses.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from .catalog import (
    LLM,
    NRE_PARTS,
    Catalog,
    Device,
    Economics,
    Link,
    NodeCosts,
    ProgramDefaults,
    Roadmap,
    Serving,
    SoftwarePorting,
    Strict,
    load_catalog,
    optional_quantities,
    validated,
)
from .core import structure as naming
from .core.nodes import NODE_FIELDS
from .core.parallelism import Shape, candidate_shapes
from .core.structure import Generation, Option, Pool, Structure
from .errors import FieldError, FieldWarning, InputError
from .params import Param, ParamSet, Q, Quantity, cross_field_errors, outside_range_message, param_from_quantity
from .yamlio import bundled_or_path, pydantic_errors, read_yaml

SCENARIOS_DIR = Path(__file__).resolve().parents[1] / "scenarios"
#: names of the fleet-analysis settings start with it (tco.dynamics.config.PREFIX)
DYNAMICS_PREFIX = "fleet_dynamics."
DEFAULT_SCENARIO = "default"

VLLM_SOURCE = "vLLM engine argument max_num_seqs default 256 (docs.vllm.ai, engine args)"
WORKLOAD_DEFAULTS = {
    "peak_to_mean": Quantity(value=1.0, source="scenario default: flat demand"),
    "max_batch": Quantity(value=256, low=64, high=1024, source=VLLM_SOURCE),
    "weight_bits": Quantity(value=8, source="scenario default: FP8/INT8 weights, common in production serving"),
    "kv_bits": Quantity(value=8, source="scenario default: FP8 KV cache"),
    "compute_bits": Quantity(value=8, source="scenario default: FP8/INT8 arithmetic"),
    "demand_growth_per_year": Quantity(value=0.0, source="scenario default: the same demand every year of the horizon"),
    "prompt_tokens_scv": Quantity(value=0.0, grade="C",
                                  source="scenario default: every prompt at the mean length (the model before the length "
                                         "spread was a parameter; a chat trace gives 0.79, the bundled scenarios state "
                                         "theirs: docs/model.md 'Queueing')"),
}
#: the on-die SRAM tier of a built device: the tier a change of process node rescales
SRAM_TIER = "sram"


class PoolSpec(Strict):
    """A pool's device; optionally a minimum replica size or a pinned replica shape (else the shape is searched)."""

    device: str
    devices_per_replica: Q | None = None
    tensor_parallel: int | None = Field(None, ge=1, le=100000)
    pipeline_stages: int | None = Field(None, ge=1, le=100000)
    expert_parallel: bool | None = None

    @model_validator(mode="after")
    def _pinned(self):
        if self.tensor_parallel is None and (self.pipeline_stages is not None or self.expert_parallel is not None):
            raise ValueError("pin a shape with tensor_parallel (and optionally pipeline_stages, expert_parallel)")
        return self


class OptionSpec(Strict):
    """A fleet option: ``colocated``, or ``prefill`` + ``decode`` + ``kv_link``."""

    name: str = Field(min_length=1)
    colocated: PoolSpec | None = None
    prefill: PoolSpec | None = None
    decode: PoolSpec | None = None
    kv_link: str | None = None
    note: str = ""

    @model_validator(mode="after")
    def _one_shape(self):
        split = self.prefill is not None or self.decode is not None
        if self.colocated is not None and split:
            raise ValueError("give either colocated, or prefill and decode, not both")
        if self.colocated is None and not (self.prefill and self.decode):
            raise ValueError("a disaggregated option needs both prefill and decode")
        if split and not self.kv_link:
            raise ValueError("a disaggregated option needs a kv_link (see assumptions/links.yaml)")
        if self.colocated is not None and self.kv_link:
            raise ValueError("kv_link applies to disaggregated options only")
        return self

    def pools(self) -> dict[str, PoolSpec]:
        return {"colocated": self.colocated} if self.colocated else {"prefill": self.prefill, "decode": self.decode}


Workload = optional_quantities(
    "Workload", "What the fleet serves: demand, lengths, latency targets, half-life; the rest default (WORKLOAD_DEFAULTS); "
    "demand grows by ``demand_growth_per_year`` or follows ``demand_by_year`` (multiples of year 1).",
    WORKLOAD_DEFAULTS, __name__, **{key: (Q, ...) for key in ("requests_per_s", "prompt_tokens", "output_tokens",
                                                            "ttft_target_s", "tpot_target_s", "half_life_years")},
    demand_by_year=(list[Q] | None, None))


class Die(Strict):
    """Unit cost built up from silicon instead of given as the device's ``price_usd``."""

    die_area_mm2: Q
    package_memory_board_usd: Q
    wafer_price_usd: Q | None = None
    defect_density_per_cm2: Q | None = None


class Program(Strict):
    """The scenario builds its own chip at ``node``: NRE by process node, spent during design and
    shared with ``external_units`` sold to others; the device's figures are given at ``specs_node``
    (default: ``node``) and scaled to ``node`` (:mod:`tco.core.nodes`)."""

    device: str
    node: str
    specs_node: str | None = None
    external_units: Q | None = None
    vendor_gross_margin: Q | None = None
    time_to_market_years: Q | None = None
    tapeout_to_deployment_years: Q | None = None
    nre: dict[str, Q] = {}
    die: Die | None = None

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data):
        if isinstance(data, dict) and "volume_units" in data:
            raise ValueError("volume_units is gone: the program's volume is this fleet's own units (computed) plus "
                             "external_units, the units sold to others; give external_units instead")
        return data


class RoadmapSpec(Strict):
    """The baseline fleet follows the general-purpose roadmap (``assumptions/roadmap.yaml``).

    ``generations`` the roadmap devices it may move to (default: every general device listed);
    ``policy`` when it moves (:data:`tco.core.generations.POLICIES`).
    """

    policy: Literal["keep", "at_replacement", "each_generation", "when_cheaper"] = "at_replacement"
    generations: list[str] | None = None


class Fleet(Strict):
    sizing: Literal["whole", "continuous"] = "whole"


ServingSpec = optional_quantities(
    "ServingSpec", "How the serving stack schedules and how latency targets are read; numbers default to "
    "assumptions/serving.yaml (tco.catalog.Serving).", Serving.model_fields, __name__,
    policy=(Literal["chunked", "prefill_first"], "chunked"),
    prefill_queue=(Literal["shared", "dispatched"], "shared"))


class ScenarioHeader(Strict):
    """What every scenario file (inference or training) opens with: its kind, name, the words around it, the model."""

    kind: str
    name: str = Field(min_length=1)
    title: str = ""
    description: str = ""
    question: str = ""
    model: str


class ScenarioFile(ScenarioHeader):
    """The schema of a scenario YAML file."""

    kind: Literal["inference"] = "inference"
    workload: Workload
    options: list[OptionSpec] = Field(min_length=1)
    baseline: str
    fleet: Fleet = Fleet()
    serving: ServingSpec = ServingSpec()
    economics: dict[str, Any] = {}  # validated against the catalog's economics (tco.catalog.Economics)
    devices: dict[str, dict[str, Any]] = {}
    models: dict[str, dict[str, Any]] = {}
    links: dict[str, dict[str, Any]] = {}
    program: Program | None = None
    roadmap: RoadmapSpec | None = None
    set: dict[str, Any] = {}
    study: dict[str, Any] | None = None
    fleet_dynamics: dict[str, Any] | None = None  # validated by tco.dynamics.config


@dataclass(frozen=True)
class ScenarioEdits:
    """What every resolved scenario (inference or training) offers: its words, base values, ``--set`` edits, its file."""

    name: str
    title: str
    description: str
    question: str
    #: the named inputs the model reads
    params: ParamSet
    _: KW_ONLY
    path: str | None = None
    devices: dict[str, Device] = field(default_factory=dict)
    #: inputs accepted but worth a look: values outside their sourced range
    warnings: tuple[FieldWarning, ...] = ()

    def values(self) -> dict[str, float]:
        return self.params.values()

    def with_values(self, updates: Mapping[str, object]):
        """This scenario with new base values (``--set``, the app, the API), read and checked by
        :func:`tco.params.checked_edits` (the same rules as ``set:`` in a file); warnings are added
        to :attr:`warnings`. Names under ``fleet_dynamics.`` edit the fleet-analysis settings
        (``dynamics``), the others the model's parameters."""
        if not updates:
            return self
        settings, inputs = split_settings(updates)
        changed: dict[str, ParamSet] = {}
        warnings: list[FieldWarning] = []
        for attr, part in (("params", inputs), ("dynamics", settings)):
            if part:
                changed[attr], found = getattr(self, attr, ParamSet(())).edited(part)
                warnings += found
        edits = {name: changed[attr][name].value for attr, part in (("params", inputs), ("dynamics", settings))
                 for name in part}
        spec = self.spec.model_copy(update={"set": {**self.spec.set, **edits}})
        return replace(self, **changed, spec=spec, warnings=self.warnings + tuple(warnings))

    def to_dict(self) -> dict:
        """The scenario file as plain data (loadable again), edits in ``set`` included."""
        return self.spec.model_dump(mode="json", by_alias=True, exclude_none=True)


@dataclass(frozen=True)
class Scenario(ScenarioEdits):
    """A validated scenario: its structure, its named parameters and its file contents."""

    structure: Structure
    spec: ScenarioFile
    #: catalog figures shown beside the inputs but never read by the model (device prices,
    #: architecture facts of the model): named like parameters, not in :attr:`params`
    reference: ParamSet = field(default_factory=lambda: ParamSet(()))
    #: settings of the fleet analyses as named parameters (``fleet_dynamics.<analysis>.<setting>``,
    #: assumptions/fleet_dynamics.yaml): read by :mod:`tco.dynamics`, never by the cost model, so
    #: not in :attr:`params` and not drawn by its studies
    dynamics: ParamSet = field(default_factory=lambda: ParamSet(()))


def split_settings(updates: Mapping[str, object]) -> tuple[dict[str, object], dict[str, object]]:
    """``(fleet-analysis settings, the rest)`` of named edits: names under ``fleet_dynamics.`` first.

    Parameters
    ----------
    updates : Mapping[str, object]
        Edits by dotted name (a scenario's ``set:``).

    Returns
    -------
    settings : dict[str, object]
        The edits of fleet-analysis settings.
    rest : dict[str, object]
        The edits of the cost model's parameters.
    """
    settings = {k: v for k, v in updates.items() if isinstance(k, str) and k.startswith(DYNAMICS_PREFIX)}
    return settings, {k: v for k, v in updates.items() if k not in settings}


def scenario_path(name_or_path: str | Path | None) -> Path:
    """A bundled scenario by name (``default``) or a file path.

    Parameters
    ----------
    name_or_path : str or Path or None
        A bundled scenario's name, a path, or None for the default scenario.

    Returns
    -------
    Path
        The scenario file.
    """
    return bundled_or_path(DEFAULT_SCENARIO if name_or_path is None else name_or_path, SCENARIOS_DIR, "SCENARIO", "scenario")


def bundled_scenarios(kind: str = "inference") -> list[str]:
    """Names of the bundled scenarios of one ``kind`` (``inference`` or ``training``).

    Parameters
    ----------
    kind : str
        ``inference`` or ``training``.

    Returns
    -------
    list of str
        Scenario names, sorted.
    """
    return sorted(p.stem for p in SCENARIOS_DIR.glob("*.yaml") if (read_yaml(p) or {}).get("kind", "inference") == kind)


def load_scenario(name_or_path: str | Path | None = None, catalog: Catalog | None = None) -> Scenario:
    """Read, validate and resolve a scenario file (bundled name or path).

    A file with ``kind: training`` resolves to a
    :class:`~tco.training_scenario.TrainingScenario` instead.

    Parameters
    ----------
    name_or_path : str or Path or None
        A bundled scenario's name, a path, or None for the default scenario.
    catalog : Catalog or None
        The catalog to resolve against; None: ``assumptions/``.

    Returns
    -------
    Scenario
        Its structure, named parameters (SI units), fleet-analysis settings and warnings.

    Raises
    ------
    InputError
        Every broken rule of the file, each with its field path.
    """
    path = scenario_path(name_or_path)
    data = read_yaml(path)
    return scenario_from_dict(data, catalog, path=str(path))


def scenario_from_dict(data: object, catalog: Catalog | None = None, path: str | None = None) -> Scenario:
    """Validate and resolve scenario data (as read from YAML).

    Parameters
    ----------
    data : object
        The scenario file's contents.
    catalog : Catalog or None
        The catalog to resolve against; None: ``assumptions/``.
    path : str or None
        Where the data came from, kept on the scenario.

    Returns
    -------
    Scenario
        The resolved scenario (a training scenario for ``kind: training``).

    Raises
    ------
    InputError
        Every broken rule, each with its field path.
    """
    if not isinstance(data, dict):
        raise InputError.one(path or "<scenario>", type(data).__name__, "a scenario must be a YAML mapping")
    if data.get("kind") == "training":
        from .training_scenario import training_scenario_from_dict

        return training_scenario_from_dict(data, catalog, path)
    try:
        spec = ScenarioFile.model_validate(data)
    except ValidationError as exc:
        raise pydantic_errors(exc) from None
    return _resolve(spec, catalog or load_catalog(), path)


def _merge(entry: dict, overrides: dict, path: str, edits: dict[str, object]) -> dict:
    """Catalog entry with scenario overrides at ``path``.

    A mapping replaces the catalog's quantity (a new value with its own range and source); a
    bare value over a catalog quantity is an edit of its base value, collected in ``edits``
    under its parameter name and applied like ``set:`` (:func:`tco.params.checked_edits`), so
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


def resolved_params(params: ParamSet, edits: Mapping[str, object], set_: Mapping[str, object]) -> tuple[ParamSet,
                                                                                                         list[FieldWarning]]:
    """A scenario's parameters with the cross-field rules checked, then its overrides applied.

    The rules are checked on the catalog's values; the bare-number overrides and ``set:``
    are then applied as edits (:meth:`tco.params.ParamSet.edited`).

    Parameters
    ----------
    params : ParamSet
        The parameters at the catalog's values.
    edits : Mapping[str, object]
        Bare-number overrides of the file.
    set_ : Mapping[str, object]
        The file's ``set:`` edits.

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
    return params.edited({**edits, **set_})


def option_name_errors(names: list[str], baseline: str) -> list[FieldError]:
    """Broken rules of a scenario's option names: each unique, and the baseline one of them.

    Parameters
    ----------
    names : list of str
        The options' names, in order.
    baseline : str
        The baseline's name.

    Returns
    -------
    list of FieldError
        Every broken rule (empty when the names are fine).
    """
    errors = [FieldError(f"options[{i}].name", name, "option names must be unique")
              for i, name in enumerate(names) if names.index(name) != i]
    if baseline not in names:
        errors.append(FieldError("baseline", baseline, f"must name one of the options: {', '.join(names)}"))
    return errors


def _resolve(spec: ScenarioFile, catalog: Catalog, path: str | None) -> Scenario:
    errors = option_name_errors([o.name for o in spec.options], spec.baseline)
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
                              streamed_prefill=device.pipeline_prefill == "streamed"))
        if opt.kv_link and opt.kv_link not in catalog.links and opt.kv_link not in spec.links:
            errors.append(FieldError(f"options[{i}].kv_link", opt.kv_link,
                                     f"is not a known link; known: {', '.join(sorted(catalog.links))}"))
        options.append(Option(opt.name, tuple(pools), opt.kv_link))
    baseline = next(o for o in options if o.name == spec.baseline)
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
    if errors:
        raise InputError(errors)

    structure = Structure(spec.model, tuple(options), spec.baseline, spec.fleet.sizing == "whole",
                          spec.program.device if spec.program else None, policy=spec.serving.policy,
                          prefill_queue=spec.serving.prefill_queue, moe=model.experts_routed.value > 1, generations=generations,
                          refresh_policy=spec.roadmap.policy if spec.roadmap else "keep",
                          demand_series_years=len(spec.workload.demand_by_year or ()),
                          node_scaled_tiers=_node_scaled_tiers(spec, devices))
    settings, set_ = split_settings(spec.set)
    params, warnings = resolved_params(_parameters(spec, catalog, model, devices, edits, structure), edits, set_)
    dynamics, dynamics_warnings = _dynamics_parameters(spec.fleet_dynamics, catalog, settings)
    warnings += dynamics_warnings
    warnings += _economics_warnings(spec, catalog, params)
    structure = _with_shapes(structure, spec, model, devices, params)
    spec = spec.model_copy(update={"set": {name: (dynamics if name in settings else params)[name].value for name in spec.set}})
    return Scenario(spec.name, spec.title, spec.description, spec.question, params, structure, spec, path=path,
                    devices=devices, warnings=tuple(warnings), reference=_reference(model, devices), dynamics=dynamics)

def _dynamics_parameters(block: dict | None, catalog: Catalog, set_: Mapping[str, object]) -> tuple[ParamSet,
                                                                                                  list[FieldWarning]]:
    """The fleet-analysis settings as named parameters, with the ``fleet_dynamics:`` block's
    numbers and the ``set:`` edits applied.

    A bare number in the block edits the catalog's base value (its sourced range stays; outside
    it, a warning), a mapping replaces the quantity (a value with its own range and source),
    like a device or model override (:func:`_merge`). The block's other settings (options,
    policies, grids) are validated when an analysis runs (:func:`tco.dynamics.config.fleet_config`).
    """
    from .dynamics.config import NAMED_SETTINGS, setting_name

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



def _economics_warnings(spec, catalog: Catalog, params: ParamSet) -> list[FieldWarning]:
    """A bare number under ``economics:`` replaces the catalog's quantity (a fixed value of the
    scenario's own); one outside the catalog's sourced range gets the same warning as an edit."""
    bare = [key for key, value in spec.economics.items() if not isinstance(value, dict)]
    if not bare:
        return []
    sourced = validated(Economics, catalog.economics, "economics")
    warnings = []
    for key in bare:
        name = f"economics.{key}"
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


def _shapes(pool: PoolSpec, role: str, model: LLM, device: Device, params: ParamSet, option: str) -> tuple[Shape, ...]:
    """The pinned shape, or the static candidate shapes of the search (:func:`tco.core.parallelism.candidate_shapes`).

    The memory-fit minimum is bounded over the parameter ranges: weights at the low
    (high) parameter count and weight bits over the high (low) usable capacity, plus the
    KV cache of one sequence at base values.
    """
    if pool.tensor_parallel is not None:
        return (Shape(pool.tensor_parallel, pool.pipeline_stages or 1, bool(pool.expert_parallel)),)
    m, d = model.id, device.id
    weights = [params[naming.model_param(m, "params_total")].low * params["workload.weight_bits"].low / 8.0,
               params[naming.model_param(m, "params_total")].high * params["workload.weight_bits"].high / 8.0]
    tiers = [params[naming.tier_param(d, t.name, "capacity_bytes")] for t in device.memory_tiers]
    usable = params[naming.device_param(d, "memory_usable_fraction")]
    room = [sum(t.high for t in tiers) * usable.high, sum(t.low for t in tiers) * usable.low]
    tokens = params["workload.prompt_tokens"].value + (params["workload.output_tokens"].value if role != "prefill" else 0.0)
    layers = params[naming.model_param(m, "layers")].value
    kv_heads = params[naming.model_param(m, "kv_heads")].value if model.kv_elements_per_token is None else 1.0
    if model.kv_elements_per_token is None:
        kv = 2.0 * layers * kv_heads * params[naming.model_param(m, "head_dim")].value
    else:
        kv = params[naming.model_param(m, "kv_elements_per_token")].value
    kv *= params["workload.kv_bits"].value / 8.0 * tokens
    low, high = (max(math.ceil((w + kv) / r - 1e-12), 1) for w, r in zip(weights, room, strict=True))
    minimum_name = naming.pool_param(option, role, "devices_per_replica")
    if minimum_name in params:
        low, high = max(low, int(params[minimum_name].low)), max(high, int(params[minimum_name].high))
    domain = params[naming.device_param(d, "scale_up_domain_devices")]
    return candidate_shapes((int(domain.low), int(domain.high)), int(layers), int(kv_heads), low, high,
                            moe=model.experts_routed.value > 1, streamed=device.pipeline_prefill == "streamed",
                            latent=model.kv_elements_per_token is not None)

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
            out.append(Generation(ident, tuple(t.name for t in device.memory_tiers)))
    return tuple(out)


def _node_scaled_tiers(spec: ScenarioFile, devices: dict[str, Device]) -> tuple[str, ...] | None:
    """The built device's SRAM tiers when its figures move from ``specs_node`` to ``node`` (None: no move)."""
    program = spec.program
    if program is None or program.specs_node in (None, program.node):
        return None
    return tuple(t.name for t in devices[program.device].memory_tiers if t.name == SRAM_TIER)


def _reference(model: LLM, devices: dict[str, Device]) -> ParamSet:
    """Reference figures (prices, architecture facts) as named, domain-checked quantities.

    Named like parameters (``devices.b200.prices.street_usd``, ``models.gpt-oss-120b.architecture.
    sliding_window_tokens``) so ``tco params`` can list them beside the inputs; they are not in
    the scenario's :class:`ParamSet`, so no study can draw or sweep them.
    """
    blocks = [(f"models.{model.id}.architecture", model.architecture)]
    blocks += [(f"devices.{d.id}.prices", d.prices) for d in devices.values()]
    collected, errors = [], []
    for prefix, block in blocks:
        for key in type(block).model_fields:
            q = getattr(block, key)
            if q is None:
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


def _parameters(spec: ScenarioFile, catalog: Catalog, model: LLM, devices: dict[str, Device],
                edits: dict[str, object], structure: Structure) -> ParamSet:
    """Flatten everything the scenario uses into named parameters, in a stable order."""
    collector = ParamCollector()
    add, errors = collector.add, collector.errors

    workload = spec.workload
    for key in Workload.model_fields:
        if key != "demand_by_year":
            add(f"workload.{key}", getattr(workload, key) or WORKLOAD_DEFAULTS.get(key))
    for year, multiple in enumerate(workload.demand_by_year or (), start=1):
        add(naming.demand_year_param(year), multiple)
    economics = validated(Economics, {**catalog.economics, **spec.economics}, "economics")
    for key in Economics.model_fields:
        add(f"economics.{key}", getattr(economics, key))
    overrides = {k: v.model_dump() for k in Serving.model_fields if (v := getattr(spec.serving, k)) is not None}
    serving = validated(Serving, {**catalog.serving, **overrides}, "serving")
    for key in Serving.model_fields:
        add(f"serving.{key}", getattr(serving, key))
    for key in ("params_total", "params_active", "layers", "kv_heads", "head_dim", "attention_dim", "hidden_size",
                "experts_routed", "experts_per_token", "kv_elements_per_token", "context_max_tokens"):
        if key in ("kv_heads", "head_dim") and model.kv_elements_per_token is not None:
            continue
        add(naming.model_param(model.id, key), getattr(model, key))
    for device in devices.values():
        for tier in device.memory_tiers:
            add(naming.tier_param(device.id, tier.name, "capacity_bytes"), tier.capacity_bytes)
            add(naming.tier_param(device.id, tier.name, "bandwidth_bytes_per_s"), tier.bandwidth_bytes_per_s)
        for key in Device.model_fields:
            value = getattr(device, key)
            if key == "peak_flops_4bit" and value is None:
                value = device.peak_flops_8bit.model_copy(update={"note": "no 4-bit unit: the 8-bit figure applies"})
            if key == "software_port_usd":
                value = _software_port(device, catalog, structure)
            if isinstance(value, Quantity):
                add(naming.device_param(device.id, key), value)
    links_used = sorted({o.kv_link for o in spec.options if o.kv_link})
    for link_id in links_used:
        link = lookup_entry("link", link_id, catalog.links, spec.links, Link, "kv_link", edits)
        for key in ("bandwidth_bytes_per_s", "latency_s", "port_cost_usd", "port_power_w"):
            add(naming.link_param(link_id, key), getattr(link, key))
    for option in spec.options:
        for role, pool in option.pools().items():
            add(naming.pool_param(option.name, role, "devices_per_replica"), pool.devices_per_replica)
    if spec.program is not None:
        _program_parameters(spec.program, catalog, add, errors, structure)
    if structure.generations:
        roadmap = validated(Roadmap, catalog.roadmap, "roadmap")
        add("roadmap.start_year", roadmap.start_year)
        add("roadmap.cost_halving_years", roadmap.cost_halving_years)
        base = structure.option(structure.baseline)
        listed = [base.pools[0].device] if len(base.pools) == 1 and base.pools[0].device in roadmap.generations else []
        for device in (*listed, *(g.device for g in structure.generations)):
            add(naming.roadmap_param(device, "release_year"), roadmap.generations[device].release_year)
    return collector.param_set()


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
        add(f"program.{key}", getattr(program, key) or getattr(defaults, key))
    add("program.time_to_market_years", program.time_to_market_years or node.time_to_market_years)
    for part in NRE_PARTS:
        add(f"program.nre.{part}", program.nre.get(part) or getattr(node, part))
    if structure.node_scaled_tiers is not None:
        specs = validated(NodeCosts, catalog.nodes[program.specs_node], f"nodes.{program.specs_node}")
        for key in NODE_FIELDS:
            add(f"program.{key}", getattr(node, key))
            add(f"program.specs.{key}", getattr(specs, key))
    if program.die is not None:
        add("program.die_area_mm2", program.die.die_area_mm2)
        add("program.package_memory_board_usd", program.die.package_memory_board_usd)
        add("program.wafer_price_usd", program.die.wafer_price_usd or node.wafer_price_usd)
        add("program.defect_density_per_cm2", program.die.defect_density_per_cm2 or node.defect_density_per_cm2)
