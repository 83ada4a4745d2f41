"""The serving model on the Model sheet: every candidate replica shape of a pool, the choice, the figures at peak.

Mirrors :mod:`tco.core.serving.candidates` (``size_candidate``), :mod:`tco.core.serving.search` (``size_pool``) and
:mod:`tco.core.serving.capacity` (``at_peak``) with :mod:`tco.core.serving.steps` (cycle lines, the exact cycle:
:mod:`tco.export.cycle_sheet`), :mod:`tco.core.serving.expert` (wide expert parallelism: :mod:`tco.export.expert_sheet`),
:mod:`tco.core.serving.parallelism` (sync terms) and :mod:`tco.core.serving.queueing` (square-root staffing, the waiting
percentile) as live formulas, term by term in the core's order of operations. Each candidate shape is a block of rows;
the chosen shape's index is the first lowest score, and the chosen values are read with ``CHOOSE``. The candidate list
itself is static (fixed when the scenario is read), as in the core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from tco.core import names as named
from tco.core.names import device_param, pool_param, tier_param
from tco.core.serving import candidates as core_candidates
from tco.core.serving import prefix_cache, search
from tco.core.serving.cycles import CEIL_GUARD, FLOOR_GUARD, has_micro_batch_pipelines
from tco.core.serving.parallelism import Shape, micro_batch_overshoot
from tco.core.serving.sizing import WHOLE_COUNT_GUARD, replica_multiple
from tco.core.serving.split import LANE_SHARES
from tco.core.structure import Option, Pool
from tco.export import expert_sheet, sojourn_sheet
from tco.export import formulas as fx
from tco.export.cycle_sheet import Cycle, Line, branch_max, branch_min, lines_at, scaled
from tco.export.queue_formulas import normal_quantile, servers_within_wait, wait_quantile


def split_replicas(q, slot_load: str, residence: str, slots: str, lane_load: str, work: str, lanes: str, slack: str,
                   epsilon: str, own: str = "0", scv: str = "0", fits: str = "1") -> tuple[str, str]:
    """:func:`tco.core.serving.split.split_replicas`: the binary search over :data:`tco.core.serving.split.LANE_SHARES` (the
    share probed next up where the lanes bind, down elsewhere), the fewest replicas probed and the first share probed
    that needs them (cells). The lanes as :func:`tco.export.sojourn_sheet.lane_servers` (own prefill ``own``, length
    spread ``scv``, ``fits`` 0 where the longest prompts alone miss the target: mean-length lanes, as the core's
    fallback)."""
    shares = LANE_SHARES
    index, step = (len(shares) - 1) // 2, (len(shares) + 1) // 4
    g = f"{shares[index]!r}"
    replicas = share = None
    level = 0
    while True:
        slot_servers = servers_within_wait(slot_load, residence, f"(1-{g})*{slack}", f"(1-{g})*{epsilon}")
        lane_servers = sojourn_sheet.lane_servers(q, f"split probe {level}: lanes", lane_load, work, own, f"{g}*{slack}", scv,
                                                  f"{g}*{epsilon}", fits, dispatched=True)
        by_slots = q(f"split probe {level}: replicas the slots need with the rest of the slack and budget",
                     f"{slot_servers}/{slots}", "replicas")
        by_lanes = q(f"split probe {level}: replicas the lanes need at their share", f"{lane_servers}/{lanes}", "replicas")
        needed = f"MAX({by_slots},{by_lanes})"
        if replicas is None:
            replicas, share = q("split probe 0: replicas (continuous)", needed, "replicas"), g
        else:
            share = q(f"lane share with the fewest replicas after probe {level}", f"IF({needed}<{replicas},{g},{share})", "")
            replicas = q(f"fewest replicas (continuous) after probe {level}", f"MIN({replicas},{needed})", "replicas")
        if step == 0:
            return replicas, share
        index = q(f"split probe {level + 1}: index into the lane shares (up where the lanes bind)",
                  f"IF({by_lanes}>{by_slots},{index}+{step},{index}-{step})", "")
        g = q(f"split probe {level + 1}: lane share", f"CHOOSE({index}+1,{','.join(repr(x) for x in shares)})", "")
        step //= 2
        level += 1


@dataclass(frozen=True)
class SpeculationCells:
    """A decode pool's speculative decoding as cell references (:class:`tco.core.serving.speculation.Speculation` and
    the :class:`tco.core.serving.shapes.Demand` properties it changes)."""

    tokens_per_step: str
    """``tau``, expected tokens a step emits per sequence [tokens/step]."""
    verify_tokens: str
    """``k + 1``, tokens a sequence takes of a micro-batch's token budget [tokens]."""
    token_passes: str
    """``s = k + 1 + k f``, token passes per sequence and step [-]."""
    weight_reads: str
    """``r = 1 + k f``, reads of the weights, fixed latencies and KV cache per step [-]."""
    decode_steps: str
    """``O / tau``, decode steps a request takes [steps]."""
    step_target: str
    """``tau T_tpot``, the time a step may take [s]."""


