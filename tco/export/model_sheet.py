"""The Model sheet: performance, fleet sizing and yearly cost terms of every option.

Each row mirrors one line of :mod:`tco.core.evaluate` (``_Workload``, ``_pool_performance``,
``_size_pools``, ``_pool_costs``) as a live formula over the Inputs' defined names. The
structure (options, pools, memory tiers, whole-device sizing, the program) is fixed when
the workbook is written; every number is live.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.nre import WAFER_DIAMETER_MM
from ..core.outputs import LINK_OUTPUTS, OPTION_OUTPUTS, POOL_OUTPUTS, dotted_name, flatten
from ..core.power import HOURS_PER_YEAR
from ..core.sizing import SECONDS_PER_YEAR
from ..core.structure import Option, Pool, device_param, link_param, model_param, pool_param, tier_param
from ..scenario import Scenario
from . import formulas as fx
from .cells import QuantitySheet


@dataclass
class OptionRefs:
    """Cell references of one option's outputs, addressed like its :class:`~tco.core.outputs.OptionResult`:
    its own outputs by name, pool outputs by role and name, KV-link outputs by name."""

    option: dict[str, str] = field(default_factory=dict)
    pools: dict[str, dict[str, str]] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    #: option-level sizing terms that are not outputs (``tpot_met``, ``prefill_time_share`` when colocated)
    sizing: dict[str, str] = field(default_factory=dict)

    def pool(self, role: str) -> dict[str, str]:
        return self.pools.setdefault(role, {})

    def update(self, other: OptionRefs) -> None:
        """Add ``other``'s references (another sheet's quantities of the same option)."""
        self.option.update(other.option)
        self.links.update(other.links)
        for role, refs in other.pools.items():
            self.pool(role).update(refs)

    def flat(self) -> dict[str, str]:
        """References under the outputs' dotted names (:func:`tco.core.outputs.flatten`)."""
        return flatten(self.option, {"links": self.links, **self.pools})


@dataclass
class ModelRefs:
    """Where each quantity lives: ``shared[key]`` and ``options[option]``."""

    shared: dict[str, str] = field(default_factory=dict)
    options: dict[str, OptionRefs] = field(default_factory=dict)


def write_pool_output(sheet: QuantitySheet, out: OptionRefs, role: str, name: str, formula: str) -> str:
    """A row for pool output ``name`` (label and unit from the output table); returns its reference."""
    spec = POOL_OUTPUTS[name]
    ref = out.pool(role)[name] = sheet.quantity(spec.meaning, formula, spec.unit, dotted_name(role, name))
    return ref


def write_option_output(sheet: QuantitySheet, out: OptionRefs, name: str, formula: str) -> str:
    """A row for option output ``name`` (label and unit from the output table); returns its reference."""
    spec = OPTION_OUTPUTS[name]
    ref = out.option[name] = sheet.quantity(spec.meaning, formula, spec.unit, name)
    return ref


def write_link_output(sheet: QuantitySheet, out: OptionRefs, name: str, formula: str) -> str:
    """A row for KV-link output ``name`` (label and unit from the output table); returns its reference."""
    spec = LINK_OUTPUTS[name]
    ref = out.links[name] = sheet.quantity(spec.meaning, formula, spec.unit, dotted_name("links", name))
    return ref


class _Names:
    """Defined name of a dotted parameter name."""

    def __init__(self, mapping: dict[str, str]):
        self.mapping = mapping

    def __call__(self, dotted: str) -> str:
        return self.mapping[dotted]

    def __contains__(self, dotted: str) -> bool:
        return dotted in self.mapping


def write_model(ws, scenario: Scenario, names: dict[str, str]) -> ModelRefs:
    """Fill ``ws`` with the Model sheet; returns the references of every quantity."""
    sheet = QuantitySheet(ws)
    n = _Names(names)
    refs = ModelRefs()
    sheet.note("Live formulas over the Inputs sheet's defined names; they mirror tco/core/evaluate.py line by line.")
    sheet.note("Constants in formulas are units (8760 h/yr, 1000 W/kW, 12 months) or rounding guards (1E-9), never assumptions.")
    _write_shared(sheet, scenario, n, refs.shared)
    for option in scenario.structure.options:
        refs.options[option.name] = _write_option(sheet, scenario, option, n, refs.shared)
    return refs


