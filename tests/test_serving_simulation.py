"""The closed-form serving model against a discrete-event simulation of the fleet it sized.

For each set-up the model sizes a pool at peak (:func:`tco.core.serving.search.size_pool`); the
simulation (tests/simulation.py) then runs that fleet -- same replicas, slot cap, token
budget, and the same hardware cost per cycle -- request by request with Poisson arrivals.

Tolerance: the simulated p99 must not exceed the model's p99 by more than 10 %. Reason:
a p99 from ~3,000 simulated requests has a sampling error of a few per cent, and the
model's approximations (fluid prefill share, square-root staffing, the Gaussian waiting
tail) are built to err on the safe side; 10 % leaves room for sampling noise only. The
model must also not be grossly conservative: the simulated p99 TPOT is at least 75 % of
the model's (TPOT is bounded by the cycle at the slot cap, so it cannot be far off).

The last test runs every bundled scenario's own fleets (base values and two seeded draws whose
request rate is scaled down where the fleet would be too big to simulate quickly, every option
the model reports feasible) and checks the user's targets, the claim of issue 11. Measured on
this project's reference machine: simulated p99 TTFT 10-100 % of the model's (the colocated waits
are sized with a split of the slack and the percentile budget, a union bound: safe whichever
split). Simulated p99 TPOT (2026-12-01, base values, gamma lengths): at most the model's -- the colocated
H100 chat fleets 90-96 %, the colocated ASIC 81-83 %, the SRAM systems 86-96 % (the model counts the
spread of the prefill sharing a request's cycles at the slot cap, tco.core.serving.cycles.interference_spread_s; with
the mean interference alone the H100 fleets ran up to 109 %) -- and far below it for decode pools
sized with slack (the split's LPU pool: 10 %).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from simulation import Lengths, simulate_colocated, simulate_disaggregated
from simulation import _Environment as simulation_environment
from test_serving import H200, MODEL, demand
from validation_data import data_rows

from tco.analysis.program_views import held_generations
from tco.core.evaluate import chosen_cycle_models, evaluate, serving_pools
from tco.core.serving import parallelism
from tco.core.serving.capacity import fleet_capacity_rps
from tco.core.serving.cycles import cycle_model, prefill_pass_prompts
from tco.core.serving.search import size_pool
from tco.core.serving.shapes import PREFILL_QUEUES, DeviceShape, ModelShape

#: simulated p99 over the model's p99 (see the module docstring)
TOLERANCE = 0.10

LLAMA8B = ModelShape(weight_bytes=1.606e10, read_fixed_bytes=1.606e10, read_per_token_bytes=0.0,
                     weight_flops_per_token=2 * 8.03e9, kv_bytes_per_token=2 * 32 * 8 * 128 * 2.0, layers=32.0,
                     attention_dim=4096.0, hidden_size=4096.0, experts_per_token=1.0, collective_element_bytes=2.0,
                     kv_heads=8, moe=False)
H100 = DeviceShape(tier_capacity_bytes=(8.0e10,), tier_bandwidth_bytes_per_s=(3.35e12,), usable_fraction=0.9,
                   bandwidth_efficiency=0.8, flops_per_s=9.894e14 * 0.48, sync_latency_s=2e-6, scale_up_bytes_per_s=4.5e11,
                   scale_out_bytes_per_s=5e10, domain_devices=8.0)

SETUPS = {
    # name: (model, device, shape, demand kwargs)
    "mlperf-interactive-h200": (MODEL, H200, parallelism.Shape(1), dict(rate=67.0, budget=256.0)),
    "mlperf-server-h200": (MODEL, H200, parallelism.Shape(1), dict(rate=100.0, ttft=2.0, tpot=0.2, budget=8192.0)),
    "chat-h200-tp2": (MODEL, H200, parallelism.Shape(2), dict(rate=12.0, ttft=1.0, tpot=0.04, budget=8192.0,
                                                              prompt=2000.0, output=400.0)),
    "voice-h100": (LLAMA8B, H100, parallelism.Shape(1), dict(rate=40.0, ttft=0.3, tpot=0.01, budget=8192.0,
                                                             prompt=1500.0, output=150.0)),
    "prefill-first-h200": (MODEL, H200, parallelism.Shape(1), dict(rate=30.0, budget=2048.0, policy="prefill_first")),
    # batches held down for the TTFT target (candidates._held_batch; tests/test_serving.py): the largest cap whose longest
    # prompts can meet it, 50 of 69 slots at 130 ms (simulated p99 TTFT 0.90-0.92x the model's), 34 at 120 ms (0.93x),
    # 19 at 110 ms (0.95-0.96x) and 3 at 100 ms (146 replicas; 0.99x). With the prompt's chunks counted as a fractional
    # number of cycles the model was 1.03-1.13x optimistic at such caps (docs/model.md "A batch held down")
    "held-130ms-h200": (MODEL, H200, parallelism.Shape(1), dict(ttft=0.13)),
    "held-120ms-h200": (MODEL, H200, parallelism.Shape(1), dict(ttft=0.12)),
    "held-110ms-h200": (MODEL, H200, parallelism.Shape(1), dict(ttft=0.11)),
    "held-100ms-h200": (MODEL, H200, parallelism.Shape(1), dict(ttft=0.10)),
    # lanes busy a large share of the time on few replicas, one prompt's prefill most of the TTFT target: a router
    # binds a prompt to one replica at arrival, so the model's lanes are dispatched (tco.core.serving.queueing). Sized with
    # pooled lanes (13 replicas) this fleet simulated at 1.34x the model's p99 TTFT and 1.2x its target
    # (tests/fleet_sweep.py, seed 5); dispatched, 15 replicas and 0.88x
    "dispatched-lanes-h200": (MODEL, H200, parallelism.Shape(1), dict(rate=19.7, ttft=0.551, tpot=0.065, budget=2048.0,
                                                                      prompt=2137.0, output=265.0)),
    # GPU pipelines whose micro-batches carry whole chunks (tco.core.serving.cycles.interference_lines): a chat's few prompts per
    # cycle (each holds every stage), and MLPerf server-like traffic with the dataset's length spread (many prompts
    # per cycle: the heaviest micro-batch's overshoot)
    "chat-h200-pp4": (MODEL, H200, parallelism.Shape(1, 4), dict(rate=12.0, ttft=1.0, tpot=0.04, budget=8192.0,
                                                                 prompt=2000.0, output=400.0)),
    "chat-h200-tp2-pp2": (MODEL, H200, parallelism.Shape(2, 2), dict(rate=12.0, ttft=1.0, tpot=0.04, budget=8192.0,
                                                                     prompt=2000.0, output=400.0, scv=0.79)),
    "server-h200-pp2": (MODEL, H200, parallelism.Shape(1, 2), dict(rate=60.0, ttft=2.0, tpot=0.2, budget=1024.0,
                                                                   scv=0.58)),
    "server-h200-pp4": (MODEL, H200, parallelism.Shape(1, 4), dict(rate=60.0, ttft=2.0, tpot=0.2, budget=1024.0,
                                                                   scv=0.58)),
}


def _check(name, model_ttft, model_tpot, outcome, d):
    ttft, tpot = outcome.quantile(0.99)
    assert outcome.unfinished == 0, name
    assert ttft <= model_ttft * (1.0 + TOLERANCE), (name, ttft, model_ttft)
    assert tpot <= model_tpot * (1.0 + TOLERANCE), (name, tpot, model_tpot)
    assert tpot >= 0.75 * model_tpot, (name, tpot, model_tpot)
    assert ttft <= float(d.ttft_target_s) * (1.0 + TOLERANCE) and tpot <= float(d.tpot_target_s) * (1.0 + TOLERANCE)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SETUPS))
def test_colocated_pool_meets_its_percentiles_in_simulation(name):
    model, device, shape, kwargs = SETUPS[name]
    kwargs = dict(kwargs)
    scv = kwargs.pop("scv", 0.0)
    d = dataclasses.replace(demand(**kwargs), prompt_scv=scv)
    sized = size_pool("colocated", [shape], model, device, d, whole=True)
    assert bool(sized["feasible"]), name
    cm = cycle_model(shape, model, device, d, "colocated")
    outcome = simulate_colocated(cm, int(sized["replicas"]), int(sized["slots"]), int(d.prompt_tokens), int(d.output_tokens),
                                 float(d.peak_requests_per_s), float(d.token_budget_tokens), d.policy,
                                 int(prefill_pass_prompts(cm, d)), requests=3000,
                                 lengths=Lengths(float(d.prompt_tokens), scv, seed=3), streamed=device.streamed_prefill)
    _check(name, float(sized["ttft_s"]), float(sized["tpot_s"]), outcome, d)


@pytest.mark.slow
def test_a_pipeline_sized_as_if_balanced_misses_its_targets_when_micro_batches_carry_whole_chunks():
    """Why GPU pipelines pay their micro-batch imbalance (cycles.interference_lines): sized as if a prompt's prefill
    spread evenly over the stages (``streamed_prefill``, the dataflow parts' rule), the chat fleet of four-stage H200
    replicas gets 3 replicas and a 0.14 s p99 TTFT; run with its micro-batches carrying whole chunks (GPU serving stacks)
    the same fleet takes tens of seconds to a first token (measured 66 s) and ~76 ms per output token, against 1 s and
    40 ms. Sized as micro-batches, it gets 9 replicas and meets both (the SETUPS case chat-h200-pp4)."""
    model, device, shape, kwargs = SETUPS["chat-h200-pp4"]
    d = demand(**kwargs)
    balanced = dataclasses.replace(device, streamed_prefill=True)
    sized = size_pool("colocated", [shape], model, balanced, d, whole=True)
    assert bool(sized["feasible"]) and float(sized["ttft_s"]) < 0.2
    cm = cycle_model(shape, model, balanced, d, "colocated")
    outcome = simulate_colocated(cm, int(sized["replicas"]), int(sized["slots"]), int(d.prompt_tokens), int(d.output_tokens),
                                 float(d.peak_requests_per_s), float(d.token_budget_tokens), d.policy, 1, requests=1500,
                                 streamed=False)
    ttft, tpot = outcome.quantile(0.99)
    assert ttft > 5.0 * float(d.ttft_target_s) and tpot > 1.5 * float(d.tpot_target_s), (ttft, tpot)
    micro = size_pool("colocated", [shape], model, device, d, whole=True)
    assert float(micro["replicas"]) > 2.0 * float(sized["replicas"])


def test_the_event_loop_gives_the_numbers_simpy_gives():
    """tests/simulation.py runs its processes on an event loop of its own, simpy's cut down to what they use (2-3x
    faster); run on simpy itself, a colocated fleet of two-stage replicas with gamma prompt lengths (the micro-batch
    path), a prefill-first fleet and a split whose prompts are dispatched to one prefill replica give the same TTFT
    and TPOT for every request, bit for bit."""
    import simpy

    def colocated(name, requests, environment):
        model, device, shape, kwargs = SETUPS[name]
        kwargs = dict(kwargs)
        scv = kwargs.pop("scv", 0.0)
        d = dataclasses.replace(demand(**kwargs), prompt_scv=scv)
        sized = size_pool("colocated", [shape], model, device, d, whole=True)
        cm = cycle_model(shape, model, device, d, "colocated")
        return simulate_colocated(cm, int(sized["replicas"]), int(sized["slots"]), int(d.prompt_tokens),
                                  int(d.output_tokens), float(d.peak_requests_per_s), float(d.token_budget_tokens), d.policy,
                                  int(prefill_pass_prompts(cm, d)), requests=requests,
                                  lengths=Lengths(float(d.prompt_tokens), scv, seed=3), environment=environment)

    def split(environment):
        d = demand(rate=20.0, ttft=1.0, tpot=0.04, budget=8192.0, prompt=2000.0, output=400.0)
        shape = parallelism.Shape(1)
        pre, dec = (cycle_model(shape, MODEL, H200, d, role) for role in ("prefill", "decode"))
        return simulate_disaggregated(pre, dec, 3, 2, 64, 2000, 400, 20.0, 1, 0.007, requests=200,
                                      lengths=Lengths(2000.0, 0.79, seed=5), prefill_routing="dispatched",
                                      environment=environment)

    for run in (lambda env: colocated("chat-h200-tp2-pp2", 300, env), lambda env: colocated("prefill-first-h200", 300, env),
                split):
        ours, theirs = run(simulation_environment), run(simpy.Environment)
        assert len(ours.ttft_s) > 100 and ours.unfinished == theirs.unfinished
        np.testing.assert_array_equal(ours.ttft_s, theirs.ttft_s)
        np.testing.assert_array_equal(ours.tpot_s, theirs.tpot_s)


@pytest.mark.slow
def test_disaggregated_pools_meet_their_percentiles_in_simulation():
    """H200 prefill pool -> 400G KV link -> H200 decode pool, chat lengths (2,000 / 400 tokens)."""
    d = demand(rate=20.0, ttft=1.0, tpot=0.04, budget=8192.0, prompt=2000.0, output=400.0)
    transfer = 2000.0 * 163840.0 / 5.0e10 + 5e-6
    shape = parallelism.Shape(1)
    pre = size_pool("prefill", [shape], MODEL, H200, d, ttft_extra_s=transfer)
    dec = size_pool("decode", [shape], MODEL, H200, d)
    assert bool(pre["feasible"]) and bool(dec["feasible"])
    outcome = simulate_disaggregated(
        cycle_model(shape, MODEL, H200, d, "prefill"), cycle_model(shape, MODEL, H200, d, "decode"),
        int(pre["replicas"]), int(dec["replicas"]), int(dec["slots"]), 2000, 400, 20.0,
        int(prefill_pass_prompts(cycle_model(shape, MODEL, H200, d, "prefill"), d)), transfer, requests=3000)
    _check("disaggregated", float(pre["ttft_s"]), float(dec["tpot_s"]), outcome, d)


# ---------------------------------------------------------------- every bundled scenario, its own fleet

def _draws(scenario, count: int, seed: int):
    """The base values and ``count`` Monte Carlo draws of the scenario's uncertain parameters (fixed seed)."""
    from tco.studies.sampling import draw_chunk, sampling_plan

    drawn = draw_chunk(sampling_plan(scenario), seed, 0, count)
    base = scenario.values()
    return [base] + [{**base, **{k: float(np.asarray(v).reshape(-1)[i]) for k, v in drawn.items()}} for i in range(count)]


