"""The ``fleet_dynamics:`` block of a scenario file: settings of the fleet analyses.

Two kinds of setting. The numbers that carry an assumption (growth rates, weekend ratio, peak
hour, buffer, scheduling overhead, slack, hard share, router skill, the tree's throughput
leaf, the roadmap's target and horizon) are **named parameters**
``fleet_dynamics.<analysis>.<setting>`` (:data:`NAMED_SETTINGS`): default, range and source in
``assumptions/fleet_dynamics.yaml``, resolved with the scenario (:attr:`tco.inputs.scenario.Scenario.
dynamics`), edited like any parameter (``set:``, ``--set``, the app) and listed by ``tco params``.
The rest say what to run (options, policies, weeks, axes and grids, the small model, the
penalty kind) and default here. :func:`fleet_config` joins them; errors name the field path
under ``fleet_dynamics``. Every scenario's block is validated when it is read (:func:`fleet_settings`,
:func:`option_reference_errors`, called by :mod:`tco.inputs.scenario_resolve`), so every command refuses
what ``tco fleet`` would.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator

from tco.foundation.errors import FieldError, InputError
from tco.inputs.catalog import Strict
from tco.inputs.yaml_files import pydantic_errors

#: pool sizing policies of the stranded-capacity simulation
POLICIES = ("today", "peak", "flex")
Policy = Literal["today", "peak", "flex"]
#: the settings that are named parameters ``fleet_dynamics.<analysis>.<setting>`` (assumptions/fleet_dynamics.yaml)
NAMED_SETTINGS = {
    "stranded": ("demand_growth_per_year", "prompt_growth_per_year", "output_growth_per_year", "weekend_ratio", "peak_hour",
                 "flex_buffer_share"),
    "coordination": ("scheduling_overhead", "slack"),
    "routing": ("hard_share", "router_skill"),
    "tree": ("throughput_max_batch", "throughput_tpot_target_s", "throughput_ttft_target_s"),
    "roadmap": ("target_tokens_per_watt_gain", "horizon_years", "process_gain_per_decade", "target_bits"),
}
#: the prefix of their names
PREFIX = "fleet_dynamics."


def setting_name(section: str, key: str) -> str:
    """The parameter name of a named setting.

    Parameters
    ----------
    section : str
        The analysis (``stranded``, ``coordination``, ``routing``, ``tree``, ``roadmap``).
    key : str
        The setting (a key of :data:`NAMED_SETTINGS`).

    Returns
    -------
    str
        ``fleet_dynamics.<section>.<key>``; ``KeyError`` for a setting :data:`NAMED_SETTINGS` does not declare.
    """
    if key not in NAMED_SETTINGS.get(section, ()):
        raise KeyError(f"{section}.{key} is not a named setting of the fleet analyses ({PREFIX}{section}.*)")
    return f"{PREFIX}{section}.{key}"


class Stranded(Strict):
    """Hourly quarter simulation (tco.core.fleet.stranded)."""

    option: str | None = Field(None, description="disaggregated option to simulate (default: the first one)")
    policies: list[Policy] = Field(list(POLICIES), min_length=1)
    weeks: int = Field(13, ge=1, le=104, description="simulated weeks (13 = a quarter, 2,184 h)")
    # named parameters (fleet_dynamics.stranded.*)
    demand_growth_per_year: float  # [1/yr]
    prompt_growth_per_year: float  # [1/yr]
    output_growth_per_year: float  # [1/yr]
    weekend_ratio: float  # weekend-day demand / weekday demand
    peak_hour: float  # [h]
    flex_buffer_share: float  # share of the GPU replicas today's peak needs


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
    scheduling_overhead: float  # named: extra device time per token for coordination
    slack: float  # named: share of specialized capacity held idle to absorb mix swings


class Routing(Strict):
    small_model: str = "llama-3.1-8b"
    option: str | None = Field(None, description="option whose costs are used (default: the baseline)")
    hard_share: float  # named: share of requests only the large model answers usefully
    router_skill: float  # named: exponent a of the misroute curve h r^(1+a)
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


class Interactivity(Strict):
    devices: list[str] | None = Field(None, description="device ids (default: every device of the scenario)")
    concurrencies: list[Annotated[int, Field(ge=1, le=65536)]] = Field(
        [1, 2, 4, 8, 16, 32, 64, 128, 256, 512], min_length=1, description="sequences in flight per replica swept")


class Tree(Strict):
    devices: list[str] | None = None
    training_scenario: str | None = Field("training-run", description="training scenario of the tree's training leaf")
    interactive_tpot_target_s: float | None = Field(None, gt=0)
    throughput_max_batch: int  # named [sequences]
    throughput_tpot_target_s: float  # named [s]
    throughput_ttft_target_s: float  # named [s]


class Roadmap(Strict):
    # named parameters (fleet_dynamics.roadmap.*)
    target_tokens_per_watt_gain: float  # tokens-per-watt factor aimed at
    horizon_years: float  # [yr]
    process_gain_per_decade: float  # energy-efficiency gain of the process node per decade
    target_bits: float  # number format reached (weights, KV, arithmetic) [bits]


class FleetDynamics(Strict):
    stranded: Stranded
    kv_wall: KVWall = KVWall()
    coordination: Coordination
    routing: Routing
    pareto: Pareto = Pareto()
    interactivity: Interactivity = Interactivity()
    tree: Tree
    roadmap: Roadmap


def fleet_settings(block, dynamics: Mapping[str, float], overrides: dict[str, dict[str, Any]] | None = None) -> FleetDynamics:
    """The settings of every fleet analysis from a ``fleet_dynamics:`` block and the named settings' values.

    Parameters
    ----------
    block : dict or None
        The scenario file's ``fleet_dynamics:`` block (the settings that say what to run).
    dynamics : Mapping[str, float] [each setting's unit]
        The named settings ``fleet_dynamics.<analysis>.<setting>`` (edits applied).
    overrides : dict, optional
        ``{section: {setting: value}}`` that replace the block's (None values are ignored).

    Returns
    -------
    FleetDynamics
        The validated settings; an :class:`~tco.foundation.errors.InputError` names the field path.
    """
    block = block or {}
    if not isinstance(block, dict):
        raise InputError.one("fleet_dynamics", block, "must be a mapping of analysis sections")
    data = {k: {key: v for key, v in value.items() if key not in NAMED_SETTINGS.get(k, ())} if isinstance(value, dict) else value
            for k, value in block.items()}
    for section, values in (overrides or {}).items():
        if isinstance(data.setdefault(section, {}), dict):
            data[section].update({k: v for k, v in values.items() if v is not None})
    for name, value in dynamics.items():
        section, key = name[len(PREFIX):].split(".")
        if isinstance(data.setdefault(section, {}), dict):
            data[section][key] = value
    try:
        return FleetDynamics.model_validate(data)
    except ValidationError as exc:
        raise pydantic_errors(exc, "fleet_dynamics") from None


def option_reference_errors(cfg: FleetDynamics, options: Mapping[str, bool]) -> list[FieldError]:
    """What a ``fleet_dynamics:`` block names that the scenario does not have, checked when the scenario is read
    (every command then refuses it, not only ``tco fleet``).

    Parameters
    ----------
    cfg : FleetDynamics
        The validated settings.
    options : Mapping[str, bool]
        The scenario's option names -> whether the option is disaggregated (prefill and decode pools).

    Returns
    -------
    list of FieldError
        An option that is not the scenario's (or not disaggregated where the analysis splits prefill from decode).
    """
    errors = []
    split = [name for name, disaggregated in options.items() if disaggregated]
    for section in ("kv_wall", "stranded", "coordination"):
        option = getattr(cfg, section).option
        if option is not None and option not in split:
            errors.append(FieldError(f"{PREFIX}{section}.option", option,
                                     f"must name a disaggregated option of the scenario: {', '.join(split) or 'none'}"))
    if cfg.routing.option is not None and cfg.routing.option not in options:
        errors.append(FieldError(f"{PREFIX}routing.option", cfg.routing.option,
                                 f"must name an option of the scenario: {', '.join(options)}"))
    return errors


def fleet_config(scenario, overrides: dict[str, dict[str, Any]] | None = None) -> FleetDynamics:
    """The settings of every fleet analysis for ``scenario``.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its ``fleet_dynamics`` block gives the settings that say what to run; its named
        parameters (:attr:`~tco.inputs.scenario.Scenario.dynamics`, with every edit) give the rest.
    overrides : dict, optional
        ``{section: {setting: value}}`` of settings that say what to run (e.g. from the
        command line); None values are ignored. Named settings are edited on the scenario
        instead (:meth:`~tco.inputs.scenario.Scenario.with_values`).

    Returns
    -------
    FleetDynamics
        The validated settings; an :class:`~tco.foundation.errors.InputError` names the field path.
    """
    return fleet_settings(scenario.spec.fleet_dynamics, scenario.dynamics.values(), overrides)
