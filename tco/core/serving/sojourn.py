"""A prefill lane fed prompts of varying length: the wait plus the prompt's own prefill at the percentile.

A lane (:mod:`tco.core.serving.cycles`) serves one prompt at a time; a prompt of ``X`` times the mean length holds it
``S X`` [s] and takes ``L X`` [s] to prefill once started (``L <= S``: the rest of the prompt's prefill latency,
``L_total - L``, does not scale with the length and stays a fixed term). Its time to first token counts the wait
``W`` for the lane and its **own** prefill, so the percentile is the one of ``W + L X``: long prompts wait behind
long prompts and then take long themselves. With every prompt at the mean length (``c_s^2 = 0``) the lane is the
deterministic queue of :mod:`tco.core.serving.queueing`, unchanged; this module takes over when the length spread
``c_s^2 = Var[X] > 0`` (``workload.prompt_tokens_scv``).

**Length family.** ``X`` is gamma with mean 1 and squared coefficient of variation ``v``: the two-moment family
whose moment generating function has a closed form, ``M(s) = E[exp(s X)] = (1 - v s)^(-1/v)`` for ``s < 1/v``.

**One server** (the lanes of one replica: one to a few). Under Poisson arrivals at utilization ``rho`` the wait of
an M/G/1 queue has the Cramer-Lundberg tail ``P(W > w) ~ C exp(-theta w)``, ``x = theta S`` the positive root of
``rho (M(x) - 1) = x`` (Kingman's exponent, :func:`tco.core.serving.queueing.kingman_exponent`) and the exact constant
``C = (1 - rho) / (rho M'(x) - 1)`` (S. Asmussen, *Applied Probability and Queues*, 2nd ed., Springer, 2003,
chapter XIII, theorem 5.2 and corollary 5.3, the Cramer-Lundberg approximation; Kingman's bound
[kingman-1964] is the same tail with ``C = 1``). The prompt's own length is independent of the wait it meets
(FIFO, Poisson arrivals see time averages), so ``P(W + L X > t) ~ C M(x L / S) exp(-x t / S)``, whose log is
:func:`sojourn_log_tail`. At the percentile ``1 - epsilon`` the lane carries the largest ``rho`` whose tail at the
sojourn allowed, ``t = slack + L``, is ``epsilon`` (:func:`sojourn_utilization`: the root a bisection of fixed length
on ``ln x`` finds, reached by certified Newton steps), and never more than the deterministic rule carries
(Kingman's bound at mean lengths, today's model): the spread only takes capacity away, and ``c_s^2 -> 0`` joins
the deterministic rule. Checked against a Lindley recursion of one FIFO lane (``tests/test_sojourn.py``,
docs/model.md "Queueing"): gamma lengths of squared CV 0.186, 0.5 and 1 within 1 % of the simulated capacity; the
MLPerf Llama 3.1 405B dataset's own lengths (squared CV 0.186, bounded at 2.1x the mean) 13 % conservative where
the own prefill takes a third of the TTFT; lognormal lengths of squared CV 1 (a heavier tail than the gamma's) up to
60 % optimistic where the own prefill takes most of the target, within 8 % at 12 prefills of target.

**Many servers** (a prefill pool, a fleet's lanes): the square-root staffing of :mod:`tco.core.serving.queueing` with the
Allen-Cunneen factor at ``v`` for the wait, its slack shortened by the own prefill's excess at the percentile,
``L (X_q - 1)``, ``X_q`` the gamma quantile by the Wilson-Hilferty cube-root normal approximation
(:func:`length_quantile`). The lane takes the better of the two rules, as the deterministic lane takes the better of
square-root staffing and Kingman's bound.
"""

from __future__ import annotations

import numpy as np

from tco.core.draws import every_draw, remembered_for_numbers
from tco.core.serving import queueing

