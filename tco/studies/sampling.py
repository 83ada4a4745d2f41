"""Drawing parameter values from their catalog distributions, truncated to [low, high].

Every distribution is sampled by its inverse CDF applied to a uniform number ``u`` in
[0, 1], so the same mapping serves Monte Carlo (pseudo-random ``u``), Sobol and Morris
(SALib's unit-hypercube designs) and rank correlation (Iman-Conover reorders ``u``).

How a parameter's ``value``, ``low`` and ``high`` set each distribution:

- ``uniform``:    flat on [low, high].
- ``triangular``: minimum low, mode value, maximum high.
- ``normal``:     mean = value, standard deviation = (high - low) / (2 z95) with
  z95 = 1.6449, i.e. low and high are the P5 and P95 of the untruncated normal when
  value is their midpoint; then truncated to [low, high].
- ``lognormal``:  median = value, log-standard deviation = ln(high / low) / (2 z95), i.e.
  low and high are the P5 and P95 when value is their geometric midpoint; truncated to
  [low, high].
- ``fixed`` (or low == high): the base value, never sampled.

Integer fields (``Param.field.integer``, e.g. useful life in whole years) are rounded to
the nearest integer inside [ceil(low), floor(high)] after sampling.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import ndtr, ndtri

from ..params import Param

#: z-score of the 95th percentile of a standard normal
Z95 = 1.6448536269514722


def is_sampled(param: Param) -> bool:
    """Whether Monte Carlo draws this parameter (it has a range and a non-fixed distribution)."""
    return param.uncertain and param.distribution != "fixed"


def _truncated_normal_ppf(u: np.ndarray, mean: float, sd: float, low: float, high: float) -> np.ndarray:
    """Inverse CDF of a normal(mean, sd) truncated to [low, high] (in the normal's own space)."""
    a, b = ndtr((low - mean) / sd), ndtr((high - mean) / sd)
    return np.clip(mean + sd * ndtri(a + u * (b - a)), low, high)


def _triangular_ppf(u: np.ndarray, low: float, mode: float, high: float) -> np.ndarray:
    """Inverse CDF of the triangular distribution (low, mode, high)."""
    width = high - low
    split = (mode - low) / width
    left = low + np.sqrt(u * width * (mode - low))
    right = high - np.sqrt((1.0 - u) * width * (high - mode))
    return np.where(u < split, left, right)


def inverse_cdf(param: Param, u: np.ndarray) -> np.ndarray:
    """Values of ``param`` at quantiles ``u`` in [0, 1] of its (truncated) distribution [param unit]."""
    u = np.asarray(u, float)
    low, high, value = param.low, param.high, param.value
    if not is_sampled(param):
        x = np.full_like(u, value)
    elif param.distribution == "uniform":
        x = low + u * (high - low)
    elif param.distribution == "triangular":
        x = _triangular_ppf(u, low, min(max(value, low), high), high)
    elif param.distribution == "normal":
        x = _truncated_normal_ppf(u, value, (high - low) / (2 * Z95), low, high)
    elif param.distribution == "lognormal":
        sd = np.log(high / low) / (2 * Z95)
        x = np.exp(_truncated_normal_ppf(u, np.log(value), sd, np.log(low), np.log(high)))
    else:
        raise ValueError(f"{param.name}: unknown distribution {param.distribution!r}")
    return round_integers(param, x)


def round_integers(param: Param, x: np.ndarray) -> np.ndarray:
    """Integer fields rounded to the nearest integer inside [ceil(low), floor(high)]; others unchanged."""
    if not param.field.integer:
        return x
    return np.clip(np.round(x), np.ceil(param.low), np.floor(param.high))


def values_at_quantiles(params: Sequence[Param], u: np.ndarray) -> dict[str, np.ndarray]:
    """Parameter values from a matrix of quantiles ``u`` (samples x len(params))."""
    return {p.name: inverse_cdf(p, u[:, j]) for j, p in enumerate(params)}


def normal_score_correlation(rank_correlation: np.ndarray) -> np.ndarray:
    """Pearson correlation of normal scores giving a Spearman rank correlation ``rho_s``.

    For a bivariate normal, ``rho_s = 6/pi * asin(rho / 2)``, so ``rho = 2 sin(pi rho_s / 6)``
    (Pearson 1907; used by Iman & Conover 1982 to target rank correlations).
    """
    return 2.0 * np.sin(np.pi * np.asarray(rank_correlation, float) / 6.0)


def iman_conover(u: np.ndarray, rank_correlation: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Reorder each column of ``u`` (samples x k) so its rank correlations approach the target.

    Iman, R. L. & Conover, W. J. (1982), "A distribution-free approach to inducing rank
    correlation among input variables", Commun. Statist. B 11(3), 311-334: build van der
    Waerden scores with the target correlation (Cholesky factors), then give each column of
    ``u`` the ranks of the corresponding score column. Marginals are untouched.
    """
    n, k = u.shape
    scores = ndtri(np.arange(1, n + 1) / (n + 1.0))
    s = np.column_stack([rng.permutation(scores) for _ in range(k)])
    current = np.linalg.cholesky(np.corrcoef(s, rowvar=False))
    target = np.linalg.cholesky(normal_score_correlation(rank_correlation))
    t = s @ np.linalg.inv(current).T @ target.T
    ranks = np.argsort(np.argsort(t, axis=0), axis=0)
    return np.take_along_axis(np.sort(u, axis=0), ranks, axis=0)
