"""Drawing parameter values from their catalog distributions, truncated to [low, high].

Every distribution is sampled by its inverse CDF applied to a uniform number ``u`` in
[0, 1], so the same mapping serves Monte Carlo (pseudo-random ``u``), Sobol and Morris
(unit-hypercube designs, :mod:`tco.studies.sensitivity`) and rank correlation (Iman-Conover
reorders ``u``). A Monte Carlo chunk draws its ``u`` from a generator of its own
(:func:`draw_chunk`), so a chunk's draws do not depend on where or when it runs.

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

Draws obey the rules between fields that a scenario must (:data:`tco.foundation.fields.ORDERED_FIELDS`: a device's
idle power at most its TDP, a model's active parameters at most its total, experts per token at most the routed
experts): of a pair, the upper field is drawn from its distribution conditioned on lying at or above the lower field's
smallest value (its base value when the lower is not drawn), then the lower one conditioned on lying at or below the
upper one drawn (or its base value). Conditioning maps each quantile ``u`` onto the allowed part of the quantile range
(``u -> F(a) + u (F(b) - F(a))``), so no draw is rejected, each stays monotone in its ``u`` (Sobol and Morris designs
and Iman-Conover ranks keep their meaning) and a pair whose ranges never overlap draws exactly as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import ndtr, ndtri

from tco.core.draws import mask_bits, select_bits
from tco.foundation.errors import FieldError, InputError
from tco.foundation.fields import ORDERED_FIELDS
from tco.studies.parallel import chunk_seed

if TYPE_CHECKING:  # a worker drawing a chunk imports numpy and scipy.special only (SamplingPlan.numbers_only)
    from tco.inputs.parameters import Param
    from tco.inputs.scenario import Scenario

#: z-score of the 95th percentile of a standard normal
Z95 = 1.6448536269514722
#: rows of the quantile matrix copied column-major at once (2,048 x 52 params x 8 B = 0.85 MB, within a core's
#: 2 MB L2 cache): 0.04 s for a 250,000 x 52 chunk against 0.15 s for numpy's whole-matrix copy (measured here)
TRANSPOSE_ROWS = 2048


def is_sampled(param: Param) -> bool:
    """Whether Monte Carlo draws this parameter (it has a range and a non-fixed distribution).

    Parameters
    ----------
    param : tco.inputs.parameters.Param
        The parameter.

    Returns
    -------
    bool
        ``low < high`` and distribution other than ``fixed``.
    """
    return param.uncertain and param.distribution != "fixed"


def _truncated_normal_ppf(u: np.ndarray, mean: float, sd: float, low: float, high: float) -> np.ndarray:
    """Inverse CDF of a normal(mean, sd) truncated to [low, high] (in the normal's own space)."""
    a, b = ndtr((low - mean) / sd), ndtr((high - mean) / sd)
    return np.clip(mean + sd * ndtri(a + u * (b - a)), low, high)


def _truncated_normal_cdf(x: np.ndarray, mean: float, sd: float, low: float, high: float) -> np.ndarray:
    """CDF of a normal(mean, sd) truncated to [low, high] (in the normal's own space) [-]."""
    a, b = ndtr((low - mean) / sd), ndtr((high - mean) / sd)
    return (ndtr((np.clip(x, low, high) - mean) / sd) - a) / (b - a)


def _triangular_ppf(u: np.ndarray, low: float, mode: float, high: float) -> np.ndarray:
    """Inverse CDF of the triangular distribution (low, mode, high)."""
    width = high - low
    split = (mode - low) / width
    left = low + np.sqrt(u * width * (mode - low))
    right = high - np.sqrt((1.0 - u) * width * (high - mode))
    return select_bits(mask_bits(u < split), left, right, np.shape(u))  # np.where, without its branch on random draws


def check_drawable(params: Sequence[Param]) -> None:
    """Refuse to draw a parameter its distribution cannot draw: a lognormal one whose range reaches 0 (an edit of
    the value to 0 widens the range to it; the scenario is valid, its draws are not: ``log(high / low)`` divides by
    zero), each named with its range.

    Parameters
    ----------
    params : Sequence[tco.inputs.parameters.Param]
        The parameters to be drawn.
    """
    errors = [FieldError(p.name, [p.low, p.high], "is drawn lognormal, which needs a range above 0 (low > 0); give it a "
                                                  "low above 0, or a uniform distribution")
              for p in params if is_sampled(p) and p.distribution == "lognormal" and not p.low > 0]
    if errors:
        raise InputError(errors)


def inverse_cdf(param: Param, u: np.ndarray) -> np.ndarray:
    """Values of ``param`` at quantiles ``u`` of its distribution truncated to ``[low, high]``.

    ``uniform`` on ``[low, high]``; ``triangular`` with mode at the base value; ``normal``
    around the base value with ``sd = (high - low) / (2 x 1.645)`` (``low`` and ``high`` as
    5th and 95th percentiles); ``lognormal`` the same on the logarithms; integer fields
    rounded (:func:`round_integers`).

    Parameters
    ----------
    param : tco.inputs.parameters.Param
        The parameter (or the numbers of one, as a worker has them).
    u : numpy.ndarray [-]
        Quantiles in [0, 1].

    Returns
    -------
    numpy.ndarray [unit of the parameter]
        The values (the base value everywhere when it is not sampled).
    """
    return _Drawn.of(param).values(u)


def round_integers(param: Param, x: np.ndarray) -> np.ndarray:
    """Integer fields rounded to the nearest integer inside ``[ceil(low), floor(high)]``; others unchanged.

    Parameters
    ----------
    param : tco.inputs.parameters.Param
        The parameter (its field says whether it is whole).
    x : numpy.ndarray [unit of the parameter]
        Values.

    Returns
    -------
    numpy.ndarray [unit of the parameter]
        The values, rounded and clipped for an integer field.
    """
    return _Drawn.of(param).rounded(x)


@dataclass(frozen=True)
class _Drawn:
    """What drawing a parameter needs, as numbers (a :class:`~tco.inputs.parameters.Param` would bring pydantic along)."""

    name: str
    distribution: str  # "fixed" when the parameter is not sampled
    low: float
    high: float
    value: float
    integer: bool

    @classmethod
    def of(cls, param) -> _Drawn:
        if isinstance(param, _Drawn):
            return param
        return cls(param.name, param.distribution if is_sampled(param) else "fixed", param.low, param.high, param.value,
                   param.field.integer)

    def values(self, u: np.ndarray) -> np.ndarray:
        """Values at quantiles ``u`` (:func:`inverse_cdf`) [unit of the parameter]."""
        u = np.asarray(u, float)
        low, high, value = self.low, self.high, self.value
        if self.distribution == "fixed":
            x = np.full_like(u, value)
        elif self.distribution == "uniform":
            x = low + u * (high - low)
        elif self.distribution == "triangular":
            x = _triangular_ppf(u, low, min(max(value, low), high), high)
        elif self.distribution == "normal":
            x = _truncated_normal_ppf(u, value, (high - low) / (2 * Z95), low, high)
        elif self.distribution == "lognormal":
            sd = np.log(high / low) / (2 * Z95)
            x = np.exp(_truncated_normal_ppf(u, np.log(value), sd, np.log(low), np.log(high)))
        else:
            raise ValueError(f"{self.name}: unknown distribution {self.distribution!r}")
        return self.rounded(x)

    def cdf(self, x: np.ndarray) -> np.ndarray:
        """Share of the distribution at or below ``x`` [-] (the inverse of :meth:`values` before rounding); 0 or 1 for
        a parameter that is not sampled."""
        x = np.asarray(x, float)
        low, high, value = self.low, self.high, self.value
        if self.distribution == "fixed":
            return (x >= value).astype(float)
        if self.distribution == "uniform":
            share = (x - low) / (high - low)
        elif self.distribution == "triangular":
            mode = min(max(value, low), high)
            left = (x - low) ** 2 / ((high - low) * (mode - low)) if mode > low else np.zeros_like(x)
            right = 1.0 - (high - x) ** 2 / ((high - low) * (high - mode)) if high > mode else np.ones_like(x)
            share = np.where(x < mode, left, right)
        elif self.distribution == "normal":
            share = _truncated_normal_cdf(x, value, (high - low) / (2 * Z95), low, high)
        elif self.distribution == "lognormal":
            sd = np.log(high / low) / (2 * Z95)
            share = _truncated_normal_cdf(np.log(np.maximum(x, low)), np.log(value), sd, np.log(low), np.log(high))
        else:
            raise ValueError(f"{self.name}: unknown distribution {self.distribution!r}")
        return np.clip(share, 0.0, 1.0)

    def rounded(self, x: np.ndarray) -> np.ndarray:
        """Rounded and clipped for an integer field (:func:`round_integers`) [unit of the parameter]."""
        if not self.integer:
            return x
        return np.clip(np.round(x), np.ceil(self.low), np.floor(self.high))


@dataclass(frozen=True)
class OrderedPair:
    """A rule between two fields that a draw must obey (:data:`tco.foundation.fields.ORDERED_FIELDS`): the value of
    column ``lower`` at most that of column ``upper``; a column of -1 is not drawn and holds its base value
    (``lower_value``, ``upper_value``, in the fields' unit); ``lower_name`` and ``upper_name`` the two parameters."""

    lower: int
    upper: int
    lower_value: float
    upper_value: float
    lower_name: str
    upper_name: str


def ordered_pairs(params: Sequence[Param], values: Mapping[str, float]) -> tuple[OrderedPair, ...]:
    """The rules between fields that the draws of ``params`` must obey, at least one field of each drawn.

    Parameters
    ----------
    params : Sequence[tco.inputs.parameters.Param]
        The drawn parameters, one per column.
    values : Mapping[str, float] [unit of each parameter]
        The scenario's base values (of the pair's field that is not drawn).

    Returns
    -------
    tuple[OrderedPair, ...]
        One per pair of a device or model, upper fields first drawn in :func:`values_at_quantiles`.
    """
    column = {p.name: j for j, p in enumerate(params)}
    out = []
    for lower, upper in ORDERED_FIELDS:
        for name in values:
            if not name.endswith("." + lower):
                continue
            other = name[: -len(lower)] + upper
            if other in values and (name in column or other in column):
                out.append(OrderedPair(column.get(name, -1), column.get(other, -1), float(values[name]),
                                       float(values[other]), name, other))
    return tuple(out)


#: quantiles per field at which :func:`rule_breaking_shares` compares a pair's independent draws (midpoints)
RULE_QUANTILES = 1024


@dataclass(frozen=True)
class RuleBreakingShare:
    """A rule between two drawn fields (``lower <= upper``) and the share of draws [-] that would break it were the two
    drawn independently: the draws that :func:`values_at_quantiles` conditions on the rule instead."""

    lower: str
    upper: str
    share: float


def rule_breaking_shares(plan: SamplingPlan) -> tuple[RuleBreakingShare, ...]:
    """For each rule of ``plan`` (:func:`ordered_pairs`), the share of independent draws that break it [-].

    ``P(L > U)`` for the lower field ``L`` and the upper ``U`` drawn independently from their distributions (a field
    not drawn at its base value), by midpoint quadrature on :data:`RULE_QUANTILES` quantiles of each
    (``mean over i, j of [L(q_i) > U(q_j)]``, integer fields rounded as drawn; exact for a field not drawn, within
    ``1 / RULE_QUANTILES`` otherwise). Rank correlations between the two (Iman-Conover) are not counted.

    Parameters
    ----------
    plan : SamplingPlan
        What is drawn.

    Returns
    -------
    tuple[RuleBreakingShare, ...]
        One per rule, in the plan's order.
    """
    q = (np.arange(RULE_QUANTILES) + 0.5) / RULE_QUANTILES
    out = []
    for pair in plan.pairs:
        low = _Drawn.of(plan.params[pair.lower]).values(q) if pair.lower >= 0 else np.array([pair.lower_value])
        up = _Drawn.of(plan.params[pair.upper]).values(q) if pair.upper >= 0 else np.array([pair.upper_value])
        out.append(RuleBreakingShare(pair.lower_name, pair.upper_name, float(np.mean(low[:, None] > up[None, :]))))
    return tuple(out)


def values_at_quantiles(params: Sequence[Param], u: np.ndarray,
                        pairs: Sequence[OrderedPair] = ()) -> dict[str, np.ndarray]:
    """Parameter values from a matrix of quantiles ``u`` (samples x len(params)), within the rules ``pairs``.

    The columns are laid out contiguously first, :data:`TRANSPOSE_ROWS` rows at a time (a block
    stays in the cache; numpy's whole-matrix copy does not): each inverse CDF then streams its
    column instead of striding through the rows (drawing a 250,000 x 52 chunk twice as fast).
    A column in a pair is drawn conditioned on the rule (the module docstring): the upper field at or above the lower
    field's smallest value, then the lower at or below the upper's draw.

    Parameters
    ----------
    params : Sequence[tco.inputs.parameters.Param]
        The parameters, one per column.
    u : numpy.ndarray [-]
        Quantiles in [0, 1], shape ``(samples, len(params))``.
    pairs : Sequence[OrderedPair]
        The rules between the columns (:func:`ordered_pairs`); none by default.

    Returns
    -------
    dict[str, numpy.ndarray] [each parameter's unit]
        ``{name: values}`` (:func:`inverse_cdf` per column).
    """
    u = np.asarray(u, float)
    columns = np.empty(u.shape, order="F")
    for start in range(0, u.shape[0], TRANSPOSE_ROWS):
        columns[start:start + TRANSPOSE_ROWS] = u[start:start + TRANSPOSE_ROWS]
    drawn = [_Drawn.of(p) for p in params]
    for pair in pairs:  # the upper fields first: a lower one is conditioned on the upper's draw
        if pair.upper >= 0:
            up = drawn[pair.upper]
            floor = drawn[pair.lower].low if pair.lower >= 0 else pair.lower_value
            start = up.cdf(floor) if floor > up.low else 0.0
            columns[:, pair.upper] = start + columns[:, pair.upper] * (1.0 - start)
    values = [d.values(columns[:, j]) for j, d in enumerate(drawn)]
    for pair in pairs:
        if pair.lower >= 0:
            cap = values[pair.upper] if pair.upper >= 0 else pair.upper_value
            low = drawn[pair.lower]
            values[pair.lower] = low.values(columns[:, pair.lower] * low.cdf(np.minimum(cap, low.high)))
    return {d.name: x for d, x in zip(drawn, values, strict=True)}


def normal_score_correlation(rank_correlation: np.ndarray) -> np.ndarray:
    """Pearson correlation of normal scores giving a Spearman rank correlation ``rho_s``.

    For a bivariate normal, ``rho_s = 6/pi * asin(rho / 2)``, so ``rho = 2 sin(pi rho_s / 6)``
    (Pearson 1907; used by Iman and Conover to target rank correlations).

    Parameters
    ----------
    rank_correlation : numpy.ndarray [-]
        Target Spearman correlations.

    Returns
    -------
    numpy.ndarray [-]
        The normal scores' Pearson correlations.

    References
    ----------
    [iman-conover-1982] rank correlations through normal scores.
    """
    return 2.0 * np.sin(np.pi * np.asarray(rank_correlation, float) / 6.0)


def iman_conover(u: np.ndarray, rank_correlation: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Reorder each column of ``u`` (samples x k) so its rank correlations approach the target.

    Build van der Waerden scores with the target correlation (Cholesky factors), then give
    each column of ``u`` the ranks of the corresponding score column. Marginals are untouched.

    Parameters
    ----------
    u : numpy.ndarray [-]
        Independent quantiles, shape ``(samples, k)``.
    rank_correlation : numpy.ndarray [-]
        Target Spearman correlation matrix, ``(k, k)``.
    rng : numpy.random.Generator
        Permutes the scores.

    Returns
    -------
    numpy.ndarray [-]
        ``u`` with each column reordered.

    References
    ----------
    [iman-conover-1982] the method.
    """
    n, k = u.shape
    scores = ndtri(np.arange(1, n + 1) / (n + 1.0))
    s = np.column_stack([rng.permutation(scores) for _ in range(k)])
    current = np.linalg.cholesky(np.corrcoef(s, rowvar=False))
    target = np.linalg.cholesky(normal_score_correlation(rank_correlation))
    t = s @ np.linalg.inv(current).T @ target.T
    ranks = np.argsort(np.argsort(t, axis=0), axis=0)
    return np.take_along_axis(np.sort(u, axis=0), ranks, axis=0)


#: one rank correlation between two named parameters: (name_a, name_b, Spearman rho)
Correlation = tuple[str, str, float]


@dataclass(frozen=True)
class SamplingPlan:
    """What is drawn: the sampled parameters, the rank-correlation matrix among some of them and the rules between
    fields the draws obey (:func:`ordered_pairs`)."""

    params: tuple[Param, ...]
    correlated: tuple[int, ...] = ()
    rank_correlation: np.ndarray | None = None
    pairs: tuple[OrderedPair, ...] = ()

    def numbers_only(self) -> SamplingPlan:
        """The same plan with each parameter reduced to the numbers drawing needs: what a worker process is
        sent (it then draws with numpy and scipy.special, without importing pydantic for the parameters)."""
        return SamplingPlan(tuple(_Drawn.of(p) for p in self.params), self.correlated, self.rank_correlation, self.pairs)


def sampling_plan(scenario: Scenario, correlations: Sequence[Correlation] | None = None,
                  exclude: Sequence[str] = ()) -> SamplingPlan:
    """Sampled parameters of ``scenario`` (range and non-fixed distribution) and their correlations.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario (the cost model's parameters; fleet-analysis settings are never drawn).
    correlations : Sequence[Correlation], optional
        ``(a, b, rho)`` rank correlations [-] between sampled parameters.
    exclude : Sequence[str]
        Parameters not to draw (e.g. the one a break-even metric solves for).

    Returns
    -------
    SamplingPlan
        The parameters drawn, the correlated ones and their rank-correlation matrix (checked
        positive definite).
    """
    params = tuple(p for p in scenario.params.values_list() if is_sampled(p) and p.name not in exclude)
    check_drawable(params)
    rules = ordered_pairs(params, scenario.params.values())
    if not correlations:
        return SamplingPlan(params, pairs=rules)
    index = {p.name: i for i, p in enumerate(params)}
    names = []
    pairs: dict[frozenset, int] = {}
    for k, (a, b, rho) in enumerate(correlations):
        pair = frozenset((a, b))
        if pair in pairs:  # (A, B, 0.5) then (B, A, -0.5): the second would replace the first without a word
            first = correlations[pairs[pair]]
            raise InputError.one(f"correlations[{k}]", [a, b, rho], f"correlates the pair of correlations[{pairs[pair]}] "
                                 f"({first[0]}, {first[1]}, rho {float(first[2]):g}) again: give each pair once")
        pairs[pair] = k
        for side, name in (("a", a), ("b", b)):
            if name not in index:
                raise InputError.one(f"correlations[{k}].{side}", name, "must name a sampled parameter "
                                     "(a range and a distribution other than fixed)")
        if a == b or not -1.0 < float(rho) < 1.0:
            raise InputError.one(f"correlations[{k}].rho", rho, "must lie in (-1, 1) between two different parameters")
        names += [n for n in (a, b) if n not in names]
    matrix = np.eye(len(names))
    for a, b, rho in correlations:
        i, j = names.index(a), names.index(b)
        matrix[i, j] = matrix[j, i] = float(rho)
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        raise InputError.one("correlations", [list(c) for c in correlations],
                             "the correlation matrix must be positive definite") from None
    return SamplingPlan(params, tuple(index[n] for n in names), matrix, rules)


def draw_chunk(plan: SamplingPlan, seed: int, index: int, size: int) -> dict[str, np.ndarray]:
    """Parameter values of chunk ``index``: uniform quantiles from a generator seeded by ``chunk_seed(seed, index)``.

    Parameters
    ----------
    plan : SamplingPlan
        What is drawn.
    seed : int [-]
        The study seed.
    index : int [-]
        The chunk.
    size : int [draws]
        Draws in the chunk.

    Returns
    -------
    dict[str, numpy.ndarray] [each parameter's unit]
        ``{name: values}``, correlated columns reordered by :func:`iman_conover`, within the plan's rules between
        fields.
    """
    rng = np.random.default_rng(chunk_seed(seed, index))
    u = rng.random((size, len(plan.params)))
    if plan.correlated and size > 2:
        cols = list(plan.correlated)
        u[:, cols] = iman_conover(u[:, cols], plan.rank_correlation, rng)
    return values_at_quantiles(plan.params, u, plan.pairs)
