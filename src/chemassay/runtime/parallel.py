"""``parallel_map``: ordered map over processes (or Dask) with per-item error capture.

An item whose function raises does not crash the run: its slot in the result holds a
:class:`Failure` recording the exception type and message, so callers can count and report
bad rows instead of losing them.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from chemassay.errors import require
from chemassay.runtime.progress import progress_task

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Failure:
    """A captured per-item failure: index of the item, exception type and message."""

    index: int
    error_type: str
    message: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.error_type}: {self.message}"


def _call_chunk(fn: Callable[[Any], Any], start: int, chunk: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for offset, item in enumerate(chunk):
        try:
            out.append(fn(item))
        except Exception as exc:  # captured per item by design
            out.append(
                Failure(start + offset, type(exc).__name__, str(exc), traceback.format_exc(limit=3))
            )
    return out


def effective_jobs(n_jobs: int | None) -> int:
    """Resolve ``n_jobs``: ``None``/``0`` → 1, negative → all cores (``-1``) and so on."""
    cores = os.cpu_count() or 1
    if not n_jobs:
        return 1
    if n_jobs < 0:
        return max(1, cores + 1 + n_jobs)
    return n_jobs


def parallel_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    *,
    n_jobs: int | None = 1,
    chunk_size: int | None = None,
    description: str = "working",
    scheduler: str | None = None,
    show_progress: bool | None = None,
) -> list[R | Failure]:
    """Apply ``fn`` to every item, in order, returning results or :class:`Failure` records.

    ``n_jobs=1`` runs in this process (no pickling); ``n_jobs>1`` (or ``-1`` for all cores)
    uses a process pool, sending ``chunk_size`` items per task; ``scheduler`` (a Dask
    address such as ``tcp://host:8786``, or ``"dask-local"`` for an in-process cluster)
    runs the chunks on Dask instead (needs the ``dask`` extra). ``fn`` must be picklable
    (a module-level function or ``functools.partial``) for the parallel backends.
    """
    data = list(items)
    jobs = effective_jobs(n_jobs)
    if chunk_size is None:
        chunk_size = max(1, min(1000, len(data) // (jobs * 8) or 1))
    chunks = [(start, data[start:start + chunk_size]) for start in range(0, len(data), chunk_size)]
    disable = None if show_progress is None else not show_progress
    results: list[Any] = [None] * len(data)
    with progress_task(description, len(data), disable=disable) as advance:
        if scheduler:
            _run_dask(fn, chunks, scheduler, results, advance)
        elif jobs == 1 or len(chunks) <= 1:
            for start, chunk in chunks:
                results[start:start + len(chunk)] = _call_chunk(fn, start, chunk)
                advance(len(chunk))
        else:
            with ProcessPoolExecutor(max_workers=jobs, mp_context=_pool_context()) as pool:
                futures = [(start, len(chunk), pool.submit(_call_chunk, fn, start, chunk)) for start, chunk in chunks]
                for start, size, future in futures:
                    results[start:start + size] = future.result()
                    advance(size)
    return results


def _pool_context():
    """Fork when it is safe, else a fork server.

    A child forked after PyTorch has started its OpenMP thread pool can hang as soon as it
    uses torch (the pool's threads do not exist in the child), so once torch is imported
    workers come from a fork server instead: a clean process that imports what each task
    needs.
    """
    if "torch" in sys.modules and "forkserver" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("forkserver")
    return None


def _run_dask(fn, chunks, scheduler: str, results: list, advance) -> None:
    distributed = require("distributed", "dask", "the Dask scheduler")
    if scheduler == "dask-local":
        client = distributed.Client(processes=False, dashboard_address=None)
    else:
        client = distributed.Client(scheduler)
    try:
        futures = [client.submit(_call_chunk, fn, start, chunk, pure=False) for start, chunk in chunks]
        for (start, chunk), future in zip(chunks, futures, strict=True):
            results[start:start + len(chunk)] = future.result()
            advance(len(chunk))
    finally:
        client.close()