@dataclass
class Demand:
    """The demand terms as references (``epsilon = 1 - q``)."""

    prompt: str
    output: str
    peak: str
    ttft: str
    tpot: str
    percentile: str
    epsilon: str
    max_batch: str
    budget: str
    o_mc: str
    o_p: str
    o_c: str
    policy: str
    prompt_scv: str = "0"
    prefill_queue: str = "shared"
    #: a decode pool's speculative decoding (None: one token per sequence and step)
    speculation: SpeculationCells | None = None
    #: prefix reuse in a pool that prefills: ``H``, the prompt tokens served from its cache ("0": none), with
    #: ``prompt`` then the computed part ``P_c = P - H`` and ``whole_prompt`` the prompt ``P`` (None: ``prompt``)
    cached: str = "0"
    whole_prompt: str | None = None
    #: devices the pool has at least, those that hold its prefix cache ("0": none; ``Demand.min_fleet_devices``)
    min_fleet_devices: str = "0"
    #: the share of each off-chip tier the decode batch may use where the prefix cache lives in device memory
    #: (``1 - serving.prefix_cache_hbm_fraction``; "1": all of it)
    batch_memory_share: str = "1"
    #: a mixture of experts' wide expert-parallel terms (None: no wide shape among the option's candidates)
    expert: expert_sheet.ExpertTerms | None = None

    @property
    def prefill_dispatched(self) -> bool:
        """:attr:`tco.core.serving.shapes.Demand.prefill_dispatched`."""
        return self.prefill_queue == "dispatched"

    @property
    def full_prompt(self) -> str:
        """The prompt ``P`` a sequence holds in its KV cache, cached prefix included."""
        return self.prompt if self.whole_prompt is None else self.whole_prompt

    @property
    def decode_steps(self) -> str:
        """:attr:`tco.core.serving.shapes.Demand.decode_steps`: ``O / tau`` (``O`` without speculation)."""
        return self.output if self.speculation is None else self.speculation.decode_steps

    @property
    def step_target(self) -> str:
        """:attr:`tco.core.serving.shapes.Demand.step_target_s`: ``tau T_tpot`` (``T_tpot`` without speculation)."""
        return self.tpot if self.speculation is None else self.speculation.step_target

    @property
    def budget_per_sequence(self) -> str:
        """:attr:`tco.core.serving.shapes.Demand.budget_tokens_per_sequence`: ``k + 1`` ("1" without speculation)."""
        return "1" if self.speculation is None else self.speculation.verify_tokens

    @property
    def token_passes(self) -> str:
        """``s`` ("1" without speculation)."""
        return "1" if self.speculation is None else self.speculation.token_passes

    @property
    def weight_reads(self) -> str:
        """``r`` ("1" without speculation)."""
        return "1" if self.speculation is None else self.speculation.weight_reads


def write_pool(sheet, option: Option, pool: Pool, n, model: dict[str, str], demand: Demand, device_hour: str,
               extra: str, whole: bool) -> dict[str, str]:
    """Rows for one pool: the pool terms, every candidate shape, the choice and the figures at peak.

    ``model`` holds the references of the model's terms (``weight``, ``read_fixed``,
    ``read_per_token``, ``flops_per_token``, ``kv``, ``layers``, ``attention_dim``,
    ``hidden``, ``experts_per_token``, ``collective_element``, ``kv_heads``, ``moe`` as text "1"/"0");
    returns the chosen shape's references under the names of :class:`tco.core.serving.capacity.PoolFigures`.
    """
    q, d, role = sheet.quantity, pool.device, pool.role
    if role == "prefill":  # a prefill pool emits no decode steps
        demand = replace(demand, speculation=None)
    colocated = role == "colocated"
    chunked = colocated and demand.policy == "chunked"
    prompt, output = demand.prompt, demand.output
    sheet.heading(f"{role} pool on {d}: serving under load", level=2)
    context = q("mean decode context (P + O/2)", f"{demand.full_prompt}+0.5*{output}", "tokens")
    decode_attention = f"4*{model['layers']}*{model['attention_dim']}*{context}"
    decode_attention = (q("attention FLOPs per decode token (4 L d C)", decode_attention, "FLOP")
                        if demand.speculation is None else
                        q("attention FLOPs per decode sequence and step (4 L d C s: the verification's k + 1 queries "
                          "and the draft's k f)", scaled(demand.token_passes, decode_attention), "FLOP"))
    cached = demand.cached
    if cached == "0":
        prefill_attention = q("attention FLOPs per prefill token (2 L d P)",
                              f"2*{model['layers']}*{model['attention_dim']}*{prompt}", "FLOP")
    else:
        prefill_attention = q("attention FLOPs per computed prefill token (2 L d (P_c + 2 H): the cached prefix read too)",
                              f"2*{model['layers']}*{model['attention_dim']}*({prompt}+2*{cached})", "FLOP")
    factor = f"1+0.5*MAX({prompt}/{demand.budget}-1,0)" if chunked else "1"
    if cached == "0":
        factor = q("KV re-read factor of chunked prefill (1 + max(P/tau - 1, 0)/2)", factor, "")
    else:
        factor = q("KV re-read factor of the prefill (chunked: 1 + max(P_c/tau - 1, 0)/2) plus the cached prefix read "
                   "once per chunk (H / min(P_c, tau), whole prompts H / P_c)",
                   f"{factor}+{cached}/MAX({f'MIN({prompt},{demand.budget})' if chunked else prompt},1)", "")
    usable = n(device_param(d, "memory_usable_fraction"))
    kept = demand.batch_memory_share
    caps = [q(f"usable capacity of tier {t} per device", f"{n(tier_param(d, t, 'capacity_bytes'))}*{usable}", "B")
            if kept == "1" or t == prefix_cache.ON_CHIP_TIER else
            q(f"usable capacity of tier {t} per device for the batch (the prefix cache's share kept out)",
              f"{n(tier_param(d, t, 'capacity_bytes'))}*{kept}*{usable}", "B")
            for t in pool.tiers]
    bw_eff = n(device_param(d, "bandwidth_efficiency"))
    bws = [q(f"achievable bandwidth of tier {t} per device", f"{n(tier_param(d, t, 'bandwidth_bytes_per_s'))}*{bw_eff}", "B/s")
           for t in pool.tiers]
    bits = n(named.workload.compute_bits)
    flops = q("achieved FLOP/s per device at the compute width",
              f"IF({bits}<=4,{n(device_param(d, 'peak_flops_4bit'))},IF({bits}<=8,{n(device_param(d, 'peak_flops_8bit'))},"
              f"{n(device_param(d, 'peak_flops_16bit'))}))*{n(device_param(d, 'compute_efficiency'))}", "FLOP/s")
    overhead_name = device_param(d, "cycle_overhead_s")
    overhead = n.get(overhead_name, "0")
    domain = n(device_param(d, "scale_up_domain_devices"))
    minimum = n(pool_param(option.name, role, "devices_per_replica")) if pool.has_min_devices else "1"
    epsilon = demand.epsilon
    candidates = []
    two_lines = has_micro_batch_pipelines(role, pool.streamed_prefill, pool.shapes)
    for k, shape in enumerate(pool.shapes):
        candidates.append(_candidate(sheet, k, shape, role, model, demand, chunked, context, decode_attention,
                                     prefill_attention, factor, caps, bws, flops, overhead, domain, minimum, n, d,
                                     device_hour, extra, whole, epsilon, two_lines, pool.streamed_prefill,
                                     replica_multiple(shape.devices, pool.purchase_unit_devices)))
    return _choose(sheet, role, candidates, demand, extra)


