"""Pareto frontier of points that minimize two quantities (e.g. cost per token and latency)."""

from __future__ import annotations

import numpy as np


def pareto_mask(cost, latency):
    """True for points no other point beats on both ``cost`` and ``latency`` (lower is better).

    Sort by cost (then latency); a point is on the frontier when its latency is strictly
    below every latency of the cheaper points. NaN points are never on it. 1-D inputs.

    Parameters
    ----------
    cost : ndarray [USD/Mtok]
        First quantity to minimize (any unit; cost per token in the fleet analyses).
    latency : ndarray [s]
        Second quantity to minimize (any unit).

    Returns
    -------
    ndarray of bool [-]
        Whether each point is on the frontier.
    """
    cost = np.asarray(cost, float)
    latency = np.asarray(latency, float)
    valid = np.isfinite(cost) & np.isfinite(latency)
    order = np.lexsort((np.where(valid, latency, np.inf), np.where(valid, cost, np.inf)))
    sorted_latency = np.where(valid, latency, np.inf)[order]
    best_before = np.concatenate([[np.inf], np.minimum.accumulate(sorted_latency)[:-1]])
    mask = np.zeros(cost.shape, bool)
    mask[order] = sorted_latency < best_before
    return mask & valid
