"""Progress bars (rich) that honour ``--quiet``, and process-wide CLI settings."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass
class Settings:
    """Global switches set by the CLI's root options."""

    quiet: bool = False
    debug: bool = False


settings = Settings()


def _make_progress(transient: bool = True):
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=transient,
    )


def progress(
    items: Iterable[T], *, total: int | None = None, description: str = "working", disable: bool | None = None
) -> Iterator[T]:
    """Iterate over ``items`` with a progress bar on stderr.

    The bar is hidden with ``--quiet`` (``settings.quiet``), when stderr is not a terminal
    and ``disable`` is not ``False``, or when ``disable=True``.
    """
    if disable is None:
        disable = settings.quiet or not sys.stderr.isatty()
    if disable:
        yield from items
        return
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    with _make_progress() as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)


@contextlib.contextmanager
def progress_task(description: str, total: int | None, disable: bool | None = None):
    """A progress bar advanced by hand: ``with progress_task("x", 10) as advance: advance(1)``."""
    if disable is None:
        disable = settings.quiet or not sys.stderr.isatty()
    if disable:
        yield lambda n=1: None
        return
    with _make_progress() as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)
