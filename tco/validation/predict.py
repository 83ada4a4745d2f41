"""The model's prediction for each validation case.

A measured case becomes an inline scenario with one colocated option on the measured
device, the measured devices per replica, prompt and output lengths, latency bound,
batch limit and number format; the core evaluates it and a *metric* reads the quantity
the publication reports. A published-arithmetic case calls the core formula that
reproduces it (:data:`FORMULAS`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

import numpy as np

from ..core import llm, nre, serving, sizing
from ..core.evaluate import serving_pools
from ..errors import InputError
from ..scenario import Scenario, scenario_from_dict
from .cases import Case, Conditions, Suite

OPTION = "measured"


def scenario_for(conditions: Conditions, models: Mapping[str, dict], name: str) -> Scenario:
    """Inline scenario mirroring measured conditions, with the measured replica shape pinned.

    The measured device is the only option and hence the baseline; it is declared
    ``class: general`` here because a baseline must be general and only performance
    outputs are read (the cost side is not validated by these cases). Replicas are sized
    continuously: the metrics read a fleet of the measured size.
    """
    c = conditions
    serving = {k: getattr(c, k) for k in ("token_budget_tokens", "percentile") if getattr(c, k) is not None}
    data = {
        "name": name,
        "model": c.model,
        "models": {c.model: models[c.model]} if c.model in models else {},
        "devices": {c.device: {"class": "general"}},
        "workload": {
            "requests_per_s": 1.0, "prompt_tokens": c.prompt_tokens, "output_tokens": c.output_tokens,
            "ttft_target_s": c.ttft_target_s, "tpot_target_s": c.tpot_target_s, "half_life_years": 3.0,
            "max_batch": c.max_batch, "weight_bits": c.bits, "kv_bits": c.kv_bits or c.bits,
            "compute_bits": c.compute_bits or min(c.bits, 16.0),
        },
        "options": [{"name": OPTION, "colocated": {"device": c.device, "pipeline_stages": c.pipeline_stages,
                                                   "tensor_parallel": c.tensor_parallel or int(c.devices_per_replica)}}],
        "baseline": OPTION,
        "fleet": {"sizing": "continuous"},
        "serving": serving,
    }
    return scenario_from_dict(data, path=f"case {name}")


def _replicas(c: Conditions, pool) -> object:
    return c.system_devices / pool["devices_per_replica"]


def system_output_tokens_per_s(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Output tokens/s a measured system carries within its latency targets [tokens/s].

    The system's replicas (``system_devices / devices_per_replica``) carry at most
    :func:`tco.core.serving.fleet_capacity_rps` requests/s with the TTFT and TPOT percentiles
    met (MLPerf Server and Interactive report the highest load that passes them; Offline
    has no latency bound, modelled as targets of minutes); times the output tokens.
    """
    pools, demand, _ = serving_pools(scenario.structure, values, OPTION)
    pool = pools["colocated"]
    return serving.fleet_capacity_rps("colocated", pool, _replicas(c, pool), demand) * c.output_tokens


