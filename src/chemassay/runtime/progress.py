"""Progress and messages from library code, shown by whoever runs it.

The library never prints and never imports a terminal toolkit. It reports in two ways:

* **Messages** (:func:`info`, :func:`warn`) go to the ``chemassay`` logger. The CLI shows them
  on stderr (unless ``--quiet``); a Python user sees them only if they configure logging.
* **Progress** (:func:`progress`, :func:`progress_task`) goes to the installed *renderer*
  (:func:`set_renderer`). The CLI installs a live bar when stderr is a terminal, and
  :class:`LineRenderer` otherwise, which logs one line every few seconds (``cleaning
  reactions: 1,200/6,000 (20 %), 12 s, about 48 s left``) so a log file of a long run shows it
  is alive. With no renderer installed (plain library use) progress is silent.

``settings`` holds the process-wide switches the CLI's root options set.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

T = TypeVar("T")

logger = logging.getLogger("chemassay")


@dataclass
class Settings:
    """Global switches set by the CLI's root options."""

    quiet: bool = False
    debug: bool = False
    refresh: bool = False
    """Ask models behind endpoints again instead of answering from the response cache (and
    overwrite the cached answers): ``chemassay --refresh ...``."""


settings = Settings()


def info(message: str) -> None:
    """A progress or status message (the CLI prints it on stderr unless ``--quiet``)."""
    logger.info(message)


def warn(message: str) -> None:
    """A warning the user should read (printed even with ``--quiet``)."""
    logger.warning(message)


class Renderer(Protocol):
    """Shows one unit of work's progress: ``with renderer(description, total) as advance:``."""

    def __call__(self, description: str, total: int | None) -> contextlib.AbstractContextManager[Callable[[int], None]]:
        ...


_state: dict[str, Any] = {"renderer": None}


def set_renderer(renderer: Renderer | None) -> Renderer | None:
    """Install the progress renderer (``None``: silent); returns the previous one."""
    previous = _state["renderer"]
    _state["renderer"] = renderer
    return previous


def current_renderer() -> Renderer | None:
    """The installed renderer (``None``: progress is silent)."""
    return _state["renderer"]


def _format_count(value: float) -> str:
    return f"{value:,.0f}"


def progress_interval() -> float:
    """Seconds between two progress lines: ``$CHEMASSAY_PROGRESS_INTERVAL``, else 5."""
    try:
        value = float(os.environ.get("CHEMASSAY_PROGRESS_INTERVAL", "5"))
    except ValueError:
        return 5.0
    return value if value >= 0 else 5.0


class LineRenderer:
    """Progress as log lines, at most one every ``interval`` seconds per unit of work (for
    stderr that is not a terminal: logs, CI, pipes). The default interval is
    :func:`progress_interval` (5 s, or ``$CHEMASSAY_PROGRESS_INTERVAL`` seconds)."""

    def __init__(self, interval: float | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = progress_interval() if interval is None else interval
        self.clock = clock

    @contextlib.contextmanager
    def __call__(self, description: str, total: int | None) -> Iterator[Callable[[int], None]]:
        started = self.clock()
        state = {"done": 0, "last": started}

        def line(final: bool = False) -> str:
            elapsed = self.clock() - started
            done = state["done"]
            text = f"{description}: {_format_count(done)}"
            if total:
                text += f"/{_format_count(total)} ({100.0 * done / total:.0f} %)"
            text += f", {elapsed:.0f} s"
            if total and done and not final and done < total:
                text += f", about {elapsed * (total - done) / done:.0f} s left"
            return text + (" (done)" if final else "")

        def advance(n: int = 1) -> None:
            state["done"] += n
            now = self.clock()
            if now - state["last"] >= self.interval:
                state["last"] = now
                logger.info(line())

        yield advance
        if self.clock() - started >= self.interval:
            logger.info(line(final=True))


def _renderer_for(disable: bool | None) -> Renderer | None:
    if disable or settings.quiet:
        return None
    return _state["renderer"]


def progress(
    items: Iterable[T], *, total: int | None = None, description: str = "working", disable: bool | None = None
) -> Iterator[T]:
    """Iterate over ``items``, reporting progress to the installed renderer.

    ``disable=True`` (or ``--quiet``) hides it; ``None`` and ``False`` leave it to the renderer.
    """
    renderer = _renderer_for(disable)
    if renderer is None:
        yield from items
        return
    if total is None:
        try:
            total = len(items)  # type: ignore[arg-type]
        except TypeError:
            total = None
    with renderer(description, total) as advance:
        for item in items:
            yield item
            advance(1)


@contextlib.contextmanager
def progress_task(description: str, total: int | None, disable: bool | None = None):
    """Progress advanced by hand: ``with progress_task("x", 10) as advance: advance(1)``."""
    renderer = _renderer_for(disable)
    if renderer is None:
        yield lambda n=1: None
        return
    with renderer(description, total) as advance:
        yield advance
