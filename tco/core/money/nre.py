"""Economics of building a chip: NRE, unit cost from silicon, break-evens, the vendor's price.

A bought device carries its vendor's NRE inside its price; an NRE program applies when
the scenario builds its own chip (DESIGN.md section 5).
"""

from __future__ import annotations

import numpy as np

WAFER_DIAMETER_MM = 300.0


def dies_per_wafer(die_area_mm2, wafer_diameter_mm=WAFER_DIAMETER_MM):
    """Gross dies per wafer: ``pi (d/2)^2 / A - pi d / sqrt(2 A)``, at least 1.

    Parameters
    ----------
    die_area_mm2 : float or ndarray [mm^2]
        Die area ``A``.
    wafer_diameter_mm : float [mm]
        Wafer diameter ``d`` (300 mm).

    Returns
    -------
    ndarray [dies]
        Gross (untested) dies per wafer, the edge loss subtracted.

    References
    ----------
    [hennessy-patterson] section 1.6, dies per wafer with the edge-loss term.
    """
    area = np.asarray(die_area_mm2, float)
    return np.maximum(np.pi * (wafer_diameter_mm / 2.0) ** 2 / area - np.pi * wafer_diameter_mm / np.sqrt(2.0 * area), 1.0)


def die_yield(die_area_mm2, defect_density_per_cm2):
    """Share of good dies, Poisson model ``exp(-A D0)`` with ``A`` in cm^2.

    Parameters
    ----------
    die_area_mm2 : float or ndarray [mm^2]
        Die area (divided by 100 for cm^2).
    defect_density_per_cm2 : float or ndarray [1/cm^2]
        Defect density ``D0``.

    Returns
    -------
    ndarray [-]
        Die yield, 0-1.

    References
    ----------
    [hennessy-patterson] section 1.6 (the Poisson limit of the negative-binomial model).
    """
    return np.exp(-np.asarray(die_area_mm2, float) / 100.0 * defect_density_per_cm2)


def good_die_cost_usd(die_area_mm2, wafer_price_usd, defect_density_per_cm2):
    """Cost of one good die: ``wafer price / (dies per wafer x yield)``.

    Parameters
    ----------
    die_area_mm2 : float or ndarray [mm^2]
        Die area.
    wafer_price_usd : float or ndarray [USD]
        Price of one processed 300 mm wafer.
    defect_density_per_cm2 : float or ndarray [1/cm^2]
        Defect density.

    Returns
    -------
    ndarray [USD]
        Cost per good die.

    References
    ----------
    [hennessy-patterson] section 1.6, cost of a die.
    """
    return wafer_price_usd / (dies_per_wafer(die_area_mm2) * die_yield(die_area_mm2, defect_density_per_cm2))


def scaled_nre_parts(parts, nre_scale):
    """The node's NRE parts times one multiplier: a program total ``T = k sum_i P_i`` split by the parts' shares.

    ``P_i' = k P_i``, so each part's share ``P_i / sum_j P_j`` of the total is kept and the total is
    ``k`` times the node's; a total ``T`` is ``k = T / sum_j P_j``. Hand check (5 nm, ``assumptions/nre.yaml``):
    design 35, verification 25, masks 15, IP 9, software 25 M USD sum to 109 M USD; a 150 M USD
    program is ``k = 150 / 109 = 1.376``, design ``35 x 150 / 109 = 48.17`` M USD.

    Parameters
    ----------
    parts : Mapping[str, float or ndarray] [USD]
        NRE by part (``design_usd``, ``verification_usd``, ``masks_usd``, ``ip_usd``, ``software_usd``).
    nre_scale : float or ndarray [-]
        The multiplier ``k`` (``program.nre_scale``; 1 = the node's figures).

    Returns
    -------
    dict[str, ndarray] [USD]
        The scaled parts, by part.

    References
    ----------
    [semiengineering-chip-cost] the node totals the parts split.
    """
    return {part: amount * np.asarray(nre_scale, float) for part, amount in parts.items()}


def nre_scale_for_total(total_usd, parts):
    """The multiplier :func:`scaled_nre_parts` needs for a program total: ``k = T / sum_i P_i``.

    Parameters
    ----------
    total_usd : float or ndarray [USD]
        The program's NRE total ``T`` wanted.
    parts : Mapping[str, float or ndarray] [USD]
        The node's NRE parts ``P_i`` (unscaled).

    Returns
    -------
    ndarray [-]
        The multiplier ``k``.

    References
    ----------
    [semiengineering-chip-cost] the node totals the parts split.
    """
    return np.asarray(total_usd, float) / sum(np.asarray(a, float) for a in parts.values())


