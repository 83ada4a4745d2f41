"""Waiting for a server in a pool under Poisson arrivals: square-root staffing in closed form.

A pool of ``c`` identical servers (decode slots, prefill lanes) receives Poisson
arrivals (``c_a^2 = 1``) at offered load ``a = lambda S`` Erlangs, ``S`` the mean service
time [s] with squared coefficient of variation ``c_s^2``. Everything here is a closed form
that broadcasts over numpy arrays, so one call sizes one pool or a million draws.

Model of the waiting time ``W`` (documented in docs/model.md, checked against the exact
Erlang C formula and a discrete-event simulation in ``tests/test_queueing.py``):

* spare capacity in units of the Poisson spread, ``beta = (c - a - delta) / sqrt(a)``:
  square-root staffing (S. Halfin and W. Whitt, "Heavy-traffic limits for queues with many
  exponential servers", Operations Research 29(3), 1981; S. Borst, A. Mandelbaum and
  M. Reiman, "Dimensioning large call centers", Operations Research 52(1), 2004). The
  server held back, ``delta = 1/(1 + k slack / S)`` (:func:`small_pool_margin`), is our
  correction for small pools with little slack.
* probability of waiting ``P(W > 0) ~ Q(beta) <= exp(-beta^2/2) / 2`` (the Gaussian tail
  of the Halfin-Whitt limit with the Chernoff-type bound on ``Q``);
* conditional on waiting, the wait is exponential with rate ``k (c - a) / S``,
  ``k = 2 / (c_a^2 + c_s^2)`` -- exact for M/M/c, with the Allen-Cunneen correction for
  service variability (A. O. Allen, *Probability, Statistics, and Queueing Theory*, 2nd
  ed., 1990, section 6.4).

Hence ``P(W > w) = exp(-beta^2/2 - kappa(w) beta) / 2``, ``kappa(w) = k w sqrt(a) / S``.

A queue whose requests are **dispatched** at arrival to one server (``dispatched=True``: a colocated pool's prefill
lanes, a router sending each request at once to one replica, as serving routers do; a disaggregated prefill pool
keeps the shared queue of a central scheduler) does not hand a waiting request to the
first server to free: one that finds every server busy waits out the remaining work of the server it was sent to,
whose tail decays at ``k / S`` whatever the spare capacity. Its conditional wait is that of one server beyond the
first spare one, ``P(W > w) = exp(-beta^2/2 - u(w) min(sqrt(a) beta, 1)) / 2``, ``u(w) = k w / S``: the pooled
rule where less than one server is spare, ``exp(-beta^2/2 - u(w)) / 2`` above. Its staffing margin is the larger of
the pooled one and ``sqrt(2 max(L - u, 0))`` (:func:`dispatched_margin`); the wait quantile divides by
``min(sqrt(a) beta, 1)`` instead of ``sqrt(a) beta``. Measured (tests/fleet_sweep.py, docs/model.md "Dispatched
lanes"): 13 one-GPU replicas whose lanes carry 6.79 Erlangs of 0.345 s prompts simulate a p99 lane wait of ~0.29 s;
at a lane slack of 0.1 s the pooled rule gives 0.050 s and the dispatched one 0.279 s
(``test_dispatched_lanes_by_hand``).

At few servers that Gaussian tail is coarse (up to one server above exact below 3 Erlangs; at one
prefill lane a factor of ~1.5 in load). Each rule therefore also takes Kingman's exponential bound
``P(W > w) <= exp(-theta w)`` (J. F. C. Kingman, "A martingale inequality in the theory of queues",
Proc. Cambridge Philos. Soc. 60(2), 1964: exact as a bound for a GI/G/1 queue), ``theta`` the
positive root of ``lambda (E[exp(theta S)] - 1) = theta`` under Poisson arrivals, for one server at
the pool's utilization ``rho = a / c`` (each of ``c`` servers fed ``1/c`` of the arrivals; a shared
queue, which never idles a server while a request waits, does better: an approximation beyond one
server). The service time in units of its mean is gamma with the service's squared CV
(``E[exp(x X)] = (1 - c_s^2 x)^(-1/c_s^2)``, ``e^x`` when deterministic, exact M/M/1 at 1), so
``rho`` carries the wait ``w`` within ``epsilon`` when ``rho <= x / (E[exp(x X)] - 1)``,
``x = S ln(1/epsilon) / w`` (closed form: :func:`kingman_utilization`). For the queues that ask for
it (``kingman=True``: the prefill lanes, a few per replica, slack of several service times) servers,
load and wait are the better of the two rules (fewer servers, more load, a shorter wait); both
are bounds on the same tail, so the better is one too. The slot queues hold a request for its
whole decode (tens of seconds against a TTFT slack of seconds: ``x >> 1``, ``rho ~ 0``) and keep
the square-root rule alone.
Against the exact M/M/c staffing (smallest whole ``c`` with ``C(c, a) e^{-(c-a) w/S} <= epsilon``,
Erlang C by recursion) the rule :func:`servers_within_wait`, rounded up to whole servers,
is within -1 % / +8 % for ``a >= 10`` Erlangs, never below and at most 40 % above for
``3 <= a < 10``, and at most one server above below that, for ``epsilon`` in
[0.005, 0.25] and slacks of 0 to 100 service times (``tests/test_serving.py``).
"""