#: bisection steps on ``ln x`` for :func:`sojourn_utilization`: the bracket ``[1e-9, (1 - 1e-12) / v]`` spans at most
#: ``ln(1e13)`` = 30 (``v >= SCV_FLOOR``), so 44 halvings leave ``x`` within ``30 / 2^44 = 1.7e-12`` relative
SOJOURN_BISECTION_STEPS = 44
#: safeguarded Newton steps of :func:`newton_exponent` (the bisection takes the draws they leave uncertified)
SOJOURN_NEWTON_STEPS = 6
#: the half-width in ``ln x`` of the sign check that certifies a Newton root: below the bisection's own 1.7e-12 [-]
SOJOURN_ROOT_TOLERANCE = 1e-12
#: the smallest utilization at which a Newton root is certified: nearer the pole the tail's rounding (~1e-12) moves
#: the bisection's root by more than the check sees (up to 1.2e-8 relative in ``rho`` below 1e-4) [-]
SOJOURN_CERTIFIED_FLOOR = 1e-3
#: the relative margin by which a bound on the utilization must fall below the one to beat (rounding) [-]
BEAT_MARGIN = 1e-9
#: the smallest exponent searched (a slack of ~1e9 service times: utilization 1 - 1e-9) [-]
SOJOURN_EXPONENT_FLOOR = 1e-9
#: the largest exponent searched, as a share of the pole ``1/v`` of the gamma's generating function [-]
SOJOURN_POLE_SHARE = 1.0 - 1e-12
#: the smallest utilization searched: nearer the pole the asymptotic's constant is no longer meaningful (with the own
#: prefill the whole service the tail rises again below ~1e-3); a lane that cannot reach its target above it carries
#: this, nothing to speak of [-]
SOJOURN_UTILIZATION_FLOOR = 1e-6


def deterministic(length_scv) -> bool:
    """Whether every prompt is at the mean length in every draw (a number, 0): the deterministic lane applies.

    Parameters
    ----------
    length_scv : float or ndarray [-]
        Squared CV of the prompt length.

    Returns
    -------
    bool
        True for the number 0 (an array, even of zeros, takes the general path: the same answer, more work).
    """
    return not isinstance(length_scv, np.ndarray) and float(length_scv) == 0.0


@remembered_for_numbers
def length_quantile(length_scv, exceed_probability):
    """Prompt length exceeded with probability ``epsilon``, in units of the mean: the gamma quantile of mean 1 and
    squared CV ``v`` by the Wilson-Hilferty approximation, ``X_q = (1 - v/9 + z sqrt(v/9))^3``, ``z`` the normal
    quantile at ``1 - epsilon`` (:func:`tco.core.serving.queueing.normal_quantile`). 1 when ``v = 0``; exponential lengths
    (``v = 1``) at ``epsilon = 0.01``: 4.61 (exact ``ln 100 = 4.605``).

    Parameters
    ----------
    length_scv : float or ndarray [-]
        Squared coefficient of variation of the prompt length ``v``.
    exceed_probability : float or ndarray [-]
        ``epsilon``, below 1/2.

    Returns
    -------
    ndarray [-]
        ``X_q``, at least 0.

    References
    ----------
    [wilson-hilferty-1931] the cube root of a chi-square (gamma) variable is nearly normal.
    """
    v9 = np.asarray(length_scv, float) / 9.0
    z = queueing.normal_quantile(1.0 - np.asarray(exceed_probability, float))
    return np.maximum(1.0 - v9 + z * np.sqrt(v9), 0.0) ** 3


def sojourn_log_tail(x, length_scv, own_ratio):
    """``ln(C M(x l))`` and ``rho`` at the exponent ``x = theta S``: the log of the Cramer-Lundberg constant of the
    lane's sojourn tail ``P(W + L X > t) ~ C M(x l) exp(-x t / S)``, ``l = L / S`` (module docstring).

    ``M(x) = exp(K)``, ``K = -ln(1 - v x) / v`` (at most :data:`tco.core.serving.queueing.EXPONENT_CAP`);
    ``rho = x / (M(x) - 1)``; ``M'(x) = M(x) / (1 - v x)``;
    ``C = (1 - rho) / (rho M'(x) - 1)``; ``ln M(x l) = -ln(1 - v x l) / v``.

    Parameters
    ----------
    x : float or ndarray [-]
        ``theta S``, in ``(0, 1/v)``.
    length_scv : float or ndarray [-]
        ``v``, at least :data:`tco.core.serving.queueing.SCV_FLOOR`.
    own_ratio : float or ndarray [-]
        ``l = L / S`` in ``[0, 1]``.

    Returns
    -------
    ln_tail : ndarray [-]
        ``ln(C M(x l))``.
    rho : ndarray [-]
        The utilization per lane at ``x``.

    References
    ----------
    [asmussen-2003] the Cramer-Lundberg approximation of the M/G/1 wait.
    """
    vx = length_scv * x
    log_inner = np.log1p(-vx)
    mgf_excess = np.expm1(np.minimum(-log_inner / length_scv, queueing.EXPONENT_CAP))
    rho = x / mgf_excess
    constant = (1.0 - rho) / (rho * (mgf_excess + 1.0) / (1.0 - vx) - 1.0)
    return np.log(constant) - np.log1p(-vx * own_ratio) / length_scv, rho