@dataclass(frozen=True)
class _Wide:
    """A wide candidate's replica model and expert all-to-alls as references."""

    model: dict[str, str]
    """The model as the replica holds and reads it (:func:`tco.export.expert_sheet.replica_model`)."""
    fixed: str
    """The all-to-alls' fixed time per cycle [s]."""
    per_token: str
    """Their time per token of the cycle [s/token]."""
    overlap: str | None
    """Two-batch overlap: the share of them hidden under the phases (None: one micro-batch, they follow the phases)."""


def _wide_terms(q, shape: Shape, model: dict[str, str], demand: Demand, n, d: str, domain: str, role: str) -> _Wide:
    """The ``shape.wide`` branch of :func:`tco.core.serving.cycles.cycle_model`: the replica model
    (:func:`tco.core.serving.expert.replica_model`) and the expert all-to-alls
    (:func:`tco.core.serving.expert.all_to_all_s`), overlapped by ``serving.micro_batch_overlap`` with two
    micro-batches."""
    expert = demand.expert
    replica = expert_sheet.replica_model(q, shape.data_parallel, model, expert)
    fixed, per_token = expert_sheet.all_to_all_s(q, shape.data_parallel, shape.micro_batches, replica, n, d, domain,
                                                 expert, role)
    return _Wide(replica, fixed, per_token, expert.micro_batch_overlap if shape.micro_batches > 1 else None)


def _within(q, label: str, seen: list[list[Line]], rising: list[bool], target: str, upper: str) -> str:
    """:func:`tco.core.serving.steps.largest_within` of the decode branches: the largest batch whose cycle meets ``target``,
    one cell per branch (``label``, branch k) so that no formula outgrows Excel's length limit.

    A ``rising`` branch is ``min_i (T - c0_i) / c1_i``; one that holds a falling line meets ``T`` on an interval, so
    its largest batch is ``min(upper, min over c1 > 0)`` where that is at least ``max over c1 < 0``, else ``-1E300``.
    A flat line (fully overlapped phases can leave one) over ``T`` rules its branch out, one under it never limits; a
    falling line bounds the batch from below only (however far its intercept lies above ``T``).
    """
    return branch_max([q(f"{label}, branch {k}", _branch_within(lines, up, target, upper), "sequences")
                       for k, (lines, up) in enumerate(zip(seen, rising, strict=True))])


def _branch_within(lines: list[Line], rising: bool, target: str, upper: str) -> str:
    if rising:  # a flat line's 1E-300: about +-1E300 (it never limits / it rules the branch out)
        return branch_min([f"({target}-{c0})/MAX({c1},1E-300)" for c0, c1 in lines])
    highs = [f"IF({c1}>0,({target}-{c0})/{c1},IF(AND({c1}=0,{c0}>{target}),-1E300,1E300))" for c0, c1 in lines]
    high = f"MIN({upper},{','.join(highs)})"
    low = f"MAX(-1E300,{','.join(f'IF({c1}<0,({target}-{c0})/{c1},-1E300)' for c0, c1 in lines)})"
    return f"IF({low}<={high},{high},-1E300)"


def interference_at(lines: list[Line], batch: str) -> str:
    """:class:`tco.core.serving.steps.ConcaveLines` at ``batch``: ``min_j (c0_j + c1_j B)`` (a line through the origin alone:
    ``c1 B``)."""
    terms = [f"{c1}*{batch}" if c0 == "0" else f"({c0}+{c1}*{batch})" for c0, c1 in lines]
    return terms[0] if len(terms) == 1 else f"MIN({','.join(terms)})"


def overshoot_chunks(p: int, scv: str) -> str:
    """:func:`tco.core.serving.parallelism.overshoot_chunks`: ``min(C_p (1 + p v / 2), (p - 1)(1 + v))`` chunks for
    chunks of squared CV ``v`` (``C_p``, :func:`tco.core.serving.parallelism.micro_batch_overshoot`, a number, for one
    stage or ``v`` "0")."""
    equal = f"{micro_batch_overshoot(p)!r}"
    if p <= 1 or scv == "0":
        return equal
    return f"MIN({equal}*(1+0.5*{p}*{scv}),({p}-1)*(1+{scv}))"


def interference_lines(chi: str, ratio: str, p: int, held: str, two_lines: bool,
                       budget: str | None, per_sequence: str = "1", scv: str = "0") -> tuple[list[Line], list[bool]]:
    """:func:`tco.core.serving.cycles.interference_lines`: ``(P/O) chi B``, or with micro-batch pipelines
    ``min(p (P/O) chi B, (P/O) chi B + C_p(v) chi u, chi (p tau - q B))`` (the last chunked only; ``C_p(v)``
    :func:`overshoot_chunks` of the prompts' squared CV ``scv``; ``q`` the budget tokens of a decode sequence,
    ``k + 1`` under speculative decoding); with whether each line rises with the batch."""
    if not two_lines:
        return [("0", f"{ratio}*{chi}")], [True]
    lines = [("0", f"{p}*{ratio}*{chi}"), (f"{overshoot_chunks(p, scv)}*{chi}*{held}", f"{ratio}*{chi}")]
    if budget is None:
        return lines, [True, True]
    return [*lines, (f"{p}*{chi}*{budget}", f"-{scaled(per_sequence, chi)}")], [True, True, False]


def interference_spread(lines: list[Line], batch: str, scv: str, epsilon: str) -> str:
    """:func:`tco.core.serving.cycles.interference_spread_s`: ``I(B) (X_q(v / B) - 1)``, ``B`` at least 1."""
    b = f"MAX({batch},1)"
    return f"{interference_at(lines, b)}*({sojourn_sheet.length_quantile(f'{scv}/{b}', epsilon)}-1)"


