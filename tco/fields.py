"""Units and valid domains of every numeric field, by the field's own name.

A parameter's dotted name ends in one of these field names
(``devices.h100-sxm.price_usd`` -> ``price_usd``); its unit and domain come from here,
so a catalog file cannot give a price in the wrong unit or a utilization above 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

INF = math.inf


@dataclass(frozen=True)
class Field:
    """Unit, valid domain and meaning of a numeric field."""

    unit: str
    minimum: float = -INF
    maximum: float = INF
    minimum_open: bool = False
    integer: bool = False
    description: str = ""

    def rule(self) -> str:
        lo = "(" if self.minimum_open else "["
        hi = "]" if math.isfinite(self.maximum) else ")"
        kind = "an integer" if self.integer else "a number"
        return f"must be {kind} in {lo}{self.minimum:g}, {self.maximum:g}{hi} {self.unit}".rstrip()

    def admits(self, value: float) -> bool:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            return False
        if self.integer and value != int(value):
            return False
        above = value > self.minimum if self.minimum_open else value >= self.minimum
        return above and value <= self.maximum


def _positive(unit, description, integer=False, maximum=INF):
    return Field(unit, 0.0, maximum, minimum_open=True, integer=integer, description=description)


def _non_negative(unit, description, maximum=INF):
    return Field(unit, 0.0, maximum, description=description)


def _fraction(description, open_zero=False):
    return Field("fraction", 0.0, 1.0, minimum_open=open_zero, description=description)


FIELDS: dict[str, Field] = {
    # devices
    "capacity_bytes": _positive("B", "capacity of a memory tier per device"),
    "bandwidth_bytes_per_s": _positive("B/s", "bandwidth of a memory tier or link"),
    "peak_flops_16bit": _positive("FLOP/s", "dense peak at 16-bit (BF16/FP16)"),
    "peak_flops_8bit": _positive("FLOP/s", "dense peak at 8-bit (FP8/INT8)"),
    "peak_flops_4bit": _positive("FLOP/s", "dense peak at 4-bit (FP4); 8-bit figure where absent"),
    "chip_to_chip_bandwidth_bytes_per_s": _positive("B/s", "scale-up bandwidth per device, each direction"),
    "scale_up_domain_devices": _positive("devices", "devices joined by the scale-up network (NVLink, ICI, ...)", integer=True),
    "scale_out_bandwidth_bytes_per_s": _positive("B/s", "scale-out network bandwidth per device, each direction"),
    "sync_latency_s": _non_negative("s", "latency of one hop of a collective"),
    "tdp_w": _positive("W", "thermal design power per device"),
    "idle_power_w": _non_negative("W", "power when idle"),
    "host_power_w": _non_negative("W", "per-device share of host and server power"),
    "price_usd": _positive("USD", "unit price (for a built device: unit cost without NRE)"),
    "system_overhead_usd": _non_negative("USD", "per-device share of server, network and rack"),
    "compute_efficiency": _fraction("achievable share of peak FLOP/s", open_zero=True),
    "bandwidth_efficiency": _fraction("achievable share of memory bandwidth", open_zero=True),
    "memory_usable_fraction": _fraction("share of memory usable for weights and KV", open_zero=True),
    "useful_life_years": Field("yr", 1.0, 30.0, integer=True,
                               description="useful life (whole years: hardware is bought at the start of a year)"),
    "residual_value_fraction": Field("fraction", 0.0, 1.0, description="value left at end of life, share of price"),
    "residual_efficiency": _fraction("share of designed efficiency left on shifted work"),
    "reauthoring_usd_per_shift": _non_negative("USD", "software re-authoring per workload shift"),
    # device prices shown beside price_usd (reference only, not read by the model)
    "list_usd": _positive("USD", "vendor list price per device"),
    "street_usd": _positive("USD", "price paid in the market per device (analyst or press)"),
    "cogs_usd": _positive("USD", "vendor cost of goods per device (analyst estimate)"),
    "rental_usd_per_hour": _positive("USD/h", "cloud rental price per device-hour"),
    # models
    "params_total": _positive("params", "total parameters"),
    "params_active": _positive("params", "parameters active per token"),
    "layers": _positive("layers", "transformer layers", integer=True),
    "kv_heads": _positive("heads", "key/value heads", integer=True),
    "head_dim": _positive("elements", "head dimension", integer=True),
    "attention_dim": _positive("elements", "query heads x head dimension", integer=True),
    "hidden_size": _positive("elements", "model width", integer=True),
    "experts_routed": _positive("experts", "routed experts per MoE layer (1 for dense)", integer=True),
    "experts_per_token": _positive("experts", "routed experts active per token (1 for dense)", integer=True),
    "kv_elements_per_token": _positive("elements/token", "cached elements per token (latent attention)"),
    "context_max_tokens": _positive("tokens", "context window", integer=True),
    # model architecture facts (reference only, not read by the core yet)
    "vocab_size": _positive("tokens", "vocabulary size", integer=True),
    "attention_heads": _positive("heads", "query heads", integer=True),
    "shared_experts": _non_negative("experts", "always-active shared experts per MoE layer"),
    "moe_layers": _non_negative("layers", "layers with routed experts (the rest are dense)"),
    "sliding_window_tokens": _positive("tokens", "attention window of windowed (or chunked) layers", integer=True),
    "sliding_window_layers": _non_negative("layers", "layers with windowed or chunked attention"),
    "kv_lora_rank": _positive("elements", "latent width cached per layer (multi-head latent attention)", integer=True),
    "qk_rope_head_dim": _positive("elements", "decoupled RoPE key width cached per layer (MLA)", integer=True),
    "native_weight_bits": Field("bits", 2.0, 32.0, description="bits per weight of the released checkpoint"),
    # workload
    "requests_per_s": _positive("req/s", "mean demand", maximum=1e9),
    "peak_to_mean": Field("ratio", 1.0, 100.0, description="peak demand / mean demand"),
    "prompt_tokens": Field("tokens", 1.0, 1e7, description="prompt (input) tokens per request"),
    "output_tokens": Field("tokens", 1.0, 1e6, description="output tokens per request"),
    "ttft_target_s": _positive("s", "time-to-first-token target"),
    "tpot_target_s": _positive("s", "time-per-output-token target"),
    "max_batch": Field("sequences", 1.0, 65536.0, integer=True, description="largest decode batch the serving stack runs"),
    "weight_bits": Field("bits", 2.0, 32.0, description="bits per weight"),
    "kv_bits": Field("bits", 2.0, 32.0, description="bits per KV-cache element"),
    "compute_bits": Field("bits", 4.0, 16.0, description="arithmetic width (selects the peak FLOP/s)"),
    "half_life_years": _positive("yr", "workload half-life: time for half the demand to shift away"),
    # economics
    "discount_rate": Field("1/yr", 0.0, 1.0, description="cost of capital (WACC)"),
    "horizon_years": Field("yr", 1.0, 30.0, integer=True, description="analysis horizon"),
    "electricity_usd_per_kwh": _non_negative("USD/kWh", "electricity price"),
    "pue": Field("ratio", 1.0, 3.0, description="power usage effectiveness"),
    "facility_usd_per_kw_month": _non_negative("USD/kW-month", "data-hall cost per kW of IT capacity"),
    "maintenance_fraction_per_year": Field("1/yr", 0.0, 1.0, description="maintenance as a share of hardware capex"),
    # links
    "latency_s": _non_negative("s", "link latency"),
    "port_cost_usd": _non_negative("USD", "cost of one link port (NIC, switch share, cable)"),
    "port_power_w": _non_negative("W", "power of one link port"),
    # NRE program
    "volume_units": Field("units", 1.0, 1e9, description="units built over the program"),
    "time_to_market_years": _non_negative("yr", "design start to deployment"),
    "design_usd": _non_negative("USD", "architecture, RTL and physical design"),
    "verification_usd": _non_negative("USD", "verification and validation"),
    "masks_usd": _non_negative("USD", "mask set"),
    "ip_usd": _non_negative("USD", "licensed IP"),
    "software_usd": _non_negative("USD", "compiler and runtime stack"),
    "die_area_mm2": Field("mm^2", 1.0, 900.0, description="die area (reticle limit ~858 mm^2)"),
    "wafer_price_usd": _positive("USD", "300 mm wafer price"),
    "defect_density_per_cm2": _non_negative("1/cm^2", "defect density"),
    "package_memory_board_usd": _non_negative("USD", "packaging, test, memory and board per unit"),
    # fleet options
    "devices_per_replica": Field("devices", 1.0, 1e6, integer=True, description="minimum devices per replica"),
    # training runs (assumptions/training.yaml, scenarios of kind: training)
    "cluster_devices": Field("devices", 1.0, 1e7, integer=True, description="devices in a training cluster"),
    "tokens": _positive("tokens", "training token budget"),
    "seq_len_tokens": Field("tokens", 1.0, 1e7, integer=True, description="training sequence length"),
    "global_batch_tokens": _positive("tokens", "tokens per optimizer step"),
    "micro_batch_sequences": Field("sequences", 1.0, 1024.0, integer=True, description="sequences per micro-batch"),
    "training_compute_efficiency": _fraction("share of the 16-bit peak the training GEMMs sustain", open_zero=True),
    "comm_overlap": _fraction("share of parallelism traffic hidden behind compute"),
    "fp8_training_speedup": Field("ratio", 1.0, 2.0, description="training throughput in FP8 / in BF16"),
    "moe_compute_efficiency": _fraction("compute efficiency of a routed (MoE) model relative to dense", open_zero=True),
    "failure_rate_per_device_day": _positive("1/device-day", "job interruptions per device and day"),
    "restart_s": _non_negative("s", "time to restart a job after an interruption"),
    "storage_write_bytes_per_s": _positive("B/s", "checkpoint write rate of the cluster's storage"),
    "checkpoint_bytes_per_param": _positive("B/param", "checkpoint bytes per parameter"),
    "weight_grad_bytes_per_param": _positive("B/param", "weight and gradient bytes per parameter on a device"),
    "optimizer_bytes_per_param": _non_negative("B/param", "optimizer-state bytes per parameter (sharded)"),
    "gradient_bytes_per_param": _positive("B/param", "gradient bytes per parameter on the wire"),
    "power_utilization": _fraction("share of (TDP - idle) drawn while training"),
    # sites (assumptions/sites.yaml) and second life
    "facility_life_years": Field("yr", 1.0, 50.0, description="years over which a built data hall is annualized"),
    "construction_usd_per_w": _non_negative("USD/W", "construction cost per W of critical IT load"),
    "rtt_to_users_s": _non_negative("s", "network round trip from the site to its users"),
    "egress_usd_per_gb": _non_negative("USD/GB", "network egress price"),
    "bytes_per_token": _positive("B/token", "bytes of answer text per output token sent to users"),
    "retire_after_years": Field("yr", 0.0, 30.0, description="age at which devices leave the training cluster"),
}


def field_for(name: str) -> Field:
    """The :class:`Field` of a dotted parameter name (by its last segment)."""
    return FIELDS[name.rsplit(".", 1)[-1]]
