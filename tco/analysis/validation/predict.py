"""The model's prediction for each validation case.

A measured case becomes an inline scenario with one colocated option (or, for one pool of a disaggregated
deployment, a prefill and a decode pool) on the measured
device, the measured devices per replica, prompt and output lengths, latency bound,
batch limit and number format; the core evaluates it and a *metric* reads the quantity
the publication reports. (Published arithmetic -- KV-cache sizes, the two-for-two rule --
is checked by unit tests of the core formulas, tests/test_core_formulas.py.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from tco.analysis.validation.cases import Case, Conditions, Suite
from tco.core.evaluate import serving_pools
from tco.core.serving.capacity import AtPeak, fleet_capacity_rps
from tco.core.serving.speculation import acceptance_rate_for
from tco.inputs.catalog import load_catalog
from tco.inputs.loading import scenario_from_dict
from tco.inputs.scenario import Scenario

OPTION = "measured"
#: optional device fields a calibration may fit, with the value the core uses when a device lacks them
NEUTRAL_DEVICE_FIELDS = {"cycle_overhead_s": 0.0, "collective_efficiency": 1.0, "expert_compute_efficiency": 1.0}


def _neutral_fields(device: str) -> dict:
    """The optional fields ``device`` lacks in the catalog, at their neutral values, as quantities: a fit can
    then move them (a parameter must exist to be updated), and predictions at the catalog's values are unchanged."""

    entry = load_catalog().devices.get(device, {})
    return {name: {"value": value, "low": value, "high": value, "grade": "C", "date": "2026",
                   "source": "tco calibrate (the core's value when the field is absent)"}
            for name, value in NEUTRAL_DEVICE_FIELDS.items() if name not in entry}


def scenario_for(conditions: Conditions, models: Mapping[str, dict], name: str) -> Scenario:
    """Inline scenario mirroring measured conditions, with the measured replica shape pinned.

    The measured device is the only option and hence the baseline; it is declared
    ``class: general`` here because a baseline must be general and only performance
    outputs are read (the cost side is not validated by these cases). Replicas are sized
    continuously: the metrics read a fleet of the measured size.
    """
    c = conditions
    serving = {k: getattr(c, k) for k in ("token_budget_tokens", "percentile", "policy", "prefix_cache_tier")
               if getattr(c, k) is not None}
    data = {
        "name": name,
        "model": c.model,
        "models": {c.model: models[c.model]} if c.model in models else {},
        "devices": {c.device: {"class": "general", **_neutral_fields(c.device)}},
        "workload": {
            "requests_per_s": 1.0, "prompt_tokens": c.prompt_tokens, "prompt_tokens_scv": c.prompt_tokens_scv,
            "output_tokens": c.output_tokens,
            "ttft_target_s": c.ttft_target_s, "tpot_target_s": c.tpot_target_s, "half_life_years": 3.0,
            "max_batch": c.max_batch, "weight_bits": c.bits, "kv_bits": c.kv_bits or c.bits,
            "compute_bits": c.compute_bits or min(c.bits, 16.0), **_prefix_reuse(c),
        },
        "options": [_option(c)],
        "baseline": OPTION,
        "fleet": {"sizing": "continuous"},
        "serving": serving,
    }
    return scenario_from_dict(data, path=f"case {name}")


#: the KV link of a measured disaggregated deployment (only the measured pool is read)
KV_LINK = "ib-400g"
#: the time a cached prefix waits for its reuse in a measured run [s]: short, so that at the scenario's 1 request/s the
#: working set (rate x interval x prefix KV) fits any pool's cache and the pool holds the run's published hit rate
PREFIX_REUSE_INTERVAL_S = 1.0


def _prefix_reuse(c: Conditions) -> dict:
    """The workload's prefix reuse for a run that published its cache hit rate (none otherwise)."""
    if not c.prefix_hit_fraction:
        return {}
    return {"prefix_hit_fraction": c.prefix_hit_fraction, "prefix_reuse_interval_s": PREFIX_REUSE_INTERVAL_S}


def _speculation(c: Conditions) -> dict:
    """The option's ``speculation:`` block for a run that drafted tokens: the method, its drafted tokens and the
    i.i.d. acceptance rate that gives the published acceptance length
    (:func:`tco.core.serving.speculation.acceptance_rate_for`); the draft's cost stays the method's default."""
    if c.speculation is None:
        return {}
    run = c.speculation
    rate = float(acceptance_rate_for(run.accepted_tokens_per_step, run.draft_tokens))
    return {"speculation": {"method": run.method, "draft_tokens": run.draft_tokens, "acceptance_rate": rate}}


def _option(c: Conditions) -> dict:
    """The measured option: one colocated pool, or (``role`` prefill or decode) a disaggregated pair whose pools
    both take the pinned shape, a wide one (``data_parallel``) or a tensor x pipeline one."""
    if c.data_parallel is not None:
        pool = {"device": c.device, "data_parallel": c.data_parallel, "micro_batches": c.micro_batches or 1}
    else:
        pool = {"device": c.device, "pipeline_stages": c.pipeline_stages,
                "tensor_parallel": c.tensor_parallel or int(c.devices_per_replica)}
    if c.role == "colocated":
        return {"name": OPTION, "colocated": pool, **_speculation(c)}
    return {"name": OPTION, "prefill": pool, "decode": dict(pool), "kv_link": KV_LINK, **_speculation(c)}


