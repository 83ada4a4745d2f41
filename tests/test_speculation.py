"""Speculative decoding (tco.core.serving.speculation) and prefix reuse (tco.core.serving.prefix_cache): invariants of
the core's vectorized functions on random valid inputs (hypothesis), and one case of each derived by hand.

The properties evaluate two draws at once (the core's arrays): the same inputs but for the one field that moves.
"""

from __future__ import annotations

import copy
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tco
from tco.core import names as named
from tco.core.evaluate import _speculation, device_shape, evaluate, option_fleet
from tco.core.money.costs import link_plan
from tco.core.names import speculation_param
from tco.core.serving import queueing
from tco.core.serving.cycles import cycle_model
from tco.core.serving.prefix_cache import TIERS
from tco.core.serving.speculation import Speculation, acceptance_rate_for, accepted_tokens_per_step
from tco.core.workload import Workload
from tco.inputs.loading import scenario_from_dict
from tco.studies.sampling import draw_chunk, sampling_plan

DATA = Path(__file__).parent / "data"
REL = 1e-9
SPECULATING = tco.load_scenario("reasoning-chat")
#: and its fleets sized continuously (whole replicas make a cost step either way as the shape search switches)
SPECULATING_CONTINUOUS = scenario_from_dict({**SPECULATING.to_dict(), "fleet": {"sizing": "continuous"}})
#: agentic-coding with its prefix cache in each tier
REUSING = {tier: scenario_from_dict({**(d := copy.deepcopy(tco.load_scenario("agentic-coding").to_dict())),
                                     "serving": {**d.get("serving", {}), "prefix_cache_tier": tier}})
           for tier in TIERS}
FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HIT = named.workload.prefix_hit_fraction


def _drawn(draw, scenario) -> dict:
    """The scenario's values with every uncertain parameter drawn inside [low, high]."""
    values = scenario.values()
    for p in scenario.params.uncertain():
        x = draw(st.floats(p.low, p.high, allow_nan=False))
        values[p.name] = float(round(x)) if p.field.integer else x
    return values


def _feasible(result) -> np.ndarray:
    return np.broadcast_to(np.asarray(result.feasible) > 0, (2,))


def _pair(x) -> np.ndarray:
    return np.broadcast_to(np.asarray(x, float), (2,))


# --- prefix reuse ------------------------------------------------------------------------------------------------


@pytest.mark.slow  # ~0.1-0.5 s of CPU per example (two sizings of four options, bisected hit fractions)
@FAST
@given(st.data())
def test_more_prefix_hits_never_raise_cost_per_token(data):
    """With everything else fixed, a higher asked hit fraction never raises an option's cost per output token, never
    loses it a latency target and never lowers the hit fraction its pools achieve, whatever the cache's tier.

    The whole LCOT is compared for the baseline and every option whose cost does not lean on the baseline's cost split.
    A split option's workload-shift exposure is priced at the baseline's prefill or decode share of cost
    (tco.core.money.costs.shift_exposure_usd_per_year), and that share moves with the baseline's replica shape: on
    agentic-coding (SSD tier) at h = 0.6975 -> 0.72 the baseline goes TP8 x 44 -> TP4 x 83, cheaper, but its decode
    share 0.60 -> 0.75, so the split's shift exposure rises 17 % while all its own lines fall. For those options the
    property is on what the option itself pays (PV cost less the shift exposure).
    """
    tier = data.draw(st.sampled_from(TIERS))
    scenario = REUSING[tier]
    values = _drawn(data.draw, scenario)
    low = data.draw(st.floats(0.0, 0.98))
    high = data.draw(st.floats(low, 0.99))
    values[HIT] = np.array([low, high])
    results = evaluate(scenario.structure, values)
    baseline_feasible = _feasible(results[scenario.structure.baseline]).all()
    for option in scenario.structure.options:
        r = results[option.name]
        feasible = _feasible(r)
        assert not (feasible[0] and not feasible[1]), (tier, option.name, low, high)
        for pool in option.pools:
            achieved = _pair(r.pool(pool.role).performance.prefix_hit_fraction)
            assert achieved[1] >= achieved[0] - 1e-12 and np.all(achieved <= [low, high]), (option.name, achieved)
        if not (feasible.all() and baseline_feasible):
            continue
        own = _pair(r.pv_cost_usd) - _pair(r.pv_workload_shift_usd)
        assert own[1] <= own[0] * (1 + 1e-9), (tier, option.name, low, high, own)
        if not (option.disaggregated and option.specialized):
            cost = _pair(r.lcot_usd_per_mtok)
            assert cost[1] <= cost[0] * (1 + 1e-9), (tier, option.name, low, high, cost)


