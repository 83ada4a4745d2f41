"""The schema of a scenario file: what each section may hold, validated by pydantic."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from tco.inputs.catalog import Serving, Strict, optional_quantities
from tco.inputs.parameters import Q, Quantity

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


class PoolSpec(Strict):
    """A pool's device; optionally a minimum replica size or a pinned replica shape (else the shape is searched)."""

    device: str
    devices_per_replica: Q | None = None
    tensor_parallel: int | None = Field(None, ge=1, le=100000)
    pipeline_stages: int | None = Field(None, ge=1, le=100000)
    expert_parallel: bool | None = None
    #: a pinned wide expert-parallel shape: data-parallel attention ranks, experts sharded over them
    #: (tco.core.serving.expert); micro_batches 2 is two-batch overlap
    data_parallel: int | None = Field(None, ge=2, le=100000)
    micro_batches: int | None = Field(None, ge=1, le=2)
    #: rented capacity: every device paid by the hour (``rental_usd_per_hour``, default the catalog's
    #: ``prices.rental_usd_per_hour``) instead of bought, powered and housed (docs/model.md "Rented capacity")
    rented: bool = False
    rental_usd_per_hour: Q | None = None
    #: the share of its device-hours a rented pool pays for (default 1: reserved, every hour; an autoscaled on-demand
    #: fleet pays about the mean over the peak)
    rental_paid_share: Q | None = None

    @model_validator(mode="after")
    def _pinned(self):
        for key in ("rental_usd_per_hour", "rental_paid_share"):
            if getattr(self, key) is not None and not self.rented:
                raise ValueError(f"{key} applies to a rented pool (rented: true)")
        if self.tensor_parallel is None and (self.pipeline_stages is not None or self.expert_parallel is not None):
            raise ValueError("pin a shape with tensor_parallel (and optionally pipeline_stages, expert_parallel)")
        if self.data_parallel is not None and self.tensor_parallel is not None:
            raise ValueError("pin either a tensor-parallel shape (tensor_parallel) or a wide one (data_parallel)")
        if self.micro_batches is not None and self.data_parallel is None:
            raise ValueError("micro_batches applies to a pinned wide shape (data_parallel) only")
        return self

    @property
    def has_minimum(self) -> bool:
        """Whether the pool sets a minimum replica size (then only tensor and pipeline shapes are searched)."""
        return self.devices_per_replica is not None


class SpeculationSpec(Strict):
    """An option's speculative decoding (tco.core.serving.speculation): its method, and any of the method's sourced
    defaults (``assumptions/speculation.yaml``) overridden; ``none`` decodes one token per step."""

    method: Literal["none", "mtp", "eagle", "draft_model"]
    draft_tokens: Q | None = None
    acceptance_rate: Q | None = None
    draft_cost_fraction: Q | None = None


class OptionSpec(Strict):
    """A fleet option: ``colocated``, or ``prefill`` + ``decode`` + ``kv_link``; optionally ``speculation`` on the pool
    that decodes."""

    name: str = Field(min_length=1)
    colocated: PoolSpec | None = None
    prefill: PoolSpec | None = None
    decode: PoolSpec | None = None
    kv_link: str | None = None
    speculation: SpeculationSpec | None = None
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


#: the workload's prefix reuse (tco.core.serving.prefix_cache): given together, or neither (no reuse)
PREFIX_REUSE_FIELDS = ("prefix_hit_fraction", "prefix_reuse_interval_s")


Workload = optional_quantities(
    "Workload", "What the fleet serves: demand, lengths, latency targets, half-life; the rest default (WORKLOAD_DEFAULTS); "
    "demand grows by ``demand_growth_per_year`` or follows ``demand_by_year`` (multiples of year 1).",
    (*WORKLOAD_DEFAULTS, *PREFIX_REUSE_FIELDS), __name__,
    **{key: (Q, ...) for key in ("requests_per_s", "prompt_tokens", "output_tokens", "ttft_target_s", "tpot_target_s",
                                 "half_life_years")},
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
    (default: ``node``) and scaled to ``node`` (:mod:`tco.core.money.nodes`)."""

    device: str
    node: str
    specs_node: str | None = None
    external_units: Q | None = None
    vendor_gross_margin: Q | None = None
    time_to_market_years: Q | None = None
    tapeout_to_deployment_years: Q | None = None
    nre_scale: Q | None = None
    respin_probability: Q | None = None
    respin_slip_years: Q | None = None
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
    ``policy`` when it moves (:data:`tco.core.money.generations.POLICIES`).
    """

    policy: Literal["keep", "at_replacement", "each_generation", "when_cheaper"] = "at_replacement"
    generations: list[str] | None = None


class Fleet(Strict):
    sizing: Literal["whole", "continuous"] = "whole"


ServingSpec = optional_quantities(
    "ServingSpec", "How the serving stack schedules and how latency targets are read; numbers default to "
    "assumptions/serving.yaml (tco.inputs.catalog.Serving).", Serving.model_fields, __name__,
    policy=(Literal["chunked", "prefill_first"], "chunked"),
    prefill_queue=(Literal["shared", "dispatched"], "shared"),
    # where the prefix cache lives when the workload reuses prefixes; left out (None) it is ``hbm`` (and a scenario file
    # without prefix reuse writes nothing for it)
    prefix_cache_tier=(Literal["hbm", "host_dram", "ssd"] | None, None))


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
    economics: dict[str, Any] = {}  # validated against the catalog's economics (tco.inputs.catalog.Economics)
    devices: dict[str, dict[str, Any]] = {}
    models: dict[str, dict[str, Any]] = {}
    links: dict[str, dict[str, Any]] = {}
    program: Program | None = None
    roadmap: RoadmapSpec | None = None
    set: dict[str, Any] = {}
    uncertainty: dict[str, Any] = {}  # validated by tco.inputs.parameters.checked_spreads
    study: dict[str, Any] | None = None
    fleet_dynamics: dict[str, Any] | None = None  # validated by tco.inputs.fleet_settings