from __future__ import annotations

import numpy as np

from tco.core.draws import every_draw, remembered_for_numbers

#: Poisson arrivals
ARRIVAL_SCV = 1.0

# Abramowitz and Stegun 26.2.23: rational approximation of the normal quantile, |error| < 4.5e-4
_AS_C = (2.515517, 0.802853, 0.010328)
_AS_D = (1.432788, 0.189269, 0.001308)


@remembered_for_numbers
def normal_quantile(q):
    """Standard normal quantile ``z_q`` for ``q`` in [0.5, 1).

    ``t = sqrt(-2 ln(1 - q))``, ``z = t - (c0 + c1 t + c2 t^2) / (1 + d1 t + d2 t^2 + d3 t^3)``,
    absolute error below 4.5e-4 (z_0.99 = 2.3268 vs 2.3263). A rational formula, so the
    workbook computes the same number with the same arithmetic.

    Parameters
    ----------
    q : float or ndarray [-]
        Probability, 0.5 <= q < 1.

    Returns
    -------
    ndarray [-]
        The quantile ``z_q``.

    References
    ----------
    [abramowitz-stegun] formula 26.2.23.
    """
    t = np.sqrt(-2.0 * np.log(1.0 - np.asarray(q, float)))
    c0, c1, c2 = _AS_C
    d1, d2, d3 = _AS_D
    return t - (c0 + c1 * t + c2 * t * t) / (1.0 + d1 * t + d2 * t * t + d3 * t * t * t)


def tail_decay_factor(service_scv):
    """Allen-Cunneen factor ``k = 2 / (c_a^2 + c_s^2)`` of the wait's exponential tail.

    Parameters
    ----------
    service_scv : float or ndarray [-]
        Squared coefficient of variation of the service time ``c_s^2`` (arrivals Poisson, ``c_a^2 = 1``).

    Returns
    -------
    ndarray [-]
        The factor ``k`` (1 for Poisson arrivals and exponential service).

    References
    ----------
    [whitt-1993] the Allen-Cunneen approximation of the GI/G/m wait.
    """
    return 2.0 / (ARRIVAL_SCV + np.asarray(service_scv, float))


#: a service time below this is zero work (e.g. prefill fully hidden behind decode at phase overlap 1): ``u`` stays
#: a number, so zero load needs zero servers beyond the small-pool margin, not ``0 / 0`` [s]
SERVICE_FLOOR_S = 1e-200


def decay_per_server(service_s, slack_s, service_scv):
    """``u = k slack / max(S, S_min)``: how many Poisson spreads of spare capacity one service time of slack is worth
    (``k`` :func:`tail_decay_factor`; a negative slack counts as 0).

    Parameters
    ----------
    service_s, slack_s : float or ndarray [s]
        Mean service time ``S`` and the wait allowed.
    service_scv : float or ndarray [-]
        Squared coefficient of variation of the service time.

    Returns
    -------
    ndarray [-]
        ``u``.
    """
    return tail_decay_factor(service_scv) * np.maximum(slack_s, 0.0) / np.maximum(service_s, SERVICE_FLOOR_S)


def small_pool_margin(service_s, slack_s, service_scv):
    """Servers added for small pools, ``delta = 1 / (1 + u)``, ``u = k slack / S``.

    The Gaussian tail understates the wait of a few servers at little slack (Erlang C is
    skewed); one extra server fixes that (whole-server staffing at most one server above
    the exact one for ``a < 3``). With slack of many service times the exponential decay
    decides and the extra server would only over-provision, so it fades as ``1/(1 + u)``.
    It does not depend on the load, so the staffing stays increasing in the load and has a
    closed-form inverse.

    Parameters
    ----------
    service_s : float or ndarray [s]
        Mean service time ``S``.
    slack_s : float or ndarray [s]
        Wait allowed.
    service_scv : float or ndarray [-]
        Squared coefficient of variation of the service time.

    Returns
    -------
    ndarray [servers]
        The margin ``delta``, in (0, 1].
    """
    return 1.0 / (1.0 + decay_per_server(service_s, slack_s, service_scv))