def _candidate(sheet, k: int, shape: Shape, role: str, model, demand: Demand, chunked: bool, context, decode_attention,
               prefill_attention, factor, caps, bws, flops, overhead, domain, minimum, n, d, device_hour, extra, whole,
               epsilon, two_lines: bool, streamed: bool, multiple: int = 1) -> dict:
    """Rows of one candidate shape (``_candidate`` of the core); colocated, its held caps too (:func:`_held_caps`);
    ``multiple`` the replicas that fill whole purchase units (:func:`tco.core.serving.sizing.replica_multiple`)."""
    q = sheet.quantity
    sheet.heading(f"candidate {k}: {shape.label}", level=2)
    t, p, devices, lanes = shape.tensor, shape.pipeline, shape.devices, shape.lanes
    prompt, output, budget = demand.prompt, demand.output, demand.budget
    steps, per_sequence = demand.decode_steps, demand.budget_per_sequence
    colocated = role == "colocated"
    wide = _wide_terms(q, shape, model, demand, n, d, domain, role) if shape.wide else None
    if wide is not None:
        model = wide.model
    rep = q("KV copies in the tensor group (max(t / KV heads, 1))", f"MAX({t}/{model['kv_heads']},1)", "")
    kv_rep = f"{model['kv']}*{rep}"
    layers, hidden = model["layers"], model["hidden"]
    hops = max(math.log2(t), 1.0) * shape.micro_batches  # tco.core.serving.parallelism.sync_latency_per_cycle_s
    collectives = 3.0 if shape.expert_parallel and not shape.wide else 2.0
    s0 = f"({collectives:g}*{hops!r}*{layers}+({p}-1))*{n(device_param(d, 'sync_latency_s'))}+{overhead}"
    if wide is not None and wide.overlap is None:  # one micro-batch: the all-to-alls after the phases
        s0 = f"{s0}+{wide.fixed}"
    s0 = (q("fixed time per cycle: collective latencies and the device's cycle overhead", s0, "s")
          if demand.speculation is None else
          q("fixed time per cycle: collective latencies and the device's cycle overhead, r = 1 + k f times (the draft's "
            "passes too)", f"{demand.weight_reads}*({s0})", "s"))
    token_bytes = f"({hidden}*{model['collective_element']})"
    ring = f"2*({t}-1)/{t}"
    all_to_all = f"2*{model['experts_per_token']}*({t}-1)/({t}*{t})"
    per_layer = f"({ring}+{all_to_all if shape.expert_parallel else ring})"

    def per_token(field: str, what: str) -> str:
        """The bandwidth part of the collectives per token at the links' share ``field`` (absent: the link rate; core:
        ``cycles.collective_times_per_token_s``)."""
        name = device_param(d, field)
        efficiency = f"*{n(name)}" if name in n else ""
        up = n(device_param(d, "chip_to_chip_bandwidth_bytes_per_s")) + efficiency
        out_bw = n(device_param(d, "scale_out_bandwidth_bytes_per_s")) + efficiency
        tp_bw = f"IF({t}<={domain},{up},{out_bw})"
        pp_bw = f"IF({t * p}<={domain},{up},{out_bw})"
        return q(f"collective time per {what} in a cycle (ring all-reduce, all-to-all, stage hops)",
                 f"{layers}*{per_layer}*{token_bytes}/({p}*{tp_bw})+({p}-1)/{p}*{token_bytes}/{pp_bw}", "s/token")

    if wide is None:
        s1 = per_token("collective_efficiency", "token")
        s1_prompt = (per_token("prefill_collective_efficiency", "prompt token")
                     if device_param(d, "prefill_collective_efficiency") in n else None)
    else:  # no tensor group, no stage: the expert all-to-alls alone (one micro-batch), else none
        s1 = wide.per_token if wide.overlap is None else "0"
        s1_prompt = s1 if device_param(d, "prefill_collective_efficiency") in n else None
    rcaps = [q(f"replica capacity of tier {i}", f"{c}*{devices}", "B") for i, c in enumerate(caps)]
    rbws = [q(f"replica bandwidth of tier {i}", f"{b}*{devices}", "B/s") for i, b in enumerate(bws)]
    expert_name = device_param(d, "expert_compute_efficiency")
    weight_flops = model["flops_per_token"]
    if model["moe"] == "1" and expert_name in n:  # tco.core.serving.cycles.effective_weight_flops_per_token
        weight_flops = q("weight FLOPs per token at the dense efficiency (routed experts at 1/eta_e)",
                         f"{weight_flops}+{model['routed_flops']}*(1/{n(expert_name)}-1)", "FLOP")
    cm = Cycle(p, bool(model["moe"] == "1"), model["weight"], model["read_fixed"], model["read_per_token"],
               weight_flops, q("KV bytes per decode token (C k copies)", f"{context}*{kv_rep}", "B")
               if demand.speculation is None else
               q("KV bytes per decode sequence and step (C k copies, read r = 1 + k f times)",
                 f"{demand.weight_reads}*{context}*{kv_rep}", "B"),
               decode_attention, q("KV bytes per prefill token", f"{factor}*{kv_rep}", "B"), prefill_attention,
               q("replica FLOP/s", f"{devices}*{flops}", "FLOP/s"), rcaps, rbws, s0, s1, demand.o_mc, demand.o_p, demand.o_c,
               s1_prompt, demand.token_passes, demand.weight_reads)
    if wide is not None:
        cm = replace(cm, micro_batches=shape.micro_batches, expert_overlap=wide.overlap,
                     expert_fixed=scaled(demand.weight_reads, wide.fixed) if wide.overlap is not None else "0",
                     expert_per_token=wide.per_token if wide.overlap is not None else "0")
    capacity = fx.total(rcaps)
    full_prompt = demand.full_prompt
    sequence = f"({full_prompt}+{output})" if role != "prefill" else full_prompt
    fits = q("model and one sequence fit, within the domain and the minimum devices (1/0)",
             f"IF(AND({model['weight']}+{sequence}*{model['kv']}*{rep}<={capacity},{t}<={domain}+1E-9,"
             f"{devices}>={minimum}-1E-9),1,0)", "")
    ridge = f"{p}*{cm.t_mem(cm.full_read)}*{cm.flops}/{cm.flops_per_token}"
    if shape.wide:  # a replica's ridge spread over its attention ranks, each one lane
        ridge = f"{ridge}/{shape.data_parallel}"
    pass_prompts = q("prompts per whole-prompt pass, k_b",
                     f"MAX(MIN({fx.floor(f'{budget}/{prompt}+{FLOOR_GUARD:g}')},"
                     f"{fx.ceil(f'{ridge}/{prompt}-{CEIL_GUARD:g}')}),1)", "prompts")
    c: dict[str, object] = {"devices_per_replica": str(devices), "tensor_parallel": str(t), "pipeline_stages": str(p),
                            "expert_parallel": "1" if shape.expert_parallel else "0",
                            "data_parallel": str(shape.data_parallel), "micro_batches": str(shape.micro_batches),
                            "fits": fits}
    if role == "prefill":
        latency = q("prefill pass of k_b prompts", cm.cycle("0", f"{lanes}*{pass_prompts}*{prompt}"), "s")
        work = q("prefill work per prompt and lane", f"{latency}/{pass_prompts}", "s")
        slack = q("TTFT slack for the prefill queue", f"{demand.ttft}-{latency}-{extra}", "s")
        own = q("length-proportional part of a prompt's prefill", sojourn_sheet.own_prefill(work, latency), "s")
        ttft_ok = q("the longest prompts' own prefill fits the TTFT (1/0)",
                    sojourn_sheet.own_prefill_fits(slack, own, demand.prompt_scv, epsilon), "")
        servers = sojourn_sheet.lane_servers(q, "prefill lanes", f"{demand.peak}*{work}", work, own, slack, demand.prompt_scv,
                                             epsilon, ttft_ok, demand.prefill_dispatched)
        replicas = q("replicas (continuous)", f"{servers}/{lanes}", "replicas")
        c.update(prefill_s=latency, prefill_work_s=work, lanes=str(lanes), slots="0", slots_allowed="0", residence_s=latency,
                 tpot_ok="1", capacity_rps=q("requests/s per replica, lanes busy", f"{lanes}/{work}", "req/s"),
                 cycle_cap_s=latency, chi="0",
                 prefill_bound=q("prefill bound code", cm.bound("0", f"{lanes}*{pass_prompts}*{prompt}"), ""),
                 decode_bound="0", spilled_bytes="0", _slack=slack, _lane_share="1", ttft_ok=ttft_ok)
    else:
        branches = cm.decode_branches()
        stored = []
        for b, lines in enumerate(branches):
            stored.append([(q(f"decode line {b}.{i}: intercept", c0, "s"), q(f"decode line {b}.{i}: slope", c1, "s/token"))
                           for i, (c0, c1) in enumerate(lines)])
        ratio = f"{prompt}/{steps}" if colocated else "0"
        if colocated:
            idle = branch_min([lines_at(lines, "0") for lines in stored])
            if demand.policy == "chunked":
                full = f"{lanes}*{budget}"
                chi = q("replica time per prefill token, chi (chunked)", f"({cm.cycle('0', full)}-{idle})/({full})", "s/token")
            else:
                tokens = f"{lanes}*{pass_prompts}*{prompt}"
                chi = q("replica time per prefill token, chi (whole prompts)", f"{cm.cycle('0', tokens)}/({tokens})",
                        "s/token")
        else:
            chi = "0"
        interference, rising = [], [True] * len(stored)
        if colocated:
            held = "0"
            if two_lines:
                held = f"MIN({prompt},{budget})" if demand.policy == "chunked" else f"{pass_prompts}*{prompt}"
            riding, riding_rises = interference_lines(chi, ratio, lanes, held, two_lines, budget if chunked else None,
                                                      per_sequence, demand.prompt_scv)
            interference = [(i0 if i0 == "0" else q(f"prefill riding in a cycle, line {j}: intercept", i0, "s"),
                             q(f"prefill riding in a cycle, line {j}: slope", i1, "s/sequence"))
                            for j, (i0, i1) in enumerate(riding)]
            seen = [[(c0 if i0 == "0" else q(f"cycle line {b}.{i}.{j}: intercept (prefill share included)", f"{c0}+{i0}", "s"),
                      q(f"cycle line {b}.{i}.{j}: slope (prefill share included)", f"{c1}+{i1}", "s/sequence"))
                     for i, (c0, c1) in enumerate(lines)]
                    for b, lines in enumerate(stored) for j, (i0, i1) in enumerate(interference)]
            rising = [up for _ in stored for up in riding_rises]
        else:
            seen = stored
        kv_batch = f"({capacity}-{model['weight']})/((({full_prompt}+{output})*{model['kv']})*{rep})"
        max_batch = demand.max_batch if not shape.wide else f"{shape.data_parallel}*{demand.max_batch}"  # per rank
        limit = f"MIN({kv_batch},{max_batch})"
        if chunked:
            limit = f"MIN({limit},{lanes}*{budget}/({per_sequence}+{ratio}))"
        limit = q("slot cap by memory, batch limit and token budget", limit, "sequences")
        c.update(chi=chi, _lines=stored, _seen=seen, _interference=interference)

        def cycle_at(q, slots: str) -> str:
            return q("cycle at the slot cap, prefill share included", branch_min([lines_at(ls, slots) for ls in seen]), "s")

        def ttft_at(q, slots: str, cycle_cap: str | None = None) -> dict:
            """Colocated: the prefill of a prompt at ``slots`` (cycle ``cycle_cap``, a row of its own when not given)
            and whether the longest prompts' own prefill fits the TTFT target there (``_colocated_at_slots`` of the
            core)."""
            cycle_cap = cycle_at(q, slots) if cycle_cap is None else cycle_cap
            decode_cap = q("decode-only cycle at the slot cap (cap cycle less the prefill share)",
                           f"{cycle_cap}-{interference_at(interference, slots)}", "s")
            t = {}
            if chunked:
                t["free"] = free = q("token budget left by the decode tokens per micro-batch",
                                     f"{budget}-{scaled(per_sequence, slots)}/{lanes}", "tokens")
                chunks = q("cycles carrying a prompt's chunks (P / budget left)", f"{prompt}/MAX({free},1E-9)", "cycles")
                own = q("replica time of a prompt's own tokens (P chi)", f"{prompt}*{chi}", "s")
                work = q("lane time per prompt with prompts waiting (p P chi + m t_d)",
                         f"{lanes}*{own}+{chunks}*{decode_cap}", "s")
                own_latency = own if streamed or lanes == 1 else f"{lanes}*{own}"
                latency = q("prefill of one prompt once started (its chunks ride in whole cycles)",
                            f"MAX({fx.ceil(chunks)},1)*{decode_cap}+{own_latency}", "s")
            else:
                latency = q("prefill pass of k_b prompts", cm.cycle("0", f"{lanes}*{pass_prompts}*{prompt}"), "s")
                work = q("prefill work per prompt and lane", f"{latency}/{pass_prompts}", "s")
            slack = q("TTFT slack of the slot and lane queues together", f"{demand.ttft}-{latency}-{cycle_cap}-{extra}", "s")
            own = q("length-proportional part of a prompt's prefill", sojourn_sheet.own_prefill(work, latency), "s")
            widest = f"{LANE_SHARES[-1]!r}"
            ttft_ok = q("the longest prompts' own prefill fits the lanes' widest share (1/0)",
                        sojourn_sheet.own_prefill_fits(f"{widest}*{slack}", own, demand.prompt_scv, f"{widest}*{epsilon}"),
                        "")
            return t | {"latency": latency, "work": work, "slack": slack, "own": own, "ttft_ok": ttft_ok}

        def at_cap(q, held: str | None = None) -> dict:
            """The rows from the slot cap on: the cap (or the ``held`` one, its TPOT checked at it), the cycle,
            prefill and queues at it."""
            if held is None:
                target = demand.step_target
                if colocated:
                    within = _within(q, "largest batch whose mean cycle meets the TPOT target", seen, rising, target,
                                     limit)
                    mean_cap = q("slot cap at the mean cycle", f"MIN({within},{limit})", "sequences")
                    excess = q("TPOT excess at the percentile from the prompts sharing the cycles, at that cap",
                               interference_spread(interference, mean_cap, demand.prompt_scv, epsilon), "s")
                    target = q("mean cycle the slot cap meets (the TPOT target less that excess)",
                               f"{demand.step_target}-{excess}", "s")
                within = _within(q, "largest batch whose cycle meets the target above", seen, rising, target, limit)
                cap = q("slot cap before rounding", f"MIN({within},{limit})", "sequences")
                raw = fx.floor(f"{cap}+{FLOOR_GUARD:g}") if whole else cap
                slots = q("slot cap (sequences in flight per replica)", f"MAX({raw},1)", "sequences")
                tpot_ok = f"IF({raw}>=1,1,0)"
            else:
                slots = held
            cycle_cap = cycle_at(q, slots)
            if held is not None:
                seen_tpot = cycle_cap
                if demand.prompt_scv != "0":
                    seen_tpot = q("TPOT at the percentile at the held cap (the prompts sharing its cycles)",
                                  f"{cycle_cap}+{interference_spread(interference, slots, demand.prompt_scv, epsilon)}",
                                  "s")
                tpot_ok = f"IF({seen_tpot}<={demand.step_target},1,0)"
            r: dict[str, str] = {}
            if colocated:
                t = ttft_at(q, slots, cycle_cap)
                latency, work, slack, own, ttft_ok = t["latency"], t["work"], t["slack"], t["own"], t["ttft_ok"]
                if chunked:
                    tpot_ok = f"IF(AND({tpot_ok}>0,{t['free']}>0),1,0)"
                residence = q("slot residence (O cycles + prefill)" if demand.speculation is None else
                              "slot residence (O / tau cycles + prefill)", f"{steps}*{cycle_cap}+{latency}", "s")
                replicas, share = split_replicas(q, f"{demand.peak}*{residence}", residence, slots, f"{demand.peak}*{work}",
                                                 work, str(lanes), slack, epsilon, own, demand.prompt_scv, ttft_ok)
                r.update(prefill_s=latency, prefill_work_s=work, lanes=str(lanes), ttft_ok=ttft_ok, _slack=slack,
                         _lane_share=share)
            else:
                residence = q("slot residence (O cycles)" if demand.speculation is None else
                              "slot residence (O / tau cycles)", f"{steps}*{cycle_cap}", "s")
                slack = q("TPOT slack of the slot queue (one gap)", f"{demand.step_target}-{cycle_cap}", "s")
                servers = servers_within_wait(f"{demand.peak}*{residence}", residence, slack, epsilon)
                replicas = q("replicas (continuous)", f"{servers}/{slots}", "replicas")
                r.update(prefill_s="0", prefill_work_s="0", lanes="0", ttft_ok="1", _slack=slack, _lane_share="0")
            r["tpot_ok"] = q("slot cap at least one sequence (and budget left) (1/0)", tpot_ok, "")
            if held is None:  # a held cap keeps its candidate's (_held_caps)
                r["slots_allowed"] = slots
            decode_tokens = f"{ratio}*{slots}" if colocated else "0"
            r.update(slots=slots, residence_s=residence, cycle_cap_s=cycle_cap,
                     capacity_rps=q("requests/s per replica, slots busy", f"{slots}/{residence}", "req/s"),
                     decode_bound=q("cycle bound code at the slot cap", cm.bound(slots, decode_tokens), ""),
                     spilled_bytes=q("bytes beyond the fastest tier at the slot cap", cm.spill(slots, decode_tokens), "B"))
            r["prefill_bound"] = r["decode_bound"] if colocated else "0"
            return _sized(q, {**c, **r}, replicas, fits, devices, device_hour, whole, prompt, multiple,
                          "1" if demand.speculation is None else demand.speculation.tokens_per_step,
                          demand.min_fleet_devices)

        full = at_cap(q)
        if not colocated or not core_candidates.HELD_SEARCH_STEPS:
            return full
        return _held_caps(sheet, full, at_cap, lambda q, slots: ttft_at(q, slots)["ttft_ok"], whole)
    return _sized(q, c, replicas, fits, devices, device_hour, whole, prompt, multiple,
                  min_devices=demand.min_fleet_devices)


