"""Where the chunks of a study run: in this process, or on a dask.distributed cluster.

:class:`ChunkRunner` is the one path every chunked analysis takes. With no workers and no
scheduler it calls the chunk function in a loop; with ``workers=N`` it starts a
``dask.distributed.LocalCluster`` of N single-threaded processes, and with
``scheduler=ADDRESS`` it connects a ``dask.distributed.Client`` to an existing cluster.
Either way the shared inputs are scattered to the workers once, the chunks are submitted
with ``Client.map``, and the results are folded **in chunk order** as they come back
(later chunks wait in a buffer), so the numbers do not depend on which worker ran what or
when. A failure, a lost worker or Ctrl-C raises :class:`StudyInterrupted`, which says how
many chunks completed. An analysis may also be cancelled between chunks (``cancel``,
:data:`tco.studies.chunks.Cancel`); its progress is reported after every chunk.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from tco.foundation import limits
from tco.foundation.errors import InputError
from tco.studies.chunks import Cancel, Progress, progress_bar

#: environment of LocalCluster workers. Dask's default sets MALLOC_TRIM_THRESHOLD_=65536, which
#: switches off glibc's dynamic mmap threshold: every chunk-sized numpy array is then mapped and
#: unmapped afresh, and a chunk evaluates ~2.3x slower than in this process (measured here).
WORKER_ENVIRON = {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}

#: seconds to wait for an existing scheduler before giving up
SCHEDULER_TIMEOUT_S = 20


#: the network schemes of a dask.distributed scheduler address (``inproc`` is this process only)
SCHEDULER_SCHEMES = ("tcp", "tls", "ucx", "ws", "wss")


def check_scheduler_address(address: str, field: str = "scheduler") -> str:
    """``address`` if it names a dask.distributed scheduler: ``[SCHEME://]HOST:PORT`` with a network scheme
    (:data:`SCHEDULER_SCHEMES`, default ``tcp``), a host and a port in 1-65535, and nothing else.

    Parameters
    ----------
    address : str
        What the user gave (``tcp://10.0.0.5:8786``, ``10.0.0.5:8786``).
    field : str
        The flag or field an error names.

    Returns
    -------
    str
        The address; an :class:`~tco.foundation.errors.InputError` names ``field`` otherwise
        (``file:///etc/passwd`` reached dask's own ValueError before).
    """
    rule = f"must be a scheduler address tcp://HOST:PORT (schemes: {', '.join(SCHEDULER_SCHEMES)})"
    text = str(address)
    try:
        parts = urlsplit(text if "://" in text else f"tcp://{text}")
        port = parts.port
    except ValueError:
        raise InputError.one(field, address, rule) from None
    if parts.scheme not in SCHEDULER_SCHEMES or not parts.hostname or port is None or not 0 < port < 65536 \
            or parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise InputError.one(field, address, rule)
    return text


class StudyCancelled(Exception):
    """The analysis's ``cancel()`` returned True (:data:`tco.studies.chunks.Cancel`)."""


class StudyInterrupted(RuntimeError):
    """A chunked analysis stopped before its last chunk: what completed, out of how many, and why."""

    def __init__(self, label: str, done: int, total: int, cause: BaseException):
        self.label, self.done, self.total, self.cause = label, done, total, cause
        self.completed_analyses: list[str] = []
        if isinstance(cause, KeyboardInterrupt):
            reason = "interrupted"
        elif isinstance(cause, StudyCancelled):
            reason = "cancelled"
        else:
            reason = f"{type(cause).__name__}: {cause}"
        super().__init__(f"{label}: stopped after {done} of {total} chunks completed ({reason})")


def chunk_seed(seed: int, index: int) -> np.random.SeedSequence:
    """The seed of chunk ``index``: child ``index`` of ``SeedSequence(seed).spawn(...)``.

    ``SeedSequence(seed, spawn_key=(index,))`` is what ``SeedSequence(seed).spawn(index + 1)[index]``
    returns (numpy's spawning appends the child's index to the parent's spawn key), built
    directly so that no process needs to spawn the other chunks' seeds.

    Parameters
    ----------
    seed : int [-]
        The study's seed.
    index : int [-]
        The chunk's index.

    Returns
    -------
    numpy.random.SeedSequence
        The chunk's seed: the same draws on any number of workers.
    """
    return np.random.SeedSequence(int(seed), spawn_key=(int(index),))


def _call(function: Callable, shared: Any, task: Any) -> Any:
    return function(shared, task)


class ChunkRunner:
    """Runs chunk functions in-process (default), on a local process cluster, or on a scheduler.

    Use as a context manager: the cluster (or the connection) lives for the whole study.
    ``progress`` is the default progress report of the analyses run on it.
    """

    def __init__(self, workers: int | None = None, scheduler: str | None = None, progress: Progress = None):
        if scheduler is not None:
            check_scheduler_address(scheduler)
        self.workers, self.scheduler, self.progress = workers, scheduler, progress
        self.client = None
        self._cluster = None

    @property
    def distributed(self) -> bool:
        return self.client is not None

    def __enter__(self) -> ChunkRunner:
        if self.scheduler or self.workers:
            import dask
            from dask.distributed import Client, LocalCluster

            if self.scheduler:
                self.client = Client(self.scheduler, timeout=SCHEDULER_TIMEOUT_S)
            else:
                with dask.config.set({"distributed.nanny.pre-spawn-environ": WORKER_ENVIRON}):
                    self._cluster = LocalCluster(n_workers=int(self.workers), threads_per_worker=1, processes=True,
                                                 dashboard_address=":0", silence_logs=logging.ERROR)
                self.client = Client(self._cluster)
        return self

    def __exit__(self, *exc) -> None:
        if self.client is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()
        self.client = self._cluster = None

    def check_run(self, path: str, requested: int, what: str, option_evaluations: float, chunk_size: int) -> None:
        """Refuse a run of ``option_evaluations`` (model evaluations x options), asked for as ``requested``
        ``what`` at ``path``, too long for this runner's processes, or chunks too large (:mod:`tco.foundation.limits`)."""
        limits.check_chunk_size(chunk_size)
        limits.check_evaluations(path, requested, what, option_evaluations, self.workers, self.scheduler)

    def analysis(self, label: str, chunks: int, size: int, progress: Progress = None, cancel: Cancel = None) -> Analysis:
        """One analysis of ``chunks`` chunks holding ``size`` evaluations in all, folded in one or more passes.

        ``progress`` (default: the runner's) reports evaluations done out of ``size``
        across every pass; ``cancel`` is asked before each chunk.
        """
        return Analysis(self, label, chunks, size, self.progress if progress is None else progress, cancel)

    def fold(self, function: Callable[[Any, Any], Any], shared: Any, tasks: Sequence[Any],
             merge: Callable[[Any, Any], Any], initial: Any, label: str, sizes: Sequence[int] | None = None,
             progress: Progress = None, cancel: Cancel = None) -> Any:
        """An analysis of one pass: :meth:`Analysis.fold` of ``tasks`` (chunks count 1 each unless ``sizes`` says)."""
        sizes = list(sizes) if sizes is not None else [1] * len(tasks)
        with self.analysis(label, len(tasks), sum(sizes), progress, cancel) as run:
            return run.fold(function, shared, tasks, merge, initial, sizes)


class Analysis:
    """One analysis on a :class:`ChunkRunner`: one progress report and one count of chunks across its passes.

    A failure, a lost worker, Ctrl-C or ``cancel()`` returning True raises
    :class:`StudyInterrupted` with the chunks completed so far, out of every pass's chunks.
    """

    def __init__(self, runner: ChunkRunner, label: str, chunks: int, size: int, progress: Progress, cancel: Cancel):
        self.runner, self.label, self.chunks, self.size = runner, label, int(chunks), int(size)
        self.progress, self.cancel = progress, cancel
        self.done = 0
        self._bar = None

    def __enter__(self) -> Analysis:
        self._bar = progress_bar(self.size, self.label, self.progress)
        return self

    def __exit__(self, *exc) -> None:
        self._bar.close()

    def _check(self) -> None:
        if self.cancel is not None and self.cancel():
            raise StudyCancelled()

    def _completed(self, size: int) -> None:
        self.done += 1
        self._bar.update(size)

    def fold(self, function: Callable[[Any, Any], Any], shared: Any, tasks: Sequence[Any],
             merge: Callable[[Any, Any], Any], initial: Any, sizes: Sequence[int]) -> Any:
        """``merge(...merge(merge(initial, function(shared, tasks[0])), function(shared, tasks[1]))...)``.

        ``function`` must be importable by name (a module-level function) when the runner is
        distributed; ``shared`` is sent to every worker once; ``sizes`` (evaluations per
        task) drive the progress report.
        """
        try:
            if not self.runner.distributed:
                for task, size in zip(tasks, sizes, strict=True):
                    self._check()
                    initial = merge(initial, function(shared, task))
                    self._completed(size)
                return initial
            return self._fold_distributed(function, shared, tasks, merge, initial, sizes)
        except BaseException as exc:
            raise StudyInterrupted(self.label, self.done, self.chunks, exc) from exc

    def _fold_distributed(self, function, shared, tasks, merge, initial, sizes):
        from dask.distributed import as_completed

        self._check()
        client = self.runner.client
        remote = client.scatter(shared, broadcast=True, hash=False)
        futures = client.map(_call, [function] * len(tasks), [remote] * len(tasks), list(tasks), pure=False)
        order = {f.key: i for i, f in enumerate(futures)}
        waiting: dict[int, Any] = {}
        following = 0
        try:
            for future, result in as_completed(futures, with_results=True):
                i = order[future.key]
                waiting[i] = result
                self._completed(sizes[i])
                while following in waiting:
                    initial = merge(initial, waiting.pop(following))
                    following += 1
                if following < len(tasks):
                    self._check()
            return initial
        except BaseException:
            client.cancel(futures)
            raise
