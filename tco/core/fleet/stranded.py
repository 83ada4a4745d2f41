"""Stranded capacity: an hourly simulation of a two-pool (prefill -> decode) fleet over a quarter.

DESIGN.md section 4. Hours run along the **last axis** of every array; any leading axes
(policies, parameter draws) broadcast, so a quarter of 2,184 hours for several sizing
policies is a handful of numpy calls and no Python loop over hours.

Queue model (documented in docs/fleet-dynamics.md):

* Work is counted in requests. Pool ``i`` can finish ``c_i(t)`` requests in hour ``t``
  (its token capacity divided by the hour's prompt or output length).
* Each pool carries a backlog from hour to hour (fluid queue, first come first served):
  ``Q(t) = max(Q(t-1) + a(t) - c(t), 0)`` -- Lindley's recursion (D. V. Lindley, "The
  theory of queues with a single server", Proc. Cambridge Phil. Soc. 48, 1952). Its
  closed form ``Q(t) = S(t) - min(0, min_{s<=t} S(s))`` with ``S`` the running sum of
  ``a - c`` is what makes the simulation vectorized over hours.
* The pools are in tandem: the decode pool's arrivals are the prefill pool's completions,
  so in every hour the bottleneck pool sets what is served.
"""

from __future__ import annotations

import numpy as np

from tco.core.money.finance import capital_recovery_usd_per_year
from tco.core.serving.power import HOURS_PER_YEAR, device_power_w, energy_cost_usd_per_year

HOURS_PER_DAY = 24
HOURS_PER_WEEK = 168
#: 13 weeks
QUARTER_HOURS = 13 * HOURS_PER_WEEK
#: relative tolerance under which a backlog counts as empty (round-off of the running sums)
EMPTY_TOLERANCE = 1e-9


def hours_of_quarter(hours: int = QUARTER_HOURS) -> np.ndarray:
    """Hour index ``t = 0 .. hours-1``; hour 0 is Monday 00:00.

    Parameters
    ----------
    hours : int [h]
        Hours simulated (a quarter: 2,184).

    Returns
    -------
    ndarray [h]
        The hour index.
    """
    return np.arange(hours, dtype=float)


def diurnal_factor(hours, peak_to_mean, peak_hour):
    """Demand over its daily mean at hour ``t``: ``1 + a cos(2 pi (t mod 24 - peak_hour) / 24)``.

    ``a = min(peak_to_mean - 1, 1)``: the daily mean is 1 and the daily peak is
    ``peak_to_mean`` (capped at 2 so demand never goes negative; at the cap the trough is 0).

    Parameters
    ----------
    hours : ndarray [h]
        Hour index.
    peak_to_mean : float or ndarray [-]
        Daily peak demand over daily mean.
    peak_hour : float or ndarray [h]
        Hour of the daily peak.

    Returns
    -------
    ndarray [-]
        Diurnal demand factor.
    """
    amplitude = np.minimum(np.asarray(peak_to_mean, float) - 1.0, 1.0)
    return 1.0 + amplitude * np.cos(2.0 * np.pi * (np.mod(hours, HOURS_PER_DAY) - peak_hour) / HOURS_PER_DAY)


def weekly_factor(hours, weekend_ratio):
    """Demand over its weekly mean at hour ``t``; Saturday and Sunday run at ``weekend_ratio`` of a weekday.

    Weekdays ``7 / (5 + 2 w)``, weekend days ``7 w / (5 + 2 w)``, so the weekly mean is 1.

    Parameters
    ----------
    hours : ndarray [h]
        Hour index (hour 0 is Monday 00:00).
    weekend_ratio : float or ndarray [-]
        Weekend-day demand over weekday demand ``w``.

    Returns
    -------
    ndarray [-]
        Weekly demand factor.
    """
    w = np.asarray(weekend_ratio, float)
    weekday = 7.0 / (5.0 + 2.0 * w)
    weekend = np.mod(hours, HOURS_PER_WEEK) >= 5 * HOURS_PER_DAY
    return np.where(weekend, w * weekday, weekday)


def growth_factor(hours, rate_per_year):
    """Compound growth since hour 0: ``(1 + g)^(t / 8760)``.

    Parameters
    ----------
    hours : ndarray [h]
        Hour index.
    rate_per_year : float or ndarray [1/yr]
        Growth rate ``g``.

    Returns
    -------
    ndarray [-]
        Growth factor.
    """
    return np.power(1.0 + np.asarray(rate_per_year, float), np.asarray(hours, float) / HOURS_PER_YEAR)


