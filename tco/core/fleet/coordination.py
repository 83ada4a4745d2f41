"""Coordination break-even: the utilization at which a specialized pool's edge disappears.

A split fleet buys its edge in the specialized pool (e.g. decode on an SRAM chip). Running
two pools costs coordination, made explicit here as two numbers:

* **scheduling overhead** ``o`` -- extra device time per token for hand-off, KV load and
  scheduling, so a device's full-load rate is ``R = R0 / (1 + o)``;
* **slack** ``s`` -- the share of the specialized pool's capacity held idle so the pools
  can absorb mix swings; the pool then runs at ``u = u_demand (1 - s)``.

Per output token, a pool at utilization ``u`` costs ``fixed / (u R) + variable / R``:
``fixed`` accrues per device-second whether busy or not (idle + host power; capital,
facility, maintenance), ``variable`` only while busy ((TDP - idle) power and its energy
cost). Both energy per token (J) and money per token (USD) have this form, so one
closed form gives the break-even utilization for perf-per-watt and for cost.
"""

from __future__ import annotations

import numpy as np


def per_token_at_utilization(fixed_per_device_s, variable_per_device_s, tokens_per_device_s, utilization):
    """Cost (or energy) per token of a pool at ``utilization``: ``fixed / (u R) + variable / R``.

    Parameters
    ----------
    fixed_per_device_s : float or ndarray [USD/s or W]
        What a device costs per second whether busy or not (money or power).
    variable_per_device_s : float or ndarray [USD/s or W]
        What a device costs per busy second on top.
    tokens_per_device_s : float or ndarray [tokens/s]
        Full-load token rate of a device ``R``.
    utilization : float or ndarray [-]
        Share of time busy ``u``, 0-1.

    Returns
    -------
    ndarray [USD/token or J/token]
        Cost (or energy) per token.
    """
    return fixed_per_device_s / (utilization * tokens_per_device_s) + variable_per_device_s / tokens_per_device_s


def breakeven_utilization(fixed_per_device_s, variable_per_device_s, tokens_per_device_s, budget_per_token):
    """Utilization ``u*`` at which a pool's per-token cost equals ``budget_per_token``.

    Solves ``fixed / (u R) + variable / R = budget``: ``u* = fixed / (R budget - variable)``.
    Below ``u*`` the pool costs more than the budget. NaN when no utilization in (0, 1]
    meets the budget (the pool loses even fully busy).

    Parameters
    ----------
    fixed_per_device_s : float or ndarray [USD/s or W]
        Cost per device-second whether busy or not.
    variable_per_device_s : float or ndarray [USD/s or W]
        Cost per busy device-second on top.
    tokens_per_device_s : float or ndarray [tokens/s]
        Full-load token rate of a device ``R``.
    budget_per_token : float or ndarray [USD/token or J/token]
        The per-token cost to meet (the other pool's).

    Returns
    -------
    ndarray [-]
        Break-even utilization, 0-1, NaN where none.
    """
    denominator = tokens_per_device_s * np.asarray(budget_per_token, float) - variable_per_device_s
    safe = np.where(denominator > 0, denominator, 1.0)
    u = np.where(denominator > 0, fixed_per_device_s / safe, np.inf)
    return np.where(u <= 1.0, u, np.nan)


def effective_tokens_per_device_s(tokens_per_device_s, scheduling_overhead):
    """Full-load token rate of a device once coordination takes its share: ``R0 / (1 + o)``.

    Parameters
    ----------
    tokens_per_device_s : float or ndarray [tokens/s]
        Full-load token rate without coordination ``R0``.
    scheduling_overhead : float or ndarray [-]
        Extra device time per token for coordination ``o``.

    Returns
    -------
    ndarray [tokens/s]
        Effective full-load token rate.
    """
    return tokens_per_device_s / (1.0 + np.asarray(scheduling_overhead, float))


def slack_at_breakeven(breakeven_utilization_value, demand_utilization):
    """Slack share ``s*`` that erases the edge: ``1 - u* / u_demand`` (negative: already erased).

    Parameters
    ----------
    breakeven_utilization_value : float or ndarray [-]
        Break-even utilization ``u*``.
    demand_utilization : float or ndarray [-]
        Utilization the demand alone gives ``u_demand``.

    Returns
    -------
    ndarray [-]
        Slack share at break-even.
    """
    return 1.0 - breakeven_utilization_value / demand_utilization
