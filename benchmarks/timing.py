"""Small measuring helpers shared by the benchmark scripts."""

from __future__ import annotations

import resource
import statistics
import time


def timed(fn, repeats: int = 1):
    """Run ``fn`` ``repeats`` times; return ``(median seconds, value of the last run)``."""
    times = []
    value = None
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