def _sized(q, c: dict, replicas: str, fits: str, devices, device_hour: str, whole: bool, prompt: str,
           multiple: int = 1, tokens_per_step: str = "1", min_devices: str = "0") -> dict:
    """A candidate's closing rows: whole replicas (in whole purchase units: ``multiple`` of them at a time; at least
    ``min_devices`` devices, those that hold a prefix cache), feasibility, the cost rate that ranks the shapes and its
    score; its decode tokens per second emit ``tokens_per_step`` tokens per sequence and cycle (``tau`` under
    speculative decoding)."""
    if min_devices != "0":  # a fleet grown to hold its prefix cache
        replicas = q("replicas (continuous), at least those that hold the prefix cache",
                     f"MAX({replicas},{min_devices}/{devices})", "replicas")
    whole_replicas = f"MAX({fx.ceil(f'{replicas}-{WHOLE_COUNT_GUARD:g}')},1)" if whole else replicas
    if whole and multiple > 1:  # tco.core.serving.sizing.whole_units
        whole_replicas = f"{fx.ceil(f'{whole_replicas}/{multiple}-{WHOLE_COUNT_GUARD:g}')}*{multiple}"
    c["replicas"] = q("replicas", whole_replicas, "replicas")
    c["feasible"] = q("feasible (1/0)", f"{fits}*{c['tpot_ok']}*{c['ttft_ok']}", "")
    c["cost"] = q("cost rate of the pool (ranks the shapes)", f"{c['replicas']}*{devices}*{device_hour}", "USD/h")
    cost, cycle, tpot_ok = c["cost"], c["cycle_cap_s"], c["tpot_ok"]
    rank = q("rank where no shape meets the targets (tco.core.serving.search.infeasible_rank)",
             f"IF({fits}>0.5,IF({tpot_ok}>0.5,1-{search._RANK_COST_USD_PER_H:.0E}/({cost}+"
             f"{search._RANK_COST_USD_PER_H:.0E}),1+{cycle}),{search._UNFIT_RANK:.0E}+{cycle})", "")
    c["score"] = q("score: cost, or a huge number when infeasible",
                   f"{c['cost']}+(1-{c['feasible']})*{search._INFEASIBLE_SCORE:.0E}*(1+{rank})", "")
    c["prefill_tokens_per_s"] = f"{c['lanes']}*{prompt}/MAX({c['prefill_work_s']},1E-300)"
    c["decode_tokens_per_s"] = f"{scaled(tokens_per_step, c['slots'])}/{c['cycle_cap_s']}"
    return c


