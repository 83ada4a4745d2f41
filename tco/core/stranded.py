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

from .finance import capital_recovery_usd_per_year
from .power import HOURS_PER_YEAR, device_power_w, energy_cost_usd_per_year
from .sizing import replicas_needed

HOURS_PER_DAY = 24
HOURS_PER_WEEK = 168
#: 13 weeks
QUARTER_HOURS = 13 * HOURS_PER_WEEK
#: relative tolerance under which a backlog counts as empty (round-off of the running sums)
EMPTY_TOLERANCE = 1e-9


def hours_of_quarter(hours: int = QUARTER_HOURS) -> np.ndarray:
    """Hour index ``t = 0 .. hours-1`` [h]; hour 0 is Monday 00:00."""
    return np.arange(hours, dtype=float)


def diurnal_factor(hours, peak_to_mean, peak_hour):
    """Demand over its daily mean at hour ``t`` [-]: ``1 + a cos(2 pi (t mod 24 - peak_hour) / 24)``.

    ``a = min(peak_to_mean - 1, 1)``: the daily mean is 1 and the daily peak is
    ``peak_to_mean`` (capped at 2 so demand never goes negative; at the cap the trough is 0).
    """
    amplitude = np.minimum(np.asarray(peak_to_mean, float) - 1.0, 1.0)
    return 1.0 + amplitude * np.cos(2.0 * np.pi * (np.mod(hours, HOURS_PER_DAY) - peak_hour) / HOURS_PER_DAY)


def weekly_factor(hours, weekend_ratio):
    """Demand over its weekly mean at hour ``t`` [-]; Saturday and Sunday run at ``weekend_ratio`` of a weekday.

    Weekdays ``7 / (5 + 2 w)``, weekend days ``7 w / (5 + 2 w)``, so the weekly mean is 1.
    """
    w = np.asarray(weekend_ratio, float)
    weekday = 7.0 / (5.0 + 2.0 * w)
    weekend = np.mod(hours, HOURS_PER_WEEK) >= 5 * HOURS_PER_DAY
    return np.where(weekend, w * weekday, weekday)


def growth_factor(hours, rate_per_year):
    """Compound growth since hour 0 [-]: ``(1 + g)^(t / 8760)``."""
    return np.power(1.0 + np.asarray(rate_per_year, float), np.asarray(hours, float) / HOURS_PER_YEAR)


def demand_requests_per_hour(hours, mean_requests_per_s, peak_to_mean, weekend_ratio, growth_per_year, peak_hour):
    """Requests arriving in hour ``t`` [req/h]: ``3600 x mean x growth x diurnal x weekly``."""
    return (3600.0 * np.asarray(mean_requests_per_s, float) * growth_factor(hours, growth_per_year)
            * diurnal_factor(hours, peak_to_mean, peak_hour) * weekly_factor(hours, weekend_ratio))


def backlog(arrivals, capacity):
    """Work carried over at the end of each hour [same unit as the inputs, e.g. requests].

    Lindley's recursion ``Q(t) = max(Q(t-1) + a(t) - c(t), 0)`` with ``Q(-1) = 0``, in
    closed form ``Q(t) = S(t) - min(0, min_{s<=t} S(s))``, ``S(t) = sum_{s<=t} (a - c)``.
    Hours on the last axis.
    """
    running = np.cumsum(np.asarray(arrivals, float) - capacity, axis=-1)
    return running - np.minimum(np.minimum.accumulate(running, axis=-1), 0.0)


def completions(arrivals, carried):
    """Work finished in each hour [unit of arrivals]: ``a(t) + Q(t-1) - Q(t)``."""
    carried = np.asarray(carried, float)
    previous = np.concatenate([np.zeros_like(carried[..., :1]), carried[..., :-1]], axis=-1)
    return np.maximum(arrivals + previous - carried, 0.0)


