"""The engine's structural fast paths give, bit for bit, what the general form gives (issue 16).

A fast path skips an array pass that changes no value: an ``np.where`` whose mask holds in every draw,
``1 - o`` computed once per pool instead of per shape, a boolean cast instead of a multiplication. Each
test evaluates the same draws once along the fast path and once along the general one (or draw by draw,
where the masks are numbers) and compares the bits.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tco.core.draws import as_floats, flag_value, maximum, minimum, one_value
from tco.core.money import finance
from tco.core.money.timeline import DemandPath, geometric_discounted_sum
from tco.core.serving import parallelism
from tco.core.serving.sizing import WHOLE_COUNT_GUARD, at_least_one_whole, replicas_needed
from tco.core.serving.steps import CycleModel, overlap_keeps

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


SPECIAL = (0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 1e308, np.inf, -np.inf, np.nan, -np.nan,
           np.frombuffer(np.uint64(0x7FF8000000000123).tobytes(), np.float64)[0])


@pytest.mark.parametrize("ours, numpys", [(maximum, np.maximum), (minimum, np.minimum)])
def test_maximum_and_minimum_of_two_numbers_are_numpys_bit_for_bit(ours, numpys):
    """Every pair of signed zeros, subnormals, infinities and NaNs (two payloads), as numpy float64 and Python float in
    each order: the same type (numpy float64) and bits as ``np.maximum``/``np.minimum``, which keep the second of two
    equal values (``max(+0, -0) = -0``) and the first NaN. Arrays and 0-d arrays go to numpy (the same object type)."""
    for x in SPECIAL:
        for y in SPECIAL:
            for ta, tb in ((np.float64, np.float64), (np.float64, float), (float, np.float64), (float, float)):
                a, b = ta(x), tb(y)
                expected, got = numpys(a, b), ours(a, b)
                assert type(got) is type(expected) is np.float64
                assert got.tobytes() == expected.tobytes(), (a, b)
    values = np.array(SPECIAL)
    assert same_bits(ours(values, values[::-1]), numpys(values, values[::-1]))
    assert type(ours(np.array(2.0), 1.0)) is type(numpys(np.array(2.0), 1.0))
    assert ours(3, 2.0) == numpys(3, 2.0) and type(ours(3, 2.0)) is type(numpys(3, 2.0))


def test_as_floats_keeps_a_numpy_number_and_makes_float_arrays_of_the_rest():
    """By hand: a numpy float64 is returned itself (a number, not a 0-d array); a Python number, a list of ints and an
    int array become float arrays as ``np.asarray(x, float)`` makes them, with the same values and shapes."""
    x = np.float64(2.5)
    assert as_floats(x) is x
    for value in (2.5, 3, [1, 2], np.array([1, 2]), np.array(4.0)):
        expected = np.asarray(value, float)
        got = as_floats(value)
        assert type(got) is np.ndarray and got.dtype == np.float64 and got.shape == expected.shape
        assert same_bits(got, expected)


def test_one_value_is_ndim_zero_for_numbers_and_arrays():
    """By hand: Python and numpy numbers, bools and 0-d arrays are one value (``np.ndim`` 0); arrays of 1 or more
    dimensions, a 1-element array included, are not."""
    for x in (0.0, 3, True, np.float64(2.0), np.bool_(False), np.array(1.5), np.array(True)):
        assert one_value(x) and np.ndim(x) == 0
    for x in (np.zeros(1), np.ones((2, 3)), np.array([True, False])):
        assert not one_value(x) and np.ndim(x) > 0


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


def _kingman_wait_in_full(a, c, service_s, eps, slack_s):
    """The lane wait as written before the skip: the minimum of the square-root wait and Kingman's (deterministic)."""
    from tco.core.serving import queueing

    square_root = queueing.wait_quantile_s(a, c, service_s, 0.0, eps, slack_s)
    rho = np.maximum(np.asarray(a, float), 1e-300) / np.maximum(np.asarray(c, float), 1e-300)
    return np.minimum(square_root, queueing.kingman_wait_s(rho, service_s, 0.0, eps))


@given(n=st.integers(1, 40), seed=st.integers(0, 2**32 - 1), spread=st.sampled_from([0.05, 0.5, 3.0, 30.0]))
@FAST
def test_the_lane_wait_skips_kingman_only_where_it_cannot_bind(n, seed, spread):
    """:func:`tco.core.serving.queueing.wait_quantile_s` with ``kingman=True`` skips Kingman's exponent when its wait cannot be
    the shorter in any draw; the result is the minimum of the two rules bit for bit, over the whole array and draw by
    draw (numbers), at loads from light to overloaded (where Kingman's bound does bind and is computed)."""
    from tco.core.serving import queueing

    rng = np.random.default_rng(seed)
    a = rng.uniform(0.0, 8.0, n)
    c = a * (1.0 + spread * rng.random(n)) + rng.uniform(-0.5, 3.0, n)
    service, slack, eps = rng.uniform(0.01, 2.0, n), rng.uniform(0.0, 10.0, n), rng.uniform(1e-4, 0.3, n)
    assert same_bits(queueing.wait_quantile_s(a, c, service, 0.0, eps, slack, kingman=True),
                     _kingman_wait_in_full(a, c, service, eps, slack))
    for i in range(min(n, 5)):
        assert same_bits(queueing.wait_quantile_s(a[i], c[i], service[i], 0.0, eps[i], slack[i], kingman=True),
                         _kingman_wait_in_full(a[i], c[i], service[i], eps[i], slack[i]))


