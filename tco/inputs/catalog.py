"""The catalog of sourced defaults in ``assumptions/``: devices, models, links, economics, serving, NRE,
the fleet analyses' settings.

Every number there is a quantity with value, low, high, source and date
(``assumptions/README.md``). Entries are validated when a scenario uses them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, model_validator

from tco.foundation.errors import InputError
from tco.inputs.parameters import Q
from tco.inputs.yaml_files import pydantic_errors, read_yaml

ASSUMPTIONS_DIR = Path(os.environ.get("TCO_ASSUMPTIONS", Path(__file__).resolve().parents[2] / "assumptions"))


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True, allow_inf_nan=False)


def optional_quantities(name: str, doc: str, fields: Iterable[str], module: str = __name__, **declared) -> type[Strict]:
    """A :class:`Strict` schema whose ``fields`` are quantities that may each be left out (None).

    They follow the ``declared`` fields: the one declaration of a list of names kept
    elsewhere (a catalog block's fields, a run's defaults, the scenario's optional workload
    fields).

    Parameters
    ----------
    name : str
        The class name.
    doc : str
        Its docstring.
    fields : Iterable[str]
        Names of the optional quantities.
    module : str
        Where the class is importable under ``name`` (scenarios are pickled to worker processes).
    **declared : tuple
        Fields declared before them, ``field=(type, default)`` (``...`` for required).

    Returns
    -------
    type[Strict]
        The schema class.
    """
    return create_model(name, __base__=Strict, __doc__=doc, __module__=module, **declared,
                        **{field: (Q | None, None) for field in fields})


class MemoryTier(Strict):
    name: str
    capacity_bytes: Q
    bandwidth_bytes_per_s: Q


Prices = optional_quantities("Prices", """Published prices of a device, shown beside ``price_usd`` but never read by the model.

    ``price_usd`` is the one number the model uses; its ``note`` says which of these it
    takes and why. These are reference figures (``tco params`` lists them as such) and
    are not drawn by tornado, Monte Carlo or Sobol.
    """, ("list_usd", "street_usd", "cogs_usd", "rental_usd_per_hour"))


class Device(Strict):
    """An accelerator: memory tiers (fastest first), compute, power, price, life."""

    id: str
    name: str
    device_class: Literal["general", "specialized"] = Field(alias="class")
    calibration_class: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    status: Literal["shipping", "announced", "template"]
    vendor: str = ""
    memory_tiers: list[MemoryTier] = Field(min_length=1)
    peak_flops_16bit: Q
    peak_flops_8bit: Q
    peak_flops_4bit: Q | None = None
    chip_to_chip_bandwidth_bytes_per_s: Q
    scale_up_domain_devices: Q
    scale_out_bandwidth_bytes_per_s: Q
    sync_latency_s: Q
    cycle_overhead_s: Q | None = None  # fixed time per scheduler iteration (absent: 0)
    #: how a pipelined replica carries a prompt through its stages: as whole chunks in micro-batches (GPU serving
    #: stacks), or streamed token by token through a layer pipeline (dataflow parts); tco.core.serving.cycles.interference_lines
    pipeline_prefill: Literal["micro_batch", "streamed"] = "micro_batch"
    collective_efficiency: Q | None = None  # share of the link bandwidth the collectives reach (absent: 1)
    #: share of the link bandwidth the collectives of prompt tokens reach (absent: collective_efficiency)
    prefill_collective_efficiency: Q | None = None
    expert_compute_efficiency: Q | None = None  # the routed-expert GEMMs' share of the dense efficiency (absent: 1)
    all_to_all_efficiency: Q | None = None  # share of a link's bandwidth an expert dispatch or combine reaches (absent: 1)
    all_to_all_latency_s: Q | None = None  # fixed time of one expert dispatch or combine (absent: sync_latency_s)
    purchase_unit_devices: Q | None = None  # devices sold together, a rack-scale system (absent: 1)
    tdp_w: Q
    idle_power_w: Q
    host_power_w: Q
    price_usd: Q
    system_overhead_usd: Q
    compute_efficiency: Q
    bandwidth_efficiency: Q
    memory_usable_fraction: Q
    useful_life_years: Q
    residual_value_fraction: Q
    residual_efficiency: Q
    reauthoring_usd_per_shift: Q
    software_port_usd: Q | None = None
    prices: Prices = Prices()
    note: str = ""

    @model_validator(mode="after")
    def _consistent(self):
        """Unique tier names. Rules between values (idle <= TDP, tiers fastest first) are checked on the
        resolved parameters with every edit applied (:func:`tco.inputs.parameters.cross_field_errors`)."""
        names = [t.name for t in self.memory_tiers]
        if len(set(names)) != len(names):
            raise ValueError(f"memory tier names must be unique, got {names}")
        return self

    @property
    def specialized(self) -> bool:
        return self.device_class == "specialized"


Architecture = optional_quantities("Architecture", """Architecture facts of a model the core does not read yet (shown,
    never drawn).

    They record what a published config says beyond the fields the roofline uses, so a
    later core can model them: shared experts, MoE layers interleaved with dense ones,
    sliding-window or chunked attention on some layers, latent attention ranks and the
    number format the weights are released in.
    """, ("vocab_size", "attention_heads", "shared_experts", "sliding_window_tokens", "sliding_window_layers",
          "kv_lora_rank", "qk_rope_head_dim", "native_weight_bits"))


class LLM(Strict):
    """A transformer model: sizes that set weight bytes, KV bytes and FLOPs."""

    id: str
    name: str
    params_total: Q
    params_active: Q
    layers: Q
    kv_heads: Q | None = None
    head_dim: Q | None = None
    attention_dim: Q
    hidden_size: Q
    experts_routed: Q = 1
    experts_per_token: Q = 1
    kv_elements_per_token: Q | None = None
    moe_layers: Q | None = None  # layers with routed experts (absent: every layer); their all-to-alls
    context_max_tokens: Q
    architecture: Architecture = Architecture()
    note: str = ""

    @model_validator(mode="after")
    def _consistent(self):
        """KV given one way or the other; rules between values are :func:`tco.inputs.parameters.cross_field_errors`."""
        if self.kv_elements_per_token is None and (self.kv_heads is None or self.head_dim is None):
            raise ValueError("give kv_heads and head_dim, or kv_elements_per_token for latent attention")
        return self


class Link(Strict):
    """A KV-cache transfer link between pools, per port."""

    id: str = ""
    name: str = ""
    bandwidth_bytes_per_s: Q
    latency_s: Q
    port_cost_usd: Q
    port_power_w: Q
    note: str = ""


class Economics(Strict):
    discount_rate: Q
    horizon_years: Q
    electricity_usd_per_kwh: Q
    pue: Q
    facility_usd_per_kw_month: Q
    maintenance_fraction_per_year: Q


class Serving(Strict):
    """Serving-stack defaults (``assumptions/serving.yaml``); a scenario's ``serving:`` block overrides them."""

    percentile: Q
    token_budget_tokens: Q
    memory_compute_overlap: Q
    phase_overlap: Q
    comm_overlap: Q
    collective_bits: Q
    dispatch_bits: Q
    expert_imbalance: Q
    redundant_expert_share: Q
    micro_batch_overlap: Q
    prefix_cache_hbm_fraction: Q
    host_dram_cache_bytes_per_device: Q
    host_dram_cache_bandwidth_bytes_per_s: Q
    ssd_cache_bytes_per_device: Q
    ssd_cache_bandwidth_bytes_per_s: Q


