"""The ``fleet_dynamics:`` block of a scenario file: settings of the fleet analyses.

Every setting has a default, so any scenario can run every analysis; a scenario (e.g.
``scenarios/fleet-split.yaml``) or the command line overrides them. Errors name the
field path under ``fleet_dynamics``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator

from ..catalog import Strict
from ..errors import InputError
from ..yamlio import pydantic_errors

#: pool sizing policies of the stranded-capacity simulation
POLICIES = ("today", "peak", "flex")
Policy = Literal["today", "peak", "flex"]
#: Dally's estimate of the process-node gain in energy efficiency: ~2.5x over roughly a decade
DALLY_PROCESS_GAIN_PER_DECADE = 2.5
DALLY_SOURCE = ("W. Dally, keynote 'Hardware for Deep Learning' (Hot Chips 2023): of the ~1000x single-chip "
                "inference gain over a decade, process contributed ~2.5x")


class Stranded(Strict):
    """Hourly quarter simulation (tco.core.stranded)."""

    option: str | None = Field(None, description="disaggregated option to simulate (default: the first one)")
    policies: list[Policy] = Field(list(POLICIES), min_length=1)
    weeks: int = Field(13, ge=1, le=104, description="simulated weeks (13 = a quarter, 2,184 h)")
    demand_growth_per_year: float = Field(0.5, ge=-0.9, le=100, description="request-rate growth [1/yr]")
    prompt_growth_per_year: float = Field(1.0, ge=0, le=100, description="prompt-length growth (context use) [1/yr]")
    output_growth_per_year: float = Field(0.5, ge=0, le=100, description="output-length growth (reasoning depth) [1/yr]")
    weekend_ratio: float = Field(0.7, gt=0, le=3, description="weekend-day demand / weekday demand")
    peak_hour: float = Field(14.0, ge=0, lt=24, description="hour of the daily peak")
    flex_buffer_share: float = Field(0.15, ge=0, le=10,
                                     description="flexible GPU buffer: a share of the GPU replicas today's peak needs")


class KVWall(Strict):
    option: str | None = None
    prompt_range: tuple[float, float] = (128.0, 131072.0)
    bandwidth_range_bytes_per_s: tuple[float, float] = (1.0e9, 1.0e12)
    points: int = Field(25, ge=3, le=400)

    @model_validator(mode="after")
    def _ranges_rise_from_above_zero(self):
        for name in ("prompt_range", "bandwidth_range_bytes_per_s"):
            low, high = getattr(self, name)
            if not 0 < low < high:
                raise ValueError(f"{name} must be [low, high] with 0 < low < high, got [{low:g}, {high:g}]")
        return self


class Coordination(Strict):
    option: str | None = None
    scheduling_overhead: float = Field(0.05, ge=0, le=10, description="extra device time per token for coordination")
    slack: float = Field(0.2, ge=0, lt=1, description="share of specialized capacity held idle to absorb mix swings")


class Routing(Strict):
    small_model: str = "llama-3.1-8b"
    option: str | None = Field(None, description="option whose costs are used (default: the baseline)")
    hard_share: float = Field(0.3, gt=0, le=1, description="share of requests only the large model answers usefully")
    router_skill: float = Field(2.0, ge=0, le=100, description="exponent a of the misroute curve h r^(1+a)")
    penalty: Literal["retry"] | Annotated[float, Field(ge=0)] = Field(
        "retry", description="'retry' on the large model, or USD per wrong answer (>= 0)")


class Placement(Strict):
    prefill: str
    decode: str
    prefill_devices_per_replica: int | None = Field(None, ge=1)
    decode_devices_per_replica: int | None = Field(None, ge=1)


class Pareto(Strict):
    devices: list[str] | None = Field(None, description="device ids (default: every device of the scenario)")
    placements: list[Placement] | None = Field(None, description="explicit placements (default: every pair of devices)")
    link: str | None = None
    tpot_targets_s: list[Annotated[float, Field(gt=0)]] = Field([0.005, 0.01, 0.02, 0.04, 0.08, 0.2], min_length=1)
    batch_caps: list[Annotated[int, Field(ge=1, le=65536)]] = Field([1, 4, 16, 64, 256, 1024], min_length=1)


class Tree(Strict):
    devices: list[str] | None = None
    training_scenario: str | None = Field("training-run", description="training scenario of the tree's training leaf")
    interactive_tpot_target_s: float | None = Field(None, gt=0)
    throughput_max_batch: int = Field(1024, ge=1)
    throughput_tpot_target_s: float = Field(0.25, gt=0)
    throughput_ttft_target_s: float = Field(600.0, gt=0)


class Roadmap(Strict):
    target_tokens_per_watt_gain: float = Field(12.0, gt=0, description="24x tokens for 2x power by 2030")
    years: float = Field(5.0, gt=0, le=30)
    process_gain_per_decade: float = Field(DALLY_PROCESS_GAIN_PER_DECADE, ge=1)
    target_bits: float = Field(4.0, ge=2, le=16, description="number format reached (weights, KV, arithmetic)")


class FleetDynamics(Strict):
    stranded: Stranded = Stranded()
    kv_wall: KVWall = KVWall()
    coordination: Coordination = Coordination()
    routing: Routing = Routing()
    pareto: Pareto = Pareto()
    tree: Tree = Tree()
    roadmap: Roadmap = Roadmap()


def fleet_config(block: dict[str, Any] | None, overrides: dict[str, dict[str, Any]] | None = None) -> FleetDynamics:
    """Validate a ``fleet_dynamics`` block with per-section ``overrides`` (e.g. from the CLI)."""
    block = {} if block is None else block
    data = {k: dict(v) if isinstance(v, dict) else v for k, v in block.items()} if isinstance(block, dict) else block
    if overrides and isinstance(data, dict) and all(isinstance(data.get(s, {}), dict) for s in overrides):
        for section, values in overrides.items():
            data.setdefault(section, {}).update({k: v for k, v in values.items() if v is not None})
    try:
        return FleetDynamics.model_validate(data or {})
    except ValidationError as exc:
        raise pydantic_errors(exc, "fleet_dynamics") from None


def check(condition: bool, path: str, value, rule: str) -> None:
    """Raise an :class:`InputError` naming ``path`` unless ``condition`` holds."""
    if not condition:
        raise InputError.one(path, value, rule)
