"""The Model sheet: performance, fleet sizing and yearly cost terms of every option.

Each row mirrors one line of :mod:`tco.core.evaluate` (``_Workload``, ``_pool_performance``,
``_size_pools``, ``_pool_costs``) as a live formula over the Inputs' defined names. The
structure (options, pools, memory tiers, whole-device sizing, the program) is fixed when
the workbook is written; every number is live.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from tco.core import names as named
from tco.core.evaluate import prefix_hit_fractions
from tco.core.money.nodes import PEAK_FIELDS as NODE_PEAKS
from tco.core.money.nre import WAFER_DIAMETER_MM
from tco.core.names import device_param, link_param, model_param, speculation_param, tier_param
from tco.core.outputs import LINK_OUTPUTS, OPTION_OUTPUTS, POOL_OUTPUTS, dotted_name, flatten
from tco.core.serving import prefix_cache
from tco.core.serving.capacity import PERFORMANCE_FIELDS
from tco.core.serving.power import HOURS_PER_YEAR
from tco.core.serving.sizing import SECONDS_PER_YEAR
from tco.core.structure import Option, Pool
from tco.export import expert_sheet, serving_sheet
from tco.export import formulas as fx
from tco.export.cells import QuantitySheet
from tco.foundation.plain_values import scalar
from tco.inputs.scenario import Scenario


@dataclass
class OptionRefs:
    """Cell references of one option's outputs, addressed like its :class:`~tco.core.outputs.OptionResult`:
    its own outputs by name, pool outputs by role and name, KV-link outputs by name."""

    option: dict[str, str] = field(default_factory=dict)
    pools: dict[str, dict[str, str]] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    #: option-level sizing terms that are not outputs (``tpot_met``, ``prefill_time_share`` when colocated)
    sizing: dict[str, str] = field(default_factory=dict)
    #: the device of each pool, by role
    devices: dict[str, str] = field(default_factory=dict)

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
    """Where each quantity lives: ``shared[key]``, ``options[option]`` and, for a baseline that
    follows the general-purpose roadmap, ``generations[i]`` its fleet on each roadmap device."""

    shared: dict[str, str] = field(default_factory=dict)
    options: dict[str, OptionRefs] = field(default_factory=dict)
    generations: list[OptionRefs] = field(default_factory=list)


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

    def get(self, dotted: str, default: str) -> str:
        """The defined name of ``dotted``, or ``default`` (a formula's text) where the scenario has no such parameter."""
        return self.mapping.get(dotted, default)


def write_model(ws, scenario: Scenario, names: dict[str, str]) -> ModelRefs:
    """Fill ``ws`` with the Model sheet; returns the references of every quantity."""
    sheet = QuantitySheet(ws)
    n = _Names(names)
    refs = ModelRefs()
    sheet.note("Live formulas over the Inputs sheet's defined names; they mirror tco/core/evaluate.py line by line.")
    sheet.note("Constants in formulas are units (8760 h/yr, 1000 W/kW, 12 months) or rounding guards (1E-9), never assumptions.")
    _write_shared(sheet, scenario, n, refs.shared)
    n = _write_node_scaling(sheet, scenario, n)
    for option in scenario.structure.options:
        refs.options[option.name] = _write_option(sheet, scenario, option, n, refs.shared)
    for option in scenario.structure.generation_options():
        refs.generations.append(_write_option(sheet, scenario, option, n, refs.shared,
                                              f"The baseline on the roadmap device {option.pools[0].device}"))
    return refs


def _write_node_scaling(sheet: QuantitySheet, scenario: Scenario, n: _Names) -> _Names:
    """:func:`tco.core.money.nodes.node_scaled_values`: the built device's peak FLOP/s and SRAM tiers at its
    build node; returns the names with those parameters pointing at the scaled cells."""
    structure = scenario.structure
    if structure.node_scaled_tiers is None:
        return n
    q, d = sheet.quantity, structure.program_device
    sheet.heading(f"The built chip {d} at its build node (figures given at another node)")
    compute = q("compute scale: MIN(logic density ratio, energy-per-operation ratio)",
                f"MIN({n(named.program.logic_density_mtr_per_mm2)}/{n(named.program_specs.logic_density_mtr_per_mm2)},"
                f"{n(named.program_specs.relative_energy_per_op)}/{n(named.program.relative_energy_per_op)})", "ratio")
    sram = q("SRAM scale: bit-cell area ratio", f"{n(named.program_specs.sram_bitcell_um2)}/{n(named.program.sram_bitcell_um2)}",
             "ratio")
    mapping = dict(n.mapping)
    for name in NODE_PEAKS:
        key = device_param(d, name)
        mapping[key] = q(f"{name} at the build node", f"{n(key)}*{compute}", "FLOP/s")
    for tier in structure.node_scaled_tiers:
        for name, unit in (("capacity_bytes", "B"), ("bandwidth_bytes_per_s", "B/s")):
            key = tier_param(d, tier, name)
            mapping[key] = q(f"{tier} {name} at the build node", f"{n(key)}*{sram}", unit)
    return _Names(mapping)


def _write_shared(sheet: QuantitySheet, scenario: Scenario, n: _Names, shared: dict[str, str]) -> None:
    m = scenario.structure.model
    q = sheet.quantity
    sheet.heading(f"Workload and model ({m})")
    shared["peak_rps"] = q("peak demand", f"{n(named.workload.requests_per_s)}*{n(named.workload.peak_to_mean)}", "req/s")
    shared["wbpp"] = q("weight bytes per parameter", f"{n(named.workload.weight_bits)}/8", "B/param")
    latent = model_param(m, "kv_elements_per_token")
    if latent in n:
        kv = f"{n(latent)}*{n(named.workload.kv_bits)}/8"
    else:
        kv = (f"2*{n(model_param(m, 'layers'))}*{n(model_param(m, 'kv_heads'))}*{n(model_param(m, 'head_dim'))}"
              f"*{n(named.workload.kv_bits)}/8")
    shared["kv"] = q("KV-cache bytes per token", kv, "B/token", "kv_bytes_per_token")
    shared["stored"] = q("stored weight bytes", f"{n(model_param(m, 'params_total'))}*{n(named.workload.weight_bits)}/8", "B")
    experts, per_token = n(model_param(m, "experts_routed")), n(model_param(m, "experts_per_token"))
    spare = f"({experts}-{per_token})"
    shared["slot"] = q("parameters of one routed expert (0: dense)",
                       f"IF({spare}>0,({n(model_param(m, 'params_total'))}-{n(model_param(m, 'params_active'))})/{spare},0)",
                       "params")
    shared["tokens_per_year"] = q("output tokens per year",
                                  f"{n(named.workload.requests_per_s)}*{n(named.workload.output_tokens)}*{SECONDS_PER_YEAR:.0f}",
                                  "tokens/yr")
    rate, horizon = n(named.economics.discount_rate), n(named.economics.horizon_years)
    shared["annuity"] = q("annuity factor (PV of 1 USD/yr over the horizon)",
                          f"IF(ABS({rate})<1E-12,{horizon},(1-(1+{rate})^(-{horizon}))/{rate})", "yr")
    if scenario.structure.program_device is not None:
        parts = [n(k) for k in named.program_nre if k in n.mapping]
        scale = n(named.program.nre_scale)
        respin = f"{n(named.program.respin_probability)}*{n(named.program_nre.masks_usd)}*{scale}"
        shared["nre"] = q("NRE of the chip program (its parts times the NRE scale, plus a respin's expected mask set)",
                          f"({fx.total(parts)})*{scale}+{respin}", "USD", "nre_usd")


def _write_option(sheet: QuantitySheet, scenario: Scenario, option: Option, n: _Names, shared, title: str = "") -> OptionRefs:
    sheet.heading(title or f"Option {option.name}")
    out = OptionRefs(devices={pool.role: pool.device for pool in option.pools})
    prices = {pool.role: _unit_price(sheet, pool, n) for pool in option.pools}
    _write_serving(sheet, scenario, option, n, shared, out, prices)
    for pool in option.pools:
        _write_pool_costs(sheet, pool, n, shared, out, prices[pool.role])
    _write_option_totals(sheet, scenario, option, n, out)
    return out


def _model_terms(scenario: Scenario, n: _Names, shared: dict[str, str], q) -> dict[str, str]:
    """The model as the serving rows need it (``_Workload.model`` of the core)."""
    m, moe = scenario.structure.model, scenario.structure.moe
    active, per_token = n(model_param(m, "params_active")), n(model_param(m, "experts_per_token"))
    slot_bytes = f"{shared['slot']}*{shared['wbpp']}"
    if moe:
        fixed = f"MAX({active}*{shared['wbpp']}-{per_token}*{slot_bytes},0)"
        routed = f"{per_token}*{slot_bytes}"
    else:
        fixed, routed = f"{active}*{shared['wbpp']}", "0"
    latent = model_param(m, "kv_elements_per_token")
    label = " (shared + k experts per token)" if moe else " (active weights)"
    return {
        "weight": shared["stored"],
        "read_fixed": q("weight bytes read per micro-batch: fixed part" + label, fixed, "B"),
        "read_per_token": q("weight bytes read per token of a micro-batch (routed experts)", routed, "B/token"),
        "flops_per_token": q("weight FLOPs per token (2 A)", f"2*{active}", "FLOP"),
        "routed_flops": q("routed-expert FLOPs per token (2 k E)", f"2*{per_token}*{shared['slot']}", "FLOP") if moe else "0",
        "kv": shared["kv"], "layers": n(model_param(m, "layers")), "attention_dim": n(model_param(m, "attention_dim")),
        "hidden": n(model_param(m, "hidden_size")), "experts_per_token": per_token,
        "collective_element": q("bytes per element a collective moves", f"{n(named.serving.collective_bits)}/8", "B"),
        "kv_heads": "1" if latent in n else n(model_param(m, "kv_heads")), "moe": "1" if moe else "0",
    }


def _demand(scenario: Scenario, n: _Names, shared: dict[str, str]) -> serving_sheet.Demand:
    q = n(named.serving.percentile)
    return serving_sheet.Demand(
        n(named.workload.prompt_tokens), n(named.workload.output_tokens), shared["peak_rps"], n(named.workload.ttft_target_s),
        n(named.workload.tpot_target_s), q, f"(1-{q})", n(named.workload.max_batch), n(named.serving.token_budget_tokens),
        n(named.serving.memory_compute_overlap), n(named.serving.phase_overlap), n(named.serving.comm_overlap),
        scenario.structure.policy, n(named.workload.prompt_tokens_scv), scenario.structure.prefill_queue)


def _speculation(sheet, option: Option, n: _Names, demand: serving_sheet.Demand) -> serving_sheet.SpeculationCells:
    """The option's speculative decoding (:class:`tco.core.serving.speculation.Speculation`) and the demand terms it
    changes (``Demand.decode_steps``, ``step_target_s``) as rows."""
    q = sheet.quantity
    sheet.heading(f"{option.name}: speculative decoding", level=2)
    k = n(speculation_param(option.name, "draft_tokens"))
    a = n(speculation_param(option.name, "acceptance_rate"))
    f = n(speculation_param(option.name, "draft_cost_fraction"))
    tau = q("expected tokens a step emits per sequence, tau = (1 - a^(k+1)) / (1 - a) (k + 1 at a = 1)",
            f"IF({a}<1,(1-{a}^({k}+1))/(1-{a}),{k}+1)", "tokens/step")
    return serving_sheet.SpeculationCells(
        tokens_per_step=tau,
        verify_tokens=q("tokens per sequence in the verification pass (k + 1)", f"{k}+1", "tokens"),
        token_passes=q("token passes per sequence and step, s = k + 1 + k f", f"{k}+1+{k}*{f}", ""),
        weight_reads=q("reads of the weights, fixed latencies and KV cache per step, r = 1 + k f", f"1+{k}*{f}", ""),
        decode_steps=q("decode steps a request takes (O / tau)", f"{demand.output}/{tau}", "steps"),
        step_target=q("time a step may take to meet the TPOT target (tau T)", f"{demand.tpot}*{tau}", "s"))


@dataclass(frozen=True)
class PrefixCache:
    """The scenario's prefix reuse as cell references, and the hit fractions the core solved for each pool that
    prefills (:func:`tco.core.evaluate.prefix_hit_fractions`)."""

    asked: str
    """``h``, the share of prompt tokens a cache that held everything would serve [-]."""
    working_set: str
    """``S = lambda_peak T P k``, the cache bytes were every prompt token a hit [B]."""
    bytes_per_device: dict[str, str]
    """``c`` by pool role, cache bytes one device holds ("0" on a device with SRAM only) [B]."""
    batch_memory_share: str
    """The share of off-chip memory the decode batch may use ("1" where the cache lives off the device) [-]."""
    load_bandwidth: str | None
    """The tier's read bandwidth into one device [B/s] (None: the cache is in device memory, no load)."""
    prompt: str
    """``P`` [tokens]."""
    kv: str
    """KV bytes per token [B/token]."""
    solved: dict[str, float]
    """The hit fraction the core's fixed point gives each pool [-]."""
    asked_value: float
    """``h`` when written [-]."""


def _prefix_cache(sheet, scenario: Scenario, option: Option, n: _Names, shared) -> PrefixCache:
    """The rows of an option's prefix cache that do not depend on its fleet (``_serve`` and ``_cache_bytes_per_device``
    of the core)."""
    q, tier = sheet.quantity, scenario.structure.prefix_cache_tier
    sheet.heading(f"{option.name}: prefix cache ({tier})", level=2)
    prompt = n(named.workload.prompt_tokens)
    working_set = q("prefix-cache working set were every prompt token a hit (lambda_peak T P k, Little's law)",
                    f"{shared['peak_rps']}*{n(named.workload.prefix_reuse_interval_s)}*{prompt}*{shared['kv']}", "B")
    share = n(named.serving.prefix_cache_hbm_fraction) if tier == "hbm" else None
    per_device = {}
    for pool in option.pools:
        off_chip = [t for t in pool.tiers if t != prefix_cache.ON_CHIP_TIER]
        if not off_chip:
            per_device[pool.role] = "0"
        elif tier == "hbm":
            capacity = fx.total([n(tier_param(pool.device, t, "capacity_bytes")) for t in off_chip])
            per_device[pool.role] = q(f"prefix-cache bytes per {pool.device} device (its share of usable off-chip memory)",
                                      f"{share}*{n(device_param(pool.device, 'memory_usable_fraction'))}*({capacity})", "B")
        else:
            per_device[pool.role] = n(named.serving.name(f"{tier}_cache_bytes_per_device"))
    solved = prefix_hit_fractions(scenario.structure, scenario.values(), option)
    return PrefixCache(
        asked=n(named.workload.prefix_hit_fraction), working_set=working_set, bytes_per_device=per_device,
        batch_memory_share=q("share of off-chip memory the decode batch may use (the cache keeps the rest)",
                             f"1-{share}", "fraction") if tier == "hbm" else "1",
        load_bandwidth=None if tier == "hbm" else n(named.serving.name(f"{tier}_cache_bandwidth_bytes_per_s")),
        prompt=prompt, kv=shared["kv"], solved={role: scalar(x) for role, x in solved.items()},
        asked_value=scalar(scenario.values()[named.workload.prefix_hit_fraction]))


def _cached_prompt(sheet, cache: PrefixCache, pool: Pool, demand: serving_sheet.Demand):
    """A pool that prefills, with prefix reuse: its hit fraction, its demand (the prompt's computed part, the cached
    tokens, at least the devices that hold the cache) and the time to read the prefix back from its tier.

    The hit fraction is the core's fixed point of the hits and the fleet that holds them (a search over sizings,
    ``_serve``: the largest grid step the pool's own fleet holds, or ``h`` itself): written as ``h`` where the pool
    holds all it is asked, else as ``MIN(h, x)`` with the solved step ``x``, a structural value like the candidate
    list (rerun ``tco export`` after an edit that should move it); the row below it says whether the workbook's own
    fleet still holds it."""
    q, role, asked = sheet.quantity, pool.role, cache.asked
    x = cache.solved[role]
    held = x >= cache.asked_value  # the pool holds every asked hit
    how = "h: its fleet holds every asked hit" if held else f"solved by tco when written: at most {x:g}"
    hit = q(f"prefix-cache hit fraction of the {role} pool ({how})", asked if held else f"MIN({asked},{x!r})", "fraction")
    cached = q("prompt tokens served from the cache, H = x P", f"{hit}*{cache.prompt}", "tokens")
    computed = q("prompt tokens the prefill computes, P_c = P - H", f"{cache.prompt}-{cached}", "tokens")
    c = cache.bytes_per_device[role]
    minimum = "0"
    if c != "0":
        minimum = q("devices that hold the cache at that hit fraction (x S / c; the fleet has at least these)",
                    f"{hit}*{cache.working_set}/{c}", "devices")
    load = "0"
    if cache.load_bandwidth is not None:
        load = q("time to read the cached prefix back from its tier (H k / BW), added to the TTFT",
                 f"{cached}*{cache.kv}/{cache.load_bandwidth}", "s")
    return hit, replace(demand, prompt=computed, cached=cached, whole_prompt=cache.prompt, min_fleet_devices=minimum), load


def _unit_price(sheet, pool: Pool, n: _Names) -> str:
    """:func:`tco.core.evaluate.unit_price_usd`: the catalog's price, or a built chip's unit cost from its die."""
    if pool.rented:  # paid by the hour, never bought
        return "0"
    if not (pool.built and named.program.die_area_mm2 in n):
        return n(device_param(pool.device, "price_usd"))
    area = n(named.program.die_area_mm2)
    dies = f"MAX(PI()*({WAFER_DIAMETER_MM:g}/2)^2/{area}-PI()*{WAFER_DIAMETER_MM:g}/SQRT(2*{area}),1)"
    die_yield = f"EXP(-{area}/100*{n(named.program.defect_density_per_cm2)})"
    return sheet.quantity(f"{pool.device} unit cost built up from silicon (good die + package, memory, board)",
                          f"{n(named.program.wafer_price_usd)}/({dies}*{die_yield})"
                          f"+{n(named.program.package_memory_board_usd)}", "USD")


def _device_hour(sheet, pool: Pool, n: _Names, price: str) -> str:
    """:func:`tco.core.money.costs.device_hour_usd`: capital recovery plus running cost at TDP + host, per hour (a
    rented pool's: its rate)."""
    d = pool.device
    if pool.rented:
        return n(pool.rental_param)
    rate, life = n(named.economics.discount_rate), n(device_param(d, "useful_life_years"))
    capex = f"({price}+{n(device_param(d, 'system_overhead_usd'))})"
    annuity = f"IF(ABS({rate})<1E-12,{life},(1-(1+{rate})^(-{life}))/{rate})"
    watts = f"({n(device_param(d, 'tdp_w'))}+{n(device_param(d, 'host_power_w'))})"
    yearly = f"{capex}*(1-0*{fx.discount_factor(rate, life)})/{annuity}+{_energy(watts, n)}+{_facility(watts, n)}"
    return sheet.quantity(f"cost of one {d} device-hour (ranks the shapes)", f"({yearly})/{HOURS_PER_YEAR:g}", "USD/h")


def _write_serving(sheet, scenario: Scenario, option: Option, n: _Names, shared, out: OptionRefs,
                   prices: dict[str, str]) -> None:
    """Each pool sized at peak under load with its shape searched, utilization at mean, the KV link
    (``serve_option`` of the core)."""
    q, whole = sheet.quantity, scenario.structure.whole_devices
    model = _model_terms(scenario, n, shared, q)
    demand = _demand(scenario, n, shared)
    if expert_sheet.has_wide_shapes(option):
        model = {**model, **expert_sheet.model_terms(q, n, scenario, shared, model)}
        demand = replace(demand, expert=expert_sheet.demand_terms(n))
    if option.speculation:
        demand = replace(demand, speculation=_speculation(sheet, option, n, demand))
    prompt, peak_rps = n(named.workload.prompt_tokens), shared["peak_rps"]
    cache = _prefix_cache(sheet, scenario, option, n, shared) if scenario.structure.prefix_cache_tier else None
    if cache is not None:
        demand = replace(demand, batch_memory_share=cache.batch_memory_share)
    served, hits = {}, {}

    def size(pool: Pool, pool_demand: serving_sheet.Demand, extra: str) -> None:
        hour = _device_hour(sheet, pool, n, prices[pool.role])
        served[pool.role] = serving_sheet.write_pool(sheet, option, pool, n, model, pool_demand, hour, extra, whole)

    sent = prompt
    if cache is not None and option.disaggregated:
        # the decode pool's fleet does not depend on its hits; its cache holds min(h, c N / S) of the prompt, and only
        # the rest crosses the KV link (so it is sized first)
        size(option.pool("decode"), demand, "0")
        devices = f"{served['decode']['replicas']}*{served['decode']['devices_per_replica']}"
        hits["decode"] = q("prefix-cache hit fraction of the decode pool: MIN(h, c N / S), what its devices' cache holds",
                           f"MIN({cache.asked},{cache.bytes_per_device['decode']}*{devices}/{cache.working_set})", "fraction")
        sent = q("prompt tokens whose KV crosses the link (those the decode pool's cache lacks)",
                 f"{prompt}-{hits['decode']}*{prompt}", "tokens")
    extra = "0"
    if option.disaggregated:
        link = option.link
        bw = n(link_param(link, "bandwidth_bytes_per_s"))
        per_request = q("KV bytes moved per request", f"{sent}*{shared['kv']}", "B")
        transfer = write_option_output(sheet, out, "kv_transfer_s", f"{per_request}/{bw}+{n(link_param(link, 'latency_s'))}")
        exact = out.sizing["link_ports_exact"] = q("KV-link ports for the peak, unrounded", f"{peak_rps}*{per_request}/{bw}",
                                                   "ports")
        write_option_output(sheet, out, "link_ports",
                            f"MAX({fx.ceil(exact + '-' + fx.CEIL_GUARD_FLEET)},1)" if whole else exact)
        extra = transfer
    for pool in option.pools:
        if pool.role in served:
            continue
        pool_demand, pool_extra = demand, extra if pool.role == "prefill" else "0"
        if cache is not None and pool.role != "decode":
            hits[pool.role], pool_demand, load = _cached_prompt(sheet, cache, pool, demand)
            pool_extra = load if pool_extra == "0" else f"{pool_extra}+{load}"
        size(pool, pool_demand, pool_extra)
    sheet.heading("pools at peak and at mean load", level=2)
    mean = n(named.workload.requests_per_s)
    for role, v in served.items():
        for name in PERFORMANCE_FIELDS[role]:
            write_pool_output(sheet, out, role, name, v[name])
        replicas = write_pool_output(sheet, out, role, "replicas", v["replicas"])
        write_pool_output(sheet, out, role, "peak_replicas", replicas)
        write_pool_output(sheet, out, role, "utilization", f"MIN({mean}/({replicas}*{v['capacity_rps']}),1)")
        write_pool_output(sheet, out, role, "devices", f"{replicas}*{v['devices_per_replica']}")
        if demand.speculation is not None and role != "prefill":
            write_pool_output(sheet, out, role, "accepted_tokens_per_step", demand.speculation.tokens_per_step)
        if role in hits:
            write_pool_output(sheet, out, role, "prefix_hit_fraction", hits[role])
            c = cache.bytes_per_device[role]
            if role != "decode" and c != "0":  # the solved hit fraction is structure: say whether edits moved it
                q(f"the {role} pool's cache holds its hit fraction at the workbook's fleet (c N / S >= x) (1/0)",
                  f"IF({c}*{v['replicas']}*{v['devices_per_replica']}>={hits[role]}*{cache.working_set}*(1-1E-9),1,0)", "")
    first = served["prefill"] if option.disaggregated else served["colocated"]
    last = served["decode"] if option.disaggregated else served["colocated"]
    if not option.disaggregated:
        zero = q("KV transfer, link ports and link costs (none when colocated)", "0", "", "kv_transfer_s")
        out.option.update(kv_transfer_s=zero, link_ports=zero)
        out.links.update(port_capex_usd=zero, usd_per_year=zero)
        out.sizing["prefill_time_share"] = q("share of replica time spent in prefill", last["interference_share"],
                                             "fraction")
    fits = q("every pool has a shape that fits (1/0)",
             f"IF({fx.total([v['fits'] for v in served.values()])}>={len(served)}-0.5,1,0)", "")
    out.sizing["fits"] = fits
    out.sizing["tpot_met"] = q("TPOT target met (1/0)", f"IF(AND({last['tpot_ok']}>0.5,{fits}=1),1,0)", "")
    out.sizing["ttft_met"] = q("TTFT target met (1/0)", f"IF(AND({first['ttft_ok']}>0.5,{fits}=1),1,0)", "")
    wait = f"{first['queue_wait_s']}+{last['queue_wait_s']}" if option.disaggregated else first["queue_wait_s"]
    write_option_output(sheet, out, "ttft_s", first["ttft_s"])
    write_option_output(sheet, out, "tpot_s", last["tpot_s"])
    write_option_output(sheet, out, "queue_wait_s", wait)
    write_option_output(sheet, out, "batch", last["batch"])
    write_option_output(sheet, out, "spilled_bytes", last["spilled_bytes"])


def _write_pool_costs(sheet, pool: Pool, n: _Names, shared, out: OptionRefs, price: str) -> None:
    """Yearly cost terms and unit capex (``pool_costs`` of the core)."""
    d, role = pool.device, pool.role
    refs = out.pool(role)

    def row(name: str, formula: str) -> str:
        return write_pool_output(sheet, out, role, name, formula)

    sheet.heading(f"{role} pool on {d}: unit costs and yearly costs", level=2)
    devices = refs["devices"]
    price = row("unit_price_usd", price)
    hardware = row("unit_hardware_usd", "0" if pool.rented else f"{price}+{n(device_param(d, 'system_overhead_usd'))}")
    if not pool.built:  # a built pool's NRE per unit needs the fleet's units: the Cash flows sheet
        row("unit_nre_usd", "0")
    row("life_years", n(device_param(d, "useful_life_years")))
    row("residual_value_fraction", n(device_param(d, "residual_value_fraction")))
    tdp, host, idle = (n(device_param(d, k)) for k in ("tdp_w", "host_power_w", "idle_power_w"))
    power = row("power_w", f"{devices}*({idle}+({tdp}-{idle})*{refs['utilization']}+{host})")
    # a rented pool's rate covers the server, its power and its hosting
    row("energy_usd_per_year", "0" if pool.rented else _energy(power, n))
    row("facility_usd_per_year", "0" if pool.rented else _facility(f"{devices}*({tdp}+{host})", n))
    row("maintenance_usd_per_year", f"{n(named.economics.maintenance_fraction_per_year)}*{devices}*{hardware}")
    row("rental_usd_per_year", f"{devices}*{n(pool.rental_param)}*{n(pool.rental_share_param)}*{HOURS_PER_YEAR:g}"
        if pool.rented else "0")
    shift_cost = n(device_param(d, "reauthoring_usd_per_shift"))
    row("reauthoring_usd_per_year", f"{shift_cost}/{n(named.workload.half_life_years)}" if pool.specialized else "0")
    row("residual_efficiency", n(device_param(d, "residual_efficiency")) if pool.specialized else "1")


def _energy(power: str, n: _Names) -> str:
    """:func:`tco.core.serving.power.energy_cost_usd_per_year`: ``W x PUE x 8760 / 1000 x USD/kWh``."""
    return f"{power}*{n(named.economics.pue)}*{HOURS_PER_YEAR:g}/1000*{n(named.economics.electricity_usd_per_kwh)}"


def _facility(provisioned: str, n: _Names) -> str:
    """:func:`tco.core.serving.power.facility_cost_usd_per_year`: ``kW x USD/kW-month x 12``."""
    return f"{provisioned}/1000*{n(named.economics.facility_usd_per_kw_month)}*12"


def _write_option_totals(sheet, scenario: Scenario, option: Option, n: _Names, out: OptionRefs) -> None:
    q = sheet.quantity
    sheet.heading("option totals", level=2)
    prompt, output = n(named.workload.prompt_tokens), n(named.workload.output_tokens)
    power = [out.pool(pool.role)["power_w"] for pool in option.pools]
    if option.disaggregated:
        link = option.link
        ports = out.option["link_ports"]
        port_w = q("KV-link power", f"{ports}*{n(link_param(link, 'port_power_w'))}", "W")
        write_link_output(sheet, out, "port_capex_usd", f"{ports}*{n(link_param(link, 'port_cost_usd'))}")
        write_link_output(sheet, out, "usd_per_year", f"{_energy(port_w, n)}+{_facility(port_w, n)}")
        power.append(port_w)
    write_option_output(sheet, out, "devices", fx.total([out.pool(p.role)["devices"] for p in option.pools]))
    tokens = write_option_output(sheet, out, "tokens_per_s", f"{n(named.workload.requests_per_s)}*{output}")
    total_power = write_option_output(sheet, out, "power_w", fx.total(power))
    write_option_output(sheet, out, "tokens_per_joule", f"{tokens}/{total_power}")
    fits = out.sizing["fits"]
    code = (f"IF(OR({out.sizing['tpot_met']}=1,{fits}=0),0,1)+IF(OR({out.sizing['ttft_met']}=1,{fits}=0),0,2)"
            f"+IF({prompt}+{output}<={n(model_param(scenario.structure.model, 'context_max_tokens'))},0,4)"
            f"+IF({fits}=1,0,8)")
    infeasible = write_option_output(sheet, out, "infeasible_code", code)
    write_option_output(sheet, out, "feasible", f"IF({infeasible}=0,1,0)")