def _write_shared(sheet: QuantitySheet, scenario: Scenario, n: _Names, shared: dict[str, str]) -> None:
    m = scenario.structure.model
    q = sheet.quantity
    sheet.heading(f"Workload and model ({m})")
    shared["peak_rps"] = q("peak demand", f"{n('workload.requests_per_s')}*{n('workload.peak_to_mean')}", "req/s")
    shared["wbpp"] = q("weight bytes per parameter", f"{n('workload.weight_bits')}/8", "B/param")
    latent = model_param(m, "kv_elements_per_token")
    if latent in n:
        kv = f"{n(latent)}*{n('workload.kv_bits')}/8"
    else:
        kv = (f"2*{n(model_param(m, 'layers'))}*{n(model_param(m, 'kv_heads'))}*{n(model_param(m, 'head_dim'))}"
              f"*{n('workload.kv_bits')}/8")
    shared["kv"] = q("KV-cache bytes per token", kv, "B/token", "kv_bytes_per_token")
    shared["stored"] = q("stored weight bytes", f"{n(model_param(m, 'params_total'))}*{n('workload.weight_bits')}/8", "B")
    experts, per_token = n(model_param(m, "experts_routed")), n(model_param(m, "experts_per_token"))
    spare = f"({experts}-{per_token})"
    shared["slot"] = q("parameters of one routed expert (0: dense)",
                       f"IF({spare}>0,({n(model_param(m, 'params_total'))}-{n(model_param(m, 'params_active'))})/{spare},0)",
                       "params")
    shared["tokens_per_year"] = q("output tokens per year",
                                  f"{n('workload.requests_per_s')}*{n('workload.output_tokens')}*{SECONDS_PER_YEAR:.0f}",
                                  "tokens/yr")
    rate, horizon = n("economics.discount_rate"), n("economics.horizon_years")
    shared["annuity"] = q("annuity factor (PV of 1 USD/yr over the horizon)",
                          f"IF(ABS({rate})<1E-12,{horizon},(1-(1+{rate})^(-{horizon}))/{rate})", "yr")
    if scenario.structure.program_device is not None:
        parts = [n(k) for k in n.mapping if k.startswith("program.nre.")]
        shared["nre"] = q("NRE of the chip program (sum of its parts)", fx.total(parts), "USD", "nre_usd")


def _weights_read(tokens: str, n: _Names, m: str, shared: dict[str, str]) -> str:
    return fx.weights_read_bytes(tokens, n(model_param(m, "params_active")), n(model_param(m, "experts_routed")),
                                 n(model_param(m, "experts_per_token")), shared["slot"], shared["wbpp"])


def _write_option(sheet: QuantitySheet, scenario: Scenario, option: Option, n: _Names, shared) -> OptionRefs:
    sheet.heading(f"Option {option.name}")
    out = OptionRefs()
    for pool in option.pools:
        _write_pool_performance(sheet, scenario, option, pool, n, shared, out)
    _write_sizing(sheet, scenario, option, n, shared, out)
    for pool in option.pools:
        _write_pool_costs(sheet, pool, n, shared, out)
    _write_option_totals(sheet, scenario, option, n, out)
    return out