@remembered_for_numbers
def wait_log_term(exceed_probability):
    """``L = ln(1 / (2 epsilon))``, at least 0: the log term of the square-root staffing [-].

    Computed once per queue by callers that size many candidates against the same ``epsilon``
    (:func:`servers_within_wait` and :func:`wait_quantile_s` take it as ``log_term``).

    Parameters
    ----------
    exceed_probability : float or ndarray [-]
        Allowed probability ``epsilon`` of waiting longer than the slack.

    Returns
    -------
    ndarray [-]
        ``max(ln(0.5 / epsilon), 0)``.

    References
    ----------
    [halfin-whitt-1981] square-root staffing.
    """
    return np.maximum(np.log(0.5 / np.asarray(exceed_probability, float)), 0.0)


def servers_within_wait(offered_erlangs, service_s, slack_s, service_scv, exceed_probability, log_term=None,
                        kingman=False, dispatched=False):
    """Servers (continuous) so that ``P(W > slack) <= epsilon``: ``c = a + beta sqrt(a) + delta``.

    The staffing margin ``beta``, spare servers in Poisson spreads, solves ``beta^2/2 + K beta = L``:
    ``beta = sqrt(K^2 + 2L) - K`` with ``K = k slack sqrt(a) / S`` (:func:`decay_per_server`) and
    ``L = ln(1/(2 epsilon))`` (:func:`wait_log_term`, zero when ``epsilon >= 1/2``); ``delta`` is
    :func:`small_pool_margin`.

    Parameters
    ----------
    offered_erlangs : float or ndarray [Erlangs]
        Offered load ``a`` (arrival rate x service time).
    service_s, slack_s, service_scv, exceed_probability : float or ndarray [s, s, -, -]
        Mean service time ``S``, wait allowed ``slack``, squared coefficient of variation of the service
        time, and the allowed probability ``epsilon`` of waiting longer than the slack.
    log_term : float or ndarray or None [-]
        :func:`wait_log_term` of ``exceed_probability`` when the caller has it.
    kingman : bool
        Also take Kingman's per-server bound (:func:`kingman_servers`): the queues of few servers with slack of
        several service times (prefill lanes).
    dispatched : bool
        Requests dispatched at arrival to one server (the module docstring): the margin of
        :func:`dispatched_margin` where it is the larger.

    Returns
    -------
    ndarray [servers]
        Servers needed (continuous): square-root staffing, or with ``kingman`` the fewer of it and ``a / rho`` at
        :func:`kingman_utilization`.

    References
    ----------
    [halfin-whitt-1981] square-root staffing.
    [borst-2004] staffing against a waiting-time target.
    [kingman-1964] the exponential bound on the GI/G/1 wait.
    """
    a = np.maximum(np.asarray(offered_erlangs, float), 0.0)
    log_term = wait_log_term(exceed_probability) if log_term is None else log_term
    square_root = servers_at_decay(a, np.sqrt(a), decay_per_server(service_s, slack_s, service_scv), log_term, dispatched)
    if not kingman:
        return square_root
    return np.minimum(square_root, kingman_servers(a, service_s, slack_s, service_scv, exceed_probability))


def servers_at_decay(offered_erlangs, root_erlangs, decay, log_term, dispatched=False):
    """:func:`servers_within_wait` from its parts: ``c = a + (sqrt(K^2 + 2L) - K) sqrt(a) + 1/(1 + u)``, ``K = u sqrt(a)``
    (``dispatched``: the margin at least :func:`dispatched_margin`).

    For callers that size one queue at several slacks (``u`` scales with the slack) and reuse ``a`` and ``sqrt(a)``.

    Parameters
    ----------
    offered_erlangs : float or ndarray [Erlangs]
        Offered load ``a``, at least 0.
    root_erlangs : float or ndarray [-]
        ``sqrt(a)``.
    decay : float or ndarray [-]
        ``u = k slack / S``, how many Poisson spreads of spare capacity the slack is worth per server.
    log_term : float or ndarray [-]
        :func:`wait_log_term` of the allowed probability ``epsilon``.
    dispatched : bool
        Requests dispatched at arrival to one server (the module docstring).

    Returns
    -------
    ndarray [servers]
        Servers needed (continuous).

    References
    ----------
    [halfin-whitt-1981] square-root staffing.
    [borst-2004] staffing against a waiting-time target.
    """
    big_k = decay * root_erlangs
    beta = np.sqrt(big_k * big_k + 2.0 * log_term) - big_k  # the staffing margin (servers_within_wait)
    if dispatched:
        beta = np.maximum(beta, dispatched_margin(decay, log_term))
    return offered_erlangs + beta * root_erlangs + 1.0 / (1.0 + decay)


