"""Queueing formulas as spreadsheet text: normal quantiles, square-root staffing, Kingman's
heavy-traffic wait, the waiting-time percentile; the twins of :mod:`tco.core.serving.queueing`."""

from __future__ import annotations

from tco.core.serving.queueing import (
    _AS_C,
    _AS_D,
    EXPONENT_CAP,
    EXPONENT_FLOOR,
    KINGMAN_NEWTON_STEPS,
    OVERLOADED_WAIT_FACTOR,
    SERVICE_FLOOR_S,
    SLACK_RATIO_CAP,
    UTILIZATION_FLOOR,
    WAIT_ROUNDING_GUARD,
)


def normal_quantile(q: str) -> str:
    """:func:`tco.core.serving.queueing.normal_quantile` (Abramowitz and Stegun 26.2.23)."""
    t = f"SQRT(-2*LN(1-{q}))"
    c0, c1, c2 = _AS_C
    d1, d2, d3 = _AS_D
    return f"({t}-({c0}+{c1}*{t}+{c2}*{t}*{t})/(1+{d1}*{t}+{d2}*{t}*{t}+{d3}*{t}*{t}*{t}))"


def tail_decay_factor(scv: str = "0") -> str:
    """:func:`tco.core.serving.queueing.tail_decay_factor`, ``k = 2 / (1 + c_s^2)``: ``2`` when the service is deterministic."""
    return "2" if scv == "0" else f"(2/(1+{scv}))"


def decay_per_server(service: str, slack: str, scv: str = "0") -> str:
    """``u = k slack / S`` (Poisson arrivals; :func:`tail_decay_factor`)."""
    return f"({tail_decay_factor(scv)}*MAX({slack},0)/MAX({service},{SERVICE_FLOOR_S:.0E}))"


def small_pool_margin(service: str, slack: str, scv: str = "0") -> str:
    """:func:`tco.core.serving.queueing.small_pool_margin`: ``delta = 1 / (1 + u)``."""
    return f"1/(1+{decay_per_server(service, slack, scv)})"


def service_mgf_excess(x: str) -> str:
    """:func:`tco.core.serving.queueing.service_mgf_excess` with service scv 0: ``e^x - 1``, the exponent capped."""
    return f"(EXP(MIN({x},{EXPONENT_CAP:g}))-1)"


def kingman_utilization(service: str, slack: str, epsilon: str) -> str:
    """:func:`tco.core.serving.queueing.kingman_utilization` with service scv 0: ``x / (e^x - 1)``."""
    service_floored = f"MAX({service},{SERVICE_FLOOR_S:.0E})"
    ratio = f"{service_floored}/MAX({slack},{service_floored}/{SLACK_RATIO_CAP:.0E})"
    x = f"MAX(MIN(MAX(-LN({epsilon}),0)*{ratio},{EXPONENT_CAP:g}),{EXPONENT_FLOOR:.0E})"
    return f"MIN({x}/{service_mgf_excess(x)},1)"


def servers_within_wait(load: str, service: str, slack: str, epsilon: str, kingman: bool = False, scv: str = "0",
                        dispatched: bool = False) -> str:
    """:func:`tco.core.serving.queueing.servers_within_wait` (``kingman``, service scv 0: the fewer of square-root staffing
    and Kingman's ``a / rho``; ``dispatched``: the margin at least :func:`tco.core.serving.queueing.dispatched_margin`)."""
    a = f"MAX({load},0)"
    decay = decay_per_server(service, slack, scv)
    big_k = f"({decay}*SQRT({a}))"
    log_term = f"MAX(LN(0.5/({epsilon})),0)"
    beta = f"(SQRT({big_k}*{big_k}+2*{log_term})-{big_k})"
    if dispatched:
        beta = f"MAX({beta},SQRT(2*MAX({log_term}-{decay},0)))"
    square_root = f"{a}+{beta}*SQRT({a})+{small_pool_margin(service, slack, scv)}"
    if not kingman:
        return f"({square_root})"
    return f"MIN({square_root},{a}/MAX({kingman_utilization(service, slack, epsilon)},{UTILIZATION_FLOOR:.0E}))"


def kingman_wait(q, label: str, load: str, servers: str, service: str, epsilon: str) -> str:
    """:func:`tco.core.serving.queueing.kingman_wait_s` at ``rho = a / c`` with service scv 0: the Newton iterates of
    :func:`tco.core.serving.queueing.kingman_exponent` as cells; returns the wait [s] (a cell)."""
    rho = q(f"{label}: utilization per server (Kingman)", f"MIN(MAX(MAX({load},1E-300)/MAX({servers},1E-300),1E-300),1)", "")
    x = q(f"{label}: Kingman exponent, start above the root",
          f"MIN(2*(1-{rho})/{rho},LN(1+2*(1-{rho})/({rho}*{rho})))", "")
    for step in range(KINGMAN_NEWTON_STEPS):
        x = q(f"{label}: Kingman exponent, floored, before Newton step {step + 1}", f"MAX({x},{EXPONENT_FLOOR:.0E})", "")
        mgf = q(f"{label}: e to the exponent, step {step + 1}", f"EXP(MIN({x},{EXPONENT_CAP:g}))", "")
        x = q(f"{label}: Kingman exponent after Newton step {step + 1}",
              f"{x}-(LN({x})-LN({mgf}-1)-LN({rho}))/(1/{x}-{mgf}/({mgf}-1))", "")
    return q(f"{label}: wait at the percentile by Kingman's bound",
             f"{service}*MAX(-LN({epsilon}),0)/MAX({x},{EXPONENT_FLOOR:.0E})", "s")


def wait_quantile(q, label: str, load: str, servers: str, service: str, epsilon: str, slack: str,
                  kingman: bool = False, scv: str = "0", dispatched: bool = False) -> str:
    """:func:`tco.core.serving.queueing.wait_quantile_s` (``kingman``, service scv 0: the shorter of the square-root
    staffing's wait and Kingman's, :func:`kingman_wait`, cells labelled ``label``; ``dispatched``: the decay of the
    conditional wait at most ``k``)."""
    a = f"MAX({load},1E-300)"
    root = f"SQRT({a})"
    delta = small_pool_margin(service, slack, scv)
    beta = f"MAX(({servers}-{a}-{delta})/{root},0)"
    log_term = f"LN(0.5/({epsilon}))"
    numerator = f"MAX({log_term}-0.5*{beta}*{beta},0)"
    guarded = f"IF({numerator}>{WAIT_ROUNDING_GUARD:.0E}*{log_term},{numerator},0)"
    decay = f"{tail_decay_factor(scv)}*{root}*{beta}"
    if dispatched:
        decay = f"MIN({decay},{tail_decay_factor(scv)})"
    square_root = f"{guarded}*{service}/({decay}+{service}*{OVERLOADED_WAIT_FACTOR:.0E})"
    if not kingman:
        return square_root
    return f"MIN({square_root},{kingman_wait(q, label, load, servers, service, epsilon)})"