def sojourn_utilization(service_s, own_s, slack_s, length_scv, exceed_probability, beat=0.0, shortened_s=None,
                        kingman_utilization=None):
    """Largest utilization per lane ``rho`` at which ``P(W + L X > slack + L) <= epsilon`` (module docstring).

    The smallest exponent ``x`` with ``f(x) = ln(C M(x l)) - x (slack + L) / S - ln epsilon <= 0``
    (:func:`sojourn_log_tail`) in the bracket from ``1e-9`` to the exponent at utilization
    :data:`SOJOURN_UTILIZATION_FLOOR` (Kingman's, :func:`tco.core.serving.queueing.kingman_exponent`; near the pole ``1/v``
    the asymptotic constant is no longer meaningful), as :data:`SOJOURN_BISECTION_STEPS` halvings of ``ln x`` would
    find it (:func:`bisected_exponent`), by a safeguarded Newton method where the root is certified unique
    (:func:`newton_exponent`): the bisection runs only on the draws the certificate leaves, compressed. Where the tail
    is not monotone on the bracket the bisection can only end at a smaller utilization (a probe beyond the root with
    the tail above ``epsilon`` moves on towards the pole): safe. ``rho = x / (M(x) - 1)`` there, at most
    :func:`tco.core.serving.queueing.kingman_utilization` at mean lengths, and 0 where the own prefill at its quantile alone
    misses the target (:func:`length_quantile`). Where the rule only matters above a utilization ``beat`` (the other
    rule's, :func:`lane_servers`) and a point the Newton steps found with the tail above ``epsilon``, left of where
    ``f`` may turn, shows the root's utilization below ``beat``, that point's utilization stands in (below ``beat``
    too: the caller's answer is the same).

    Parameters
    ----------
    service_s : float or ndarray [s]
        Mean lane service time ``S``.
    own_s : float or ndarray [s]
        The length-proportional part of a prompt's own prefill at the mean length ``L`` (at most ``S``).
    slack_s : float or ndarray [s]
        The wait allowed at mean lengths (TTFT target less the mean prompt's prefill and the fixed terms).
    length_scv : float or ndarray [-]
        Squared CV of the prompt length ``v`` (floored at :data:`tco.core.serving.queueing.SCV_FLOOR`).
    exceed_probability : float or ndarray [-]
        ``epsilon``.
    beat : float or ndarray [-]
        The utilization the rule has to exceed to matter to the caller (0: the exact utilization everywhere).
    shortened_s : float or ndarray or None [s]
        ``slack - L (X_q - 1)`` (:func:`shortened_slack_s`) when the caller has it (the same bits; None: computed here).
    kingman_utilization : float or ndarray or None [-]
        Kingman's utilization at mean lengths (:func:`tco.core.serving.queueing.kingman_utilization` at ``c_s^2 = 0``) when
        the caller has it (None: computed here).

    Returns
    -------
    ndarray [-]
        The utilization per lane, in ``[0, 1]`` (at most ``beat`` where the exact one is).

    References
    ----------
    [asmussen-2003] the Cramer-Lundberg approximation of the M/G/1 wait.
    [kingman-1964] the exponential bound on the GI/G/1 wait.
    """
    deterministic = (queueing.kingman_utilization(service_s, slack_s, 0.0, exceed_probability) if kingman_utilization is None
                     else kingman_utilization)
    if shortened_s is None:
        shortened_s = shortened_slack_s(slack_s, own_s, length_scv, exceed_probability)
    parts = np.broadcast_arrays(service_s, own_s, slack_s, length_scv, exceed_probability, beat, deterministic, shortened_s)
    shape = parts[0].shape
    service_s, own_s, slack_s, length_scv, epsilon, beat, result, shortened_s = (np.ravel(part) for part in parts)
    result = np.array(result, float)  # written below
    # the utilization is at most the deterministic rule's: below ``beat`` that one stands in; where the own prefill
    # alone misses the target it is 0
    todo = np.flatnonzero(result >= beat * (1.0 - BEAT_MARGIN))
    fits = shortened_s[todo] > 0.0
    result[todo[~fits]] = 0.0
    todo = todo[fits]
    if todo.size:
        service_s, own_s, slack_s, length_scv, epsilon, beat = (
            part[todo] for part in (service_s, own_s, slack_s, length_scv, epsilon, beat))
        v = np.maximum(length_scv, queueing.SCV_FLOOR)
        service = np.maximum(service_s, queueing.SERVICE_FLOOR_S)
        own_ratio = np.minimum(np.maximum(own_s, 0.0) / service, 1.0)
        sojourn = np.maximum(slack_s, 0.0) / service + own_ratio
        log_epsilon = np.log(epsilon)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # a NaN or infinity compares False
            x, certified, below = newton_exponent(v, own_ratio, sojourn, log_epsilon)
            _, rho_above = sojourn_log_tail(below, v, own_ratio)
            beaten = ~certified & (rho_above < beat * (1.0 - BEAT_MARGIN))
            x = np.where(beaten, below, x)
            rest = np.flatnonzero(~(certified | beaten))
            if rest.size:
                x[rest] = bisected_exponent(v[rest], own_ratio[rest], sojourn[rest], log_epsilon[rest])
            _, rho = sojourn_log_tail(x, v, own_ratio)
        result[todo] = np.minimum(np.nan_to_num(rho, nan=0.0), result[todo])
    return result.reshape(shape)


