"""Training scenarios (``kind: training``): which clusters train which model on how many tokens.

``training_scenario_from_dict`` validates a training scenario against the catalog and
resolves it into a :class:`TrainingScenario`: the discrete
:class:`~tco.core.training.run.TrainingStructure` and the :class:`~tco.inputs.parameters.ParamSet` of
every named input (token budget, batch, failure and checkpoint figures, per-class training
efficiencies from ``assumptions/training.yaml``, sites from ``assumptions/sites.yaml``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, ValidationError

from tco.core import names as named
from tco.core.names import device_param, model_param, tier_param
from tco.core.training.run import TrainingOption, TrainingStructure, cluster_param
from tco.foundation.errors import FieldError, InputError
from tco.inputs.catalog import (
    LLM,
    MOE_DEVICE_FIELDS,
    STRUCTURAL_DEVICE_FIELDS,
    Catalog,
    Device,
    Economics,
    Strict,
    load_catalog,
    optional_quantities,
    validated,
)
from tco.inputs.catalog_entries import model_and_devices
from tco.inputs.parameters import ParamSet, Q, Quantity, spreads_of
from tco.inputs.scenario import ScenarioEdits
from tco.inputs.scenario_flatten import ParamCollector
from tco.inputs.scenario_resolve import option_name_errors, resolved_params
from tco.inputs.scenario_schema import ScenarioHeader
from tco.inputs.yaml_files import pydantic_errors

#: per-class training quantities (assumptions/training.yaml ``classes``), as device parameters
CLASS_FIELDS = ("training_compute_efficiency", "comm_overlap", "fp8_training_speedup")
#: run quantities (assumptions/training.yaml ``run``), as ``training.<field>`` parameters
RUN_FIELDS = ("failure_rate_per_device_day", "restart_s", "storage_write_bytes_per_s", "checkpoint_bytes_per_param",
              "weight_grad_bytes_per_param", "optimizer_bytes_per_param", "gradient_bytes_per_param", "power_utilization",
              "moe_compute_efficiency", "micro_batch_sequences")
#: site quantities (assumptions/sites.yaml), as ``sites.<id>.<field>`` parameters
SITE_FIELDS = ("electricity_usd_per_kwh", "pue", "construction_usd_per_w", "rtt_to_users_s", "egress_usd_per_gb")


TrainingWorkload = optional_quantities(
    "TrainingWorkload", "What is trained: the token budget and the batch; any run default (RUN_FIELDS) may be overridden here.",
    RUN_FIELDS, __name__, tokens=(Q, ...), seq_len_tokens=(Q, ...), global_batch_tokens=(Q, ...),
    compute_bits=(Q, Quantity(value=16, source="scenario default: BF16 training")))


class ClusterSpec(Strict):
    """A cluster option: one device type, how many."""

    name: str = Field(min_length=1)
    device: str
    cluster_devices: Q
    note: str = ""


class Serving(Strict):
    """The inference workload the trained model serves: siting and second life read it."""

    scenario: str = "default"
    site: str | None = None


class SecondLife(Strict):
    """When the training cluster's devices retire to serving."""

    retire_after_years: Q = Quantity(value=3.0, low=2.0, high=4.0, source="scenario default (estimate: a frontier "
                                     "training cluster is refreshed every 2-4 years, one to two GPU generations)")


class TrainingScenarioFile(ScenarioHeader):
    """The schema of a training scenario YAML file."""

    kind: Literal["training"]
    training: TrainingWorkload
    options: list[ClusterSpec] = Field(min_length=1)
    baseline: str
    site: str | None = None
    serving: Serving = Serving()
    second_life: SecondLife = SecondLife()
    economics: dict[str, Q] = {}
    devices: dict[str, dict[str, Any]] = {}
    models: dict[str, dict[str, Any]] = {}
    set: dict[str, Any] = {}
    uncertainty: dict[str, Any] = {}  # validated by tco.inputs.parameters.checked_spreads
    study: dict[str, Any] | None = None


@dataclass(frozen=True)
class TrainingScenario(ScenarioEdits):
    """A validated training scenario: its structure, named parameters and file contents."""

    structure: TrainingStructure
    spec: TrainingScenarioFile
    kind: str = "training"


def site_param(site: str, name: str) -> str:
    """The parameter name of a site's field.

    Parameters
    ----------
    site : str
        Site id of ``assumptions/sites.yaml``.
    name : str
        Field (``electricity_usd_per_kwh``, ``pue``, ...).

    Returns
    -------
    str
        ``sites.<site>.<name>``.
    """
    return f"sites.{site}.{name}"


