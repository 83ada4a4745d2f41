"""End-to-end numbers of the toy scenario (tests/data/toy.yaml), derived by hand."""

from __future__ import annotations

import math

import pytest

import tco
from tco.core.evaluate import evaluate
from tco.core.serving import queueing

REL = 1e-9


def _staff(load, service, slack, epsilon):
    """Square-root staffing ``c = a + beta sqrt(a) + 1/(1 + u)`` with ``beta = sqrt(K^2 + 2 ln(1/(2 eps))) - K``,
    ``u = 2 slack / S``, ``K = u sqrt(a)`` (deterministic service: c_s^2 = 0, so k = 2); tco.core.serving.queueing."""
    u = 2.0 * slack / service
    k_ = u * math.sqrt(load)
    beta = math.sqrt(k_ * k_ + 2.0 * math.log(0.5 / epsilon)) - k_
    return load + beta * math.sqrt(load) + 1.0 / (1.0 + u)


def test_toy_gpu_performance_and_cost(toy_scenario):
    """The toy GPU, one device per replica (pinned), chunked prefill, p99 targets, no overlap anywhere.

    Model: W = 1e9 B (8-bit), k = 2 x 10 x 1 x 100 x 1 B = 2,000 B/token; context C = 1000 + 1000/2 = 1500.
    Decode cycle ``t_d(B) = W/BW + s0 + B (2A/F + C k/BW + 4 L d C/F)`` =
    ``1e-3 + 2e-5 + B (2e-6 + 3e-6 + 6e-8)`` = ``1.02e-3 + 5.06e-6 B`` s (s0 = 2 x 10 layers x 1 us; TP1 sends nothing).
    Prefill token in a chunk (budget 8192 > P, so written once): ``chi = 2A/F + k/BW + 2 L d P/F``
    = 2e-6 + 2e-9 + 2e-8 = 2.022e-6 s. User-seen cycle ``t(B) = t_d(B) + (P/O) chi B = 1.02e-3 + 7.082e-6 B``.
    Slot cap: TPOT 10 ms allows (0.01 - 1.02e-3)/7.082e-6 = 1268, KV memory (1e10 - 1e9)/(2000 x 2000) = 2250,
    budget 8192/2 = 4096, batch limit 256 -> c_s = 256; cycle at the cap 2.832992 ms, decode-only 2.31536 ms.
    Prefill once started: one cycle + ``P chi`` = 2.31536 + 2.022 = 4.33736 ms. With prompts waiting the one lane
    is busy ``P chi + (P / tau_free) t_d(c_s)`` per prompt, ``tau_free = 8192 - 256 = 7936``:
    2.022 + 0.126008 x 2.31536 = 2.313754 ms (the decode step of each cycle that carries its chunk), so the
    replica prefills 1000 / 2.313754e-3 = 432,198 tokens/s.
    Slot residence D = 1000 x 2.832992 ms + 4.33736 ms = 2.83733 s. TTFT slack 1 - 4.33736e-3 - 2.832992e-3 s;
    half to each queue at epsilon = 0.005 the slots would need 296.86 (1.1596 replicas) and the lanes 0.2444 (square
    root staffing alone). The split search (0.5, then 0.1 and 0.02 where the slots bind) gives the lanes 0.02 of
    the slack and epsilon and the slots 0.98: 1.1327 replicas by the slots (lanes 0.396, Kingman's bound at
    ``x = 2.3138e-3 ln(1/0.0002) / (0.02 x 0.99283) = 0.99``, ``rho = x / (e^x - 1) = 0.584``: 0.2314 / 0.584) -> 2.
    """
    r = evaluate(toy_scenario.structure, toy_scenario.values())["gpu"]
    perf = r.pool("colocated").performance
    assert perf.devices_per_replica == 1 and perf.tensor_parallel == 1
    t_cap = 1.02e-3 + 256 * 7.082e-6
    t_d = 1.02e-3 + 256 * 5.06e-6
    latency = t_d + 1000 * 2.022e-6
    work = 1000 * 2.022e-6 + 1000 / (8192 - 256) * t_d
    assert perf.slots == 256
    assert perf.prefill_s == pytest.approx(latency, rel=REL)
    assert perf.prefill_tokens_per_s == pytest.approx(1000 / work, rel=REL) and 1000 / work == pytest.approx(432198.06, rel=1e-7)
    residence = 1000 * t_cap + latency
    slack = 1.0 - latency - t_cap
    slots_needed = _staff(100 * residence, residence, slack / 2, 0.005)
    lanes_needed = _staff(100 * work, work, slack / 2, 0.005)
    assert slots_needed / 256 == pytest.approx(1.159616, rel=1e-5) and lanes_needed == pytest.approx(0.244432, rel=1e-5)
    best = _staff(100 * residence, residence, 0.98 * slack, 0.98 * 0.01) / 256
    kingman_x = work * math.log(1 / (0.02 * 0.01)) / (0.02 * slack)
    assert best == pytest.approx(1.132725, rel=1e-5) and 100 * work / (kingman_x / math.expm1(kingman_x)) < best * 256
    assert r.pool("colocated").sizing.replicas == 2 and r.devices == 2
    # occupancy at peak (50 req/s per replica): least fixed point of B = 50 x 1000 x t(B) = 51 / (1 - 0.3541);
    # the p99 of what a request sees: 1 + B + z_0.99 sqrt(2B/3), z from A&S 26.2.23
    occupancy = 5e4 * 1.02e-3 / (1 - 5e4 * 7.082e-6)
    assert perf.batch == pytest.approx(occupancy, rel=REL)
    z = float(queueing.normal_quantile(0.99))
    assert r.tpot_s == pytest.approx(1.02e-3 + 7.082e-6 * (1 + occupancy + z * math.sqrt(2 * occupancy / 3)), rel=REL)
    # TTFT: one cycle to join, the prefill, and the waits at the split sized (lanes 0.02 of the slack and epsilon).
    # Slots: beta = (512 - 283.73 - ~0.7)/sqrt(283.73) = 13.5, no wait. Lanes: 2 lanes at 0.2314 Erlangs, sizing slack
    # 0.02 x 0.99283 = 0.0198566 s, u = 2 x 0.0198566 / 2.3138e-3 = 17.164 so delta = 0.05505,
    # beta = (2 - 0.2314 - 0.05505)/sqrt(0.2314) = 3.5622, L = ln(0.5/0.0002) = 7.824. The lanes are dispatched
    # (a router sends a prompt at once to one replica: tco.core.serving.queueing), so beyond one spare lane
    # (sqrt(a) beta = 1.714) the conditional wait decays at k / S, not k sqrt(a) beta / S:
    # w = (L - beta^2/2) S / (2 min(sqrt(a) beta, 1)) = 1.4793 x 2.3138e-3 / 2 = 1.7114 ms (pooled lanes: 0.9988 ms);
    # Kingman's bound at rho = 0.1157 per lane (x = 3.42, w = S ln(5000) / x = 5.8 ms) is longer, so the square-root
    # wait stands.
    load = 100 * work
    delta = 1 / (1 + 2 * 0.02 * slack / work)
    beta = (2 - load - delta) / math.sqrt(load)
    assert math.sqrt(load) * beta > 1.0
    wait = (math.log(0.5 / 0.0002) - beta * beta / 2) * work / 2
    assert wait == pytest.approx(1.7114e-3, rel=1e-3)
    assert r.queue_wait_s == pytest.approx(wait, rel=1e-9)
    assert r.ttft_s == pytest.approx(t_cap + latency + wait, rel=REL)
    # utilization: mean load over the slots' capacity, 100 / (2 x 256 / D)
    utilization = 100 / (2 * 256 / residence)
    assert r.pool("colocated").sizing.utilization == pytest.approx(utilization, rel=REL)
    # power 2 devices x (100 + 400 u) W; energy at PUE 1 and 0.1 USD/kWh over 8760 h; facility 2 x 0.5 kW x 10 x 12
    power_w = 2 * (100 + 400 * utilization)
    energy = power_w * 8760 / 1000 * 0.1
    facility = 2 * 0.5 * 10 * 12
    # rate 0: PV = 2 x price + 5 years x (energy + facility); no residual (rv = 0 at end of the 5-year life)
    pv = 2 * 10_000 + 5 * (energy + facility)
    assert r.pv_cost_usd == pytest.approx(pv, rel=REL)
    tokens = 100 * 1000 * 8760 * 3600 * 5
    assert r.lcot_usd_per_mtok == pytest.approx(pv / tokens * 1e6, rel=REL)
    assert r.lcot_usd_per_mtok_all_tokens == pytest.approx(pv / (2 * tokens) * 1e6, rel=REL)
    assert r.tokens_per_joule == pytest.approx(100 * 1000 / power_w, rel=REL)


