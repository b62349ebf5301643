"""The results store: every evaluation's result, kept in one SQLite file.

Location: ``$CHEMASSAY_STORE`` if set, else ``$CHEMASSAY_HOME/results.sqlite``
(``~/.cache/chemassay/results.sqlite``). Every command that writes a result through
:func:`chemassay.cli.tools.emit` (and ``chemassay demo``) records it here, unless the store is
turned off with ``chemassay --no-store ...`` or ``CHEMASSAY_NO_STORE=1``.

**Identity.** A result is keyed by suite, task, dataset checksum (its name when no checksum
was recorded), model identity (``model.checksum``, else ``model.spec``) and config (minus
settings that do not change the numbers: worker counts, devices, timings). Re-running the
same evaluation adds a new *run* under the same key; the newest run of a key is its
``latest`` one, and listings show only latest runs unless asked for all.

**Safety.**

* Each record is one transaction (``BEGIN IMMEDIATE``): a command killed half-way leaves
  either the whole row or nothing. The database runs in WAL mode with a 30 s busy timeout,
  so two commands recording at once both succeed (one waits for the other).
* Each row stores the result JSON compressed, with its sha256; a row whose body does not
  match is reported, never returned as a result.
* A file that is not an SQLite database, is damaged, or belongs to a newer schema raises
  :class:`StoreError` with one line naming the file and what to do. The store never
  deletes, replaces or "repairs" a file it cannot read.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import re
import sqlite3
import time
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemassay.contract.errors import ChemassayError
from chemassay.contract.result import Result
from chemassay.report.cards import direction_of
from chemassay.runtime.cache import chemassay_home

SCHEMA_VERSION = 1
SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 30.0
#: Config entries that do not change a result's numbers (left out of its identity).
VOLATILE_CONFIG = frozenset({"n_jobs", "jobs", "workers", "device", "scheduler", "progress", "quiet", "debug",
                             "cache", "no_cache", "out", "output"})

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    created_at REAL NOT NULL,
    suite TEXT NOT NULL,
    task TEXT NOT NULL,
    dataset TEXT,
    dataset_sha256 TEXT,
    model TEXT,
    model_spec TEXT,
    model_checksum TEXT,
    config_sha256 TEXT NOT NULL,
    n INTEGER NOT NULL,
    headline TEXT NOT NULL,
    chemassay_version TEXT,
    source TEXT,
    latest INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS bodies (
    id INTEGER PRIMARY KEY REFERENCES results (id) ON DELETE CASCADE,
    body BLOB NOT NULL,
    body_sha256 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS results_by_key ON results (key, id);
CREATE INDEX IF NOT EXISTS results_latest ON results (latest, id);
CREATE INDEX IF NOT EXISTS results_suite ON results (suite, task, id);
"""

_recording = True


class StoreError(ChemassayError):
    """The results database cannot be used (the message names the file and the fix)."""


def set_recording(enabled: bool) -> None:
    """Turn recording by :func:`record` on or off for this process (``--no-store``)."""
    global _recording
    _recording = enabled


def recording_enabled() -> bool:
    """False after ``--no-store`` or with ``CHEMASSAY_NO_STORE`` set to a true value."""
    env = os.environ.get("CHEMASSAY_NO_STORE", "").strip().lower()
    return _recording and env not in {"1", "true", "yes", "on"}


def default_path() -> Path:
    """``$CHEMASSAY_STORE``, else ``$CHEMASSAY_HOME/results.sqlite``."""
    explicit = os.environ.get("CHEMASSAY_STORE")
    if explicit:
        return Path(explicit).expanduser()

    return chemassay_home() / "results.sqlite"


def identity_config(config: dict[str, Any]) -> dict[str, Any]:
    """A result's config without the entries that do not change its numbers."""
    return {k: v for k, v in config.items()
            if k not in VOLATILE_CONFIG and not k.endswith("_s") and not k.endswith("_seconds")}


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def model_identity(result: Result) -> str:
    """What identifies the model of a result: its checksum, else its spec; a result without
    a ``model`` (written before the contract) by the checksums of its input files."""
    if result.model is None:
        inputs = sorted(ref.sha256 or ref.path for ref in result.inputs)
        return "inputs:" + _digest(inputs)[:16] if inputs else "-"
    return result.model.checksum or result.model.spec


def result_key(result: Result) -> str:
    """The store key of a result (see the module docstring), 16 hex digits."""
    dataset = None
    if result.dataset is not None:
        dataset = result.dataset.sha256 or result.dataset.name
    material = {"suite": result.suite, "task": result.task, "dataset": dataset,
                "model": model_identity(result), "config": identity_config(result.config)}
    return _digest(material)[:16]


