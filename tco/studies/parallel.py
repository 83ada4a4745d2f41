"""Where the chunks of a study run: in this process, or on a dask.distributed cluster.

:class:`ChunkRunner` is the one path every chunked analysis takes. With no workers and no
scheduler it calls the chunk function in a loop; with ``workers=N`` it starts a
``dask.distributed.LocalCluster`` of N single-threaded processes, and with
``scheduler=ADDRESS`` it connects a ``dask.distributed.Client`` to an existing cluster.
Either way the shared inputs are scattered to the workers once, the chunks are submitted
with ``Client.map``, and the results are folded **in chunk order** as they come back
(later chunks wait in a buffer), so the numbers do not depend on which worker ran what or
when. A failure, a lost worker or Ctrl-C raises :class:`StudyInterrupted`, which says how
many chunks completed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .chunks import Progress, progress_bar

#: environment of LocalCluster workers. Dask's default sets MALLOC_TRIM_THRESHOLD_=65536, which
#: switches off glibc's dynamic mmap threshold: every chunk-sized numpy array is then mapped and
#: unmapped afresh, and a chunk evaluates ~2.3x slower than in this process (measured here).
WORKER_ENVIRON = {"OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1}

#: seconds to wait for an existing scheduler before giving up
SCHEDULER_TIMEOUT_S = 20


class StudyInterrupted(RuntimeError):
    """A chunked analysis stopped before its last chunk: what completed, out of how many, and why."""

    def __init__(self, label: str, done: int, total: int, cause: BaseException):
        self.label, self.done, self.total, self.cause = label, done, total, cause
        self.completed_analyses: list[str] = []
        reason = "interrupted" if isinstance(cause, KeyboardInterrupt) else f"{type(cause).__name__}: {cause}"
        super().__init__(f"{label}: stopped after {done} of {total} chunks completed ({reason})")


def chunk_seed(seed: int, index: int) -> np.random.SeedSequence:
    """The seed of chunk ``index``: child ``index`` of ``SeedSequence(seed).spawn(...)``.

    ``SeedSequence(seed, spawn_key=(index,))`` is what ``SeedSequence(seed).spawn(index + 1)[index]``
    returns (numpy's spawning appends the child's index to the parent's spawn key), built
    directly so that no process needs to spawn the other chunks' seeds.
    """
    return np.random.SeedSequence(int(seed), spawn_key=(int(index),))


def _call(function: Callable, shared: Any, task: Any) -> Any:
    return function(shared, task)


class ChunkRunner:
    """Runs chunk functions in-process (default), on a local process cluster, or on a scheduler.

    Use as a context manager: the cluster (or the connection) lives for the whole study.
    """

    def __init__(self, workers: int | None = None, scheduler: str | None = None, progress: Progress = None):
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

    def fold(self, function: Callable[[Any, Any], Any], shared: Any, tasks: Sequence[Any],
             merge: Callable[[Any, Any], Any], initial: Any, label: str, sizes: Sequence[int] | None = None) -> Any:
        """``merge(...merge(merge(initial, function(shared, tasks[0])), function(shared, tasks[1]))...)``.

        ``function`` must be importable by name (a module-level function) when the runner is
        distributed; ``shared`` is sent to every worker once. ``sizes`` (e.g. samples per
        chunk) drive the progress bar; chunks count 1 each by default.
        """
        sizes = list(sizes) if sizes is not None else [1] * len(tasks)
        done = 0
        with progress_bar(sum(sizes), label, self.progress) as bar:
            try:
                if not self.distributed:
                    for task, size in zip(tasks, sizes, strict=True):
                        initial = merge(initial, function(shared, task))
                        done += 1
                        bar.update(size)
                    return initial
                return self._fold_distributed(function, shared, tasks, merge, initial, sizes, bar)
            except BaseException as exc:
                done = getattr(exc, "chunks_done", done)
                raise StudyInterrupted(label, done, len(tasks), exc) from exc

    def _fold_distributed(self, function, shared, tasks, merge, initial, sizes, bar):
        from dask.distributed import as_completed

        remote = self.client.scatter(shared, broadcast=True, hash=False)
        futures = self.client.map(_call, [function] * len(tasks), [remote] * len(tasks), list(tasks), pure=False)
        order = {f.key: i for i, f in enumerate(futures)}
        waiting: dict[int, Any] = {}
        following = 0
        try:
            for future, result in as_completed(futures, with_results=True):
                i = order[future.key]
                waiting[i] = result
                bar.update(sizes[i])
                while following in waiting:
                    initial = merge(initial, waiting.pop(following))
                    following += 1
            return initial
        except BaseException as exc:
            exc.chunks_done = following + len(waiting)
            self.client.cancel(futures)
            raise