def _exponent_bracket(v):
    """``(ln x_low, ln x_high)`` of :func:`sojourn_utilization`'s search: ``x_low = 1e-9``, ``x_high`` the exponent at
    utilization :data:`SOJOURN_UTILIZATION_FLOOR`, below the pole [-]."""
    high = np.log(np.minimum(queueing.kingman_exponent(SOJOURN_UTILIZATION_FLOOR, v), SOJOURN_POLE_SHARE / v))
    return np.log(SOJOURN_EXPONENT_FLOOR) + 0.0 * high, high


def bisected_exponent(length_scv, own_ratio, sojourn, log_epsilon):
    """The exponent ``x`` of :func:`sojourn_utilization` by :data:`SOJOURN_BISECTION_STEPS` halvings of ``ln x``
    (the bracket's upper end when the tail is above ``epsilon`` throughout) [-].

    Parameters
    ----------
    length_scv : ndarray [-]
        ``v``, at least :data:`tco.core.serving.queueing.SCV_FLOOR`.
    own_ratio : ndarray [-]
        ``l = L / S`` in ``[0, 1]``.
    sojourn : ndarray [-]
        The sojourn allowed in service times, ``(slack + L) / S``.
    log_epsilon : ndarray [-]
        ``ln epsilon``.

    Returns
    -------
    ndarray [-]
        The smallest probed ``x`` at which the tail is within ``epsilon``: within ``30 / 2^44 = 1.7e-12`` relative
        above the root where the tail is monotone on the bracket.
    """
    low, high = _exponent_bracket(length_scv)
    high = high + 0.0 * (own_ratio + sojourn + log_epsilon)
    width = high - low
    for step in range(1, SOJOURN_BISECTION_STEPS + 1):
        middle = high - width * 0.5**step  # the low end is high - width / 2^(step - 1): one bound carried, not two
        x = np.exp(middle)
        tail, _ = sojourn_log_tail(x, length_scv, own_ratio)
        high = np.where(tail - x * sojourn <= log_epsilon, middle, high)
    return np.exp(high)


