"""Power and energy of devices at a given utilization."""

from __future__ import annotations

HOURS_PER_YEAR = 8760.0
JOULES_PER_KWH = 3.6e6


def device_power_w(idle_power_w, tdp_w, utilization, host_power_w=0.0):
    """Mean wall power of one device and its host share at ``utilization``.

    Linear between idle and TDP, ``idle + (TDP - idle) x u``, plus the per-device share
    of host power (CPUs, NICs, fans).

    Parameters
    ----------
    idle_power_w : float or ndarray [W]
        Power when idle.
    tdp_w : float or ndarray [W]
        Thermal design power (drawn at full utilization).
    utilization : float or ndarray [-]
        Share of time busy, 0-1.
    host_power_w : float or ndarray [W]
        Per-device share of host and server power.

    Returns
    -------
    ndarray [W]
        Mean power of the device with its host share.

    References
    ----------
    [barroso-datacenter-computer] the linear power model, ch. 5.
    """
    return idle_power_w + (tdp_w - idle_power_w) * utilization + host_power_w


def energy_cost_usd_per_year(power_w, pue, electricity_usd_per_kwh):
    """Electricity cost of a constant IT load over a year.

    ``P [W] x PUE x 8760 h / 1000 x price [USD/kWh]``.

    Parameters
    ----------
    power_w : float or ndarray [W]
        IT power, constant over the year.
    pue : float or ndarray [-]
        Power usage effectiveness (facility power / IT power).
    electricity_usd_per_kwh : float or ndarray [USD/kWh]
        Electricity price.

    Returns
    -------
    ndarray [USD/yr]
        Yearly electricity cost at the wall.
    """
    return power_w * pue * HOURS_PER_YEAR / 1000.0 * electricity_usd_per_kwh


def facility_cost_usd_per_year(provisioned_power_w, facility_usd_per_kw_month):
    """Data-hall cost of provisioned IT power: ``kW x rate x 12``.

    Wholesale colocation is priced per kW of critical IT load per month, so no PUE here.

    Parameters
    ----------
    provisioned_power_w : float or ndarray [W]
        IT power the hall is provisioned for.
    facility_usd_per_kw_month : float or ndarray [USD/kW-month]
        Colocation price per kW of critical IT load.

    Returns
    -------
    ndarray [USD/yr]
        Yearly data-hall cost.

    References
    ----------
    [cbre-dc-trends] wholesale colocation per kW-month.
    """
    return provisioned_power_w / 1000.0 * facility_usd_per_kw_month * 12.0


def running_cost_usd_per_year(power_w, pue, electricity_usd_per_kwh, facility_usd_per_kw_month):
    """Electricity plus data hall of a constant IT load provisioned at that load.

    :func:`energy_cost_usd_per_year` + :func:`facility_cost_usd_per_year` (KV-link ports).

    Parameters
    ----------
    power_w : float or ndarray [W]
        IT power, constant and provisioned.
    pue : float or ndarray [-]
        Power usage effectiveness.
    electricity_usd_per_kwh : float or ndarray [USD/kWh]
        Electricity price.
    facility_usd_per_kw_month : float or ndarray [USD/kW-month]
        Colocation price per kW of critical IT load.

    Returns
    -------
    ndarray [USD/yr]
        Yearly electricity and data-hall cost.
    """
    return energy_cost_usd_per_year(power_w, pue, electricity_usd_per_kwh) \
        + facility_cost_usd_per_year(power_w, facility_usd_per_kw_month)


def energy_price_usd_per_joule(pue, electricity_usd_per_kwh):
    """What one joule of IT energy costs at the wall: ``PUE x price / 3.6e6``.

    Parameters
    ----------
    pue : float or ndarray [-]
        Power usage effectiveness.
    electricity_usd_per_kwh : float or ndarray [USD/kWh]
        Electricity price.

    Returns
    -------
    ndarray [USD/J]
        Price of one joule drawn by the IT load.
    """
    return pue * electricity_usd_per_kwh / JOULES_PER_KWH
