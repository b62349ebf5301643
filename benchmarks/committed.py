"""The committed compact results of the benchmark runs that the docs quote.

A benchmark that produces numbers for the docs writes, at the end of its run, one small gzipped
JSON file under ``benchmarks/results/`` (what its tables print plus what they are recomputed
from: metrics, intervals, ``n``, the run's configuration, library versions and time), and its
``table`` stage prints the docs' tables from that file when no run is at hand. The tests print
them again and check that the docs quote exactly those numbers, so a re-run that changes a
number cannot be committed without the docs.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import platform
import resource
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"
"""Where the compact results are committed."""

BASE_PACKAGES = ("chemassay", "rdkit", "numpy", "scipy")


def versions(*packages: str) -> dict[str, str]:
    """Python and the installed versions of ``BASE_PACKAGES`` and ``packages`` (``-`` when one
    is not installed), so a re-run that disagrees can be traced to a library."""
    found = {"python": platform.python_version()}
    for name in (*BASE_PACKAGES, *packages):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "-"
    return found


class Clock:
    """Wall and CPU seconds since it was made (CPU: this process and its finished children, so
    ``--jobs`` workers are counted)."""

    def __init__(self) -> None:
        self.wall = time.perf_counter()
        self.cpu = self._cpu()

    @staticmethod
    def _cpu() -> float:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + children.ru_utime + children.ru_stime

    def elapsed(self) -> dict[str, float]:
        """``{"wall_s", "cpu_s", "peak_rss_mb", "load_average"}`` of the run so far."""
        return {"wall_s": round(time.perf_counter() - self.wall, 1), "cpu_s": round(self._cpu() - self.cpu, 1),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                "load_average": round(os.getloadavg()[0], 2)}


def plain(value: Any) -> Any:
    """``value`` with every NaN or infinite float as ``None`` (strict JSON), recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def command_line(argv: list[str]) -> str:
    """The command that ran, as the docs write it: ``python benchmarks/SCRIPT ARGS``, with an
    absolute path argument (a folder of this machine's) written as ``DIR``."""
    words = [f"benchmarks/{Path(argv[0]).name}"] + ["DIR" if Path(word).is_absolute() else word for word in argv[1:]]
    return "python " + " ".join(words)


def write_summary(name: str, data: dict[str, Any], *, clock: Clock | None = None, packages: tuple[str, ...] = (),
                  command: str | None = None, folder: Path = RESULTS) -> Path:
    """Write ``data`` with the versions, the command and the elapsed time to
    ``folder/NAME.json.gz`` (sorted keys, no timestamp in the gzip header: the same numbers
    give the same bytes apart from the recorded times)."""
    record = {**plain(data), "versions": versions(*packages), "command": command or command_line(sys.argv)}
    if clock is not None:
        record["elapsed"] = clock.elapsed()
    path = folder / f"{name}.json.gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, sort_keys=True, indent=None, separators=(",", ":"), allow_nan=False)
    path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    print(f"wrote {path} ({path.stat().st_size / 1024:.1f} KiB)", file=sys.stderr)
    return path


def read_summary(name: str, folder: Path = RESULTS) -> dict[str, Any]:
    """The committed ``folder/NAME.json.gz``."""
    path = folder / f"{name}.json.gz"
    if not path.is_file():
        raise SystemExit(f"{path}: no committed result; run the benchmark to make it")
    return json.loads(gzip.decompress(path.read_bytes()))


def minus(text: str) -> str:
    """``text`` with ASCII hyphen-minus signs as the docs' typographic minus (−)."""
    return text.replace("-", "\u2212")