#: the serving settings only a mixture-of-experts model reads (a dense model's scenario does not list them)
MOE_SERVING_FIELDS = ("dispatch_bits", "expert_imbalance", "redundant_expert_share", "micro_batch_overlap")
#: the serving settings of each prefix-cache tier (``serving.prefix_cache_tier``), read only where the workload reuses
#: prefixes (``workload.prefix_hit_fraction`` given) and its cache lives there (tco.core.serving.prefix_cache)
CACHE_SERVING_FIELDS = {"hbm": ("prefix_cache_hbm_fraction",),
                        "host_dram": ("host_dram_cache_bytes_per_device", "host_dram_cache_bandwidth_bytes_per_s"),
                        "ssd": ("ssd_cache_bytes_per_device", "ssd_cache_bandwidth_bytes_per_s")}


class Speculation(Strict):
    """The sourced defaults of one speculation method (``assumptions/speculation.yaml``); an option's
    ``speculation:`` block overrides them."""

    draft_tokens: Q
    acceptance_rate: Q
    draft_cost_fraction: Q
#: the device fields only a mixture-of-experts model reads (its expert all-to-alls; a dense model's scenario does not
#: list them)
MOE_DEVICE_FIELDS = ("all_to_all_efficiency", "all_to_all_latency_s")
#: device fields that are structure, not parameters (read at resolve time: a static grain of the fleet)
STRUCTURAL_DEVICE_FIELDS = ("purchase_unit_devices",)


