"""Power and energy of devices at a given utilization."""

from __future__ import annotations

HOURS_PER_YEAR = 8760.0
JOULES_PER_KWH = 3.6e6


def device_power_w(idle_power_w, tdp_w, utilization, host_power_w=0.0):
    """Mean wall power of one device and its host share at ``utilization`` [W].

    Linear between idle and TDP, ``idle + (TDP - idle) x u``, plus the per-device share
    of host power (CPUs, NICs, fans); the linear model follows Barroso, Hoelzle and
    Ranganathan, *The Datacenter as a Computer*, 3rd ed. (2018), ch. 5.
    """
    return idle_power_w + (tdp_w - idle_power_w) * utilization + host_power_w


def energy_cost_usd_per_year(power_w, pue, electricity_usd_per_kwh):
    """Electricity cost of a constant IT load over a year [USD/yr].

    ``P [W] x PUE x 8760 h / 1000 x price [USD/kWh]``.
    """
    return power_w * pue * HOURS_PER_YEAR / 1000.0 * electricity_usd_per_kwh


def facility_cost_usd_per_year(provisioned_power_w, facility_usd_per_kw_month):
    """Data-hall cost of provisioned IT power [USD/yr]: ``kW x rate x 12``.

    Wholesale colocation is priced per kW of critical IT load per month (CBRE North
    America Data Center Trends, H2 2024), so no PUE here.
    """
    return provisioned_power_w / 1000.0 * facility_usd_per_kw_month * 12.0


def running_cost_usd_per_year(power_w, pue, electricity_usd_per_kwh, facility_usd_per_kw_month):
    """Electricity plus data hall of a constant IT load provisioned at that load [USD/yr].

    :func:`energy_cost_usd_per_year` + :func:`facility_cost_usd_per_year` (KV-link ports).
    """
    return energy_cost_usd_per_year(power_w, pue, electricity_usd_per_kwh) \
        + facility_cost_usd_per_year(power_w, facility_usd_per_kw_month)


def energy_price_usd_per_joule(pue, electricity_usd_per_kwh):
    """What one joule of IT energy costs at the wall [USD/J]: ``PUE x price / 3.6e6``."""
    return pue * electricity_usd_per_kwh / JOULES_PER_KWH
