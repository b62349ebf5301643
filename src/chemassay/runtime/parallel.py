"""``parallel_map``: ordered map over processes (or Dask) with per-item error capture.

An item whose function raises does not crash the run: its slot in the result holds a
:class:`Failure` recording the exception type and message, so callers can count and report
bad rows instead of losing them. With a process pool, an item that kills its worker (a
segmentation fault inside RDKit) or runs longer than ``item_timeout`` seconds is isolated:
its chunk is re-run one item at a time in a fresh worker, the culprit becomes a
:class:`Failure` (``WorkerCrashed`` / ``TimedOut``) and every other item is still computed.

Ctrl-C stops a pool at once: workers ignore SIGINT (only the main process handles it), and
on any interruption the main process cancels the queued tasks and terminates the workers
instead of waiting for them, then re-raises.
"""

from __future__ import annotations

import ast
import multiprocessing
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from chemassay.contract.errors import require
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
    item_timeout: float | None = None,
) -> list[R | Failure]:
    """Apply ``fn`` to every item, in order, returning results or :class:`Failure` records.

    ``n_jobs=1`` runs in this process (no pickling); ``n_jobs>1`` (or ``-1`` for all cores)
    uses a process pool, sending ``chunk_size`` items per task; ``scheduler`` (a Dask
    address such as ``tcp://host:8786``, or ``"dask-local"`` for an in-process cluster)
    runs the chunks on Dask instead (needs the ``dask`` extra). ``fn`` must be picklable
    (a module-level function or ``functools.partial``) for the parallel backends.
    ``item_timeout`` (process pool only) bounds the seconds one item may take.
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
            _run_pool(fn, chunks, jobs, results, advance, item_timeout)
    return results


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the main process's to handle (it terminates the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _new_pool(jobs: int) -> ProcessPoolExecutor:
    context = _pool_context()
    method = context.get_start_method() if context is not None else multiprocessing.get_start_method()
    if method in ("spawn", "forkserver"):
        check_main_guard()
    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_ignore_sigint)


def _guarded_lines(path: str) -> list[tuple[int, int]]:
    """Line spans of the ``if __name__ == "__main__":`` blocks at the top level of a script."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return []
    spans = []
    for node in tree.body:
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and "__main__" in ast.unparse(node.test):
            spans.append((node.lineno, node.end_lineno or node.lineno))
    return spans


def check_main_guard() -> None:
    """Refuse at once to start worker processes from the top level of a script that lacks
    ``if __name__ == "__main__":``: workers started by spawn or a fork server import the script
    again, which would start workers again (Python's freeze_support errors, then every worker
    dying). The message names the script, the line, and the fix."""
    main = sys.modules.get("__main__")
    main_file = getattr(main, "__file__", None)
    if main is None or not main_file or not str(main_file).endswith(".py"):
        return
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals is main.__dict__ and frame.f_code.co_name == "<module>":
            line = frame.f_lineno
            if not any(low <= line <= high for low, high in _guarded_lines(main_file)):
                from chemassay.contract.errors import UserInputError

                raise UserInputError(
                    f"{main_file}, line {line}: worker processes (n_jobs > 1) started from the top level of a script "
                    "re-run that script when they start; put the call under 'if __name__ == \"__main__\":' "
                    "(or use n_jobs=1)")
            return
        frame = frame.f_back


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what is queued and terminate the workers now (never wait for running tasks)."""
    processes = list(getattr(pool, "_processes", {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=2)
        if process.is_alive():
            process.kill()


def _run_pool(fn, chunks, jobs: int, results: list, advance, item_timeout: float | None) -> None:
    pool = _new_pool(jobs)
    broken: list[tuple[int, list]] = []
    try:
        futures = [(start, chunk, pool.submit(_call_chunk, fn, start, chunk)) for start, chunk in chunks]
        for start, chunk, future in futures:
            limit = None if item_timeout is None else item_timeout * len(chunk) + 2.0
            try:
                results[start:start + len(chunk)] = future.result(timeout=limit)
                advance(len(chunk))
            except (BrokenProcessPool, FutureTimeout):
                broken.append((start, chunk))
    except BaseException:
        _stop_pool(pool)
        raise
    if broken:
        _stop_pool(pool)
        for start, chunk in broken:
            results[start:start + len(chunk)] = _isolate(fn, start, chunk, item_timeout)
            advance(len(chunk))
    else:
        pool.shutdown(wait=True)


def _isolate(fn, start: int, chunk: list, item_timeout: float | None) -> list:
    """Run a chunk one item at a time in a one-worker pool, restarted after each crash or time-out."""
    out: list[Any] = []
    pool = _new_pool(1)
    succeeded = crashed = 0
    try:
        for offset, item in enumerate(chunk):
            index = start + offset
            future = pool.submit(_call_chunk, fn, index, [item])
            try:
                out.extend(future.result(timeout=item_timeout))
                succeeded += 1
                continue
            except BrokenProcessPool:
                crashed += 1
                if crashed >= 3 and succeeded == 0:
                    raise RuntimeError(
                        "worker processes die before computing anything (the function cannot be imported in a "
                        "worker, or the machine is out of memory); run with n_jobs=1 to see the error"
                    ) from None
                failure = Failure(index, "WorkerCrashed", "the worker process died on this item (e.g. a crash inside RDKit)")
            except FutureTimeout:
                failure = Failure(index, "TimedOut", f"took longer than {item_timeout:g} s")
            out.append(failure)
            _stop_pool(pool)
            pool = _new_pool(1)
    except BaseException:
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)
    return out


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


@contextmanager
def dask_client(scheduler: str) -> Iterator[Any]:
    """A Dask client for ``scheduler`` (an address, or ``"dask-local"`` for an in-process
    cluster), closed on exit. For callers that scatter large inputs once and submit tasks."""
    distributed = require("distributed", "dask", "the Dask scheduler")
    if scheduler == "dask-local":
        client = distributed.Client(processes=False, dashboard_address=None)
    else:
        client = distributed.Client(scheduler)
    try:
        yield client
    finally:
        client.close()


def _run_dask(fn, chunks, scheduler: str, results: list, advance) -> None:
    with dask_client(scheduler) as client:
        futures = [client.submit(_call_chunk, fn, start, chunk, pure=False) for start, chunk in chunks]
        for (start, chunk), future in zip(chunks, futures, strict=True):
            results[start:start + len(chunk)] = future.result()
            advance(len(chunk))