def _simulate_option(structure, values, option, requests, sample=None, routing=None):
    """Run the option's fleet, as the model sized it for these values, at the peak rate: prompts gamma at the
    scenario's own spread, or resampled from ``sample`` (token counts) rescaled to the scenario's mean; a split's
    prefill prompts routed as its ``serving.prefill_queue`` says, or as ``routing`` (``shared``, ``dispatched``).
    With prefix reuse a prompt is the part the prefilling pool computes (its length less the cached prefix: the
    demand that pool was sized for, tco.core.evaluate.pool_demand), drawn at the same spread."""
    pools, _, transfer = serving_pools(structure, values, option.name)
    models, demands = chosen_cycle_models(structure, values, option.name)
    demand = demands["prefill" if option.disaggregated else "colocated"]
    one = {role: {f.name: float(np.asarray(getattr(p.figures, f.name)).reshape(-1)[0]) for f in dataclasses.fields(p.figures)}
           for role, p in pools.items()}
    prompt, output = round(float(demand.prompt_tokens)), round(float(demand.output_tokens))
    rate = float(demand.peak_requests_per_s)
    budget = float(demand.token_budget_tokens)
    lengths = (Lengths(prompt, float(values["workload.prompt_tokens_scv"])) if sample is None  # gamma, own spread
               else Lengths(prompt, sample=sample))
    if option.disaggregated:
        outcome = simulate_disaggregated(
            models["prefill"], models["decode"], int(one["prefill"]["replicas"]), int(one["decode"]["replicas"]),
            int(one["decode"]["slots"]), prompt, output, rate,
            int(prefill_pass_prompts(models["prefill"], demand)), float(np.asarray(transfer).reshape(-1)[0]),
            requests=requests, lengths=lengths, prefill_routing=routing or demand.prefill_queue)
        return outcome
    cm = models["colocated"]
    outcome = simulate_colocated(cm, int(one["colocated"]["replicas"]), int(one["colocated"]["slots"]), prompt, output,
                                 rate, budget, demand.policy, int(prefill_pass_prompts(cm, demand)),
                                 requests=requests, lengths=lengths, streamed=option.pools[0].streamed_prefill)
    return outcome