def newton_exponent(length_scv, own_ratio, sojourn, log_epsilon):
    """The exponent ``x`` of :func:`sojourn_utilization` by safeguarded Newton steps on ``f(e^y)``, ``y = ln x``, and
    whether it is certified to be :func:`bisected_exponent`'s root (to :data:`SOJOURN_ROOT_TOLERANCE`).

    **Unique crossing.** ``f = ln C(x) + h(x) - ln epsilon`` with ``h(x) = ln M(x l) - x s`` (``s`` the sojourn in
    service times): ``ln C`` falls with ``x`` (``C = 1`` at ``x = 0``; ``ln(1 - x)`` for exponential lengths; checked
    over the parameter domain in ``tests/test_sojourn.py``), ``h`` is convex (a cumulant generating function less a
    line) with its minimum at ``x_m = (1 - l / s) / (v l)`` where ``h' = l / (1 - v x l) - s = 0``. So ``f`` falls
    strictly on ``[x_low, x_m]``, and on ``[x_m, x_p]`` it is at most ``U = ln C(x_m) + h(x_p) - ln epsilon``.
    While the tail stays above ``epsilon`` the bisection probes ``ln x_high - width / 2^k``, ``k = 1, 2, ...``; where
    the root ``x* < x_m`` and the first probe ``x_p`` beyond it has ``x_p <= x_m`` or ``U <= 0`` (``f`` is below 0 on
    ``[x*, x_p]``) the bisection steps into ``[x_(p-1), x_p]``, where ``f`` changes sign once, and converges to ``x*``.

    **Steps.** From Kingman's deterministic exponent ``ln(1/epsilon) / s`` (the root with ``C = 1`` and ``l = 0``),
    :data:`SOJOURN_NEWTON_STEPS` Newton steps in ``y``, each kept inside the bracket that the signs seen so far leave
    (its midpoint otherwise); ``df/dx = (ln C)' + l / (1 - v x l) - s`` with ``(ln C)' = D / (E (1 - rho)) - D' / D``,
    ``E = M - 1``, ``rho = x / E``, ``D = rho M' - 1``, ``D' = -D M' / E + rho M''``, ``M' = M / (1 - v x)``,
    ``M'' = (1 + v) M' / (1 - v x)``. Certified where also ``f(x* e^-tol) > 0 >= f(x* e^tol)`` and the utilization
    is at least :data:`SOJOURN_CERTIFIED_FLOOR`; ``x = x* e^tol`` is returned (the side of the root the bisection
    ends on). Over 10^6 random draws (``v`` 1e-4..10, ``l`` 0..1, slack 1e-3..1e4 service times, ``epsilon``
    1e-4..0.5) the certified utilization is the bisection's within 3.8e-10 relative.

    Parameters
    ----------
    length_scv, own_ratio, sojourn, log_epsilon : ndarray [-, -, -, -]
        As in :func:`bisected_exponent` (one shape).

    Returns
    -------
    x : ndarray [-]
        The exponent (meaningful where certified).
    certified : ndarray of bool [-]
        Where it is the bisection's root.
    below : ndarray [-]
        An exponent with the tail above ``epsilon`` on ``[x_low, below]``: the bisection's ends beyond it.
    """
    v, l, s = length_scv, own_ratio, sojourn  # noqa: E741 (the module docstring's l = L / S)
    low, high = _exponent_bracket(v)
    x_low, x_high = np.exp(low), np.exp(high)
    x_m = np.minimum(np.maximum((1.0 - l / s) / (v * l), x_low), x_high)  # l = 0: infinite, the bracket's end

    def excess(x):  # f(x) [-]
        tail, _ = sojourn_log_tail(x, v, l)
        return tail - x * s - log_epsilon

    b = np.log(x_m)
    a = np.where(excess(x_m) > 0.0, b, low)  # no root left of x_m: the bisection's ends beyond it
    y = np.minimum(np.maximum(np.log(-log_epsilon / s), a), b)
    for _ in range(SOJOURN_NEWTON_STEPS):
        x = np.exp(y)
        vx = v * x
        mgf_excess = np.expm1(np.minimum(-np.log1p(-vx) / v, queueing.EXPONENT_CAP))
        rho = x / mgf_excess
        slope = (mgf_excess + 1.0) / (1.0 - vx)  # M'
        d = rho * slope - 1.0
        d_slope = -d * slope / mgf_excess + rho * (1.0 + v) * slope / (1.0 - vx)
        f = np.log((1.0 - rho) / d) - np.log1p(-vx * l) / v - x * s - log_epsilon
        df_dy = x * (d / (mgf_excess * (1.0 - rho)) - d_slope / d + l / (1.0 - vx * l) - s)
        above = f > 0.0
        a, b = np.where(above, y, a), np.where(above, b, y)
        step = y - f / df_dy
        y = np.where((step >= a) & (step <= b), step, 0.5 * (a + b))
    # the bisection's probes while the tail is above epsilon: high - width / 2^k; the first at or beyond the root
    width = high - low
    k = np.minimum(np.maximum(np.ceil(np.log2(width / (high - y))), 1.0), SOJOURN_BISECTION_STEPS)
    probe = high - width * np.exp2(-k)
    before = high - width * np.exp2(1.0 - k)
    x_probe = np.exp(probe)
    log_constant, _ = sojourn_log_tail(x_m, v, 0.0)
    bound = log_constant - np.log1p(-v * x_probe * l) / v - x_probe * s - log_epsilon  # f on [x_m, probe] is below
    x = np.exp(y + SOJOURN_ROOT_TOLERANCE)
    tail, rho = sojourn_log_tail(x, v, l)
    certified = ((before < y - SOJOURN_ROOT_TOLERANCE) & (probe >= y + SOJOURN_ROOT_TOLERANCE)
                 & ((x_probe <= x_m) | (bound <= 0.0)) & (y < np.log(x_m)) & (rho >= SOJOURN_CERTIFIED_FLOOR)
                 & (excess(np.exp(y - SOJOURN_ROOT_TOLERANCE)) > 0.0) & (tail - x * s - log_epsilon <= 0.0))
    return x, certified, np.exp(a)