def test_toy_sram_spills_and_pays_for_shifts(toy_scenario):
    """Two tiers: 1 GB SRAM at 10 TB/s, then HBM at 1 TB/s; weights fill the SRAM, so every KV byte is read
    from HBM. At the slot cap (256 sequences, 256 prefill tokens per cycle on average) a cycle reads
    1e9 B of weights + 256 x 1500 x 2000 B of KV + 256 x 2000 B of new prefill KV = 1.768512e9 B:
    0.768512e9 B beyond the SRAM."""
    results = evaluate(toy_scenario.structure, toy_scenario.values())
    r, base = results["sram"], results["gpu"]
    assert r.pool("colocated").performance.slots == 256
    assert r.spilled_bytes == pytest.approx(0.768512e9, rel=REL)
    # specialized: re-authoring 1000 USD per shift at one shift per half-life (2 yr) -> 500 USD/yr x 5 yr
    assert r.pv_reauthoring_usd == pytest.approx(2500, rel=REL)
    # workload shift: served share in year y is s_y + (1 - s_y) x 0.5 with s_y = H/ln2 (2^-(y-1)/H - 2^-y/H);
    # the lost share (1 - s_y) x 0.5 of the output is bought at the baseline's cost per token.
    lost = sum((1 - 2 / math.log(2) * (2 ** (-(y - 1) / 2) - 2 ** (-y / 2))) * 0.5 for y in range(1, 6))
    exposure = 100 * 1000 * 8760 * 3600 * base.lcot_usd_per_mtok / 1e6
    assert r.pv_workload_shift_usd == pytest.approx(lost * exposure, rel=REL)


def test_breakeven_matches_direct_evaluation(toy_scenario):
    [b] = tco.breakeven(toy_scenario, "devices.toy-sram.price_usd", 1000, 20000)
    assert b.status == "crosses" and not b.wins_above  # cheaper chips win
    at = toy_scenario.with_values({"devices.toy-sram.price_usd": b.value})
    c = tco.compare(at)
    assert c.options.loc["sram", "lcot_usd_per_mtok"] == pytest.approx(c.options.loc["gpu", "lcot_usd_per_mtok"], rel=1e-9)
