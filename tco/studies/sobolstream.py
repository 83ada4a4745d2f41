"""Sobol indices at scale: the Saltelli design drawn and reduced chunk by chunk.

The design is SALib's (``SALib.sample.sobol.sample`` without second order): a scrambled
Sobol' sequence of dimension 2D seeded by the study seed; row ``j`` gives matrices ``A_j``
(first D columns) and ``B_j`` (last D), and ``AB_ij`` is ``A_j`` with column ``i`` from
``B_j``. A chunk takes rows ``[start, stop)`` of the sequence (``fast_forward``), evaluates
the metric at ``A``, ``B`` and every ``AB_i`` ((D + 2) rows per base row) and returns only
sums, so memory is bounded by the chunk whatever ``n``.

With ``d_ij = f(AB_ij) − f(A_j)``, ``m`` the mean of every evaluation and ``V`` the
population variance of ``f`` over ``A ∪ B``, the estimators are those SALib computes on
outputs normalized by their mean and standard deviation:

- first order (Saltelli et al. 2010, Comput. Phys. Commun. 181, 259-270, table 2 (b)):
  ``S_i = mean_j[(f(B_j) − m) d_ij] / V``
- total order (Jansen 1999, ibid. table 2 (f)): ``ST_i = mean_j[d_ij² / 2] / V``

Their 95 % confidence half-widths here are ``1.96 · sd(term) / sqrt(n) / V`` (central
limit theorem on the per-row terms, ``V`` taken as known) instead of SALib's bootstrap,
which needs every output at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import qmc

from .. import limits
from ..scenario import Scenario
from .aggregates import Moments
from .chunks import CHUNK_SIZE
from .metrics import Metric, parse_metric
from .parallel import ChunkRunner
from .sensitivity import UnitFunction, scenario_function

#: two-sided 95 % normal quantile, scipy.stats.norm.ppf(0.975)
Z975 = 1.959963984540054


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
class SobolJob:
    function: UnitFunction
    dims: int
    seed: int


def design_rows(dims: int, seed: int, start: int, stop: int) -> np.ndarray:
    """Rows ``[start, stop)`` of the scrambled Sobol' base sequence of dimension ``2 dims`` (SALib's design)."""
    engine = qmc.Sobol(d=2 * dims, scramble=True, seed=seed)
    if start:
        engine.fast_forward(start)
    return engine.random(stop - start)


def sobol_chunk(job: SobolJob, bounds: tuple[int, int]) -> SobolSums:
    """Evaluate A, B and every AB_i of base rows ``bounds`` in one call of the function; return their sums."""
    base = design_rows(job.dims, job.seed, *bounds)
    a, b = base[:, : job.dims], base[:, job.dims :]
    rows = len(base)
    ab = np.repeat(a[None, :, :], job.dims, axis=0)
    for i in range(job.dims):
        ab[i, :, i] = b[:, i]
    y = np.asarray(job.function(np.concatenate([a, b, ab.reshape(-1, job.dims)])), float).reshape(-1)
    return SobolSums.of(y[:rows], y[rows : 2 * rows], y[2 * rows :].reshape(job.dims, rows))


def rows_per_chunk(n: int, dims: int, chunk_size: int = CHUNK_SIZE) -> int:
    """Base rows per chunk: the largest power of two with ``rows (dims + 2) <= chunk_size``, at most ``n``."""
    rows = 1 << max(0, (chunk_size // (dims + 2)).bit_length() - 1)
    return max(1, min(rows, n))


def sobol_indices(function: UnitFunction, names: Sequence[str], n: int, seed: int = 0, runner: ChunkRunner | None = None,
                  chunk_size: int = CHUNK_SIZE) -> pd.DataFrame:
    """S1 and ST of ``function(u)`` over the unit hypercube from ``n`` base rows (``n (D + 2)`` evaluations).

    ``n`` must be a power of two (the Sobol' sequence's balance); chunks then hold equal
    powers of two of base rows.
    """
    dims = len(names)
    step = rows_per_chunk(n, dims, chunk_size)
    tasks = [(start, min(start + step, n)) for start in range(0, n, step)]
    runner = runner or ChunkRunner()
    first = sobol_chunk(SobolJob(function, dims, int(seed)), tasks[0])
    sums = runner.fold(sobol_chunk, SobolJob(function, dims, int(seed)), tasks[1:], lambda a, b: a.merge(b), first, "sobol",
                       [(stop - start) * (dims + 2) for start, stop in tasks[1:]])
    return sums.indices(names)


def check_base_samples(scenario: Scenario, dims: int, n: int, chunk_size: int, runner: ChunkRunner) -> None:
    """Refuse a streamed Sobol analysis (``n (dims + 2)`` evaluations) too long for ``runner`` (:mod:`tco.limits`)."""
    limits.check_chunk_size(chunk_size)
    limits.check_evaluations("n", n, "Sobol base samples", n * (dims + 2) * len(scenario.structure.options),
                             runner.workers, runner.scheduler)


def sobol_stream(scenario: Scenario, metric: Metric | str, n: int = 1024, seed: int = 0, params: Sequence[str] | None = None,
                 runner: ChunkRunner | None = None, chunk_size: int = CHUNK_SIZE) -> pd.DataFrame:
    """Sobol indices of a scenario metric in bounded memory, sorted by ST, descending."""
    metric = metric if isinstance(metric, Metric) else parse_metric(scenario, metric)
    function, names = scenario_function(scenario, metric, params)
    runner = runner or ChunkRunner()
    check_base_samples(scenario, len(names), n, chunk_size, runner)
    frame = sobol_indices(function, names, n, seed, runner, chunk_size)
    return frame.sort_values("ST", ascending=False, kind="stable").reset_index(drop=True)
