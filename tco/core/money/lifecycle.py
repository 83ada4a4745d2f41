"""Workload half-life: how long a specialized design keeps serving what it was built for.

DESIGN.md section 5. The share of demand the design still serves at its designed
efficiency at time ``t`` (years) is ``2^(-t/H)``.
"""

from __future__ import annotations

import numpy as np

from tco.core.draws import as_floats

LN2 = np.log(2.0)


def designed_share_at(t_years, half_life_years):
    """Share of demand still served at designed efficiency at time ``t``: ``2^(-t/H)``.

    Parameters
    ----------
    t_years : float or ndarray [yr]
        Calendar time from the decision.
    half_life_years : float or ndarray [yr]
        Workload half-life ``H``.

    Returns
    -------
    ndarray [-]
        The designed share, 1 at ``t = 0``.
    """
    return np.exp2(-as_floats(t_years) / half_life_years)


def designed_share_in_year(year, half_life_years):
    """Mean of ``2^(-t/H)`` over year ``y`` (from ``t = y-1`` to ``t = y``).

    ``H/ln2 x (2^(-(y-1)/H) - 2^(-y/H))``. ``t`` is calendar time from the decision: a chip
    designed from ``t = 0`` and in service later meets a workload that has moved meanwhile.

    Parameters
    ----------
    year : int or ndarray [yr]
        Service year ``y`` (1 = the first year after the decision).
    half_life_years : float or ndarray [yr]
        Workload half-life ``H``.

    Returns
    -------
    ndarray [-]
        The designed share averaged over the year.
    """
    start = as_floats(year) - 1.0
    return half_life_years / LN2 * (np.exp2(-start / half_life_years) - np.exp2(-(start + 1.0) / half_life_years))


def effective_life_years(useful_life_years, half_life_years):
    """Years of full-efficiency service in a device life: ``H/ln2 x (1 - 2^(-L/H))``.

    The integral of ``2^(-t/H)`` from 0 to ``L``; tends to ``L`` when ``H >> L`` and to
    ``H/ln2`` when ``H << L``.

    Parameters
    ----------
    useful_life_years : float or ndarray [yr]
        Device life ``L``.
    half_life_years : float or ndarray [yr]
        Workload half-life ``H``.

    Returns
    -------
    ndarray [yr]
        Full-efficiency-equivalent years of service.
    """
    return half_life_years / LN2 * (1.0 - np.exp2(-as_floats(useful_life_years) / half_life_years))


def served_efficiency_in_year(year, half_life_years, residual_efficiency):
    """Share of a specialized pool's designed output that is still useful in year ``y``.

    ``s + (1 - s) x eta_r`` with ``s`` the designed share of that year and ``eta_r`` the
    efficiency the design keeps on shifted work.

    Parameters
    ----------
    year : int or ndarray [yr]
        Service year ``y``.
    half_life_years : float or ndarray [yr]
        Workload half-life.
    residual_efficiency : float or ndarray [-]
        Share of designed efficiency left on shifted work, 0-1.

    Returns
    -------
    ndarray [-]
        Useful share of the designed output in that year.
    """
    share = designed_share_in_year(year, half_life_years)
    return share + (1.0 - share) * residual_efficiency
