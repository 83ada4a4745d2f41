"""Data-center siting: what a site costs per kW, and whether it is near enough to serve users.

A training cluster only needs power and a data hall, so it can sit where both are cheap;
a serving fleet must also answer within the users' latency budget, and its network round
trip to them adds to the time to first token. Comparing one combined facility with
facilities split by purpose is a choice over a small set of sites (a structural loop),
vectorized over every parameter draw.
"""

from __future__ import annotations

import numpy as np

from tco.core.money import finance


def built_facility_usd_per_kw_month(construction_usd_per_w, facility_life_years, discount_rate):
    """Data-hall cost of a self-built site per kW of IT load per month.

    The construction cost repaid as a level annuity over the facility life:
    ``1000 c / annuity(r, L) / 12``. At $11.7/W, 15 years and 9 %: 11,700 / 8.06 / 12 = 121.

    Parameters
    ----------
    construction_usd_per_w : float or ndarray [USD/W]
        Construction cost per W of critical IT load ``c``.
    facility_life_years : float or ndarray [yr]
        Years over which the hall is annualized ``L``.
    discount_rate : float or ndarray [1/yr]
        Discount rate ``r``.

    Returns
    -------
    ndarray [USD/kW-month]
        Equivalent monthly cost per kW of IT load.

    References
    ----------
    [cushman-dc-cost-2025] $9.3-15.0M per MW of critical load.
    """
    return 1000.0 * np.asarray(construction_usd_per_w, float) / finance.annuity_factor(discount_rate, facility_life_years) / 12.0


def user_ttft_s(model_ttft_s, rtt_to_users_s):
    """Time to first token a user sees: the fleet's own TTFT plus one network round trip.

    The prompt travels in, the first token travels out.

    Parameters
    ----------
    model_ttft_s : float or ndarray [s]
        The fleet's time to first token.
    rtt_to_users_s : float or ndarray [s]
        Network round trip from the site to its users.

    Returns
    -------
    ndarray [s]
        Time to first token seen by the user.
    """
    return np.asarray(model_ttft_s, float) + rtt_to_users_s


def egress_usd_per_mtok(bytes_per_token, egress_usd_per_gb):
    """Network egress of the streamed answer per million output tokens: ``1e6 x bytes per token / 1e9 x price``.

    Parameters
    ----------
    bytes_per_token : float or ndarray [B/token]
        Bytes of answer text sent per output token.
    egress_usd_per_gb : float or ndarray [USD/GB]
        Egress price.

    Returns
    -------
    ndarray [USD/Mtok]
        Egress cost per million output tokens.

    References
    ----------
    [aws-egress-pricing] data transfer out to the internet.
    """
    return 1e6 * np.asarray(bytes_per_token, float) / 1e9 * egress_usd_per_gb


def combined_and_split_usd(training_usd_by_site, serving_usd_by_site, serving_feasible_by_site):
    """Cheapest yearly cost of one combined facility and of facilities split by purpose.

    Combined: both workloads at the one site that meets the serving latency, the cheapest
    such site. Split: training at its cheapest site, serving at its cheapest feasible site.

    Parameters
    ----------
    training_usd_by_site : list of ndarray [USD/yr]
        Yearly training cost at each site (arrays that broadcast).
    serving_usd_by_site : list of ndarray [USD/yr]
        Yearly serving cost at each site.
    serving_feasible_by_site : list of ndarray of bool [-]
        Whether each site meets the serving latency.

    Returns
    -------
    combined : ndarray [USD/yr]
        Cost of the cheapest combined facility (``inf`` when no site meets the latency).
    split : ndarray [USD/yr]
        Cost of the cheapest split (``inf`` when no site meets the latency).
    combined_site, training_site, serving_site : ndarray [-]
        Sites as indices into the lists (-1 when no site meets the serving latency).
    """
    train = np.stack(np.broadcast_arrays(*training_usd_by_site))
    serve = np.stack(np.broadcast_arrays(*serving_usd_by_site))
    feasible = np.stack(np.broadcast_arrays(*serving_feasible_by_site)).astype(bool)
    serve_ok = np.where(feasible, serve, np.inf)
    combined_each = train + serve_ok
    any_ok = feasible.any(axis=0)
    combined = np.min(combined_each, axis=0)
    split = np.min(train, axis=0) + np.min(serve_ok, axis=0)
    return (combined, split, np.where(any_ok, np.argmin(combined_each, axis=0), -1),
            np.argmin(train, axis=0), np.where(any_ok, np.argmin(serve_ok, axis=0), -1))