def test_a_device_with_sram_only_holds_no_prefix():
    """issue 48: 'an SRAM-only device holds what its SRAM holds — say so in the output ("cache hit rate on groq-lpu:
    0 %")'; the split's H100 prefill pool keeps its cache, its LPU decode pool none (the whole KV crosses the link)."""
    results = evaluate(REUSING["hbm"].structure, REUSING["hbm"].values())
    assert float(results["groq"].pool("colocated").performance.prefix_hit_fraction) == 0.0
    split = results["h100-prefill+groq-decode"]
    assert float(split.pool("decode").performance.prefix_hit_fraction) == 0.0
    assert float(split.pool("prefill").performance.prefix_hit_fraction) > 0.5
    assert float(results["h100"].pool("colocated").performance.prefix_hit_fraction) == pytest.approx(0.85)


# --- speculative decoding ----------------------------------------------------------------------------------------


@FAST
@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.integers(1, 16))
def test_accepted_tokens_per_step_rise_with_the_acceptance_rate(a, b, k):
    """``tau = sum_{i=0..k} a^i``: between 1 and ``k + 1``, never lower at a higher acceptance rate (vectorized)."""
    low, high = sorted((a, b))
    tau = accepted_tokens_per_step(np.array([low, high]), k)
    assert 1.0 <= tau[0] <= tau[1] * (1 + 1e-12) and tau[1] <= k + 1 + 1e-9
    assert tau[0] == pytest.approx(sum(low ** i for i in range(k + 1)), rel=1e-9)


@FAST
@given(st.floats(0.0, 1.0), st.integers(1, 16))
def test_the_acceptance_rate_for_a_published_acceptance_length_gives_it_back(a, k):
    """:func:`acceptance_rate_for` inverts ``tau(a)`` in ``a`` (vectorized): ``tau(acceptance_rate_for(tau(a), k)) =
    tau(a)``. By hand, TensorRT-LLM's MTP3 on DeepSeek-R1 accepts 2.82 tokens a step [trtllm-mtp-b200-2025]:
    ``1 + a + a^2 + a^3 = 2.82`` at ``a = 0.7701`` (1 + 0.7701 + 0.5931 + 0.4568 = 2.8200); MTP1's 1.92 at 0.92."""
    tau = accepted_tokens_per_step(np.array([a, 0.5 * a]), k)
    assert accepted_tokens_per_step(acceptance_rate_for(tau, k), k) == pytest.approx(tau, rel=1e-9, abs=1e-12)
    assert float(acceptance_rate_for(2.82, 3)) == pytest.approx(0.7701, abs=5e-5)
    assert float(acceptance_rate_for(1.92, 1)) == pytest.approx(0.92, abs=1e-12)


def _cycles(values, option_name, speculation):
    """Every shape's cycle model of the option's decoding pool, without (None) or with ``speculation``."""
    w = Workload(SPECULATING.structure, values)
    option = SPECULATING.structure.option(option_name)
    pool = option.pools[-1]
    demand = w.demand if speculation is None else replace(w.demand, speculation=speculation)
    return [cycle_model(shape, w.model, device_shape(option, pool, w), demand, pool.role) for shape in pool.shapes]


