"""The model's prediction for each validation case.

A measured case becomes an inline scenario with one colocated option on the measured
device, the measured devices per replica, prompt and output lengths, latency bound,
batch limit and number format; the core evaluates it and a *metric* reads the quantity
the publication reports. A published-arithmetic case calls the core formula that
reproduces it (:data:`FORMULAS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ..api import evaluate_scenario
from ..core import llm, nre, sizing
from ..core.outputs import OptionResult
from ..errors import InputError
from ..scenario import Scenario, scenario_from_dict
from .cases import Case, Conditions, Suite

OPTION = "measured"


def scenario_for(conditions: Conditions, models: Mapping[str, dict], name: str) -> Scenario:
    """Inline scenario mirroring measured conditions.

    The measured device is the only option and hence the baseline; it is declared
    ``class: general`` here because a baseline must be general and only performance
    outputs are read (the cost side is not validated by these cases).
    """
    c = conditions
    data = {
        "name": name,
        "model": c.model,
        "models": {c.model: models[c.model]} if c.model in models else {},
        "devices": {c.device: {"class": "general"}},
        "workload": {
            "requests_per_s": 1.0, "prompt_tokens": c.prompt_tokens, "output_tokens": c.output_tokens,
            "ttft_target_s": c.ttft_target_s, "tpot_target_s": c.tpot_target_s, "half_life_years": 3.0,
            "max_batch": c.max_batch, "weight_bits": c.bits, "kv_bits": c.bits, "compute_bits": min(c.bits, 16.0),
        },
        "options": [{"name": OPTION, "colocated": {"device": c.device, "devices_per_replica": c.devices_per_replica}}],
        "baseline": OPTION,
    }
    return scenario_from_dict(data, path=f"case {name}")


def system_output_tokens_per_s(r: OptionResult, c: Conditions):
    """Output tokens/s of the measured system [tokens/s].

    Replicas in the system (``system_devices / devices_per_replica``) times the requests/s
    one replica serves doing prefill and decode in turn
    (:func:`tco.core.sizing.colocated_requests_per_s`) times the output tokens per request.
    """
    perf = r.pool("colocated").performance
    requests_per_s = sizing.colocated_requests_per_s(c.prompt_tokens, c.output_tokens, perf.prefill_tokens_per_s,
                                                    perf.decode_tokens_per_s)
    return c.system_devices / perf.devices_per_replica * requests_per_s * c.output_tokens


def per_user_decode_tokens_per_s(r: OptionResult, c: Conditions):
    """Output tokens/s one user sees: ``1 / t_step`` at the chosen batch [tokens/s]."""
    return 1.0 / r.pool("colocated").performance.step_s


def ttft_s(r: OptionResult, c: Conditions):
    """Time to first token: the prefill of one prompt on an idle replica [s]."""
    return r.pool("colocated").performance.prefill_s


def tpot_s(r: OptionResult, c: Conditions):
    """Time per output token: one decode step at the chosen batch [s]."""
    return r.pool("colocated").performance.step_s


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
        scenario = self.scenario(case)
        names = set(scenario.params.values())
        relevant = {k: v for k, v in (updates or {}).items() if k in names}
        results, _ = evaluate_scenario(scenario, relevant)
        return METRIC_READERS[case.metric](results[OPTION], case.conditions)
