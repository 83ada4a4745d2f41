"""Second life: a device retired from training serves inference for the rest of its life.

At retirement age ``a`` a training device can be sold (its market value), scrapped
(nothing), or cascaded to a serving fleet for its remaining life ``L - a``. Cascading is
worth the serving work it does, valued at what that work would otherwise cost (the
levelized cost per token of the best new serving option), less what it costs to run the
old device, plus what it still fetches at the end of its life. All flows are per device.
"""

from __future__ import annotations

import numpy as np

from tco.core.money import finance


def market_value_fraction(age_years, life_years, residual_value_fraction):
    """Share of the purchase price a device of age ``a`` still fetches.

    Straight line from 1 at purchase to the residual value ``rv`` at the end of life ``L``,
    the book value of :mod:`tco.core.money.purchases` (a device retired early is credited it):
    ``1 - (1 - rv) min(a, L) / L``.

    Parameters
    ----------
    age_years : float or ndarray [yr]
        Age at sale ``a``.
    life_years : float or ndarray [yr]
        Useful life ``L``.
    residual_value_fraction : float or ndarray [-]
        Book value at end of life ``rv``, share of the price.

    Returns
    -------
    ndarray [-]
        Market value, share of the purchase price.
    """
    return 1.0 - (1.0 - residual_value_fraction) * np.minimum(age_years, life_years) / life_years


def cascade_value_usd(tokens_per_year, value_usd_per_mtok, running_usd_per_year, remaining_years, discount_rate,
                      end_value_usd):
    """PV at retirement of cascading one device to serving.

    ``sum_{y=1..R} (T v / 1e6 - c) (1+r)^-y + end value (1+r)^-R`` with ``T`` tokens
    per year the old device serves, ``v`` USD per million tokens those tokens would cost
    on the new serving option, ``c`` the old device's yearly running cost (energy, data
    hall, maintenance) and ``R`` the remaining life (whole years; fractions are annuitized).

    Parameters
    ----------
    tokens_per_year : float or ndarray [tokens/yr]
        Output tokens the old device serves per year ``T``.
    value_usd_per_mtok : float or ndarray [USD/Mtok]
        What those tokens would cost on the new serving option ``v``.
    running_usd_per_year : float or ndarray [USD/yr]
        The old device's running cost ``c``.
    remaining_years : float or ndarray [yr]
        Remaining life ``R`` (negative counts as 0).
    discount_rate : float or ndarray [1/yr]
        Discount rate ``r``.
    end_value_usd : float or ndarray [USD]
        What the device fetches at the end of its life.

    Returns
    -------
    ndarray [USD]
        Present value at retirement, per device.
    """
    margin = np.asarray(tokens_per_year, float) * value_usd_per_mtok / 1e6 - running_usd_per_year
    remaining = np.maximum(np.asarray(remaining_years, float), 0.0)
    return margin * finance.annuity_factor(discount_rate, remaining) + end_value_usd * finance.discount_factor(
        discount_rate, remaining)


def second_life_choice(cascade_usd, sell_usd, scrap_usd=0.0):
    """Best use of a retired device and its margin over the next best.

    Parameters
    ----------
    cascade_usd : float or ndarray [USD]
        PV of cascading to serving (:func:`cascade_value_usd`).
    sell_usd : float or ndarray [USD]
        Sale price at retirement.
    scrap_usd : float or ndarray [USD]
        Value of scrapping (0).

    Returns
    -------
    choice : ndarray [-]
        0 cascade, 1 sell, 2 scrap.
    premium : ndarray [USD]
        Cascade value minus the better of selling and scrapping (positive: cascading wins).
    """
    options = np.stack(np.broadcast_arrays(np.asarray(cascade_usd, float), sell_usd, scrap_usd))
    return np.argmax(options, axis=0).astype(float), options[0] - np.maximum(options[1], options[2])
