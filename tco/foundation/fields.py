"""Units and valid domains of every numeric field, by the field's own name.

A parameter's dotted name ends in one of these field names
(``devices.h100-sxm.price_usd`` -> ``price_usd``); its unit and domain come from here,
so a catalog file cannot give a price in the wrong unit or a utilization above 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


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


#: (lower, upper): fields of one device or model where the first must not exceed the second (idle power <= TDP);
#: a scenario that breaks one is refused (:func:`tco.inputs.parameters.cross_field_errors`) and a study draws within
#: them (:func:`tco.studies.sampling.values_at_quantiles`)
ORDERED_FIELDS = (("idle_power_w", "tdp_w"), ("params_active", "params_total"), ("experts_per_token", "experts_routed"))

#: One row a field: name, unit, minimum, maximum, ``int`` for a whole number (``-`` otherwise), then the
#: description, continued on the indented lines below it; ``#`` starts a comment. A share of peak is at
#: least 1e-4 (a 10,000x derating): the smallest a device may be said to achieve.
_TABLE = """
# field                             unit            minimum maximum int  description
# devices (bounds: 1 kB to 1 PB of memory, 1 MB/s to 1 EB/s (a wafer of SRAM: 21 PB/s), 1 GFLOP/s to 1 EFLOP/s per device)
capacity_bytes                      B               1000    1e15    -    capacity of a memory tier per device
bandwidth_bytes_per_s               B/s             1e6     1e18    -    bandwidth of a memory tier or link
peak_flops_16bit                    FLOP/s          1e9     1e18    -    dense peak at 16-bit (BF16/FP16)
peak_flops_8bit                     FLOP/s          1e9     1e18    -    dense peak at 8-bit (FP8/INT8)
peak_flops_4bit                     FLOP/s          1e9     1e18    -    dense peak at 4-bit (FP4); 8-bit figure where absent
chip_to_chip_bandwidth_bytes_per_s  B/s             1e6     1e16    -    scale-up bandwidth per device, each direction
scale_up_domain_devices             devices         1       1e6     int  devices joined by the scale-up network (NVLink, ICI, ...)
scale_out_bandwidth_bytes_per_s     B/s             1e6     1e16    -    scale-out network bandwidth per device, each direction
sync_latency_s                      s               0       1       -    latency of one hop of a collective
cycle_overhead_s                    s               0       1       -    fixed time per cycle of a replica that its work does not
                                                                         hide (host scheduling, launches, under-filled GEMM
                                                                         tiles); absent = 0
collective_efficiency               fraction        0.0001  1       -    achievable share of the link bandwidth in the collectives
                                                                         (all-reduce, all-to-all, stage hops); absent = 1
prefill_collective_efficiency       fraction        0.0001  2       -    achievable share of the link bandwidth in the collectives
                                                                         of prompt tokens (chunks of thousands of tokens: large
                                                                         messages, large GEMMs); above 1 with in-switch
                                                                         reduction (NVLink SHARP); absent = collective_efficiency
expert_compute_efficiency           fraction        0.0001  1       -    share of the dense GEMMs' compute efficiency that the
                                                                         routed-expert GEMMs of a mixture-of-experts model
                                                                         reach (grouped GEMMs at per-expert batches, routing);
                                                                         absent = 1
all_to_all_efficiency               fraction        0.0001  1       -    achievable share of a link's per-direction bandwidth in
                                                                         an expert dispatch or combine (wide expert
                                                                         parallelism); absent = 1
all_to_all_latency_s                s               0       1       -    fixed time of one expert dispatch or combine beside its
                                                                         bytes; absent = sync_latency_s
