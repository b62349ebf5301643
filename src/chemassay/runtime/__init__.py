"""Runtime services: parallel map, progress bars, atomic file writes, caching, settings."""

from chemassay.runtime.files import (
    atomic_write_bytes,
    atomic_write_text,
    atomic_writer,
    sha256_file,
)
from chemassay.runtime.parallel import Failure, parallel_map
from chemassay.runtime.progress import progress, settings

__all__ = [
    "Failure",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_writer",
    "parallel_map",
    "progress",
    "settings",
    "sha256_file",
]