#: replicas of the largest simulated pool times the output tokens per request, in the random draws (the base values
#: run the scenario's own fleet, whatever its size). A simulation costs ~8 us per replica-cycle and runs each replica
#: for ~2.5 request lifetimes (warm-up, window, drain) of ~output-tokens cycles each: a custom-asic draw at 7,000 req/s
#: simulates ~5,000 replicas, 10^7 cycles, ~80 s; at 60,000 replica-tokens (150 replicas at 400 tokens) ~1 s.
DRAW_REPLICA_TOKENS_CAP = 60_000


def _fleets_run(structure, results, option) -> list:
    """The structures whose ``option`` is a fleet the option runs: its own, or, for a baseline that follows the
    general-purpose roadmap, the baseline's shape on each generation it holds within the horizon (whose targets its
    feasibility is judged by: tco.core.evaluate.held_generations_code)."""
    held = held_generations(results[option.name])
    if not held:
        return [structure]
    on = {g.pools[0].device: g for g in structure.generation_options()}
    return [structure if device not in on else
            dataclasses.replace(structure, options=tuple(on[device] if o.name == option.name else o for o in structure.options))
            for device in held]


def _feasible(results, option) -> bool:
    return float(np.asarray(results[option.name].feasible).reshape(-1)[0]) >= 0.5


