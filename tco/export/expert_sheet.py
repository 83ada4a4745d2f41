"""Wide expert parallelism on the Model sheet: :mod:`tco.core.serving.expert` as formula text over cell references.

A wide replica (``Shape.wide``: ``d`` data-parallel attention ranks, the routed experts sharded over them, one or two
micro-batches) holds and reads the model as :func:`replica_model` writes it, and runs the expert all-to-alls of
:func:`all_to_all_s` each cycle; the serving sheet (:mod:`tco.export.serving_sheet`) puts them into the cycle model
(:class:`tco.export.cycle_sheet.Cycle`) as :func:`tco.core.serving.cycles.cycle_model` does.
"""

from __future__ import annotations

from dataclasses import dataclass

from tco.core import names as named
from tco.core.names import device_param, model_param
from tco.core.structure import Option


@dataclass(frozen=True)
class ExpertTerms:
    """The demand's expert-parallel terms as references (:class:`tco.core.serving.shapes.Demand`)."""

    imbalance: str
    """``u``, the busiest rank's routed tokens over the mean (``serving.expert_imbalance``) [-]."""
    redundant_share: str
    """``r``, redundant routed experts over the routed experts (``serving.redundant_expert_share``) [-]."""
    micro_batch_overlap: str
    """The share of a micro-batch's all-to-alls hidden under the other's phases (``serving.micro_batch_overlap``) [-]."""


def has_wide_shapes(option: Option) -> bool:
    """Whether any pool of ``option`` searches a wide (data-parallel attention, expert-parallel) shape."""
    return any(shape.wide for pool in option.pools for shape in pool.shapes)


def model_terms(q, n, scenario, shared: dict[str, str], model: dict[str, str]) -> dict[str, str]:
    """The model's wide expert-parallel terms (``tco.core.workload.Workload._expert_terms``): the stored routed experts
    ``E e`` at most the stored weights [B] (``routed_weight``), the MoE layers [layers] (``moe_layers``: every layer
    where the model gives none) and the dispatch's bytes per element [B] (``dispatch_element``)."""
    m = scenario.structure.model
    experts = n(model_param(m, "experts_routed"))
    layers = model_param(m, "moe_layers")
    return {
        "routed_weight": q("stored routed-expert bytes (E e, at most the stored weights)",
                           f"MIN({experts}*{shared['slot']}*{shared['wbpp']},{model['weight']})", "B"),
        "moe_layers": n.get(layers, model["layers"]),
        "dispatch_element": q("bytes per element an expert dispatch moves", f"{n(named.serving.dispatch_bits)}/8", "B"),
    }


def demand_terms(n) -> ExpertTerms:
    """The demand's expert-parallel terms (:class:`ExpertTerms`) from the serving parameters."""
    return ExpertTerms(n(named.serving.expert_imbalance), n(named.serving.redundant_expert_share),
                       n(named.serving.micro_batch_overlap))


def replica_model(q, ranks: int, model: dict[str, str], expert: ExpertTerms) -> dict[str, str]:
    """:func:`tco.core.serving.expert.replica_model` of a wide replica of ``ranks`` attention ranks ``d``: stored
    ``d (W - E e) + E e + E e r`` [B], fixed read ``d W_fixed`` per micro-batch [B], weight FLOPs
    ``2 A + 2 k E (u - 1)`` and routed FLOPs ``u 2 k E`` per token [FLOP/token]; the other terms as the model's."""
    routed = model["routed_weight"]
    return {
        **model,
        "weight": q("replica's stored weights (d (W - E e) + E e, plus the redundant experts E e r)",
                    f"{ranks}*({model['weight']}-{routed})+{routed}+{routed}*{expert.redundant_share}", "B"),
        "read_fixed": q("replica's fixed weight bytes read per micro-batch (d W_fixed: every rank's)",
                        f"{ranks}*{model['read_fixed']}", "B"),
        "flops_per_token": q("replica's weight FLOPs per token (2 A + 2 k E (u - 1): the busiest rank's routed share)",
                             f"{model['flops_per_token']}+{model['routed_flops']}*({expert.imbalance}-1)", "FLOP"),
        "routed_flops": q("replica's routed-expert FLOPs per token (u 2 k E)",
                          f"{model['routed_flops']}*{expert.imbalance}", "FLOP"),
    }


def remote_copies(ranks: int, domain: str, k: str, deduplicated: bool) -> str:
    """:func:`tco.core.serving.expert.remote_copies`: copies of a token beyond its scale-up domain per dispatch,
    ``k max(d - m, 0) / d``, deduplicated ``min((g - 1)(1 - (1 - 1/g)^k), that)``, ``g = max(d / m, 1)`` [-]."""
    per_expert = f"{k}*MAX({ranks}-{domain},0)/{ranks}"
    if not deduplicated:
        return per_expert
    groups = f"MAX({ranks}/{domain},1)"
    return f"MIN(({groups}-1)*(1-(1-1/{groups})^{k}),{per_expert})"


def all_to_all_s(q, ranks: int, micro_batches: int, model: dict[str, str], n, device: str, domain: str,
                 expert: ExpertTerms, role: str) -> tuple[str, str]:
    """:func:`tco.core.serving.expert.all_to_all_s`: a wide replica's expert all-to-alls per cycle, the fixed time
    ``2 L_moe mb l`` [s] and the time per token of the cycle
    ``u max(L_moe h (a_d + a_c) k (min(d, m) - 1)/d / (e B_up), L_moe h (a_d + a_c) X_out / (e B_out)) / d`` [s/token]
    (cells; ``X_out`` :func:`remote_copies`, deduplicated in a prefill pool)."""
    layers = model["moe_layers"]
    token_bytes = f"{model['hidden']}*({model['dispatch_element']}+{model['collective_element']})*{layers}"
    efficiency_name = device_param(device, "all_to_all_efficiency")
    efficiency = n.get(efficiency_name, "1")
    up_bw = n(device_param(device, "chip_to_chip_bandwidth_bytes_per_s"))
    out_bw = n(device_param(device, "scale_out_bandwidth_bytes_per_s"))
    k = model["experts_per_token"]
    up = f"{token_bytes}*{k}*(MIN({domain},{ranks})-1)/{ranks}/({up_bw}*{efficiency})"
    out = f"{token_bytes}*{remote_copies(ranks, domain, k, role == 'prefill')}/({out_bw}*{efficiency})"
    per_token = q("expert all-to-all time per token of the cycle (u max(inside, beyond the domain) / d)",
                  f"{expert.imbalance}*MAX({up},{out})/{ranks}", "s/token")
    latency_name = device_param(device, "all_to_all_latency_s")
    latency = n(latency_name) if latency_name in n else n(device_param(device, "sync_latency_s"))
    fixed = q("expert all-to-all fixed time per cycle (a dispatch and a combine per MoE layer and micro-batch)",
              f"2*{micro_batches}*{layers}*{latency}", "s")
    return fixed, per_token
