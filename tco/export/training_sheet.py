"""The training workbook's Model sheet: each cluster's step time, goodput, time to train and cost per run.

Each row mirrors one line of :mod:`tco.core.training.step` (``step_terms`` for the chosen shape),
:mod:`tco.core.training.goodput` and :mod:`tco.core.training.run` as a live formula over the Inputs'
defined names. The parallel shape each option uses (tensor, pipeline, virtual stages, expert,
recomputed share, FSDP) is the one the Python model chose from its candidate list at the
written values; like the options themselves it is structure, fixed when the workbook is
written (rerun ``tco export`` after edits that should change it). Every other number is live.
"""

from __future__ import annotations

import dataclasses

from tco.core import names as named
from tco.core.names import device_param, model_param
from tco.core.serving.power import HOURS_PER_YEAR
from tco.core.serving.sizing import SECONDS_PER_YEAR
from tco.core.training.goodput import SECONDS_PER_DAY
from tco.core.training.results import TRAINING_COST_LINES, TRAINING_OUTPUTS
from tco.core.training.run import cluster_param, evaluate_training, training_comparison
from tco.core.training.step import ACTIVATION_BYTES_PER_HIDDEN, CHECKPOINTED_INPUT_BYTES_PER_HIDDEN, WIRE_BYTES, ChosenShape
from tco.export import formulas as fx
from tco.export.cells import QuantitySheet
from tco.export.check_sheet import NEVER, finite_or
from tco.foundation.plain_values import scalar

#: the quantities of an option the Check sheet compares, in its order: the cost lines, the chosen shape's terms in the
#: step model's order (its step time goes with the run's figures), then the other outputs of the training output table
CHECKED = tuple(dict.fromkeys((*(o.name for o in TRAINING_COST_LINES),
                               *(f.name for f in dataclasses.fields(ChosenShape) if f.name != "step_s"), *TRAINING_OUTPUTS)))


def training_model_values(scenario) -> dict[str, dict[str, float | str]]:
    """Every quantity the training workbook computes, from the Python model: ``{option: {key: value}}`` (:data:`CHECKED`,
    then a challenger's comparison outputs)."""
    results = evaluate_training(scenario.structure, scenario.values())
    comp = training_comparison(scenario.structure, results)
    out = {}
    for option in scenario.structure.options:
        r = results[option.name]
        row = {k: finite_or(getattr(r, k), NEVER) for k in CHECKED}
        if option.name in comp:
            row.update({k: finite_or(v, NEVER) for k, v in comp[option.name].flat().items()})
        out[option.name] = row
    return out


def _constant(value) -> str:
    """A degree of the chosen shape written into a formula: its value, or -1 where no shape fits."""
    value = finite_or(value, NEVER)
    return f"{value!r}" if value != NEVER else "-1"


def _link(span: str, domain: str, c2c: str, out: str) -> str:
    """:func:`tco.core.training.step.link_bandwidth`."""
    return f"IF({span}<={domain}+1E-9,{c2c},{out})"


def _collective(bytes_: str, bandwidth: str, latency: str, group: str, collectives: str) -> str:
    """:func:`tco.core.training.step.collective_time_s`: ``bytes / bw + collectives 2 log2(n) latency``, 0 for n = 1."""
    return f"IF({group}>1,{bytes_}/{bandwidth}+{collectives}*2*LOG(MAX({group},1),2)*{latency},0)"


def _ring(message: str, group: str) -> str:
    """:func:`tco.core.training.step.ring_allreduce_bytes_per_device`."""
    return f"2*(MAX({group},1)-1)/MAX({group},1)*{message}"


