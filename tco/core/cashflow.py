"""Year-by-year cash flows of an evaluated option: the finance view of the same numbers.

Years are whole (device lives and the horizon are integers), so every flow falls at an
integer year and ``sum_y flow_y (1+r)^-y`` equals the closed-form present values of
:func:`tco.core.evaluate.evaluate` (a test checks it). Year 0 holds the first purchase.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import finance, lifecycle
from .structure import Option

#: cash-flow lines, in the order a finance reader expects them
CASH_FLOW_LINES = ("capex_usd", "nre_usd", "energy_usd", "facility_usd", "maintenance_usd", "links_usd",
                   "reauthoring_usd", "workload_shift_usd", "residual_usd")


def yearly_cash_flows(option: Option, result: Mapping[str, np.ndarray], values: Mapping[str, object]) -> dict[str, np.ndarray]:
    """Costs by year for one option: ``{line: array[..., years + 1]}`` plus ``total_usd``,
    ``output_tokens`` and ``discount_factor``.

    ``result`` is the option's mapping from :func:`~tco.core.evaluate.evaluate`.
    """
    rate = np.asarray(values["economics.discount_rate"], float)
    horizon = np.asarray(values["economics.horizon_years"], float)
    half_life = np.asarray(values["workload.half_life_years"], float)
    years = np.arange(int(np.max(horizon)) + 1, dtype=float)
    shape = np.shape(result["pv_cost_usd"])
    y = years.reshape((1,) * len(shape) + (-1,))

    def col(array):
        return np.asarray(array, float)[..., None]

    operating = (y >= 1) & (y <= col(horizon))
    lines = {name: np.zeros((*shape, len(years))) for name in CASH_FLOW_LINES}
    for pool in option.pools:
        p = {k.split(".", 1)[1]: v for k, v in result.items() if k.startswith(pool.role + ".")}
        life = col(p["life_years"])
        bought = (np.mod(y, life) == 0) & (y < col(horizon))
        lines["capex_usd"] += bought * col(p["devices"] * p["unit_hardware_usd"])
        lines["nre_usd"] += bought * col(p["devices"] * p["unit_nre_usd"])
        # value credited at end of life, or at the horizon for the last purchase
        credited = ((np.mod(y, life) == 0) & (y > 0) & (y <= col(horizon))) | (y == col(horizon))
        held = np.where(np.mod(y, life) == 0, life, np.mod(y, life))
        value = 1.0 - (1.0 - col(p["residual_value_fraction"])) * held / life
        lines["residual_usd"] -= credited * (y > 0) * value * col(p["devices"] * p["unit_hardware_usd"])
        lines["energy_usd"] += operating * col(p["energy_usd_per_year"])
        lines["facility_usd"] += operating * col(p["facility_usd_per_year"])
        lines["maintenance_usd"] += operating * col(p["maintenance_usd_per_year"])
        lines["reauthoring_usd"] += operating * col(p["reauthoring_usd_per_year"])
        served = lifecycle.served_efficiency_in_year(y, col(half_life), col(p["residual_efficiency"]),
                                                     col(p["half_life_offset_years"]))
        lines["workload_shift_usd"] += operating * (1.0 - served) * col(p["shift_exposure_usd_per_year"])
        if pool.role == "decode":
            lines["links_usd"] += bought * col(result["links.port_capex_usd"]) + operating * col(result["links.usd_per_year"])
    out = dict(lines)
    out["total_usd"] = sum(lines.values())
    out["output_tokens"] = operating * col(result["tokens_per_s"]) * 8760.0 * 3600.0
    out["discount_factor"] = np.broadcast_to(finance.discount_factor(col(rate), y), out["total_usd"].shape)
    return out


def payback_and_irr(base_flows: Mapping[str, np.ndarray], option_flows: Mapping[str, np.ndarray]):
    """Discounted payback year and IRR of choosing the option over the baseline.

    The incremental flow is ``baseline cost - option cost`` per year (what choosing the
    option saves). Returns ``(payback_year, irr)``, NaN where there is none. The IRR is
    reported only for an investment (a net outlay in year 0); an option that is cheaper
    from the first day pays back in year 0 and has no IRR.
    """
    saved = base_flows["total_usd"] - option_flows["total_usd"]
    cumulative = np.cumsum(saved * option_flows["discount_factor"], axis=-1)
    return finance.payback_year(cumulative), np.where(saved[..., 0] < 0, finance.irr(saved), np.nan)
