"""A pool's purchases over the horizon: units bought, residual credits and running costs.

DESIGN.md sections 5 and 9. In service year ``y`` a pool must hold ``R_y`` devices: the
replicas for that year's peak demand (``ceil(m_y z)`` whole replicas of ``n`` devices,
``m_y`` the demand multiple of year 1 and ``z`` the continuous replicas of year 1's peak).
A fleet never sells devices early: it holds ``A_y = max(R_y, A_{y-1})`` and buys the
difference at the start of the year. Each purchase is renewed at the end of its life
``L`` while the *epoch* lasts; an epoch is the time the pool stays on one device
generation and ends at the horizon ``Y`` or when the fleet moves to another generation
(:mod:`tco.core.money.generations`), where every device still held is credited at its
straight-line book value ``1 - (1 - rv) x held / L`` (``rv`` at the end of its life).

Two views of the same rule:

- :func:`pool_present_values` sums each purchase's renewal chain in closed form (what
  :func:`tco.core.evaluate.evaluate` needs: present values and unit counts, vectorized,
  cost proportional to the years in which some draw buys new capacity);
- :func:`pool_yearly_flows` walks the years (what the cash flows, the workbook and the
  app show). A test checks the two agree to 1e-10.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from tco.core.draws import any_draw, as_floats, maximum, one_value, where_mixed
from tco.core.money.timeline import DemandPath
from tco.core.serving.sizing import at_least_one_whole, replicas_needed, whole_units
from tco.core.serving.steps import times

#: draws from which one gather beats a chain of np.where (below, the stacking costs more than it saves)
_GATHER_FROM = 4096


class Choice:
    """A generation index array prepared for many picks (:func:`pick`): the gather offsets are
    computed once, and each tuple of options is stacked once in ``stacks`` (shared by the
    choices of one pool, whose tuples outlive them)."""

    def __init__(self, index, stacks: dict):
        self.index = np.asarray(index)
        self.size = self.index.size
        self.offsets = self.index.astype(np.intp).ravel() * self.size + np.arange(self.size)
        self.stacks = stacks

    def pick(self, options: Sequence):
        """``options[index]`` by one gather from the options stacked once.

        Parameters
        ----------
        options : Sequence
            Values (scalars or arrays shaped like the index), one per index.

        Returns
        -------
        ndarray [unit of the options]
            The picked values.
        """
        key = id(options)
        if key not in self.stacks:
            shape = self.index.shape
            same = all(np.shape(o) in ((), shape) for o in options)
            stacked = np.stack([np.broadcast_to(np.asarray(o, float), shape).ravel() for o in options]) if same else None
            self.stacks[key] = (options, stacked)
        stacked = self.stacks[key][1]
        if stacked is None:  # an option shaped unlike the draws: the element-wise chain
            return pick(options, self.index)
        return np.take(stacked, self.offsets).reshape(self.index.shape)

    @classmethod
    def of(cls, index, options: Sequence, stacks: dict):
        """A :class:`Choice` where it pays (several options, a large index array), else ``index`` itself.

        Parameters
        ----------
        index : ndarray [-]
            Which option, element-wise.
        options : Sequence
            The options it will pick from.
        stacks : dict
            Cache of stacked options shared by the evaluation.

        Returns
        -------
        Choice or ndarray [-]
            The prepared choice, or ``index`` unchanged.
        """
        if len(options) == 1 or np.size(index) < _GATHER_FROM:
            return index
        return cls(index, stacks)


def pick(options: Sequence, index):
    """``options[index]`` element-wise for an index array.

    The only option when there is one; ``index`` may be a prepared :class:`Choice`.

    Parameters
    ----------
    options : Sequence
        Values (scalars or arrays that broadcast), one per index.
    index : int or ndarray or Choice [-]
        Which option, element-wise.

    Returns
    -------
    object
        The picked values, in the options' own unit.
    """
    if len(options) == 1:
        return options[0]
    if isinstance(index, Choice):
        return index.pick(options)
    if one_value(index):
        return options[int(index)]
    out = options[0]
    for i, value in enumerate(options[1:], start=1):
        out = np.where(index == i, value, out)
    return out


@dataclass
class PoolPlan:
    """What the purchase model needs of one pool, per device generation ``g`` (tuples, one
    entry when the pool never changes device).

    ``peak_replicas`` continuous replicas for year 1's peak load ``z`` [replicas];
    ``busy_replicas`` replicas busy at year 1's mean load ``x`` [replicas];
    ``devices_per_replica`` ``n``; ``unit_usd`` capex per device [USD]; ``life_years`` ``L``;
    ``residual_value_fraction`` ``rv``; ``per_device_usd_per_year`` running cost per device
    held, by cost line [USD/yr]; ``per_busy_replica_usd_per_year`` the cost that follows
    load, per busy replica, by cost line [USD/yr]. Whole-device pools hold at least one replica
    whenever they serve (KV-link ports: at least one port).
    """

    peak_replicas: tuple
    busy_replicas: tuple
    devices_per_replica: tuple
    unit_usd: tuple
    life_years: tuple
    residual_value_fraction: tuple
    per_device_usd_per_year: dict[str, tuple]
    per_busy_replica_usd_per_year: dict[str, tuple] = field(default_factory=dict)
    whole: object = True
    #: replicas that fill whole purchase units, ``g`` per generation (:func:`tco.core.serving.sizing.replica_multiple`;
    #: empty: 1)
    replica_multiple: tuple = ()

    def required_units(self, index, demand_multiple):
        """Units needed for a year of demand ``m``: the replicas for ``m z`` times ``n``.

        Replicas by :func:`tco.core.serving.sizing.replicas_needed` (whole, at least one; in whole purchase units
        where ``replica_multiple`` is given, :func:`tco.core.serving.sizing.whole_units`).

        Parameters
        ----------
        index : int or ndarray [-]
            Generation index.
        demand_multiple : float or ndarray [-]
            The year's demand over year 1's ``m``.

        Returns
        -------
        ndarray [devices]
            Devices needed.
        """
        replicas = replicas_needed(times(demand_multiple, pick(self.peak_replicas, index)), 1.0, self.whole)
        if self.replica_multiple and self.whole is True:  # whole purchase units (a rack-scale system's)
            replicas = whole_units(replicas, pick(self.replica_multiple, index))
        return replicas * pick(self.devices_per_replica, index)

    def steady_state_usd_per_year(self, index, demand: DemandPath):
        """``(capital, running)`` of a fresh fleet for year 1's demand on generation ``index``.

        Capital: the units times the capital recovery of their price over their life
        (:func:`tco.core.money.finance.capital_recovery_usd_per_year`, at ``demand``'s discount rate);
        running: the units times the per-device costs plus the busy replicas times the
        per-busy-replica costs.

        Parameters
        ----------
        index : int or ndarray [-]
            Generation index.
        demand : DemandPath
            The demand path (its discount rate).

        Returns
        -------
        capital : ndarray [USD/yr]
            Capital recovery of the fleet.
        running : ndarray [USD/yr]
            Running costs of the fleet.

        References
        ----------
        [brealey-myers-allen] equivalent annual cost, ch. 6.
        """
        units = self.required_units(index, 1.0)
        capital = units * pick(self.unit_usd, index) * demand.capital_recovery_factor(
            pick(self.life_years, index), pick(self.residual_value_fraction, index))
        running = units * sum(pick(c, index) for c in self.per_device_usd_per_year.values())
        if self.per_busy_replica_usd_per_year:
            running = running + pick(self.busy_replicas, index) * sum(
                pick(c, index) for c in self.per_busy_replica_usd_per_year.values())
        return capital, running

    def holding_usd_per_year(self, index, age_years, demand: DemandPath):
        """Capital cost of keeping year 1's fleet on generation ``index`` one more year at age ``a`` instead of selling it.

        A move credits every device held at its straight-line book value ``b(a) = 1 - (1 - rv) (a mod L) / L`` (of its
        price ``P``; :func:`pool_present_values`), so a year more in service forgoes the value's decline and the
        interest on it: ``units x P ((1 - rv) / L + r b(a))`` (the replacement analysis of Brealey, Myers and Allen,
        ch. 6: the cost of keeping the old machine counts what its sale would bring). A purchase renewed at the end of
        its life starts again at ``b = 1`` (``a mod L``).

        Parameters
        ----------
        index : int or ndarray [-]
            Generation index.
        age_years : float or ndarray [yr]
            Years since the fleet moved to this generation ``a``.
        demand : DemandPath
            The demand path (its discount rate ``r``).

        Returns
        -------
        ndarray [USD/yr]
            The yearly cost of holding the fleet rather than selling it at book value.

        References
        ----------
        [brealey-myers-allen] replacing an old machine, ch. 6.
        """
        units = self.required_units(index, 1.0)
        unit, life, rv = (pick(x, index) for x in (self.unit_usd, self.life_years, self.residual_value_fraction))
        book = 1.0 - (1.0 - rv) * np.mod(age_years, life) / life
        return units * unit * ((1.0 - rv) / life + demand.rate * book)


@dataclass
class GenerationPath:
    """Which device generation a pool is on when it buys at ``t = 0..T-1``, and where epochs change.

    ``index[t]`` generation bought at ``t``; ``switch[t]`` the fleet moves to another
    generation at ``t`` (every device held is retired); ``end[t]`` the end of the epoch a
    purchase at ``t`` belongs to, ``min(next switch after t, Y)``.
    """

    index: list
    switch: list
    end: list

    @classmethod
    def fixed(cls, horizon_years, last_year: int) -> GenerationPath:
        """One generation for the whole horizon (every pool but a roadmap baseline).

        Parameters
        ----------
        horizon_years : float or ndarray [yr]
            Analysis horizon (the end of the single epoch).
        last_year : int [yr]
            Length of the path.

        Returns
        -------
        GenerationPath
            Generation 0 held throughout, no switch.
        """
        horizon = as_floats(horizon_years)
        return cls([0.0] * last_year, [False] * last_year, [horizon] * last_year)

    @classmethod
    def from_switches(cls, index: list, switch: list, horizon_years) -> GenerationPath:
        """Epoch ends from the switch flags: a backward pass over the years.

        Parameters
        ----------
        index : list of ndarray [-]
            Generation held each year.
        switch : list of ndarray of bool [-]
            Whether the fleet moves at each year.
        horizon_years : float or ndarray [yr]
            Analysis horizon.

        Returns
        -------
        GenerationPath
            The path with the end of the epoch running at each year [yr].
        """
        horizon = as_floats(horizon_years)
        end, following = [None] * len(switch), horizon
        for t in range(len(switch) - 1, -1, -1):
            end[t] = following
            following = np.where(switch[t], np.minimum(float(t), horizon), following)
        return cls(index, switch, end)

    def held_at(self, t_years):
        """Generation the fleet holds at year ``t`` (whole years from 0; beyond the path, its last year's).

        Parameters
        ----------
        t_years : float or ndarray [yr]
            Year, e.g. an option's deployment year.

        Returns
        -------
        float or ndarray [-]
            Generation index.
        """
        t_years, held = np.asarray(t_years), self.index[0]
        for t in range(1, len(self.index)):
            if any_draw(t_years >= t):
                held = np.where(t_years >= t, self.index[t], held)
        return held


def _epoch_starts(path: GenerationPath, deployment_year, t: int):
    """Whether a new epoch starts at ``t``: the deployment, or a switch after it (a fixed path's ``False``: the
    deployment alone, ``x | False = x``)."""
    switch = path.switch[t]
    if switch is False:
        return deployment_year == t
    return (deployment_year == t) | (np.asarray(switch) & (t > deployment_year))


@dataclass
class PoolPresentValues:
    """Present values of one pool over the horizon [USD] and its undiscounted units bought."""

    capex_usd: object
    residual_usd: object
    units: object
    pv_units: object
    yearly_usd: dict[str, object]


def pool_present_values(plan: PoolPlan, path: GenerationPath, demand: DemandPath, deployment_year, horizon_years,
                        rate) -> PoolPresentValues:
    """Closed-form present values of one pool's purchases, credits and running costs.

    Capacity ``Delta`` added at ``s`` (the first fleet, growth, or a new generation) is
    bought at ``s, s+L, ...`` while before the epoch's end ``E``: ``K = ceil((E - s)/L)``
    purchases worth ``sum_k (1+r)^-(s+kL)``; each but the last is credited ``rv`` at its
    end of life, the last its book value at ``E``; it is held (and runs) in the years
    ``s+1..E``. The cost that follows load is paid per busy replica in the served years.

    Parameters
    ----------
    plan : PoolPlan
        The pool's devices, prices, lives and running costs by generation.
    path : GenerationPath
        Generation held and moves, year by year.
    demand : DemandPath
        Demand by year and the discounted sums.
    deployment_year : float or ndarray [yr]
        Year the pool enters service ``t_d``.
    horizon_years : float or ndarray [yr]
        Analysis horizon.
    rate : float or ndarray [1/yr]
        Discount rate.

    Returns
    -------
    PoolPresentValues
        PV of capex and residual credits [USD], units bought undiscounted and PV [units], and
        PV of each running line [USD].
    """
    minus_ell = demand.minus_log_discount  # (-a) b = a (-b) exactly: the sign moves to the shared factor
    rate = as_floats(rate)
    horizon = as_floats(horizon_years)
    t_d = as_floats(deployment_year)
    zero_rate = rate == 0
    minus_safe_rate = -where_mixed(zero_rate, 1.0, rate)  # (-a) b / r = a b / (-r) exactly: one negation, not one per year
    one_generation = len(plan.unit_usd) == 1
    # 1 - rv of the only generation, once for every year (a pool on several generations takes it per year)
    worn_share = 1.0 - plan.residual_value_fraction[0] if one_generation else None
    stacks: dict = {}
    held = 0.0
    capex = credit = units = pv_units = device_years = 0.0
    yearly = dict.fromkeys((*plan.per_device_usd_per_year, *plan.per_busy_replica_usd_per_year), 0.0)
    # per year s: whether an epoch starts, whether the pool is in service (each computed once, read by both loops; the
    # second only in the years the loops reach)
    epochs = [_epoch_starts(path, t_d, s) for s in range(len(path.index))]

    serving_years: dict = {}

    def lives(s: int):
        """Whether the pool serves in year ``s + 1``: ``s + 1 > t_d`` and ``s < horizon`` [bool per draw], computed
        once per year (a dict: ``functools.cache`` costs ~5 us to set up per call)."""
        if s not in serving_years:
            serving_years[s] = (s + 1 > t_d) & (s < horizon)
        return serving_years[s]

    for s in range(len(path.index)):
        new_epoch = epochs[s]
        if not (demand.varies or any_draw(new_epoch)):
            continue  # no draw adds capacity at s: nothing changes
        g = Choice.of(path.index[s], plan.unit_usd, stacks)
        live = lives(s)
        # a new epoch in every draw starts from nothing, a pool in service in every draw buys up to what it needs
        # (the usual first year: no array pass for the masks)
        before = where_mixed(new_epoch, 0.0, held)
        needed = maximum(plan.required_units(g, demand.multiplier(s + 1)), before)
        after = where_mixed(live, needed, before)
        delta = after if type(before) is float and before == 0.0 else after - before
        held = after
        if not any_draw(delta):
            continue  # nothing bought at s in any draw: every term below is a multiple of delta
        end = path.end[s]
        life = pick(plan.life_years, g)
        rv = pick(plan.residual_value_fraction, g)
        unit = pick(plan.unit_usd, g)
        remaining = end - s if s else end  # E - s (x - 0 = x, bit for bit)
        count = at_least_one_whole(remaining / life)  # purchases K
        first = demand.discount(float(s))
        # sum_{k<K} v^(s+kL) = v^s (1 - v^(KL)) / (1 - v^L), K at r = 0
        per_life = demand.discount_minus_one(life)
        chain = first * where_mixed(zero_rate, count, np.expm1(count * life * minus_ell) / where_mixed(zero_rate, 1.0, per_life))
        last_held = remaining - (count - 1.0) * life
        book = 1.0 - (worn_share if one_generation else 1.0 - rv) * last_held / life
        units = units + delta * count
        pv_units = pv_units + delta * chain
        credited = delta * (rv * (chain - first) + book * demand.discount(end))
        # sum_{y=s+1}^{E} v^y = v^s (1 - v^(E-s)) / r (E - s at r = 0)
        span = maximum(remaining, 0.0)
        held_years = delta * where_mixed(zero_rate, span, first * np.expm1(span * minus_ell) / minus_safe_rate)
        if one_generation:  # prices and running costs do not change with s: multiplied once, after the loop
            credit, device_years = credit + credited, device_years + held_years
            continue
        capex = capex + delta * chain * unit
        credit = credit + credited * unit
        for line, coefficient in plan.per_device_usd_per_year.items():
            yearly[line] = yearly[line] + held_years * pick(coefficient, g)
    if one_generation:
        capex, credit = pv_units * plan.unit_usd[0], credit * plan.unit_usd[0]
        for line, coefficient in plan.per_device_usd_per_year.items():
            yearly[line] = device_years * coefficient[0]
    if plan.per_busy_replica_usd_per_year:  # the load is served from each epoch's start to its end
        for s in range(len(path.index)):
            if not any_draw(epochs[s]):
                continue
            starts = epochs[s] & lives(s)
            if not any_draw(starts):
                continue
            g = path.index[s]
            served = where_mixed(starts, demand.discounted_sum(s, path.end[s]), 0.0) * pick(plan.busy_replicas, g)
            for line, coefficient in plan.per_busy_replica_usd_per_year.items():
                yearly[line] = yearly[line] + served * pick(coefficient, g)
    return PoolPresentValues(capex, -credit, units, pv_units, yearly)


@dataclass
class PoolYearlyFlows:
    """One pool's flows by year ``t = 0..T`` (lists of arrays): devices bought and held,
    capex and residual credits [USD] at ``t``, running costs by line [USD] at the end of year ``t``."""

    bought: list
    held: list
    capex_usd: list
    residual_usd: list
    yearly_usd: dict[str, list]


def pool_yearly_flows(plan: PoolPlan, path: GenerationPath, demand: DemandPath, deployment_year,
                      horizon_years) -> PoolYearlyFlows:
    """The same rule as :func:`pool_present_values`, year by year (``t = 0..T``, ``T`` the largest horizon).

    At ``t``: devices whose life ends are credited ``rv`` (or, when the epoch ends at
    ``t``, every device held is credited its book value); the pool buys the growth of its
    holding and renews the devices bought at ``t - L`` in the same epoch. Running costs of
    year ``t`` (devices held during it, busy replicas) are paid at its end.

    Parameters
    ----------
    plan, path, demand : PoolPlan, GenerationPath, DemandPath
        The pool's plan, the generations it runs on, the demand by year (as in
        :func:`pool_present_values`).
    deployment_year : float or ndarray [yr]
        Year the pool enters service ``t_d``.
    horizon_years : float or ndarray [yr]
        Analysis horizon.

    Returns
    -------
    PoolYearlyFlows
        Devices bought and held [devices], capex and residual credits [USD] and running costs
        by line [USD], by year.
    """
    t_d = as_floats(deployment_year)
    horizon = as_floats(horizon_years)
    last = len(path.index)
    bought, held_by_year = [], [0.0]
    capex, residual = [], []
    yearly = {line: [0.0] for line in dict.fromkeys((*plan.per_device_usd_per_year, *plan.per_busy_replica_usd_per_year))}
    held = 0.0
    start = np.full(np.shape(t_d), -1.0)  # start of the current epoch (-1: none yet, inf: closed)
    index_prev = path.index[0]
    for t in range(last + 1):
        g_prev = index_prev
        life, rv, unit = (pick(x, g_prev) for x in (plan.life_years, plan.residual_value_fraction, plan.unit_usd))
        new_epoch = _epoch_starts(path, t_d, t) if t < last else np.zeros(np.shape(t_d), bool)
        closing = (new_epoch | (t == horizon)) & (start >= 0) & np.isfinite(start)
        # credits at t: book value of everything held when the epoch ends, else rv for the end-of-life cohort
        credit = 0.0
        for s, units in enumerate(bought):
            alive = (s >= start) & (s >= t - life) & (s < t)
            value = np.where(closing, 1.0 - (1.0 - rv) * (t - s) / life, np.where(s == t - life, rv, 0.0))
            credit = credit + np.where(alive, units * value, 0.0)
        residual.append(-credit * unit)
        if t == last:
            break
        g = path.index[t]
        index_prev = np.where(new_epoch | (start < 0), g, index_prev)
        start = np.where(new_epoch, float(t), np.where(closing, np.inf, start))  # inf: the fleet is gone
        live = (t + 1 > t_d) & (t < horizon)
        before = np.where(new_epoch, 0.0, held)
        after = np.where(live, maximum(plan.required_units(g, demand.multiplier(t + 1)), before), before)
        renew = 0.0
        life_now = pick(plan.life_years, index_prev)
        for s, units in enumerate(bought):
            renew = renew + np.where(live & (s >= start) & (s == t - life_now), units, 0.0)
        purchase = after - before + renew
        held = np.where(live, after, 0.0)
        bought.append(purchase)
        capex.append(purchase * pick(plan.unit_usd, index_prev))
        held_by_year.append(held)
        busy = np.where(live, demand.multiplier(t + 1) * pick(plan.busy_replicas, index_prev), 0.0)
        for line in yearly:
            cost = 0.0
            if line in plan.per_device_usd_per_year:
                cost = cost + held * pick(plan.per_device_usd_per_year[line], index_prev)
            if line in plan.per_busy_replica_usd_per_year:
                cost = cost + busy * pick(plan.per_busy_replica_usd_per_year[line], index_prev)
            yearly[line].append(cost)
    capex.append(0.0)
    bought.append(0.0)
    return PoolYearlyFlows(bought, held_by_year, capex, residual, yearly)