@pytest.mark.slow  # two sizings of six options per example
@FAST
@given(st.data())
def test_a_higher_acceptance_rate_never_slows_decode(data):
    """A higher acceptance rate never slows decode: at any replica shape and batch the time per output token,
    the step over ``tau``, is never longer (the step itself does not depend on the rate, ``tau`` rises); and the
    fleet sized for it is never costlier nor loses a target.

    (The TPOT the sized fleet reports may rise: with more tokens per step the search may run a larger batch, still
    within the target, for a lower cost. That is a trade the model is asked to make, not a slower decode.) The fleets
    are sized continuously, as in tests/test_properties.py: with whole replicas the shape search's switches make the
    cost step the other way by a little (found here: the same 64 H100s as 16 TP4 replicas at a = 0.891 and 32 TP2 at
    0.906, whose power is 0.03 % higher: +0.006 % per token; README, Known limitations).
    """
    values = _drawn(data.draw, SPECULATING)
    pairs = {}
    for option in SPECULATING.structure.options:
        if option.speculation:
            name = speculation_param(option.name, "acceptance_rate")
            low = data.draw(st.floats(0.0, 0.99))
            pairs[option.name] = (low, data.draw(st.floats(low, 0.99)))
            values[name] = np.array(pairs[option.name])
    results = evaluate(SPECULATING_CONTINUOUS.structure, values)
    batch = np.array([1.0, 8.0, 64.0, 512.0])
    for option_name, rates in pairs.items():
        r = results[option_name]
        feasible = _feasible(r)
        assert not (feasible[0] and not feasible[1]), (option_name, rates)
        if feasible.all():
            cost = _pair(r.lcot_usd_per_mtok)
            assert cost[1] <= cost[0] * (1 + 1e-9), (option_name, rates, cost)
        tau = _pair(r.pool(SPECULATING.structure.option(option_name).pools[-1].role).performance.accepted_tokens_per_step)
        assert tau[1] >= tau[0] * (1 - 1e-12)
        one = {k: values[speculation_param(option_name, k)] for k in ("draft_tokens", "draft_cost_fraction")}
        slow, fast = (_cycles(values, option_name, Speculation(acceptance_rate=a, **one)) for a in rates)
        for cm_slow, cm_fast in zip(slow, fast, strict=True):
            step_slow, step_fast = cm_slow.cycle_s(batch, 0.0), cm_fast.cycle_s(batch, 0.0)
            np.testing.assert_array_equal(step_slow, step_fast)
            assert np.all(step_fast / tau[1] <= step_slow / tau[0] * (1 + 1e-12))


@FAST
@given(st.data())
def test_speculation_never_helps_a_compute_bound_step(data):
    """Speculation never raises a compute-bound step's throughput: at the same shape and batch ``B`` the gain
    ``tau t(B) / t_s(B)`` is at most 1 once the step's arithmetic is all but the whole of it.

    With every overlap 0 (the sourced defaults of memory/compute and phase overlap; the step adds its terms) the step
    is ``t = A + N``: ``A`` the arithmetic and per-token collectives, which the verification and draft multiply by
    ``s = k + 1 + k f``, ``N`` the weight and KV reads and fixed latencies, read ``r = 1 + k f`` times:
    ``t_s = s A + r N`` (checked first). The gain ``tau (A + N) / (s A + r N)`` is at most 1 exactly when the share of
    ``N`` is at most ``(s - tau) / (s - r)``; the property is asserted on every batch where the model calls the step
    compute-bound and that holds, and at a batch large enough for it (the gain tends to ``tau / s <= 1``).

    "Compute-bound" alone (arithmetic the largest term) is not enough, and the statement in that form is wrong for
    this model, rightly: a step of 58 ms arithmetic, 12 ms weight read and 10 ms KV read (Qwen3 32B, TP1, B = 1024,
    128-token prompts and outputs) is labelled compute-bound, yet EAGLE at k = 3, a = 0.99 verifies 3.94 tokens per
    sequence for 4 times the arithmetic and one weight read: 1.26x the tokens per second. The weight read is paid
    once per step however many tokens it carries; only a step whose time is (nearly) all arithmetic gains nothing.
    """
    values = SPECULATING.values()
    for key in ("memory_compute_overlap", "phase_overlap", "comm_overlap"):
        values[named.serving.name(key)] = 0.0
    values[named.workload.prompt_tokens] = data.draw(st.floats(16.0, 4096.0))
    values[named.workload.output_tokens] = data.draw(st.floats(16.0, 4096.0))
    option = data.draw(st.sampled_from(["h100-eagle3", "groq-eagle3"]))
    k = float(data.draw(st.integers(1, 8)))
    spec = Speculation(draft_tokens=k, acceptance_rate=data.draw(st.floats(0.0, 1.0)),
                       draft_cost_fraction=data.draw(st.floats(0.0, 0.2)))
    s, r, tau = spec.token_passes, spec.weight_reads, spec.tokens_per_step
    batch = np.array([1.0, 16.0, 256.0, 4096.0, 65536.0, 1e7])
    for plain, speculating in zip(_cycles(values, option, None), _cycles(values, option, spec), strict=True):
        weight_memory, weight_compute, kv_memory, kv_compute, sync = plain.terms_s(batch, 0.0)
        fixed = weight_memory + kv_memory + plain.sync_fixed_s
        arithmetic = weight_compute + kv_compute + (sync - plain.sync_fixed_s)
        t, t_s = plain.cycle_s(batch, 0.0), speculating.cycle_s(batch, 0.0)
        np.testing.assert_allclose(t, arithmetic + fixed, rtol=1e-12)
        np.testing.assert_allclose(t_s, s * arithmetic + r * fixed, rtol=1e-12)
        gain = tau * t / t_s
        code, _ = plain.bound_and_spill(batch, 0.0)
        bound = (np.asarray(code) == 1) & (fixed / t <= (s - tau) / (s - r) * (1 - 1e-9) if s > r else True)
        assert np.all(gain[bound] <= 1.0 + 1e-12), (option, spec, batch[bound], gain[bound])
        assert gain[-1] <= 1.0 + 1e-12 or fixed[-1] / t[-1] > (s - tau) / (s - r) * (1 - 1e-9)


