"""Routing easy requests to a small model: cost per useful answer and where routing stops paying.

A router sends a share ``r`` of requests to a small model and the rest to the large one.
A share ``h`` of all requests is *hard* (only the large model answers them usefully). A
router of skill ``a >= 0`` ranks requests by predicted ease, so among the routed share the
hard requests it lets through total

    ``m(r) = h r^(1 + a)``

(``a = 0``: a router no better than chance, ``m = h r``; large ``a``: a router that
sends almost no hard request until the easy ones run out; ``m(1) = h`` always). Each
misrouted request costs a ``penalty``: a retry on the large model (``penalty = c_L``) or
a price put on a wrong answer. Every request thus ends with a useful answer or a priced
failure, and the cost per useful answer is

    ``c(r) = c_L + r (c_s - c_L) + h r^(1+a) penalty``.
"""

from __future__ import annotations

import numpy as np


def misrouted_share(router_share, hard_share, router_skill):
    """Share of all requests that are hard and routed to the small model: ``h r^(1+a)``.

    Parameters
    ----------
    router_share : float or ndarray [-]
        Share of requests routed to the small model ``r``.
    hard_share : float or ndarray [-]
        Share of requests only the large model answers usefully ``h``.
    router_skill : float or ndarray [-]
        Exponent ``a`` of the misroute curve.

    Returns
    -------
    ndarray [-]
        Misrouted share, 0-1.

    References
    ----------
    [routellm-2024] routing queries between a strong and a weak model.
    """
    return hard_share * np.power(np.asarray(router_share, float), 1.0 + np.asarray(router_skill, float))


def cost_per_useful_answer(router_share, small_cost, large_cost, hard_share, router_skill, penalty):
    """Expected cost per request, misroutes included: ``c_L + r (c_s - c_L) + m(r) penalty``.

    Parameters
    ----------
    router_share : float or ndarray [-]
        Share routed to the small model ``r``.
    small_cost : float or ndarray [USD/answer]
        Cost of an answer on the small model ``c_s``.
    large_cost : float or ndarray [USD/answer]
        Cost of an answer on the large model ``c_L``.
    hard_share : float or ndarray [-]
        Share of hard requests ``h``.
    router_skill : float or ndarray [-]
        Exponent ``a`` of the misroute curve.
    penalty : float or ndarray [USD/answer]
        Cost of a misrouted request (a retry, or a price on a wrong answer).

    Returns
    -------
    ndarray [USD/answer]
        Expected cost per useful answer.
    """
    r = np.asarray(router_share, float)
    return large_cost + r * (small_cost - large_cost) + misrouted_share(r, hard_share, router_skill) * penalty


def breakeven_router_share(small_cost, large_cost, hard_share, router_skill, penalty):
    """Router share above which routing costs more than sending everything to the large model.

    ``c(r) = c_L`` at ``r* = ((c_L - c_s) / (h penalty))^(1/a)`` for ``a > 0``, clipped to [0, 1];
    for ``a = 0`` the cost is linear in ``r``: routing pays at every share (1) when
    ``c_L - c_s > h penalty`` and at none (0) otherwise. 0 when the small model is no cheaper.

    Parameters
    ----------
    small_cost, large_cost, hard_share, router_skill, penalty : float or ndarray [USD/answer, USD/answer, -, -, USD/answer]
        ``c_s``, ``c_L``, ``h``, ``a`` and the penalty, as in :func:`cost_per_useful_answer`.

    Returns
    -------
    ndarray [-]
        Break-even router share, 0-1.
    """
    saving = np.asarray(large_cost, float) - small_cost
    a = np.asarray(router_skill, float)
    scale = np.maximum(saving, 0.0) / (hard_share * penalty)
    safe_a = np.where(a > 0, a, 1.0)
    share = np.where(a > 0, np.power(scale, 1.0 / safe_a), np.where(scale > 1.0, 1.0, 0.0))
    return np.where(saving > 0, np.minimum(share, 1.0), 0.0)


def optimal_router_share(small_cost, large_cost, hard_share, router_skill, penalty):
    """Router share that minimizes the cost per useful answer.

    ``dc/dr = 0`` at ``r_opt = ((c_L - c_s) / (h (1+a) penalty))^(1/a)`` for ``a > 0``
    (clipped to [0, 1]); the corner 0 or 1 for ``a = 0``.

    Parameters
    ----------
    small_cost, large_cost, hard_share, router_skill, penalty : float or ndarray [USD/answer, USD/answer, -, -, USD/answer]
        As in :func:`breakeven_router_share`.

    Returns
    -------
    ndarray [-]
        Optimal router share, 0-1.
    """
    a = np.asarray(router_skill, float)
    return breakeven_router_share(small_cost, large_cost, hard_share * (1.0 + a), router_skill, penalty)
