"""The output table and the typed results of the core.

Every number the model reports is a field of one of the result dataclasses below, and
the field's metadata is its row of the output table: unit, meaning, a short label and
how to show it (unit scaling such as ms for seconds, a format spec). The CLI columns, the
app's labels, the workbook's labels and units and the study metrics all read this table
(:data:`OPTION_OUTPUTS`, :data:`POOL_OUTPUTS`, :data:`LINK_OUTPUTS`,
:data:`COMPARISON_OUTPUTS`) instead of restating it.

Results are plain dataclasses of numpy arrays that broadcast together: one scenario or a
million parameter draws. :meth:`OptionResult.flat` and :meth:`ChallengerResult.flat` give the
dotted names ``"<role>.<name>"`` (pool outputs), ``"links.<name>"`` and ``"<name>"`` that
the workbook check, the studies and the JSON contract use; :func:`dotted_name` is the one
place such a name is built.

Fields without table metadata (``name``, ``pools``, ``present_values``) are structure or
internal terms, not outputs.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tco.foundation.formatting import NONE, sig

Array = np.ndarray


#: metadata key of a result field's table row
_SPEC = "output"


@dataclass(frozen=True)
class OutputSpec:
    """One row of the output table.

    ``unit`` is the SI unit the core returns; ``display_unit``, ``scale`` and ``fmt`` say
    how a reader sees it (``format(value * scale, fmt)`` followed by ``display_unit``).
    ``column`` is the short header of the CLI table. ``cost_line`` marks the present
    values that add up to ``pv_cost_usd`` (their yearly twins are the cash-flow lines);
    ``yearly_line`` names the cash-flow line a pool's yearly running cost feeds (it is paid in
    every operating year, discounted with the annuity factor and expensed in the accounting
    view); ``workbook`` is False for the few outputs the workbook does not recompute as formulas;
    ``nonpositive_note`` is said in brackets after a value at or below zero (a count of years of
    advantage that is not one).
    """

    name: str
    unit: str
    meaning: str
    label: str
    display_unit: str
    scale: float = 1.0
    fmt: str = ",.4g"
    column: str = ""
    cost_line: bool = False
    yearly_line: str = ""
    workbook: bool = True
    nonpositive_note: str = ""

    @property
    def title(self) -> str:
        """Row or axis title with the displayed unit: ``"time to first token, ms"``."""
        return f"{self.label}, {self.display_unit}" if self.display_unit else self.label

    def format(self, value) -> str:
        """``value`` as displayed.

        Scaled and formatted; a ``g`` format keeps its significant figures without an exponent
        (see :func:`sig`); yes/no for a flag (unit ``bool``); an em dash for a missing or
        non-finite value; the ``nonpositive_note`` in brackets after a value at or below zero.

        Parameters
        ----------
        value : float or None [unit of the output]
            The value in the output's unit.

        Returns
        -------
        str
            The displayed text, in the display unit.
        """
        if value is None or not math.isfinite(float(value)):
            return NONE
        if self.unit == "bool":
            return "yes" if float(value) else "no"
        if self.fmt.endswith("g"):
            text = sig(float(value) * self.scale, int(self.fmt.rstrip("g").split(".")[-1]))
        else:
            text = format(float(value) * self.scale, self.fmt)
        return f"{text} ({self.nonpositive_note})" if self.nonpositive_note and float(value) <= 0 else text

    def as_column(self, key: str | None = None) -> tuple[str, str, str, float]:
        """``(title, key, format spec, scale)``: a table column showing this output.

        Parameters
        ----------
        key : str or None
            Column key; None: the output's name.

        Returns
        -------
        tuple of (str, str, str, float) [-]
            Title, key, format specification and scale [display unit per unit].
        """
        return self.title, key or self.name, self.fmt, self.scale

    @property
    def line(self) -> str:
        """Cash-flow line of a cost-line present value: ``pv_energy_usd`` -> ``energy_usd``."""
        return self.name.removeprefix("pv_")


def output(unit: str, meaning: str, label: str, display_unit: str | None = None, *, scale: float = 1.0,
           fmt: str = ",.4g", column: str = "", cost_line: bool = False, yearly_line: str = "", workbook: bool = True,
           optional: bool = False, nonpositive_note: str = "") -> Any:
    """A result field with its table row; ``optional`` fields default to None (absent for this pool or option).

    Parameters
    ----------
    unit : str
        The field's unit in SI (``USD/Mtok``, ``s``, ``-``).
    meaning : str
        What the output is, one sentence.
    label : str
        Short label for tables and charts.
    display_unit : str or None
        Unit shown to people (``ms``); None: ``unit``.
    scale : float [-]
        Factor from ``unit`` to ``display_unit``.
    fmt : str
        Format specification of the displayed value.
    column : str
        Column header of the CLI table ("" for none).
    cost_line : bool
        Whether the output is a cash-flow line.
    yearly_line : str
        The cash-flow line a yearly running cost feeds ("" for none).
    workbook : bool
        Whether the workbook reports it.
    optional : bool
        Whether the field may be absent (None).
    nonpositive_note : str
        Said in brackets after a value at or below zero ("" for none).

    Returns
    -------
    dataclasses.Field
        A dataclass field carrying its table row in its metadata.
    """
    spec = {"unit": unit, "meaning": meaning, "label": label, "display_unit": unit if display_unit is None else display_unit,
            "scale": scale, "fmt": fmt, "column": column, "cost_line": cost_line, "yearly_line": yearly_line,
            "workbook": workbook, "nonpositive_note": nonpositive_note}
    if optional:
        return field(default=None, metadata={_SPEC: spec})
    return field(metadata={_SPEC: spec})


def _table(*classes) -> dict[str, OutputSpec]:
    """The table rows of the result classes' fields, in field order."""
    return {f.name: OutputSpec(f.name, **f.metadata[_SPEC]) for cls in classes for f in dataclasses.fields(cls)
            if _SPEC in f.metadata}