def _largest_pool(scenario, values, results) -> float:
    """Replicas of the largest pool of any option the model reports feasible at ``values``."""
    return max((float(np.asarray(p.figures.replicas).reshape(-1)[0])
                for option in scenario.structure.options if _feasible(results, option)
                for p in serving_pools(scenario.structure, values, option.name)[0].values()), default=0.0)


def _capped(scenario, values):
    """``values`` and their results, with the request rate scaled down where the largest pool times the output
    tokens would exceed :data:`DRAW_REPLICA_TOKENS_CAP`: the same devices, model, lengths, targets and
    efficiencies drawn, a smaller fleet (the model sizes it again for the lower rate)."""
    results = evaluate(scenario.structure, values)
    size = _largest_pool(scenario, values, results) * float(values["workload.output_tokens"])
    if size <= DRAW_REPLICA_TOKENS_CAP:
        return values, results
    values = {**values, "workload.requests_per_s": values["workload.requests_per_s"] * DRAW_REPLICA_TOKENS_CAP / size}
    return values, evaluate(scenario.structure, values)


def simulated_against_targets(scenario, values, results, requests: int = 1500):
    """Per option the model reports feasible at ``values`` (``results``: their evaluation), and per fleet it runs
    (:func:`_fleets_run`): ``(option name, simulated percentile TTFT / target, TPOT / target, requests unfinished)``,
    the percentile the scenario's (``serving.percentile``), from a simulation of ``requests`` requests at the peak
    rate. tests/simulation_sweep.py runs it over many draws."""
    q = float(values["serving.percentile"])
    for option in scenario.structure.options:
        if not _feasible(results, option):
            continue
        for structure in _fleets_run(scenario.structure, results, option):
            outcome = _simulate_option(structure, values, structure.option(option.name), requests=requests)
            ttft, tpot = outcome.quantile(q)
            yield (option.name, ttft / float(values["workload.ttft_target_s"]), tpot / float(values["workload.tpot_target_s"]),
                   outcome.unfinished)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["default", "voice-agent", "fleet-split", "batch-offline", "custom-asic",
                                  "specialization-over-time", "agentic-coding"])
