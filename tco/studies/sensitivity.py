"""Global sensitivity: Sobol first/total-order indices and Morris screening, in bounded memory.

The one Sobol and the one Morris of the package (the Dash app, the Python API and ``tco study``
run these; SALib is only the tests' oracle). Both work on the unit hypercube: a design of
quantiles ``u`` in [0, 1] maps to parameter values through each parameter's (truncated)
inverse CDF (:mod:`tco.studies.sampling`), so the indices respect the catalog distributions.
The generic functions (:func:`sobol_analysis`, :func:`morris_analysis`) take any vectorized
function of ``u`` (rows x dimensions), so they are checked on test functions with known
indices (Ishigami). Both run in chunks on a :class:`~tco.studies.parallel.ChunkRunner`
(progress after each chunk, cancellation between chunks, the same numbers on any number of
workers).

**Sobol.** The design is Saltelli's (as ``SALib.sample.sobol.sample`` without second order):
a scrambled Sobol' sequence of dimension 2D seeded by the study seed; row ``j`` gives
matrices ``A_j`` (first D columns) and ``B_j`` (last D), and ``AB_ij`` is ``A_j`` with column
``i`` from ``B_j``. A chunk takes rows ``[start, stop)`` of the sequence (``fast_forward``),
evaluates the function at ``A``, ``B`` and every ``AB_i`` ((D + 2) rows per base row) and
returns only sums. With ``d_ij = f(AB_ij) − f(A_j)``, ``m`` the mean of every evaluation and
``V`` the population variance of ``f`` over ``A ∪ B``:

- first order (Saltelli et al. 2010, "Variance based sensitivity analysis of model output",
  Comput. Phys. Commun. 181, 259-270, table 2 (b)): ``S_i = mean_j[(f(B_j) − m) d_ij] / V``
- total order (Jansen 1999, ibid. table 2 (f)): ``ST_i = mean_j[d_ij² / 2] / V``

— what SALib computes on outputs normalized by their mean and standard deviation. Their 95 %
confidence half-widths are ``1.96 · sd(term) / sqrt(n) / V`` (central limit theorem on the
per-row terms, ``V`` taken as known) instead of a bootstrap, which needs every output at once.

**Morris.** Trajectories of Morris (1991), "Factorial sampling plans for preliminary
computational experiments", Technometrics 33(2), 161-174: on a grid of ``p`` (even) levels,
``Δ = p / (2 (p − 1))``; a trajectory starts at a random grid point ``x*`` in
``{0, 1/(p−1), ..., 1 − Δ}`` per dimension, each dimension moving once by ``+Δ`` or ``−Δ`` (a
random direction) in a random order, so ``D + 1`` rows give one elementary effect
``EE_i = (f(x with x_i high) − f(x with x_i low)) / Δ`` per dimension. ``mu`` and ``sigma``
(ddof 1) are the mean and standard deviation of the effects, ``mu_star`` the mean of their
absolute values (Campolongo, Cariboni & Saltelli 2007, Environ. Model. Softw. 22, 1509-1518)
with a 95 % half-width ``1.96 · sd(|EE|) / sqrt(r)`` over ``r`` trajectories. Effects are per
unit of quantile (the whole range of a parameter is 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import qmc

from tco.foundation import limits
from tco.foundation.errors import InputError
from tco.inputs.parameters import Param
from tco.inputs.scenario import Scenario
from tco.studies.aggregates import Moments
from tco.studies.chunks import CHUNK_SIZE, Cancel, Progress, blockwise
from tco.studies.metrics import MISSED, Metric, judged_options, metric_and_misses, metric_table, parse_metric
from tco.studies.parallel import ChunkRunner, chunk_seed
from tco.studies.sampling import check_drawable, is_sampled, ordered_pairs, values_at_quantiles

UnitFunction = Callable[[np.ndarray], np.ndarray]

#: two-sided 95 % normal quantile, scipy.stats.norm.ppf(0.975)
Z975 = 1.959963984540054
#: fewest Sobol base rows: SALib's Saltelli sampler draws at least 16 points of the sequence (its ``skip_values``
#: default: a power of 2 >= N, or 16, whichever is greater) and asks for N a power of 2 not above them; below, the
#: half-widths (a normal approximation over N rows) are meaningless: n = 1 gave S1 = 5.24 +- 3e-7
MIN_SOBOL_N = 16
#: fewest Morris trajectories: sigma and the interval of mu* are spreads over each parameter's elementary effects
MIN_MORRIS_TRAJECTORIES = 2


# --- the metric as a function of quantiles ---------------------------------------------------------

@dataclass(frozen=True)
class QuantileMetric:
    """A scenario metric as a function of the quantiles ``u`` (rows x params) of ``params``; picklable."""

    scenario: Scenario
    metric: Metric
    params: tuple[Param, ...]

    def __call__(self, u: np.ndarray) -> np.ndarray:
        """The metric at each row of ``u`` and, for a metric that compares fleets (:func:`judged_options`), a second
        column: 1 where one of them misses a latency target, else 0 [-]; shape ``(rows, outputs)``."""
        updates = values_at_quantiles(self.params, u, ordered_pairs(self.params, self.scenario.params.values()))
        if judged_options(self.scenario.structure, self.metric):
            table = blockwise(lambda block: metric_and_misses(self.scenario, self.metric, block), updates)
            columns = [table[self.metric.name], table[MISSED]]
        else:
            columns = [blockwise(lambda block: metric_table(self.scenario, [self.metric], block), updates)[self.metric.name]]
        # one value per row even where none of the parameters moves the metric (the core then answers a scalar)
        return np.column_stack([np.broadcast_to(np.asarray(c, float), (np.shape(u)[0],)) for c in columns])


def output_columns(y: np.ndarray, rows: int) -> np.ndarray:
    """A unit function's answer for ``rows`` points as ``(rows, outputs)``.

    Parameters
    ----------
    y : numpy.ndarray [unit of each output]
        One output per row, shape ``(rows,)``, or several, ``(rows, outputs)``.
    rows : int [-]
        Points evaluated.

    Returns
    -------
    numpy.ndarray [unit of each output]
        Shape ``(rows, outputs)``.
    """
    return np.asarray(y, float).reshape(rows, -1)


def scenario_function(scenario: Scenario, metric: Metric, params: Sequence[str] | None) -> tuple[UnitFunction, list[str]]:
    """The metric as a function of the quantiles of the chosen (default: every sampled) parameters.

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        The scenario.
    metric : Metric
        The metric (the parameter a break-even metric solves for is not a dimension).
    params : Sequence[str] or None
        Dimensions (default: every sampled parameter).

    Returns
    -------
    function : QuantileMetric
        ``function(u)`` [unit of the metric] for quantiles ``u`` [-] (rows x dimensions).
    names : list[str]
        The parameters, one per column of ``u``.
    """
    specs = ([scenario.params[name] for name in params] if params is not None
             else [p for p in scenario.params.values_list() if is_sampled(p) and p.name != metric.param])
    if not specs:
        raise InputError.one("params", [] if params is None else list(params),
                             "needs at least one sampled parameter (a range and a distribution other than fixed)")
    check_drawable(specs)
    return QuantileMetric(scenario, metric, tuple(specs)), [p.name for p in specs]


# --- Sobol -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SobolSums:
    """Running sums over base rows: ``n`` rows; moments of all outputs and of A ∪ B; per-parameter power sums.

    ``d`` = Σ d_i, ``x`` = Σ f(B) d_i, ``xx`` = Σ (f(B) d_i)², ``dd`` = Σ d_i², ``xd`` = Σ f(B) d_i², ``d4`` = Σ d_i⁴.
    """

    n: int
    outputs: Moments
    ab: Moments
    d: np.ndarray
    x: np.ndarray
    xx: np.ndarray
    dd: np.ndarray
    xd: np.ndarray
    d4: np.ndarray

    @classmethod
    def of(cls, f_a: np.ndarray, f_b: np.ndarray, f_ab: np.ndarray) -> SobolSums:
        """Sums of one chunk: ``f_a``, ``f_b`` of shape (rows,), ``f_ab`` of shape (params, rows)."""
        d = f_ab - f_a
        x = f_b * d
        return cls(len(f_a), Moments.of(np.concatenate([f_a, f_b, f_ab.reshape(-1)])), Moments.of(np.concatenate([f_a, f_b])),
                   d.sum(axis=1), x.sum(axis=1), (x * x).sum(axis=1), (d * d).sum(axis=1), (x * d).sum(axis=1),
                   (d**4).sum(axis=1))

    def merge(self, other: SobolSums) -> SobolSums:
        return SobolSums(self.n + other.n, self.outputs.merge(other.outputs), self.ab.merge(other.ab),
                         *(getattr(self, k) + getattr(other, k) for k in ("d", "x", "xx", "dd", "xd", "d4")))

    def indices(self, names: Sequence[str]) -> pd.DataFrame:
        """S1, ST and their 95 % half-widths (module docstring); zeros when the output is constant."""
        n, m = self.n, self.outputs.mean
        v = self.ab.m2 / self.ab.count
        s_mean = (self.x - m * self.d) / n
        s_var = (self.xx - 2 * m * self.xd + m * m * self.dd) / n - s_mean**2
        t_mean = 0.5 * self.dd / n
        t_var = 0.25 * self.d4 / n - t_mean**2
        if not v > np.finfo(float).eps:
            zero = np.zeros(len(names))
            return pd.DataFrame({"param": list(names), "S1": zero, "S1_conf": zero, "ST": zero, "ST_conf": zero})
        half = Z975 / np.sqrt(n) / v
        return pd.DataFrame({"param": list(names), "S1": s_mean / v, "S1_conf": half * np.sqrt(np.maximum(s_var, 0)),
                             "ST": t_mean / v, "ST_conf": half * np.sqrt(np.maximum(t_var, 0))})


@dataclass(frozen=True)
class UnitJob:
    """What every chunk of a Sobol or Morris analysis needs: the function, its dimension, the seed and, for Morris, the levels."""

    function: UnitFunction
    dims: int
    seed: int
    levels: int = 0


def design_rows(dims: int, seed: int, start: int, stop: int) -> np.ndarray:
    """Rows ``[start, stop)`` of the scrambled Sobol' base sequence of dimension ``2 dims`` (Saltelli's design).

    Parameters
    ----------
    dims : int [-]
        Dimensions D (the sequence has 2D columns: A, then B).
    seed : int [-]
        Scrambling seed.
    start, stop : int [-]
        Half-open row range (``fast_forward`` to ``start``).

    Returns
    -------
    numpy.ndarray [-]
        Quantiles in [0, 1), shape ``(stop - start, 2 dims)``.

    References
    ----------
    [saltelli-2010] the A, B, A_B design.
    """
    engine = qmc.Sobol(d=2 * dims, scramble=True, seed=seed)
    if start:
        engine.fast_forward(start)
    return engine.random(stop - start)


def sobol_chunk(job: UnitJob, bounds: tuple[int, int]) -> tuple[SobolSums, ...]:
    """Evaluate A, B and every AB_i of base rows ``bounds`` in one call of the function; return their sums, one per
    output of the function.

    Parameters
    ----------
    job : UnitJob
        The function, its dimension and the seed.
    bounds : tuple[int, int] [-]
        Half-open range of base rows.

    Returns
    -------
    tuple[SobolSums, ...]
        Running sums of the chunk (``(D + 2)`` evaluations per base row), per output.
    """
    base = design_rows(job.dims, job.seed, *bounds)
    a, b = base[:, : job.dims], base[:, job.dims :]
    rows = len(base)
    ab = np.repeat(a[None, :, :], job.dims, axis=0)
    for i in range(job.dims):
        ab[i, :, i] = b[:, i]
    y = output_columns(job.function(np.concatenate([a, b, ab.reshape(-1, job.dims)])), (job.dims + 2) * rows)
    return tuple(SobolSums.of(f[:rows], f[rows : 2 * rows], f[2 * rows :].reshape(job.dims, rows)) for f in y.T)


def rows_per_chunk(n: int, dims: int, chunk_size: int = CHUNK_SIZE) -> int:
    """Base rows per chunk: the largest power of two with ``rows (dims + 2) <= chunk_size``, at most ``n``.

    Parameters
    ----------
    n : int [-]
        Base rows of the analysis.
    dims : int [-]
        Dimensions.
    chunk_size : int [evaluations]
        Evaluations per call of the function.

    Returns
    -------
    int [-]
        Base rows per chunk (at least 1).
    """
    rows = 1 << max(0, (chunk_size // (dims + 2)).bit_length() - 1)
    return max(1, min(rows, n))


def check_sobol_n(n: int) -> int:
    """Refuse a number of Sobol base rows the estimator cannot use: a power of 2 of at least :data:`MIN_SOBOL_N`.

    Parameters
    ----------
    n : int [-]
        Base rows asked for.

    Returns
    -------
    int [-]
        ``n``; an :class:`~tco.foundation.errors.InputError` names ``n`` otherwise.
    """
    if isinstance(n, bool) or not isinstance(n, (int, float, np.integer)) or int(n) != n or n < 1 or int(n) & (int(n) - 1):
        raise InputError.one("n", n, "must be a power of 2 (the Sobol' sequence's balance), "
                                     f"e.g. {1 << int(max(n, 1) if isinstance(n, (int, float)) else 1).bit_length()}")
    if n < MIN_SOBOL_N:
        raise InputError.one("n", n, f"must be at least {MIN_SOBOL_N} (SALib's Saltelli sampler draws at least "
                                     f"{MIN_SOBOL_N} points; fewer base rows give indices outside [0, 1] with intervals "
                                     "that do not show it), e.g. 1024")
    return int(n)


def unconverged_indices(frame: pd.DataFrame) -> list[dict]:
    """The Sobol indices that lie outside [0, 1] by more than their 95 % half-width: shares of variance cannot, so
    the estimate has not converged (more base rows are needed) and the index is no finding.

    Parameters
    ----------
    frame : pandas.DataFrame
        ``param``, ``S1``, ``S1_conf``, ``ST``, ``ST_conf`` [-] (:func:`sobol_analysis`).

    Returns
    -------
    list[dict]
        ``{param, index ("S1" or "ST"), value [-], conf [-]}`` per such index, in the frame's order.
    """
    out = []
    for row in frame.to_dict(orient="records"):
        for index in ("S1", "ST"):
            value, conf = float(row[index]), float(row[f"{index}_conf"])
            if value < -conf or value > 1.0 + conf:
                out.append({"param": row["param"], "index": index, "value": value, "conf": conf})
    return out


def sobol_sums(function: UnitFunction, names: Sequence[str], n: int, seed: int = 0, *, chunk_size: int = CHUNK_SIZE,
               runner: ChunkRunner | None = None, progress: Progress = None,
               cancel: Cancel = None) -> tuple[SobolSums, ...]:
    """The Sobol sums of every output of ``function(u)`` over ``n`` base rows (:func:`sobol_analysis`, which takes the
    first output's indices).

    Parameters
    ----------
    function : Callable[[numpy.ndarray], numpy.ndarray] [unit of each output]
        Vectorized over rows of quantiles (rows x D): one output per row, or ``(rows, outputs)``.
    names : Sequence[str]
        Dimension names.
    n, seed : int [-]
        Base rows (a power of two) and the scrambling seed.
    chunk_size, runner, progress, cancel : int [evaluations], ChunkRunner, Progress, Cancel, optional
        As in :func:`sobol_analysis`.

    Returns
    -------
    tuple[SobolSums, ...]
        One per output: ``.indices(names)`` gives its indices, ``.outputs`` its moments over every evaluation.
    """
    check_sobol_n(n)
    n, dims = int(n), len(names)
    step = rows_per_chunk(n, dims, chunk_size)
    tasks = [(start, min(start + step, n)) for start in range(0, n, step)]
    return (runner or ChunkRunner()).fold(sobol_chunk, UnitJob(function, dims, int(seed)), tasks,
                                          lambda acc, part: part if acc is None else tuple(
                                              a.merge(p) for a, p in zip(acc, part, strict=True)), None,
                                          "sobol", [(stop - start) * (dims + 2) for start, stop in tasks], progress, cancel)


def sobol_analysis(function: UnitFunction, names: Sequence[str], n: int, seed: int = 0, *, chunk_size: int = CHUNK_SIZE,
                   runner: ChunkRunner | None = None, progress: Progress = None, cancel: Cancel = None) -> pd.DataFrame:
    """S1 and ST of ``function(u)`` (its first output) over the unit hypercube from ``n`` base rows
    (``n (D + 2)`` evaluations).

    ``n`` must be a power of two (the Sobol' sequence's balance); chunks then hold equal
    powers of two of base rows. With ``d_ij = f(AB_ij) - f(A_j)``, ``m`` the mean and ``V`` the variance over
    A and B: ``S_i = mean_j[(f(B_j) - m) d_ij] / V`` (Saltelli 2010) and ``ST_i = mean_j[d_ij^2 / 2] / V``
    (Jansen 1999); 95 % half-widths ``1.96 sd(term) / sqrt(n) / V``.

    Parameters
    ----------
    function : Callable[[numpy.ndarray], numpy.ndarray] [unit of the output]
        Vectorized over rows of quantiles (rows x D): one output per row, or ``(rows, outputs)``.
    names : Sequence[str]
        Dimension names.
    n : int [-]
        Base rows, a power of two.
    seed : int [-]
        Scrambling seed.
    chunk_size, runner, progress, cancel : int [evaluations], ChunkRunner, Progress, Cancel, optional
        Evaluations per call of ``function``, the runner of the Sobol chunks (default: here),
        their progress, and a check between chunks that stops the analysis.

    Returns
    -------
    pandas.DataFrame
        ``param``, ``S1``, ``S1_conf``, ``ST``, ``ST_conf`` [-] (shares of output variance).

    References
    ----------
    [saltelli-2010] the design and the first-order estimator.
    [jansen-1999] the total-order estimator.
    """
    return sobol_sums(function, names, n, seed, chunk_size=chunk_size, runner=runner, progress=progress,
                      cancel=cancel)[0].indices(names)


# --- Morris ------------------------------------------------------------------------------------------

def morris_delta(levels: int) -> float:
    """The Morris step ``Δ = p / (2 (p − 1))`` on a grid of ``p`` levels.

    Parameters
    ----------
    levels : int [-]
        Grid levels p (even).

    Returns
    -------
    float [quantile]
        The step.

    References
    ----------
    [morris-1991] the design.
    """
    return levels / (2.0 * (levels - 1))


def morris_trajectories(dims: int, levels: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` Morris trajectories (module docstring), shape ``(count, dims + 1, dims)``, in [0, 1].

    Parameters
    ----------
    dims : int [-]
        Dimensions D.
    levels : int [-]
        Grid levels p (even).
    count : int [-]
        Trajectories.
    rng : numpy.random.Generator
        Start points, directions and orders.

    Returns
    -------
    numpy.ndarray [quantile]
        Each trajectory's ``D + 1`` points; consecutive points differ in one dimension by ``±Δ``.

    References
    ----------
    [morris-1991] the trajectories.
    """
    delta = morris_delta(levels)
    start = rng.choice(np.linspace(0.0, 1.0 - delta, levels // 2), (count, dims))
    up = rng.random((count, dims)) < 0.5
    rank = np.argsort(np.argsort(rng.random((count, dims)), axis=1), axis=1)  # the step at which each dimension moves
    moved = rank[:, None, :] < np.arange(dims + 1)[None, :, None]
    high = np.where(moved, up[:, None, :], ~up[:, None, :])
    return start[:, None, :] + delta * high


def elementary_effects(u: np.ndarray, y: np.ndarray, dims: int, levels: int) -> np.ndarray:
    """Elementary effects of outputs ``y`` on trajectories ``u``.

    In each step exactly one dimension moves by ``±Δ``: its effect is the output change
    divided by ``Δ`` with that sign (from low to high).

    Parameters
    ----------
    u : numpy.ndarray [quantile]
        Trajectory points, rows x dims, ``dims + 1`` rows per trajectory.
    y : numpy.ndarray [unit of the output]
        The output at each row.
    dims : int [-]
        Dimensions.
    levels : int [-]
        Grid levels.

    Returns
    -------
    numpy.ndarray [unit of the output per quantile]
        Effects, shape ``(trajectories, dims)``.

    References
    ----------
    [morris-1991] elementary effects.
    """
    du = np.diff(u.reshape(-1, dims + 1, dims), axis=1)
    dy = np.diff(np.asarray(y, float).reshape(-1, dims + 1), axis=1)
    moved = np.argmax(du != 0, axis=2)
    sign = np.sign(np.take_along_axis(du, moved[..., None], axis=2)[..., 0])
    effects = np.empty_like(dy)
    np.put_along_axis(effects, moved, dy / (sign * morris_delta(levels)), axis=1)
    return effects


@dataclass(frozen=True)
class MorrisEffects:
    """Elementary effects of trajectories, per output of the function, and the outputs' moments over their points."""

    effects: np.ndarray  # (outputs, trajectories, dims) [unit of each output per quantile]
    outputs: tuple[Moments, ...]

    def merge(self, other: MorrisEffects) -> MorrisEffects:
        return MorrisEffects(np.concatenate([self.effects, other.effects], axis=1),
                             tuple(a.merge(b) for a, b in zip(self.outputs, other.outputs, strict=True)))


def morris_chunk(job: UnitJob, task: tuple[int, int]) -> MorrisEffects:
    """Elementary effects of chunk ``task = (index, trajectories)``, drawn with ``chunk_seed(seed, index)``.

    Parameters
    ----------
    job : UnitJob
        Function, dimension, seed and levels.
    task : tuple[int, int] [-]
        ``(chunk index, trajectories)``.

    Returns
    -------
    MorrisEffects
        Effects of shape ``(outputs, trajectories, dims)`` and the moments of each output over the points.
    """
    index, count = task
    u = morris_trajectories(job.dims, job.levels, count, np.random.default_rng(chunk_seed(job.seed, index)))
    u = u.reshape(-1, job.dims)
    y = output_columns(job.function(u), len(u))
    return MorrisEffects(np.stack([elementary_effects(u, f, job.dims, job.levels) for f in y.T]),
                         tuple(Moments.of(f) for f in y.T))


def morris_statistics(names: Sequence[str], effects: np.ndarray) -> pd.DataFrame:
    """mu, mu_star, its 95 % half-width and sigma per dimension from effects ``(trajectories, dims)``.

    Parameters
    ----------
    names : Sequence[str]
        Dimension names.
    effects : numpy.ndarray [unit of the output per quantile]
        Elementary effects, shape ``(trajectories, dims)``.

    Returns
    -------
    pandas.DataFrame
        ``param``, ``mu``, ``mu_star`` (mean of absolute effects), ``mu_star_conf``
        (``1.96 sd(|EE|) / sqrt(r)``) and ``sigma`` (ddof 1) [unit of the output per full range].

    References
    ----------
    [campolongo-2007] mu*.
    """
    r = len(effects)

    def sd(x):  # sample standard deviation over trajectories (NaN for one trajectory)
        return x.std(axis=0, ddof=1) if r > 1 else np.full(x.shape[1], np.nan)

    return pd.DataFrame({"param": list(names), "mu": effects.mean(axis=0), "mu_star": np.abs(effects).mean(axis=0),
                         "mu_star_conf": Z975 * sd(np.abs(effects)) / np.sqrt(r), "sigma": sd(effects)})


def morris_effects(function: UnitFunction, names: Sequence[str], trajectories: int, levels: int = 4, seed: int = 0, *,
                   chunk_size: int = CHUNK_SIZE, runner: ChunkRunner | None = None, progress: Progress = None,
                   cancel: Cancel = None) -> MorrisEffects:
    """The elementary effects of every output of ``function(u)`` (:func:`morris_analysis`, which takes the first
    output's statistics).

    Parameters
    ----------
    function : Callable[[numpy.ndarray], numpy.ndarray] [unit of each output]
        Vectorized over rows of trajectory points (rows x D): one output per row, or ``(rows, outputs)``.
    names : Sequence[str]
        The screened dimensions' names.
    trajectories, levels, seed : int [-]
        Trajectories r, grid levels p (even) and the seed.
    chunk_size, runner, progress, cancel : int [evaluations], ChunkRunner, Progress, Cancel, optional
        As in :func:`morris_analysis`.

    Returns
    -------
    MorrisEffects
        Effects of shape ``(outputs, trajectories, dims)`` [unit of each output per quantile] and the outputs'
        moments over every point.
    """
    if isinstance(trajectories, bool) or int(trajectories) != trajectories or trajectories < MIN_MORRIS_TRAJECTORIES:
        raise InputError.one("trajectories", trajectories, f"must be a whole number of at least {MIN_MORRIS_TRAJECTORIES} "
                                                           "(sigma and the interval of mu* are spreads of the elementary "
                                                           "effects: one trajectory gives NaN)")
    if isinstance(levels, bool) or int(levels) != levels or levels < 2 or levels % 2:
        raise InputError.one("levels", levels, "must be an even integer >= 2 (every level then equally likely; Morris 1991)")
    dims = len(names)
    step = max(1, chunk_size // (dims + 1))
    tasks = [(k, min(step, int(trajectories) - start)) for k, start in enumerate(range(0, int(trajectories), step))]
    return (runner or ChunkRunner()).fold(morris_chunk, UnitJob(function, dims, int(seed), int(levels)), tasks,
                                          lambda acc, part: part if acc is None else acc.merge(part), None, "morris",
                                          [count * (dims + 1) for _, count in tasks], progress, cancel)


def morris_analysis(function: UnitFunction, names: Sequence[str], trajectories: int, levels: int = 4, seed: int = 0, *,
                    chunk_size: int = CHUNK_SIZE, runner: ChunkRunner | None = None, progress: Progress = None,
                    cancel: Cancel = None) -> pd.DataFrame:
    """Morris screening of ``function(u)`` (its first output): ``trajectories (D + 1)`` evaluations, in chunks of
    whole trajectories.

    Chunk ``k`` draws its trajectories with ``chunk_seed(seed, k)``.

    Parameters
    ----------
    function : Callable[[numpy.ndarray], numpy.ndarray] [unit of the output]
        Vectorized over rows of trajectory points (rows x D).
    names : Sequence[str]
        The screened dimensions' names.
    trajectories : int [-]
        Trajectories r.
    levels : int [-]
        Grid levels p (even).
    seed : int [-]
        The seed.
    chunk_size, runner, progress, cancel : int [evaluations], ChunkRunner, Progress, Cancel, optional
        Morris chunks hold whole trajectories, at most ``chunk_size`` evaluations; they run on
        ``runner``, report ``progress`` and stop on ``cancel``.

    Returns
    -------
    pandas.DataFrame
        :func:`morris_statistics` over every trajectory.

    References
    ----------
    [morris-1991] the design.
    [campolongo-2007] mu*.
    """
    return morris_statistics(names, morris_effects(function, names, trajectories, levels, seed, chunk_size=chunk_size,
                                                   runner=runner, progress=progress, cancel=cancel).effects[0])


# --- on a scenario -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Sensitivity:
    """A global sensitivity analysis of a scenario metric, and how often the fleets it compares miss their targets.

    A ratio, NPV or LCOT is the cost of fleets sized to the targets; where one misses a latency target at a point of
    the design, the metric there prices a fleet that does not serve the workload, and its indices mix those points in
    (Saltelli's and Morris's estimators need every point: none is dropped). So the analysis also says which options
    the metric compares, the share of its model runs where one of them misses a target, and the same indices of that
    event (an indicator, 1 where one misses): which inputs decide whether the comparison holds at all.

    Attributes
    ----------
    indices : pandas.DataFrame
        The metric's indices (Sobol: ``param, S1, S1_conf, ST, ST_conf``; Morris: ``param, mu, mu_star,
        mu_star_conf, sigma``), most influential first.
    compares : tuple[str, ...]
        The options the metric compares (:func:`~tco.studies.metrics.judged_options`): the option and the baseline
        for a ratio or NPV (one pair, not the overall winner), the option for an LCOT, none for a break-even.
    share_missing_a_target : float [-]
        Share of the model runs where one of ``compares`` misses a latency target (NaN when it compares none).
    missing_a_target : pandas.DataFrame or None
        The indices of "one of them misses a target" (Morris: per full range, in probability), most influential
        first; None where the share is 0 or 1 (nothing to attribute) or NaN.
    """

    indices: pd.DataFrame
    compares: tuple[str, ...]
    share_missing_a_target: float
    missing_a_target: pd.DataFrame | None


def _sensitivity(frames: Sequence[pd.DataFrame], outputs: Sequence[Moments], compares: tuple[str, ...],
                 key: str) -> Sensitivity:
    """The :class:`Sensitivity` of per-output frames (the metric's, then the indicator's), sorted by ``key``."""
    def ranked(frame):
        return frame.sort_values(key, ascending=False, kind="stable").reset_index(drop=True)

    share = float(outputs[1].mean) if compares else math.nan
    attributed = bool(compares) and 0.0 < share < 1.0
    return Sensitivity(ranked(frames[0]), compares, share, ranked(frames[1]) if attributed else None)

def check_base_samples(scenario: Scenario, dims: int, n: int, chunk_size: int, runner: ChunkRunner) -> None:
    """Refuse a Sobol analysis (``n (dims + 2)`` evaluations) too long for ``runner`` (:mod:`tco.foundation.limits`).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its options count toward the work.
    dims : int [-]
        Dimensions.
    n : int [-]
        Base rows.
    chunk_size : int [evaluations]
        Evaluations per call.
    runner : ChunkRunner
        Where the chunks would run.
    """
    runner.check_run("n", n, "Sobol base samples", n * (dims + 2) * len(scenario.structure.options), chunk_size)


def check_morris_trajectories(scenario: Scenario, dims: int, trajectories: int, chunk_size: int, runner: ChunkRunner) -> None:
    """Refuse a Morris analysis whose ``trajectories x dims`` elementary effects do not fit in memory, or
    whose ``trajectories (dims + 1)`` evaluations take too long for ``runner`` (:mod:`tco.foundation.limits`).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its options count toward the work.
    dims : int [-]
        Dimensions screened (effects held: trajectories x dims).
    trajectories : int [-]
        Trajectories asked for.
    chunk_size : int [evaluations]
        Evaluations per call.
    runner : ChunkRunner
        Where the chunks would run.
    """
    limits.check_memory("trajectories", trajectories, "Morris trajectories",
                        trajectories * dims * limits.BYTES_PER_MORRIS_EFFECT)
    runner.check_run("trajectories", trajectories, "Morris trajectories",
                     trajectories * (dims + 1) * len(scenario.structure.options), chunk_size)


def sobol(scenario: Scenario, metric: Metric | str, n: int = 1024, seed: int = 0, params: Sequence[str] | None = None, *,
          chunk_size: int = CHUNK_SIZE, runner: ChunkRunner | None = None, progress: Progress = None,
          cancel: Cancel = None) -> Sensitivity:
    """Sobol first- and total-order indices of a scenario metric (:func:`sobol_analysis`), sorted by ST, descending,
    and of its fleets missing their targets (:class:`Sensitivity`).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its sampled parameters are the dimensions.
    metric : Metric or str
        The output whose variance is decomposed.
    n : int [-]
        Base rows, a power of two.
    seed : int [-]
        Scrambling seed.
    params : Sequence[str], optional
        Parameters whose indices are estimated (default: every sampled one).
    chunk_size, runner, progress, cancel : int [evaluations], ChunkRunner, Progress, Cancel, optional
        Chunking, processes, progress and cancellation, as in :func:`sobol_analysis`.

    Returns
    -------
    Sensitivity
        ``indices``: ``param``, ``S1``, ``S1_conf``, ``ST``, ``ST_conf`` [-]; the options compared and the share of
        the ``n (D + 2)`` model runs where one misses a target, with the same indices of that event.

    References
    ----------
    [saltelli-2010] first order.
    [jansen-1999] total order.
    """
    metric = metric if isinstance(metric, Metric) else parse_metric(scenario, metric)
    function, names = scenario_function(scenario, metric, params)
    runner = runner or ChunkRunner()
    check_base_samples(scenario, len(names), n, chunk_size, runner)
    sums = sobol_sums(function, names, n, seed, chunk_size=chunk_size, runner=runner, progress=progress, cancel=cancel)
    return _sensitivity([s.indices(names) for s in sums], [s.outputs for s in sums],
                        judged_options(scenario.structure, metric), "ST")


def morris(scenario: Scenario, metric: Metric | str, trajectories: int = 50, levels: int = 4, seed: int = 0,
           params: Sequence[str] | None = None, *, chunk_size: int = CHUNK_SIZE, runner: ChunkRunner | None = None,
           progress: Progress = None, cancel: Cancel = None) -> Sensitivity:
    """Morris screening of a scenario metric (:func:`morris_analysis`), sorted by mu_star, descending, and of its
    fleets missing their targets (:class:`Sensitivity`).

    Parameters
    ----------
    scenario : tco.inputs.scenario.Scenario
        Its sampled parameters are screened.
    metric : Metric or str
        The output screened.
    trajectories : int [-]
        Trajectories r.
    levels : int [-]
        Grid levels p (even).
    seed : int [-]
        Seeds the trajectories of chunk k with ``chunk_seed(seed, k)``.
    params : Sequence[str], optional
        Dimensions (default: every sampled parameter).
    chunk_size, runner, progress, cancel : int [evaluations], ChunkRunner, Progress, Cancel, optional
        As in :func:`morris_analysis`.

    Returns
    -------
    Sensitivity
        ``indices``: ``param``, ``mu``, ``mu_star``, ``mu_star_conf``, ``sigma`` [unit of the metric per full
        parameter range]; the options compared and the share of the ``trajectories (D + 1)`` model runs where one
        misses a target, with the same statistics of that event [probability per full range].

    References
    ----------
    [morris-1991] the design.
    [campolongo-2007] mu*.
    """
    metric = metric if isinstance(metric, Metric) else parse_metric(scenario, metric)
    function, names = scenario_function(scenario, metric, params)
    runner = runner or ChunkRunner()
    check_morris_trajectories(scenario, len(names), trajectories, chunk_size, runner)
    effects = morris_effects(function, names, trajectories, levels, seed, chunk_size=chunk_size, runner=runner,
                             progress=progress, cancel=cancel)
    return _sensitivity([morris_statistics(names, e) for e in effects.effects], effects.outputs,
                        judged_options(scenario.structure, metric), "mu_star")