class NodeCosts(Strict):
    """NRE parts, wafer economics and scaling figures of one process node."""

    design_usd: Q
    verification_usd: Q
    masks_usd: Q
    ip_usd: Q
    software_usd: Q
    wafer_price_usd: Q
    defect_density_per_cm2: Q
    time_to_market_years: Q
    logic_density_mtr_per_mm2: Q
    sram_bitcell_um2: Q
    relative_energy_per_op: Q
    note: str = ""


class ProgramDefaults(Strict):
    """Defaults of a chip program that do not depend on the node (``assumptions/program.yaml``)."""

    external_units: Q
    vendor_gross_margin: Q
    tapeout_to_deployment_years: Q
    nre_scale: Q
    respin_probability: Q
    respin_slip_years: Q


class RoadmapEntry(Strict):
    """A general-purpose device on the roadmap: when it is (or is announced to be) available."""

    release_year: Q
    note: str = ""


class Roadmap(Strict):
    """The general-purpose roadmap (``assumptions/roadmap.yaml``): the analysis date, the devices
    by release and the pace of cost per token after the last one."""

    start_year: Q
    cost_halving_years: Q
    generations: dict[str, RoadmapEntry]


class ApiQuote(Strict):
    """One provider's published API prices of a model (``assumptions/market.yaml``): reference figures set beside an
    owned fleet's cost, never read by the cost model."""

    provider: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    #: the catalog device the provider serves the model on, where it says so (none for GPU clouds)
    served_on: str | None = None
    input_usd_per_mtok: Q
    output_usd_per_mtok: Q
    #: a prompt token read from the provider's context cache; absent: billed as any prompt token
    cached_input_usd_per_mtok: Q | None = None


class SoftwarePorting(Strict):
    """Porting the serving software to a device generation, by device class (``assumptions/software.yaml``)."""

    general: Q
    specialized: Q


@dataclass
class Catalog:
    """Raw catalog entries (plain dicts) by kind and id; validated on use."""

    devices: dict[str, dict] = field(default_factory=dict)
    models: dict[str, dict] = field(default_factory=dict)
    links: dict[str, dict] = field(default_factory=dict)
    nodes: dict[str, dict] = field(default_factory=dict)
    economics: dict = field(default_factory=dict)
    training: dict = field(default_factory=dict)  # assumptions/training.yaml: classes and run defaults
    sites: dict = field(default_factory=dict)  # assumptions/sites.yaml: sites and facility life
    serving: dict = field(default_factory=dict)  # assumptions/serving.yaml: serving-system defaults
    fleet_dynamics: dict = field(default_factory=dict)  # assumptions/fleet_dynamics.yaml: settings of the fleet analyses
    program: dict = field(default_factory=dict)  # assumptions/program.yaml: chip-program defaults
    roadmap: dict = field(default_factory=dict)  # assumptions/roadmap.yaml: general-purpose generations
    software: dict = field(default_factory=dict)  # assumptions/software.yaml: porting cost by device class
    speculation: dict = field(default_factory=dict)  # assumptions/speculation.yaml: defaults by speculation method
    market: dict = field(default_factory=dict)  # assumptions/market.yaml: API list prices by model