def training_scenario_from_dict(data: dict, catalog: Catalog | None = None, path: str | None = None) -> TrainingScenario:
    """Validate and resolve training-scenario data (as read from YAML).

    Parameters
    ----------
    data : dict
        The scenario file's contents (``kind: training``).
    catalog : tco.inputs.catalog.Catalog, optional
        The catalog (default: ``assumptions/``).
    path : str, optional
        The file it came from.

    Returns
    -------
    TrainingScenario
        Its structure (cluster options), named parameters and file contents; an
        :class:`~tco.foundation.errors.InputError` lists every broken rule with its field path.
    """
    try:
        spec = TrainingScenarioFile.model_validate(data)
    except ValidationError as exc:
        raise pydantic_errors(exc) from None
    catalog = catalog or load_catalog()

    errors = option_name_errors([o.name for o in spec.options], spec.baseline)
    classes = catalog.training.get("classes", {})
    sites = catalog.sites.get("sites", {})
    for where, site in (("site", spec.site), ("serving.site", spec.serving.site)):
        if site is not None and site not in sites:
            errors.append(FieldError(where, site, f"is not a known site; known: {', '.join(sorted(sites))}"))
    if errors:
        raise InputError(errors)
    overrides = {d: {k: v for k, v in o.items() if k not in CLASS_FIELDS} for d, o in spec.devices.items()}
    model, devices, edits = model_and_devices(spec, catalog, overrides,
                                              [(opt.device, f"options[{i}].device") for i, opt in enumerate(spec.options)])
    options = []
    for i, opt in enumerate(spec.options):
        device = devices[opt.device]
        if device.calibration_class not in classes:
            errors.append(FieldError(f"options[{i}].device", opt.device,
                                     f"cannot train: its calibration class {device.calibration_class!r} has no entry in "
                                     f"assumptions/training.yaml (classes: {', '.join(sorted(classes))})"))
        options.append(TrainingOption(opt.name, opt.device, tuple(t.name for t in device.memory_tiers), device.specialized))
    if errors:
        raise InputError(errors)
    structure = TrainingStructure(spec.model, tuple(options), spec.baseline, spec.site)
    params, warnings = resolved_params(_parameters(spec, catalog, model, devices), edits, spec.set, spec.uncertainty)
    spec = spec.model_copy(update={"set": {name: params[name].value for name in spec.set},
                                   "uncertainty": spreads_of(params, spec.uncertainty)})
    return TrainingScenario(spec.name, spec.title, spec.description, spec.question, params, structure, spec, path=path,
                            devices=devices, warnings=tuple(warnings))


def _parameters(spec: TrainingScenarioFile, catalog: Catalog, model: LLM, devices: dict[str, Device]) -> ParamSet:
    """Flatten everything the training scenario uses into named parameters, in a stable order."""
    collector = ParamCollector()
    add = collector.add

    run = catalog.training.get("run", {})
    for key in ("tokens", "seq_len_tokens", "global_batch_tokens", "compute_bits"):
        add(named.training.name(key), getattr(spec.training, key))
    for key in RUN_FIELDS:
        add(named.training.name(key), getattr(spec.training, key) or run.get(key), "assumptions/training.yaml")
    economics = validated(Economics, {**catalog.economics, **{k: v.model_dump() for k, v in spec.economics.items()}},
                          "economics")
    for key in Economics.model_fields:
        add(named.economics.name(key), getattr(economics, key))
    for key in ("params_total", "params_active", "layers", "attention_dim", "hidden_size", "experts_routed",
                "experts_per_token"):
        add(model_param(model.id, key), getattr(model, key))
    classes = catalog.training.get("classes", {})
    for device in devices.values():
        for tier in device.memory_tiers:
            add(tier_param(device.id, tier.name, "capacity_bytes"), tier.capacity_bytes)
        for key in Device.model_fields:
            value = getattr(device, key)
            # a serving replica's expert all-to-alls are not a training step's terms, the purchase unit is structure
            skipped = key == "peak_flops_4bit" or key in MOE_DEVICE_FIELDS or key in STRUCTURAL_DEVICE_FIELDS
            if isinstance(value, Quantity) and not skipped:
                add(device_param(device.id, key), value)
        overrides = spec.devices.get(device.id, {})
        for key in CLASS_FIELDS:
            add(device_param(device.id, key), overrides.get(key, classes[device.calibration_class].get(key)),
                "assumptions/training.yaml")
    for option in spec.options:
        add(cluster_param(option.name), option.cluster_devices)
    all_sites = catalog.sites.get("sites", {})
    if all_sites:
        add("sites.facility_life_years", catalog.sites.get("facility_life_years"), "assumptions/sites.yaml")
        add("sites.bytes_per_token", catalog.sites.get("bytes_per_token"), "assumptions/sites.yaml")
    for site in all_sites:
        for key in SITE_FIELDS:
            add(site_param(site, key), catalog.sites["sites"][site].get(key), "assumptions/sites.yaml")
    add(named.second_life.retire_after_years, spec.second_life.retire_after_years)
    return collector.param_set()
