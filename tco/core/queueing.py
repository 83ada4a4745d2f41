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
Against the exact M/M/c staffing (smallest whole ``c`` with ``C(c, a) e^{-(c-a) w/S} <= epsilon``,
Erlang C by recursion) the rule :func:`servers_within_wait`, rounded up to whole servers,
is within -1 % / +8 % for ``a >= 10`` Erlangs, never below and at most 40 % above for
``3 <= a < 10``, and at most one server above below that, for ``epsilon`` in
[0.005, 0.25] and slacks of 0 to 100 service times (``tests/test_serving.py``).
"""

from __future__ import annotations

import numpy as np

#: Poisson arrivals
ARRIVAL_SCV = 1.0

# Abramowitz and Stegun 26.2.23: rational approximation of the normal quantile, |error| < 4.5e-4
_AS_C = (2.515517, 0.802853, 0.010328)
_AS_D = (1.432788, 0.189269, 0.001308)


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


def staffing_margin(offered_erlangs, service_s, slack_s, service_scv, exceed_probability):
    """Spare servers in Poisson spreads, ``beta``, that keep ``P(W > slack) <= epsilon``.

    Solves ``beta^2/2 + K beta = ln(1 / (2 epsilon))`` with ``K = k slack sqrt(a) / S``:
    ``beta = sqrt(K^2 + 2L) - K``, ``L = ln(1/(2 epsilon))`` (zero when ``epsilon >= 1/2``).

    Parameters
    ----------
    offered_erlangs : float or ndarray [Erlangs]
        Offered load ``a`` (arrival rate x service time).
    service_s : float or ndarray [s]
        Mean service time ``S``.
    slack_s : float or ndarray [s]
        Wait allowed ``slack``.
    service_scv : float or ndarray [-]
        Squared coefficient of variation of the service time.
    exceed_probability : float or ndarray [-]
        Allowed probability ``epsilon`` of waiting longer than the slack.

    Returns
    -------
    ndarray [-]
        The staffing margin ``beta``.

    References
    ----------
    [halfin-whitt-1981] square-root staffing.
    [borst-2004] staffing against a waiting-time target.
    """
    a = np.maximum(np.asarray(offered_erlangs, float), 1e-300)
    big_k = decay_per_server(service_s, slack_s, service_scv) * np.sqrt(a)
    log_term = np.maximum(np.log(0.5 / np.asarray(exceed_probability, float)), 0.0)
    return np.sqrt(big_k * big_k + 2.0 * log_term) - big_k


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


def servers_within_wait(offered_erlangs, service_s, slack_s, service_scv, exceed_probability, log_term=None):
    """Servers (continuous) so that ``P(W > slack) <= epsilon``: ``c = a + beta sqrt(a) + delta``.

    Parameters
    ----------
    offered_erlangs : float or ndarray [Erlangs]
        Offered load ``a``.
    service_s, slack_s, service_scv, exceed_probability : float or ndarray [s, s, -, -]
        As in :func:`staffing_margin`.
    log_term : float or ndarray or None [-]
        :func:`wait_log_term` of ``exceed_probability`` when the caller has it.

    Returns
    -------
    ndarray [servers]
        Servers needed (continuous).

    References
    ----------
    [halfin-whitt-1981] square-root staffing.
    [borst-2004] staffing against a waiting-time target.
    """
    a = np.maximum(np.asarray(offered_erlangs, float), 0.0)
    log_term = wait_log_term(exceed_probability) if log_term is None else log_term
    return servers_at_decay(a, np.sqrt(a), decay_per_server(service_s, slack_s, service_scv), log_term)


def servers_at_decay(offered_erlangs, root_erlangs, decay, log_term):
    """:func:`servers_within_wait` from its parts: ``c = a + (sqrt(K^2 + 2L) - K) sqrt(a) + 1/(1 + u)``, ``K = u sqrt(a)``.

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
    beta = np.sqrt(big_k * big_k + 2.0 * log_term) - big_k  # staffing_margin
    return offered_erlangs + beta * root_erlangs + 1.0 / (1.0 + decay)


def offered_load_within_wait(servers, service_s, slack_s, service_scv, exceed_probability):
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
        :func:`staffing_margin`.

    Returns
    -------
    ndarray [Erlangs]
        The largest offered load.
    """
    m = np.maximum(np.asarray(servers, float) - small_pool_margin(service_s, slack_s, service_scv), 0.0)
    u = decay_per_server(service_s, slack_s, service_scv)
    log_term = np.maximum(np.log(0.5 / np.asarray(exceed_probability, float)), 0.0)
    half_b = m * (1.0 - u) + log_term
    return m * m / np.maximum(half_b + np.sqrt(np.maximum(half_b * half_b - (1.0 - 2.0 * u) * m * m, 0.0)), 1e-300)


#: a log-term difference below this share of the log term is rounding (zero wait), as in the workbook
WAIT_ROUNDING_GUARD = 1e-9
#: an overloaded pool's wait is ``1 / OVERLOADED_WAIT_FACTOR`` service times (times the log term): huge, finite
OVERLOADED_WAIT_FACTOR = 1e-100


def wait_quantile_s(offered_erlangs, servers, service_s, service_scv, exceed_probability, sizing_slack_s, log_term=None):
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

    Returns
    -------
    ndarray [s]
        The wait quantile.

    References
    ----------
    [borst-2004] the exponential conditional wait of M/M/c.
    [halfin-whitt-1981] the Gaussian probability of waiting.
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
    return numerator * service_s / (tail_decay_factor(service_scv) * root * beta + service_s * OVERLOADED_WAIT_FACTOR)


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
