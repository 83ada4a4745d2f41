"""Year-by-year cash flows of an evaluated option: the finance view of the same numbers.

Years are whole (device lives and the horizon are integers), so every flow falls at an
integer year and ``sum_y flow_y (1+r)^-y`` equals the closed-form present values of
:func:`tco.core.evaluate.evaluate` (a test checks it). Year 0 holds the first purchase.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import finance, lifecycle
from .outputs import CASH_FLOW_LINES, YEARLY_COSTS, CashFlows, OptionResult
from .sizing import SECONDS_PER_YEAR
from .structure import Option


def yearly_cash_flows(option: Option, result: OptionResult, values: Mapping[str, object]) -> CashFlows:
    """Costs by year for one option: each line as ``array[..., years + 1]``, their total,
    the output tokens served and the discount factor (:class:`~tco.core.outputs.CashFlows`).

    ``result`` is the option's :class:`~tco.core.outputs.OptionResult` from :func:`~tco.core.evaluate.evaluate`.
    """
    rate = np.asarray(values["economics.discount_rate"], float)
    horizon = np.asarray(values["economics.horizon_years"], float)
    half_life = np.asarray(values["workload.half_life_years"], float)
    years = np.arange(int(np.max(horizon)) + 1, dtype=float)
    shape = np.shape(result.pv_cost_usd)
    y = years.reshape((1,) * len(shape) + (-1,))

    def col(array):
        return np.asarray(array, float)[..., None]

    operating = (y >= 1) & (y <= col(horizon))
    lines = {name: np.zeros((*shape, len(years))) for name in CASH_FLOW_LINES}
    for pool in option.pools:
        p = result.pool(pool.role)
        c, devices = p.costs, p.sizing.devices
        life = col(c.life_years)
        bought = (np.mod(y, life) == 0) & (y < col(horizon))
        lines["capex_usd"] += bought * col(devices * c.unit_hardware_usd)
        lines["nre_usd"] += bought * col(devices * c.unit_nre_usd)
        # value credited at end of life, or at the horizon for the last purchase
        credited = ((np.mod(y, life) == 0) & (y > 0) & (y <= col(horizon))) | (y == col(horizon))
        held = np.where(np.mod(y, life) == 0, life, np.mod(y, life))
        value = 1.0 - (1.0 - col(c.residual_value_fraction)) * held / life
        lines["residual_usd"] -= credited * (y > 0) * value * col(devices * c.unit_hardware_usd)
        for name, line in YEARLY_COSTS.items():
            lines[line] += operating * col(getattr(c, name))
        served = lifecycle.served_efficiency_in_year(y, col(half_life), col(c.residual_efficiency),
                                                     col(c.half_life_offset_years))
        lines["workload_shift_usd"] += operating * (1.0 - served) * col(p.present_values.shift_exposure_usd_per_year)
        if pool.role == "decode":
            lines["links_usd"] += bought * col(result.links.port_capex_usd) + operating * col(result.links.usd_per_year)
    total = sum(lines.values())
    return CashFlows(lines=lines, total_usd=total,
                     output_tokens=operating * col(result.tokens_per_s) * SECONDS_PER_YEAR,
                     discount_factor=np.broadcast_to(finance.discount_factor(col(rate), y), total.shape))


def payback_and_irr(base_flows: CashFlows, option_flows: CashFlows):
    """Discounted payback year and IRR of choosing the option over the baseline.

    The incremental flow is ``baseline cost - option cost`` per year (what choosing the
    option saves). Returns ``(payback_year, irr)``, NaN where there is none. The IRR is
    reported only for an investment (a net outlay in year 0); an option that is cheaper
    from the first day pays back in year 0 and has no IRR.
    """
    saved = base_flows.total_usd - option_flows.total_usd
    cumulative = np.cumsum(saved * option_flows.discount_factor, axis=-1)
    return finance.payback_year(cumulative), np.where(saved[..., 0] < 0, finance.irr(saved), np.nan)