def expected_respin_usd(respin_probability, masks_usd):
    """Expected cost of a respin: ``p x M``, one more mask set ``M`` with probability ``p``.

    A respin re-tapes-out the fixed design: a new mask set of the node (a full set; a
    metal-only fix costs less, so this is the upper side). Hand check (5 nm): ``p = 0.76``
    (the 2022 survey's respin rate), ``M = 15`` M USD gives ``0.76 x 15 = 11.4`` M USD.

    Parameters
    ----------
    respin_probability : float or ndarray [-]
        Probability ``p`` that first silicon needs a respin (``program.respin_probability``).
    masks_usd : float or ndarray [USD]
        The node's mask set ``M`` (scaled with the program's NRE).

    Returns
    -------
    ndarray [USD]
        Expected respin cost, paid at the second tape-out.

    References
    ----------
    [wilson-2022-respins] about 70 % of IC/ASIC projects need more than one spin; [rwt-masks] the 5 nm mask set.
    """
    return np.asarray(respin_probability, float) * masks_usd


def expected_slip_years(respin_probability, respin_slip_years):
    """Expected delay of deployment: ``p x s``.

    A certainty equivalent: the deployment year is ``ceil(W + p s)`` (:func:`tco.core.money.timeline.deployment_year`),
    not the mix ``p`` of ``ceil(W + s)`` and ``1 - p`` of ``ceil(W)`` a two-outcome model would average; exact for
    ``p`` 0 or 1, and the NRE it adds (:func:`expected_respin_usd`) is exact in expectation.

    Parameters
    ----------
    respin_probability : float or ndarray [-]
        Probability ``p`` of a respin.
    respin_slip_years : float or ndarray [yr]
        Delay ``s`` a respin costs (``program.respin_slip_years``).

    Returns
    -------
    ndarray [yr]
        Expected slip of the time to market.

    References
    ----------
    [wilson-2022-respins] the respin rate; [chetanpatil-productization] tape-out to production, the cycle a respin repeats.
    """
    return np.asarray(respin_probability, float) * respin_slip_years


def breakeven_volume_units(nre_pv_usd, own_units, pv_cost_without_nre_usd, pv_cost_target_usd):
    """Program volume ``V*`` (own units plus units sold to others) at which the built option ties the target.

    The fleet carries the share ``own / V`` of the NRE's present value ``N``, so its PV cost
    is ``a + N own / V`` with ``a`` every other cost. Setting it equal to the target's PV cost
    ``c``: ``V* = N own / (c - a)``. Where ``c <= a`` the option loses even with free NRE:
    ``inf`` (never); where the fleet buys no unit within the horizon (``own = 0``: its chip
    enters service at or after the horizon) no volume is its break-even either: ``inf`` (never).
    More NRE never lowers ``V*``.

    Parameters
    ----------
    nre_pv_usd : float or ndarray [USD]
        Present value of the program's NRE ``N``.
    own_units : float or ndarray [units]
        Units the fleet itself buys.
    pv_cost_without_nre_usd : float or ndarray [USD]
        The built option's PV cost without its NRE ``a``.
    pv_cost_target_usd : float or ndarray [USD]
        The target's PV cost ``c``.

    Returns
    -------
    ndarray [units]
        Break-even program volume, ``inf`` where none exists.
    """
    margin = np.asarray(pv_cost_target_usd, float) - pv_cost_without_nre_usd
    meets = (margin > 0) & (np.asarray(own_units, float) > 0)
    return np.where(meets, own_units * nre_pv_usd / np.where(meets, margin, 1.0), np.inf)


def breakeven_external_units(breakeven_volume_units, own_units):
    """Units sold to others at which the built option ties the target: ``max(V* - own, 0)`` (0: own use suffices).

    Parameters
    ----------
    breakeven_volume_units : float or ndarray [units]
        Break-even program volume ``V*`` (:func:`breakeven_volume_units`).
    own_units : float or ndarray [units]
        Units the fleet itself buys.

    Returns
    -------
    ndarray [units]
        Units to sell to others.
    """
    return np.maximum(np.asarray(breakeven_volume_units, float) - own_units, 0.0)


def breakeven_nre_usd(own_units, nre_pv_factor, pv_cost_without_nre_usd, pv_cost_target_usd, volume_units):
    """Undiscounted NRE at which the built option ties the target at the program's volume ``V``.

    From the same line, with the NRE's PV ``f x NRE`` (``f`` its schedule's PV factor):
    ``NRE* = (c - a) V / (own f)``. NaN where ``c <= a``: the option loses even with free NRE (never); NaN where
    the option buys no unit within the horizon: its cost carries no NRE, so no NRE moves it (never).

    Parameters
    ----------
    own_units : float or ndarray [units]
        Units the fleet itself buys.
    nre_pv_factor : float or ndarray [-]
        PV of the NRE schedule per USD of NRE ``f``.
    pv_cost_without_nre_usd : float or ndarray [USD]
        The built option's PV cost without its NRE ``a``.
    pv_cost_target_usd : float or ndarray [USD]
        The target's PV cost ``c``.
    volume_units : float or ndarray [units]
        Program volume ``V`` (own units plus external units).

    Returns
    -------
    ndarray [USD]
        Break-even NRE, NaN where none exists.
    """
    margin = np.asarray(pv_cost_target_usd, float) - pv_cost_without_nre_usd
    share = np.asarray(own_units, float) * nre_pv_factor
    wins = (margin > 0) & (share > 0)
    return np.where(wins, margin * volume_units / np.where(wins, share, 1.0), np.nan)