def test_every_feasible_option_meets_its_targets_in_simulation(name):
    """Issue 11: on every bundled scenario, at its base values (its own fleets, up to ~1,200 replicas) and
    two random draws (fleets within :data:`DRAW_REPLICA_TOKENS_CAP`), every option the model reports
    feasible meets its TTFT and TPOT percentiles in a simulation of the fleet it sized (same replicas,
    shapes, slot caps and token budget; a baseline on the general-purpose roadmap: the fleet of each generation it
    holds, custom-asic's B200s), within the module's sampling tolerance. (tests/simulation_sweep.py: the same over
    many draws.) voice-agent (a conversation cache) and agentic-coding (85 % prefix reuse) run the prompts their
    pools compute, less the cached prefix (:func:`_simulate_option`)."""
    import tco

    scenario = tco.load_scenario(name)
    checked = 0
    base, *draws = _draws(scenario, 2, seed=11)
    for values, results in [(base, evaluate(scenario.structure, base)), *(_capped(scenario, d) for d in draws)]:
        for option, ttft, tpot, unfinished in simulated_against_targets(scenario, values, results):
            assert unfinished == 0, (name, option)
            assert ttft <= 1 + TOLERANCE, (name, option, ttft)
            assert tpot <= 1 + TOLERANCE, (name, option, tpot)
            checked += 1
    assert checked > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["default", "fleet-split"])