def sojourn_wait_s(utilization, service_s, own_s, length_scv, exceed_probability, deterministic_wait_s=None):
    """The lane's wait at the percentile as the TTFT sees it: the sojourn quantile less the mean own prefill,
    ``t - L`` with ``ln(C M(x l)) - x t / S = ln epsilon`` at ``x`` = Kingman's exponent at ``rho`` for gamma
    service (:func:`tco.core.serving.queueing.kingman_exponent`), at least Kingman's wait at mean lengths.

    Parameters
    ----------
    utilization : float or ndarray [-]
        ``rho = a / c`` per lane.
    service_s, own_s, length_scv, exceed_probability : float or ndarray [s, s, -, -]
        As in :func:`sojourn_utilization`.
    deterministic_wait_s : float or ndarray or None [s]
        Kingman's wait at mean lengths (:func:`tco.core.serving.queueing.kingman_wait_s`) when the caller has it (None:
        computed here).

    Returns
    -------
    ndarray [s]
        The wait-equivalent quantile (the TTFT is the fixed terms, ``L`` and this).

    References
    ----------
    [asmussen-2003] the Cramer-Lundberg approximation of the M/G/1 wait.
    """
    v = np.maximum(length_scv, queueing.SCV_FLOOR)
    service = np.maximum(service_s, queueing.SERVICE_FLOOR_S)
    own_ratio = np.minimum(np.maximum(own_s, 0.0) / service, 1.0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # an idle lane (rho = 0) waits 0
        x = np.minimum(queueing.kingman_exponent(utilization, v), SOJOURN_POLE_SHARE / v)
        tail, _ = sojourn_log_tail(x, v, own_ratio)
        sojourn = service * (tail - np.log(np.asarray(exceed_probability, float))) / x
        deterministic = (queueing.kingman_wait_s(utilization, service_s, 0.0, exceed_probability)
                         if deterministic_wait_s is None else deterministic_wait_s)
    return np.fmax(sojourn - own_ratio * service, deterministic)  # an idle lane's NaN tail (0 / 0): Kingman's wait


def shortened_slack_s(slack_s, own_s, length_scv, exceed_probability):
    """The square-root rule's slack with the own prefill at its quantile: ``slack - L (X_q - 1)``
    (:func:`length_quantile`); callers that size several rules at one lane share compute it once.

    Parameters
    ----------
    slack_s, own_s, length_scv, exceed_probability : float or ndarray [s, s, -, -]
        As in :func:`sojourn_utilization`.

    Returns
    -------
    ndarray [s]
        The slack left for the wait (0 or less where the own prefill alone misses the target).
    """
    return slack_s - np.maximum(own_s, 0.0) * (length_quantile(length_scv, exceed_probability) - 1.0)


def lane_servers(offered_erlangs, service_s, own_s, slack_s, length_scv, exceed_probability, log_term=None,
                 dispatched=False):
    """Lanes (continuous) that keep the percentile TTFT of prompts of varying length: the fewer of square-root
    staffing (Allen-Cunneen at ``v``, slack shortened by the own prefill's excess) and ``a / rho`` at
    :func:`sojourn_utilization`; at ``v = 0`` exactly :func:`tco.core.serving.queueing.servers_within_wait` with
    Kingman's bound.

    Parameters
    ----------
    offered_erlangs : float or ndarray [Erlangs]
        Offered load ``a = lambda S``.
    service_s, own_s, slack_s, length_scv, exceed_probability : float or ndarray [s, s, s, -, -]
        As in :func:`sojourn_utilization`.
    log_term : float or ndarray or None [-]
        :func:`tco.core.serving.queueing.wait_log_term` of ``epsilon`` when the caller has it (deterministic lengths).
    dispatched : bool
        Prompts dispatched at arrival to one lane's replica (colocated lanes behind a router), not handed to the first
        lane to free (a prefill pool's central queue): the square-root rule's dispatched form
        (:mod:`tco.core.serving.queueing`).

    Returns
    -------
    ndarray [lanes]
        Lanes needed.

    References
    ----------
    [halfin-whitt-1981] square-root staffing.
    [asmussen-2003] the Cramer-Lundberg approximation of the M/G/1 wait.
    """
    if deterministic(length_scv):
        return queueing.servers_within_wait(offered_erlangs, service_s, slack_s, 0.0, exceed_probability, log_term,
                                            kingman=True, dispatched=dispatched)
    a = np.maximum(np.asarray(offered_erlangs, float), 0.0)
    shortened = shortened_slack_s(slack_s, own_s, length_scv, exceed_probability)
    square_root = square_root_lanes(a, service_s, own_s, slack_s, length_scv, exceed_probability, shortened, dispatched)
    kingman = queueing.kingman_utilization(service_s, slack_s, 0.0, exceed_probability)
    if per_lane_cannot_win(square_root, a, kingman):
        return square_root
    return np.minimum(square_root, per_lane_servers(a, service_s, own_s, slack_s, length_scv, exceed_probability, square_root,
                                                    shortened, kingman))


def per_lane_servers(offered_erlangs, service_s, own_s, slack_s, length_scv, exceed_probability, fewest, shortened_s=None,
                     kingman_utilization=None):
    """``a / rho`` at :func:`sojourn_utilization`, exact where it is below ``fewest`` (elsewhere at least ``fewest``).

    Parameters
    ----------
    offered_erlangs : float or ndarray [Erlangs]
        Offered load ``a``, at least 0.
    service_s, own_s, slack_s, length_scv, exceed_probability : float or ndarray [s, s, s, -, -]
        As in :func:`sojourn_utilization`.
    fewest : float or ndarray [lanes]
        The lanes of the other rule (square-root staffing): only fewer matter.
    shortened_s, kingman_utilization : float or ndarray or None [s, -]
        As in :func:`sojourn_utilization`.

    Returns
    -------
    ndarray [lanes]
        Lanes needed by the per-lane rule.
    """
    with np.errstate(divide="ignore", invalid="ignore"):  # no load or no lanes: nothing to beat
        beat = np.nan_to_num(offered_erlangs / fewest, nan=0.0)
    return queueing.servers_at_utilization(offered_erlangs, sojourn_utilization(service_s, own_s, slack_s, length_scv,
                                                                                exceed_probability, beat, shortened_s,
                                                                                kingman_utilization))


def per_lane_cannot_win(square_root_lanes_, offered_erlangs, kingman_utilization) -> bool:
    """Whether the square-root rule needs no more lanes than the per-lane rule in every draw, so that the fewer of
    the two is the square-root rule's bit for bit and :func:`sojourn_utilization` need not run (a call's fixed cost;
    per draw it makes the same test): the per-lane utilization is at most Kingman's at mean lengths, so its lanes are
    at least ``a / rho_Kingman``.

    Parameters
    ----------
    square_root_lanes_ : float or ndarray [lanes]
        :func:`square_root_lanes`.
    offered_erlangs : float or ndarray [Erlangs]
        Offered load ``a``, at least 0.
    kingman_utilization : float or ndarray [-]
        :func:`tco.core.serving.queueing.kingman_utilization` at ``c_s^2 = 0``.

    Returns
    -------
    bool
        True when the per-lane rule cannot give fewer lanes in any draw (a NaN fails the test).
    """
    fewest = queueing.servers_at_utilization(offered_erlangs, kingman_utilization)  # queueing.kingman_servers
    return bool(every_draw(square_root_lanes_ <= fewest))


def square_root_lanes(offered_erlangs, service_s, own_s, slack_s, length_scv, exceed_probability, shortened_s=None,
                      dispatched=False):
    """The square-root rule of :func:`lane_servers` alone (never below it: callers skip the per-lane rule where
    this cannot bind): Allen-Cunneen at ``v``, slack ``slack - L (X_q - 1)``.

    Parameters
    ----------
    offered_erlangs : float or ndarray [Erlangs]
        Offered load ``a``, at least 0.
    service_s, own_s, slack_s, length_scv, exceed_probability : float or ndarray [s, s, s, -, -]
        As in :func:`sojourn_utilization`.
    shortened_s : float or ndarray or None [s]
        As in :func:`sojourn_utilization`.
    dispatched : bool
        As in :func:`lane_servers`.

    Returns
    -------
    ndarray [lanes]
        Lanes needed by square-root staffing.

    References
    ----------
    [halfin-whitt-1981] square-root staffing.
    [whitt-1993] the Allen-Cunneen approximation of the GI/G/m wait.
    """
    shortened = shortened_slack_s(slack_s, own_s, length_scv, exceed_probability) if shortened_s is None else shortened_s
    servers = queueing.servers_within_wait(offered_erlangs, service_s, shortened, length_scv, exceed_probability,
                                           dispatched=dispatched)
    return np.where(shortened > 0.0, servers, np.inf)  # the own prefill alone misses the target: no lanes suffice


def lane_load(servers, service_s, own_s, slack_s, length_scv, exceed_probability, dispatched=False):
    """Largest offered load ``c`` lanes carry within the percentile (the inverse of :func:`lane_servers`).

    Parameters
    ----------
    servers : float or ndarray [lanes]
        Lanes ``c``.
    service_s, own_s, slack_s, length_scv, exceed_probability : float or ndarray [s, s, s, -, -]
        As in :func:`sojourn_utilization`.
    dispatched : bool
        As in :func:`lane_servers`.

    Returns
    -------
    ndarray [Erlangs]
        The more of the square-root rule's load and ``c rho``.
    """
    if deterministic(length_scv):
        return queueing.offered_load_within_wait(servers, service_s, slack_s, 0.0, exceed_probability, kingman=True,
                                                 dispatched=dispatched)
    shortened = shortened_slack_s(slack_s, own_s, length_scv, exceed_probability)
    square_root = queueing.offered_load_within_wait(servers, service_s, shortened, length_scv, exceed_probability,
                                                    dispatched=dispatched) * (shortened > 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):  # no lanes: nothing to beat
        beat = np.nan_to_num(square_root / servers, nan=0.0)
    return np.maximum(square_root, servers * sojourn_utilization(service_s, own_s, slack_s, length_scv, exceed_probability,
                                                                 beat, shortened))


def lane_wait_s(offered_erlangs, servers, service_s, own_s, length_scv, exceed_probability, sizing_slack_s, log_term=None,
                dispatched=False):
    """The lanes' wait at the percentile as the TTFT sees it (the shorter of the two rules' waits, the square-root
    one plus the own prefill's excess ``L (X_q - 1)``); at ``v = 0`` exactly
    :func:`tco.core.serving.queueing.wait_quantile_s` with Kingman's bound.

    Parameters
    ----------
    offered_erlangs, servers : float or ndarray [Erlangs, lanes]
        Load ``a`` and lanes ``c``.
    service_s, own_s, length_scv, exceed_probability : float or ndarray [s, s, -, -]
        As in :func:`sojourn_utilization`.
    sizing_slack_s : float or ndarray [s]
        The slack the lanes were sized for.
    log_term : float or ndarray or None [-]
        As in :func:`tco.core.serving.queueing.wait_quantile_s`.
    dispatched : bool
        As in :func:`lane_servers`.

    Returns
    -------
    ndarray [s]
        The wait-equivalent quantile.
    """
    if deterministic(length_scv):
        return queueing.wait_quantile_s(offered_erlangs, servers, service_s, 0.0, exceed_probability, sizing_slack_s,
                                        log_term, kingman=True, dispatched=dispatched)
    excess = sizing_slack_s - shortened_slack_s(sizing_slack_s, own_s, length_scv, exceed_probability)
    square_root = queueing.wait_quantile_s(offered_erlangs, servers, service_s, length_scv, exceed_probability,
                                           sizing_slack_s - excess, dispatched=dispatched) + excess
    rho = np.maximum(np.asarray(offered_erlangs, float), 1e-300) / np.maximum(np.asarray(servers, float), 1e-300)
    # the per-lane wait is at least Kingman's at mean lengths: where the square-root wait is no longer, it stands
    kingman = queueing.kingman_wait_s(rho, service_s, 0.0, exceed_probability)
    if every_draw(square_root <= kingman):
        return square_root
    return np.minimum(square_root, sojourn_wait_s(rho, service_s, own_s, length_scv, exceed_probability, kingman))
