"""A prefill lane fed prompts of varying length (tco.core.serving.sojourn): hand-derived cases, a Lindley recursion,
invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from validation_data import data_rows

from tco.core.serving import queueing, sojourn


def test_exponential_lengths_give_the_exact_mm1_sojourn():
    """M/M/1 (``v = 1``, the own prefill the whole service, ``L = S = 1``): the sojourn ``W + S`` is exponential with
    rate ``1 - rho``, and the Cramer-Lundberg form is exact: ``x = 1 - rho``, ``C = rho``, ``M(x) = 1 / (1 - x) = 1/rho``,
    so ``C M(x) e^{-x t} = e^{-(1 - rho) t}``. ``P(T > slack + 1) = 0.01`` at slack 9: ``rho = 1 - ln(100) / 10 = 0.53948``
    (below Kingman's deterministic 0.766 at ``x = ln(100) / 9 = 0.5117``: ``0.5117 / (e^0.5117 - 1)``)."""
    rho = float(sojourn.sojourn_utilization(1.0, 1.0, 9.0, 1.0, 0.01))
    assert rho == pytest.approx(1.0 - math.log(100.0) / 10.0, rel=1e-9)
    assert float(queueing.kingman_utilization(1.0, 9.0, 0.0, 0.01)) == pytest.approx(0.5117 / (math.exp(0.5117) - 1.0), rel=1e-3)
    # and the wait back at that load: the slack
    assert float(sojourn.sojourn_wait_s(rho, 1.0, 1.0, 1.0, 0.01)) == pytest.approx(9.0, rel=1e-4)


def test_wilson_hilferty_quantile():
    """Exponential lengths: the 99th percentile is ``ln 100 = 4.605`` times the mean (Wilson-Hilferty: 4.611); every
    prompt at the mean: 1 exactly; gamma of squared CV 0.186 (shape 5.38): 2.27 (chi-square tables: 2.26)."""
    assert float(sojourn.length_quantile(1.0, 0.01)) == pytest.approx(math.log(100.0), rel=2e-3)
    assert float(sojourn.length_quantile(0.0, 0.01)) == 1.0
    assert float(sojourn.length_quantile(0.186, 0.01)) == pytest.approx(2.27, abs=0.02)


@pytest.mark.parametrize("dispatched", [False, True])
def test_deterministic_lengths_are_the_lane_queue_of_before_bit_for_bit(dispatched):
    """``v = 0`` is the deterministic lane (square-root staffing and Kingman's bound), the same bits, pooled or
    dispatched."""
    a, service, own, slack, eps = np.array([0.3, 2.0, 40.0]), np.array([1.0, 0.5, 0.2]), 0.9, np.array([3.0, 1.0, 0.5]), 0.01
    assert np.array_equal(sojourn.lane_servers(a, service, own, slack, 0.0, eps, dispatched=dispatched),
                          queueing.servers_within_wait(a, service, slack, 0.0, eps, kingman=True, dispatched=dispatched))
    assert np.array_equal(sojourn.lane_load(a, service, own, slack, 0.0, eps, dispatched=dispatched),
                          queueing.offered_load_within_wait(a, service, slack, 0.0, eps, kingman=True,
                                                            dispatched=dispatched))
    c = a + 2.0
    assert np.array_equal(sojourn.lane_wait_s(a, c, service, own, 0.0, eps, slack, dispatched=dispatched),
                          queueing.wait_quantile_s(a, c, service, 0.0, eps, slack, kingman=True, dispatched=dispatched))


def _lindley_p99_sojourn(rho: float, lengths: np.ndarray, own: float, arrivals: np.ndarray) -> float:
    """p99 of ``W + own X`` of one FIFO lane of mean service 1, Poisson arrivals at ``rho`` (Lindley's recursion)."""
    gaps = arrivals / rho
    wait = np.empty(len(lengths))
    w = 0.0
    for i, (s, a) in enumerate(zip(lengths, gaps, strict=True)):
        wait[i] = w
        w = max(w + s - a, 0.0)
    return float(np.quantile(wait + own * lengths, 0.99))


@pytest.mark.parametrize("scv, target_over_own", [(0.186, 3.0), (0.186, 6.0), (1.0, 6.0), (0.5, 12.0)])
def test_one_lane_at_the_capacity_the_model_reports_meets_its_p99_in_a_lindley_recursion(scv, target_over_own):
    """One FIFO lane, gamma prompt lengths of squared CV ``v``, own prefill ``L = 0.98 S`` (the 405B H200 replica's
    ratio, 1.95 s of 1.99 s), p99 sojourn allowed ``t = k L``: at the utilization the model gives, 300,000 simulated
    prompts meet ``t`` within 5 % (the sampling spread of a p99 at 70 % load: 3-4 %) and are not grossly conservative
    (the p99 at least 85 % of ``t``).
    Measured by bisection on the same recursion (docs/model.md "Queueing"): the model's utilization is within 1 % of
    the largest the lane sustains for these gamma lengths."""
    own = 0.98
    slack = target_over_own * own - own
    rho = float(sojourn.sojourn_utilization(1.0, own, slack, scv, 0.01))
    rng = np.random.default_rng(5)
    lengths = rng.gamma(1.0 / scv, scv, 300_000)
    p99 = _lindley_p99_sojourn(rho, lengths, own, rng.exponential(1.0, 300_000))
    target = slack + own
    assert 0.85 * target <= p99 <= 1.05 * target, (rho, p99, target)


@pytest.mark.parametrize("target_over_own", [6.0, 12.0, 30.0])
def test_one_lane_fed_the_azure_trace_meets_its_p99_at_the_capacity_the_model_reports(target_over_own):
    """As above, with the prompts of the chat scenarios' source itself: the first 429 requests of the Azure
    conversation trace (validation/data; squared CV 0.786, at most 4.5x the mean, 4 % of them near that), resampled.
    The model takes them as gamma lengths of that spread. Measured by bisection on the recursion (docs/model.md
    "Queueing"): the model's utilization / the largest the lane sustains is 0.310 / 0.306 at ``k = 6``,
    0.652 / 0.647 at 12, 0.860 / 0.868 at 30: at the model's load the p99 is within 5 % of ``t``."""
    prompts = np.array([float(r["input_tokens"]) for r in data_rows("azure-llm-trace-2023-conv-first-429.csv")])
    lengths = prompts / prompts.mean()
    scv = float(lengths.var())
    own = 0.98
    slack = target_over_own * own - own
    rho = float(sojourn.sojourn_utilization(1.0, own, slack, scv, 0.01))
    rng = np.random.default_rng(5)
    drawn = rng.choice(lengths, 300_000)
    p99 = _lindley_p99_sojourn(rho, drawn, own, rng.exponential(1.0, 300_000))
    target = slack + own
    assert 0.85 * target <= p99 <= 1.05 * target, (rho, p99, target)


@settings(max_examples=300, deadline=None)
@given(scv=st.floats(0.0, 1.0), wider=st.floats(0.01, 0.5), slack=st.floats(0.05, 50.0), own=st.floats(0.5, 1.0),
       lanes=st.floats(1.0, 200.0), eps=st.sampled_from([0.001, 0.01, 0.05]))
@example(scv=1.0, wider=0.015625, slack=2.0, own=1.0, lanes=1.0, eps=0.05)  # the corner of the docstring
def test_a_wider_length_spread_never_raises_what_the_lanes_carry(scv, wider, slack, own, lanes, eps):
    """Capacity falls (weakly) with the spread of prompt lengths, from the deterministic lane at ``v = 0`` on, over the
    parameter's range (``v`` up to 1.5) and lanes whose work is mostly the prompt's own prefill (``L >= S / 2``, as
    :func:`tco.core.serving.cycles.own_prefill_s` gives). Outside it the asymptotic is not monotone: with no own prefill
    (``L = 0``) at ``v`` 1 -> 2 and a slack of one service time it carries 0.032 -> 0.047 (the Cramer-Lundberg
    constant falls faster than the exponent at loads of a few per cent, where the asymptotic is coarse). Within it,
    near the edge where the longest prompts alone just fit (slack twice the own prefill, epsilon 0.05) the asymptotic
    still rises by up to 2 % with the spread (0.1039 at ``v`` 0.9, 0.1061 at 1.016, then 0 at 1.05): the test allows
    3 %, and 1 % of a lane where the lanes carry almost nothing: at the corner where the own prefill is the whole
    service (``L = S``, slack ``2 S``, epsilon 0.05, one lane) the load is 0.0014 at ``v = 1``, 0.0073 at 1.016 and 0
    from 1.05 (hypothesis found it at its bounds; 200,000 random draws of the domain found no other rise)."""
    narrow = float(sojourn.lane_load(lanes, 1.0, own, slack, scv, eps))
    wide = float(sojourn.lane_load(lanes, 1.0, own, slack, scv + wider, eps))
    assert wide <= narrow * 1.03 + 0.01 * lanes + 1e-12
    assert narrow <= float(sojourn.lane_load(lanes, 1.0, own, slack, 0.0, eps)) * (1 + 1e-9) + 1e-12


def test_the_own_prefill_alone_can_miss_the_target():
    """Exponential lengths, target 3 prefills: the p99 prompt alone takes 4.6 prefills, so no lanes suffice and none
    carry load (the per-lane rule's ``a / rho`` at the utilization floor: ``1e200 a``)."""
    assert float(sojourn.sojourn_utilization(1.0, 1.0, 2.0, 1.0, 0.01)) == 0.0
    assert float(sojourn.lane_load(100.0, 1.0, 1.0, 2.0, 1.0, 0.01)) == 0.0
    assert float(sojourn.lane_servers(1.0, 1.0, 1.0, 2.0, 1.0, 0.01)) >= 1e200


def test_vectorized_over_draws():
    """One call over draws equals the calls one draw at a time."""
    scv, slack = np.array([0.1, 0.5, 1.0, 1.5]), np.array([2.0, 5.0, 9.0, 30.0])
    together = sojourn.sojourn_utilization(1.0, 0.9, slack, scv, 0.01)
    apart = [float(sojourn.sojourn_utilization(1.0, 0.9, s, v, 0.01)) for s, v in zip(slack, scv, strict=True)]
    assert np.allclose(together, apart, rtol=1e-12, atol=0)


def test_parts_the_caller_has_give_the_same_bits():
    """The shortened slack and Kingman's mean-length utilization passed in (as the lane-share search computes them
    once per probe, tco.core.serving.split.split_replicas) give the bits the functions compute themselves, including draws
    where the own prefill alone misses the target (slack 1 s < own 0.9 s (X_q - 1) at v = 1.5) and no load."""
    rng = np.random.default_rng(7)
    n = 4000
    load = rng.uniform(0.0, 40.0, n) * (rng.random(n) > 0.05)
    service, own = rng.uniform(0.1, 2.0, n), rng.uniform(0.0, 1.0, n)
    own = own * service
    slack, scv, eps = rng.uniform(0.5, 60.0, n), rng.uniform(0.0, 2.0, n), rng.uniform(1e-4, 0.2, n)
    shortened = sojourn.shortened_slack_s(slack, own, scv, eps)
    kingman = queueing.kingman_utilization(service, slack, 0.0, eps)
    assert (shortened <= 0.0).any() and (shortened > 0.0).any()
    fewest = sojourn.square_root_lanes(load, service, own, slack, scv, eps)
    assert np.array_equal(sojourn.square_root_lanes(load, service, own, slack, scv, eps, shortened), fewest)
    alone = sojourn.per_lane_servers(load, service, own, slack, scv, eps, fewest)
    given_parts = sojourn.per_lane_servers(load, service, own, slack, scv, eps, fewest, shortened, kingman)
    assert np.array_equal(alone, given_parts, equal_nan=True)
    rho = load / np.maximum(fewest, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        waits = [sojourn.sojourn_wait_s(rho, service, own, scv, eps, parts) for parts in
                 (None, queueing.kingman_wait_s(rho, service, 0.0, eps))]
    assert np.array_equal(*waits, equal_nan=True)


def _bisection_utilization(scv, own_ratio, sojourn_, eps):
    """The utilization at :func:`tco.core.serving.sojourn.bisected_exponent` (the 44 halvings of ``ln x``) [-]."""
    args = [np.atleast_1d(np.asarray(a, float)) for a in (np.maximum(scv, queueing.SCV_FLOOR), own_ratio, sojourn_, np.log(eps))]
    with np.errstate(all="ignore"):
        _, rho = sojourn.sojourn_log_tail(sojourn.bisected_exponent(*args), args[0], args[1])
    return rho


def test_newton_root_by_hand_for_exponential_lengths():
    """Exponential lengths with the own prefill the whole service (``v = 1``, ``l = 1``): ``ln C = ln(1 - x)`` and
    ``ln M(x) = -ln(1 - x)`` cancel, so ``f = -x s - ln epsilon`` and the root is ``x = ln(100) / 10 = 0.460517`` at
    ``s = 10``, ``epsilon = 0.01``: the Newton steps certify it (``x_m = (1 - 1/10) / 1 = 0.9``: ``f`` falls up to
    there and the bisection's first probe beyond the root, ``high - width / 2^k``, lies below 0.9)."""
    x, certified, below = sojourn.newton_exponent(np.array([1.0]), np.array([1.0]), np.array([10.0]), np.log(np.array([0.01])))
    assert certified[0]
    assert x[0] == pytest.approx(math.log(100.0) / 10.0, rel=1e-11)
    assert below[0] <= x[0]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(scv=st.floats(1e-4, 10.0), own=st.floats(0.0, 1.0), slack=st.floats(1e-3, 1e4), eps=st.floats(1e-4, 0.5))
def test_newton_equals_the_bisection_where_certified_and_the_bound_holds(scv, own, slack, eps):
    """Where :func:`tco.core.serving.sojourn.newton_exponent` certifies its root the utilization is the bisection's to 1e-9
    relative (measured over 1e6 random draws of these ranges: 3.8e-10); its ``below`` point never passes the
    bisection's exponent (beyond rounding, 1e-9); and :func:`tco.core.serving.sojourn.sojourn_utilization` equals the
    bisection's utilization (capped at the deterministic rule's) whether certified or not."""
    s = slack + own
    bisected = _bisection_utilization(scv, own, s, eps)[0]
    with np.errstate(all="ignore"):  # l = 0: x_m infinite, as in sojourn_utilization
        x, certified, below = sojourn.newton_exponent(np.array([scv]), np.array([own]), np.array([s]), np.log(np.array([eps])))
        _, rho_newton = sojourn.sojourn_log_tail(x, scv, own)
        _, rho_below = sojourn.sojourn_log_tail(below, scv, own)
    if certified[0]:
        assert rho_newton[0] == pytest.approx(bisected, rel=1e-9)
    assert rho_below[0] >= bisected * (1.0 - 1e-9)
    deterministic = float(queueing.kingman_utilization(1.0, slack, 0.0, eps))
    fits = float(slack - own * (sojourn.length_quantile(scv, eps) - 1.0)) > 0.0
    expected = min(np.nan_to_num(bisected) * fits, deterministic)
    assert float(sojourn.sojourn_utilization(1.0, own, slack, scv, eps)) == pytest.approx(expected, rel=1e-9, abs=1e-300)


@settings(max_examples=300, deadline=None)
@given(scv=st.floats(1e-4, 10.0), share=st.floats(1e-6, 0.999), step=st.floats(1e-6, 0.5))
def test_the_constant_falls_with_the_exponent(scv, share, step):
    """The certificate's premise: ``ln C`` (:func:`tco.core.serving.sojourn.sojourn_log_tail` at ``l = 0``) falls as ``x`` grows
    towards the pole ``1/v`` (``ln(1 - x)`` for exponential lengths), to rounding."""
    x = np.array([share, share + step * (1.0 - share)]) / scv
    with np.errstate(all="ignore"):
        log_constant, rho = sojourn.sojourn_log_tail(x, scv, 0.0)
    if np.all(rho > 1e-6) and np.all(rho < 1.0 - 1e-9):
        assert log_constant[1] <= log_constant[0] + 1e-9


def test_the_bisection_takes_the_draws_the_newton_steps_cannot_certify():
    """Lengths of squared CV 0.8, the own prefill the whole service, a slack of 2 service times (``s = 3``) at
    ``epsilon = 0.01``: near the pole the tail rises again (``ln C + ln M(x) ~ -(1/v - 1) ln(1 - v x)``), above
    ``epsilon`` at the bracket's end, so the crossing is not certified unique: the bisection runs and its answer stands
    (the draw beside it, slack 9, is certified: both agree with the bisection)."""
    v, own, slack = np.array([0.8, 0.8]), np.array([1.0, 1.0]), np.array([2.0, 9.0])
    _, certified, _ = sojourn.newton_exponent(v, own, slack + own, np.log(np.full(2, 0.01)))
    assert not certified[0] and certified[1]
    expected = np.minimum(_bisection_utilization(v, own, slack + own, 0.01), queueing.kingman_utilization(1.0, slack, 0.0, 0.01))
    fits = slack - own * (sojourn.length_quantile(v, 0.01) - 1.0) > 0.0
    np.testing.assert_allclose(sojourn.sojourn_utilization(1.0, own, slack, v, 0.01), expected * fits, rtol=1e-9)


@settings(max_examples=200, deadline=None)
@given(scv=st.floats(0.05, 2.0), own=st.floats(0.3, 1.0), slack=st.floats(0.5, 50.0), load=st.floats(0.1, 50.0))
def test_the_lanes_are_those_of_the_exact_utilization(scv, own, slack, load):
    """:func:`tco.core.serving.sojourn.lane_servers` lets a bound stand in where the per-lane rule cannot beat square-root
    staffing (``beat``): the lanes are the fewer of square-root staffing and ``a / rho`` at the exact utilization."""
    square_root = sojourn.square_root_lanes(load, 1.0, own, slack, scv, 0.01)
    exact = float(sojourn.sojourn_utilization(1.0, own, slack, scv, 0.01))
    expected = min(float(square_root), float(queueing.servers_at_utilization(load, exact)))
    assert float(sojourn.lane_servers(load, 1.0, own, slack, scv, 0.01)) == pytest.approx(expected, rel=1e-12)
