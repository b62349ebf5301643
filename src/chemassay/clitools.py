"""Helpers shared by every suite's CLI: printing results, consistent option types."""

from __future__ import annotations

import os
from pathlib import Path

import typer
from rich.console import Console

from chemassay.errors import UserInputError
from chemassay.report.result import Result
from chemassay.runtime.progress import settings

console = Console()
err_console = Console(stderr=True)


def emit(result: Result, out: str | os.PathLike | None) -> None:
    """Write ``result`` to ``out`` (atomically) and print its short summary to stdout."""
    if out is not None:
        result.write(out)
    if not settings.quiet:
        console.print(result.summary(), highlight=False, markup=False)
        if out is not None:
            console.print(f"wrote {out}", highlight=False, markup=False)


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