def dispatched_margin(decay, log_term):
    """Staffing margin of a dispatched queue beyond its first spare server, ``beta = sqrt(2 max(L - u, 0))`` [-].

    With requests dispatched at arrival to one server, one that finds every server busy waits out that server's
    remaining work, so beyond one spare server (``sqrt(a) beta >= 1``) the tail is ``exp(-beta^2/2 - u) / 2``
    (the module docstring), and ``P(W > slack) <= epsilon`` needs ``beta^2 / 2 >= L - u``. The margin of the
    whole tail ``exp(-beta^2/2 - u min(sqrt(a) beta, 1)) / 2`` is the larger of this and the pooled one (below one
    spare server the two tails agree and the pooled margin is the larger).

    Parameters
    ----------
    decay : float or ndarray [-]
        ``u = k slack / S`` (:func:`decay_per_server`).
    log_term : float or ndarray [-]
        :func:`wait_log_term` of the allowed probability ``epsilon``.

    Returns
    -------
    ndarray [-]
        The margin ``beta``; 0 where the slack alone covers the percentile (``u >= L``).

    References
    ----------
    [halfin-whitt-1981] the Gaussian probability of waiting.
    """
    return np.sqrt(2.0 * np.maximum(log_term - decay, 0.0))


def offered_load_within_wait(servers, service_s, slack_s, service_scv, exceed_probability, kingman=False,
                             dispatched=False):
    """Largest load ``a`` that ``c`` servers carry with ``P(W > slack) <= epsilon``.

    The inverse of :func:`servers_within_wait`: with ``u = k slack / S``,
    ``L = ln(1/(2 epsilon))`` and ``m = c - delta``, ``m = a + beta sqrt(a)``,
    ``beta = sqrt(K^2 + 2L) - K``, ``K = u sqrt(a)``, squares to
    ``(1 - 2u) a^2 - 2 (m (1-u) + L) a + m^2 = 0``, whose smaller root is the answer
    (written ``m^2 / (h + sqrt(h^2 - (1 - 2u) m^2))``, ``h = m (1-u) + L``, finite as
    ``1 - 2u -> 0``). Zero when ``c <= delta``.

    Parameters
    ----------
    servers : float or ndarray [servers]
        Servers ``c``.
    service_s, slack_s, service_scv, exceed_probability : float or ndarray [s, s, -, -]
        Service time ``S``, wait allowed, service-time variability and ``epsilon``, as in
        :func:`servers_within_wait`.

    kingman : bool
        Also take Kingman's per-server bound, as in :func:`servers_within_wait`.
    dispatched : bool
        Requests dispatched at arrival to one server: also at most the load ``a`` with ``m = a + beta sqrt(a)`` at
        :func:`dispatched_margin`, ``sqrt(a) = (sqrt(beta^2 + 4m) - beta) / 2``.

    Returns
    -------
    ndarray [Erlangs]
        The largest offered load: the inverted square-root staffing, or with ``kingman`` the more of it and
        ``c rho`` at :func:`kingman_utilization`.

    References
    ----------
    [halfin-whitt-1981] square-root staffing.
    [kingman-1964] the exponential bound on the GI/G/1 wait.
    """
    c = np.asarray(servers, float)
    m = np.maximum(c - small_pool_margin(service_s, slack_s, service_scv), 0.0)
    u = decay_per_server(service_s, slack_s, service_scv)
    log_term = np.maximum(np.log(0.5 / np.asarray(exceed_probability, float)), 0.0)
    half_b = m * (1.0 - u) + log_term
    square_root = m * m / np.maximum(half_b + np.sqrt(np.maximum(half_b * half_b - (1.0 - 2.0 * u) * m * m, 0.0)), 1e-300)
    if dispatched:
        beta = dispatched_margin(u, log_term)
        square_root = np.minimum(square_root, np.square(0.5 * (np.sqrt(beta * beta + 4.0 * m) - beta)))
    if not kingman:
        return square_root
    return np.maximum(square_root, c * kingman_utilization(service_s, slack_s, service_scv, exceed_probability))


#: a log-term difference below this share of the log term is rounding (zero wait), as in the workbook
WAIT_ROUNDING_GUARD = 1e-9
#: an overloaded pool's wait is ``1 / OVERLOADED_WAIT_FACTOR`` service times (times the log term): huge, finite
OVERLOADED_WAIT_FACTOR = 1e-100


