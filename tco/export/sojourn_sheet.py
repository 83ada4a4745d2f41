"""A prefill lane fed prompts of varying length, on the Model sheet: :mod:`tco.core.serving.sojourn` as live formulas.

Each function mirrors its namesake term by term (the bisection of :func:`tco.core.serving.sojourn.sojourn_utilization` as one
cell a step, Kingman's exponent for gamma service as Newton cells). The lane formulas take the deterministic lane of
:mod:`tco.export.serving_sheet` where the spread is 0 (``IF``), as the core does, so a workbook whose spread is edited
to 0 gives the numbers of before.
"""

from __future__ import annotations

from tco.core.serving.queueing import (
    EXPONENT_CAP,
    EXPONENT_FLOOR,
    KINGMAN_NEWTON_STEPS,
    SCV_FLOOR,
    SERVICE_FLOOR_S,
    UTILIZATION_FLOOR,
)
from tco.core.serving.sojourn import (
    SOJOURN_BISECTION_STEPS,
    SOJOURN_EXPONENT_FLOOR,
    SOJOURN_POLE_SHARE,
    SOJOURN_UTILIZATION_FLOOR,
)
from tco.export import queue_formulas as qf

#: what a lane count "no number of lanes suffices" is written as (the core's infinity; the per-lane rule's ``a / rho``
#: at the utilization floor, ``1e200 a``, is always the fewer)
NO_LANES_SUFFICE = "1E+300"


def length_quantile(scv: str, epsilon: str) -> str:
    """:func:`tco.core.serving.sojourn.length_quantile`: ``max(1 - v/9 + z sqrt(v/9), 0)^3``."""
    v9 = f"(({scv})/9)"
    z = qf.normal_quantile(f"(1-({epsilon}))")
    return f"(MAX(1-{v9}+{z}*SQRT({v9}),0)^3)"


def shortened_slack(slack: str, own: str, scv: str, epsilon: str) -> str:
    """The square-root rule's slack with the own prefill at its quantile, ``slack - L (X_q - 1)``."""
    return f"(({slack})-MAX({own},0)*({length_quantile(scv, epsilon)}-1))"


def _tail(x: str, v: str, own_ratio: str) -> tuple[str, str]:
    """:func:`tco.core.serving.sojourn.sojourn_log_tail` at ``x``: ``(ln(C M(x l)), rho)`` as formula text."""
    vx = f"({v}*{x})"
    mgf_excess = f"(EXP(MIN(-LN(1-{vx})/{v},{EXPONENT_CAP:g}))-1)"
    rho = f"({x}/{mgf_excess})"
    constant = f"((1-{rho})/({rho}*({mgf_excess}+1)/(1-{vx})-1))"
    return f"(LN({constant})-LN(1-{vx}*{own_ratio})/{v})", rho


def kingman_exponent(q, label: str, utilization: str, v: str) -> str:
    """:func:`tco.core.serving.queueing.kingman_exponent` for gamma service (``v`` already floored), Newton steps as cells."""
    rho = q(f"{label}: utilization, clamped", f"MIN(MAX({utilization},1E-300),1)", "")
    x = q(f"{label}: exponent, start above the root",
          f"MIN(2*(1-{rho})/({rho}*(1+{v})),(1-EXP(-{v}*LN(1+1/({v}*{rho}))))/{v})", "")
    for step in range(KINGMAN_NEWTON_STEPS):
        x = q(f"{label}: exponent, floored, before Newton step {step + 1}", f"MAX({x},{EXPONENT_FLOOR:.0E})", "")
        inner = f"MAX(1-{v}*{x},1E-300)"
        mgf = q(f"{label}: generating function, step {step + 1}", f"EXP(MIN(-LN({inner})/{v},{EXPONENT_CAP:g}))", "")
        x = q(f"{label}: exponent after Newton step {step + 1}",
              f"{x}-(LN({x})-LN({mgf}-1)-LN({rho}))/(1/{x}-{mgf}/({inner}*({mgf}-1)))", "")
    return f"MAX({x},{EXPONENT_FLOOR:.0E})"


def _terms(q, label: str, service: str, own: str, scv: str) -> tuple[str, str, str]:
    """``v`` floored, ``S`` floored and ``l = min(max(L, 0) / S, 1)`` (cells)."""
    v = q(f"{label}: length spread, floored", f"MAX({scv},{SCV_FLOOR:g})", "")
    floored = q(f"{label}: lane service, floored", f"MAX({service},{SERVICE_FLOOR_S:.0E})", "s")
    own_ratio = q(f"{label}: own prefill over the service", f"MIN(MAX({own},0)/{floored},1)", "")
    return v, floored, own_ratio