def _write_pool_performance(sheet, scenario: Scenario, option: Option, pool: Pool, n: _Names, shared, out: OptionRefs) -> None:
    q, d, m, role = sheet.quantity, pool.device, scenario.structure.model, pool.role
    sheet.heading(f"{role} pool on {d}: performance", level=2)
    prompt, output = n("workload.prompt_tokens"), n("workload.output_tokens")
    layers = n(model_param(m, "layers"))
    usable = n(device_param(d, "memory_usable_fraction"))
    capacities = [n(tier_param(d, t, "capacity_bytes")) for t in pool.tiers]
    bandwidths = [n(tier_param(d, t, "bandwidth_bytes_per_s")) for t in pool.tiers]
    sequence = f"({prompt}+{output})" if pool.serves_decode else prompt
    stored = f"{shared['stored']}+{sequence}*{shared['kv']}"
    fits = f"({stored})/(({fx.total(capacities)})*{usable})"
    minimum = n(pool_param(option.name, role, "devices_per_replica")) if pool.has_min_devices else "1"
    dev = write_pool_output(sheet, out, role, "devices_per_replica",
                            f"MAX(MAX({fx.ceil(fits + '-' + fx.CEIL_GUARD_REPLICA)},1),{minimum})")
    caps = [q(f"usable capacity of tier {t} per replica", f"{c}*{usable}*{dev}", "B")
            for t, c in zip(pool.tiers, capacities, strict=True)]
    eff_bw = n(device_param(d, "bandwidth_efficiency"))
    bws = [q(f"achievable bandwidth of tier {t} per replica", f"{b}*{eff_bw}*{dev}", "B/s")
           for t, b in zip(pool.tiers, bandwidths, strict=True)]
    bits = n("workload.compute_bits")
    peak = q("achieved FLOP/s per device at the compute width",
             f"IF({bits}<=4,{n(device_param(d, 'peak_flops_4bit'))},IF({bits}<=8,{n(device_param(d, 'peak_flops_8bit'))},"
             f"{n(device_param(d, 'peak_flops_16bit'))}))*{n(device_param(d, 'compute_efficiency'))}", "FLOP/s")
    s0 = q("sync latency per forward pass (2 x layers x latency x max(log2 n, 1))",
           f"2*{layers}*{n(device_param(d, 'sync_latency_s'))}*MAX(LOG(MAX({dev},1),2),1)", "s")
    nn = f"MAX({dev},1)"
    s1 = q("sync time per token in flight (ring all-reduce)",
           f"4*{layers}*({nn}-1)/{nn}*{n(model_param(m, 'hidden_size'))}*2/"
           f"{n(device_param(d, 'chip_to_chip_bandwidth_bytes_per_s'))}", "s/token")
    active, attention = n(model_param(m, "params_active")), n(model_param(m, "attention_dim"))
    if pool.serves_prefill:
        flops = f"{prompt}*(2*{active}+4*{layers}*{attention}*(0.5*{prompt}))"
        tc = q("prefill compute time", f"{flops}/({dev}*{peak})", "s")
        read = q("prefill bytes read", f"{_weights_read(prompt, n, m, shared)}+{prompt}*{shared['kv']}", "B")
        tm = q("prefill memory time", fx.memory_read_time_s(read, caps, bws), "s")
        sync = f"{s0}+{s1}*{prompt}"
        pre = write_pool_output(sheet, out, role, "prefill_s", f"MAX({tc},{tm})+{sync}")
        write_pool_output(sheet, out, role, "prefill_tokens_per_s", f"{prompt}/{pre}")
        write_pool_output(sheet, out, role, "prefill_bound", fx.bound_code(tm, tc, f"({sync})"))
    if pool.serves_decode:
        _write_decode(sheet, pool, n, m, shared, out, dev, caps, bws, peak, s0, s1)


def _write_decode(sheet, pool: Pool, n: _Names, m: str, shared, out: OptionRefs, dev, caps, bws, peak, s0, s1) -> None:
    q, role = sheet.quantity, pool.role
    prompt, output, tpot = n("workload.prompt_tokens"), n("workload.output_tokens"), n("workload.tpot_target_s")
    layers, active = n(model_param(m, "layers")), n(model_param(m, "params_active"))
    experts, k = n(model_param(m, "experts_routed")), n(model_param(m, "experts_per_token"))
    context = q("mean decode context (P + O/2)", f"{prompt}+0.5*{output}", "tokens")
    kv_step = q("KV bytes read per sequence per step", f"{context}*{shared['kv']}", "B")
    t_token = q("compute time per token in the batch",
                f"(2*{active}+4*{layers}*{n(model_param(m, 'attention_dim'))}*{context})/({dev}*{peak})", "s")
    batch_compute = q("largest batch within TPOT: compute", f"({tpot}-{s0})/({t_token}+{s1})", "sequences")
    routed = q("routed-expert bytes per token", f"{k}*{shared['slot']}*{shared['wbpp']}", "B")
    sparse = q("largest batch within TPOT: memory, experts partly touched",
               fx.max_tokens_within_time(f"({active}*{shared['wbpp']}-{routed})", f"({routed}+{kv_step})", s0, s1, tpot,
                                         caps, bws), "sequences")
    dense = q("largest batch within TPOT: memory, all weights read",
              fx.max_tokens_within_time(shared["stored"], kv_step, s0, s1, tpot, caps, bws), "sequences")
    memory = q("largest batch within TPOT: memory", f"IF({sparse}<={experts}/{k},{sparse},{dense})", "sequences")
    batch_time = q("largest batch within TPOT", f"MIN({batch_compute},{memory})", "sequences")
    capacity = q("largest batch that fits memory",
                 f"(({fx.total(caps)})-{shared['stored']})/(({prompt}+{output})*{shared['kv']})", "sequences")
    limit = f"MIN(MIN({batch_time},{capacity}),{n('workload.max_batch')})+{fx.FLOOR_GUARD_BATCH}"
    batch = write_pool_output(sheet, out, role, "batch", f"MAX({fx.floor(limit)},1)")
    step_bytes = q("bytes read per decode step", f"{_weights_read(batch, n, m, shared)}+{batch}*{kv_step}", "B")
    tm = q("decode memory time", fx.memory_read_time_s(step_bytes, caps, bws), "s")
    tc = q("decode compute time", f"{batch}*{t_token}", "s")
    sync = f"{s0}+{s1}*{batch}"
    step = write_pool_output(sheet, out, role, "step_s", f"MAX({tm},{tc})+{sync}")
    write_pool_output(sheet, out, role, "decode_tokens_per_s", f"{batch}/{step}")
    write_pool_output(sheet, out, role, "decode_bound", fx.bound_code(tm, tc, f"({sync})"))
    write_pool_output(sheet, out, role, "spilled_bytes", f"MAX({step_bytes}-{caps[0]},0)")
    write_pool_output(sheet, out, role, "tpot_met", f"IF({batch_time}>=1-1E-9,1,0)")