def wait_quantile_s(offered_erlangs, servers, service_s, service_scv, exceed_probability, sizing_slack_s, log_term=None,
                    kingman=False, dispatched=False):
    """Wait not exceeded with probability ``1 - epsilon`` at ``c`` servers; huge when overloaded.

    Inverts ``P(W > w) = exp(-beta^2/2 - k w sqrt(a) beta / S) / 2`` with
    ``beta = (c - a - delta) / sqrt(a)``:
    ``w = S (ln(1/(2 epsilon)) - beta^2/2) / (k sqrt(a) beta)``, zero when the Gaussian
    term alone is below epsilon. ``delta`` is taken at the slack the pool was sized for, so
    at the staffed ``c`` (:func:`servers_within_wait`) the quantile equals that slack, and
    with more servers it is a safe upper bound. Written without ``np.where`` (slow on large
    arrays): an overloaded pool (``beta <= 0``) gets a huge but finite wait, ``1e100 S``
    times the log term (the ``S 1e-100`` in the denominator: negligible otherwise).

    Parameters
    ----------
    offered_erlangs : float or ndarray [Erlangs]
        Offered load ``a``.
    servers : float or ndarray [servers]
        Servers ``c``.
    service_s : float or ndarray [s]
        Mean service time ``S``.
    service_scv, exceed_probability : float or ndarray [-]
        Service-time variability ``c_s^2`` and the probability ``epsilon`` of waiting longer.
    sizing_slack_s : float or ndarray [s]
        The slack the pool was sized for (sets ``delta``).
    log_term : float or ndarray or None [-]
        :func:`wait_log_term` of ``exceed_probability`` when the caller has it (at ``epsilon > 1/2``, where
        the log is negative and taken as 0, the wait is 0 either way).
    kingman : bool
        Also take Kingman's per-server bound, as in :func:`servers_within_wait`.
    dispatched : bool
        Requests dispatched at arrival to one server (the module docstring): the conditional wait's decay is
        ``k min(sqrt(a) beta, 1) / S``, so the denominator's ``sqrt(a) beta`` is at most 1.

    Returns
    -------
    ndarray [s]
        The wait quantile: the square-root staffing's, or with ``kingman`` the shorter of it and
        :func:`kingman_wait_s` at ``rho = a / c``.

    References
    ----------
    [borst-2004] the exponential conditional wait of M/M/c.
    [halfin-whitt-1981] the Gaussian probability of waiting.
    [kingman-1964] the exponential bound on the GI/G/1 wait.
    """
    a = np.maximum(np.asarray(offered_erlangs, float), 1e-300)
    root = np.sqrt(a)
    delta = small_pool_margin(service_s, sizing_slack_s, service_scv)
    beta = np.maximum((np.asarray(servers, float) - a - delta) / root, 0.0)
    log_term = wait_log_term(exceed_probability) if log_term is None else log_term
    # beta^2 / 2 above the log term already zeroes the wait: capping beta at 1e100 keeps a near-zero load
    # (a >= 1e-300, beta up to c x 1e150) from overflowing beta^2 without changing any answer
    numerator = np.maximum(log_term - 0.5 * np.square(np.minimum(beta, 1e100)), 0.0)
    numerator = numerator * (numerator > WAIT_ROUNDING_GUARD * log_term)  # at the staffed c the difference is rounding
    decay = tail_decay_factor(service_scv) * root * beta  # k sqrt(a) beta: the conditional wait's rate times S
    if dispatched:
        decay = np.minimum(decay, tail_decay_factor(service_scv))
    square_root = numerator * service_s / (decay + service_s * OVERLOADED_WAIT_FACTOR)
    if not kingman:
        return square_root
    rho = a / np.maximum(np.asarray(servers, float), 1e-300)
    if _kingman_wait_cannot_bind(square_root, rho, service_s, service_scv, exceed_probability):
        return square_root
    return np.minimum(square_root, kingman_wait_s(rho, service_s, service_scv, exceed_probability))


#: the largest utilization at which :func:`kingman_exponent` is taken to stay below its start ``2 (1 - rho) / rho``
#: (deterministic service; from that start Newton's iterates fall to the root, well conditioned up to here: checked
#: to stay at or below the start on 1.2 million utilizations from 1e-300 to 0.9999 in ``tests/test_queueing.py``)
KINGMAN_SKIP_UTILIZATION = 0.9999


def _kingman_wait_cannot_bind(square_root_s, utilization, service_s, service_scv, exceed_probability) -> bool:
    """Whether Kingman's wait is at least the square-root rule's in every draw, so that the minimum of the two is the
    square-root wait bit for bit and :func:`kingman_exponent` (three Newton steps) need not run.

    Deterministic service at utilizations up to :data:`KINGMAN_SKIP_UTILIZATION`: the exponent is at most its start
    ``x_0 = 2 (1 - rho) / rho``, so Kingman's wait ``S ln(1/epsilon) / x`` is at least ``S ln(1/epsilon) / x_0``; the
    test asks for the square-root wait to be below half of that (a margin far beyond rounding). A NaN anywhere fails
    the test (the full rule then propagates it as before), as does an operand of another shape.

    Parameters
    ----------
    square_root_s : float or ndarray [s]
        The square-root rule's wait quantile.
    utilization : float or ndarray [-]
        ``rho = a / c`` per server.
    service_s, service_scv, exceed_probability : float or ndarray [s, -, -]
        As in :func:`kingman_wait_s`.

    Returns
    -------
    bool
        True when Kingman's bound cannot shorten the wait in any draw.
    """
    if not (_deterministic(service_scv) and every_draw(utilization <= KINGMAN_SKIP_UTILIZATION)):
        return False
    log_term = exceed_log_term(exceed_probability)
    half_bound_s = (0.25 * service_s * log_term) * utilization / (1.0 - utilization)  # S ln(1/epsilon) / (2 x_0)
    return np.shape(half_bound_s) == np.shape(square_root_s) and every_draw(square_root_s <= half_bound_s)


