"""The general-purpose roadmap: which generation the baseline fleet runs on, and years of advantage.

DESIGN.md section 9. The baseline's devices come in generations ``g`` (the scenario's own
baseline device is ``g = 0``, always available; the roadmap's devices are released at
``tau_g`` years after ``t = 0``). A generation's worth is its **steady-state cost**: the
equivalent annual cost of a fresh fleet for year 1's demand, capital recovered over the
device life (Brealey, Myers and Allen, *Principles of Corporate Finance*, ch. 6) plus the
running costs. The best generation available at ``t`` is the cheapest released by then.

Refresh policies of the baseline fleet (the fleet moves as a whole; every device held is
credited its book value, :mod:`tco.core.money.purchases`):

- ``keep``: the scenario's baseline device for the whole horizon;
- ``at_replacement``: start on the best generation available, move to a better one only at
  the end of the fleet's life;
- ``each_generation``: move whenever a better generation is available;
- ``when_cheaper``: move when the better generation's full cost (capital and running) is
  below the cost of keeping the fleet in service one more year: its running cost plus what
  holding it forgoes, the decline of its book value and the interest on it (a move credits
  every device held at book value; the replacement rule of Brealey, Myers and Allen, ch. 6:
  replace when the new machine's equivalent annual cost is below the old one's cost of staying
  on, its resale value counted).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tco.core.money.purchases import GenerationPath, pick

POLICIES = ("keep", "at_replacement", "each_generation", "when_cheaper")
#: how far before and after deployment the end of an advantage is searched [yr]; beyond: infinite
ADVANTAGE_SEARCH_YEARS = 100.0
BISECTIONS = 52


@dataclass
class RoadmapCosts:
    """Steady-state costs of the baseline option on each generation (``g = 0`` the scenario's device).

    ``release_years`` time of release after ``t = 0`` [yr] (``g = 0``: its roadmap date when it
    is listed, else 0; it is always available to the fleet); ``full_usd_per_year`` equivalent annual cost, capital included,
    at year 1's demand [USD/yr]; ``running_usd_per_year`` the running part alone [USD/yr];
    ``halving_years`` time for the cost per token of the best generation to halve after the
    last listed release [yr] (``inf``: no trend beyond the list); ``infeasible_codes`` the
    :func:`tco.core.evaluate.infeasible_code` of the fleet on each generation (empty: every
    generation meets the targets).
    """

    devices: tuple[str, ...]
    release_years: tuple
    full_usd_per_year: tuple
    running_usd_per_year: tuple
    halving_years: object = np.inf
    infeasible_codes: tuple = ()

    def meets_targets(self, index):
        """Whether the fleet on generation ``index`` meets the latency targets.

        Parameters
        ----------
        index : int or ndarray [-]
            Generation index (``0`` the scenario's device), or the generation held per draw.

        Returns
        -------
        bool or ndarray [-]
            True where its infeasible code is 0 (every draw when the roadmap has no codes).
        """
        return np.True_ if not self.infeasible_codes else np.asarray(pick(self.infeasible_codes, index)) == 0

    def best_available(self, t):
        """Index and cost of the best generation released by ``t`` (``g = 0`` always available): the cheapest of
        those whose fleet meets the latency targets, the cheapest of all where none does (an operator buys the
        generation that serves the workload; a cheaper one that misses its targets is no alternative).

        Parameters
        ----------
        t : float or ndarray [yr]
            Time after the decision; generations released by then compete.

        Returns
        -------
        index : ndarray [-]
            Generation index.
        cost : ndarray [USD/yr]
            Its steady-state cost.
        """
        best, cost = np.zeros(np.shape(self.full_usd_per_year[0])), self.full_usd_per_year[0]
        meets = self.meets_targets(0)
        for g in range(1, len(self.devices)):
            fine = self.meets_targets(g)
            preferred = (fine & ~meets) | ((fine == meets) & (self.full_usd_per_year[g] < cost))
            better = (self.release_years[g] <= t + 1e-9) & preferred
            best = np.where(better, float(g), best)
            cost = np.where(better, self.full_usd_per_year[g], cost)
            meets = np.where(better, fine, meets)
        return best, cost

    def best_cost_usd_per_year(self, t):
        """Steady-state cost of the best generation available at ``t``.

        It halves every ``halving_years`` after the last listed release.

        Parameters
        ----------
        t : float or ndarray [yr]
            Time after the decision; after the last release the trend takes over.

        Returns
        -------
        ndarray [USD/yr]
            The best steady-state cost.
        """
        last = np.maximum.reduce([np.asarray(r, float) for r in self.release_years])
        _, at_last = self.best_available(last)
        _, now = self.best_available(t)
        decay = np.exp2(-np.maximum(t - last, 0.0) / np.asarray(self.halving_years, float))
        return np.where(t > last, at_last * decay, now)


def generation_path(policy: str, roadmap: RoadmapCosts | None, life_years: Sequence, horizon_years,
                    last_year: int, holding_usd_per_year: Callable | None = None) -> GenerationPath:
    """Generation bought at each ``t`` and the fleet moves, under a refresh policy.

    Parameters
    ----------
    policy : str
        Refresh policy: ``keep``, ``at_replacement``, ``each_generation`` or ``when_cheaper``.
    roadmap : RoadmapCosts or None
        Steady-state costs of the baseline on each generation; None: no roadmap (``keep``).
    life_years : Sequence [yr]
        Useful life of each generation's device.
    horizon_years : float or ndarray [yr]
        Analysis horizon.
    last_year : int [yr]
        Last year a flow can fall in (the length of the path).
    holding_usd_per_year : Callable or None
        ``(generation index, age [yr]) -> USD/yr``: the capital cost of keeping the fleet one more year instead of
        selling it at book value (:func:`tco.core.money.plan.holding_usd_per_year`), which ``when_cheaper`` adds to the
        running cost of staying; None: 0 (the capital taken as sunk).

    Returns
    -------
    GenerationPath
        Generation index held and moves, year by year.

    References
    ----------
    [brealey-myers-allen] the replacement rule of ``when_cheaper``, ch. 6.
    """
    if roadmap is None or policy == "keep" or len(roadmap.devices) == 1:
        return GenerationPath.fixed(horizon_years, last_year)
    index, switch = [], []
    current, _ = roadmap.best_available(0.0)
    since = np.zeros_like(current)
    for t in range(last_year):
        best, best_cost = roadmap.best_available(float(t))
        differs = best != current
        if t == 0:
            moves = np.zeros_like(differs)
        elif policy == "each_generation":
            moves = differs
        elif policy == "at_replacement":
            moves = differs & (np.mod(t - since, pick(life_years, current)) == 0)
        elif policy == "when_cheaper":  # or where the fleet held misses its targets and the best meets them
            rescued = ~roadmap.meets_targets(current) & roadmap.meets_targets(best)
            staying = pick(roadmap.running_usd_per_year, current)
            if holding_usd_per_year is not None:
                staying = staying + holding_usd_per_year(current, t - since)
            moves = differs & ((best_cost < staying) | rescued)
        else:
            raise ValueError(f"unknown refresh policy {policy!r}; one of {', '.join(POLICIES)}")
        current = np.where(moves, best, current)
        since = np.where(moves, float(t), since)
        index.append(current)
        switch.append(moves)
    return GenerationPath.from_switches(index, switch, horizon_years)


def years_of_advantage(option_usd_per_year, roadmap: RoadmapCosts, deployment_year, drift_exposure, half_life_years):
    """How long after deployment the option stays cheaper than the best general generation; negative
    when the general roadmap was already cheaper before the option entered service.

    The option's steady-state cost ``C_s`` against the best generation's ``C_g(t)``; the
    share ``kappa (1 - 2^(-t/H))`` of the general cost (``t >= 0``: the design is frozen at the
    decision) is the work the option's specialized pools no longer do at their designed
    efficiency (``kappa = sum_p share_p (1 - eta_p)``, bought on general hardware as in the
    workload-shift line). The option is cheaper while ``C_s < C_g(t) (1 - kappa (1 - 2^(-t/H)))``;
    the right side never rises with ``t`` (better generations, drift), so the crossing ``t*``
    is found by bisection between the oldest generation's release ``tau_0`` and ``t_d + 100``,
    and ``t* - t_d`` is returned: negative when a generation released before deployment was
    already cheaper; ``tau_0 - t_d`` when even the oldest generation listed is cheaper (the
    option never led); 100 when it is still cheaper after a century (finite bounds keep
    percentiles and histograms of it well defined).

    Parameters
    ----------
    option_usd_per_year : float or ndarray [USD/yr]
        The option's steady-state cost ``C_s``.
    roadmap : RoadmapCosts
        Steady-state costs of the baseline on each generation.
    deployment_year : float or ndarray [yr]
        Time the option enters service ``t_d``.
    drift_exposure : float or ndarray [-]
        Share ``kappa`` of the general cost the specialized pools lose to workload drift.
    half_life_years : float or ndarray [yr]
        Workload half-life ``H``.

    Returns
    -------
    ndarray [yr]
        Years of advantage ``t* - t_d``, in ``[tau_0 - t_d, 100]``.
    """
    def gap(t):
        kept = 1.0 - drift_exposure * (1.0 - np.exp2(-np.maximum(t, 0.0) / half_life_years))
        return option_usd_per_year - roadmap.best_cost_usd_per_year(t) * kept

    start = np.asarray(deployment_year, float) + np.zeros(np.shape(option_usd_per_year))
    oldest = np.minimum.reduce([np.asarray(r, float) for r in roadmap.release_years])
    lo, hi = np.minimum(oldest, start) + 0.0 * start, start + ADVANTAGE_SEARCH_YEARS
    always_behind, never_caught = gap(lo) >= 0, gap(hi) < 0
    for _ in range(BISECTIONS):
        mid = 0.5 * (lo + hi)
        ended = gap(mid) >= 0
        hi = np.where(ended, mid, hi)
        lo = np.where(ended, lo, mid)
    return np.where(always_behind, lo - start, np.where(never_caught, ADVANTAGE_SEARCH_YEARS, hi - start))
