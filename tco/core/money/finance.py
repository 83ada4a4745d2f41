"""Discounting, levelized cost, NPV, IRR and payback.

Conventions (DESIGN.md sections 5 and 9): operating flows and tokens fall at the end of each
year ``1..Y``; hardware and NRE are paid at the start of the year they are spent in
(:mod:`tco.core.money.purchases`, :mod:`tco.core.money.timeline`). Discount factor ``(1 + r)^-t`` for any
real ``t`` >= 0.
"""

from __future__ import annotations

import numpy as np

from tco.core.draws import as_floats, where_mixed


def discount_factor(rate, t_years):
    """Present value of 1 USD paid at ``t``: ``(1 + r)^-t``.

    Parameters
    ----------
    rate : float or ndarray [1/yr]
        Discount rate (cost of capital).
    t_years : float or ndarray [yr]
        Time of the payment after t = 0; any real value >= 0.

    Returns
    -------
    ndarray [-]
        The discount factor, broadcast over ``rate`` and ``t_years``.

    References
    ----------
    [brealey-myers-allen] present value, ch. 2.
    """
    return np.power(1.0 + as_floats(rate), -as_floats(t_years))


def annuity_factor(rate, years):
    """Present value of 1 USD paid at the end of each year ``1..Y``.

    ``(1 - (1+r)^-Y) / r``, and ``Y`` at ``r = 0``.

    Parameters
    ----------
    rate : float or ndarray [1/yr]
        Discount rate.
    years : float or ndarray [yr]
        Number of yearly payments ``Y``.

    Returns
    -------
    ndarray [yr]
        The annuity factor (USD of present value per USD/yr).

    References
    ----------
    [brealey-myers-allen] annuities, ch. 2.
    """
    rate = as_floats(rate)
    return _annuity_of_discount(rate, years, discount_factor(rate, years))


def _annuity_of_discount(rate, years, discount):
    """:func:`annuity_factor` from the discount factor ``(1+r)^-Y`` the caller has [yr]: ``(1 - discount) / r``, ``Y`` at
    ``r = 0`` (where the quotient is not used, it divides by 1)."""
    zero = np.abs(rate) < 1e-12
    return where_mixed(zero, years, (1.0 - discount) / where_mixed(zero, 1.0, rate))


def capital_recovery_usd_per_year(capex_usd, rate, life_years, residual_value_fraction=0.0):
    """Equivalent yearly cost of owning an asset over its life.

    ``capex (1 - rv (1+r)^-L) / annuity(r, L)``: the price net of the discounted value
    recovered at end of life, spread as a level annuity over ``L`` years (the capital
    recovery factor).

    Parameters
    ----------
    capex_usd : float or ndarray [USD]
        Purchase price.
    rate : float or ndarray [1/yr]
        Discount rate.
    life_years : float or ndarray [yr]
        Useful life ``L``.
    residual_value_fraction : float or ndarray [-]
        Value left at end of life, share of the price.

    Returns
    -------
    ndarray [USD/yr]
        The level yearly cost of ownership.

    References
    ----------
    [brealey-myers-allen] equivalent annual cost, ch. 6.
    """
    rate = as_floats(rate)
    discount = discount_factor(rate, life_years)  # one power for the residual credit and the annuity
    net = capex_usd if isinstance(residual_value_fraction, float | int) and residual_value_fraction == 0 \
        else capex_usd * (1.0 - residual_value_fraction * discount)
    return net / _annuity_of_discount(rate, life_years, discount)


def levelized_cost_usd_per_mtok(pv_cost_usd, pv_tokens):
    """Levelized cost per million tokens: ``PV(costs) / PV(tokens) x 1e6``.

    The LCOE construction applied to tokens.

    Parameters
    ----------
    pv_cost_usd : float or ndarray [USD]
        Present value of the costs.
    pv_tokens : float or ndarray [tokens]
        Present value of the tokens served (discounted like money).

    Returns
    -------
    ndarray [USD/Mtok]
        Levelized cost per million tokens.

    References
    ----------
    [nrel-atb] the levelized cost of energy (LCOE).
    """
    return pv_cost_usd / pv_tokens * 1e6


def npv_excel(rate, flows):
    """Excel's ``NPV(rate, v1..vn)``: the first flow is discounted one period.

    ``sum_i v_i / (1 + r)^i`` for ``i = 1..n`` along the last axis of ``flows``.

    Parameters
    ----------
    rate : float or ndarray [1/yr]
        Discount rate, broadcast over the leading axes of ``flows``.
    flows : ndarray [USD]
        Yearly flows, year 1 first, along the last axis.

    Returns
    -------
    ndarray [USD]
        Net present value (the last axis summed).

    References
    ----------
    [excel-npv] the NPV worksheet function.
    """
    flows = np.asarray(flows, float)
    years = np.arange(1, flows.shape[-1] + 1)
    return np.sum(flows * discount_factor(np.asarray(rate, float)[..., None], years), axis=-1)


def irr(flows, low=-0.99, high=10.0, iterations=80):
    """Internal rate of return of yearly ``flows`` (year 0 first, along the last axis).

    Vectorized bisection on ``NPV(r) = sum_t f_t (1+r)^-t``; NaN where NPV does not
    change sign on ``[low, high]`` (no IRR, e.g. flows that never pay back).

    Parameters
    ----------
    flows : ndarray [USD]
        Yearly flows, year 0 first, along the last axis.
    low, high : float [1/yr]
        Bracket of the bisection.
    iterations : int [-]
        Bisection steps (80 halve the bracket below 1e-23).

    Returns
    -------
    ndarray [1/yr]
        The rate at which NPV is zero, NaN where there is none in the bracket.

    References
    ----------
    [brealey-myers-allen] internal rate of return, ch. 5.
    """
    flows = np.asarray(flows, float)
    years = np.arange(flows.shape[-1])

    def npv(rate):
        return np.sum(flows * np.power(1.0 + rate[..., None], -years), axis=-1)

    lo = np.full(flows.shape[:-1], low)
    hi = np.full(flows.shape[:-1], high)
    f_lo = npv(lo)
    valid = np.sign(f_lo) * np.sign(npv(hi)) < 0
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        f_mid = npv(mid)
        left = np.sign(f_mid) == np.sign(f_lo)
        lo = np.where(left, mid, lo)
        f_lo = np.where(left, f_mid, f_lo)
        hi = np.where(left, hi, mid)
    return np.where(valid, 0.5 * (lo + hi), np.nan)


def payback_year(cumulative_discounted_savings):
    """First year (index along the last axis) from which cumulative savings stay >= 0.

    The start of the final non-negative run, so a later dip is respected; NaN where they are
    negative at the horizon. Year 0 counts if nothing is spent first.

    Parameters
    ----------
    cumulative_discounted_savings : ndarray [USD]
        Cumulative discounted savings by year, year 0 first, along the last axis.

    Returns
    -------
    ndarray [yr]
        The payback year (an index), NaN where savings never stay non-negative.
    """
    cumulative = np.asarray(cumulative_discounted_savings, float)
    reached = cumulative >= 0.0
    # payback is the start of the final non-negative run, so later dips are respected
    final_run = np.flip(np.cumprod(np.flip(reached, axis=-1), axis=-1), axis=-1).astype(bool)
    first = np.argmax(final_run, axis=-1).astype(float)
    return np.where(final_run[..., -1], first, np.nan)