def test_prompts_dispatched_to_one_prefill_replica_meet_the_ttft_target(name):
    """``serving.prefill_queue: dispatched``: the split's prefill pool is staffed for prompts that a router binds to
    one replica at arrival, and the simulation routes them so (join the shortest queue, each replica its own FCFS
    queue): the split meets its targets, on more prefill devices than the shared queue's (the default's: 64 GPUs in
    TP4 replicas against 54 in TP2, 2026-12-07; more replicas before, when both took TP2) and at a p99 TTFT no
    longer than the shared queue's fleet shows under the same router. The dispatched rule is the conservative one:
    in tests/prefill_routing_sweep.py (40 draws of each bundled split, seed 303) the shared sizing under this router
    ran at a median 0.49-0.92 of the TTFT target and at most 1.06, the dispatched sizing at 0.40-0.79 and at most 0.975
    (docs/model.md "Dispatched lanes")."""
    import tco

    scenario = tco.load_scenario(name)
    values = scenario.values()
    q, target = float(values["serving.percentile"]), float(values["workload.ttft_target_s"])
    split = next(option for option in scenario.structure.options if option.disaggregated)
    dispatched = dataclasses.replace(scenario.structure, prefill_queue="dispatched")
    ttft = {}
    for structure in (scenario.structure, dispatched):
        assert _feasible(evaluate(structure, values), split)
        pools = serving_pools(structure, values, split.name)[0]
        figures = pools["prefill"].figures
        devices = float(np.asarray(figures.replicas * figures.devices_per_replica).reshape(-1)[0])
        outcome = _simulate_option(structure, values, split, requests=3000, routing="dispatched")
        ttft[structure.prefill_queue] = (devices, outcome.quantile(q)[0])
        assert outcome.unfinished == 0
    assert ttft["dispatched"][0] > ttft["shared"][0]
    assert ttft["dispatched"][1] <= target * (1 + TOLERANCE)
    assert ttft["dispatched"][1] <= ttft["shared"][1]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["default", "voice-agent", "fleet-split", "custom-asic"])
