"""End-to-end numbers of the toy scenario (tests/data/toy.yaml), derived by hand."""

from __future__ import annotations

import pytest

import tco
from tco.core.evaluate import evaluate

REL = 1e-9


def test_toy_gpu_performance_and_cost(toy_scenario):
    r = evaluate(toy_scenario.structure, toy_scenario.values())["gpu"]
    perf = r.pool("colocated").performance
    # weights W = 1e9 params x 8 bits / 8 = 1e9 B; KV k = 2 x 10 layers x 1 head x 100 x 1 B = 2,000 B/token
    # replica: (1e9 + 2000 tokens x 2000 B) fits one 10 GB device -> n = 1: no data crosses devices,
    # but each of the 2 x 10 layer boundaries costs one sync latency: s0 = 2 x 10 x 1e-6 = 2e-5 s.
    assert perf.devices_per_replica == 1
    s0 = 2e-5
    # prefill of P = 1000: FLOPs = 1000 x (2 x 1e9 + 2 x 10 x 1000 x 1000) = 2.02e12 at 1e15 FLOP/s -> 2.02e-3 s;
    # memory (1e9 + 1000 x 2000) / 1e12 = 1.002e-3 s, so compute-bound; plus s0.
    assert perf.prefill_s == pytest.approx(2.02e-3 + s0, rel=REL)
    assert perf.prefill_bound == 1
    # decode: mean context C = 1000 + 1000/2 = 1500, KV per sequence per step 1500 x 2000 = 3e6 B.
    # batch limits: memory time (0.01 - 2e-5 - 1e9/1e12) / (3e6/1e12) = 2993; capacity (1e10 - 1e9) / (2000 x 2000) = 2250;
    # compute 0.01 / ((2e9 + 4 x 10 x 1000 x 1500) / 1e15) = 4854; serving stack max 256 -> B = 256.
    assert perf.batch == 256
    # step: bytes 1e9 + 256 x 3e6 = 1.768e9 at 1e12 B/s = 1.768e-3 s (compute 256 x 2.06e-6 = 5.27e-4 s), plus s0.
    step = 1.768e-3 + s0
    assert r.tpot_s == pytest.approx(step, rel=REL)
    assert perf.decode_bound == 0
    # requests/s per replica: 1 / (1000 / (1000 / 2.04e-3) + 1000 / (256 / 1.788e-3)) = 1 / 9.024375e-3
    capacity = 1.0 / (2.02e-3 + s0 + 1000 * step / 256)
    assert capacity == pytest.approx(110.8111, rel=1e-6)
    # mean 100 req/s = peak -> 1 replica, utilization 100 / 112.029
    assert r.devices == 1
    utilization = 100 / capacity
    assert r.pool("colocated").sizing.utilization == pytest.approx(utilization, rel=REL)
    # power 100 + (500 - 100) x u W; energy at PUE 1 and 0.1 USD/kWh over 8760 h; facility 0.5 kW x 10 x 12
    power_w = 100 + 400 * utilization
    energy = power_w * 8760 / 1000 * 0.1
    facility = 0.5 * 10 * 12
    # rate 0: PV = price + 5 years x (energy + facility); no residual (rv = 0 at end of the 5-year life)
    pv = 10_000 + 5 * (energy + facility)
    assert r.pv_cost_usd == pytest.approx(pv, rel=REL)
    tokens = 100 * 1000 * 8760 * 3600 * 5
    assert r.lcot_usd_per_mtok == pytest.approx(pv / tokens * 1e6, rel=REL)
    assert r.lcot_usd_per_mtok_all_tokens == pytest.approx(pv / (2 * tokens) * 1e6, rel=REL)
    assert r.tokens_per_joule == pytest.approx(100 * 1000 / power_w, rel=REL)


def test_toy_sram_spills_and_pays_for_shifts(toy_scenario):
    results = evaluate(toy_scenario.structure, toy_scenario.values())
    r, base = results["sram"], results["gpu"]
    # two tiers: 1 GB SRAM at 10 TB/s, then HBM at 1 TB/s. Batch 256 reads 1.768e9 B per step:
    # 1e9 B from SRAM (1e-4 s) and 0.768e9 B spilled to HBM (7.68e-4 s) -> 8.68e-4 s, plus 2e-5 s of layer syncs.
    assert r.spilled_bytes == pytest.approx(0.768e9, rel=REL)
    assert r.tpot_s == pytest.approx(1e-4 + 7.68e-4 + 2e-5, rel=REL)
    # specialized: re-authoring 1000 USD per shift at one shift per half-life (2 yr) -> 500 USD/yr x 5 yr
    assert r.pv_reauthoring_usd == pytest.approx(2500, rel=REL)
    # workload shift: served share in year y is s_y + (1 - s_y) x 0.5 with s_y = H/ln2 (2^-(y-1)/H - 2^-y/H);
    # the lost share (1 - s_y) x 0.5 of the output is bought at the baseline's cost per token.
    import math

    lost = sum((1 - 2 / math.log(2) * (2 ** (-(y - 1) / 2) - 2 ** (-y / 2))) * 0.5 for y in range(1, 6))
    exposure = 100 * 1000 * 8760 * 3600 * base.lcot_usd_per_mtok / 1e6
    assert r.pv_workload_shift_usd == pytest.approx(lost * exposure, rel=REL)


def test_breakeven_matches_direct_evaluation(toy_scenario):
    [b] = tco.breakeven(toy_scenario, "devices.toy-sram.price_usd", 1000, 20000)
    assert b.status == "crosses" and not b.wins_above  # cheaper chips win
    at = toy_scenario.with_values({"devices.toy-sram.price_usd": b.value})
    c = tco.compare(at)
    assert c.options.loc["sram", "lcot_usd_per_mtok"] == pytest.approx(c.options.loc["gpu", "lcot_usd_per_mtok"], rel=1e-9)