def demand_requests_per_hour(hours, mean_requests_per_s, peak_to_mean, weekend_ratio, growth_per_year, peak_hour):
    """Requests arriving in hour ``t``: ``3600 x mean x growth x diurnal x weekly``.

    Parameters
    ----------
    hours : ndarray [h]
        Hour index.
    mean_requests_per_s : float or ndarray [req/s]
        Mean demand at hour 0.
    peak_to_mean : float or ndarray [-]
        Daily peak over daily mean.
    weekend_ratio : float or ndarray [-]
        Weekend-day over weekday demand.
    growth_per_year : float or ndarray [1/yr]
        Demand growth.
    peak_hour : float or ndarray [h]
        Hour of the daily peak.

    Returns
    -------
    ndarray [req/h]
        Arrivals per hour, hours on the last axis.
    """
    return (3600.0 * np.asarray(mean_requests_per_s, float) * growth_factor(hours, growth_per_year)
            * diurnal_factor(hours, peak_to_mean, peak_hour) * weekly_factor(hours, weekend_ratio))


def backlog(arrivals, capacity):
    """Work carried over at the end of each hour.

    Lindley's recursion ``Q(t) = max(Q(t-1) + a(t) - c(t), 0)`` with ``Q(-1) = 0``, in
    closed form ``Q(t) = S(t) - min(0, min_{s<=t} S(s))``, ``S(t) = sum_{s<=t} (a - c)``.
    Hours on the last axis.

    Parameters
    ----------
    arrivals : ndarray [req/h]
        Work arriving each hour (requests, or any unit shared with ``capacity``).
    capacity : ndarray [req/h]
        Work the pool can finish each hour, same unit.

    Returns
    -------
    ndarray [req]
        Backlog at the end of each hour, in the unit of the inputs.

    References
    ----------
    [lindley-1952] the recursion of the waiting time.
    """
    running = np.cumsum(np.asarray(arrivals, float) - capacity, axis=-1)
    return running - np.minimum(np.minimum.accumulate(running, axis=-1), 0.0)


def completions(arrivals, carried):
    """Work finished in each hour: ``a(t) + Q(t-1) - Q(t)``.

    Parameters
    ----------
    arrivals : ndarray [req/h]
        Work arriving each hour.
    carried : ndarray [req]
        Backlog at the end of each hour (:func:`backlog`).

    Returns
    -------
    ndarray [req/h]
        Work finished each hour, in the unit of the arrivals.
    """
    carried = np.asarray(carried, float)
    previous = np.concatenate([np.zeros_like(carried[..., :1]), carried[..., :-1]], axis=-1)
    return np.maximum(arrivals + previous - carried, 0.0)


def tandem(arrivals, prefill_capacity, decode_capacity):
    """Two pools in series (prefill feeds decode), per hour.

    Parameters
    ----------
    arrivals : ndarray [req/h]
        Requests arriving each hour.
    prefill_capacity : ndarray [req/h]
        Requests the prefill pool can finish each hour.
    decode_capacity : ndarray [req/h]
        Requests the decode pool can finish each hour.

    Returns
    -------
    prefill_backlog : ndarray [req]
        Prefill backlog at the end of each hour.
    prefill_done : ndarray [req/h]
        Requests the prefill pool finished each hour.
    decode_backlog : ndarray [req]
        Decode backlog at the end of each hour.
    decode_done : ndarray [req/h]
        Requests the decode pool finished each hour.

    References
    ----------
    [lindley-1952] each pool's backlog.
    """
    arrivals, prefill_capacity, decode_capacity = np.broadcast_arrays(
        np.asarray(arrivals, float), np.asarray(prefill_capacity, float), np.asarray(decode_capacity, float))
    q1 = backlog(arrivals, prefill_capacity)
    d1 = completions(arrivals, q1)
    q2 = backlog(d1, decode_capacity)
    return q1, d1, q2, completions(d1, q2)


def nonempty(carried, capacity):
    """Whether a backlog holds work at the end of the hour (beyond round-off).

    Parameters
    ----------
    carried : ndarray [req]
        Backlog at the end of each hour.
    capacity : ndarray [req/h]
        The pool's hourly capacity (scales the round-off tolerance).

    Returns
    -------
    ndarray of bool [-]
        True where work waits.
    """
    return np.asarray(carried, float) > EMPTY_TOLERANCE * np.maximum(np.asarray(capacity, float), 1.0)