def write_training_model(ws, scenario, names: dict[str, str]) -> dict[str, dict[str, str]]:
    """Fill ``ws``; returns ``{option: {key: cell reference}}`` for the Check sheet."""
    sheet = QuantitySheet(ws)
    q = sheet.quantity

    def n(dotted: str) -> str:
        return names[dotted]

    structure = scenario.structure
    m = structure.model
    results = evaluate_training(structure, scenario.values())
    sheet.note("Live formulas over the Inputs sheet's defined names; they mirror tco/core/training/step.py, goodput.py and "
               "run.py line by line.")
    sheet.note("The parallel shape of each option is structure, chosen by tco at the written values (rerun `tco export` "
               "after edits that should change it); constants in formulas are units or rounding guards.")
    sheet.heading(f"Model and run ({m})")
    T, A = n(model_param(m, "params_total")), n(model_param(m, "params_active"))
    L, h, a = n(model_param(m, "layers")), n(model_param(m, "hidden_size")), n(model_param(m, "attention_dim"))
    E, k = n(model_param(m, "experts_routed")), n(model_param(m, "experts_per_token"))
    seq, gbt, mbs = (n(name) for name in (named.training.seq_len_tokens, named.training.global_batch_tokens,
                                          named.training.micro_batch_sequences))
    shared = {
        "model_flops": q("model FLOPs per token (6A + 6 L a s)", f"6*{A}+6*{L}*{a}*{seq}", "FLOP/token"),
        "forward": q("one more forward pass per token (2A + 2 L a s)", f"2*{A}+2*{L}*{a}*{seq}", "FLOP/token"),
        "experts": q("routed expert parameters", f"IF(({E}-{k})>0,({T}-{A})/({E}-{k}),0)*{E}", "params"),
        "checkpoint": q("checkpoint write time", f"{T}*{n(named.training.checkpoint_bytes_per_param)}/"
                        f"{n(named.training.storage_write_bytes_per_s)}", "s"),
        "msg": q("activation message per micro-batch (s b h x 2 B)", f"{seq}*{mbs}*{h}*{WIRE_BYTES:g}", "B"),
    }
    rate = n(named.economics.discount_rate)
    refs: dict[str, dict[str, str]] = {}
    for option in structure.options:
        d = option.device
        model = results[option.name]
        sheet.heading(f"Option {option.name}: {d}")
        r: dict[str, str] = {}
        for key, value in (("tensor_parallel", model.tensor_parallel), ("pipeline_parallel", model.pipeline_parallel),
                           ("virtual_stages", model.virtual_stages), ("expert_parallel", model.expert_parallel),
                           ("recompute", model.recompute), ("fsdp", model.fsdp), ("shape_index", model.shape_index)):
            r[key] = q(f"{key.replace('_', ' ')} (chosen shape: structure)", _constant(value), "", key)
        t, p, v, e, rc, f = (r[x] for x in ("tensor_parallel", "pipeline_parallel", "virtual_stages", "expert_parallel",
                                            "recompute", "fsdp"))
        D = n(cluster_param(option.name))
        r["devices"] = q("devices in the cluster", D, "devices", "devices")
        r["data_parallel"] = q("data-parallel degree", f"INT({D}/({t}*{p})+1E-9)", "replicas", "data_parallel")
        dp = r["data_parallel"]
        r["devices_used"] = q("devices used by the shape", f"{dp}*{t}*{p}", "devices", "devices_used")
        r["microbatches"] = q("micro-batches per pipeline", f"{gbt}/{seq}/MAX({dp},1)/{mbs}", "", "microbatches")
        mb = r["microbatches"]
        bits = n(named.training.compute_bits)
        peak = q("achievable FLOP/s per device",
                 f"{n(device_param(d, 'peak_flops_16bit'))}*{n(device_param(d, 'training_compute_efficiency'))}"
                 f"*IF({bits}<=8,{n(device_param(d, 'fp8_training_speedup'))},1)"
                 f"*IF({E}>1,{n(named.training.moe_compute_efficiency)},1)", "FLOP/s")
        r["compute_s"] = q("compute time per step", f"{gbt}*({shared['model_flops']}+{rc}*{shared['forward']})/"
                           f"(MAX({r['devices_used']},1)*{peak})", "s", "compute_s")
        domain = n(device_param(d, "scale_up_domain_devices"))
        c2c, out = n(device_param(d, "chip_to_chip_bandwidth_bytes_per_s")), n(device_param(d, "scale_out_bandwidth_bytes_per_s"))
        lat = n(device_param(d, "sync_latency_s"))
        tp_coll = q("tensor-parallel collectives per step", f"(4+2*{rc})*{L}/{p}*{mb}", "")
        r["tensor_parallel_s"] = q("tensor-parallel traffic per step", _collective(
            f"{tp_coll}*{_ring(shared['msg'], t)}", _link(t, domain, c2c, out), lat, t, tp_coll), "s", "tensor_parallel_s")
        ep_coll = q("expert-parallel all-to-alls per step", f"4*{L}/{p}*{mb}*IF({E}>1,1,0)", "")
        r["expert_parallel_s"] = q("expert-parallel traffic per step", _collective(
            f"{ep_coll}*({seq}*{mbs}/{t})*{h}*{WIRE_BYTES:g}*{k}*({e}-1)/{e}", _link(f"{t}*{e}", domain, c2c, out), lat, e,
            ep_coll), "s", "expert_parallel_s")
        r["pipeline_s"] = q("pipeline traffic per step", f"IF({p}>1,2*{v}*{mb}*{shared['msg']}/{t}/"
                            f"{_link(f'{t}*{dp}*2', domain, c2c, out)}+2*{v}*{mb}*{lat},0)", "s", "pipeline_s")
        shard = f"(({T}-{shared['experts']})/({t}*{p})+{shared['experts']}/({t}*{p}*{e}))"
        gradient = f"{shard}*{n(named.training.gradient_bytes_per_param)}"
        r["data_parallel_s"] = q("data-parallel traffic per step", _collective(
            f"(1+0.5*{f})*{_ring(gradient, dp)}",
            _link(f"{t}*{dp}", domain, c2c, out), lat, dp, f"(2+{f})"), "s", "data_parallel_s")
        o = n(device_param(d, "comm_overlap"))
        r["bubble_fraction"] = q("pipeline bubble", f"({p}-1)/({v}*MAX({mb},1))", "0-1", "bubble_fraction")
        in_stage = q("in-stage time (compute + exposed TP/EP)",
                     f"{r['compute_s']}+(1-{o})*({r['tensor_parallel_s']}+{r['expert_parallel_s']})", "s")
        window = f"IF({f}>0,{r['compute_s']},{r['compute_s']}/MAX({mb},1))"
        parts = [q("bound part: compute", r["compute_s"], "s"),
                 q("bound part: pipeline bubble", f"{in_stage}*{r['bubble_fraction']}", "s"),
                 q("bound part: tensor-parallel", f"(1-{o})*{r['tensor_parallel_s']}*(1+{r['bubble_fraction']})", "s"),
                 q("bound part: expert-parallel", f"(1-{o})*{r['expert_parallel_s']}*(1+{r['bubble_fraction']})", "s"),
                 q("bound part: data-parallel (exposed)", f"MAX({r['data_parallel_s']}-{o}*{window},0)", "s"),
                 q("bound part: pipeline traffic (exposed)", f"(1-{o})*{r['pipeline_s']}", "s")]
        span = f"{parts[0]}:{parts[-1].split('!')[1]}"
        r["bound"] = q("what limits the step (0 compute ... 5 pipeline traffic)", f"MATCH(MAX({span}),{span},0)-1", "code",
                       "bound")
        r["step_s"] = q("step time", f"{in_stage}*(1+{r['bubble_fraction']})+{parts[5]}+{parts[4]}", "s", "step_s")
        r["tokens_per_s"] = q("training tokens per second", f"{gbt}/{r['step_s']}", "tokens/s", "tokens_per_s")
        r["tokens_per_s_per_device"] = q("tokens per second per device", f"{r['tokens_per_s']}/{D}", "tokens/s",
                                         "tokens_per_s_per_device")
        per_device_flops = f"{shared['model_flops']}*{r['tokens_per_s']}/{D}"
        r["model_tflops_per_device"] = q("model TFLOP/s per device", f"{per_device_flops}/1E12", "TFLOP/s",
                                         "model_tflops_per_device")
        r["mfu"] = q("model FLOPs utilization (16-bit peak)", f"{per_device_flops}/{n(device_param(d, 'peak_flops_16bit'))}",
                     "0-1", "mfu")
        wg, opt = n(named.training.weight_grad_bytes_per_param), n(named.training.optimizer_bytes_per_param)
        if scalar(model.fsdp) == 1.0:
            state = f"({wg}+{opt})*{T}/({t}*MAX({dp},1))+4*{T}/({L}*{t})"
        else:
            state = (f"(({T}-{shared['experts']})/({t}*{p})+{shared['experts']}/({t}*{p}*{e}))*{wg}"
                     f"+{opt}*{T}/({t}*{p}*MAX({dp},1))")
        rebuilt = f"IF({rc}>0,{ACTIVATION_BYTES_PER_HIDDEN:g},0)"
        act = (f"{seq}*{mbs}*{h}*({L}*((1-{rc})*{ACTIVATION_BYTES_PER_HIDDEN:g}+{rc}*{CHECKPOINTED_INPUT_BYTES_PER_HIDDEN:g})"
               f"+{rebuilt})/{t}")
        r["memory_bytes_per_device"] = q("memory per device (state + activations)", f"{state}+{act}", "B",
                                         "memory_bytes_per_device")
        r["mtbi_s"] = q("mean time between interruptions", f"{SECONDS_PER_DAY:g}/({n(named.training.failure_rate_per_device_day)}"
                        f"*{D})", "s", "mtbi_s")
        tau = q("checkpoint interval (Young)", f"SQRT(2*{shared['checkpoint']}*{r['mtbi_s']})", "s")
        r["goodput"] = q("goodput", f"MAX(1-({n(named.training.restart_s)}+0.5*{tau})/{r['mtbi_s']},0)/"
                         f"(1+{shared['checkpoint']}/{tau})", "0-1", "goodput")
        r["time_to_train_s"] = q("time to train", f"IF({r['goodput']}>0,{n(named.training.tokens)}/({r['tokens_per_s']}*"
                                 f"{r['goodput']}),\"{NEVER}\")", "s", "time_to_train_s")
        wall = r["time_to_train_s"]
        r["time_to_train_days"] = q("time to train, days", f"IF(ISNUMBER({wall}),{wall}/{SECONDS_PER_DAY:g},\"{NEVER}\")",
                                    "d", "time_to_train_days")
        idle, tdp, host = (n(device_param(d, x)) for x in ("idle_power_w", "tdp_w", "host_power_w"))
        device_w = q("power per device while training", f"{idle}+({tdp}-{idle})*{n(named.training.power_utilization)}+{host}",
                     "W")
        if structure.site is None:
            price, pue, facility = (n(named.economics.name(x)) for x in ("electricity_usd_per_kwh", "pue",
                                                                  "facility_usd_per_kw_month"))
        else:
            s = structure.site
            price, pue = n(f"sites.{s}.electricity_usd_per_kwh"), n(f"sites.{s}.pue")
            facility = q(f"data hall at {s}, built", f"1000*{n(f'sites.{s}.construction_usd_per_w')}/"
                         f"{fx.annuity_factor(rate, n('sites.facility_life_years'))}/12", "USD/kW-month")
        unit = q("hardware per device (price + system)", f"{n(device_param(d, 'price_usd'))}+"
                 f"{n(device_param(d, 'system_overhead_usd'))}", "USD")
        life = n(device_param(d, "useful_life_years"))
        yearly = {
            "capex": fx.capital_recovery(unit, rate, life, n(device_param(d, "residual_value_fraction"))),
            "energy": f"{device_w}*{pue}*{HOURS_PER_YEAR:g}/1000*{price}",
            "facility": f"({tdp}+{host})/1000*{facility}*12",
            "maintenance": f"{n(named.economics.maintenance_fraction_per_year)}*{unit}",
        }
        years = f"{wall}/{SECONDS_PER_YEAR:g}"
        per_year = {}
        for key, formula in yearly.items():
            per_year[key] = q(f"{key} per device-year", formula, "USD/yr")
            r[f"{key}_usd"] = q(f"{key} over the run", f"IF(ISNUMBER({wall}),{D}*{per_year[key]}*{years},\"{NEVER}\")",
                                "USD", f"{key}_usd")
        r["opex_usd_per_year"] = q("operating cost per year of the cluster (energy, facility, maintenance)",
                                   f"{D}*({per_year['energy']}+{per_year['facility']}+{per_year['maintenance']})", "USD/yr")
        r["cost_per_run_usd"] = q("cost per run", f"IF(ISNUMBER({wall}),{'+'.join(r[f'{x}_usd'] for x in yearly)},"
                                  f"\"{NEVER}\")", "USD", "cost_per_run_usd")
        r["usd_per_mtok_trained"] = q("cost per million training tokens", f"IF(ISNUMBER({wall}),{r['cost_per_run_usd']}/"
                                      f"{n(named.training.tokens)}*1E6,\"{NEVER}\")", "USD/Mtok", "usd_per_mtok_trained")
        r["power_w"] = q("IT power of the cluster", f"{D}*{device_w}", "W", "power_w")
        r["energy_mwh"] = q("IT energy of the run", f"IF(ISNUMBER({wall}),{D}*{device_w}*{wall}/3.6E9,\"{NEVER}\")", "MWh",
                            "energy_mwh")
        r["tokens_per_joule"] = q("training tokens per joule", f"IF(ISNUMBER({wall}),{n(named.training.tokens)}/({D}*{device_w}"
                                  f"*{wall}),0)", "tokens/J", "tokens_per_joule")
        r["feasible"] = q("feasible (1: a shape fits and the run finishes)", f"IF(AND(ISNUMBER({wall}),{r['shape_index']}>=0),"
                          f"1,0)", "bool", "feasible")
        refs[option.name] = r
    base = refs[structure.baseline]
    for option in structure.challengers:
        r = refs[option.name]
        sheet.heading(f"{option.name} against the baseline {structure.baseline}", level=2)
        r["cost_ratio"] = q("cost ratio", f"{r['cost_per_run_usd']}/{base['cost_per_run_usd']}", "", "cost_ratio")
        r["time_ratio"] = q("time ratio", f"{r['time_to_train_s']}/{base['time_to_train_s']}", "", "time_ratio")
        r["usd_saved_per_run"] = q("saved per run", f"{base['cost_per_run_usd']}-{r['cost_per_run_usd']}", "USD",
                                   "usd_saved_per_run")
    return refs