def headline(result: Result, limit: int = 4) -> str:
    """A few metrics for listings (metrics with a better direction first)."""
    scalars = [(k, v) for k, v in result.metrics.items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)]
    ranked = sorted(scalars, key=lambda kv: direction_of(result.suite, kv[0]) == "none")
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in ranked[:limit])


def model_label(result: Result) -> str:
    """A display name for the model of a result (its name, or what the config says)."""
    if result.model is not None:
        return result.model.name
    config = result.config or {}
    for name in ("model", "baseline", "method"):
        value = config.get(name)
        if isinstance(value, str) and value:
            return value
    if result.inputs:
        return Path(result.inputs[0].path).stem
    source = getattr(result, "_source", None)
    return Path(source).stem if source else result.task


@dataclass(slots=True)
class StoredRun:
    """One row of a listing (the result itself is read with :meth:`ResultStore.get`)."""

    id: int
    key: str
    created_at: float
    suite: str
    task: str
    dataset: str | None
    model: str | None
    n: int
    headline: str
    latest: bool
    source: str | None

    @property
    def when(self) -> str:
        """Local time of the record, ``YYYY-MM-DD HH:MM:SS``."""
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.created_at))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"id": self.id, "key": self.key, "created_at": self.when, "suite": self.suite, "task": self.task,
                "dataset": self.dataset, "model": self.model, "n": self.n, "headline": self.headline,
                "latest": self.latest, "source": self.source}


@dataclass
class Filters:
    """Which runs a query selects (every given condition must hold)."""

    suite: str | None = None
    task: str | None = None
    model: str | None = None
    """Substring of the model's name, spec or checksum."""
    dataset: str | None = None
    """Substring of the dataset's name, or a prefix of its sha256."""
    since: float | None = None
    """Unix time; see :func:`parse_since`."""
    ids: Sequence[int] = ()
    all_runs: bool = False
    """Include runs superseded by a newer run of the same key."""

    def where(self) -> tuple[str, list[Any]]:
        """SQL ``WHERE`` clause and its parameters."""
        clauses, params = [], []
        if not self.all_runs and not self.ids:
            clauses.append("latest = 1")
        if self.suite:
            clauses.append("suite = ?")
            params.append(self.suite.replace("_", "-"))
        if self.task:
            clauses.append("task = ?")
            params.append(self.task)
        if self.model:
            clauses.append("(instr(lower(coalesce(model, '')), lower(?)) > 0 OR instr(lower(coalesce(model_spec, '')), lower(?)) > 0"
                           " OR coalesce(model_checksum, '') LIKE ? || '%')")
            params += [self.model, self.model, self.model.lower()]
        if self.dataset:
            clauses.append("(instr(lower(coalesce(dataset, '')), lower(?)) > 0 OR coalesce(dataset_sha256, '') LIKE ? || '%')")
            params += [self.dataset, self.dataset.lower()]
        if self.since is not None:
            clauses.append("created_at >= ?")
            params.append(self.since)
        if self.ids:
            clauses.append(f"id IN ({', '.join('?' for _ in self.ids)})")
            params += [int(i) for i in self.ids]
        return (" WHERE " + " AND ".join(clauses)) if clauses else "", params


_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")


def parse_since(text: str, now: float | None = None) -> float:
    """``--since``: an ISO date/time (``2026-11-01``, ``2026-11-01T12:00``) or an age
    (``30m``, ``12h``, ``7d``, ``2w``) → Unix time."""
    now = time.time() if now is None else now
    match = _RELATIVE.match(text.strip().lower())
    if match:
        seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[match.group(2)]
        return now - float(match.group(1)) * seconds
    try:
        moment = _dt.datetime.fromisoformat(text.strip())
    except ValueError:
        from chemassay.contract.errors import UserInputError

        raise UserInputError(f"--since {text!r}: give a date (2026-11-01), a date and time "
                             "(2026-11-01T12:00) or an age (30m, 12h, 7d, 2w)") from None
    return moment.timestamp()