def breakeven_demand(demand, option_fixed_usd, option_pv_usd, baseline_fixed_usd, baseline_pv_usd):
    """Demand at which the option ties the baseline when every cost but the fixed ones scales with demand.

    ``PV_o(D) = F_o + (PV_o - F_o) D' / D`` and likewise for the baseline; they cross at
    ``D* = D (F_o - F_b) / ((PV_b - F_b) - (PV_o - F_o))`` (a fixed cost per program:
    NRE, software ports, re-authoring). 0 when the option wins at any demand, ``inf`` when
    its demand-driven cost is not below the baseline's (never). Exact with continuous
    sizing; whole devices add a step of at most one replica per pool.

    Parameters
    ----------
    demand : float or ndarray [req/s]
        The scenario's demand ``D`` (any unit of demand; the result is in the same one).
    option_fixed_usd : float or ndarray [USD]
        PV of the option's fixed costs ``F_o``.
    option_pv_usd : float or ndarray [USD]
        The option's PV cost ``PV_o``.
    baseline_fixed_usd : float or ndarray [USD]
        PV of the baseline's fixed costs ``F_b``.
    baseline_pv_usd : float or ndarray [USD]
        The baseline's PV cost ``PV_b``.

    Returns
    -------
    ndarray [req/s]
        Break-even demand, in the unit of ``demand``.
    """
    variable_gap = (np.asarray(baseline_pv_usd, float) - baseline_fixed_usd) - (option_pv_usd - option_fixed_usd)
    fixed_gap = np.asarray(option_fixed_usd, float) - baseline_fixed_usd
    safe = np.where(variable_gap > 0, variable_gap, 1.0)
    return np.where(variable_gap > 0, np.maximum(demand * fixed_gap / safe, 0.0), np.where(fixed_gap < 0, 0.0, np.inf))


def nre_per_unit_usd(nre_usd, volume_units):
    """NRE per unit built: ``NRE / max(V, 1)`` (a program that builds less than one unit carries it on one).

    Parameters
    ----------
    nre_usd : float or ndarray [USD]
        Program NRE.
    volume_units : float or ndarray [units]
        Units built.

    Returns
    -------
    ndarray [USD/unit]
        NRE carried by each unit.
    """
    return nre_usd / np.maximum(volume_units, 1.0)


def vendor_unit_price_usd(unit_cost_usd, nre_usd, volume_units, gross_margin):
    """The builder's view of a unit's price: ``(unit cost + NRE / V) / (1 - gross margin)``.

    Parameters
    ----------
    unit_cost_usd : float or ndarray [USD/unit]
        Unit cost without NRE.
    nre_usd : float or ndarray [USD]
        Program NRE.
    volume_units : float or ndarray [units]
        Units built.
    gross_margin : float or ndarray [-]
        Vendor's gross margin, share of its price.

    Returns
    -------
    ndarray [USD/unit]
        Price per unit that recovers cost, NRE and margin.
    """
    return (unit_cost_usd + nre_per_unit_usd(nre_usd, volume_units)) / (1.0 - np.asarray(gross_margin, float))


def two_for_two(baseline_tco_usd_per_year, nre_usd, tco_improvement):
    """The ASIC Clouds "two-for-two" rule of thumb.

    Specializing is likely worth it if the yearly TCO on the existing platform is at least
    twice the NRE *and* the specialized design improves TCO per op/s at least twofold.

    Parameters
    ----------
    baseline_tco_usd_per_year : float or ndarray [USD/yr]
        Yearly TCO of the workload on the existing platform.
    nre_usd : float or ndarray [USD]
        NRE of the specialized design.
    tco_improvement : float or ndarray [-]
        Baseline TCO per op/s over the specialized design's.

    Returns
    -------
    rule_holds : ndarray of bool [-]
        Whether both ratios reach 2.
    tco_over_nre : ndarray [1/yr]
        The yearly TCO over the NRE.

    References
    ----------
    [magaki-asic-clouds] section 6, the two-for-two rule.
    """
    tco_over_nre = baseline_tco_usd_per_year / nre_usd
    return (tco_over_nre >= 2.0) & (tco_improvement >= 2.0), tco_over_nre