def _replicas(peak_load: str, capacity: str, whole: bool) -> str:
    """:func:`tco.core.sizing.replicas_needed`: ``max(ceil(peak / capacity - 1e-9), 1)``, or exact."""
    exact = f"{peak_load}/{capacity}"
    return f"MAX({fx.ceil(f'{exact}-{fx.CEIL_GUARD_FLEET}')},1)" if whole else exact


def _write_sizing(sheet, scenario: Scenario, option: Option, n: _Names, shared, out: OptionRefs) -> None:
    """Replicas, utilization and devices per pool, the KV link and latency (``size_option`` of the core)."""
    q, whole = sheet.quantity, scenario.structure.whole_devices
    sheet.heading("fleet sizing", level=2)
    mean, peak_rps = n("workload.requests_per_s"), shared["peak_rps"]
    prompt, output = n("workload.prompt_tokens"), n("workload.output_tokens")
    if option.disaggregated:
        for role, load, capacity in (("prefill", prompt, out.pool("prefill")["prefill_tokens_per_s"]),
                                     ("decode", output, out.pool("decode")["decode_tokens_per_s"])):
            replicas = write_pool_output(sheet, out, role, "replicas", _replicas(f"{peak_rps}*{load}", capacity, whole))
            write_pool_output(sheet, out, role, "utilization", f"MIN({mean}*{load}/({replicas}*{capacity}),1)")
        link = option.link
        bw = n(link_param(link, "bandwidth_bytes_per_s"))
        per_request = q("KV bytes moved per request", f"{prompt}*{shared['kv']}", "B")
        transfer = write_option_output(sheet, out, "kv_transfer_s", f"{per_request}/{bw}+{n(link_param(link, 'latency_s'))}")
        exact = f"{peak_rps}*{per_request}/{bw}"
        write_option_output(sheet, out, "link_ports",
                            f"MAX({fx.ceil(exact + '-' + fx.CEIL_GUARD_FLEET)},1)" if whole else exact)
        write_option_output(sheet, out, "ttft_s", f"{out.pool('prefill')['prefill_s']}+{transfer}")
        decode = out.pool("decode")
    else:
        pool = out.pool("colocated")
        pre, dec = pool["prefill_tokens_per_s"], pool["decode_tokens_per_s"]
        capacity = q("requests/s per replica", f"1/({prompt}/{pre}+{output}/{dec})", "req/s")
        replicas = write_pool_output(sheet, out, "colocated", "replicas", _replicas(peak_rps, capacity, whole))
        write_pool_output(sheet, out, "colocated", "utilization", f"MIN({mean}/({replicas}*{capacity}),1)")
        zero = q("KV transfer, link ports and link costs (none when colocated)", "0", "", "kv_transfer_s")
        out.option.update(kv_transfer_s=zero, link_ports=zero)
        out.links.update(port_capex_usd=zero, usd_per_year=zero)
        write_option_output(sheet, out, "ttft_s", pool["prefill_s"])
        out.sizing["prefill_time_share"] = q("share of replica time spent in prefill", f"{prompt}/{pre}*{capacity}", "fraction")
        decode = pool
    out.option.update(tpot_s=decode["step_s"], batch=decode["batch"], spilled_bytes=decode["spilled_bytes"])
    out.sizing["tpot_met"] = decode["tpot_met"]
    for pool in option.pools:
        refs = out.pool(pool.role)
        write_pool_output(sheet, out, pool.role, "devices", f"{refs['replicas']}*{refs['devices_per_replica']}")


