"""Running aggregates that chunks of a study fold into, so no study holds all of its samples.

Every aggregate is built from one chunk's values (``of``) and merged with another
(``merge``); merging in chunk order makes the result independent of where and when the
chunks ran. Memory is fixed by the aggregate's shape (a histogram's bin count), not by
the number of samples.

- :class:`Moments`: count, mean and sum of squared deviations ``M2`` [metric unit, unit²].
  Within a chunk they are computed two-pass with numpy; chunks merge with the pairwise
  update of Chan, Golub & LeVeque (1979), "Updating formulae and a pairwise algorithm for
  computing sample variances", Stanford CS report STAN-CS-79-773, eq. 2.1:
  ``n = na + nb``, ``δ = mean_b − mean_a``, ``mean = mean_a + δ nb / n``,
  ``M2 = M2_a + M2_b + δ² na nb / n`` (Welford's 1962 update is the case nb = 1).
- :class:`Histogram`: counts in bins whose edges are fixed before the first chunk (plus
  an underflow and an overflow bin bounded by the running minimum and maximum); quantiles
  are read by linear interpolation inside the bin holding them, so a quantile's error is at
  most the width of that bin.
- :class:`MetricAggregate`: the two above over the finite values of a metric, plus the
  number of draws (NaN included) and the number where each named indicator holds (the
  option wins, meets its latency targets, a device is best cascaded...).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: bins of a metric histogram (edges at quantiles of a pilot draw: ~1/BINS of the mass per bin)
BINS = 2048


@dataclass(frozen=True)
class Moments:
    """Count, mean and sum of squared deviations from the mean (``m2``) of finite values."""

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0
    minimum: float = np.inf
    maximum: float = -np.inf

    @classmethod
    def of(cls, values: np.ndarray) -> Moments:
        """Moments of the finite entries of ``values`` (two-pass: mean, then squared deviations)."""
        v = np.asarray(values, float).reshape(-1)
        v = v[np.isfinite(v)]
        if not len(v):
            return cls()
        mean = float(v.mean())
        return cls(len(v), mean, float(np.square(v - mean).sum()), float(v.min()), float(v.max()))

    def merge(self, other: Moments) -> Moments:
        """Chan-Golub-LeVeque pairwise merge (module docstring)."""
        if not other.count:
            return self
        if not self.count:
            return other
        n = self.count + other.count
        delta = other.mean - self.mean
        return Moments(n, self.mean + delta * other.count / n, self.m2 + other.m2 + delta * delta * self.count * other.count / n,
                       min(self.minimum, other.minimum), max(self.maximum, other.maximum))

    @property
    def variance(self) -> float:
        """Sample variance (ddof = 1) [unit²]; NaN below two values."""
        return self.m2 / (self.count - 1) if self.count > 1 else np.nan

    @property
    def std_error(self) -> float:
        """Standard error of the mean, sqrt(variance / count) [unit]."""
        return float(np.sqrt(self.variance / self.count)) if self.count > 1 else np.nan


def quantile_edges(pilot: np.ndarray, bins: int = BINS) -> np.ndarray:
    """Bin edges at ``bins + 1`` evenly spaced quantiles of the finite pilot values (duplicates dropped).

    Equal-mass bins put the resolution where the draws are: each holds ~1/bins of the
    pilot's mass, so a quantile read from the histogram is off by about 1/bins in
    probability at most (plus the pilot's own sampling error).

    Parameters
    ----------
    pilot : numpy.ndarray [unit of the metric]
        Values of a pilot chunk (non-finite ones ignored).
    bins : int [-]
        Number of bins.

    Returns
    -------
    numpy.ndarray [unit of the metric]
        Increasing edges, at least two (``[0, 1]`` when no pilot value is finite).
    """
    v = np.asarray(pilot, float).reshape(-1)
    v = v[np.isfinite(v)]
    if not len(v):
        return np.array([0.0, 1.0])
    edges = np.unique(np.quantile(v, np.linspace(0.0, 1.0, bins + 1)))
    return edges if len(edges) > 1 else np.array([edges[0], edges[0] + max(abs(edges[0]), 1.0) * 1e-12])


@dataclass(frozen=True)
class Histogram:
    """Counts per bin: ``counts[0]`` below ``edges[0]``, ``counts[k]`` in [edges[k-1], edges[k]), last above."""

    edges: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray, edges: np.ndarray) -> Histogram:
        """Counts of the finite ``values``: the values are sorted once and every edge located in them
        (the draws below ``edges[k]`` are its position), faster than locating every value among the edges."""
        v = np.sort(np.asarray(values, float).reshape(-1))
        below = np.searchsorted(v, edges, side="left")
        finite = int(np.searchsorted(v, np.inf, side="left"))  # NaN sorts last, after +inf; -inf, +inf are not finite
        start = int(np.searchsorted(v, -np.inf, side="right"))
        return cls(edges, np.diff(np.concatenate([[start], np.clip(below, start, finite), [finite]])).astype(np.int64))

    def merge(self, other: Histogram) -> Histogram:
        if not np.array_equal(self.edges, other.edges):
            raise ValueError("histograms merge only with the same bin edges")
        return Histogram(self.edges, self.counts + other.counts)

    def quantiles(self, q: np.ndarray, minimum: float, maximum: float) -> np.ndarray:
        """Quantiles ``q`` in [0, 1] by linear interpolation inside the bin that holds each.

        The outer bins span [minimum, edges[0]] and [edges[-1], maximum] (the running
        extremes). NaN when the histogram is empty.
        """
        q = np.atleast_1d(np.asarray(q, float))
        total = int(self.counts.sum())
        if not total:
            return np.full(q.shape, np.nan)
        lows = np.concatenate([[min(minimum, self.edges[0])], self.edges])
        highs = np.concatenate([self.edges, [max(maximum, self.edges[-1])]])
        cumulative = np.cumsum(self.counts)
        target = q * total
        k = np.minimum(np.searchsorted(cumulative, target, side="left"), len(self.counts) - 1)
        below = cumulative[k] - self.counts[k]
        share = np.where(self.counts[k] > 0, (target - below) / np.maximum(self.counts[k], 1), 0.0)
        return np.clip(lows[k] + np.clip(share, 0, 1) * (highs[k] - lows[k]), minimum, maximum)

    def cdf(self, minimum: float, maximum: float) -> tuple[np.ndarray, np.ndarray]:
        """``(value, share below value)`` at ``minimum``, at every edge and at ``maximum`` (share 1).

        Exact, not interpolated: the draws below ``edges[j]`` are ``counts[0] + ... + counts[j]``.
        Empty arrays when the histogram is.
        """
        total = int(self.counts.sum())
        if not total:
            return np.array([]), np.array([])
        below = np.cumsum(self.counts)[: len(self.edges)] / total
        return np.concatenate([[minimum], self.edges, [maximum]]), np.concatenate([[0.0], below, [1.0]])


@dataclass(frozen=True)
class MetricAggregate:
    """One metric over many draws: moments and histogram of its finite values, the number of draws
    (NaN included) and, per named indicator (e.g. ``win``, ``feasible``), the draws where it holds."""

    moments: Moments
    histogram: Histogram
    draws: int
    counts: dict[str, int]

    @classmethod
    def of(cls, values: np.ndarray, edges: np.ndarray, indicators: dict[str, np.ndarray]) -> MetricAggregate:
        return cls(Moments.of(values), Histogram.of(values, edges), int(np.size(values)),
                   {k: int(np.count_nonzero(v)) for k, v in indicators.items()})

    def merge(self, other: MetricAggregate) -> MetricAggregate:
        return MetricAggregate(self.moments.merge(other.moments), self.histogram.merge(other.histogram),
                               self.draws + other.draws, {k: c + other.counts[k] for k, c in self.counts.items()})

    def share(self, indicator: str) -> float:
        """Share of the draws where ``indicator`` holds [0-1] (NaN draws count as not holding); NaN with no draws."""
        return self.counts[indicator] / self.draws if self.draws else np.nan

    def share_std_error(self, indicator: str) -> float:
        """Binomial standard error of :meth:`share`, ``sqrt(p (1 - p) / draws)`` [0-1]."""
        p = self.share(indicator)
        return float(np.sqrt(p * (1 - p) / self.draws)) if self.draws else np.nan

    def quantiles(self, q) -> np.ndarray:
        """Quantiles ``q`` of the finite values from the histogram (:meth:`Histogram.quantiles`)."""
        return self.histogram.quantiles(np.asarray(q, float), self.moments.minimum, self.moments.maximum)

    def cdf(self) -> tuple[np.ndarray, np.ndarray]:
        """``(value, share of the finite draws below value)`` (:meth:`Histogram.cdf`)."""
        return self.histogram.cdf(self.moments.minimum, self.moments.maximum)

    def summary(self) -> dict[str, float]:
        """Mean, standard error, P10/P50/P90 (histogram), ``p_<indicator>`` for every indicator, n, min, max.

        ``n`` counts the finite values behind the statistics of the values.
        """
        m = self.moments
        p10, p50, p90 = self.quantiles([0.1, 0.5, 0.9])
        return {"mean": m.mean if m.count else np.nan, "std_error": m.std_error, "p10": p10, "p50": p50, "p90": p90,
                **{f"p_{k}": self.share(k) for k in self.counts},
                "n": m.count, "min": m.minimum if m.count else np.nan, "max": m.maximum if m.count else np.nan}


def merge_tables(a: dict[str, MetricAggregate], b: dict[str, MetricAggregate]) -> dict[str, MetricAggregate]:
    """Merge two ``{metric name: aggregate}`` tables key by key.

    Counts, means and second moments combine by the pairwise update (``M2 = M2_a + M2_b +
    delta^2 n_a n_b / n``), histograms by adding counts.

    Parameters
    ----------
    a, b : dict[str, MetricAggregate]
        Aggregates of two disjoint sets of draws, with the same keys and bin edges.

    Returns
    -------
    dict[str, MetricAggregate]
        The aggregate of both sets.

    References
    ----------
    [chan-golub-leveque-1979] the pairwise update of means and variances.
    """
    return {k: a[k].merge(b[k]) for k in a}
