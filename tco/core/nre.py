"""Economics of building a chip: NRE, unit cost from silicon, break-even volume.

A bought device carries its vendor's NRE inside its price; an NRE program applies when
the scenario builds its own chip (DESIGN.md section 5).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

WAFER_DIAMETER_MM = 300.0


def dies_per_wafer(die_area_mm2, wafer_diameter_mm=WAFER_DIAMETER_MM):
    """Gross dies per wafer [dies]: ``pi (d/2)^2 / A - pi d / sqrt(2 A)``.

    Hennessy and Patterson, *Computer Architecture*, 6th ed., section 1.6 (edge loss term).
    """
    area = np.asarray(die_area_mm2, float)
    return np.maximum(np.pi * (wafer_diameter_mm / 2.0) ** 2 / area - np.pi * wafer_diameter_mm / np.sqrt(2.0 * area), 1.0)


def die_yield(die_area_mm2, defect_density_per_cm2):
    """Share of good dies, Poisson model ``exp(-A D0)`` with ``A`` in cm^2 [0-1].

    Hennessy and Patterson, section 1.6 (the Poisson limit of the negative-binomial model).
    """
    return np.exp(-np.asarray(die_area_mm2, float) / 100.0 * defect_density_per_cm2)


def good_die_cost_usd(die_area_mm2, wafer_price_usd, defect_density_per_cm2):
    """Cost of one good die [USD]: ``wafer price / (dies per wafer x yield)``."""
    return wafer_price_usd / (dies_per_wafer(die_area_mm2) * die_yield(die_area_mm2, defect_density_per_cm2))


def program_nre_usd(values: Mapping[str, object]):
    """Total NRE of the scenario's chip program: the sum of its ``program.nre.*`` parts [USD]."""
    return sum(np.asarray(v, float) for k, v in values.items() if k.startswith("program.nre."))


def nre_share_usd_per_unit(nre_usd, volume_units):
    """NRE amortized over every unit built [USD/unit]: ``NRE / V``."""
    return nre_usd / volume_units


def breakeven_volume_units(nre_usd, pv_units_bought, pv_cost_without_nre_usd, pv_cost_target_usd):
    """Volume ``V*`` at which the built option costs the same as the target [units].

    The option's PV cost is linear in the NRE share: ``a + b NRE / V`` with ``b`` the PV
    of the units this fleet buys and ``a`` every other cost. Setting it equal to the
    target's PV cost ``c``: ``V* = b NRE / (c - a)``. Where ``c <= a`` the option loses
    even with free NRE: ``inf`` (never). More NRE never lowers ``V*``.
    """
    margin = np.asarray(pv_cost_target_usd, float) - pv_cost_without_nre_usd
    safe = np.where(margin > 0, margin, 1.0)
    return np.where(margin > 0, pv_units_bought * nre_usd / safe, np.inf)


def breakeven_nre_usd(pv_units_bought, pv_cost_without_nre_usd, pv_cost_target_usd, volume_units):
    """NRE at which the built option ties the target at the program's volume ``V`` [USD].

    From the same linear cost ``a + b NRE / V = c``: ``NRE* = (c - a) V / b``. NaN where
    ``c <= a``: the option loses even with free NRE (never).
    """
    margin = np.asarray(pv_cost_target_usd, float) - pv_cost_without_nre_usd
    return np.where(margin > 0, margin * volume_units / pv_units_bought, np.nan)


def two_for_two(baseline_tco_usd_per_year, nre_usd, tco_improvement):
    """The ASIC Clouds "two-for-two" rule of thumb (Magaki et al., ISCA 2016, section 6).

    Specializing is likely worth it if the yearly TCO on the existing platform is at least
    twice the NRE *and* the specialized design improves TCO per op/s at least twofold.
    Returns ``(rule_holds, tco_over_nre)``.
    """
    tco_over_nre = baseline_tco_usd_per_year / nre_usd
    return (tco_over_nre >= 2.0) & (tco_improvement >= 2.0), tco_over_nre