def tandem(arrivals, prefill_capacity, decode_capacity):
    """Two pools in series (prefill feeds decode), per hour [req/h].

    Returns ``(prefill_backlog, prefill_done, decode_backlog, decode_done)``: the backlogs
    at the end of each hour and the requests each pool finished in it.
    """
    arrivals, prefill_capacity, decode_capacity = np.broadcast_arrays(
        np.asarray(arrivals, float), np.asarray(prefill_capacity, float), np.asarray(decode_capacity, float))
    q1 = backlog(arrivals, prefill_capacity)
    d1 = completions(arrivals, q1)
    q2 = backlog(d1, decode_capacity)
    return q1, d1, q2, completions(d1, q2)


def nonempty(carried, capacity):
    """Whether a backlog holds work at the end of the hour (beyond round-off) [bool]."""
    return np.asarray(carried, float) > EMPTY_TOLERANCE * np.maximum(np.asarray(capacity, float), 1.0)


def stranded_share(devices, busy_share, other_queue_nonempty):
    """Share of a pool's device-hours idle while the other pool's queue is non-empty [0-1].

    ``sum_t N (1 - busy_t) [Q_other(t) > 0] / sum_t N``, hours on the last axis. ``busy_t``
    is the pool's completed work over its capacity in hour ``t``.
    """
    devices, busy_share, other_queue_nonempty = np.broadcast_arrays(
        np.asarray(devices, float), np.asarray(busy_share, float), other_queue_nonempty)
    return np.sum(devices * (1.0 - busy_share) * other_queue_nonempty, axis=-1) / np.sum(devices, axis=-1)


def flexible_split(prefill_capacity, decode_capacity, buffer_prefill_capacity, buffer_decode_capacity):
    """Share of a flexible buffer given to prefill each hour [0-1].

    The buffer can serve either phase; its share ``f`` equalizes the two pools'
    capacities in requests/h, which maximizes the tandem's throughput ``min(c1, c2)``:
    ``f = clip((c2 + b_d - c1) / (b_p + b_d), 0, 1)``, with ``b_p`` (``b_d``) the buffer's
    capacity when it does only prefill (only decode).
    """
    total = np.maximum(buffer_prefill_capacity + buffer_decode_capacity, 1e-300)
    return np.clip((decode_capacity + buffer_decode_capacity - prefill_capacity) / total, 0.0, 1.0)


def replicas_for_load(load, capacity_per_replica, whole=True):
    """Replicas to carry the largest hourly load [replicas]: ``max(ceil(max_t load / capacity), 1)``
    (:func:`.sizing.replicas_needed`).

    ``load`` and ``capacity_per_replica`` share a unit and may vary by hour (last axis).
    """
    return replicas_needed(np.max(np.asarray(load, float) / capacity_per_replica, axis=-1), 1.0, whole)


def fixed_cost_usd_per_device_hour(unit_capex_usd, rate, life_years, residual_value_fraction, fixed_usd_per_device_year):
    """Hourly cost of owning one device, busy or idle [USD/device-h].

    Capital recovery of the unit price net of the discounted residual value
    (:func:`tco.core.finance.capital_recovery_usd_per_year`), plus fixed yearly costs per
    device (facility, maintenance), spread over 8,760 h.
    """
    capital = capital_recovery_usd_per_year(unit_capex_usd, rate, life_years, residual_value_fraction)
    return (capital + fixed_usd_per_device_year) / HOURS_PER_YEAR


def energy_cost_usd_per_device_hour(idle_power_w, tdp_w, host_power_w, busy_share, pue, electricity_usd_per_kwh):
    """Electricity of one device in an hour at its busy share [USD/device-h].

    The yearly electricity (:func:`tco.core.power.energy_cost_usd_per_year`) of the device's
    power at that busy share (:func:`tco.core.power.device_power_w`), over 8,760 h.
    """
    power_w = device_power_w(idle_power_w, tdp_w, busy_share, host_power_w)
    return energy_cost_usd_per_year(power_w, pue, electricity_usd_per_kwh) / HOURS_PER_YEAR