purchase_unit_devices               devices         1       1e6     int  devices sold together (a rack-scale system's GPUs): a
                                                                         pool buys whole units; absent = 1
tdp_w                               W               0.1     1e6     -    thermal design power per device
idle_power_w                        W               0       1e6     -    power when idle
host_power_w                        W               0       1e6     -    per-device share of host and server power
price_usd                           USD             0.01    1e9     -    unit price (for a built device: unit cost without NRE)
system_overhead_usd                 USD             0       1e9     -    per-device share of server, network and rack
compute_efficiency                  fraction        0.0001  1       -    achievable share of peak FLOP/s
bandwidth_efficiency                fraction        0.0001  1       -    achievable share of memory bandwidth
memory_usable_fraction              fraction        0.01    1       -    share of memory usable for weights and KV
useful_life_years                   yr              1       30      int  useful life (whole years: hardware is bought at the start
                                                                         of a year)
# at most 0.9: a device resold at its full price would cost nothing, and every cost ratio to it divides by 0
residual_value_fraction             fraction        0       0.9     -    value left at end of life, share of price
residual_efficiency                 fraction        0       1       -    share of designed efficiency left on shifted work
reauthoring_usd_per_shift           USD             0       1e12    -    software re-authoring per workload shift
software_port_usd                   USD             0       1e12    -    porting the serving software to this device generation
# device prices shown beside price_usd (reference only, not read by the model)
list_usd                            USD             0.01    1e9     -    vendor list price per device
street_usd                          USD             0.01    1e9     -    price paid in the market per device (analyst or press)
cogs_usd                            USD             0.01    1e9     -    vendor cost of goods per device (analyst estimate)
rental_usd_per_hour                 USD/h           0.001   100000  -    cloud rental price per device-hour
rental_paid_share                   fraction        0.01    1       -    share of a rented pool's device-hours paid (1: reserved)
# API list prices of a model (assumptions/market.yaml; reference only, not read by the model)
input_usd_per_mtok                  USD/Mtok        0       10000   -    API list price of a million prompt tokens
cached_input_usd_per_mtok           USD/Mtok        0       10000   -    API list price of a million cached prompt tokens
output_usd_per_mtok                 USD/Mtok        0       10000   -    API list price of a million output tokens
# models (bounds: 1 M to 1e15 parameters)
params_total                        params          1e6     1e15    -    total parameters
params_active                       params          1e6     1e15    -    parameters active per token
layers                              layers          1       10000   int  transformer layers
kv_heads                            heads           1       10000   int  key/value heads
head_dim                            elements        1       100000  int  head dimension
attention_dim                       elements        1       1e6     int  query heads x head dimension
hidden_size                         elements        1       1e6     int  model width
experts_routed                      experts         1       100000  int  routed experts per MoE layer (1 for dense)
experts_per_token                   experts         1       100000  int  routed experts active per token (1 for dense)
kv_elements_per_token               elements/token  1       1e9     -    cached elements per token (latent attention)
moe_layers                          layers          0       10000   -    layers with routed experts (the rest are dense); their
                                                                         expert all-to-alls; absent = every layer
context_max_tokens                  tokens          1       1e9     int  context window
# model architecture facts (reference only, not read by the core yet)
vocab_size                          tokens          1       1e8     int  vocabulary size
attention_heads                     heads           1       100000  int  query heads
shared_experts                      experts         0       100000  -    always-active shared experts per MoE layer
sliding_window_tokens               tokens          1       1e9     int  attention window of windowed (or chunked) layers
sliding_window_layers               layers          0       10000   -    layers with windowed or chunked attention
kv_lora_rank                        elements        1       1e6     int  latent width cached per layer (multi-head latent
                                                                         attention)
qk_rope_head_dim                    elements        1       100000  int  decoupled RoPE key width cached per layer (MLA)
native_weight_bits                  bits            2       32      -    bits per weight of the released checkpoint
# workload (demand: one request a day to a billion a second)
requests_per_s                      req/s           1e-5    1e9     -    mean demand
peak_to_mean                        ratio           1       100     -    peak demand / mean demand
prompt_tokens                       tokens          1       1e7     -    prompt (input) tokens per request
prompt_tokens_scv                   ratio           0       10      -    squared coefficient of variation of the prompt
                                                                         length (0: every prompt at the mean)
output_tokens                       tokens          1       1e6     -    output tokens per request
ttft_target_s                       s               0.0001  1e6     -    time-to-first-token target
tpot_target_s                       s               1e-5    1000    -    time-per-output-token target
max_batch                           sequences       1       65536   int  largest decode batch the serving stack runs
weight_bits                         bits            2       32      -    bits per weight
kv_bits                             bits            2       32      -    bits per KV-cache element
compute_bits                        bits            4       16      -    arithmetic width (selects the peak FLOP/s)
half_life_years                     yr              0.01    1000    -    workload half-life: time for half the demand to shift
                                                                         away
demand_growth_per_year              1/yr            -0.9    100     -    growth of demand (requests/s) per year (0: flat)
demand_multiplier                   ratio           1e-6    1e6     -    demand of a service year as a multiple of year 1's
# economics
discount_rate                       1/yr            0       1       -    cost of capital (WACC)
horizon_years                       yr              1       30      int  analysis horizon
electricity_usd_per_kwh             USD/kWh         0       10      -    electricity price
pue                                 ratio           1       3       -    power usage effectiveness
facility_usd_per_kw_month           USD/kW-month    0       10000   -    data-hall cost per kW of IT capacity
maintenance_fraction_per_year       1/yr            0       1       -    maintenance as a share of hardware capex
# links
latency_s                           s               0       10      -    link latency
port_cost_usd                       USD             0       1e9     -    cost of one link port (NIC, switch share, cable)
port_power_w                        W               0       1e6     -    power of one link port
# NRE program
external_units                      units           0       1e9     -    units of the program sold to others over the horizon
vendor_gross_margin                 fraction        0       0.95    -    vendor's gross margin, share of its unit price
tapeout_to_deployment_years         yr              0       5       -    tape-out to fleet deployment: fab, packaging, bring-up
time_to_market_years                yr              0       25      -    design start to deployment
nre_scale                           ratio           0       100     -    multiplier on every NRE part, shares kept
respin_probability                  fraction        0       1       -    probability that first silicon needs a respin
respin_slip_years                   yr              0       5       -    deployment delay a respin costs
logic_density_mtr_per_mm2           MTr/mm^2        0.1     10000   -    logic transistor density of a process node
sram_bitcell_um2                    um^2            0.0001  10      -    high-density SRAM bit-cell area of a process node
relative_energy_per_op              ratio           0.01    1000    -    energy per operation at a node relative to 5 nm
design_usd                          USD             0       1e12    -    architecture, RTL and physical design
verification_usd                    USD             0       1e12    -    verification and validation
masks_usd                           USD             0       1e12    -    mask set
ip_usd                              USD             0       1e12    -    licensed IP
software_usd                        USD             0       1e12    -    compiler and runtime stack
die_area_mm2                        mm^2            1       900     -    die area (reticle limit ~858 mm^2)
wafer_price_usd                     USD             100     1e7     -    300 mm wafer price
# at most 5 per cm^2 (mature nodes ~0.1, ramping ones < 0.5): beyond, a reticle-size die's yield exp(-A D0) underflows
defect_density_per_cm2              1/cm^2          0       5       -    defect density
package_memory_board_usd            USD             0       1e9     -    packaging, test, memory and board per unit
# the general-purpose roadmap (assumptions/roadmap.yaml)
start_year                          yr              1990    2100    -    calendar date of t = 0, the decision
release_year                        yr              1990    2100    -    calendar date a device generation is available
cost_halving_years                  yr              0.1     1e6     -    time for the best general cost per token to halve after
                                                                         the last listed generation
# fleet options
devices_per_replica                 devices         1       1e6     int  minimum devices per replica
# training runs (assumptions/training.yaml, scenarios of kind: training)
cluster_devices                     devices         1       1e7     int  devices in a training cluster
tokens                              tokens          1000    1e16    -    training token budget
seq_len_tokens                      tokens          1       1e7     int  training sequence length
global_batch_tokens                 tokens          1       1e12    -    tokens per optimizer step
micro_batch_sequences               sequences       1       1024    int  sequences per micro-batch
training_compute_efficiency         fraction        0.0001  1       -    share of the 16-bit peak the training GEMMs sustain
comm_overlap                        fraction        0       1       -    share of parallelism traffic hidden behind compute
fp8_training_speedup                ratio           1       2       -    training throughput in FP8 / in BF16
moe_compute_efficiency              fraction        0.0001  1       -    compute efficiency of a routed (MoE) model relative to
                                                                         dense
failure_rate_per_device_day         1/device-day    1e-9    0.01    -    job interruptions per device and day
restart_s                           s               0       100000  -    time to restart a job after an interruption
storage_write_bytes_per_s           B/s             1e6     1e15    -    checkpoint write rate of the cluster's storage
checkpoint_bytes_per_param          B/param         0.1     100     -    checkpoint bytes per parameter
weight_grad_bytes_per_param         B/param         0.1     100     -    weight and gradient bytes per parameter on a device
optimizer_bytes_per_param           B/param         0       100     -    optimizer-state bytes per parameter (sharded)
gradient_bytes_per_param            B/param         0.1     100     -    gradient bytes per parameter on the wire
power_utilization                   fraction        0       1       -    share of (TDP - idle) drawn while training
# sites (assumptions/sites.yaml) and second life
facility_life_years                 yr              1       50      -    years over which a built data hall is annualized
construction_usd_per_w              USD/W           0       1000    -    construction cost per W of critical IT load
rtt_to_users_s                      s               0       10      -    network round trip from the site to its users
egress_usd_per_gb                   USD/GB          0       1000    -    network egress price
bytes_per_token                     B/token         0.1     10000   -    bytes of answer text per output token sent to users
retire_after_years                  yr              0       30      -    age at which devices leave the training cluster
# serving stack (assumptions/serving.yaml)
percentile                          fraction        0.5     0.9999  -    share of requests whose TTFT and TPOT meet the targets at
                                                                         peak
token_budget_tokens                 tokens          1       1e7     int  tokens per scheduled micro-batch, decode first, then
                                                                         prefill chunks
memory_compute_overlap              fraction        0       1       -    share of the shorter of memory traffic and arithmetic
                                                                         hidden in a phase
phase_overlap                       fraction        0       1       -    share of the shorter of the weight and attention phases
                                                                         hidden under the other
# comm_overlap (above) also hides a serving replica's collectives under its computation
collective_bits                     bits            4       32      -    bits per element a replica's all-reduces, stage sends and
                                                                         all-to-alls move
dispatch_bits                       bits            4       32      -    bits per element an expert dispatch moves (the combine
                                                                         moves collective_bits)
expert_imbalance                    ratio           1       100     -    busiest expert-parallel rank's routed tokens over the
                                                                         mean, after the load balancer
redundant_expert_share              fraction        0       10      -    redundant (duplicated) routed experts over the routed
                                                                         experts
micro_batch_overlap                 fraction        0       1       -    share of one micro-batch's expert all-to-alls hidden
                                                                         under the other's computation (two-batch overlap)
# prefix (KV-cache) reuse (tco.core.serving.prefix_cache)
prefix_hit_fraction                 fraction        0       0.99    -    share of prompt tokens that repeat a cached prefix
                                                                         (asked; a pool achieves what its cache holds)
prefix_reuse_interval_s             s               0.001   1e6     -    time a cached prefix waits for its reuse (a session's
                                                                         next turn)
prefix_cache_hbm_fraction           fraction        0       0.9     -    share of a device's off-chip memory kept for the prefix
                                                                         cache (tier hbm), taken from the decode batch's
host_dram_cache_bytes_per_device    B               0       1e15    -    host DRAM given to the prefix cache, per device
host_dram_cache_bandwidth_bytes_per_s B/s           1e6     1e15    -    read bandwidth from host DRAM into one device
ssd_cache_bytes_per_device          B               0       1e16    -    local flash given to the prefix cache, per device
ssd_cache_bandwidth_bytes_per_s     B/s             1e6     1e15    -    read bandwidth from local flash into one device
# speculative decoding (tco.core.serving.speculation)
draft_tokens                        tokens          1       16      int  tokens a draft proposes per sequence and step
acceptance_rate                     fraction        0       1       -    probability a drafted token is accepted given the ones
                                                                         before it were (i.i.d. per position)
draft_cost_fraction                 fraction        0       1       -    one draft pass's cost over one target pass (weights,
                                                                         arithmetic, latency), per token