#: the score of a held cap where it does not count (the full cap meets the TTFT target, or the held cap misses a
#: target): above every full cap's score, feasible (a cost) or not (1E250 x (1 + cycle)), so never chosen
HELD_OUT_SCORE = "1E290"


def _held_caps(sheet, full: dict, at_cap, ttft_ok_at, whole: bool) -> dict:
    """:func:`tco.core.serving.candidates._held_batch`: the largest slot cap below the full one whose longest prompts can meet the
    TTFT target, by bisection (:func:`tco.core.serving.candidates._largest_cap_within_ttft`: a block of rows per halving, all
    :data:`tco.core.serving.candidates.HELD_SEARCH_STEPS` of them; the core stops once its brackets are one slot wide, where a
    further halving changes nothing), then the candidate again at :data:`tco.core.serving.candidates.HELD_CAPS` of it, whose
    score is its cost where the full cap misses the TTFT target (and fits, meets the TPOT target, holds more than one
    slot) and it meets the targets; elsewhere :data:`HELD_OUT_SCORE`. The candidate's values are those of the first
    lowest score among the full cap and these."""
    q = sheet.quantity
    missed = q("the full slot cap misses the TTFT target, the shape fits and meets the TPOT target (1/0)",
               f"IF(AND({full['fits']}>0.5,{full['tpot_ok']}>0.5,{full['ttft_ok']}<0.5,{full['slots']}>1),1,0)", "")
    low, high = "0", full["slots"]
    for step in range(1, core_candidates.HELD_SEARCH_STEPS + 1):
        sheet.heading(f"held batch, halving {step} of the caps below the full one", level=3)

        def qb(label, formula, unit="", key="", step=step):
            return q(f"{label} (halving {step})", formula, unit, key)

        middle = f"({low}+{high})/2"
        tried = qb("slot cap tried", fx.floor(middle) if whole else middle, "sequences")
        ok = ttft_ok_at(qb, f"MAX({tried},1)")
        low = qb("largest cap known to meet the TTFT target", f"IF({ok}>0.5,{tried},{low})", "sequences")
        high = qb("smallest cap known to miss it", f"IF({ok}>0.5,{high},{tried})", "sequences")
    held = []
    for step, fraction in enumerate(core_candidates.HELD_CAPS, start=1):
        sheet.heading(f"held cap {step}: {fraction:g} of the largest that can meet the TTFT target", level=3)

        def qh(label, formula, unit="", key="", step=step):
            return q(f"{label} (held, cap {step})", formula, unit, key)

        cap = f"{fraction!r}*{low}"
        h = at_cap(qh, qh("slot cap, held", f"MAX({fx.floor(f'{cap}+{FLOOR_GUARD:g}') if whole else cap},1)",
                          "sequences"))
        h["slots_allowed"] = full["slots_allowed"]
        h["score"] = qh("score: its cost where it counts, else out of the choice",
                        f"IF(AND({missed},{h['feasible']}>0.5),{h['cost']},{HELD_OUT_SCORE})", "")
        held.append(h)
    caps = [full, *held]
    index = q("chosen slot cap (0 the full one, then the held caps in order)", _first_lowest(q, "slot cap", caps), "")
    chosen = dict(full)
    for key in (*_CHOSEN, "score"):
        values = [str(c[key]) for c in caps]
        if len(set(values)) > 1:
            chosen[key] = q(f"at the chosen slot cap: {key.lstrip('_')}", fx.choose(index, values), "")
    return chosen