def _write_pool_costs(sheet, pool: Pool, n: _Names, shared, out: OptionRefs) -> None:
    """Yearly cost terms and unit capex (``pool_costs`` of the core)."""
    q, d, role = sheet.quantity, pool.device, pool.role
    refs = out.pool(role)

    def row(name: str, formula: str) -> str:
        return write_pool_output(sheet, out, role, name, formula)

    sheet.heading(f"{role} pool on {d}: unit costs and yearly costs", level=2)
    devices = refs["devices"]
    price = n(device_param(d, "price_usd"))
    if pool.built and "program.die_area_mm2" in n:
        area = n("program.die_area_mm2")
        dies = f"MAX(PI()*({WAFER_DIAMETER_MM:g}/2)^2/{area}-PI()*{WAFER_DIAMETER_MM:g}/SQRT(2*{area}),1)"
        die_yield = f"EXP(-{area}/100*{n('program.defect_density_per_cm2')})"
        price = q("unit cost built up from silicon (good die + package, memory, board)",
                  f"{n('program.wafer_price_usd')}/({dies}*{die_yield})+{n('program.package_memory_board_usd')}", "USD")
    hardware = row("unit_hardware_usd", f"{price}+{n(device_param(d, 'system_overhead_usd'))}")
    row("unit_nre_usd", f"{shared['nre']}/{n('program.volume_units')}" if pool.built else "0")
    row("life_years", n(device_param(d, "useful_life_years")))
    row("residual_value_fraction", n(device_param(d, "residual_value_fraction")))
    tdp, host, idle = (n(device_param(d, k)) for k in ("tdp_w", "host_power_w", "idle_power_w"))
    power = row("power_w", f"{devices}*({idle}+({tdp}-{idle})*{refs['utilization']}+{host})")
    row("energy_usd_per_year", _energy(power, n))
    row("facility_usd_per_year", _facility(f"{devices}*({tdp}+{host})", n))
    row("maintenance_usd_per_year", f"{n('economics.maintenance_fraction_per_year')}*{devices}*{hardware}")
    shift_cost = n(device_param(d, "reauthoring_usd_per_shift"))
    row("reauthoring_usd_per_year", f"{shift_cost}/{n('workload.half_life_years')}" if pool.specialized else "0")
    row("residual_efficiency", n(device_param(d, "residual_efficiency")) if pool.specialized else "1")
    row("half_life_offset_years", n("program.time_to_market_years") if pool.built else "0")


def _energy(power: str, n: _Names) -> str:
    """:func:`tco.core.power.energy_cost_usd_per_year`: ``W x PUE x 8760 / 1000 x USD/kWh``."""
    return f"{power}*{n('economics.pue')}*{HOURS_PER_YEAR:g}/1000*{n('economics.electricity_usd_per_kwh')}"


def _facility(provisioned: str, n: _Names) -> str:
    """:func:`tco.core.power.facility_cost_usd_per_year`: ``kW x USD/kW-month x 12``."""
    return f"{provisioned}/1000*{n('economics.facility_usd_per_kw_month')}*12"


def _write_option_totals(sheet, scenario: Scenario, option: Option, n: _Names, out: OptionRefs) -> None:
    q = sheet.quantity
    sheet.heading("option totals", level=2)
    prompt, output = n("workload.prompt_tokens"), n("workload.output_tokens")
    power = [out.pool(pool.role)["power_w"] for pool in option.pools]
    if option.disaggregated:
        link = option.link
        ports = out.option["link_ports"]
        port_w = q("KV-link power", f"{ports}*{n(link_param(link, 'port_power_w'))}", "W")
        write_link_output(sheet, out, "port_capex_usd", f"{ports}*{n(link_param(link, 'port_cost_usd'))}")
        write_link_output(sheet, out, "usd_per_year", f"{_energy(port_w, n)}+{_facility(port_w, n)}")
        power.append(port_w)
    write_option_output(sheet, out, "devices", fx.total([out.pool(p.role)["devices"] for p in option.pools]))
    tokens = write_option_output(sheet, out, "tokens_per_s", f"{n('workload.requests_per_s')}*{output}")
    total_power = write_option_output(sheet, out, "power_w", fx.total(power))
    write_option_output(sheet, out, "tokens_per_joule", f"{tokens}/{total_power}")
    code = (f"IF({out.sizing['tpot_met']}=1,0,1)+IF({out.option['ttft_s']}<={n('workload.ttft_target_s')}*(1+1E-12),0,2)"
            f"+IF({prompt}+{output}<={n(model_param(scenario.structure.model, 'context_max_tokens'))},0,4)")
    infeasible = write_option_output(sheet, out, "infeasible_code", code)
    write_option_output(sheet, out, "feasible", f"IF({infeasible}=0,1,0)")
