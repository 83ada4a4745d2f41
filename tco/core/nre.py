"""Economics of building a chip: NRE, unit cost from silicon, break-evens, the vendor's price.

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


def breakeven_volume_units(nre_pv_usd, own_units, pv_cost_without_nre_usd, pv_cost_target_usd):
    """Program volume ``V*`` (own units plus units sold to others) at which the built option ties the target [units].

    The fleet carries the share ``own / V`` of the NRE's present value ``N``, so its PV cost
    is ``a + N own / V`` with ``a`` every other cost. Setting it equal to the target's PV cost
    ``c``: ``V* = N own / (c - a)``. Where ``c <= a`` the option loses even with free NRE:
    ``inf`` (never). More NRE never lowers ``V*``.
    """
    margin = np.asarray(pv_cost_target_usd, float) - pv_cost_without_nre_usd
    safe = np.where(margin > 0, margin, 1.0)
    return np.where(margin > 0, own_units * nre_pv_usd / safe, np.inf)


def breakeven_external_units(breakeven_volume_units, own_units):
    """Units sold to others at which the built option ties the target: ``max(V* - own, 0)`` [units] (0: own use suffices)."""
    return np.maximum(np.asarray(breakeven_volume_units, float) - own_units, 0.0)


def breakeven_nre_usd(own_units, nre_pv_factor, pv_cost_without_nre_usd, pv_cost_target_usd, volume_units):
    """Undiscounted NRE at which the built option ties the target at the program's volume ``V`` [USD].

    From the same line, with the NRE's PV ``f x NRE`` (``f`` its schedule's PV factor):
    ``NRE* = (c - a) V / (own f)``. NaN where ``c <= a``: the option loses even with free NRE (never); NaN where
    the option buys no unit within the horizon: its cost carries no NRE, so no NRE moves it (never).
    """
    margin = np.asarray(pv_cost_target_usd, float) - pv_cost_without_nre_usd
    share = np.asarray(own_units, float) * nre_pv_factor
    wins = (margin > 0) & (share > 0)
    return np.where(wins, margin * volume_units / np.where(wins, share, 1.0), np.nan)


def breakeven_demand(demand, option_fixed_usd, option_pv_usd, baseline_fixed_usd, baseline_pv_usd):
    """Demand at which the option ties the baseline when every cost but the fixed ones scales with demand [unit of ``demand``].

    ``PV_o(D) = F_o + (PV_o - F_o) D' / D`` and likewise for the baseline; they cross at
    ``D* = D (F_o - F_b) / ((PV_b - F_b) - (PV_o - F_o))`` (a fixed cost per program:
    NRE, software ports, re-authoring). 0 when the option wins at any demand, ``inf`` when
    its demand-driven cost is not below the baseline's (never). Exact with continuous
    sizing; whole devices add a step of at most one replica per pool.
    """
    variable_gap = (np.asarray(baseline_pv_usd, float) - baseline_fixed_usd) - (option_pv_usd - option_fixed_usd)
    fixed_gap = np.asarray(option_fixed_usd, float) - baseline_fixed_usd
    safe = np.where(variable_gap > 0, variable_gap, 1.0)
    return np.where(variable_gap > 0, np.maximum(demand * fixed_gap / safe, 0.0), np.where(fixed_gap < 0, 0.0, np.inf))


def nre_per_unit_usd(nre_usd, volume_units):
    """NRE per unit built: ``NRE / max(V, 1)`` [USD/unit] (a program that builds less than one unit carries it on one)."""
    return nre_usd / np.maximum(volume_units, 1.0)


def vendor_unit_price_usd(unit_cost_usd, nre_usd, volume_units, gross_margin):
    """The builder's view of a unit's price: ``(unit cost + NRE / V) / (1 - gross margin)`` [USD/unit]."""
    return (unit_cost_usd + nre_per_unit_usd(nre_usd, volume_units)) / (1.0 - np.asarray(gross_margin, float))


def two_for_two(baseline_tco_usd_per_year, nre_usd, tco_improvement):
    """The ASIC Clouds "two-for-two" rule of thumb (Magaki et al., ISCA 2016, section 6).

    Specializing is likely worth it if the yearly TCO on the existing platform is at least
    twice the NRE *and* the specialized design improves TCO per op/s at least twofold.
    Returns ``(rule_holds, tco_over_nre)``.
    """
    tco_over_nre = baseline_tco_usd_per_year / nre_usd
    return (tco_over_nre >= 2.0) & (tco_improvement >= 2.0), tco_over_nre