# --- derived by hand (the toy scenario, tests/data/toy.yaml) -----------------------------------------------------


def _toy(**changes):
    data = yaml.safe_load((DATA / "toy.yaml").read_text())
    for path, value in changes.items():
        node = data
        *parents, leaf = path.split("/")
        for key in parents:
            node = node.setdefault(key, {}) if isinstance(node, dict) else node[int(key)]
        node[leaf] = value
    return scenario_from_dict(data)


def test_prefill_computes_the_uncached_tokens_by_hand():
    """The toy GPU (tests/test_hand_derived.py) with half of each prompt a cached prefix in HBM: ``h = 0.5``,
    ``T = 1 s``.

    Cache: a quarter of HBM, ``c = 0.25 x 1e10 = 2.5e9 B`` per device; working set ``lambda T h P k = 100 x 1 x 500 x
    2,000 = 1e8 B``: one device holds it, ``h_a = h = 0.5`` (on the 1/128 grid), so ``H = 500``, ``P_c = P - H = 500``.
    Prefill token in a chunk (``P_c = 500 < 8192``, no re-read of earlier chunks; the prefix read once per chunk,
    ``H / P_c = 1`` copy per computed token, ``kv factor 1 + 1 = 2``; attention over ``P_c + 2 H = 1,500``):
    ``chi = 2A/F + 2 k/BW + 2 L d (P_c + 2H)/F = 2e-6 + 4e-9 + 2 x 10 x 1000 x 1500 / 1e15 = 2e-6 + 4e-9 + 3e-8 =
    2.034e-6 s``. The decode cycle is the toy's (context ``P + O/2 = 1,500`` whole): ``t_d(B) = 1.02e-3 + 5.06e-6 B``;
    the slot cap stays 256 (TPOT: ``t(B) = t_d(B) + (P_c / O) chi B = 1.02e-3 + 6.077e-6 B`` allows 1,477; KV memory
    ``(0.75e10 - 1e9) / (2000 x 2000) = 1,625``; budget ``8192 / 1.5 = 5,461``; batch limit 256), ``t_d(256) =
    2.31536 ms``. Prefill once started: ``t_d(256) + P_c chi = 2.31536 + 500 x 2.034e-3 = 3.33236 ms`` (the toy's
    4.33736 ms without the cache). With prompts waiting the lane works ``P_c chi + (P_c / 7,936) t_d(256) = 1.017 +
    0.063004 x 2.31536 = 1.162877 ms`` per prompt: ``500 / 1.162877e-3 = 429,968`` computed tokens per second.
    """
    toy = _toy(**{"workload/prefix_hit_fraction": 0.5, "workload/prefix_reuse_interval_s": 1.0})
    assert toy.values()[named.serving.prefix_cache_hbm_fraction] == 0.25
    perf = evaluate(toy.structure, toy.values())["gpu"].pool("colocated").performance
    assert float(perf.prefix_hit_fraction) == 0.5
    assert perf.slots == 256
    t_d = 1.02e-3 + 256 * 5.06e-6
    chi = 2e-6 + 2 * 2000 / 1e12 + 2 * 10 * 1000 * (500 + 2 * 500) / 1e15
    assert chi == pytest.approx(2.034e-6, rel=1e-12)
    assert perf.prefill_s == pytest.approx(t_d + 500 * chi, rel=REL) and t_d + 500 * chi == pytest.approx(3.33236e-3, rel=1e-6)
    work = 500 * chi + 500 / (8192 - 256) * t_d
    assert perf.prefill_tokens_per_s == pytest.approx(500 / work, rel=REL) and 500 / work == pytest.approx(429968, rel=1e-5)