def per_user_decode_tokens_per_s(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Output tokens/s one user sees: ``1 / t_d(c_s)``, the decode cycle at the slot cap (1 at batch 1) [tokens/s]."""
    pools, _, _ = serving_pools(scenario.structure, values, OPTION)
    return 1.0 / pools["colocated"]["decode_cap_s"]


def _at_capacity(scenario: Scenario, values: Mapping[str, object], c: Conditions) -> dict:
    """Percentile TTFT and TPOT of the measured system run at the most it carries within its targets.

    MLPerf Server and Interactive runs report the highest load that passes the p99 bounds,
    so their logged p99 latencies are those of a system at its capacity.
    """
    pools, demand, _ = serving_pools(scenario.structure, values, OPTION)
    pool = pools["colocated"]
    replicas = _replicas(c, pool)
    load = serving.fleet_capacity_rps("colocated", pool, replicas, demand)
    return pool.at_load(dataclasses.replace(demand, peak_requests_per_s=load), replicas)


def ttft_s(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Time to first token at the percentile, the measured system at its capacity [s]."""
    return _at_capacity(scenario, values, c)["ttft_s"]


def tpot_s(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Time per output token at the percentile, the measured system at its capacity [s]."""
    return _at_capacity(scenario, values, c)["tpot_s"]


METRIC_READERS: dict[str, Callable] = {f.__name__: f for f in (system_output_tokens_per_s, per_user_decode_tokens_per_s,
                                                                ttft_s, tpot_s)}


def kv_bytes_per_token(layers, kv_heads, head_dim, bits_per_kv):
    """KV bytes per token [B/token], :func:`tco.core.llm.kv_bytes_per_token`."""
    return llm.kv_bytes_per_token(layers, kv_heads, head_dim, bits_per_kv)


def kv_bytes_per_request_gib(layers, kv_heads, head_dim, bits_per_kv, prompt_tokens):
    """KV cache one request moves from prefill to decode [GiB]: ``P x k / 2^30``."""
    per_token = kv_bytes_per_token(layers, kv_heads, head_dim, bits_per_kv)
    return sizing.kv_transfer_bytes_per_request(prompt_tokens, per_token) / 2.0**30


def kv_link_load_gibit_per_s(layers, kv_heads, head_dim, bits_per_kv, prompt_tokens, requests_per_s):
    """KV-link load at ``lambda`` requests/s [Gibit/s]: ``lambda x P x k x 8 / 2^30``."""
    return requests_per_s * kv_bytes_per_request_gib(layers, kv_heads, head_dim, bits_per_kv, prompt_tokens) * 8.0


def two_for_two_payback_years(baseline_tco_usd_per_year, nre_usd, tco_improvement):
    """Years for the yearly saving to repay the NRE [yr]: ``NRE / (TCO_old (1 - 1/i))``.

    With an improvement ``i`` in TCO per op/s the same work costs ``TCO_old / i``, so the
    yearly saving is ``TCO_old (1 - 1/i)``. At the two-for-two boundary (ASIC Clouds,
    ISCA 2016: ``TCO_old = 2 NRE``, ``i = 2``) the payback is exactly one year. Raises
    when the rule (:func:`tco.core.nre.two_for_two`) disagrees with the inputs given as
    its boundary, so the case checks the core's rule too.
    """
    holds, _ratio = nre.two_for_two(baseline_tco_usd_per_year, nre_usd, tco_improvement)
    if not bool(np.all(holds)):
        raise InputError.one("inputs", [baseline_tco_usd_per_year, nre_usd, tco_improvement],
                             "the two-for-two rule does not hold at these inputs")
    return nre_usd / (baseline_tco_usd_per_year * (1.0 - 1.0 / tco_improvement))


def product_of_gains(**factors):
    """Product of independent improvement factors [x] (Dally, Hot Chips 2023: 16 x 12.5 x 2.5 x 2)."""
    return float(np.prod(list(factors.values())))


FORMULAS: dict[str, Callable] = {f.__name__: f for f in (kv_bytes_per_token, kv_bytes_per_request_gib,
                                                         kv_link_load_gibit_per_s, two_for_two_payback_years,
                                                         product_of_gains)}


class Predictor:
    """Predictions of a suite's cases; scenarios are built once and re-evaluated with updates."""

    def __init__(self, suite: Suite):
        self.suite = suite
        self._scenarios: dict[str, Scenario] = {}

    def scenario(self, case: Case) -> Scenario:
        if case.name not in self._scenarios:
            self._scenarios[case.name] = scenario_for(case.conditions, self.suite.models, case.name)
        return self._scenarios[case.name]

    def predict(self, case: Case, updates: Mapping[str, object] | None = None):
        """The case's predicted figure, in the case's unit (array when ``updates`` are arrays).

        ``updates`` maps device parameter names (``devices.<id>.<field>``) to values; names
        of devices the case does not use are ignored.
        """
        if case.formula is not None:
            if case.formula not in FORMULAS:
                raise InputError.one(f"cases.{case.name}.formula", case.formula, f"must be one of {', '.join(FORMULAS)}")
            try:
                return FORMULAS[case.formula](**case.inputs)
            except TypeError as exc:
                raise InputError.one(f"cases.{case.name}.inputs", sorted(case.inputs),
                                     f"do not fit {case.formula}: {exc}") from None
        value = self._measured(case.name, case.conditions, case.metric, updates)
        if case.denominator is not None:
            value = value / self._measured(case.name + " (denominator)", case.denominator, case.metric, updates)
        return value

    def _measured(self, name: str, conditions: Conditions, metric: str, updates):
        if name not in self._scenarios:
            self._scenarios[name] = scenario_for(conditions, self.suite.models, name)
        scenario = self._scenarios[name]
        values = scenario.values()
        values.update({k: v for k, v in (updates or {}).items() if k in values})
        return METRIC_READERS[metric](scenario, values, conditions)