def _optional_yaml(path: Path) -> dict:
    """A catalog file that a custom catalog folder may leave out (empty then)."""
    return (read_yaml(path) or {}) if path.exists() else {}


def _entries_by_id(folder: Path) -> dict[str, dict]:
    entries = {}
    for path in sorted(folder.glob("*.yaml")):
        data = read_yaml(path)
        if not isinstance(data, dict) or "id" not in data:
            raise InputError.one(str(path), type(data).__name__, "must be a mapping with an 'id'")
        entries[data["id"]] = data
    return entries


@lru_cache(maxsize=4)
def load_catalog(folder: Path | str = ASSUMPTIONS_DIR) -> Catalog:
    """Read every catalog file under ``folder`` (``assumptions/`` by default).

    Parameters
    ----------
    folder : Path or str
        The catalog folder: devices, models, links, nodes and economics, and the optional
        training, sites, serving, fleet-dynamics, program, roadmap, software, speculation and market files.

    Returns
    -------
    Catalog
        Catalog entries by kind and id as read (validated when a scenario uses them).
    """
    folder = Path(folder)
    links = read_yaml(folder / "links.yaml") or {}
    nodes = read_yaml(folder / "nre.yaml") or {}
    return Catalog(
        devices=_entries_by_id(folder / "devices"),
        models=_entries_by_id(folder / "models"),
        links=dict(links.get("links", {})),
        nodes=dict(nodes.get("nodes", {})),
        economics=read_yaml(folder / "economics.yaml") or {},
        training=_optional_yaml(folder / "training.yaml"),
        sites=_optional_yaml(folder / "sites.yaml"),
        serving=_optional_yaml(folder / "serving.yaml"),
        fleet_dynamics=_optional_yaml(folder / "fleet_dynamics.yaml"),
        program=_optional_yaml(folder / "program.yaml"),
        roadmap=_optional_yaml(folder / "roadmap.yaml"),
        software=_optional_yaml(folder / "software.yaml"),
        speculation=_optional_yaml(folder / "speculation.yaml"),
        market=_optional_yaml(folder / "market.yaml"),
    )


def validated(kind: type[BaseModel], data: dict, path: str):
    """Validate one catalog entry; errors carry ``path`` (e.g. ``devices.groq-lpu``).

    Parameters
    ----------
    kind : type[BaseModel]
        The entry's schema.
    data : dict
        The entry as read from YAML.
    path : str
        Field path of the entry, prefixed to every error.

    Returns
    -------
    BaseModel
        The validated entry (an instance of ``kind``).

    Raises
    ------
    InputError
        Every schema error, each with its field path.
    """
    try:
        return kind.model_validate(data)
    except ValidationError as exc:
        raise pydantic_errors(exc, path) from None


def api_quotes(catalog: Catalog, model_id: str) -> tuple[ApiQuote, ...]:
    """The API quotes of a model (``assumptions/market.yaml``), validated; none where the market file lists none.

    Parameters
    ----------
    catalog : Catalog
        The catalog read (its ``market`` file).
    model_id : str
        The scenario's model.

    Returns
    -------
    tuple of ApiQuote
        The model's quotes in file order; an :class:`InputError` names the path of every broken rule
        (``market.api_prices.<model>[i].<field>``).
    """
    entries = (catalog.market.get("api_prices") or {}).get(model_id) or []
    where = f"market.api_prices.{model_id}"
    if not isinstance(entries, list):
        raise InputError.one(where, type(entries).__name__, "must be a list of quotes")
    return tuple(validated(ApiQuote, entry, f"{where}[{i}]") for i, entry in enumerate(entries))