def test_time_per_output_token_is_the_step_over_tau_by_hand():
    """The toy GPU speculating: ``k = 2`` drafted tokens, acceptance ``a = 0.5``, a free draft (``f = 0``).

    ``tau = 1 + 0.5 + 0.25 = 1.75`` tokens per step; ``s = k + 1 + k f = 3`` token passes, ``r = 1 + k f = 1`` read.
    Decode cycle (the toy's terms, tests/test_hand_derived.py): ``t_d(B) = r (W/BW + s0) + B (s 2A/F + r C k/BW +
    s 4 L d C/F) = 1.02e-3 + B (3 x 2e-6 + 3e-6 + 3 x 6e-8) = 1.02e-3 + 9.18e-6 B``. A request takes ``O / tau = 571.43``
    steps, so ``P / (O / tau) = 1.75`` prompt tokens ride per sequence and step: ``t(B) = t_d(B) + 1.75 chi B =
    1.02e-3 + (9.18e-6 + 1.75 x 2.022e-6) B = 1.02e-3 + 12.7185e-6 B``. Slot cap 256 (the step may take ``tau
    T_tpot = 17.5 ms``: 1,296; KV 2,250; budget ``8192 / (k + 1 + 1.75) = 1,725``; batch limit 256). The core's
    staffing (checked for the plain toy in tests/test_hand_derived.py) keeps one replica (two without speculation),
    which sees ``g = 100 x 571.43 = 57,143`` sequence-steps per second; occupancy ``B = g t(B)``: ``B = 57,143 x
    1.02e-3 / (1 - 57,143 x 12.7185e-6) = 58.286 / 0.27323 = 213.32``. The p99 step is ``t(1 + B + z sqrt(2B/3))``
    (z = 2.3263, A&S 26.2.23): ``t(1 + 213.32 + 2.3263 x 11.925) = t(242.06) = 1.02e-3 + 12.7185e-6 x 242.06 =
    4.0987 ms``, and TPOT = step / tau = ``4.0987 / 1.75 = 2.3421 ms``: a step longer than the plain toy's (its
    batch of 91 per replica sees 1.78 ms) over 1.75 tokens.
    """
    toy = _toy(**{"options/0/speculation": {"method": "eagle", "draft_tokens": 2, "acceptance_rate": 0.5,
                                            "draft_cost_fraction": 0.0}})
    values = toy.values()
    w = Workload(toy.structure, values)
    spec = _speculation(toy.structure.option("gpu"), w)
    assert (spec.tokens_per_step, spec.token_passes, spec.weight_reads) == (1.75, 3.0, 1.0)
    r = evaluate(toy.structure, values)["gpu"]
    perf = r.pool("colocated").performance
    assert float(perf.accepted_tokens_per_step) == 1.75 and perf.slots == 256
    assert r.pool("colocated").sizing.replicas == 1
    slope = 9.18e-6 + 1.75 * 2.022e-6
    gain = 100 * 1000 / 1.75
    occupancy = gain * 1.02e-3 / (1 - gain * slope)
    assert perf.batch == pytest.approx(occupancy, rel=REL) and occupancy == pytest.approx(213.32, rel=1e-4)
    z = float(queueing.normal_quantile(0.99))
    step = 1.02e-3 + slope * (1 + occupancy + z * math.sqrt(2 * occupancy / 3))
    assert step == pytest.approx(4.0987e-3, rel=1e-4)
    assert r.tpot_s == pytest.approx(step / 1.75, rel=REL)