def test_chat_fleets_meet_their_targets_on_the_trace_their_spread_comes_from(name):
    """The chat scenarios take their prompt-length spread (squared CV 0.79) from the first 429 requests of the Azure
    conversation trace, and the model assumes gamma lengths of that spread (tco.core.serving.sojourn). The trace is not gamma:
    it is bounded (largest 4.5x the mean) with 4 % of its prompts in a cluster at ~4,080 tokens. Fed those 429 lengths
    themselves (resampled, rescaled to the scenario's mean), every option the model reports feasible at the base
    values still meets its percentiles within the module's sampling tolerance, and a colocated option's p99 TPOT stays
    within the one the model reports (2 % for sampling; before the model counted the spread of the prefill sharing a
    request's cycles, tco.core.serving.cycles.interference_spread_s, the H100 fleets ran up to 109 % of it). Measured (2026-12-01,
    1,500 requests, the colocated options): the trace's p99 TTFT is 1.0-1.15x the one simulated with gamma lengths of
    the same spread, and up to 1.043x the TTFT the model reports (the colocated ASIC of fleet-split and custom-asic:
    0.976 s on the trace, 0.90-0.92 s on gamma lengths, the model 0.936-0.938 s, the target 1 s); the p99 TPOT is
    79-96 % of the model's and moves by at most 5 % between the two."""
    import tco

    scenario = tco.load_scenario(name)
    values = scenario.values()
    trace = [float(r["input_tokens"]) for r in data_rows("azure-llm-trace-2023-conv-first-429.csv")]
    q = float(values["serving.percentile"])
    results = evaluate(scenario.structure, values)
    checked = 0
    for option in scenario.structure.options:
        if not _feasible(results, option):
            continue
        outcome = _simulate_option(scenario.structure, values, option, requests=1500, sample=trace)
        ttft, tpot = outcome.quantile(q)
        assert outcome.unfinished == 0, (name, option.name)
        assert ttft <= float(values["workload.ttft_target_s"]) * (1 + TOLERANCE), (name, option.name, ttft)
        assert tpot <= float(values["workload.tpot_target_s"]) * (1 + TOLERANCE), (name, option.name, tpot)
        if not option.disaggregated:
            assert tpot <= float(np.asarray(results[option.name].tpot_s).reshape(-1)[0]) * 1.02, (name, option.name, tpot)
        checked += 1
    assert checked >= 3


@pytest.mark.slow
@pytest.mark.parametrize("case_name", ["mlperf50-h200x8-llama3.1-405b-server", "mlperf51-b200x8-llama3.1-405b-server",
                                       "mlperf51-b200x8-llama3.1-405b-interactive"])