# fleet analyses (assumptions/fleet_dynamics.yaml; tco.dynamics): stranded capacity
# demand_growth_per_year (above, workload) also sets the request-rate growth over the simulated weeks
prompt_growth_per_year              1/yr            0       100     -    prompt-length growth (context use)
output_growth_per_year              1/yr            0       100     -    output-length growth (reasoning depth)
weekend_ratio                       ratio           0.01    3       -    weekend-day demand / weekday demand
peak_hour                           h               0       24      -    hour of the daily demand peak
flex_buffer_share                   fraction        0       10      -    flexible GPU buffer, share of today's GPU replicas
# coordination, routing
scheduling_overhead                 fraction        0       10      -    extra device time per token for coordination
slack                               fraction        0       0.99    -    share of specialized capacity held idle to absorb mix
                                                                         swings
hard_share                          fraction        0.001   1       -    share of requests only the large model answers usefully
router_skill                        exponent        0       100     -    exponent a of the misroute curve h r^(1+a)
# specialization tree: the throughput leaf
throughput_max_batch                sequences       1       65536   int  batch cap of the throughput leaf
throughput_tpot_target_s            s               1e-5    1000    -    TPOT target of the throughput leaf
throughput_ttft_target_s            s               0.0001  1e6     -    TTFT target of the throughput leaf
# tokens-per-watt roadmap (horizon_years above: years the process node improves over)
target_tokens_per_watt_gain         ratio           0.01    1e6     -    tokens-per-watt factor the levers aim at
process_gain_per_decade             ratio           1       100     -    process-node energy-efficiency gain per decade
target_bits                         bits            2       16      -    number format the roadmap reaches (weights, KV,
                                                                         arithmetic)
"""


def _fields(table: str) -> dict[str, Field]:
    """The :class:`Field` of every row of ``table`` (the layout of :data:`_TABLE`), in order."""
    fields: dict[str, Field] = {}
    for line in table.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line[0].isspace():  # the description continued
            name, field = fields.popitem()
            fields[name] = replace(field, description=f"{field.description} {line.strip()}")
            continue
        name, unit, minimum, maximum, integer, description = line.split(maxsplit=5)
        if integer not in ("int", "-"):
            raise ValueError(f"tco/foundation/fields.py row {name}: the int column is {integer!r}, not 'int' or '-'")
        fields[name] = Field(unit, float(minimum), float(maximum), integer == "int", description)
    return fields


FIELDS: dict[str, Field] = _fields(_TABLE)


def field_for(name: str) -> Field:
    """The :class:`Field` of a dotted parameter name (by its last segment)."""
    return FIELDS[name.rsplit(".", 1)[-1]]