def test_kingman_exponent_stays_below_its_start_where_the_wait_skip_relies_on_it():
    """The skip's premise (:data:`tco.core.serving.queueing.KINGMAN_SKIP_UTILIZATION`): at deterministic service and utilizations
    from 1e-300 to 0.9999 the exponent Newton's method returns is at most its start ``2 (1 - rho) / rho`` (it falls
    from there to the root); checked on 1.2 million utilizations, log-spaced towards 0 and towards 1 and uniform.
    The skip has a margin of 2 besides (Kingman's wait at least twice the square-root wait)."""
    from tco.core.serving import queueing

    top = queueing.KINGMAN_SKIP_UTILIZATION
    rho = np.concatenate([np.logspace(-300, np.log10(top), 400_000), 1.0 - np.logspace(np.log10(1.0 - top), -0.1, 400_000),
                          np.random.default_rng(0).uniform(0.0, top, 400_000)])
    rho = rho[(rho > 0.0) & (rho <= top)]
    with np.errstate(over="ignore", divide="ignore"):
        x = queueing.kingman_exponent(rho, 0.0)
        assert bool(np.all(x <= 2.0 * (1.0 - rho) / rho))


@given(n=st.integers(1, 30), seed=st.integers(0, 2**32 - 1), lanes=st.sampled_from([1.0, 2.0, 4.0]),
       work=st.sampled_from([0.01, 0.2, 2.0]))
@FAST
def test_the_split_search_skips_kingman_only_where_the_lanes_cannot_bind(n, seed, lanes, work):
    """:func:`tco.core.serving.split.split_replicas` skips Kingman's lane bound at a probe where the square-root lane need is
    already below the slots' in every draw; replicas and the share chosen are those of the full rule, bit for bit
    (the skip test forced off), from prompt-heavy loads where the lanes bind to decode-heavy ones where they do not."""
    import tco.core.serving.split as split

    rng = np.random.default_rng(seed)
    peak = rng.uniform(0.1, 40.0, n)
    residence, slots = rng.uniform(1.0, 60.0, n), rng.choice([8.0, 64.0, 512.0], n)
    work_s, slack = work * rng.uniform(0.5, 2.0, n), rng.uniform(0.05, 5.0, n)
    args = (peak, residence, slots, work_s, lanes, slack, 0.01)
    fast = split.split_replicas(*args)
    skip, split._lanes_cannot_bind = split._lanes_cannot_bind, lambda *_: False
    try:
        full = split.split_replicas(*args)
    finally:
        split._lanes_cannot_bind = skip
    assert same_bits(fast[0], full[0]) and same_bits(fast[1], full[1])


@given(n=st.integers(2, 200), seed=st.integers(0, 2**32 - 1), share_ok=st.sampled_from([0.0, 0.1, 0.5, 0.7, 0.9, 1.0]),
       number=st.booleans(), share_wanted=st.sampled_from([0.0, 0.3, 0.9, 1.0]))
@FAST
def test_the_two_lane_rules_run_on_their_own_draws_with_the_bits_of_both_at_every_draw(n, seed, share_ok, number,
                                                                                        share_wanted):
    """:func:`tco.core.serving.split.split_replicas_where` runs the rule with the length spread where ``ttft_ok`` holds and the
    one at mean lengths elsewhere, each gathered to its own draws when they are few; replicas and shares are those of
    ``np.where(ttft_ok, spread rule, mean-length rule)`` with both rules at every draw, bit for bit, whatever the
    share of the draws that miss (none, few, half, most, all) and with a number among the inputs. Where the replicas
    are not wanted they are the floor given, or the figure of the rule that ran at every draw (either is at least the
    queues' load)."""
    import tco.core.serving.split as split

    rng = np.random.default_rng(seed)
    peak = rng.uniform(0.1, 40.0, n)
    residence, slots = rng.uniform(1.0, 60.0, n), rng.choice([8.0, 64.0, 512.0], n)
    work_s, slack = rng.uniform(0.01, 2.0, n), rng.uniform(0.05, 5.0, n)
    own = work_s * rng.uniform(0.2, 1.0, n)
    queues = (peak, residence, slots, work_s, 2.0 if number else rng.choice([1.0, 2.0], n), slack, 0.01)
    lengths = (own, 0.58)
    ok = rng.random(n) < share_ok
    spread, mean = split.split_replicas(*queues, *lengths), split.split_replicas(*queues)
    exact = np.where(ok, spread[0], mean[0]), np.where(ok, spread[1], mean[1])
    replicas, share = split.split_replicas_where(ok, queues, lengths)
    assert same_bits(replicas, exact[0]) and same_bits(share, exact[1])
    wanted, floor = rng.random(n) < share_wanted, np.full(n, -1.0)
    replicas, share = split.split_replicas_where(ok, queues, lengths, wanted, floor)
    assert same_bits(replicas[wanted], exact[0][wanted]) and same_bits(share[wanted], exact[1][wanted])
    spared = ~wanted & (replicas == -1.0)
    ran = ~wanted & ~spared  # a rule that ran at every draw left its own figure there
    assert np.all(share[spared] == 0.5)
    assert np.all(((replicas == spread[0]) & (share == spread[1])) | ((replicas == mean[0]) & (share == mean[1]))
                  | ~ran)


