"""Helpers shared by every suite's CLI: printing results, consistent option types."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer
from rich.console import Console

from chemassay.errors import UserInputError
from chemassay.report.result import RequestSummary, Result
from chemassay.runtime.progress import settings


def _console(stderr: bool = False) -> Console:
    """A rich console; without a terminal it does not wrap at 80 columns (logs, CI, pipes keep
    each number next to its name): ``$COLUMNS`` if set, else 240 columns."""
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty():
        return Console(stderr=stderr)
    width = int(os.environ["COLUMNS"]) if os.environ.get("COLUMNS", "").isdigit() else 240
    return Console(stderr=stderr, width=width, soft_wrap=False)


console = _console()
err_console = _console(stderr=True)


def emit(result: Result, out: str | os.PathLike | None) -> None:
    """Write ``result`` to ``out`` (atomically), record it in the results store (unless
    ``--no-store`` / ``CHEMASSAY_NO_STORE=1``) and print its short summary to stdout."""
    if out is not None:
        result.write(out)
    store_result(result, out)
    if not settings.quiet:
        console.print(result.summary(), highlight=False, markup=False)
        if out is not None:
            console.print(f"wrote {out}", highlight=False, markup=False)


def store_result(result: Result, source: str | os.PathLike | None = None) -> int | None:
    """Record ``result`` in the results store; a store that cannot be used costs one warning
    line on stderr, never the command (the result file is already written)."""
    import sqlite3

    from chemassay.report.store import StoreError, record

    try:
        return record(result, os.path.abspath(source) if source is not None else None)
    except (StoreError, sqlite3.Error, OSError) as exc:
        err_console.print(f"warning: result not recorded in the results store: {exc}", highlight=False,
                          markup=False, soft_wrap=True)
        return None


def writable_out(path: str | os.PathLike | None, what: str = "output") -> Path | None:
    """Check an ``--out`` path is writable before any work (``None`` passes through)."""
    from chemassay.runtime.files import ensure_writable

    return None if path is None else ensure_writable(path, what)


def need_file(path: str | os.PathLike, what: str = "input") -> Path:
    """Return ``path`` as a Path if it is an existing file, else raise a clear user error."""
    target = Path(path)
    if not target.exists():
        raise UserInputError(f"{target}: no such {what} file")
    if target.is_dir():
        raise UserInputError(f"{target}: is a directory, expected a {what} file")
    return target


def info(message: str) -> None:
    """Print a progress/info line to stderr unless ``--quiet``."""
    if not settings.quiet:
        err_console.print(message, highlight=False, markup=False)


OutOption = typer.Option(None, "--out", "-o", help="Write the JSON result here.")
SeedOption = typer.Option(0, "--seed", help="Seed for every random choice.")
JobsOption = typer.Option(1, "--n-jobs", "-j", help="Worker processes (-1: all cores).")


def finish_requests(requests: RequestSummary | None, extra: str = "") -> None:
    """End a command that asked a model behind an endpoint: print the one summary line
    (``N answered: A new, C from cache, F failed`` and the tokens; ``extra`` is appended) and
    exit with code 1 when some requests failed for good (the result is written; the items
    are in ``skipped`` with their reason). ``None`` (no endpoint asked) does nothing."""
    if requests is None:
        return
    if not settings.quiet:
        console.print(requests.line() + extra, highlight=False, markup=False, soft_wrap=True)
    if requests.failed:
        raise typer.Exit(1)
