"""What an option pays over the horizon, as one plan read two ways: present values and yearly flows.

DESIGN.md sections 5 and 9. An option's :class:`MoneyPlan` holds its pools' purchase plans
(:mod:`tco.core.money.purchases`), the generation path of a roadmap baseline
(:mod:`tco.core.money.generations`), the demand path and the chip program's schedule
(:mod:`tco.core.money.timeline`), and the yearly terms that are not hardware: the bridge (demand
served at the baseline's levelized cost until a built chip is in service), software porting
to new hardware, re-authoring per workload shift, and the work lost to workload shifts.

:func:`present_values` returns the PV of every cash-flow line in closed form (vectorized,
what :func:`tco.core.evaluate.evaluate` reports); :func:`yearly_lines` returns the same
lines year by year (the finance view: :mod:`tco.core.money.cashflow`, the workbook, the app).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tco.core.draws import any_draw, as_floats, maximum, minimum, where_mixed
from tco.core.money import lifecycle
from tco.core.money.purchases import GenerationPath, PoolPlan, pool_present_values, pool_yearly_flows
from tco.core.money.timeline import DemandPath, ProgramSchedule


@dataclass
class ShiftExposure:
    """A specialized pool's exposure to workload shifts: the baseline's cost of its work in year 1
    [USD/yr] and the efficiency it keeps on shifted work [fraction]."""

    usd_per_year: object
    residual_efficiency: object


@dataclass
class MoneyPlan:
    """Everything an option pays over the horizon (see the module docstring).

    ``pools`` by role (and ``"links"`` for the KV-link ports); ``deployment_year`` ``t_d``;
    ``program`` the NRE schedule of a built chip, run on the pools ``built_roles``, of which
    ``external_units`` are sold to others (:func:`nre_share`); ``bridge_usd_per_year`` year 1's demand
    at the baseline's levelized cost [USD/yr]; ``porting`` ``(time, USD)`` events;
    ``reauthoring_usd_per_year`` per operating year; ``shifts`` the specialized pools'
    exposures; ``tokens_per_year`` output tokens of year 1.
    """

    pools: dict[str, PoolPlan]
    path: GenerationPath
    demand: DemandPath
    rate: object
    horizon_years: object
    deployment_year: object
    tokens_per_year: object
    half_life_years: object
    program: ProgramSchedule | None = None
    built_roles: tuple[str, ...] = ()
    external_units: object = 0.0
    bridge_usd_per_year: object = 0.0
    porting: list = field(default_factory=list)
    reauthoring_usd_per_year: object = 0.0
    shifts: list[ShiftExposure] = field(default_factory=list)

    @property
    def last_year(self) -> int:
        """Last year a flow can fall in (the largest horizon, or the end of a chip's design) [yr].

        The length of the generation path."""
        return len(self.path.index)

    def own_units(self, units: dict[str, object]):
        """Built devices this fleet buys over the horizon, replacements included.

        Parameters
        ----------
        units : dict[str, object]
            Units bought by pool role [units].

        Returns
        -------
        ndarray [units]
            Units of the built pools.
        """
        return sum((units[role] for role in self.built_roles), 0.0)

    def line_of(self, role: str, line: str) -> str:
        """The cash-flow line a pool's cost goes to: every cost of the KV-link ports is ``links_usd``.

        Parameters
        ----------
        role : str
            Pool role, or ``links``.
        line : str
            The cost's own cash-flow line.

        Returns
        -------
        str
            The line it is booked to.
        """
        return "links_usd" if role == "links" else line


def steady_state_usd_per_year(pools: dict[str, PoolPlan], index, demand: DemandPath):
    """Steady-state cost of the pools' fleet for year 1's demand on generation ``index``.

    Capital recovery plus running costs, and the running costs alone
    (:meth:`tco.core.money.purchases.PoolPlan.steady_state_usd_per_year`).

    Parameters
    ----------
    pools : dict[str, PoolPlan]
        The option's purchase plans by pool role.
    index : int or ndarray [-]
        Generation index (0: the scenario's device).
    demand : DemandPath
        The demand path (year 1's demand is used).

    Returns
    -------
    full : ndarray [USD/yr]
        Equivalent annual cost, capital recovery and running costs.
    running : ndarray [USD/yr]
        The running costs alone.

    References
    ----------
    [brealey-myers-allen] equivalent annual cost, ch. 6.
    """
    full = running = 0.0
    for plan in pools.values():
        capital, run = plan.steady_state_usd_per_year(index, demand)
        full, running = full + capital + run, running + run
    return full, running


def holding_usd_per_year(pools: dict[str, PoolPlan], index, age_years, demand: DemandPath):
    """Capital cost of keeping the pools' fleet on generation ``index`` one more year at age ``a`` rather than selling
    it at book value, summed over the pools (:meth:`tco.core.money.purchases.PoolPlan.holding_usd_per_year`).

    Parameters
    ----------
    pools : dict[str, PoolPlan]
        The option's purchase plans by pool role.
    index : int or ndarray [-]
        Generation index.
    age_years : float or ndarray [yr]
        Years since the fleet moved to this generation.
    demand : DemandPath
        The demand path (its discount rate).

    Returns
    -------
    ndarray [USD/yr]
        The yearly cost of holding the fleet.

    References
    ----------
    [brealey-myers-allen] replacing an old machine, ch. 6.
    """
    return sum(plan.holding_usd_per_year(index, age_years, demand) for plan in pools.values())


def nre_share(own_units, external_units):
    """Share of the program's NRE this fleet carries: ``own / (own + external)``.

    All of it when nothing is built at all.

    Parameters
    ----------
    own_units : float or ndarray [units]
        Built devices this fleet buys over the horizon.
    external_units : float or ndarray [units]
        Units of the program sold to others.

    Returns
    -------
    ndarray [-]
        The fleet's share of the NRE, 0-1.
    """
    volume = own_units + external_units
    return np.where(volume > 0, own_units / np.where(volume > 0, volume, 1.0), 1.0)


@dataclass
class PlanPresentValues:
    """PV of each cash-flow line [USD] (and per pool role, the pool's own hardware and running
    lines), of output tokens, and the units bought per pool (undiscounted and PV)."""

    lines: dict[str, object]
    by_role: dict[str, dict[str, object]]
    tokens: object
    units: dict[str, object]
    pv_units: dict[str, object]


def _shift_decay(half_life_years):
    """``ln 2^(-1/H)``: the yearly decay of the designed share ``s_y`` [1/yr]."""
    return -np.log(2.0) / as_floats(half_life_years)


def present_values(plan: MoneyPlan) -> PlanPresentValues:
    """Every line's present value in closed form (the sums of :func:`yearly_lines`, discounted).

    Parameters
    ----------
    plan : MoneyPlan
        What the option pays over the horizon.

    Returns
    -------
    PlanPresentValues
        PV of each cash-flow line [USD] (and per pool role), of the output tokens [tokens],
        and the units bought per pool, undiscounted and PV [units].
    """
    rate, horizon, t_d, demand = plan.rate, plan.horizon_years, plan.deployment_year, plan.demand
    lines: dict[str, object] = {}

    def add(line, value):
        lines[line] = lines.get(line, 0.0) + value

    units, pv_units, by_role = {}, {}, {}
    for role, pool in plan.pools.items():
        pv = pool_present_values(pool, plan.path, demand, t_d, horizon, rate)
        units[role], pv_units[role] = pv.units, pv.pv_units
        by_role[role] = {"capex_usd": pv.capex_usd, "residual_usd": pv.residual_usd, **pv.yearly_usd}
        for line, value in by_role[role].items():
            add(plan.line_of(role, line), value)
    served_end = minimum(maximum(t_d, 0.0), horizon)
    if plan.program is not None:
        add("nre_usd", nre_share(plan.own_units(units), plan.external_units) * plan.program.present_value_usd(rate))
    if any_draw(np.asarray(t_d) > 0):
        add("bridge_usd", plan.bridge_usd_per_year * demand.discounted_sum(0.0, served_end))
    for time, amount in plan.porting:
        within = time < horizon
        paid = amount * demand.discount(time)
        add("porting_usd", where_mixed(within, paid, 0.0))
    if any_draw(np.asarray(plan.reauthoring_usd_per_year) != 0):
        add("reauthoring_usd", plan.reauthoring_usd_per_year * demand.annuity(t_d, horizon))
    if plan.shifts:
        # sum_{y=t_d+1}^{Y} (1 - served_y) m_y v^y with 1 - served_y = (1 - eta)(1 - c rho^(y-1)),
        # c = H/ln2 (1 - rho), rho = 2^(-1/H) (the yearly mean of 2^(-t/H))
        decay = _shift_decay(plan.half_life_years)
        c = -np.expm1(decay) / -decay
        weight = demand.discounted_sum(t_d, horizon) - c * demand.discounted_sum(t_d, horizon, decay)
        for shift in plan.shifts:
            add("workload_shift_usd", shift.usd_per_year * (1.0 - shift.residual_efficiency) * weight)
    tokens = plan.tokens_per_year * demand.discounted_sum(0.0, horizon)
    return PlanPresentValues(lines, by_role, tokens, units, pv_units)


@dataclass
class YearlyLines:
    """Each cash-flow line by year ``t = 0..T`` (arrays with years on the last axis) and the
    output tokens served; ``bought``/``held`` devices by pool role."""

    lines: dict[str, np.ndarray]
    tokens: np.ndarray
    bought: dict[str, np.ndarray]
    held: dict[str, np.ndarray]
    generation: np.ndarray


def _stack(values: list, shape) -> np.ndarray:
    return np.stack([np.broadcast_to(np.asarray(v, float), shape) for v in values], axis=-1)


def yearly_lines(plan: MoneyPlan, shape) -> YearlyLines:
    """Every line year by year, ``array[..., T + 1]`` of the draws' ``shape`` (see :func:`present_values`).

    Parameters
    ----------
    plan : MoneyPlan
        What the option pays over the horizon.
    shape : tuple of int [-]
        Shape of the parameter draws (the leading axes of every array).

    Returns
    -------
    YearlyLines
        Each cash-flow line by year [USD], output tokens by year [tokens], devices bought and
        held by pool role [devices] and the generation bought each year [-].
    """
    last = plan.last_year
    horizon, t_d, demand = plan.horizon_years, plan.deployment_year, plan.demand
    zeros = [0.0] * (last + 1)
    by_line: dict[str, list] = {}

    def add(line, values):
        current = by_line.setdefault(line, list(zeros))
        for t, value in enumerate(values[: last + 1]):
            current[t] = current[t] + value

    bought, held = {}, {}
    path = plan.path
    for role, pool in plan.pools.items():
        flows = pool_yearly_flows(pool, path, demand, t_d, horizon)
        bought[role], held[role] = _stack(flows.bought, shape), _stack(flows.held, shape)
        add(plan.line_of(role, "capex_usd"), flows.capex_usd)
        add(plan.line_of(role, "residual_usd"), flows.residual_usd)
        for line, values in flows.yearly_usd.items():
            add(plan.line_of(role, line), values)
    years = range(last + 1)
    serving = [np.asarray((y >= 1) & (y <= horizon), float) for y in years]
    multiple = [0.0] + [demand.multiplier(y) for y in years if y >= 1]
    if plan.program is not None:
        share = nre_share(plan.own_units({role: np.sum(b, axis=-1) for role, b in bought.items()}), plan.external_units)
        add("nre_usd", [share * plan.program.usd_in_year(t) for t in years])
    if any_draw(np.asarray(t_d) > 0):
        add("bridge_usd", [serving[y] * (y <= t_d) * multiple[y] * plan.bridge_usd_per_year if y else 0.0 for y in years])
    if plan.porting:
        add("porting_usd", [sum(np.where((time == t) & (time < horizon), amount, 0.0) for time, amount in plan.porting)
                            for t in years])
    operating = [serving[y] * (y > t_d) for y in years]
    if any_draw(np.asarray(plan.reauthoring_usd_per_year) != 0):
        add("reauthoring_usd", [operating[y] * plan.reauthoring_usd_per_year for y in years])
    if plan.shifts:
        lost = [0.0] + [sum((1.0 - lifecycle.served_efficiency_in_year(y, plan.half_life_years, s.residual_efficiency))
                            * s.usd_per_year for s in plan.shifts) for y in years if y >= 1]
        add("workload_shift_usd", [operating[y] * multiple[y] * lost[y] for y in years])
    tokens = [serving[y] * multiple[y] * plan.tokens_per_year for y in years]
    generation = _stack([*path.index, path.index[-1]], shape)
    return YearlyLines({line: _stack(values, shape) for line, values in by_line.items()}, _stack(tokens, shape),
                       bought, held, generation)
