"""Year-by-year cash flows of an evaluated option: the finance view of the same numbers.

Years are whole (device lives, the horizon and a built chip's deployment year are
integers), so every flow falls at an integer year and ``sum_y flow_y (1+r)^-y`` equals the
closed-form present values of :func:`tco.core.evaluate.evaluate` (a test checks it). Year 0
holds the first purchases and the start of a chip program's NRE.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tco.core import names as named
from tco.core.money import finance
from tco.core.money.plan import yearly_lines
from tco.core.outputs import CASH_FLOW_LINES, CashFlows, OptionResult
from tco.core.structure import Option


def yearly_cash_flows(option: Option, result: OptionResult, values: Mapping[str, object]) -> CashFlows:
    """Costs by year for one option, read from its money plan.

    Each line as ``array[..., years + 1]`` (year 0 first), their total, the output tokens
    served, the discount factor and the devices bought and held per pool.

    Parameters
    ----------
    option : Option
        The option's structure (its pools).
    result : OptionResult
        The option's result from :func:`~tco.core.evaluate.evaluate` (its money plan).
    values : Mapping[str, object]
        The named parameter values; reads ``economics.discount_rate`` [1/yr].

    Returns
    -------
    CashFlows
        Lines [USD] and total [USD] by year, output tokens [tokens] by year, discount
        factor [-], devices bought and held [devices] by pool and year.
    """
    shape = np.shape(result.pv_cost_usd)
    flows = yearly_lines(result.money, shape)
    years = flows.tokens.shape[-1]
    lines = {name: flows.lines.get(name, np.zeros((*shape, years))) for name in CASH_FLOW_LINES}
    total = sum(lines.values())
    y = np.arange(years, dtype=float)
    rate = np.asarray(values[named.economics.discount_rate], float)[..., None]
    return CashFlows(lines=lines, total_usd=total, output_tokens=flows.tokens,
                     discount_factor=np.broadcast_to(finance.discount_factor(rate, y), total.shape),
                     bought=flows.bought, held=flows.held, generation=flows.generation)


#: why choosing an option has no IRR, in the words every view uses (the CLI's JSON, the workbook's IRR cell)
NO_IRR_WITHOUT_OUTLAY = "none: no outlay in year 0, cheaper from the start"
NO_IRR_NEVER_REPAID = "none: the savings never repay the outlay"


def payback_and_irr(base_flows: CashFlows, option_flows: CashFlows):
    """Discounted payback year and IRR of choosing the option over the baseline.

    The incremental flow is ``baseline cost - option cost`` per year (what choosing the
    option saves). The IRR is reported only for an investment (a net outlay in year 0); an
    option that is cheaper from the first day pays back in year 0 and has no IRR.

    Parameters
    ----------
    base_flows : CashFlows
        The baseline's yearly cash flows.
    option_flows : CashFlows
        The option's yearly cash flows (padded with zeros to the longer of the two).

    Returns
    -------
    payback_year : ndarray [yr]
        First year from which the cumulative discounted savings stay >= 0, NaN if never.
    irr : ndarray [1/yr]
        Internal rate of return of the savings, NaN without an outlay in year 0 or a sign change.
    outlay_in_year_0 : ndarray [bool]
        Whether choosing the option costs more than the baseline in year 0 (an IRR exists only then).

    References
    ----------
    [brealey-myers-allen] discounted payback and IRR, ch. 5.
    """
    base, option = _aligned(base_flows.total_usd, option_flows.total_usd)
    discount = max(base_flows.discount_factor, option_flows.discount_factor, key=lambda d: d.shape[-1])
    saved = base - option
    cumulative = np.cumsum(saved * discount, axis=-1)
    outlay = saved[..., 0] < 0
    return finance.payback_year(cumulative), np.where(outlay, finance.irr(saved), np.nan), outlay


def no_irr_reason(irr: float, outlay_in_year_0: bool) -> str | None:
    """Why an option has no IRR (:func:`payback_and_irr`), None where it has one.

    Parameters
    ----------
    irr : float [1/yr]
        The IRR (NaN: none).
    outlay_in_year_0 : bool
        Whether choosing the option costs more than the baseline in year 0.

    Returns
    -------
    str or None
        :data:`NO_IRR_WITHOUT_OUTLAY`, :data:`NO_IRR_NEVER_REPAID`, or None.
    """
    if np.isfinite(irr):
        return None
    return NO_IRR_NEVER_REPAID if outlay_in_year_0 else NO_IRR_WITHOUT_OUTLAY


def _aligned(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two yearly arrays padded with zeros to the same number of years (a chip's design may outlast the horizon)."""
    years = max(a.shape[-1], b.shape[-1])

    def pad(x):
        return np.concatenate([x, np.zeros((*x.shape[:-1], years - x.shape[-1]))], axis=-1) if x.shape[-1] < years else x

    return pad(np.asarray(a, float)), pad(np.asarray(b, float))
