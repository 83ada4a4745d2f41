"""The terms every option of an evaluation shares, read once from the named parameters: the workload (lengths,
rates, latency targets, half-life), the model as the serving model needs it, the demand the pools are
sized for, discounting and the demand path over the horizon."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tco.core import names as named
from tco.core.draws import maximum, minimum
from tco.core.money.timeline import DemandPath
from tco.core.names import demand_year_param, model_param
from tco.core.serving import llm, sizing
from tco.core.serving.shapes import Demand, ModelShape
from tco.core.structure import Structure

_NUMBERS = (float, int)


class Workload:
    """Workload, model, serving and economics terms shared by every option of one evaluation.

    Parameters
    ----------
    structure : Structure
        The scenario's options, model and serving policy.
    values : Mapping[str, object]
        The named parameter values (numbers or arrays over draws that broadcast).

    Attributes hold the terms in the units their names say (``prompt_tokens`` [tokens], ``peak_requests_per_s``
    [req/s], ``tpot_target_s`` [s], ``discount_rate`` [1/yr], ``horizon_years`` [yr], ...); ``model`` and ``demand``
    are what the serving model reads (:class:`~tco.core.serving.shapes.ModelShape`,
    :class:`~tco.core.serving.shapes.Demand`), ``get(name)`` reads any other parameter as a float or float array.
    """

    def __init__(self, structure: Structure, values: Mapping[str, object]):
        def get(name):
            value = values[name]
            # a number as a numpy scalar: arithmetic on it costs ~60 ns, on a 0-d array ~320 ns (one evaluation at
            # one draw does a few thousand operations); arrays over draws as float arrays
            return np.float64(value) if type(value) in _NUMBERS else np.asarray(value, dtype=float)

        self.get = get
        self.parameter_names = values.keys()
        m = structure.model
        self.prompt_tokens = get(named.workload.prompt_tokens)
        self.output_tokens = get(named.workload.output_tokens)
        self.mean_requests_per_s = get(named.workload.requests_per_s)
        self.peak_requests_per_s = self.mean_requests_per_s * get(named.workload.peak_to_mean)
        self.ttft_target_s = get(named.workload.ttft_target_s)
        self.tpot_target_s = get(named.workload.tpot_target_s)
        self.half_life_years = get(named.workload.half_life_years)
        weight_bits = get(named.workload.weight_bits)
        self.weight_bytes_per_param = weight_bits / 8.0
        self.compute_bits = get(named.workload.compute_bits)
        kv_bits = get(named.workload.kv_bits)
        params_total = get(model_param(m, "params_total"))
        params_active = get(model_param(m, "params_active"))
        experts, per_token = get(model_param(m, "experts_routed")), get(model_param(m, "experts_per_token"))
        self.context_max_tokens = get(model_param(m, "context_max_tokens"))
        latent = model_param(m, "kv_elements_per_token")
        layers = get(model_param(m, "layers"))
        if latent in values:
            self.kv_bytes_per_token = llm.latent_kv_bytes_per_token(get(latent), kv_bits)
            kv_heads = 1.0
        else:
            kv_heads = get(model_param(m, "kv_heads"))
            self.kv_bytes_per_token = llm.kv_bytes_per_token(layers, kv_heads, get(model_param(m, "head_dim")), kv_bits)
        self.stored_weight_bytes = llm.weight_bytes(params_total, weight_bits)
        slot_params = llm.expert_params_per_routed_slot(params_total, params_active, experts, per_token)
        slot_bytes = slot_params * self.weight_bytes_per_param
        self.model = ModelShape(
            weight_bytes=self.stored_weight_bytes,
            # dense: the active weights every step; MoE: shared weights + k routed experts per token
            read_fixed_bytes=(maximum(params_active * self.weight_bytes_per_param - per_token * slot_bytes, 0.0)
                              if structure.moe else params_active * self.weight_bytes_per_param),
            read_per_token_bytes=per_token * slot_bytes if structure.moe else 0.0 * slot_bytes,
            weight_flops_per_token=llm.dense_flops_per_token(params_active),
            routed_flops_per_token=llm.dense_flops_per_token(per_token * slot_params) if structure.moe else 0.0,
            kv_bytes_per_token=self.kv_bytes_per_token, layers=layers, attention_dim=get(model_param(m, "attention_dim")),
            hidden_size=get(model_param(m, "hidden_size")), experts_per_token=per_token,
            collective_element_bytes=get(named.serving.collective_bits) / 8.0, kv_heads=kv_heads, moe=structure.moe,
            **(self._expert_terms(structure, values, experts, slot_bytes) if structure.moe else {}))
        self.demand = Demand(
            prompt_tokens=self.prompt_tokens, output_tokens=self.output_tokens, peak_requests_per_s=self.peak_requests_per_s,
            mean_requests_per_s=self.mean_requests_per_s, ttft_target_s=self.ttft_target_s, tpot_target_s=self.tpot_target_s,
            percentile=get(named.serving.percentile), max_batch_sequences=get(named.workload.max_batch),
            token_budget_tokens=get(named.serving.token_budget_tokens),
            memory_compute_overlap=get(named.serving.memory_compute_overlap), phase_overlap=get(named.serving.phase_overlap),
            comm_overlap=get(named.serving.comm_overlap), policy=structure.policy,
            prompt_scv=get(named.workload.prompt_tokens_scv), prefill_queue=structure.prefill_queue,
            **({"expert_imbalance": get(named.serving.expert_imbalance),
                "redundant_expert_share": get(named.serving.redundant_expert_share),
                "micro_batch_overlap": get(named.serving.micro_batch_overlap)} if structure.moe else {}))
        self.discount_rate = get(named.economics.discount_rate)
        self.horizon_years = get(named.economics.horizon_years)
        self.output_tokens_per_year = self.mean_requests_per_s * self.output_tokens * sizing.SECONDS_PER_YEAR
        self.demand_path = DemandPath(self.discount_rate, get(named.workload.demand_growth_per_year),
                                      tuple(get(demand_year_param(y)) for y in range(1, structure.demand_series_years + 1)),
                                      int(np.max(self.horizon_years)))
        self.whole_devices = structure.whole_devices
        #: where the prefix cache lives (:data:`tco.core.serving.prefix_cache.TIERS`; None: no prefix reuse)
        self.prefix_cache_tier = structure.prefix_cache_tier
        #: :func:`tco.core.money.costs.device_hour_usd` by (device, built), computed once per evaluation
        self.device_hour_usd_by_pool: dict[tuple[str, bool], object] = {}

    def _expert_terms(self, structure: Structure, values: Mapping[str, object], experts, slot_bytes) -> dict:
        """A mixture-of-experts model's terms of wide expert parallelism (:class:`~tco.core.serving.shapes.ModelShape`):
        the stored routed experts ``E e`` [B] (at most the stored weights: ``E e`` is derived from the total and active
        parameters, which inputs outside a real model's can make inconsistent), the MoE layers [-] and the dispatch's
        bytes per element [B]."""
        moe_layers = model_param(structure.model, "moe_layers")
        return {"routed_weight_bytes": minimum(experts * slot_bytes, self.stored_weight_bytes),
                "moe_layers": self.get(moe_layers) if moe_layers in values else None,
                "dispatch_element_bytes": self.get(named.serving.dispatch_bits) / 8.0}