def test_both_kingman_skips_are_taken_and_left_as_derived():
    """Neither skip test is vacuous. Waits: 4 Erlangs on 9.5 servers (``rho = 0.421``), S = 1 s, slack 1 s,
    epsilon = 0.01, deterministic (``k = 2``, ``u = 2``, ``delta = 1/3``): ``beta = (9.5 - 4 - 1/3) / 2 = 2.583``,
    ``beta^2 / 2 = 3.337 < ln 50 = 3.912``, a square-root wait of ``(3.912 - 3.337) / (2 x 2 x 2.583) = 0.0557`` s
    against Kingman's of at least ``ln(100) / x_0 = 4.605 x 0.421 / (2 x 0.579) = 1.67`` s: skipped. One server at 0.9
    with slack 40 s: Kingman's wait is the shorter (taken). Sizing: decode-heavy slots (residence 60 s, 8 slots)
    against one lane of 0.01 s: skipped; a 2 s lane against 512 slots of 1 s: not."""
    from tco.core.serving import queueing
    from tco.core.serving.split import _lanes_cannot_bind

    square_root = queueing.wait_quantile_s(4.0, 9.5, 1.0, 0.0, 0.01, 1.0)
    assert float(square_root) == pytest.approx((np.log(50.0) - 0.5 * (31 / 12) ** 2) / (4.0 * 31 / 12), rel=1e-12)
    assert queueing._kingman_wait_cannot_bind(square_root, 4.0 / 9.5, 1.0, 0.0, 0.01)
    assert not queueing._kingman_wait_cannot_bind(queueing.wait_quantile_s(0.9, 1.0, 1.0, 0.0, 0.01, 40.0), 0.9, 1.0, 0.0, 0.01)
    assert float(queueing.wait_quantile_s(0.9, 1.0, 1.0, 0.0, 0.01, 40.0, kingman=True)) \
        < float(queueing.wait_quantile_s(0.9, 1.0, 1.0, 0.0, 0.01, 40.0))
    by_slots = queueing.servers_within_wait(10.0 * 60.0, 60.0, 0.5, 0.0, 0.01) / 8.0
    assert _lanes_cannot_bind(queueing.servers_within_wait(10.0 * 0.01, 0.01, 0.5, 0.0, 0.01) / 1.0, by_slots)
    by_slots = queueing.servers_within_wait(10.0 * 1.0, 1.0, 0.5, 0.0, 0.01) / 512.0
    assert not _lanes_cannot_bind(queueing.servers_within_wait(10.0 * 2.0, 2.0, 0.5, 0.0, 0.01) / 1.0, by_slots)


@FAST
@given(st.floats(0.0, 4.0), st.floats(1e-6, 0.49))
def test_remembered_quantiles_of_one_number_equal_a_fresh_computation(length_scv, epsilon):
    """The normal quantile, the staffing log term and the prompt-length quantile of numbers are remembered (asked
    for at every lane share of every shape, draws.remembered_for_numbers): each equals, bit for bit, the formula
    computed afresh on the same number (``__wrapped__``), asked once or twice, as a Python or a numpy number; a 0-d
    array or an array is computed, not remembered. Against the array form it is within a few ulp only: numpy's
    vectorized ``log`` and ``power`` may round the last bit of an array's element differently from the C library on
    one number (so it did before the memo)."""
    from tco.core.serving import queueing, sojourn

    calls = [(queueing.normal_quantile, (1.0 - epsilon,)), (queueing.wait_log_term, (epsilon,)),
             (sojourn.length_quantile, (length_scv, epsilon))]
    for function, args in calls:
        fresh = function.__wrapped__(*args)
        for _ in range(2):
            assert same_bits(function(*args), fresh)
        assert same_bits(function(*map(np.float64, args)), fresh)
        assert same_bits(function(*map(np.asarray, args)), fresh) and np.ndim(function(*args)) == 0
        as_arrays = function(*(np.array([a, a]) for a in args))
        assert as_arrays.shape == (2,) and as_arrays[0] == pytest.approx(fresh, rel=1e-14)
