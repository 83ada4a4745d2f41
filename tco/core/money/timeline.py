"""Time in the money model: demand by year, the chip program's schedule, discounted year sums.

Calendar convention (DESIGN.md section 9): ``t = 0`` is the decision date. Service years
``y = 1..Y`` run from ``t = y - 1`` to ``t = y``; their running costs and tokens fall at
``t = y``. Hardware and NRE are paid at the start of the year they are spent in (``t = y - 1``).

A chip program designs from ``t = 0`` to its time to market ``W``; its fleet enters service
at the first whole year after, ``t_d = ceil(W)``, and the demand of years ``1..t_d`` is
bridged on the baseline's hardware. Options without a built chip deploy at ``t_d = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from tco.core.draws import any_draw, as_floats, maximum, minimum, one_value, where_mixed
from tco.core.serving.sizing import WHOLE_COUNT_GUARD


def _log_discount(rate):
    """``ln(1 + r)`` [1/yr]: the continuous rate of the yearly discount factor."""
    return np.log1p(np.asarray(rate, float))


def geometric_discounted_sum(rate, log_ratio, start_year, end_year, minus_log_discount=None):
    """``sum_{y=a+1}^{b} lambda^(y-1) (1+r)^-y`` with ``lambda = exp(log_ratio)``.

    The present value of a yearly flow that starts at 1 in year 1 and changes by the factor
    ``lambda`` each year, paid in the years ``a+1..b`` (none when ``b <= a``). Closed form
    ``v (x^a - x^b) / (1 - x)`` with ``v = (1+r)^-1`` and ``x = lambda v``, written with
    ``expm1`` so that it stays exact when ``x`` is close to 1 (``v (b - a)`` at ``x = 1``).

    Parameters
    ----------
    rate : float or ndarray [1/yr]
        Discount rate ``r``.
    log_ratio : float or ndarray [1/yr]
        ``ln lambda``, the yearly log-change of the flow (0: level).
    start_year, end_year : float or ndarray [yr]
        The flow is paid in years ``a+1..b``.
    minus_log_discount : ndarray or None [1/yr]
        ``-ln(1 + r)`` when already at hand.

    Returns
    -------
    ndarray [yr]
        Present value per unit of year-1 flow (USD of PV per USD/yr).
    """
    a = as_floats(start_year)
    b = maximum(as_floats(end_year), a)
    rate = as_floats(rate)
    minus_ell_r = -_log_discount(rate) if minus_log_discount is None else minus_log_discount
    one_plus_rate = 1.0 + rate
    growth = not (one_value(log_ratio) and log_ratio == 0.0)
    # ln x; no growth: ln x = -ln(1+r) (a + (-b) is a - b, bit for bit)
    ell = as_floats(log_ratio) + minus_ell_r if growth else minus_ell_r
    flat = ell == 0.0 if growth else rate == 0.0  # x = 1
    safe = where_mixed(flat, 1.0, ell)
    denominator = np.expm1(safe) if growth else -rate / one_plus_rate  # expm1(ln x); no growth: -r/(1+r)
    ratio = np.expm1((b - a) * safe) / where_mixed(flat, 1.0, denominator)
    if not (one_value(a) and a == 0.0):
        ratio = ratio * np.exp(a * safe)
    return where_mixed(flat, b - a, ratio) / one_plus_rate


def annuity_between(rate, start_year, end_year):
    """``sum_{y=a+1}^{b} (1+r)^-y``: PV of 1 USD paid at the end of each year ``a+1..b``.

    Parameters
    ----------
    rate : float or ndarray [1/yr]
        Discount rate.
    start_year, end_year : float or ndarray [yr]
        The payments fall in years ``a+1..b``.

    Returns
    -------
    ndarray [yr]
        The annuity factor (USD of PV per USD/yr).

    References
    ----------
    [brealey-myers-allen] annuities, ch. 2.
    """
    return geometric_discounted_sum(rate, 0.0, start_year, end_year)


def deployment_year(time_to_market_years):
    """Whole year at which a built chip's fleet enters service, ``ceil(W)`` (0 for ``W = 0``).

    Parameters
    ----------
    time_to_market_years : float or ndarray [yr]
        Design start to deployment ``W``.

    Returns
    -------
    ndarray [yr]
        Deployment year ``t_d``.
    """
    return np.ceil(np.asarray(time_to_market_years, float) - WHOLE_COUNT_GUARD)


# --- demand over the horizon -------------------------------------------------------------------------


def _memo_key(x):
    """A scalar by value, an array by identity (the memo keeps the array alive)."""
    if type(x) is float:
        return x
    if isinstance(x, np.ndarray) and x.ndim:
        return ("array", id(x))
    return float(x)


@dataclass
class DemandPath:
    """Demand in service year ``y`` as a multiple of year 1 (``workload.requests_per_s``).

    ``m_y = (1 + g)^(y-1)``, or a yearly series ``m_1..m_n`` continued at the growth rate
    ``m_y = m_n (1 + g)^(y - n)`` after its last year. ``rate`` discounts the sums; one
    evaluation asks for the same sums many times (every pool, every option), so they are
    computed once and kept (keyed by the identity of their array arguments, which are kept
    alive with the result).
    """

    rate: np.ndarray
    growth: np.ndarray
    series: tuple = ()
    last_year: int = 1
    _memo: dict = field(default_factory=dict, repr=False, compare=False)

    def _remembered(self, kind: str, args: tuple, compute):
        key = (kind, *map(_memo_key, args))
        if key not in self._memo:
            self._memo[key] = (compute(), args)
        return self._memo[key][0]

    @property
    def log_discount(self):
        """``ln(1 + r)`` [1/yr]."""
        return self._remembered("log_discount", (), lambda: _log_discount(self.rate))

    @property
    def minus_log_discount(self):
        """``-ln(1 + r)`` [1/yr] (one negation shared by every exponent ``-t ln(1 + r)``)."""
        return self._remembered("minus_log_discount", (), lambda: -self.log_discount)

    def discount(self, t_years):
        """``(1 + r)^-t``.

        Parameters
        ----------
        t_years : float or ndarray [yr]
            Time after the decision.

        Returns
        -------
        ndarray [-]
            Discount factor.
        """
        return self._remembered("discount", (t_years,), lambda: np.exp(as_floats(t_years) * self.minus_log_discount))

    def discount_minus_one(self, t_years):
        """``(1 + r)^-t - 1``, exact for small ``r t`` (``expm1``).

        Parameters
        ----------
        t_years : float or ndarray [yr]
            Time after the decision (the rounding of ``1 - (1 + r)^-t`` matters when ``r t`` is small).

        Returns
        -------
        ndarray [-]
            Discount factor minus one.
        """
        return self._remembered("expm1", (t_years,), lambda: np.expm1(as_floats(t_years) * self.minus_log_discount))

    def annuity(self, start_year, end_year):
        """``sum_{y=a+1}^{b} (1+r)^-y``: PV of 1 USD at the end of each year ``a+1..b``.

        Parameters
        ----------
        start_year, end_year : float or ndarray [yr]
            Payments fall in years ``a+1..b``.

        Returns
        -------
        ndarray [yr]
            Annuity factor (USD of PV per USD/yr).
        """
        return self._remembered("annuity", (start_year, end_year), lambda: geometric_discounted_sum(
            self.rate, 0.0, start_year, end_year, self.minus_log_discount))

    def capital_recovery_factor(self, life_years, residual_value_fraction=0.0):
        """``(1 - rv (1+r)^-L) / annuity(0, L)``: yearly cost of 1 USD of price over ``L`` years.

        :func:`tco.core.money.finance.capital_recovery_usd_per_year` per USD.

        Parameters
        ----------
        life_years : float or ndarray [yr]
            Useful life ``L``.
        residual_value_fraction : float or ndarray [-]
            Value left at end of life ``rv``.

        Returns
        -------
        ndarray [1/yr]
            Capital recovery factor.

        References
        ----------
        [brealey-myers-allen] equivalent annual cost, ch. 6.
        """
        return (1.0 - residual_value_fraction * self.discount(life_years)) / self.annuity(0.0, life_years)

    @cached_property
    def varies(self) -> bool:
        """Whether demand may change from year to year in any draw (a structural fast-path test; asked
        once per pool and year, answered once per path)."""
        return bool(self.series) or any_draw(np.asarray(self.growth) != 0.0)

    def multiplier(self, year: int):
        """``m_y`` for one whole service year ``y >= 1``.

        Parameters
        ----------
        year : int [yr]
            Service year ``y`` (year 1 runs at ``workload.requests_per_s``).

        Returns
        -------
        ndarray [-]
            Demand over year 1's.
        """
        return self._remembered("multiplier", (float(year),), lambda: self._multiplier(year))

    def _multiplier(self, year: int):
        n = len(self.series)
        if n and year <= n:
            return as_floats(self.series[year - 1])
        base = as_floats(self.series[n - 1]) if n else 1.0
        return base * np.power(1.0 + as_floats(self.growth), year - max(n, 1))

    def discounted_sum(self, start_year, end_year, log_decay=0.0):
        """``sum_{y=a+1}^{b} m_y rho^(y-1) (1+r)^-y`` with ``rho = exp(log_decay)``.

        Closed form for a growth rate (:func:`geometric_discounted_sum`); a yearly series is
        summed year by year (years are a structural axis, up to the largest horizon).

        Parameters
        ----------
        start_year, end_year : float or ndarray [yr]
            The flow runs in years ``a+1..b``.
        log_decay : float or ndarray [1/yr]
            ``ln rho``, an extra yearly decay of the flow (0: none).

        Returns
        -------
        ndarray [yr]
            PV per unit of year-1 flow (USD of PV per USD/yr).
        """
        if not self.series:
            if one_value(log_decay) and log_decay == 0.0 and one_value(self.growth) and self.growth == 0.0:
                return self.annuity(start_year, end_year)  # flat demand: the plain annuity
            return self._remembered("sum", (start_year, end_year, log_decay), lambda: geometric_discounted_sum(
                self.rate, np.log1p(np.asarray(self.growth, float)) + log_decay, start_year, end_year, self.minus_log_discount))
        a, b = as_floats(start_year), as_floats(end_year)
        v = np.exp(-_log_discount(self.rate))
        total = 0.0
        for year in range(1, self.last_year + 1):
            inside = (year > a) & (year <= b)
            total = total + inside * self.multiplier(year) * np.exp((year - 1) * as_floats(log_decay)) * v ** year
        return total


# --- the chip program's NRE schedule --------------------------------------------------------------------


def uniform_spend_share_in_year(year, window_years):
    """Share of a spend spread evenly over ``[0, W)`` that falls in ``[t, t+1)``.

    ``max(0, min(t+1, W) - t) / W``; all of it at ``t = 0`` when ``W = 0``. Booked at ``t``.

    Parameters
    ----------
    year : int [yr]
        Year start ``t``.
    window_years : float or ndarray [yr]
        Spending window ``W``.

    Returns
    -------
    ndarray [-]
        Share of the spend booked at ``t``.
    """
    w = as_floats(window_years)
    t = float(year)
    overlap = maximum(minimum(t + 1.0, w) - t, 0.0)
    return np.where(w > 0, overlap / np.where(w > 0, w, 1.0), 1.0 if t == 0 else 0.0)


def uniform_spend_pv_factor(rate, window_years):
    """PV of 1 USD spread evenly over ``[0, W)``, each year's share paid at its start.

    ``(1/W) [sum_{t<floor W} (1+r)^-t + (W - floor W) (1+r)^-floor W]``; 1 at ``W = 0``.

    Parameters
    ----------
    rate : float or ndarray [1/yr]
        Discount rate.
    window_years : float or ndarray [yr]
        Spending window ``W``.

    Returns
    -------
    ndarray [-]
        Present value per USD spent.
    """
    w = as_floats(window_years)
    whole = np.floor(w + WHOLE_COUNT_GUARD)
    part = maximum(w - whole, 0.0)
    v = np.exp(-_log_discount(rate))
    # sum_{t=0}^{k-1} v^t = (1+r) x annuity over years 1..k
    leading = annuity_between(rate, 0.0, whole) / v
    return np.where(w > 0, (leading + part * v ** whole) / np.where(w > 0, w, 1.0), 1.0)


def tapeout_year(time_to_market_years, tapeout_to_deployment_years):
    """Tape-out time ``max(W - post, 0)``: design and verification end, masks are bought.

    Parameters
    ----------
    time_to_market_years : float or ndarray [yr]
        Design start to deployment ``W``.
    tapeout_to_deployment_years : float or ndarray [yr]
        Tape-out to deployment ``post`` (fab, packaging, bring-up).

    Returns
    -------
    ndarray [yr]
        Time of tape-out after the decision.
    """
    return maximum(as_floats(time_to_market_years) - tapeout_to_deployment_years, 0.0)


#: NRE parts spent during design (until tape-out), at tape-out, and over the whole time to market
DESIGN_PARTS = ("design_usd", "verification_usd", "ip_usd")
TAPEOUT_PARTS = ("masks_usd",)
PROGRAM_PARTS = ("software_usd",)
#: the expected mask set of a respin, bought at the second tape-out (:func:`tco.core.money.nre.expected_respin_usd`)
RESPIN_PARTS = ("respin_usd",)


@dataclass
class ProgramSchedule:
    """When a chip program spends its NRE: design, verification and IP over ``[0, tape-out)``,
    masks at tape-out, the software stack over ``[0, W)`` (W = time to market as planned), a respin's
    expected mask set at the second tape-out (the first plus the slip a respin costs)."""

    parts: dict[str, np.ndarray]
    time_to_market_years: np.ndarray
    tapeout_years: np.ndarray
    respin_tapeout_years: np.ndarray | float = 0.0

    def _booked_at(self, part: str):
        """The time a part paid at once is booked at: tape-out, or the second tape-out (None: spread)."""
        if part in TAPEOUT_PARTS:
            return self.tapeout_years
        return self.respin_tapeout_years if part in RESPIN_PARTS else None

    @property
    def total_usd(self):
        """Undiscounted NRE of the program [USD]."""
        return sum(self.parts.values())

    def _window(self, part: str):
        return self.tapeout_years if part in DESIGN_PARTS else self.time_to_market_years

    def share_in_year(self, part: str, year: int):
        """Share of NRE part ``part`` paid at the start of year ``year``.

        Parameters
        ----------
        part : str
            NRE part (``design_usd``, ``masks_usd``, ...).
        year : int [yr]
            Year start ``t``.

        Returns
        -------
        ndarray [-]
            Share of the part paid then.
        """
        at = self._booked_at(part)
        if at is not None:
            return (np.floor(as_floats(at) + WHOLE_COUNT_GUARD) == year).astype(float)
        return uniform_spend_share_in_year(year, self._window(part))

    def usd_in_year(self, year: int):
        """NRE paid at ``t = year``.

        Parameters
        ----------
        year : int [yr]
            Year start ``t``.

        Returns
        -------
        ndarray [USD]
            NRE paid.
        """
        return sum(amount * self.share_in_year(part, year) for part, amount in self.parts.items())

    def present_value_usd(self, rate):
        """PV of the whole NRE schedule at ``t = 0``.

        Parameters
        ----------
        rate : float or ndarray [1/yr]
            Discount rate.

        Returns
        -------
        ndarray [USD]
            Present value of the NRE.
        """
        v = np.exp(-_log_discount(rate))
        total = 0.0
        for part, amount in self.parts.items():
            at = self._booked_at(part)
            if at is not None:
                factor = v ** np.floor(as_floats(at) + WHOLE_COUNT_GUARD)
            else:
                factor = uniform_spend_pv_factor(rate, self._window(part))
            total = total + amount * factor
        return total