def output_table(*classes) -> dict[str, OutputSpec]:
    """The output table of result classes: a row per field declared with :func:`output`, in field order.

    The tables of this module are built with it; so are those of result families kept beside their
    model (the training outputs, :mod:`tco.core.training.results`).

    Parameters
    ----------
    *classes : type
        Dataclasses whose fields carry :func:`output` rows.

    Returns
    -------
    dict[str, OutputSpec]
        The rows by field name.
    """
    return _table(*classes)


def dotted_name(prefix: str | None, name: str) -> str:
    """The flat output name: ``"<role>.<name>"`` for a pool output, ``"links.<name>"``, or ``name``.

    The one place these names are built; studies, the workbook and the JSON contract use them.

    Parameters
    ----------
    prefix : str or None
        Pool role or ``links``; None or "" for an option's own output.
    name : str
        The output's field name.

    Returns
    -------
    str
        The flat name.
    """
    return f"{prefix}.{name}" if prefix else name


def flatten(option: Mapping[str, Any], parts: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """``{name: v}`` for an option's own outputs plus ``{"<part>.<name>": v}`` for each part (pools, links).

    Parameters
    ----------
    option : Mapping[str, Any]
        The option's own outputs by name.
    parts : Mapping[str, Mapping[str, Any]]
        Each part's outputs (pools by role, ``links``).

    Returns
    -------
    dict[str, Any]
        Every output under its flat name, values (in their table units) unchanged.
    """
    flat = dict(option)
    for prefix, values in parts.items():
        flat.update({dotted_name(prefix, name): value for name, value in values.items()})
    return flat


@functools.cache
def _output_fields(cls) -> tuple[str, ...]:
    """Names of a result class's output fields, in field order (looked up once per class)."""
    return tuple(f.name for f in dataclasses.fields(cls) if _SPEC in f.metadata)


def _outputs_of(result) -> dict[str, Any]:
    """The output fields of a dataclass instance that are present (not None)."""
    values = vars(result)
    return {name: values[name] for name in _output_fields(type(result)) if values[name] is not None}


def _with(result, changes: Mapping[str, Any]):
    """A shallow copy of the dataclass instance ``result`` with ``changes`` applied (``dataclasses.replace``
    without re-running ``__init__``: the result classes have no ``__post_init__``)."""
    copy = object.__new__(type(result))
    copy.__dict__.update(vars(result), **changes)
    return copy


def _broadcast_fields(result, shape, outputs: Mapping[str, Any] | None = None):
    """A copy of ``result`` with every present output field (``outputs``, when the caller has them) broadcast to
    ``shape`` as floats: each value as a float array, itself when it has the shape, else a broadcast view (written
    inline: a function call per field is ~15 % of the broadcast at one draw)."""
    outputs = _outputs_of(result) if outputs is None else outputs
    arrays = {k: np.asarray(v, float) for k, v in outputs.items()}
    return _with(result, {k: a if a.shape == shape else np.broadcast_to(a, shape) for k, a in arrays.items()})


def _shape_of(*outputs: Mapping[str, Any]) -> tuple[int, ...]:
    """The common shape of the values of ``outputs`` (dicts of output fields; each distinct shape broadcast once)."""
    return np.broadcast_shapes(*{v.shape if isinstance(v, _NUMPY) else () if type(v) in _PYTHON_NUMBERS else np.shape(v)
                                 for o in outputs for v in o.values()})


#: values whose ``shape`` attribute is their numpy shape (read directly: ``np.shape`` costs ~0.4 us a call)
_NUMPY = (np.ndarray, np.generic)


#: values of shape ``()`` (a structural 0, an absent line)
_PYTHON_NUMBERS = (float, int, bool)


@dataclass(kw_only=True)
class PoolPerformance:
    """The chosen replica shape of one pool and its serving figures at peak load (DESIGN.md sections 3 and 8).

    Prefill fields are present for pools that serve prefill, decode fields for pools that
    serve decode; latency figures are at the scenario's percentile (``serving.percentile``).
    """

    devices_per_replica: Array = output("devices", "devices in one replica: tensor parallel x pipeline stages (chosen shape)",
                                        "devices per replica", "", fmt=",.0f")
    tensor_parallel: Array = output("devices", "tensor-parallel degree of the chosen replica shape", "tensor parallel", "",
                                    fmt=",.0f")
    pipeline_stages: Array = output("stages", "pipeline stages of the chosen replica shape", "pipeline stages", "", fmt=",.0f")
    expert_parallel: Array = output("bool", "1 when the MoE layers run expert-parallel (over the tensor group, or over "
                                    "the data-parallel attention ranks)", "expert parallel", "", fmt=".0f")
    data_parallel: Array = output("ranks", "data-parallel attention ranks of a wide expert-parallel replica, its routed "
                                  "experts sharded over them (EP = DP; 1: none)", "data-parallel attention", "",
                                  fmt=",.0f")
    micro_batches: Array = output("-", "micro-batches per step of the chosen shape (2: two-batch overlap of the expert "
                                  "all-to-alls)", "micro-batches", "", fmt=".0f")
    capacity_rps: Array = output("req/s", "requests/s one replica carries with every slot (prefill lane) busy",
                                 "capacity per replica", "req/s", fmt=",.3g")
    queue_wait_s: Array = output("s", "wait for a slot and for prefill at the percentile, at peak", "queueing delay", "ms",
                                 scale=1e3, fmt=",.1f")
    prefill_s: Array | None = output("s", "prefill of one prompt once started (chunks in decode cycles, or one pass)",
                                     "prefill time", "ms", scale=1e3, fmt=",.1f", optional=True)
    prefill_tokens_per_s: Array | None = output("tokens/s", "prompt tokens per second one replica prefills with every lane busy",
                                                "prefill tokens per second per replica", optional=True)
    prefill_bound: Array | None = output("code", "what limits prefill: 0 memory bandwidth, 1 compute, 2 interconnect",
                                         "prefill bound", "", fmt=".0f", optional=True)
    ttft_s: Array | None = output("s", "time to first token at the percentile, at peak (this pool's part)",
                                  "time to first token", "ms", scale=1e3, fmt=",.0f", optional=True)
    slots: Array | None = output("sequences", "slot cap: the most sequences in flight per replica (TPOT target, KV memory, "
                                 "batch limit, token budget; held lower where the TTFT target needs it)", "slot cap", "",
                                 fmt=",.0f", optional=True)
    slots_allowed: Array | None = output("sequences", "the slot cap the TPOT target, KV memory, batch limit and token "
                                         "budget allow; above the slot cap where the batch is held down for the TTFT "
                                         "target", "slot cap before the TTFT hold", "", fmt=",.0f", optional=True)
    batch: Array | None = output("sequences", "mean decode occupancy per replica at peak", "decode batch", fmt=",.0f",
                                 optional=True)
    step_s: Array | None = output("s", "mean cycle time at peak, prefill chunks included", "decode step time", "ms", scale=1e3,
                                  fmt=",.1f", optional=True)
    tpot_s: Array | None = output("s", "time per output token at the percentile, at peak", "time per output token", "ms",
                                  scale=1e3, fmt=",.1f", optional=True)
    decode_tokens_per_s: Array | None = output("tokens/s", "output tokens per second per replica with every slot busy",
                                               "decode tokens per second per replica", optional=True)
    decode_bound: Array | None = output("code", "what limits a cycle at the slot cap: 0 memory bandwidth, 1 compute, "
                                        "2 interconnect", "decode bound", "", fmt=".0f", optional=True)
    spilled_bytes: Array | None = output("B", "bytes per cycle at the slot cap beyond the fastest tier",
                                         "bytes spilled below the fastest tier", "GB", scale=1e-9, fmt=",.2f", optional=True)
    tpot_met: Array | None = output("bool", "1 when one sequence per replica meets the TPOT target", "TPOT target met", "",
                                    fmt=".0f", optional=True)
    interference_share: Array | None = output("fraction", "share of a colocated replica's mean cycle spent on prefill chunks",
                                              "prefill interference", "%", scale=100.0, fmt=".0f", optional=True)
    prefix_hit_fraction: Array | None = output("fraction", "share of prompt tokens the pool serves from its prefix cache "
                                               "(achieved: what its devices' cache holds of the working set; a prefill "
                                               "pool skips their prefill, a decode pool receives only the rest over the "
                                               "KV link); present with prefix reuse", "cache hit rate", "%", scale=100.0,
                                               fmt=".0f", optional=True)
    accepted_tokens_per_step: Array | None = output("tokens/step", "expected tokens a decode step emits per sequence "
                                                    "under speculative decoding, sum of a^i for i = 0..k; present with "
                                                    "speculation", "accepted tokens per step", "", fmt=".2f",
                                                    optional=True)


@dataclass(kw_only=True)
class PoolSizing:
    """Replicas at peak demand and utilization at mean demand (DESIGN.md section 4)."""

    replicas: Array = output("replicas", "replicas sized at peak demand", "replicas", "", fmt=",.0f")
    peak_replicas: Array = output("replicas", "replicas year 1's peak needs (the serving model's staffing; whole unless "
                                  "sizing is continuous), which the purchase plan scales by each year's demand multiple",
                                  "replicas for year 1's peak", "", fmt=",.2f")
    utilization: Array = output("fraction", "mean load / provisioned capacity", "utilization", "%", scale=100.0, fmt=".0f")
    devices: Array = output("devices", "devices in the pool", "devices", "", fmt=",.0f")


@dataclass(kw_only=True)
class PoolCosts:
    """Per-device capex and yearly cost terms of one pool (DESIGN.md section 5)."""

    unit_price_usd: Array = output("USD/device", "device price (a built chip: its unit cost, from the die when given)",
                                   "price per device")
    unit_hardware_usd: Array = output("USD/device", "device price + system overhead", "hardware per device")
    unit_nre_usd: Array = output("USD/device", "NRE per unit built: program NRE / program volume, at least one unit "
                                 "(built devices only)", "NRE per unit built")
    life_years: Array = output("yr", "useful life of the pool's devices", "useful life")
    residual_value_fraction: Array = output("fraction", "value left at end of life, share of the price", "residual value",
                                            "%", scale=100.0, fmt=".0f")
    power_w: Array = output("W", "mean IT power of the pool: devices x (idle + (TDP - idle) x utilization + host)",
                            "mean IT power", "kW", scale=1e-3)
    energy_usd_per_year: Array = output("USD/yr", "electricity of the pool (PUE included)", "electricity",
                                        yearly_line="energy_usd")
    facility_usd_per_year: Array = output("USD/yr", "data hall of the pool, per provisioned kW", "data hall",
                                          yearly_line="facility_usd")
    maintenance_usd_per_year: Array = output("USD/yr", "maintenance of the pool, a share of hardware capex", "maintenance",
                                             yearly_line="maintenance_usd")
    reauthoring_usd_per_year: Array = output("USD/yr", "re-authoring (specialized pools): cost per shift / half-life",
                                             "re-authoring", yearly_line="reauthoring_usd")
    rental_usd_per_year: Array = output("USD/yr", "rent of a rented pool: devices x hourly rate x paid share x 8760 "
                                        "(0 when owned)", "rent", yearly_line="rental_usd")
    residual_efficiency: Array = output("fraction", "efficiency kept on shifted work (1 for general pools)",
                                        "efficiency on shifted work", "%", scale=100.0, fmt=".0f")


@dataclass(kw_only=True)
class PoolPresentValues:
    """What one pool's present values rest on: the units it buys and the work it may lose to shifts."""

    pv_units_bought: Array = output("devices", "PV of the units bought over the horizon (replacements included)",
                                    "PV of units bought", "", fmt=",.1f")
    units_bought: Array = output("devices", "units bought over the horizon, growth and replacements included (undiscounted)",
                                 "units bought", "", fmt=",.0f")
    shift_exposure_usd_per_year: Array = output(
        "USD/yr", "baseline cost of this pool's work in year 1, charged as (1 - served share) in the workload-shift line",
        "shift exposure")


@dataclass
class PoolResult:
    """One pool of an option: its performance, sizing, yearly costs and present values."""

    role: str
    device: str
    performance: PoolPerformance
    sizing: PoolSizing
    costs: PoolCosts
    present_values: PoolPresentValues
    #: its devices rented by the hour (:attr:`tco.core.structure.Pool.rented`)
    rented: bool = False

    def steps(self) -> tuple:
        """The pool's four result steps, in order.

        Returns
        -------
        tuple
            ``(performance, sizing, costs, present_values)``.
        """
        return self.performance, self.sizing, self.costs, self.present_values

    def outputs(self) -> dict[str, Array]:
        """Every present pool output by name (without the role).

        Returns
        -------
        dict[str, ndarray] [units of the output table]
            Each output in its unit of :data:`POOL_OUTPUTS`.
        """
        return {k: v for step in self.steps() for k, v in _outputs_of(step).items()}


@dataclass(kw_only=True)
class LinkCosts:
    """The KV link of a disaggregated option at year 1's demand (zeros when colocated).

    ``power_w`` is the ports' power, part of the option's ``power_w`` [W]; the link's present
    value over the horizon is the option's ``pv_links_usd``.
    """

    port_capex_usd: Array = output("USD", "purchase of year 1's KV-link ports, renewed with the decode devices",
                                   "KV-link ports purchase")
    usd_per_year: Array = output("USD/yr", "electricity and data hall of year 1's KV-link ports", "KV-link running cost")
    power_w: Array | float = 0.0


@dataclass(kw_only=True)
class OptionResult:
    """Everything the model says about one fleet option; pools by role (``colocated`` or ``prefill`` and ``decode``)."""

    name: str
    pools: dict[str, PoolResult]
    links: LinkCosts
    lcot_usd_per_mtok: Array = output("USD per million output tokens", "levelized cost: PV(costs) / PV(output tokens) x 1e6",
                                      "cost", fmt=",.4g", column="USD/Mtok out")
    lcot_usd_per_mtok_all_tokens: Array = output("USD per million input+output tokens",
                                                 "levelized cost over prompt and output tokens", "cost", fmt=",.4g",
                                                 column="USD/Mtok in+out")
    eac_usd_per_mtok: Array = output(
        "USD per million output tokens", "steady-state cost: a fresh fleet for year 1's demand, capital recovered over the "
        "device life (NRE share and software ports included) plus running costs, per output token (a roadmap baseline: "
        "the generation it buys at t = 0)", "steady-state cost",
        fmt=",.4g")
    pv_cost_usd: Array = output("USD", "present value of all costs over the horizon, residual value credited",
                                "present value of costs", "M USD", scale=1e-6, fmt=",.4g")
    pv_tokens: Array = output("output tokens", "present value (discounted count) of output tokens served",
                              "present value of output tokens", "")
    pv_capex_usd: Array = output("USD", "PV of device and system purchases, replacements included, NRE excluded",
                                 "hardware capex", "M USD", scale=1e-6, fmt=",.4g", cost_line=True)
    pv_nre_usd: Array = output("USD", "PV of the NRE share carried by the units this fleet buys", "NRE share", "M USD",
                               scale=1e-6, fmt=",.4g", cost_line=True)
    pv_energy_usd: Array = output("USD", "PV of electricity for devices and hosts (PUE included)", "energy", "M USD",
                                  scale=1e-6, fmt=",.4g", cost_line=True)
    pv_facility_usd: Array = output("USD", "PV of data-hall cost per provisioned kW", "facility (data hall)", "M USD",
                                    scale=1e-6, fmt=",.4g", cost_line=True)
    pv_maintenance_usd: Array = output("USD", "PV of maintenance, a share of hardware capex per year", "maintenance", "M USD",
                                       scale=1e-6, fmt=",.4g", cost_line=True)
    pv_links_usd: Array = output("USD", "PV of KV-link ports: purchase, energy and facility", "KV links", "M USD",
                                 scale=1e-6, fmt=",.4g", cost_line=True)
    pv_rental_usd: Array = output("USD", "PV of the rent of rented pools (their devices paid by the hour)", "rent",
                                  "M USD", scale=1e-6, fmt=",.4g", cost_line=True)
    pv_reauthoring_usd: Array = output("USD", "PV of software re-authoring, one cost per workload shift", "re-authoring",
                                       "M USD", scale=1e-6, fmt=",.4g", cost_line=True)
    pv_porting_usd: Array = output("USD", "PV of porting the software to each new hardware generation the option adopts",
                                   "software porting", "M USD", scale=1e-6, fmt=",.4g", cost_line=True)
    pv_workload_shift_usd: Array = output("USD", "PV of shifted demand served on general hardware at the baseline's cost",
                                          "workload shift", "M USD", scale=1e-6, fmt=",.4g",
                                          cost_line=True)
    pv_bridge_usd: Array = output("USD", "PV of the demand served at the baseline's levelized cost until a built chip is "
                                  "in service", "bridge until deployment", "M USD", scale=1e-6, fmt=",.4g", cost_line=True)
    pv_residual_usd: Array = output("USD", "PV of value recovered at end of life or horizon (negative: a credit)",
                                    "residual value (credit)", "M USD", scale=1e-6, fmt=",.4g", cost_line=True)
    devices: Array = output("devices", "devices in the fleet for year 1's demand, all pools", "devices (fleet)", "", fmt=",.0f",
                            column="devices")
    units_bought: Array = output("devices", "devices bought over the horizon, all pools, growth and replacements included",
                                 "devices bought over the horizon", "", fmt=",.0f")
    deployment_year: Array = output("yr", "year the option's fleet enters service: ceil(time to market + expected respin "
                                    "slip) of a built chip, else 0", "in service from year", "", fmt=".0f")
    ttft_s: Array = output("s", "time to first token at the percentile, at peak: waits + prefill (+ KV transfer when "
                           "disaggregated)", "time to first token", "ms", scale=1e3, fmt=",.0f", column="TTFT s")
    tpot_s: Array = output("s", "time per output token at the percentile, at peak, prefill interference included",
                           "time per output token", "ms", scale=1e3, fmt=",.1f", column="TPOT s")
    queue_wait_s: Array = output("s", "queueing part of the latency at the percentile, at peak: waits for a slot and for "
                                 "prefill", "queueing delay", "ms", scale=1e3, fmt=",.1f", column="wait s")
    batch: Array = output("sequences", "mean decode occupancy per replica at peak", "decode batch", fmt=",.0f", column="batch")
    spilled_bytes: Array = output("B", "bytes per decode step that did not fit the fastest memory tier",
                                  "bytes spilled below the fastest tier", "GB", scale=1e-9, fmt=",.2f", column="spilled B")
    tokens_per_joule: Array = output("output tokens/J",
                                     "output tokens per joule of IT power (devices, hosts, links) at mean load",
                                     "output tokens per joule", "", fmt=",.3g", column="tok/J")
    tokens_per_s: Array = output("output tokens/s", "mean output tokens per second served", "output tokens per second", "")
    power_w: Array = output("W", "mean IT power of the fleet", "mean IT power", "kW", scale=1e-3)
    kv_transfer_s: Array = output("s", "KV-cache transfer time per request (0 when colocated)", "KV transfer time", "ms",
                                  scale=1e3, fmt=",.2f")
    link_ports: Array = output("ports", "KV-link ports (0 when colocated)", "KV-link ports", "", fmt=",.0f")
    feasible: Array = output("bool", "1 when every latency target is met", "meets latency targets", "", fmt=".0f",
                             column="feasible")
    infeasible_code: Array = output("bitmask", "1: TPOT missed, 2: TTFT missed, 4: context too long, 8: no shape fits "
                                    "memory (0: feasible)",
                                    "infeasibility code", "", fmt=".0f")
    prefill_cost_share: Array = output("fraction", "share of the option's cost due to prefill", "prefill share of cost", "%",
                                       scale=100.0, fmt=".0f")
    accounting_cost_usd_per_year: Array = output("USD/yr", "straight-line depreciation plus year-1 opex",
                                                 "accounting cost per year", "M USD/yr", scale=1e-6, fmt=",.4g")

    #: what the option pays over the horizon (:class:`tco.core.money.plan.MoneyPlan`), read by the cash flows
    money: Any = None
    #: the baseline's steady-state cost on each roadmap generation (:class:`tco.core.money.generations.RoadmapCosts`)
    roadmap: Any = None

    def pool(self, role: str) -> PoolResult:
        """The result of the pool with role ``role``.

        Parameters
        ----------
        role : str
            A role of the option's pools (see :attr:`pools`).

        Returns
        -------
        PoolResult
            That pool's result.
        """
        return self.pools[role]

    @property
    def decode_pool(self) -> PoolResult:
        """The pool that generates output tokens (``decode`` or ``colocated``)."""
        return self.pools.get("decode") or self.pools["colocated"]

    def outputs(self) -> dict[str, Array]:
        """The option's own outputs by name (no pool or link outputs).

        Returns
        -------
        dict[str, ndarray] [units of the output table]
            Each output in its unit of :data:`OPTION_OUTPUTS` (pool and link outputs: :meth:`flat`).
        """
        return _outputs_of(self)

    def flat(self) -> dict[str, Array]:
        """Every output under its dotted name: option outputs, ``links.<name>``, ``<role>.<name>``.

        Returns
        -------
        dict[str, ndarray] [units of the output table]
            Each output in its unit of the output table.
        """
        return flatten(self.outputs(), {"links": _outputs_of(self.links),
                                        **{role: pool.outputs() for role, pool in self.pools.items()}})

    def broadcast(self) -> OptionResult:
        """The same result with every output broadcast to one common shape (float arrays).

        Returns
        -------
        OptionResult
            The broadcast copy.
        """
        steps = {role: p.steps() for role, p in self.pools.items()}
        outputs = {id(r): _outputs_of(r) for r in (self, self.links, *(step for s in steps.values() for step in s))}
        shape = _shape_of(*outputs.values())

        def broadcast(result):
            return _broadcast_fields(result, shape, outputs[id(result)])

        pools = {role: _with(p, {name: broadcast(step) for name, step in
                                 zip(("performance", "sizing", "costs", "present_values"), steps[role], strict=True)})
                 for role, p in self.pools.items()}
        return _with(broadcast(self), {"pools": pools, "links": broadcast(self.links)})


@dataclass(kw_only=True)
class ChallengerResult:
    """A challenger against the baseline; lifecycle fields for options with specialized devices,
    NRE fields for options that use the scenario's built device (None otherwise)."""

    npv_usd: Array = output("USD", "PV saved by choosing the option over the baseline (> 0: it pays)",
                            "NPV of choosing it over the baseline", "M USD", scale=1e-6, fmt=",.4g")
    cost_ratio: Array = output("ratio", "option LCOT / baseline LCOT (the option wins below 1)",
                               "cost ratio to the baseline (wins below 1)", "", fmt=",.4g")
    life_over_half_life: Array | None = output(
        "ratio", "L/H: device useful life over workload half-life (> 1 specialization can pay)",
        "L/H: useful life / workload half-life", "", fmt=".2f", optional=True)
    effective_life_years: Array | None = output("yr", "H/ln2 (1 - 2^(-L/H)): years of service at designed efficiency",
                                                "effective life", "years", fmt=".2f", optional=True)
    years_of_advantage: Array | None = output(
        "yr", "years after deployment the option's steady-state cost stays below the best general generation available "
        "(the roadmap, then its halving pace; workload drift included); negative: a general generation was cheaper that "
        "many years before the option entered service (at most back to the oldest generation listed; 100: still cheaper "
        "after a century); none without a roadmap block (the baseline then stays on one generation)",
        "years of advantage over the general roadmap", "years", fmt=".1f", optional=True, workbook=False,
        nonpositive_note="never ahead")
    hardware_cycle_years: Array | None = output(
        "yr", "years the option's hardware stays worth running: its useful life, cut short when the general roadmap "
        "catches up (years of advantage)", "hardware replacement cycle", "years", fmt=".1f", optional=True, workbook=False,
        nonpositive_note="never ahead")
    software_payback_years: Array | None = output(
        "yr", "software investment (ports to adopted devices, a built chip's software NRE) / the yearly saving of the "
        "option's hardware over the baseline (steady state; a roadmap baseline's generation held when the option enters "
        "service; inf: no saving)", "software amortisation period", "years",
        fmt=".1f", optional=True)
    cycle_over_payback: Array | None = output(
        "ratio", "hardware replacement cycle / software amortisation period (> 1: the rewrite pays back before the "
        "hardware is replaced)", "hardware cycle / software payback", "", fmt=".2f", optional=True, workbook=False)
    nre_usd: Array | None = output("USD", "total NRE of the chip program (a respin's expected mask set included)",
                                   "NRE of the program", "M USD", scale=1e-6,
                                   fmt=",.1f", optional=True)
    fleet_units: Array | None = output("units", "built chips this fleet buys over the horizon, growth and replacements "
                                       "included", "the fleet's own units", "units", fmt=",.0f", optional=True)
    program_volume_units: Array | None = output("units", "the program's volume: the fleet's own units plus units sold to "
                                                "others (program.external_units)", "program volume", "units", fmt=",.0f",
                                                optional=True)
    npv_own_use_usd: Array | None = output("USD", "NPV over the baseline if the fleet carries all the NRE (no external sales)",
                                           "NPV on own use alone", "M USD", scale=1e-6, fmt=",.4g", optional=True)
    needs_external_sales: Array | None = output("bool", "1 when the option wins only because units are sold to others "
                                                "(NPV > 0, NPV on own use alone <= 0)", "win needs external sales", "",
                                                fmt=".0f", optional=True)
    breakeven_external_units: Array | None = output(
        "units", "units sold to others at which the built chip ties the baseline (0: it wins on own use alone; "
        "inf: never)", "break-even external sales", "units", fmt=",.0f", optional=True)
    breakeven_volume_units: Array | None = output("units", "program volume (own + external) at which the built chip ties "
                                                  "the baseline (inf: never)", "break-even volume", "units", fmt=",.0f",
                                                  optional=True)
    breakeven_nre_usd: Array | None = output("USD", "NRE at which the built chip ties the baseline at the program's volume "
                                             "(NaN: never, it loses even with free NRE)", "break-even NRE", "M USD",
                                             scale=1e-6, fmt=",.1f", optional=True)
    breakeven_demand_rps: Array | None = output(
        "req/s", "year-1 demand at which the program pays on own use alone (no external sales; costs linear in demand "
        "apart from NRE, porting and re-authoring; 0: any demand, inf: never)", "break-even demand", "req/s",
        fmt=",.4g", optional=True)
    breakeven_tokens_per_year: Array | None = output(
        "output tokens/yr", "the break-even demand in output tokens per year (year 1)", "break-even demand in tokens",
        "trillion tokens/yr", scale=1e-12, fmt=",.3g", optional=True)
    vendor_unit_price_usd: Array | None = output(
        "USD/unit", "the builder's view: (unit cost + NRE / program volume) / (1 - vendor gross margin)",
        "vendor unit price", "USD", fmt=",.0f", optional=True)
    two_for_two_holds: Array | None = output("bool", "ASIC-Clouds rule (Magaki et al., ISCA 2016): baseline TCO/yr >= 2 NRE "
                                             "and TCO improvement >= 2", "two-for-two rule holds", "", fmt=".0f", optional=True)
    baseline_tco_over_nre: Array | None = output("ratio", "baseline TCO per year / NRE", "baseline TCO per year / NRE", "",
                                                 fmt=".2f", optional=True)
    tco_improvement: Array | None = output("ratio", "baseline PV cost / the option's PV cost without NRE",
                                           "TCO improvement without NRE", "", fmt=".2f", optional=True)
    payback_year: Array = output("yr", "first year from which cumulative discounted savings stay >= 0 (NaN: never)",
                                 "discounted payback", "year", fmt=".0f")
    irr: Array = output("1/yr", "IRR of the yearly saving, for an investment (net outlay in year 0); else NaN",
                        "internal rate of return", "%", scale=100.0, fmt=".1f", workbook=False)
    outlay_in_year_0: Array = output("bool", "whether choosing the option costs more than the baseline in year 0 (an "
                                     "outlay its later savings may repay: the IRR exists only then)",
                                     "outlay in year 0", "", fmt=".0f", workbook=False)

    def flat(self) -> dict[str, Array]:
        """The present comparison outputs by name.

        Returns
        -------
        dict[str, ndarray] [units of the output table]
            Each output in its unit of :data:`COMPARISON_OUTPUTS`.
        """
        return _outputs_of(self)

    def broadcast(self) -> ChallengerResult:
        """The same result with every output broadcast to one common shape (float arrays).

        Returns
        -------
        ChallengerResult
            The broadcast copy.
        """
        outputs = _outputs_of(self)
        return _broadcast_fields(self, _shape_of(outputs), outputs)


@dataclass
class CashFlows:
    """Year-by-year flows of one option, years on the last axis (year 0 first).

    ``lines`` by cash-flow line (:data:`CASH_FLOW_LINES`) [USD per year]; ``total_usd`` their
    sum [USD]; ``output_tokens`` served per year [tokens]; ``discount_factor`` ``(1+r)^-y`` [-];
    ``bought`` and ``held`` devices (KV-link ports under ``links``) by pool role [devices];
    ``generation`` the roadmap generation bought each year (0: the scenario's device).
    """

    lines: dict[str, Array]
    total_usd: Array
    output_tokens: Array
    discount_factor: Array
    bought: dict[str, Array] = field(default_factory=dict)
    held: dict[str, Array] = field(default_factory=dict)
    generation: Array | None = None

    def present_value(self, flow: Array) -> Array:
        """``sum_y flow_y (1+r)^-y`` along the years.

        Parameters
        ----------
        flow : ndarray [USD]
            A yearly flow, years on the last axis (any unit; tokens too).

        Returns
        -------
        ndarray [USD]
            Its present value, in the unit of ``flow``.
        """
        return np.sum(flow * self.discount_factor, axis=-1)

    def flat(self) -> dict[str, Array]:
        """The lines, their total, the output tokens and the discount factor by name.

        Returns
        -------
        dict[str, ndarray] [USD, tokens, -]
            Lines and ``total_usd`` [USD], ``output_tokens`` [tokens], ``discount_factor`` [-], by year.
        """
        return {**self.lines, "total_usd": self.total_usd, "output_tokens": self.output_tokens,
                "discount_factor": self.discount_factor}


OPTION_OUTPUTS: dict[str, OutputSpec] = _table(OptionResult)


POOL_OUTPUTS: dict[str, OutputSpec] = _table(PoolPerformance, PoolSizing, PoolCosts, PoolPresentValues)


LINK_OUTPUTS: dict[str, OutputSpec] = _table(LinkCosts)


COMPARISON_OUTPUTS: dict[str, OutputSpec] = _table(ChallengerResult)


#: the present values that add up to ``pv_cost_usd``, in the order a finance reader expects them
COST_LINES: tuple[OutputSpec, ...] = tuple(o for o in OPTION_OUTPUTS.values() if o.cost_line)


#: their yearly twins: ``capex_usd``, ``nre_usd``, ...
CASH_FLOW_LINES: tuple[str, ...] = tuple(o.line for o in COST_LINES)


#: a pool's yearly running costs and the cash-flow line each feeds: ``{"energy_usd_per_year": "energy_usd", ...}``
YEARLY_COSTS: dict[str, str] = {o.name: o.yearly_line for o in _table(PoolCosts).values() if o.yearly_line}


def iter_outputs() -> Iterator[tuple[str, OutputSpec]]:
    """Every table row with its level.

    Yields
    ------
    tuple of (str, OutputSpec)
        ``("option" | "pool" | "links" | "comparison", row)`` for every output of the table.
    """
    for level, table in (("option", OPTION_OUTPUTS), ("pool", POOL_OUTPUTS), ("links", LINK_OUTPUTS),
                         ("comparison", COMPARISON_OUTPUTS)):
        for spec in table.values():
            yield level, spec