#: a service time's squared CV below this counts as this in Kingman's exponent when the CV varies by draw: the gamma
#: moment generating function ``(1 - v x)^(-1/v)`` stays a formula (at ``v -> 0`` it is ``e^x``; at ``1e-4`` it is
#: ``e^(x + 5e-5 x^2 + ...)``, a hair larger: the bound stays safe). A CV of exactly 0 for all draws uses ``e^x``.
SCV_FLOOR = 1e-4
#: the moment generating function is capped at ``e^700`` (finite; a utilization of ``x e^-700`` is none)
EXPONENT_CAP = 700.0
#: the smallest Kingman exponent ``theta S`` taken (a slack of ~1e12 service times: utilization 1)
EXPONENT_FLOOR = 1e-12
#: the largest service time over slack taken (:func:`service_over_slack`): the exponent it asks for is capped far below
SLACK_RATIO_CAP = 1e100
#: a Kingman utilization below this staffs no pool (``a / rho`` stays finite; the square-root rule decides)
UTILIZATION_FLOOR = 1e-200
#: Newton steps for the exponent at a given utilization (:func:`kingman_exponent`): from the starts used, the
#: exponent is within 1e-10 of the root (relative) for deterministic service at utilizations 1e-12 to 0.99 (5e-10 up to
#: 0.999), within 1e-5 for gamma service (squared CV 1e-4 to 2) up to 0.9998 (checked against a bracketing solver)
KINGMAN_NEWTON_STEPS = 3


def _deterministic(service_scv) -> bool:
    """Whether the service time is deterministic in every draw (a number, 0): Kingman's exponent then uses ``e^x``."""
    return not isinstance(service_scv, np.ndarray) and float(service_scv) == 0.0


def service_mgf_excess(x, service_scv):
    """``E[exp(x X)] - 1`` for ``X`` the service time over its mean: ``e^x - 1`` when deterministic, else gamma with
    squared CV ``v = max(c_s^2, SCV_FLOOR)``: ``(1 - v x)^(-1/v) - 1``.

    The exponent (``x``, or ``-ln(1 - v x) / v``) is capped at :data:`EXPONENT_CAP` (``x`` at or beyond ``1/v``,
    where the gamma's generating function diverges, gives ``e^700``).

    Parameters
    ----------
    x : float or ndarray [-]
        ``theta S``, the exponent in units of the mean service time, ``x >= 0``.
    service_scv : float or ndarray [-]
        Squared coefficient of variation of the service time.

    Returns
    -------
    ndarray [-]
        ``E[exp(x X)] - 1``.
    """
    if _deterministic(service_scv):
        return np.exp(np.minimum(x, EXPONENT_CAP)) - 1.0
    v = np.maximum(service_scv, SCV_FLOOR)
    exponent = -np.log(np.maximum(1.0 - v * x, 1e-300)) / v
    return np.exp(np.minimum(exponent, EXPONENT_CAP)) - 1.0


def exceed_log_term(exceed_probability):
    """``ln(1 / epsilon)`` (0 at ``epsilon >= 1``): the exponent Kingman's bound must reach over the wait allowed.

    Parameters
    ----------
    exceed_probability : float or ndarray [-]
        Allowed probability ``epsilon`` of waiting longer than the slack.

    Returns
    -------
    ndarray [-]
        ``max(ln(1/epsilon), 0)``.

    References
    ----------
    [kingman-1964] ``P(W > w) <= exp(-theta w)``.
    """
    return np.maximum(-np.log(np.asarray(exceed_probability, float)), 0.0)


def kingman_utilization(service_s, slack_s, service_scv, exceed_probability):
    """Largest utilization per server ``rho`` at which Kingman's bound keeps ``P(W > slack) <= epsilon``.

    ``P(W > w) <= exp(-theta w)`` with ``theta`` the positive root of ``rho (E[exp(theta S X)] - 1) = theta S``
    (Poisson arrivals at ``rho / S`` per server). The bound is at most ``epsilon`` when ``theta >= ln(1/epsilon) / w``,
    i.e. ``x = theta S >= S ln(1/epsilon) / w``; ``rho(x) = x / (E[exp(x X)] - 1)`` falls as ``x`` grows (the
    generating function's series has positive coefficients), so the largest utilization is
    ``rho = x / (E[exp(x X)] - 1)`` at that ``x`` (:func:`service_mgf_excess`). Deterministic service
    (``c_s^2 = 0``): ``x / (e^x - 1)``; exponential (``c_s^2 = 1``): ``1 - x``, exact M/M/1. No slack gives 0.

    Parameters
    ----------
    service_s : float or ndarray [s]
        Mean service time ``S``.
    slack_s : float or ndarray [s]
        Wait allowed ``w``.
    service_scv : float or ndarray [-]
        Squared coefficient of variation of the service time.
    exceed_probability : float or ndarray [-]
        Allowed probability ``epsilon`` of waiting longer than the slack.

    Returns
    -------
    ndarray [-]
        The utilization per server ``rho``, in [0, 1].

    References
    ----------
    [kingman-1964] the exponential bound on the GI/G/1 wait.
    """
    log_term = exceed_log_term(exceed_probability)
    return kingman_utilization_at(log_term * service_over_slack(service_s, slack_s), service_scv)