def sojourn_utilization(q, label: str, service: str, own: str, slack: str, scv: str, epsilon: str,
                        shortened: str) -> str:
    """:func:`tco.core.serving.sojourn.sojourn_utilization` (cells labelled ``label``; ``shortened`` the cell of
    :func:`shortened_slack`); returns the utilization per lane."""
    v, floored, own_ratio = _terms(q, label, service, own, scv)
    sojourn = q(f"{label}: sojourn allowed over the service", f"MAX({slack},0)/{floored}+{own_ratio}", "")
    top = kingman_exponent(q, f"{label}: bracket", f"{SOJOURN_UTILIZATION_FLOOR:.0E}", v)
    high = q(f"{label}: ln exponent, high end", f"LN(MIN({top},{SOJOURN_POLE_SHARE!r}/{v}))", "")
    width = q(f"{label}: ln exponent, bracket width (from ln {SOJOURN_EXPONENT_FLOOR:.0E})",
              f"{high}-LN({SOJOURN_EXPONENT_FLOOR:.0E})", "")
    for step in range(1, SOJOURN_BISECTION_STEPS + 1):
        middle = f"({high}-{width}*{0.5**step!r})"
        x = f"EXP({middle})"
        tail, _ = _tail(x, v, own_ratio)
        within = f"{tail}-{x}*{sojourn}<=LN({epsilon})"
        high = q(f"{label}: bisection step {step}, high end (the low end: a 2^-{step} width below)",
                 f"IF({within},{middle},{high})", "")
    _, rho = _tail(f"EXP({high})", v, own_ratio)
    fits = f"IF({shortened}>0,1,0)"
    return q(f"{label}: utilization per lane (Cramer-Lundberg, gamma lengths)",
             f"MIN({rho},{qf.kingman_utilization(service, slack, epsilon)})*{fits}", "")


def sojourn_wait(q, label: str, load: str, servers: str, service: str, own: str, scv: str, epsilon: str) -> str:
    """:func:`tco.core.serving.sojourn.sojourn_wait_s` at ``rho = a / c`` (cells); returns the wait-equivalent [s]. The tail
    stays a number down to ``rho = 1e-300`` (the exponent below the pole, the generating function capped at
    ``e^700``), so the core's guard against a NaN tail needs no twin here."""
    v, floored, own_ratio = _terms(q, label, service, own, scv)
    utilization = f"MAX({load},1E-300)/MAX({servers},1E-300)"
    x = q(f"{label}: exponent at the load, below the pole",
          f"MIN({kingman_exponent(q, label, utilization, v)},{SOJOURN_POLE_SHARE!r}/{v})", "")
    tail, _ = _tail(x, v, own_ratio)
    deterministic = qf.kingman_wait(q, f"{label} (mean lengths)", load, servers, service, epsilon)
    sojourn = f"{floored}*({tail}-LN({epsilon}))/{x}"
    return q(f"{label}: wait at the percentile with the own prefill (at least Kingman's at mean lengths)",
             f"MAX({sojourn}-{own_ratio}*{floored},{deterministic})", "s")


def lane_servers(q, label: str, load: str, service: str, own: str, slack: str, scv: str, epsilon: str,
                 fits: str, dispatched: bool = False) -> str:
    """:func:`tco.core.serving.sojourn.lane_servers`, the deterministic lane where the spread is 0 or the longest prompts
    alone miss the target (``fits`` 0: the core's fallback in :func:`tco.core.serving.candidates.size_candidate`;
    ``dispatched``: the colocated lanes' square-root rule, :mod:`tco.core.serving.queueing`)."""
    deterministic = qf.servers_within_wait(load, service, slack, epsilon, kingman=True, dispatched=dispatched)
    shortened = q(f"{label}: slack less the own prefill's excess at the percentile",
                  shortened_slack(slack, own, scv, epsilon), "s")
    servers = qf.servers_within_wait(load, service, shortened, epsilon, scv=scv, dispatched=dispatched)
    square_root = f"IF({shortened}>0,{servers},{NO_LANES_SUFFICE})"
    rho = sojourn_utilization(q, label, service, own, slack, scv, epsilon, shortened)
    variable = f"MIN({square_root},MAX({load},0)/MAX({rho},{UTILIZATION_FLOOR:.0E}))"
    return f"IF(OR(({scv})=0,({fits})=0),{deterministic},{variable})"


def lane_wait(q, label: str, load: str, servers: str, service: str, own: str, scv: str, epsilon: str,
              sizing_slack: str, dispatched: bool = False) -> str:
    """:func:`tco.core.serving.sojourn.lane_wait_s`: the deterministic lane's wait where the spread is 0 (``dispatched`` as in
    :func:`lane_servers`)."""
    deterministic = qf.wait_quantile(q, f"{label} (mean lengths)", load, servers, service, epsilon, sizing_slack,
                                     kingman=True, dispatched=dispatched)
    excess = q(f"{label}: own prefill's excess at the percentile",
               f"({sizing_slack})-{shortened_slack(sizing_slack, own, scv, epsilon)}", "s")
    square_root = (qf.wait_quantile(q, f"{label} (square root)", load, servers, service, epsilon,
                                    f"(({sizing_slack})-{excess})", scv=scv, dispatched=dispatched) + f"+{excess}")
    variable = f"MIN({square_root},{sojourn_wait(q, label, load, servers, service, own, scv, epsilon)})"
    return f"IF(({scv})=0,{deterministic},{variable})"


def own_prefill(work: str, latency: str) -> str:
    """:func:`tco.core.serving.cycles.own_prefill_s`: ``min(latency, work)``."""
    return f"MIN({latency},{work})"


def own_prefill_fits(slack: str, own: str, scv: str, epsilon: str) -> str:
    """:func:`tco.core.serving.cycles.own_prefill_fits` (1/0)."""
    return f"IF(AND({slack}>0,{slack}>{own}*({length_quantile(scv, epsilon)}-1)),1,0)"
