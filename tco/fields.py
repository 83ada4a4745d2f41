"""Units and valid domains of every numeric field, by the field's own name.

A parameter's dotted name ends in one of these field names
(``devices.h100-sxm.price_usd`` -> ``price_usd``); its unit and domain come from here,
so a catalog file cannot give a price in the wrong unit or a utilization above 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    """Unit, valid domain and meaning of a numeric field.

    Every domain is closed and finite: ``[minimum, maximum]`` spans every physically
    plausible value (a few decades beyond today's parts) and keeps the core's arithmetic
    finite for any accepted value, so a value outside it is a typo or a unit mistake
    (``tests/security/test_fuzz.py`` draws the whole domain of every field).
    """

    unit: str
    minimum: float
    maximum: float
    integer: bool = False
    description: str = ""

    def rule(self) -> str:
        kind = "an integer" if self.integer else "a number"
        return f"must be {kind} in [{self.minimum:g}, {self.maximum:g}] {self.unit}".rstrip()

    def admits(self, value: float) -> bool:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            return False
        if self.integer and value != int(value):
            return False
        return self.minimum <= value <= self.maximum

    def admits_bound(self, value: float) -> bool:
        """Whether ``value`` may end a search range or sweep axis: in the domain, or, for an integer
        field, a number that rounds into it (the swept values are rounded)."""
        if self.admits(value):
            return True
        return self.integer and isinstance(value, float) and math.isfinite(value) and self.admits(round(value))


def _fraction(description, minimum=0.0):
    return Field("fraction", minimum, 1.0, description=description)


#: the smallest share of peak a device may be said to achieve (a 10,000x derating)
MIN_EFFICIENCY = 1e-4

FIELDS: dict[str, Field] = {
    # devices (bounds: 1 kB to 1 PB of memory, 1 MB/s to 1 EB/s (a wafer of SRAM: 21 PB/s), 1 GFLOP/s to 1 EFLOP/s per device)
    "capacity_bytes": Field("B", 1e3, 1e15, description="capacity of a memory tier per device"),
    "bandwidth_bytes_per_s": Field("B/s", 1e6, 1e18, description="bandwidth of a memory tier or link"),
    "peak_flops_16bit": Field("FLOP/s", 1e9, 1e18, description="dense peak at 16-bit (BF16/FP16)"),
    "peak_flops_8bit": Field("FLOP/s", 1e9, 1e18, description="dense peak at 8-bit (FP8/INT8)"),
    "peak_flops_4bit": Field("FLOP/s", 1e9, 1e18, description="dense peak at 4-bit (FP4); 8-bit figure where absent"),
    "chip_to_chip_bandwidth_bytes_per_s": Field("B/s", 1e6, 1e16, description="scale-up bandwidth per device, each direction"),
    "scale_up_domain_devices": Field("devices", 1.0, 1e6, integer=True,
                                     description="devices joined by the scale-up network (NVLink, ICI, ...)"),
    "scale_out_bandwidth_bytes_per_s": Field("B/s", 1e6, 1e16,
                                             description="scale-out network bandwidth per device, each direction"),
    "sync_latency_s": Field("s", 0.0, 1.0, description="latency of one hop of a collective"),
    "cycle_overhead_s": Field("s", 0.0, 1.0, description="fixed time per cycle of a replica that its work does not hide "
                              "(host scheduling, launches, under-filled GEMM tiles); absent = 0"),
    "collective_efficiency": _fraction("achievable share of the link bandwidth in the collectives (all-reduce, all-to-all, "
                                       "stage hops); absent = 1", MIN_EFFICIENCY),
    "tdp_w": Field("W", 0.1, 1e6, description="thermal design power per device"),
    "idle_power_w": Field("W", 0.0, 1e6, description="power when idle"),
    "host_power_w": Field("W", 0.0, 1e6, description="per-device share of host and server power"),
    "price_usd": Field("USD", 0.01, 1e9, description="unit price (for a built device: unit cost without NRE)"),
    "system_overhead_usd": Field("USD", 0.0, 1e9, description="per-device share of server, network and rack"),
    "compute_efficiency": _fraction("achievable share of peak FLOP/s", MIN_EFFICIENCY),
    "bandwidth_efficiency": _fraction("achievable share of memory bandwidth", MIN_EFFICIENCY),
    "memory_usable_fraction": _fraction("share of memory usable for weights and KV", 0.01),
    "useful_life_years": Field("yr", 1.0, 30.0, integer=True,
                               description="useful life (whole years: hardware is bought at the start of a year)"),
    # at most 0.9: a device resold at its full price would cost nothing, and every cost ratio to it divides by 0
    "residual_value_fraction": Field("fraction", 0.0, 0.9, description="value left at end of life, share of price"),
    "residual_efficiency": _fraction("share of designed efficiency left on shifted work"),
    "reauthoring_usd_per_shift": Field("USD", 0.0, 1e12, description="software re-authoring per workload shift"),
    "software_port_usd": Field("USD", 0.0, 1e12, description="porting the serving software to this device generation"),
    # device prices shown beside price_usd (reference only, not read by the model)
    "list_usd": Field("USD", 0.01, 1e9, description="vendor list price per device"),
    "street_usd": Field("USD", 0.01, 1e9, description="price paid in the market per device (analyst or press)"),
    "cogs_usd": Field("USD", 0.01, 1e9, description="vendor cost of goods per device (analyst estimate)"),
    "rental_usd_per_hour": Field("USD/h", 1e-3, 1e5, description="cloud rental price per device-hour"),
    # models (bounds: 1 M to 1e15 parameters)
    "params_total": Field("params", 1e6, 1e15, description="total parameters"),
    "params_active": Field("params", 1e6, 1e15, description="parameters active per token"),
    "layers": Field("layers", 1.0, 1e4, integer=True, description="transformer layers"),
    "kv_heads": Field("heads", 1.0, 1e4, integer=True, description="key/value heads"),
    "head_dim": Field("elements", 1.0, 1e5, integer=True, description="head dimension"),
    "attention_dim": Field("elements", 1.0, 1e6, integer=True, description="query heads x head dimension"),
    "hidden_size": Field("elements", 1.0, 1e6, integer=True, description="model width"),
    "experts_routed": Field("experts", 1.0, 1e5, integer=True, description="routed experts per MoE layer (1 for dense)"),
    "experts_per_token": Field("experts", 1.0, 1e5, integer=True, description="routed experts active per token (1 for dense)"),
    "kv_elements_per_token": Field("elements/token", 1.0, 1e9, description="cached elements per token (latent attention)"),
    "context_max_tokens": Field("tokens", 1.0, 1e9, integer=True, description="context window"),
    # model architecture facts (reference only, not read by the core yet)
    "vocab_size": Field("tokens", 1.0, 1e8, integer=True, description="vocabulary size"),
    "attention_heads": Field("heads", 1.0, 1e5, integer=True, description="query heads"),
    "shared_experts": Field("experts", 0.0, 1e5, description="always-active shared experts per MoE layer"),
    "moe_layers": Field("layers", 0.0, 1e4, description="layers with routed experts (the rest are dense)"),
    "sliding_window_tokens": Field("tokens", 1.0, 1e9, integer=True,
                                   description="attention window of windowed (or chunked) layers"),
    "sliding_window_layers": Field("layers", 0.0, 1e4, description="layers with windowed or chunked attention"),
    "kv_lora_rank": Field("elements", 1.0, 1e6, integer=True,
                          description="latent width cached per layer (multi-head latent attention)"),
    "qk_rope_head_dim": Field("elements", 1.0, 1e5, integer=True, description="decoupled RoPE key width cached per layer (MLA)"),
    "native_weight_bits": Field("bits", 2.0, 32.0, description="bits per weight of the released checkpoint"),
    # workload (demand: one request a day to a billion a second)
    "requests_per_s": Field("req/s", 1e-5, 1e9, description="mean demand"),
    "peak_to_mean": Field("ratio", 1.0, 100.0, description="peak demand / mean demand"),
    "prompt_tokens": Field("tokens", 1.0, 1e7, description="prompt (input) tokens per request"),
    "output_tokens": Field("tokens", 1.0, 1e6, description="output tokens per request"),
    "ttft_target_s": Field("s", 1e-4, 1e6, description="time-to-first-token target"),
    "tpot_target_s": Field("s", 1e-5, 1e3, description="time-per-output-token target"),
    "max_batch": Field("sequences", 1.0, 65536.0, integer=True, description="largest decode batch the serving stack runs"),
    "weight_bits": Field("bits", 2.0, 32.0, description="bits per weight"),
    "kv_bits": Field("bits", 2.0, 32.0, description="bits per KV-cache element"),
    "compute_bits": Field("bits", 4.0, 16.0, description="arithmetic width (selects the peak FLOP/s)"),
    "half_life_years": Field("yr", 0.01, 1e3, description="workload half-life: time for half the demand to shift away"),
    "demand_growth_per_year": Field("1/yr", -0.9, 100.0, description="growth of demand (requests/s) per year (0: flat)"),
    "demand_multiplier": Field("ratio", 1e-6, 1e6, description="demand of a service year as a multiple of year 1's"),
    # economics
    "discount_rate": Field("1/yr", 0.0, 1.0, description="cost of capital (WACC)"),
    "horizon_years": Field("yr", 1.0, 30.0, integer=True, description="analysis horizon"),
    "electricity_usd_per_kwh": Field("USD/kWh", 0.0, 10.0, description="electricity price"),
    "pue": Field("ratio", 1.0, 3.0, description="power usage effectiveness"),
    "facility_usd_per_kw_month": Field("USD/kW-month", 0.0, 1e4, description="data-hall cost per kW of IT capacity"),
    "maintenance_fraction_per_year": Field("1/yr", 0.0, 1.0, description="maintenance as a share of hardware capex"),
    # links
    "latency_s": Field("s", 0.0, 10.0, description="link latency"),
    "port_cost_usd": Field("USD", 0.0, 1e9, description="cost of one link port (NIC, switch share, cable)"),
    "port_power_w": Field("W", 0.0, 1e6, description="power of one link port"),
    # NRE program
    "external_units": Field("units", 0.0, 1e9, description="units of the program sold to others over the horizon"),
    "vendor_gross_margin": Field("fraction", 0.0, 0.95, description="vendor's gross margin, share of its unit price"),
    "tapeout_to_deployment_years": Field("yr", 0.0, 5.0, description="tape-out to fleet deployment: fab, packaging, bring-up"),
    "time_to_market_years": Field("yr", 0.0, 25.0, description="design start to deployment"),
    "logic_density_mtr_per_mm2": Field("MTr/mm^2", 0.1, 1e4, description="logic transistor density of a process node"),
    "sram_bitcell_um2": Field("um^2", 1e-4, 10.0, description="high-density SRAM bit-cell area of a process node"),
    "relative_energy_per_op": Field("ratio", 0.01, 1e3, description="energy per operation at a node relative to 5 nm"),
    "design_usd": Field("USD", 0.0, 1e12, description="architecture, RTL and physical design"),
    "verification_usd": Field("USD", 0.0, 1e12, description="verification and validation"),
    "masks_usd": Field("USD", 0.0, 1e12, description="mask set"),
    "ip_usd": Field("USD", 0.0, 1e12, description="licensed IP"),
    "software_usd": Field("USD", 0.0, 1e12, description="compiler and runtime stack"),
    "die_area_mm2": Field("mm^2", 1.0, 900.0, description="die area (reticle limit ~858 mm^2)"),
    "wafer_price_usd": Field("USD", 100.0, 1e7, description="300 mm wafer price"),
    # at most 5 per cm^2 (mature nodes ~0.1, ramping ones < 0.5): beyond, a reticle-size die's yield exp(-A D0) underflows
    "defect_density_per_cm2": Field("1/cm^2", 0.0, 5.0, description="defect density"),
    "package_memory_board_usd": Field("USD", 0.0, 1e9, description="packaging, test, memory and board per unit"),
    # the general-purpose roadmap (assumptions/roadmap.yaml)
    "start_year": Field("yr", 1990.0, 2100.0, description="calendar date of t = 0, the decision"),
    "release_year": Field("yr", 1990.0, 2100.0, description="calendar date a device generation is available"),
    "cost_halving_years": Field("yr", 0.1, 1e6,
                                description="time for the best general cost per token to halve after the last listed generation"),
    # fleet options
    "devices_per_replica": Field("devices", 1.0, 1e6, integer=True, description="minimum devices per replica"),
    # training runs (assumptions/training.yaml, scenarios of kind: training)
    "cluster_devices": Field("devices", 1.0, 1e7, integer=True, description="devices in a training cluster"),
    "tokens": Field("tokens", 1e3, 1e16, description="training token budget"),
    "seq_len_tokens": Field("tokens", 1.0, 1e7, integer=True, description="training sequence length"),
    "global_batch_tokens": Field("tokens", 1.0, 1e12, description="tokens per optimizer step"),
    "micro_batch_sequences": Field("sequences", 1.0, 1024.0, integer=True, description="sequences per micro-batch"),
    "training_compute_efficiency": _fraction("share of the 16-bit peak the training GEMMs sustain", MIN_EFFICIENCY),
    "comm_overlap": _fraction("share of parallelism traffic hidden behind compute"),
    "fp8_training_speedup": Field("ratio", 1.0, 2.0, description="training throughput in FP8 / in BF16"),
    "moe_compute_efficiency": _fraction("compute efficiency of a routed (MoE) model relative to dense", MIN_EFFICIENCY),
    "failure_rate_per_device_day": Field("1/device-day", 1e-9, 1e-2, description="job interruptions per device and day"),
    "restart_s": Field("s", 0.0, 1e5, description="time to restart a job after an interruption"),
    "storage_write_bytes_per_s": Field("B/s", 1e6, 1e15, description="checkpoint write rate of the cluster's storage"),
    "checkpoint_bytes_per_param": Field("B/param", 0.1, 100.0, description="checkpoint bytes per parameter"),
    "weight_grad_bytes_per_param": Field("B/param", 0.1, 100.0,
                                         description="weight and gradient bytes per parameter on a device"),
    "optimizer_bytes_per_param": Field("B/param", 0.0, 100.0, description="optimizer-state bytes per parameter (sharded)"),
    "gradient_bytes_per_param": Field("B/param", 0.1, 100.0, description="gradient bytes per parameter on the wire"),
    "power_utilization": _fraction("share of (TDP - idle) drawn while training"),
    # sites (assumptions/sites.yaml) and second life
    "facility_life_years": Field("yr", 1.0, 50.0, description="years over which a built data hall is annualized"),
    "construction_usd_per_w": Field("USD/W", 0.0, 1e3, description="construction cost per W of critical IT load"),
    "rtt_to_users_s": Field("s", 0.0, 10.0, description="network round trip from the site to its users"),
    "egress_usd_per_gb": Field("USD/GB", 0.0, 1e3, description="network egress price"),
    "bytes_per_token": Field("B/token", 0.1, 1e4, description="bytes of answer text per output token sent to users"),
    "retire_after_years": Field("yr", 0.0, 30.0, description="age at which devices leave the training cluster"),
    # serving stack (assumptions/serving.yaml)
    "percentile": Field("fraction", 0.5, 0.9999, description="share of requests whose TTFT and TPOT meet the targets at peak"),
    "token_budget_tokens": Field("tokens", 1.0, 1e7, integer=True,
                                 description="tokens per scheduled micro-batch, decode first, then prefill chunks"),
    "memory_compute_overlap": _fraction("share of the shorter of memory traffic and arithmetic hidden in a phase"),
    "phase_overlap": _fraction("share of the shorter of the weight and attention phases hidden under the other"),
    # comm_overlap (above) also hides a serving replica's collectives under its computation
    # fleet analyses (assumptions/fleet_dynamics.yaml; tco.dynamics): stranded capacity
    # demand_growth_per_year (above, workload) also sets the request-rate growth over the simulated weeks
    "prompt_growth_per_year": Field("1/yr", 0.0, 100.0, description="prompt-length growth (context use)"),
    "output_growth_per_year": Field("1/yr", 0.0, 100.0, description="output-length growth (reasoning depth)"),
    "weekend_ratio": Field("ratio", 0.01, 3.0, description="weekend-day demand / weekday demand"),
    "peak_hour": Field("h", 0.0, 24.0, description="hour of the daily demand peak"),
    "flex_buffer_share": Field("fraction", 0.0, 10.0, description="flexible GPU buffer, share of today's GPU replicas"),
    # coordination, routing
    "scheduling_overhead": Field("fraction", 0.0, 10.0, description="extra device time per token for coordination"),
    "slack": Field("fraction", 0.0, 0.99, description="share of specialized capacity held idle to absorb mix swings"),
    "hard_share": Field("fraction", 0.001, 1.0, description="share of requests only the large model answers usefully"),
    "router_skill": Field("exponent", 0.0, 100.0, description="exponent a of the misroute curve h r^(1+a)"),
    # specialization tree: the throughput leaf
    "throughput_max_batch": Field("sequences", 1.0, 65536.0, integer=True, description="batch cap of the throughput leaf"),
    "throughput_tpot_target_s": Field("s", 1e-5, 1e3, description="TPOT target of the throughput leaf"),
    "throughput_ttft_target_s": Field("s", 1e-4, 1e6, description="TTFT target of the throughput leaf"),
    # tokens-per-watt roadmap (horizon_years above: years the process node improves over)
    "target_tokens_per_watt_gain": Field("ratio", 0.01, 1e6, description="tokens-per-watt factor the levers aim at"),
    "process_gain_per_decade": Field("ratio", 1.0, 100.0, description="process-node energy-efficiency gain per decade"),
    "target_bits": Field("bits", 2.0, 16.0, description="number format the roadmap reaches (weights, KV, arithmetic)"),
}


def field_for(name: str) -> Field:
    """The :class:`Field` of a dotted parameter name (by its last segment)."""
    return FIELDS[name.rsplit(".", 1)[-1]]