class ResultStore:
    """The SQLite results database at ``path`` (created on first write).

    Use as a context manager or call :meth:`close`. Every method raises :class:`StoreError`
    with a one-line message when the file is damaged or not a results database.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, create: bool = True) -> None:
        self.path = Path(path) if path is not None else default_path()
        self._connection: sqlite3.Connection | None = None
        self._create = create

    # -- opening ------------------------------------------------------------------------------
    def _fail(self, what: str) -> StoreError:
        return StoreError(
            f"{self.path}: {what}; the file was left untouched — move it away to start a new store "
            "(e.g. mv it to results.sqlite.bad), or run with --no-store"
        )

    def _check_header(self) -> None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return
        if size == 0:
            return
        with open(self.path, "rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
        if header != SQLITE_HEADER:
            raise self._fail("not an SQLite database (corrupted or overwritten)")

    def connection(self) -> sqlite3.Connection:
        """The open connection (opened, checked and, if new, initialized on first use)."""
        if self._connection is not None:
            return self._connection
        exists = self.path.exists()
        if not exists and not self._create:
            raise StoreError(f"{self.path}: no results store yet (results are recorded by evaluating commands)")
        self._check_header()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._fail(f"cannot be opened ({exc})") from None
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "results" not in tables:
                connection.close()
                raise self._fail(f"an SQLite database, but not a chemassay results store (tables: {', '.join(sorted(tables))})")
            mode = connection.execute("PRAGMA journal_mode").fetchone()[0]
            if mode.lower() != "wal":
                connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
            if "results" not in tables:
                self._initialize(connection)
            version = connection.execute("SELECT value FROM meta WHERE name = 'schema'").fetchone()
            if version is None or int(version[0]) > SCHEMA_VERSION:
                connection.close()
                found = version[0] if version else "none"
                raise StoreError(f"{self.path}: results store schema {found} is newer than this chemassay "
                                 f"understands ({SCHEMA_VERSION}); upgrade chemassay or use another CHEMASSAY_STORE")
        except sqlite3.DatabaseError as exc:
            connection.close()
            raise self._fail(f"damaged results database ({exc})") from None
        self._connection = connection
        return connection

    def _initialize(self, connection: sqlite3.Connection) -> None:
        with self._transaction(connection):
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    connection.execute(statement)
            connection.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('schema', ?)", (str(SCHEMA_VERSION),))

    @contextlib.contextmanager
    def _transaction(self, connection: sqlite3.Connection | None = None) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any error, including ^C)."""
        connection = connection or self.connection()
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                raise StoreError(f"{self.path}: the results store stayed locked by another command for "
                                 f"{BUSY_TIMEOUT_S:.0f} s; try again") from None
            raise self._fail(f"damaged results database ({exc})") from None

    def close(self) -> None:
        """Close the connection."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ------------------------------------------------------------------------------
    def add(self, result: Result, source: str | os.PathLike | None = None) -> int:
        """Record a result; returns its run id. The older run of the same key stops being
        ``latest`` in the same transaction."""
        with self._guard():
            connection = self.connection()
            with self._transaction(connection):
                return self._insert(connection, result, source)

    def _insert(self, connection: sqlite3.Connection, result: Result, source: str | os.PathLike | None) -> int:
        body_text = result.to_json(indent=None)
        body = zlib.compress(body_text.encode("utf-8"), 6)
        key = result_key(result)
        row = (
            key, time.time(), result.suite, result.task,
            result.dataset.name if result.dataset else None, result.dataset.sha256 if result.dataset else None,
            model_label(result), result.model.spec if result.model else None,
            result.model.checksum if result.model else None, _digest(identity_config(result.config)),
            int(result.n), headline(result), (result.versions or {}).get("chemassay"),
            str(source) if source is not None else None,
        )
        # "+latest" keeps SQLite on the key index: with the (latest, id) index it would scan
        # every latest row for each insert (quadratic in the size of the store)
        connection.execute("UPDATE results SET latest = 0 WHERE key = ? AND +latest = 1", (key,))
        cursor = connection.execute(
            "INSERT INTO results (key, created_at, suite, task, dataset, dataset_sha256, model, model_spec,"
            " model_checksum, config_sha256, n, headline, chemassay_version, source, latest)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)", row,
        )
        run_id = int(cursor.lastrowid)
        # the result itself lives in its own table, so listings read only the small rows
        connection.execute("INSERT INTO bodies (id, body, body_sha256) VALUES (?, ?, ?)",
                           (run_id, body, hashlib.sha256(body).hexdigest()))
        return run_id

    def add_many(self, results: list[tuple[Result, str | os.PathLike | None]]) -> list[int]:
        """Record many ``(result, source)`` pairs in one transaction (an import or a
        benchmark); all are recorded or none."""
        ids = []
        with self._guard():
            connection = self.connection()
            with self._transaction(connection):
                for result, source in results:
                    ids.append(self._insert(connection, result, source))
        return ids

    def remove(self, filters: Filters) -> int:
        """Delete the selected runs; a key whose latest run goes has its newest remaining run
        promoted. Returns how many runs were deleted."""
        where, params = filters.where()
        with self._guard():
            connection = self.connection()
            with self._transaction(connection):
                keys = [row[0] for row in connection.execute(f"SELECT DISTINCT key FROM results{where}", params)]
                connection.execute(f"DELETE FROM bodies WHERE id IN (SELECT id FROM results{where})", params)
                deleted = connection.execute(f"DELETE FROM results{where}", params).rowcount
                for key in keys:
                    connection.execute(
                        "UPDATE results SET latest = 1 WHERE id = (SELECT max(id) FROM results WHERE key = ?)"
                        " AND NOT EXISTS (SELECT 1 FROM results WHERE key = ? AND +latest = 1)", (key, key))
        return int(deleted)

    # -- reading ------------------------------------------------------------------------------
    def list(self, filters: Filters | None = None, limit: int | None = None) -> list[StoredRun]:
        """Runs matching ``filters``, newest first (``limit`` of them if given)."""
        filters = filters or Filters()
        where, params = filters.where()
        sql = ("SELECT id, key, created_at, suite, task, dataset, model, n, headline, latest, source FROM results"
               f"{where} ORDER BY id DESC")
        if limit:
            sql += f" LIMIT {int(limit)}"
        with self._guard():
            rows = self.connection().execute(sql, params).fetchall()
        return [StoredRun(*row[:9], bool(row[9]), row[10]) for row in rows]

    def count(self, filters: Filters | None = None) -> int:
        """How many runs match."""
        where, params = (filters or Filters()).where()
        with self._guard():
            return int(self.connection().execute(f"SELECT count(*) FROM results{where}", params).fetchone()[0])

    def get(self, run_id: int) -> Result:
        """The result of one run (checked against its stored sha256)."""
        with self._guard():
            row = self.connection().execute("SELECT body, body_sha256 FROM bodies WHERE id = ?", (int(run_id),)).fetchone()
            if row is None and self.connection().execute("SELECT 1 FROM results WHERE id = ?", (int(run_id),)).fetchone():
                raise self._fail(f"stored result {run_id} has lost its body")
        if row is None:
            from chemassay.contract.errors import UserInputError

            raise UserInputError(f"no stored result with id {run_id} (see 'chemassay results list')")
        return self._decode(run_id, row[0], row[1])

    def _decode(self, run_id: int, body: bytes, digest: str) -> Result:
        if hashlib.sha256(body).hexdigest() != digest:
            raise self._fail(f"stored result {run_id} does not match its checksum")
        try:
            return Result.model_validate_json(zlib.decompress(body))
        except (zlib.error, ValueError) as exc:
            raise self._fail(f"stored result {run_id} cannot be read ({str(exc).splitlines()[0]})") from None

    def results(self, filters: Filters | None = None, limit: int | None = None) -> list[tuple[StoredRun, Result]]:
        """Runs matching ``filters`` with their results, newest first."""
        return [(run, self.get(run.id)) for run in self.list(filters, limit)]

    def check(self) -> list[str]:
        """Problems found by SQLite's integrity check and by re-reading every stored body."""
        problems = []
        with self._guard():
            connection = self.connection()
            for (message,) in connection.execute("PRAGMA integrity_check"):
                if message != "ok":
                    problems.append(f"integrity: {message}")
            for (run_id,) in connection.execute("SELECT id FROM results WHERE id NOT IN (SELECT id FROM bodies)"):
                problems.append(f"{self.path}: stored result {run_id} has lost its body")
            for run_id, body, digest in connection.execute("SELECT id, body, body_sha256 FROM bodies"):
                try:
                    self._decode(run_id, body, digest)
                except StoreError as exc:
                    problems.append(str(exc).split("; the file was left", 1)[0])
        return problems


def record(result: Result, source: str | os.PathLike | None = None, path: str | os.PathLike | None = None) -> int | None:
    """Record ``result`` in the default store unless recording is off; returns the run id."""
    if not recording_enabled():
        return None
    with ResultStore(path) as store:
        return store.add(result, source)


def store_result(result: Result, source: str | os.PathLike | None = None) -> int | None:
    """Record ``result`` in the results store; a store that cannot be used costs one warning
    line on stderr, never the command (the result file is already written)."""
    try:
        return record(result, os.path.abspath(source) if source is not None else None)
    except (StoreError, sqlite3.Error, OSError) as exc:
        from chemassay.runtime.progress import warn

        warn(f"result not recorded in the results store: {exc}")
        return None