def service_over_slack(service_s, slack_s):
    """``S / slack``, the service time in units of the wait allowed, at most :data:`SLACK_RATIO_CAP` (a slack below
    ``S / 1e100`` is none: the exponent it asks for is capped anyway) and finite at zero work or zero slack.

    Parameters
    ----------
    service_s, slack_s : float or ndarray [s]
        Mean service time ``S`` (floored at :data:`SERVICE_FLOOR_S`) and the wait allowed.

    Returns
    -------
    ndarray [-]
        ``max(S, S_min) / max(slack, max(S, S_min) / 1e100)``: zero work with slack gives ~0 (utilization 1), no
        slack 1e100 (utilization 0).
    """
    service = np.maximum(service_s, SERVICE_FLOOR_S)
    return service / np.maximum(slack_s, service / SLACK_RATIO_CAP)


def kingman_utilization_at(x, service_scv):
    """:func:`kingman_utilization` at the exponent ``x = theta S`` the target needs: ``rho = x / (E[exp(x X)] - 1)``,
    ``x`` kept within ``[EXPONENT_FLOOR, EXPONENT_CAP]`` (deterministic) or ``[EXPONENT_FLOOR, 1/v]`` (gamma: 0 at the
    pole).

    Parameters
    ----------
    x : float or ndarray [-]
        ``S ln(1/epsilon) / slack``.
    service_scv : float or ndarray [-]
        Squared coefficient of variation of the service time.

    Returns
    -------
    ndarray [-]
        The utilization per server ``rho``, in [0, 1].

    References
    ----------
    [kingman-1964] the exponential bound on the GI/G/1 wait.
    """
    if _deterministic(service_scv):
        x = np.maximum(np.minimum(x, EXPONENT_CAP), EXPONENT_FLOOR)
        return np.minimum(x / service_mgf_excess(x, 0.0), 1.0)
    v = np.maximum(service_scv, SCV_FLOOR)
    x = np.maximum(np.minimum(x, 1.0 / v), EXPONENT_FLOOR)
    return np.minimum(x / service_mgf_excess(x, v), 1.0) * (v * x < 1.0)


def kingman_servers(offered_erlangs, service_s, slack_s, service_scv, exceed_probability):
    """Servers (continuous) at :func:`kingman_utilization`: ``c = a / rho`` (``rho`` floored at
    :data:`UTILIZATION_FLOOR`: no slack staffs ``1e200 a``, which the square-root rule undercuts).

    Parameters
    ----------
    offered_erlangs : float or ndarray [Erlangs]
        Offered load ``a``, at least 0.
    service_s, slack_s, service_scv, exceed_probability : float or ndarray [s, s, -, -]
        As in :func:`kingman_utilization`.

    Returns
    -------
    ndarray [servers]
        Servers needed by Kingman's bound.

    References
    ----------
    [kingman-1964] the exponential bound on the GI/G/1 wait.
    """
    return servers_at_utilization(offered_erlangs, kingman_utilization(service_s, slack_s, service_scv, exceed_probability))


def servers_at_utilization(offered_erlangs, utilization):
    """Servers (continuous) that carry ``a`` Erlangs at ``rho`` each: ``c = a / max(rho, UTILIZATION_FLOOR)``.

    Parameters
    ----------
    offered_erlangs : float or ndarray [Erlangs]
        Offered load ``a``, at least 0.
    utilization : float or ndarray [-]
        Utilization per server ``rho`` (:func:`kingman_utilization`).

    Returns
    -------
    ndarray [servers]
        Servers needed.
    """
    return offered_erlangs / np.maximum(utilization, UTILIZATION_FLOOR)