def _first_lowest(q, what: str, candidates: list[dict]) -> str:
    """The index of the first candidate with the lowest score (a cell, or "0" for one candidate)."""
    best, index = candidates[0]["score"], "0"
    for k, c in enumerate(candidates[1:], start=1):
        index = q(f"index of the best {what} among the first {k + 1}", f"IF({c['score']}<{best},{k},{index})", "")
        best = q(f"lowest score among the first {k + 1} {what}s", f"MIN({best},{c['score']})", "")
    return index


_CHOSEN = ("devices_per_replica", "tensor_parallel", "pipeline_stages", "expert_parallel", "data_parallel",
           "micro_batches", "replicas", "slots",
           "slots_allowed", "prefill_s", "prefill_work_s", "lanes", "residence_s", "cycle_cap_s", "chi", "feasible",
           "tpot_ok", "ttft_ok", "fits", "capacity_rps", "decode_bound", "prefill_bound", "spilled_bytes",
           "prefill_tokens_per_s", "decode_tokens_per_s", "_slack", "_lane_share")


def _choose(sheet, role: str, candidates: list[dict], demand: Demand, extra: str) -> dict[str, str]:
    """The first candidate with the lowest score, its values, and the figures at peak (``size_pool``, ``_at_peak``)."""
    q = sheet.quantity
    sheet.heading(f"{role} pool: the chosen shape and the figures at peak", level=2)
    index = _first_lowest(q, "shape", candidates)
    index = q("chosen shape (index in the candidate list)", index, "", f"{role}.shape_index")

    def pick(values: list[str]) -> str:
        return values[0] if len(values) == 1 else fx.choose(index, values)

    out = {key: q(f"chosen: {key.lstrip('_')}", pick([str(c[key]) for c in candidates]), "") for key in _CHOSEN}
    epsilon = demand.epsilon
    peak = demand.peak
    replicas = out["replicas"]
    if role == "prefill":
        work, service = out["prefill_work_s"], out["prefill_s"]
        wait = q("queueing delay at the percentile",
                 sojourn_sheet.lane_wait(q, "lane queue", f"{peak}*{work}", f"{replicas}*{out['lanes']}", work,
                                         sojourn_sheet.own_prefill(work, service), demand.prompt_scv, epsilon, out["_slack"],
                                         demand.prefill_dispatched),
                 "s")
        out.update(queue_wait_s=wait, ttft_s=q("TTFT at the percentile", f"{service}+{wait}+{extra}", "s"),
                   step_s=service)
        return out
    lines = [[(pick([c["_seen"][b][i][0] for c in candidates]), pick([c["_seen"][b][i][1] for c in candidates]))
              for i in range(len(branch))] for b, branch in enumerate(candidates[0]["_seen"])]
    seen = [[(q(f"chosen line {b}.{i}: intercept", c0, "s"), q(f"chosen line {b}.{i}: slope (prefill share included)",
                                                                 c1, "s/token"))
             for i, (c0, c1) in enumerate(branch)] for b, branch in enumerate(lines)]
    slots, steps = out["slots"], demand.decode_steps
    gain = q("arrivals per replica x output tokens" if demand.speculation is None else
             "arrivals per replica x decode steps (O / tau)", f"{peak}/{replicas}*{steps}", "tokens/s")
    fixed_points = [f"MAX(0,{','.join(f'{gain}*{c0}/MAX(1-{gain}*{c1},1E-12)' for c0, c1 in branch)})" for branch in seen]
    occupancy = q("mean decode occupancy at peak (least fixed point, capped at the slots)",
                  f"MIN({branch_min(fixed_points)},{slots})", "sequences")
    z = q("normal quantile of the percentile", normal_quantile(demand.percentile), "")
    seen_batch = q("occupancy a request sees at the percentile",
                   f"MIN(1+MAX({occupancy},0)+{z}*SQRT(2/3*MAX({occupancy},0)),{slots})", "sequences")
    cycle_mean = q("mean cycle at peak", branch_min([lines_at(branch, occupancy) for branch in seen]), "s")
    tpot = branch_min([lines_at(branch, seen_batch) for branch in seen])
    residence = out["residence_s"]
    if role == "colocated":
        work, service = out["prefill_work_s"], out["prefill_s"]
        g, slack = out["_lane_share"], out["_slack"]
        wait = q("queueing delay at the percentile (slot + lane, at the chosen split)",
                 wait_quantile(q, "slot queue", f"{peak}*{residence}", f"{replicas}*{slots}", residence, f"(1-{g})*{epsilon}",
                               f"(1-{g})*{slack}")
                 + "+" + sojourn_sheet.lane_wait(q, "lane queue", f"{peak}*{work}", f"{replicas}*{out['lanes']}", work,
                                                 sojourn_sheet.own_prefill(work, service), demand.prompt_scv,
                                                 f"{g}*{epsilon}", f"{g}*{slack}", dispatched=True),
                 "s")
        out["ttft_s"] = q("TTFT at the percentile", f"{out['cycle_cap_s']}+{service}+{wait}+{extra}", "s")
        interference = []
        for j in range(len(candidates[0]["_interference"])):
            intercepts = [c["_interference"][j][0] for c in candidates]
            interference.append(("0" if all(i0 == "0" for i0 in intercepts)
                                 else q(f"chosen prefill line {j}: intercept", pick(intercepts), "s"),
                                 q(f"chosen prefill line {j}: slope", pick([c["_interference"][j][1] for c in candidates]),
                                   "s/sequence")))
        out["interference_share"] = q("share of the cycle spent on prefill",
                                      f"{interference_at(interference, occupancy)}/{cycle_mean}", "fraction")
        spread = interference_spread(interference, seen_batch, demand.prompt_scv, epsilon)
        out["tpot_s"] = q("TPOT at the percentile (the prompts sharing the cycles at their percentile)", f"{tpot}+{spread}",
                          "s")
    else:
        wait = q("queueing delay for a slot at the percentile",
                 wait_quantile(q, "slot queue", f"{peak}*{residence}", f"{replicas}*{slots}", residence, epsilon, out["_slack"]),
                 "s")
        out["tpot_s"] = q("TPOT at the percentile (the gap to the second token includes the wait)",
                          f"MAX({tpot},{cycle_mean}+{wait})", "s")
        out["ttft_s"] = "0"
        out["interference_share"] = "0"
    if demand.speculation is not None:  # a step emits tau tokens per sequence
        out["tpot_s"] = q("TPOT at the percentile per output token (the step's time over the tokens it emits, tau)",
                          f"{out['tpot_s']}/{demand.speculation.tokens_per_step}", "s")
    out.update(queue_wait_s=wait, batch=occupancy, step_s=cycle_mean)
    out["tpot_met"] = out["tpot_ok"]
    return out
