"""Small measuring helpers shared by the benchmark scripts."""

from __future__ import annotations

import platform
import resource
import statistics
import time
from pathlib import Path


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


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; elsewhere what ``platform`` knows)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:  # no /proc (not Linux): fall back below
        pass
    return platform.processor() or "unknown CPU"


def interval_cell(result, key: str, scale: float = 1.0, digits: int = 3) -> str:
    """``value [low, high]`` of a result's metric and its 95 % interval (``—`` if absent)."""
    value = result.metrics.get(key)
    if value is None:
        return "—"
    interval = result.intervals.get(key)
    if interval is None or interval.low is None:
        return f"{scale * value:.{digits}f}"
    return f"{scale * value:.{digits}f} [{scale * interval.low:.{digits}f}, {scale * interval.high:.{digits}f}]"