def kingman_exponent(utilization, service_scv):
    """``x = theta S``, the positive root of ``rho (E[exp(x X)] - 1) = x`` (:func:`kingman_utilization` inverted).

    Newton's method on the concave, falling ``f(x) = ln x - ln(E[exp(x X)] - 1) - ln rho`` (``(E[exp(x X)] - 1)/x``
    ``= int_0^1 E[X exp(x s X)] ds`` is a mixture of exponentials in ``x``, hence log-convex), from a start above the
    root, where the iterates fall to it, quadratically near it (:data:`KINGMAN_NEWTON_STEPS` steps). Starts:
    ``E[exp(x X)] - 1 >= x + (1 + v) x^2 / 2`` puts the root below ``2 (1 - rho) / (rho (1 + v))``; deterministic,
    one fixed-point step ``x = ln(1 + x / rho)`` from there stays above it, ``ln(1 + 2 (1 - rho) / rho^2)``; gamma,
    ``(1 - (1 + 1/(v rho))^(-v)) / v`` is above it (there ``rho (E[exp(x X)] - 1) = 1/v > x``) and keeps the start
    away from the pole at ``1/v``. The start is the smaller. Derivative: ``e^x``, or ``E[exp(x X)] / (1 - v x)``.

    Parameters
    ----------
    utilization : float or ndarray [-]
        ``rho`` per server, in (0, 1).
    service_scv : float or ndarray [-]
        Squared coefficient of variation of the service time.

    Returns
    -------
    ndarray [-]
        ``theta S``.

    References
    ----------
    [kingman-1964] the exponential bound on the GI/G/1 wait.
    """
    rho = np.minimum(np.maximum(utilization, 1e-300), 1.0)
    log_rho = np.log(rho)
    if _deterministic(service_scv):
        with np.errstate(divide="ignore"):  # an idle server: rho^2 underflows to 0, the second start is inf, the first wins
            x = np.minimum(2.0 * (1.0 - rho) / rho, np.log(1.0 + 2.0 * (1.0 - rho) / (rho * rho)))
        for _ in range(KINGMAN_NEWTON_STEPS):
            x = np.maximum(x, EXPONENT_FLOOR)
            mgf = np.exp(np.minimum(x, EXPONENT_CAP))
            x = x - (np.log(x) - np.log(mgf - 1.0) - log_rho) / (1.0 / x - mgf / (mgf - 1.0))
        return np.maximum(x, EXPONENT_FLOOR)
    v = np.maximum(service_scv, SCV_FLOOR)
    x = np.minimum(2.0 * (1.0 - rho) / (rho * (1.0 + v)), (1.0 - np.exp(-v * np.log(1.0 + 1.0 / (v * rho)))) / v)
    for _ in range(KINGMAN_NEWTON_STEPS):
        x = np.maximum(x, EXPONENT_FLOOR)
        inner = np.maximum(1.0 - v * x, 1e-300)
        mgf = np.exp(np.minimum(-np.log(inner) / v, EXPONENT_CAP))
        x = x - (np.log(x) - np.log(mgf - 1.0) - log_rho) / (1.0 / x - mgf / (inner * (mgf - 1.0)))
    return np.maximum(x, EXPONENT_FLOOR)


def kingman_wait_s(utilization, service_s, service_scv, exceed_probability):
    """Wait not exceeded with probability ``1 - epsilon`` by Kingman's bound: ``w = S ln(1/epsilon) / x``.

    ``x = theta S`` at the utilization (:func:`kingman_exponent`); a utilization of 1 or more waits
    ``S ln(1/epsilon) / 1e-12``, huge.

    Parameters
    ----------
    utilization : float or ndarray [-]
        ``rho = a / c`` per server.
    service_s : float or ndarray [s]
        Mean service time ``S``.
    service_scv, exceed_probability : float or ndarray [-]
        Service-time variability and the probability ``epsilon`` of waiting longer.

    Returns
    -------
    ndarray [s]
        The wait quantile.

    References
    ----------
    [kingman-1964] the exponential bound on the GI/G/1 wait.
    """
    log_term = exceed_log_term(exceed_probability)
    return service_s * log_term / kingman_exponent(utilization, service_scv)


def occupancy_seen_quantile(mean_occupancy, z, window_variance_factor=2.0 / 3.0):
    """Occupancy a request sees over its stay, at the quantile ``z``.

    In an M/G/inf system the number present is Poisson with mean ``B`` (the
    insensitivity of M/G/inf). A request averages the occupancy over its own stay; for a
    stay of fixed length ``D`` the others present form a stationary process with
    covariance ``B (1 - tau/D)``, whose average over a window ``D`` has variance
    ``(2/D^2) int_0^D (D - tau) B (1 - tau/D) dtau = 2B/3``. The request itself adds one:
    ``B_q = 1 + B + z sqrt(v B)``, ``v = 2/3`` (normal approximation of the Poisson tail).

    Parameters
    ----------
    mean_occupancy : float or ndarray [requests]
        Mean number of requests present ``B``.
    z : float or ndarray [-]
        Standard normal quantile.
    window_variance_factor : float [-]
        Variance of the window average over ``B`` (2/3 for a fixed stay).

    Returns
    -------
    ndarray [requests]
        Occupancy seen at the quantile.
    """
    b = np.maximum(np.asarray(mean_occupancy, float), 0.0)
    return 1.0 + b + z * np.sqrt(window_variance_factor * b)