def _replicas(c: Conditions, pool) -> object:
    return c.system_devices / pool.figures.devices_per_replica


def system_output_tokens_per_s(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Output tokens/s a measured system carries within its latency targets [tokens/s].

    The system's replicas (``system_devices / devices_per_replica``) carry at most
    :func:`tco.core.serving.capacity.fleet_capacity_rps` requests/s with the TTFT and TPOT percentiles
    met (MLPerf Server and Interactive report the highest load that passes them; Offline
    has no latency bound, modelled as targets of minutes); times the output tokens.
    """
    pools, demand, _ = serving_pools(scenario.structure, values, OPTION)
    pool = pools["colocated"]
    return fleet_capacity_rps("colocated", pool.figures, _replicas(c, pool), demand) * c.output_tokens


def per_user_decode_tokens_per_s(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Output tokens/s one user sees: ``tau / t_d(c_s)``, the tokens a decode step emits (``tau``, 1 without
    speculation) over the decode cycle at the slot cap (1 at batch 1) [tokens/s]."""
    pools, demand, _ = serving_pools(scenario.structure, values, OPTION)
    return demand.tokens_per_step / pools["colocated"].figures.decode_cap_s


def per_user_tokens_per_s_under_load(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Output tokens/s a user sees with ``max_batch`` users in flight (a closed loop): ``1 / t(c_s)`` [tokens/s].

    ``t(c_s)`` is the cycle at the slot cap as a request sees it, the decode cycle plus the
    prefill of the other users' next prompts riding in it (``(P/O) chi B``).
    """
    pools, _, _ = serving_pools(scenario.structure, values, OPTION)
    return 1.0 / pools["colocated"].figures.cycle_cap_s


def _at_capacity(scenario: Scenario, values: Mapping[str, object], c: Conditions) -> AtPeak:
    """Percentile TTFT and TPOT of the measured system run at the most it carries within its targets.

    MLPerf Server and Interactive runs report the highest load that passes the p99 bounds,
    so their logged p99 latencies are those of a system at its capacity.
    """
    pools, demand, _ = serving_pools(scenario.structure, values, OPTION)
    pool = pools["colocated"]
    replicas = _replicas(c, pool)
    load = fleet_capacity_rps("colocated", pool.figures, replicas, demand)
    return pool.at_load(dataclasses.replace(demand, peak_requests_per_s=load), replicas)


def ttft_s(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Time to first token at the percentile, the measured system at its capacity [s]."""
    return _at_capacity(scenario, values, c).ttft_s


def tpot_s(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Time per output token at the percentile, the measured system at its capacity [s]."""
    return _at_capacity(scenario, values, c).tpot_s


def tpot_mean_at_logged_load_s(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Mean time per output token at the occupancy the measured run logged [s].

    ``t(B)``, the cycle a request sees (decode plus the prefill riding in it), at ``B`` = the
    sequences the log shows in flight per replica (Little's law: output tokens/s x mean
    TPOT, over ``system_devices / devices_per_replica`` replicas). It checks the cycle model
    at a measured operating point, apart from the queueing model that sets how much load a
    fleet carries within its percentile targets (:func:`tpot_s` reads both together).
    """
    pools, _, _ = serving_pools(scenario.structure, values, OPTION)
    pool = pools["colocated"]
    return pool.seen_cycle_s(c.sequences_in_flight / _replicas(c, pool))


def output_tokens_per_s_per_device(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Output tokens/s per accelerator of the measured system (rankings per accelerator) [tokens/s]."""
    return system_output_tokens_per_s(scenario, values, c) / c.system_devices


def phase_tokens_per_s_per_device(scenario: Scenario, values: Mapping[str, object], c: Conditions):
    """Tokens/s per accelerator of the measured pool of a disaggregated deployment with as many requests in flight
    as it holds (no latency bound): prompt tokens of a prefill pool, output tokens of a decode pool [tokens/s].

    :func:`tco.core.serving.capacity.fleet_capacity_rps` of the pool's ``system_devices / devices_per_replica``
    replicas times the prompt (prefill) or output (decode) length, over ``system_devices``.
    """
    pools, demand, _ = serving_pools(scenario.structure, values, OPTION)
    pool = pools[c.role]
    tokens = c.prompt_tokens if c.role == "prefill" else c.output_tokens
    return fleet_capacity_rps(c.role, pool.figures, _replicas(c, pool), demand) * tokens / c.system_devices


METRIC_READERS: dict[str, Callable] = {f.__name__: f for f in (system_output_tokens_per_s, output_tokens_per_s_per_device,
                                                                per_user_decode_tokens_per_s, per_user_tokens_per_s_under_load,
                                                                ttft_s, tpot_s, tpot_mean_at_logged_load_s,
                                                                phase_tokens_per_s_per_device)}


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
