"""Flip conditions of a verdict: how far each input must move, alone, for the winner to change.

``flip_conditions(params, gap)`` takes the scenario's named parameters and a signed
``gap(updates)`` (negative while the current winner wins; ``updates`` maps parameter
names to arrays) and finds, for every uncertain parameter moved alone across its
low..high range, the value where the gap changes sign. All parameters are searched at
once: element ``j`` of one batch moves parameter ``j`` and holds the others at their base
values, so the endpoint test and each bisection step is a single vectorized evaluation.
A parameter whose gap has the same sign at both ends of its range is reported as not
flipping (an interior double crossing is not searched).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .params import ParamSet


def _batch(names: Sequence[str], base: Mapping[str, float], xs: np.ndarray) -> dict[str, np.ndarray]:
    updates = {}
    for j, name in enumerate(names):  # one entry per parameter: a structural loop
        column = np.full(len(names), float(base[name]))
        column[j] = xs[j]
        updates[name] = column
    return updates


def flip_conditions(params: ParamSet, gap: Callable[[dict[str, np.ndarray]], np.ndarray],
                    names: Sequence[str] | None = None, iterations: int = 48) -> list[dict]:
    """Each uncertain parameter's flip point, nearest first (relative to its range).

    Returns dicts ``{name, unit, base, low, high, value, direction}``: ``value`` is where the
    winner stops winning, ``direction`` ``"above"`` when it loses above that value and
    ``"below"`` when it loses below it. Parameters that never flip are left out.
    """
    names = [p.name for p in params.uncertain()] if names is None else list(names)
    if not names:
        return []
    base = params.values()
    low = np.array([params[n].low for n in names])
    high = np.array([params[n].high for n in names])
    g_low = np.asarray(gap(_batch(names, base, low)), float)
    g_high = np.asarray(gap(_batch(names, base, high)), float)
    flips = (g_low < 0) != (g_high < 0)
    lo, hi, g_lo = low.copy(), high.copy(), g_low.copy()
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        g_mid = np.asarray(gap(_batch(names, base, mid)), float)
        same = (g_mid < 0) == (g_lo < 0)
        lo, g_lo, hi = np.where(same, mid, lo), np.where(same, g_mid, g_lo), np.where(same, hi, mid)
    out = []
    for j in np.flatnonzero(flips):
        p = params[names[j]]
        value = 0.5 * (lo[j] + hi[j])
        out.append({"name": p.name, "unit": p.unit, "base": p.value, "low": p.low, "high": p.high, "value": float(value),
                    "direction": "above" if g_high[j] >= 0 else "below",
                    "distance": abs(value - p.value) / (p.high - p.low)})
    return sorted(out, key=lambda row: row["distance"])
