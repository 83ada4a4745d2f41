"""The engine's structural fast paths give, bit for bit, what the general form gives (issue 16).

A fast path skips an array pass that changes no value: an ``np.where`` whose mask holds in every draw,
``1 - o`` computed once per pool instead of per shape, a boolean cast instead of a multiplication. Each
test evaluates the same draws once along the fast path and once along the general one (or draw by draw,
where the masks are numbers) and compares the bits.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tco.core import finance, parallelism
from tco.core.draws import flag_value
from tco.core.sizing import WHOLE_COUNT_GUARD, at_least_one_whole, replicas_needed
from tco.core.steps import CycleModel, overlap_keeps
from tco.core.timeline import DemandPath, geometric_discounted_sum

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def same_bits(a, b) -> bool:
    """Whether two float arrays hold the same bits (NaN and -0 included)."""
    a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
    return a.shape == b.shape and bool(np.all(a.view(np.int64) == b.view(np.int64)))


def test_flag_value_is_one_where_true_and_zero_elsewhere():
    """By hand: [True, False, True] -> [1.0, 0.0, 1.0] (float64); a number or a 0-d flag stays a number, as ``x 1.0``
    gives it (the scalar call's types do not change)."""
    out = flag_value(np.array([True, False, True]))
    assert out.dtype == np.float64 and out.tolist() == [1.0, 0.0, 1.0]
    assert flag_value(True) == 1.0 and flag_value(False) == 0.0
    assert type(flag_value(np.bool_(True))) is type(np.bool_(True) * 1.0)
    assert type(flag_value(np.array(True))) is type(np.array(True) * 1.0)
    floats = np.array([0.0, 1.0])
    assert flag_value(floats) is not floats and flag_value(floats).tolist() == [0.0, 1.0]


rates = st.lists(st.one_of(st.just(0.0), st.floats(-0.5, 0.5, allow_nan=False)), min_size=2, max_size=12)


@FAST
@given(rates, st.floats(0.0, 0.3), st.integers(0, 4), st.integers(0, 30))
def test_discounted_sums_equal_draw_by_draw_with_and_without_flat_draws(rate, growth, start, span):
    """``geometric_discounted_sum`` over draws, with flat draws (masks applied) or none (masks skipped), equals the
    same sum taken one draw at a time, bit for bit; with and without growth (``x = (1+g)/(1+r) = 1`` at ``r = g``)."""
    rate = np.array(rate)
    for log_ratio in (0.0, np.log1p(growth)):
        for rates_now in (rate, np.where(rate == 0.0, 0.05, rate)):
            rates_now = np.where(np.isclose(rates_now, growth), growth, rates_now) if log_ratio else rates_now
            together = geometric_discounted_sum(rates_now, log_ratio, start, start + span)
            one_by_one = [geometric_discounted_sum(np.float64(r), log_ratio, start, start + span) for r in rates_now]
            assert same_bits(together, one_by_one)


@FAST
@given(rates, st.integers(1, 30))
def test_annuity_equals_draw_by_draw_with_and_without_zero_rates(rate, years):
    """``annuity_factor`` over draws with a zero rate (masks applied) or none (skipped) equals it draw by draw;
    at ``r = 0`` it is the years themselves (by hand: 1 USD a year for ``Y`` years, undiscounted)."""
    for rates_now in (np.array(rate), np.where(np.array(rate) == 0.0, 0.05, rate)):
        together = finance.annuity_factor(rates_now, float(years))
        one_by_one = [finance.annuity_factor(np.float64(r), float(years)) for r in rates_now]
        assert same_bits(together, one_by_one)
    assert finance.annuity_factor(np.zeros(3), 7.0).tolist() == [7.0, 7.0, 7.0]


def test_collectives_pick_the_scale_up_link_only_where_the_group_fits_the_domain():
    """Tensor 8, pipeline 4 on 450 GB/s scale-up and 50 GB/s scale-out; by hand, per token (h = 8192, 1 B, L = 80):
    the tensor group uses scale-up where ``8 <= domain``, the stage hops where ``32 <= domain``. Domains of 72
    in every draw (the masks skipped) give the draw-by-draw values of a mixed array (the masks applied)."""
    shape = parallelism.Shape(8, 4)
    up, out = 450e9, 50e9
    mixed = np.array([72.0, 8.0, 4.0, 72.0])
    together = parallelism.sync_time_per_token_s(shape, 80.0, 8192.0, 1.0, 1.0, up, out, mixed)
    one_by_one = [parallelism.sync_time_per_token_s(shape, 80.0, 8192.0, 1.0, 1.0, up, out, d) for d in mixed]
    assert same_bits(together, one_by_one)
    everywhere = parallelism.sync_time_per_token_s(shape, 80.0, 8192.0, 1.0, 1.0, up, out, np.full(4, 72.0))
    assert same_bits(everywhere, np.full(4, one_by_one[0]))
    # 72 devices: 4 L (t-1)/t h a / (p up) + (p-1)/p h a / up
    by_hand = 4 * 80 * (7 / 8) * 8192 / (4 * up) + (3 / 4) * 8192 / up
    assert np.isclose(one_by_one[0], by_hand, rtol=1e-12)
    # 8 devices in the domain: the tensor group inside (scale-up), the 32-device stage hops outside (scale-out)
    assert np.isclose(one_by_one[1], 4 * 80 * (7 / 8) * 8192 / (4 * up) + (3 / 4) * 8192 / out, rtol=1e-12)


def _cycle_model(keeps):
    rng = np.random.default_rng(3)
    n = 64
    draw = lambda low, high: rng.uniform(low, high, n)  # noqa: E731
    return CycleModel(
        pipeline=2, weight_bytes=draw(1e10, 2e11), read_fixed_bytes=draw(1e10, 2e11), read_per_token_bytes=0.0,
        moe=False, weight_flops_per_token=draw(1e10, 3e11), decode_kv_bytes_per_token=draw(1e7, 1e9),
        decode_attention_flops_per_token=draw(1e6, 1e9), prefill_kv_bytes_per_token=draw(1e5, 1e6),
        prefill_attention_flops_per_token=draw(1e6, 1e8), flops_per_s=draw(1e14, 1e16),
        tier_capacity_bytes=(draw(1e10, 1e11), draw(1e11, 1e12)), tier_bandwidth_bytes_per_s=(draw(1e12, 8e12), draw(1e11, 5e11)),
        sync_fixed_s=draw(0.0, 1e-3), sync_per_token_s=draw(0.0, 1e-6), memory_compute_overlap=draw(0.0, 1.0),
        phase_overlap=draw(0.0, 1.0), comm_overlap=draw(0.0, 1.0), keeps=keeps)


def test_cycle_models_with_the_pools_overlap_complements_equal_those_that_compute_them():
    """A cycle model given ``1 - o`` (computed once per pool) and one that computes it give the same decode lines,
    cycle times and bounds, bit for bit; two tiers, two stages."""
    plain = _cycle_model(None)
    shared = _cycle_model(overlap_keeps(plain.memory_compute_overlap, plain.phase_overlap, plain.comm_overlap))
    for a, b in zip(plain.decode_lines(), shared.decode_lines(), strict=True):
        assert all(same_bits(x, y) for x, y in zip(a.intercepts + a.slopes, b.intercepts + b.slopes, strict=True))
    for decode, prefill in ((0.0, 0.0), (16.0, 0.0), (8.0, 4096.0), (np.arange(64.0), 512.0)):
        assert same_bits(plain.cycle_s(decode, prefill), shared.cycle_s(decode, prefill))
        assert all(same_bits(x, y) for x, y in zip(plain.bound_and_spill(decode, prefill),
                                                   shared.bound_and_spill(decode, prefill), strict=True))
    assert overlap_keeps(0.25, 1.0, 0.0) == (0.75, 0.0, 1.0)


counts = st.lists(st.one_of(st.sampled_from([0.0, -0.0, 1.0]), st.floats(-3.0, 1e6, allow_nan=False)), min_size=1, max_size=12)


@FAST
@given(counts)
def test_whole_counts_written_in_place_equal_the_three_steps(exact):
    """``at_least_one_whole`` (one array written three times) equals ``max(ceil(x - 1e-9), 1)`` in three new arrays,
    bit for bit, over draws and for one number; by hand: 2 + 1e-12 -> 2 (the guard), 2.5 -> 3, 0 -> 1, -0 -> 1."""
    exact = np.array(exact)
    assert same_bits(at_least_one_whole(exact), np.maximum(np.ceil(exact - WHOLE_COUNT_GUARD), 1.0))
    assert all(same_bits(at_least_one_whole(x), np.maximum(np.ceil(x - WHOLE_COUNT_GUARD), 1.0)) for x in exact.tolist())
    assert at_least_one_whole(np.array([2.0 + 1e-12, 2.5, 0.0, -0.0])).tolist() == [2.0, 3.0, 1.0, 1.0]
    assert same_bits(replicas_needed(exact, 1.0, False), exact / 1.0)  # the division by the number 1 skipped


@FAST
@given(rates, st.floats(0.0, 0.3), st.integers(0, 4), st.integers(0, 30))
def test_discounts_from_the_shared_minus_log_equal_those_from_the_log(rate, growth, start, span):
    """The sign of ``-t ln(1 + r)`` moved to the shared factor (``t x (-ln(1 + r))``) and ``ln x = ln(lambda) +
    (-ln(1 + r))`` give what ``-t x ln(1 + r)`` and ``ln(lambda) - ln(1 + r)`` give, bit for bit (IEEE rounding is
    symmetric in the sign): discount factors, ``expm1`` terms and discounted sums, with and without growth."""
    rate = np.array(rate)
    path = DemandPath(rate, growth)
    ell = np.log1p(rate)
    for t in (0.0, float(start), np.arange(rate.size, dtype=float) * 0.7):
        assert same_bits(path.discount(t), np.exp(-np.asarray(t) * ell))
        assert same_bits(path.discount_minus_one(t), np.expm1(-np.asarray(t) * ell))
    for log_ratio in (0.0, np.log1p(growth)):
        given_minus_log = geometric_discounted_sum(rate, log_ratio, start, start + span, path.minus_log_discount)
        assert same_bits(given_minus_log, geometric_discounted_sum(rate, log_ratio, start, start + span))
    if growth:  # the growing flow's closed form as it was written before the shared factor: ln x = ln(lambda) - ln(1 + r)
        x = np.log1p(growth) - ell
        flat = x == 0.0
        safe = np.where(flat, 1.0, x)
        ratio = np.expm1(span * safe) / np.where(flat, 1.0, np.expm1(safe)) * np.exp(start * safe)
        assert same_bits(path.discounted_sum(start, start + span), np.where(flat, float(span), ratio) / (1.0 + rate))


def test_where_mixed_is_np_where_and_skips_a_uniform_mask():
    """:func:`tco.core.draws.where_mixed` gives ``np.where``'s values and shape; a mask the same in every draw returns the
    chosen or the other operand itself (no array pass) when it has that shape."""
    from tco.core.draws import where_mixed

    a, b = np.array([1.0, 2.0, 3.0]), np.array([-1.0, -2.0, -3.0])
    assert where_mixed(np.array([True, True, True]), a, b) is a
    assert where_mixed(np.array([False, False, False]), a, b) is b
    assert where_mixed(True, 5.0, 6.0) == 5.0 and where_mixed(np.False_, 5.0, b) is b
    assert where_mixed(np.array([True, True, True]), 5.0, b).tolist() == [5.0, 5.0, 5.0]  # broadcast, as np.where
    mixed = np.array([True, False, True])
    assert where_mixed(mixed, a, b).tolist() == [1.0, -2.0, 3.0] == np.where(mixed, a, b).tolist()
