"""Kernel threads: how many threads the numerical libraries (torch, BLAS) use, and a thread
map that parallelizes independent blocks of work with one kernel thread each.

Why: on a machine where another process keeps a core busy, an OpenMP-parallel kernel (a
torch matrix product on two threads) waits at every barrier for its descheduled thread,
spinning, and a stage measured 2-10x slower, not 2x. Independent blocks of work run on
``n`` Python threads, each calling single-threaded kernels (torch and BLAS release the GIL),
never wait for each other: a busy core slows its thread alone, so the run degrades in
proportion to the load. ``CHEMASSAY_THREADS`` sets the default thread count (else
``torch.get_num_threads()``, else the CPU count).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

_lock = threading.Lock()
_depth = 0
_saved: tuple[int | None, object] | None = None


def default_threads() -> int:
    """Threads for a computation: ``$CHEMASSAY_THREADS``, else torch's count, else the CPUs."""
    env = os.environ.get("CHEMASSAY_THREADS")
    if env and env.strip().isdigit() and int(env) > 0:
        return int(env)
    try:
        import torch

        return max(1, torch.get_num_threads())
    except ImportError:  # pragma: no cover - torch is an optional extra
        return max(1, os.cpu_count() or 1)


@contextmanager
def single_threaded_kernels() -> Iterator[None]:
    """Inside: torch and BLAS kernels run on the calling thread only (re-entrant, restored after)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            torch_threads = None
            try:
                import torch

                torch_threads = torch.get_num_threads()
                torch.set_num_threads(1)
            except ImportError:  # pragma: no cover
                pass
            limits = None
            try:
                from threadpoolctl import threadpool_limits

                limits = threadpool_limits(1)
            except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
                pass
            _saved = (torch_threads, limits)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _saved is not None:
                torch_threads, limits = _saved
                if torch_threads is not None:
                    import torch

                    torch.set_num_threads(torch_threads)
                if limits is not None:
                    limits.restore_original_limits()
                _saved = None


def thread_map(fn: Callable[[T], R], items: Iterable[T], *, n_threads: int | None = None) -> list[R]:
    """``[fn(x) for x in items]`` on ``n_threads`` threads with single-threaded kernels, in order.

    ``fn`` should spend its time in code that releases the GIL (torch, NumPy, BLAS). The
    first exception raised by ``fn`` is re-raised.
    """
    data = list(items)
    n = default_threads() if n_threads is None else max(1, n_threads)
    with single_threaded_kernels():
        if n == 1 or len(data) <= 1:
            return [fn(item) for item in data]
        with ThreadPoolExecutor(max_workers=min(n, len(data)), thread_name_prefix="chemassay") as pool:
            return list(pool.map(fn, data))