def test_long_prompt_replica_meets_its_percentiles_at_the_capacity_the_model_reports(case_name):
    """The MLPerf Llama 3.1 405B server and interactive cases (9,428.6-token prompts, p99 TTFT 6 s and TPOT 175 ms,
    interactive 4.5 s and 80 ms; one replica of 8 GPUs with one prefill lane): run at the rate the model says the
    system carries within its targets (``fleet_capacity_rps``, what ``tco validate`` reports), the same replica
    simulated cycle by cycle meets both percentiles, and its p99 TTFT is within the TTFT the model reports at that
    load (``at_load``: the split and the tail bounds it was sized with): the bound is still a bound. The simulated
    prompts are the dataset's own 8,313 lengths (resampled; squared CV 0.186, the case's ``prompt_tokens_scv``), the
    model's lane the gamma lengths of that spread (tco.core.serving.sojourn). With the best
    split, Kingman's bound and the dataset's length spread at the lane the model carries 49.8 tokens/s on H200 (at
    mean lengths 78; the even split and the square-root tail alone: 18.4) where the simulation fed the dataset's
    lengths meets 6 s up to ~51-53 (docs/validation.md, "Long prompts"): this guards the queueing approximation
    against turning optimistic."""
    from tco.analysis.validation.cases import load_suite
    from tco.analysis.validation.predict import OPTION, Predictor

    suite = load_suite()
    case = next(c for c in suite.cases if c.name == case_name)
    scenario = Predictor(suite).scenario(case)
    values = scenario.values()
    pools, d, _ = serving_pools(scenario.structure, values, OPTION)
    pool = pools["colocated"]
    replicas = case.conditions.system_devices / float(pool["devices_per_replica"])
    assert replicas == 1.0 and float(pool["lanes"]) == 1.0
    rate = float(fleet_capacity_rps("colocated", pool.figures, replicas, d))
    reported = pool.at_load(dataclasses.replace(d, peak_requests_per_s=rate), replicas)
    cm = chosen_cycle_models(scenario.structure, values, OPTION)[0]["colocated"]
    sample = [float(r["input_tokens"]) for r in data_rows("llama3.1-405b-lengths.csv")]
    outcome = simulate_colocated(cm, 1, int(float(pool["slots"])), round(float(d.prompt_tokens)), round(float(d.output_tokens)),
                                 rate, float(d.token_budget_tokens), d.policy, 1, requests=1500,
                                 lengths=Lengths(float(d.prompt_tokens), sample=sample))
    ttft, tpot = outcome.quantile(0.99)
    ttft_target, tpot_target = float(d.ttft_target_s), float(d.tpot_target_s)
    assert outcome.unfinished == 0
    assert float(reported.ttft_s) <= ttft_target * (1 + 1e-9)
    assert ttft <= float(reported.ttft_s) * (1 + TOLERANCE), (case_name, rate, ttft, float(reported.ttft_s))
    assert ttft <= ttft_target * (1 + TOLERANCE) and tpot <= tpot_target * (1 + TOLERANCE), (case_name, rate, ttft, tpot)


@pytest.mark.slow
def test_the_many_draw_sweep_checks_and_reports_every_feasible_option():
    """tests/simulation_sweep.py (the claim over many draws) on one draw of voice-agent: as many checks as the options
    the model reports feasible at that draw, none failed, the median and largest ratio within the tolerance."""
    from simulation_sweep import sweep

    import tco

    scenario = tco.load_scenario("voice-agent")
    _, results = _capped(scenario, _draws(scenario, 1, seed=202)[1])
    feasible = sum(_feasible(results, o) for o in scenario.structure.options)
    found = sweep("voice-agent", 1, 202, 600)
    assert found["checks"] == feasible > 0 and found["failures"] == []
    for median, largest in (found["ttft"], found["tpot"], found["binding"]):
        assert 0.0 < median <= largest <= 1 + TOLERANCE


@pytest.mark.slow
def test_the_random_fleet_sweep_compares_the_model_with_its_simulation():
    """tests/fleet_sweep.py (the model's own p99 figures over random fleets) on three fleets: each simulated p99 within
    the tolerance of the model's, and the fleets meet their targets."""
    from fleet_sweep import sweep

    found = sweep(3, 6, 1200, echo=lambda line: None)
    assert found["over"] == []
    for key in ("ttft", "tpot", "ttft_target", "tpot_target"):
        median, largest = found[key]
        assert 0.0 < median <= largest <= 1 + TOLERANCE, key


@pytest.mark.slow
def test_the_prefill_routing_sweep_simulates_both_sizings_under_both_routings():
    """tests/prefill_routing_sweep.py on the default's base values: its split sized for a shared prefill queue and for
    dispatched prompts, each simulated with both routings, every one within the target's sampling tolerance, and the
    fleet sized for dispatched prompts no slower under the router than the shared one's."""
    from prefill_routing_sweep import sweep

    found = sweep("default", 0, 303, 1500)
    assert {key: len(v) for key, v in found.items()} == {(s, r): 1 for s in PREFILL_QUEUES
                                                         for r in PREFILL_QUEUES}
    assert all(0.0 < v[0] <= 1 + TOLERANCE for v in found.values())
    assert found["dispatched", "dispatched"][0] <= found["shared", "dispatched"][0]