@pytest.mark.slow  # over a second of CPU (measured 2026-12-07): make test only
@pytest.mark.parametrize("pick", ["random", "ended-early"])
def test_the_prefix_cache_solve_answers_each_draw_as_if_it_were_alone(pick):
    """The hit solve walks its grid for every draw at once: a draw whose search ended early is sized at its held step
    while the others go on (its own step may pass the asked hits, which the sizing must never see). "ended-early":
    draws 16,942 and 17,328 of 20,000 (seed 3, every uncertain input of agentic-coding), the pair to which delta
    debugging reduced a crash of an earlier version of the solve on the 20,000 ('bincount: negative elements');
    "random": 60 draws (seed 11). Evaluated together they equal each draw evaluated alone (cost per token and devices,
    rtol 1e-12)."""
    scenario = tco.load_scenario("agentic-coding")
    values = scenario.values()
    if pick == "random":
        draws = draw_chunk(sampling_plan(scenario), 11, 0, 60)
    else:
        draws = {name: x[[16942, 17328]] for name, x in draw_chunk(sampling_plan(scenario), 3, 0, 20_000).items()}
    n = len(next(iter(draws.values())))
    with np.errstate(all="ignore"):
        together = evaluate(scenario.structure, values | draws)
        for i in range(n):
            alone = evaluate(scenario.structure, values | {name: x[i] for name, x in draws.items()})
            for option, result in alone.items():
                np.testing.assert_allclose(np.broadcast_to(together[option].lcot_usd_per_mtok, (n,))[i],
                                           result.lcot_usd_per_mtok, rtol=1e-12)
                np.testing.assert_array_equal(np.broadcast_to(together[option].devices, (n,))[i], result.devices)


def test_the_kv_link_is_bought_for_what_the_decode_pools_cache_lacks():
    """A split whose decode pool keeps a prefix cache sends over the KV link only the prompt tokens that cache lacks, and
    the link's purchase plan is sized on that traffic, as the link ports are (the plan read the whole prompt until
    2026-12-07: 4 ports bought where 1 serves). tests/data/workbook-prefix.yaml, H100 prefill + H200 decode: the
    H200 fleet holds the asked 95.3125 % (61/64) of each 41,143-token prompt, so 41,143 x 3/64 = 1,928.58 tokens of
    163,840 B (Llama 3.1 70B at FP8: 2 x 80 layers x 8 KV heads x 128 x 1 B) cross per request: 3.1598e8 B, at the
    peak 12 x 2 = 24 req/s over ib-400g's 50 GB/s, 0.15167 ports (the whole prompt: 3.2357)."""
    scenario = tco.load_scenario(DATA / "workbook-prefix.yaml")
    w = Workload(scenario.structure, scenario.values())
    fleet = option_fleet(scenario.structure.option("h100-prefill+h200-decode"), w)
    assert float(fleet.performance["decode"].prefix_hit_fraction) == 61 / 64
    sent_bytes = 41143 * 3 / 64 * 2 * 80 * 8 * 128
    assert float(fleet.size.kv_bytes_per_request) == pytest.approx(sent_bytes, rel=REL)
    (ports,) = link_plan([fleet], w).peak_replicas
    assert float(ports) == pytest.approx(24 * sent_bytes / 50e9, rel=REL)
    assert float(fleet.size.link_ports) == 1.0
