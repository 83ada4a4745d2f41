"""Core formulas against values derived by hand or taken from publications."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tco.core.money import finance, lifecycle, nre
from tco.core.serving import llm, parallelism, roofline
from tco.core.serving.steps import CycleModel


def test_kv_bytes_llama_70b_bf16():
    # meta-llama sku_list: 80 layers, 8 KV heads, head dim 128; BF16 = 16 bits:
    # 2 x 80 x 8 x 128 x 2 B = 327,680 B per token ([llama-models-sku-list] in docs/sources.md)
    assert llm.kv_bytes_per_token(80, 8, 128, 16) == 327_680


def test_kv_bytes_deepseek_v3_latent():
    # MLA caches 61 x (512 + 64) = 35,136 elements per token; at BF16 70,272 B
    assert llm.latent_kv_bytes_per_token(61 * (512 + 64), 16) == 70_272


def test_moe_weights_read_grow_with_batch_to_total():
    """The engine's weight read (:meth:`tco.core.serving.steps.CycleModel.weight_read_bytes`, which the workbook
    mirrors), by hand.

    Mixtral-like at 1 B per weight: total 46.7e9, active 12.9e9, 8 experts, 2 per token, so one routed expert holds
    e = (46.7 - 12.9)/6 = 5.633e9 parameters; the fixed read is active - k e = 12.9e9 - 2e and each token touches
    k e = 2e more, up to the stored total: T = 1 -> 12.9e9; T = 2 -> 12.9e9 + 2e; T = 4 -> 12.9e9 + 6e = 46.7e9 (all
    experts); T = 100 -> 46.7e9 (capped); T = 0.5 -> 12.9e9 (at least one token's experts); two stages halve T."""
    e = (46.7e9 - 12.9e9) / 6
    assert llm.expert_params_per_routed_slot(46.7e9, 12.9e9, 8, 2) == pytest.approx(e)
    none = 0.0
    cycle = CycleModel(
        pipeline=1, weight_bytes=46.7e9, read_fixed_bytes=12.9e9 - 2 * e, read_per_token_bytes=2 * e, moe=True,
        weight_flops_per_token=none, decode_kv_bytes_per_token=none, decode_attention_flops_per_token=none,
        prefill_kv_bytes_per_token=none, prefill_attention_flops_per_token=none, flops_per_s=1.0,
        tier_capacity_bytes=(1e12,), tier_bandwidth_bytes_per_s=(1e12,), sync_fixed_s=none, sync_per_token_s=none,
        memory_compute_overlap=none, phase_overlap=none, comm_overlap=none)
    assert cycle.weight_read_bytes(1) == pytest.approx(12.9e9)
    assert cycle.weight_read_bytes(2) == pytest.approx(12.9e9 + 2 * e)
    assert cycle.weight_read_bytes(4) == pytest.approx(46.7e9)
    assert cycle.weight_read_bytes(100) == pytest.approx(46.7e9)
    assert cycle.weight_read_bytes(0.5) == pytest.approx(12.9e9)
    assert cycle.weight_read_bytes(4, stages=2) == pytest.approx(12.9e9 + 2 * e)


def test_memory_read_time_fills_fastest_tier_first():
    # 3 GB over [1 GB @ 10 GB/s, 100 GB @ 1 GB/s]: 0.1 s + 2 s
    assert roofline.memory_read_time_s(3e9, [1e9, 1e11], [1e10, 1e9]) == pytest.approx(2.1)
    assert roofline.memory_read_time_s(0.5e9, [1e9, 1e11], [1e10, 1e9]) == pytest.approx(0.05)


def test_sync_terms_on_one_device():
    # no data moves between devices, but each of the 2 x 80 layer boundaries costs one latency
    alone = parallelism.Shape(1, 1, False)
    assert parallelism.sync_latency_per_cycle_s(alone, 80, 2e-6) == pytest.approx(2 * 80 * 2e-6)
    assert parallelism.sync_time_per_token_s(alone, 80, 8192, 1.0, 1, 9e11, 5e10, 8) == 0
    # a tensor group of 8: 2 x 80 x 2e-6 x log2 8 = 9.6e-4 s (one stage: no stage-to-stage hop)
    assert parallelism.sync_latency_per_cycle_s(parallelism.Shape(8, 1, False), 80, 2e-6) == pytest.approx(9.6e-4)


def test_collective_bytes_follow_the_collective_width_not_the_arithmetic_width():
    """The activations a tensor-parallel replica all-reduces are ``serving.collective_bits / 8`` bytes per
    element (16-bit GEMM outputs at every arithmetic width, [fp8-formats-2022]): Llama 3.1 70B (80 layers,
    hidden 8,192) on H100s (NVLink 4.5e11 B/s per direction, of which the calibrated collectives of decode tokens
    reach e = 0.162) at t = 2: ``4 L (t-1)/t x h x a / (e bw)`` = 4 x 80 x 1/2 x 8,192 x 2 / (0.162 x 4.5e11)
    = 3.5959e-05 s per token at the default 16 bits (a = 2), whether the arithmetic is FP8 or FP4; half
    that at 8 bits; none on one device. A prompt token's at NCCL's large-message ring rate, e_p = 0.82
    ([nccl-tests-212]): 2,621,440 / (0.82 x 4.5e11) = 7.1041e-06 s."""
    from tco.core.evaluate import serving_pools
    from tco.inputs.loading import load_scenario

    scenario = load_scenario("default")
    for compute_bits, collective_bits, a in ((8.0, 16.0, 2.0), (4.0, 16.0, 2.0), (8.0, 8.0, 1.0)):
        values = {**scenario.values(), "workload.compute_bits": compute_bits, "serving.collective_bits": collective_bits}
        pools, _, _ = serving_pools(scenario.structure, values, scenario.structure.baseline)
        pool = pools["colocated"]
        models = {c.tensor_parallel: c.cycle_model for c in (pool.candidate(k) for k in range(len(pool.shapes)))}
        by_tensor = {t: float(np.ravel(cm.sync_per_token_s)[0]) for t, cm in models.items()}
        prompt = {t: float(np.ravel(cm.sync_per_prompt_token_s)[0]) for t, cm in models.items()}
        assert by_tensor[1.0] == prompt[1.0] == 0.0
        efficiency = values["devices.h100-sxm.collective_efficiency"]
        assert (efficiency, values["devices.h100-sxm.prefill_collective_efficiency"]) == (0.162, 0.82)
        assert by_tensor[2.0] == pytest.approx(4 * 80 * 0.5 * 8192 * a / (efficiency * 4.5e11), rel=1e-12)
        assert by_tensor[2.0] == pytest.approx(3.5959e-05 * a / 2, rel=1e-4)
        assert prompt[2.0] == pytest.approx(7.1041e-06 * a / 2, rel=1e-4)


def test_annuity_and_discounting():
    # 5 payments of 1 at 8%: (1 - 1.08^-5) / 0.08 = 3.99271
    assert finance.annuity_factor(0.08, 5) == pytest.approx(3.9927100371)
    assert finance.annuity_factor(0.0, 5) == 5


def test_npv_excel_convention():
    # practices.md: NPV(8%, five flows of 10454.184) = 41740.53 in Excel/LibreOffice (first flow discounted)
    assert finance.npv_excel(0.08, [10454.184] * 5) == pytest.approx(41740.53, abs=0.01)


def test_irr_and_payback():
    # -100 now, +110 in a year: IRR 10%
    assert finance.irr(np.array([-100.0, 110.0])) == pytest.approx(0.10, abs=1e-9)
    # -100, +60, +60: 60/(1+r) + 60/(1+r)^2 = 100 -> r = 13.07%
    assert finance.irr(np.array([-100.0, 60.0, 60.0])) == pytest.approx(0.130662, abs=1e-6)
    assert finance.payback_year(np.array([-100.0, -40.0, 20.0, 80.0])) == 2
    assert np.isnan(finance.payback_year(np.array([-100.0, -40.0])))


def test_effective_life_and_designed_share():
    # L = 4, H = 2: H/ln2 (1 - 2^-2) = 2.164
    assert lifecycle.effective_life_years(4, 2) == pytest.approx(2 / math.log(2) * 0.75)
    # the yearly means integrate 2^(-t/H): their sum over L years equals the effective life
    assert sum(lifecycle.designed_share_in_year(y, 2) for y in range(1, 5)) == pytest.approx(2 / math.log(2) * 0.75)
    assert lifecycle.designed_share_at(2, 2) == 0.5


def test_dies_per_wafer_and_yield():
    # 100 mm^2 on 300 mm: pi 150^2 / 100 - pi 300 / sqrt(200) = 706.86 - 66.64 = 640.2
    assert nre.dies_per_wafer(100) == pytest.approx(640.22, abs=0.01)
    # Poisson yield: 1 cm^2 at 0.1 /cm^2 -> exp(-0.1)
    assert nre.die_yield(100, 0.1) == pytest.approx(math.exp(-0.1))


def test_breakeven_volume_closed_form():
    # PV = a + N own / V; a = 80, own = 10 units, N = 100, target c = 100 -> V* = 10 x 100 / 20 = 50
    assert nre.breakeven_volume_units(100, 10, 80, 100) == 50
    assert nre.breakeven_volume_units(100, 10, 120, 100) == np.inf
    # of which sold to others: 50 - 10 = 40; own use alone suffices when V* <= own
    assert nre.breakeven_external_units(50.0, 10.0) == 40 and nre.breakeven_external_units(8.0, 10.0) == 0


def test_two_for_two_rule():
    # ASIC Clouds (ISCA 2016): yearly TCO >= 2 x NRE and >= 2x TCO improvement
    holds, ratio = nre.two_for_two(200e6, 100e6, 2.5)
    assert bool(holds) and ratio == 2
    assert not bool(nre.two_for_two(150e6, 100e6, 3)[0])
    assert not bool(nre.two_for_two(300e6, 100e6, 1.5)[0])


def test_capital_recovery_by_hand():
    # r = 10 %, L = 2 yr, no residual: annuity = 1/1.1 + 1/1.21 = 2.1/1.21, so 2,100 USD costs 2,100 x 1.21 / 2.1 = 1,210 USD/yr
    assert finance.capital_recovery_usd_per_year(2100.0, 0.1, 2.0) == pytest.approx(1210.0, rel=1e-12)
    # r = 0: the price less the residual value, spread evenly: 1,000 x (1 - 0.2) / 4 = 200 USD/yr
    assert finance.capital_recovery_usd_per_year(1000.0, 0.0, 4.0, 0.2) == pytest.approx(200.0, rel=1e-12)


def test_breakeven_nre_lies_on_the_same_line_as_the_breakeven_volume():
    # PV cost a + f NRE own / V against the baseline's c: a = 80, own = 4 units, c = 100, V = 1,000 units, f = 0.8
    # NRE* = (c - a) V / (own f) = 20 x 1000 / 3.2 = 6,250 USD; its PV 5,000 breaks even at the volume V itself
    assert nre.breakeven_nre_usd(4.0, 0.8, 80.0, 100.0, 1000.0) == pytest.approx(6250.0, rel=1e-12)
    assert nre.breakeven_volume_units(6250.0 * 0.8, 4.0, 80.0, 100.0) == pytest.approx(1000.0, rel=1e-12)
    # the option loses even with free NRE (a >= c): never
    assert np.isnan(nre.breakeven_nre_usd(4.0, 0.8, 120.0, 100.0, 1000.0))


def test_energy_price_per_joule_matches_the_yearly_energy_cost():
    from tco.core.serving import power

    # PUE 1.5 at 0.10 USD/kWh: 0.15 USD per 3.6e6 J = 4.1667e-8 USD/J
    assert power.energy_price_usd_per_joule(1.5, 0.10) == pytest.approx(0.15 / 3.6e6, rel=1e-12)
    # 1 kW for a year at that price: 8,760 kWh x 0.15 = 1,314 USD, both ways
    per_year = power.energy_cost_usd_per_year(1000.0, 1.5, 0.10)
    assert per_year == pytest.approx(1314.0, rel=1e-12)
    assert per_year == pytest.approx(1000.0 * 8760 * 3600 * power.energy_price_usd_per_joule(1.5, 0.10), rel=1e-12)
    # a 20 W link port at 40 USD/kW-month adds 0.02 x 40 x 12 = 9.6 USD/yr of data hall
    assert power.running_cost_usd_per_year(20.0, 1.5, 0.10, 40.0) == pytest.approx(20 * 8.76 * 0.15 + 9.6, rel=1e-12)


def test_whole_counts_and_latency_tolerance():
    from tco.core.serving import sizing

    # a load of 3.0000000001 replicas is 3 (round-off guard), 3.1 needs 4, continuous sizing keeps 3.1
    assert sizing.whole_count(3.0000000001) == 3 and sizing.whole_count(3.1) == 4
    assert sizing.whole_count(3.1, whole=False) == 3.1
    assert sizing.replicas_needed(310.0, 100.0) == 4
    # a TTFT within 1e-12 of its target meets it; 1e-9 above does not
    assert sizing.within_target(0.3 * (1 + 1e-13), 0.3) and not sizing.within_target(0.3 * (1 + 1e-9), 0.3)


# ---------------------------------------------------------------- published arithmetic (were validation cases)


def test_distserve_kv_cache_of_a_512_token_opt66b_request():
    """DistServe (OSDI 2024) section 4 [distserve-osdi2024]: "a single 512-token request" of OPT-66B (64 layers,
    72 heads x 128 [opt-66b], FP16, multi-head attention) has a KV cache of 1.13 GB: 2 x 64 x 72 x 128 x 2 B = 2,359,296 B per
    token; x 512 = 1,207,959,552 B = 1.125 GiB (the paper rounds to 1.13 GB); at 10 requests/s the KV link carries
    11.25 GiB/s = 90 Gibit/s ("about 90 Gbps")."""
    from tco.core.serving import sizing

    per_token = llm.kv_bytes_per_token(64, 72, 128, 16)
    assert per_token == 2_359_296
    request = sizing.kv_transfer_bytes_per_request(512, per_token)
    assert request == 1_207_959_552 and request / 2**30 == pytest.approx(1.125, rel=1e-12)
    assert 10 * request * 8 / 2**30 == pytest.approx(90.0, rel=1e-12)


def test_two_for_two_payback_is_one_year_at_the_rule_boundary():
    """ASIC Clouds' two-for-two rule (Magaki et al., ISCA 2016 [magaki-asic-clouds]): build the ASIC when the
    yearly TCO on the old platform is at least twice the NRE and the ASIC improves TCO per op/s at least 2x. At the
    boundary (TCO_old = 2 NRE = 20 M USD/yr, i = 2) the yearly saving TCO_old (1 - 1/i) = 10 M USD repays the NRE of
    10 M USD in exactly one year; the rule holds there and fails just inside it."""
    holds, _ = nre.two_for_two(2.0e7, 1.0e7, 2.0)
    assert bool(np.all(holds))
    assert not bool(np.all(nre.two_for_two(1.99e7, 1.0e7, 2.0)[0]))
    assert not bool(np.all(nre.two_for_two(2.0e7, 1.0e7, 1.99)[0]))
    assert pytest.approx(1.0, rel=1e-12) == 1.0e7 / (2.0e7 * (1.0 - 1.0 / 2.0))


def test_dally_single_gpu_gain_decomposition():
    """Dally, Hot Chips 2023 [dally-hotchips2023]: Kepler K20X (2012) to Hopper H100 (2022) gained ~1000x per GPU
    from number representation 16x, complex instructions 12.5x, process 2.5x and sparsity 2x:
    16 x 12.5 x 2.5 x 2 = 1000 (independent factors multiply)."""
    assert math.prod([16, 12.5, 2.5, 2]) == pytest.approx(1000.0, rel=1e-12)


def test_parameter_name_builders_refuse_a_wrong_number_of_parts():
    """``str.format`` drops an extra part without a word: ``"devices.{}.{}".format("h100", "memory", "tdp_w")`` is
    ``"devices.h100.memory"``, a wrong name. The builders of :mod:`tco.core.names` take exactly one part per
    ``{}``: the planted wrong calls (a part too many, one too few, a keyword) raise; right calls build the name."""
    from tco.core import names as structure

    assert structure.device_param("h100", "tdp_w") == "devices.h100.tdp_w"
    assert structure.tier_param("h100", "hbm", "capacity_bytes") == "devices.h100.memory.hbm.capacity_bytes"
    assert structure.demand_year_param(3) == "workload.year_3.demand_multiplier"
    # names are kept once built: the same name again, and equal numbers of other types are not taken for each other
    assert structure.device_param("h100", "tdp_w") == "devices.h100.tdp_w"
    assert [structure.demand_year_param(y) for y in (1, 1.0, True, 1)] == [
        "workload.year_1.demand_multiplier", "workload.year_1.0.demand_multiplier", "workload.year_True.demand_multiplier",
        "workload.year_1.demand_multiplier"]
    builders = {structure.device_param: 2, structure.tier_param: 3, structure.model_param: 2, structure.link_param: 2,
                structure.pool_param: 3, structure.roadmap_param: 2, structure.demand_year_param: 1}
    for build, parts in builders.items():
        for wrong in (parts - 1, parts + 1):
            with pytest.raises(TypeError, match="takes"):
                build(*["x"] * wrong)
        with pytest.raises(TypeError):
            build(*["x"] * parts, field="tdp_w")
    with pytest.raises(TypeError, match=r"'devices\.\{\}\.\{\}' takes 2 part\(s\), got 3"):
        structure.device_param("h100", "memory", "tdp_w")