def stranded_share(devices, busy_share, other_queue_nonempty):
    """Share of a pool's device-hours idle while the other pool's queue is non-empty.

    ``sum_t N (1 - busy_t) [Q_other(t) > 0] / sum_t N``, hours on the last axis. ``busy_t``
    is the pool's completed work over its capacity in hour ``t``; an idle share within
    :data:`EMPTY_TOLERANCE` of 0 is round-off of a pool that finished exactly its capacity and
    counts as busy (it printed as 5.7e-14 % for fleet-split's flex policy).

    Parameters
    ----------
    devices : ndarray [devices]
        Devices of the pool ``N``, by hour.
    busy_share : ndarray [-]
        The pool's busy share each hour.
    other_queue_nonempty : ndarray of bool [-]
        Whether the other pool's backlog holds work each hour.

    Returns
    -------
    ndarray [-]
        Stranded share, 0-1.
    """
    devices, busy_share, other_queue_nonempty = np.broadcast_arrays(
        np.asarray(devices, float), np.asarray(busy_share, float), other_queue_nonempty)
    idle = 1.0 - busy_share
    idle = np.where(idle > EMPTY_TOLERANCE, idle, 0.0)
    return np.sum(devices * idle * other_queue_nonempty, axis=-1) / np.sum(devices, axis=-1)


def flexible_split(prefill_capacity, decode_capacity, buffer_prefill_capacity, buffer_decode_capacity):
    """Share of a flexible buffer given to prefill each hour.

    The buffer can serve either phase; its share ``f`` equalizes the two pools'
    capacities in requests/h, which maximizes the tandem's throughput ``min(c1, c2)``:
    ``f = clip((c2 + b_d - c1) / (b_p + b_d), 0, 1)``, with ``b_p`` (``b_d``) the buffer's
    capacity when it does only prefill (only decode).

    Parameters
    ----------
    prefill_capacity : ndarray [req/h]
        The dedicated prefill pool's capacity ``c1``.
    decode_capacity : ndarray [req/h]
        The dedicated decode pool's capacity ``c2``.
    buffer_prefill_capacity : ndarray [req/h]
        The buffer's capacity doing only prefill ``b_p``.
    buffer_decode_capacity : ndarray [req/h]
        The buffer's capacity doing only decode ``b_d``.

    Returns
    -------
    ndarray [-]
        Share of the buffer on prefill, 0-1.
    """
    total = np.maximum(buffer_prefill_capacity + buffer_decode_capacity, 1e-300)
    return np.clip((decode_capacity + buffer_decode_capacity - prefill_capacity) / total, 0.0, 1.0)


def fixed_cost_usd_per_device_hour(unit_capex_usd, rate, life_years, residual_value_fraction, fixed_usd_per_device_year):
    """Hourly cost of owning one device, busy or idle.

    Capital recovery of the unit price net of the discounted residual value
    (:func:`tco.core.money.finance.capital_recovery_usd_per_year`), plus fixed yearly costs per
    device (facility, maintenance), spread over 8,760 h.

    Parameters
    ----------
    unit_capex_usd : float or ndarray [USD]
        Price of one device with its system share.
    rate : float or ndarray [1/yr]
        Discount rate.
    life_years : float or ndarray [yr]
        Useful life.
    residual_value_fraction : float or ndarray [-]
        Value left at end of life, share of the price.
    fixed_usd_per_device_year : float or ndarray [USD/yr]
        Facility and maintenance per device.

    Returns
    -------
    ndarray [USD/device-h]
        Hourly fixed cost per device.

    References
    ----------
    [brealey-myers-allen] capital recovery, ch. 6.
    """
    capital = capital_recovery_usd_per_year(unit_capex_usd, rate, life_years, residual_value_fraction)
    return (capital + fixed_usd_per_device_year) / HOURS_PER_YEAR


def energy_cost_usd_per_device_hour(idle_power_w, tdp_w, host_power_w, busy_share, pue, electricity_usd_per_kwh):
    """Electricity of one device in an hour at its busy share.

    The yearly electricity (:func:`tco.core.serving.power.energy_cost_usd_per_year`) of the device's
    power at that busy share (:func:`tco.core.serving.power.device_power_w`), over 8,760 h.

    Parameters
    ----------
    idle_power_w, tdp_w, host_power_w : float or ndarray [W]
        Idle power, thermal design power and the per-device share of host power.
    busy_share : float or ndarray [-]
        Busy share in the hour, 0-1.
    pue, electricity_usd_per_kwh : float or ndarray [-, USD/kWh]
        Power usage effectiveness and electricity price.

    Returns
    -------
    ndarray [USD/device-h]
        Electricity cost per device-hour.
    """
    power_w = device_power_w(idle_power_w, tdp_w, busy_share, host_power_w)
    return energy_cost_usd_per_year(power_w, pue, electricity_usd_per_kwh) / HOURS_PER_YEAR
