"""The one cache of chemassay, under ``$CHEMASSAY_HOME/cache`` (default ``~/.cache/chemassay``).

Every cache in the package goes through this module, so every entry has the same layout
and the same guarantees:

* an entry lives at ``cache/<namespace>/<key digest><suffix>`` next to
  ``<same>.meta.json``, which records **what it was computed from** (the key material:
  input checksums, settings, versions) and **a checksum of the entry itself** (sha256 and
  size);
* a read checks both: an entry whose payload does not match its checksum (truncated,
  corrupted, or replaced by a file holding valid but wrong values), whose key material
  differs, or that cannot be loaded, is reported in one line on stderr and rebuilt — never
  used;
* entries are written atomically (temporary file, then rename; the metadata last), so an
  interrupted build leaves nothing a later run would trust.

Small values that are looked up one at a time (model responses) go to a
:class:`KeyValueStore`: one SQLite file per namespace, each row with the sha256 of its value.

``CHEMASSAY_NO_CACHE=1`` turns every cache off (entries are neither read nor written).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from chemassay.runtime.files import atomic_write_text, sha256_file
from chemassay.runtime.progress import warn

T = TypeVar("T")
FORMAT = 1


def chemassay_home() -> Path:
    """The cache root: ``$CHEMASSAY_HOME`` or ``~/.cache/chemassay``."""
    return Path(os.environ.get("CHEMASSAY_HOME", Path.home() / ".cache" / "chemassay")).expanduser()


def cache_root() -> Path:
    """Where cache entries live: ``$CHEMASSAY_HOME/cache``."""
    return chemassay_home() / "cache"


def caching_enabled() -> bool:
    """False when ``CHEMASSAY_NO_CACHE`` is set to a true value."""
    return os.environ.get("CHEMASSAY_NO_CACHE", "").strip().lower() not in {"1", "true", "yes", "on"}


def cache_warning(message: str) -> None:
    """One warning line (the CLI shows it even with ``--quiet``: a cache problem changes run time)."""
    warn(message)


def key_digest(key: Any) -> str:
    """A 32-hex-digit digest of JSON-serializable key material (dict order ignored)."""
    text = json.dumps(key, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _normalized(key: Any) -> Any:
    return json.loads(json.dumps(key, sort_keys=True, default=str))


class CacheEntry:
    """One entry of a namespace: its payload path and its metadata."""

    def __init__(self, namespace: str, key: Any, suffix: str = "") -> None:
        if not namespace or any(part in {"", ".", ".."} for part in namespace.split("/")):
            raise ValueError(f"bad cache namespace {namespace!r}")
        self.namespace = namespace
        self.key = _normalized(key)
        self.digest = key_digest(self.key)
        self.path = cache_root() / namespace / f"{self.digest}{suffix}"
        self.meta_path = self.path.with_name(self.path.name + ".meta.json")

    def problem(self) -> str | None:
        """Why the entry cannot be used (``None``: present and intact)."""
        if not self.path.exists() and not self.meta_path.exists():
            return "absent"
        if not self.path.is_file():
            return "its data file is missing"
        if not self.meta_path.is_file():
            return "its metadata is missing (an interrupted write?)"
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return "its metadata is unreadable"
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            return "its metadata has an unknown format"
        if meta.get("key") != self.key:
            return "it was computed from other inputs"
        try:
            size = self.path.stat().st_size
        except OSError:
            return "its data file is unreadable"
        if size != meta.get("size"):
            return f"its size changed ({size} bytes, {meta.get('size')} recorded: truncated?)"
        try:
            actual = sha256_file(self.path)
        except OSError:
            return "its data file is unreadable"
        if actual != meta.get("sha256"):
            return "its checksum does not match (corrupted or modified)"
        return None

    def valid(self) -> bool:
        """Whether the entry is present and intact (see :meth:`problem`)."""
        return self.problem() is None

    def discard(self, reason: str | None = None) -> None:
        """Remove the entry (payload and metadata), saying why when ``reason`` is given."""
        if reason:
            cache_warning(f"cache entry {self.path} is not usable ({reason}); rebuilding it")
        for path in (self.meta_path, self.path):
            with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
                path.unlink()

    def commit(self, built: Path) -> Path:
        """Move a finished payload file into place and write its metadata (last)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.meta_path.unlink()
        os.replace(built, self.path)
        meta = {
            "format": FORMAT, "namespace": self.namespace, "key": self.key,
            "sha256": sha256_file(self.path), "size": self.path.stat().st_size,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        atomic_write_text(self.meta_path, json.dumps(meta, indent=1, sort_keys=True) + "\n")
        return self.path

    def temporary_path(self) -> Path:
        """A fresh path next to the entry to build the payload into (same filesystem)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return self.path.with_name(f".{self.path.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def cached_file(namespace: str, key: Any, build: Callable[[Path], None], *, suffix: str = "") -> Path:
    """Path of an intact cache entry for ``key``, building it with ``build(path)`` if needed.

    ``build`` writes the payload to the path it is given. With caching disabled the payload
    is built into a temporary location on every call.
    """
    entry = CacheEntry(namespace, key, suffix)
    if caching_enabled():
        problem = entry.problem()
        if problem is None:
            return entry.path
        if problem != "absent":
            entry.discard(problem)
    tmp = entry.temporary_path()
    try:
        build(tmp)
        if not caching_enabled():
            return tmp
        return entry.commit(tmp)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def cached(
    namespace: str,
    key: Any,
    build: Callable[[], T],
    *,
    save: Callable[[T, Path], None],
    load: Callable[[Path], T],
    suffix: str = "",
) -> T:
    """``build()``'s value, stored as a checked cache entry (``save``/``load`` convert it).

    An intact entry is loaded; one that fails its checks or fails to load is reported,
    removed and rebuilt. Saving is best effort: a read-only cache still returns the value.
    """
    entry = CacheEntry(namespace, key, suffix)
    if caching_enabled():
        problem = entry.problem()
        if problem is None:
            try:
                return load(entry.path)
            except Exception as exc:  # noqa: BLE001 - any unreadable entry is rebuilt, never used
                entry.discard(f"it cannot be loaded: {type(exc).__name__}: {str(exc)[:120]}")
        elif problem != "absent":
            entry.discard(problem)
    value = build()
    if caching_enabled():
        tmp = None
        try:
            tmp = entry.temporary_path()
            save(value, tmp)
            entry.commit(tmp)
        except OSError as exc:
            cache_warning(f"could not write cache entry {entry.path} ({exc.strerror or exc}); continuing without it")
            if tmp is not None:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
    return value


class KeyValueStore:
    """A small SQLite store of JSON values for one namespace (``cache/<namespace>.sqlite``).

    Each row keeps the sha256 of its value; a row whose value no longer matches is dropped
    and reported. A database file that SQLite cannot read is moved aside (``.corrupt-<time>``)
    with a one-line message and a new one is started. Safe to use from several threads and
    several processes (WAL journal, busy time-out).
    """

    def __init__(self, namespace: str, path: Path | None = None) -> None:
        self.namespace = namespace
        self.path = path or cache_root() / f"{namespace}.sqlite"
        self.enabled = caching_enabled()
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection | None:
        if not self.enabled:
            return None
        if self._connection is not None:
            return self._connection
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._connection = self._open()
        except sqlite3.DatabaseError as exc:
            aside = self.path.with_name(self.path.name + f".corrupt-{int(time.time())}")
            cache_warning(f"cache {self.path} is not a readable database ({exc}); moved to {aside.name}, starting a new one")
            with contextlib.suppress(OSError):
                os.replace(self.path, aside)
            self._connection = self._open()
        except OSError as exc:
            cache_warning(f"cache {self.path} cannot be opened ({exc}); continuing without it")
            self.enabled = False
            return None
        return self._connection

    def _open(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        # WAL with synchronous=NORMAL: a commit survives the process being killed (the OS has
        # it); only a power cut may lose the last commits. FULL would fsync every commit.
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value TEXT NOT NULL, sha256 TEXT NOT NULL)")
        connection.execute("SELECT count(*) FROM entries").fetchone()
        return connection

    def get(self, key: str) -> Any | None:
        """The value stored under ``key`` (``None`` if absent, disabled or failing its checksum)."""
        with self._lock:
            connection = self._connect()
            if connection is None:
                return None
            try:
                row = connection.execute("SELECT value, sha256 FROM entries WHERE key = ?", (key,)).fetchone()
            except sqlite3.DatabaseError as exc:
                cache_warning(f"cache {self.path} could not be read ({exc}); continuing without it")
                self.enabled = False
                return None
            if row is None:
                return None
            value, digest = row
            if hashlib.sha256(value.encode("utf-8")).hexdigest() != digest:
                cache_warning(f"cache {self.path}: entry {key[:16]} fails its checksum; dropped")
                connection.execute("DELETE FROM entries WHERE key = ?", (key,))
                return None
            return json.loads(value)

    def get_many(self, keys: list[str]) -> dict[str, Any]:
        """The values stored under ``keys`` (absent or failing ones left out), in a few queries."""
        found: dict[str, Any] = {}
        with self._lock:
            connection = self._connect()
            if connection is None:
                return found
            bad: list[str] = []
            try:
                for start in range(0, len(keys), 500):  # SQLite's limit on bound parameters
                    chunk = keys[start:start + 500]
                    marks = ",".join("?" * len(chunk))
                    rows = connection.execute(f"SELECT key, value, sha256 FROM entries WHERE key IN ({marks})", chunk)
                    for key, value, digest in rows:
                        if hashlib.sha256(value.encode("utf-8")).hexdigest() != digest:
                            bad.append(key)
                            continue
                        found[key] = json.loads(value)
                for key in bad:
                    cache_warning(f"cache {self.path}: entry {key[:16]} fails its checksum; dropped")
                    connection.execute("DELETE FROM entries WHERE key = ?", (key,))
            except sqlite3.DatabaseError as exc:
                cache_warning(f"cache {self.path} could not be read ({exc}); continuing without it")
                self.enabled = False
                return {}
        return found

    def put(self, key: str, value: Any) -> None:
        """Store a JSON-serializable value under ``key`` (replacing any earlier one)."""
        self.put_many([(key, value)])

    def put_many(self, items: list[tuple[str, Any]]) -> None:
        """Store several values in one transaction (one commit for the whole batch)."""
        if not items:
            return
        rows = []
        for key, value in items:
            text = json.dumps(value, sort_keys=True)
            rows.append((key, text, hashlib.sha256(text.encode("utf-8")).hexdigest()))
        with self._lock:
            connection = self._connect()
            if connection is None:
                return
            try:
                connection.execute("BEGIN")
                connection.executemany("INSERT OR REPLACE INTO entries (key, value, sha256) VALUES (?, ?, ?)", rows)
                connection.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
                cache_warning(f"cache {self.path} could not be written ({exc}); continuing without it")
                self.enabled = False

    def __len__(self) -> int:
        with self._lock:
            connection = self._connect()
            if connection is None:
                return 0
            return int(connection.execute("SELECT count(*) FROM entries").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
