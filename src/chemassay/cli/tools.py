"""Helpers shared by every CLI module (``chemassay.cli`` and each suite's ``cli*.py``):
printing results, consistent option types, and the terminal side of the library's messages
and progress (:func:`install_terminal_output`).

The ``chemassay.cli`` package and the suites' CLI modules are the only code that imports
typer or rich.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from chemassay.contract.result import RequestSummary, Result
from chemassay.report.store import store_result
from chemassay.runtime.files import need_file, writable_out  # noqa: F401  (re-exported for the CLI modules)
from chemassay.runtime.progress import (
    LineRenderer,
    current_renderer,
    logger,
    set_renderer,
    settings,
)


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


def _hide_flag_types() -> None:
    """Typer (0.2x) prints a ``<bool>`` type after every flag in ``--help``; a flag takes no
    value, so show none (options that take a value keep their type)."""
    option = getattr(getattr(typer, "core", None), "TyperOption", None)
    shown = getattr(option, "display_type_rich", None)
    if option is None or shown is None or getattr(shown, "_chemassay", False):
        return

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) and getattr(self, "metavar", None) is None:
            return None
        return shown(self, ctx)

    display_type_rich._chemassay = True
    option.display_type_rich = display_type_rich


_hide_flag_types()


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


def info(message: str) -> None:
    """Print a progress/info line to stderr unless ``--quiet``."""
    if not settings.quiet:
        err_console.print(message, highlight=False, markup=False)


class _ConsoleHandler(logging.Handler):
    """The ``chemassay`` logger's messages on stderr: info unless ``--quiet``, warnings always."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno < logging.WARNING and settings.quiet:
            return
        text = record.getMessage()
        if record.levelno >= logging.WARNING and not text.startswith(("warning", "error")):
            text = f"warning: {text}"
        err_console.print(text, highlight=False, markup=False, soft_wrap=True)


def _rich_renderer(description: str, total: int | None):
    """A live rich progress bar (stderr is a terminal)."""

    @contextlib.contextmanager
    def bar():
        with Progress(TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), TimeRemainingColumn(), console=Console(stderr=True),
                      transient=True) as shown:
            task = shown.add_task(description, total=total)
            yield lambda n=1: shown.advance(task, n)

    return bar()


def install_terminal_output() -> None:
    """Show the library's messages on stderr and its progress as a live bar (stderr is a
    terminal) or as a line every few seconds (a log, a pipe, CI)."""
    if not any(isinstance(h, _ConsoleHandler) for h in logger.handlers):
        _saved.append((logger.level, logger.propagate, current_renderer()))
        logger.addHandler(_ConsoleHandler())
    logger.setLevel(logging.INFO)
    logger.propagate = False
    set_renderer(_rich_renderer if sys.stderr.isatty() else LineRenderer())


_saved: list[tuple] = []
"""The logger's level and propagation and the renderer before :func:`install_terminal_output`."""


def remove_terminal_output() -> None:
    """Undo :func:`install_terminal_output` (``main`` does at its end, so a program that
    calls it in-process gets its logging and progress back as they were)."""
    for handler in [h for h in logger.handlers if isinstance(h, _ConsoleHandler)]:
        logger.removeHandler(handler)
    if _saved:
        level, propagate, renderer = _saved.pop()
        logger.setLevel(level)
        logger.propagate = propagate
        set_renderer(renderer)


OutOption = typer.Option(None, "--out", "-o", help="Write the JSON result here.")
SeedOption = typer.Option(0, "--seed", help="Seed for every random choice.")
JobsOption = typer.Option(1, "--n-jobs", "-j", help="Worker processes (-1: all cores).")


def model_context(base_url: str | None, out: str | os.PathLike | None = None) -> dict:
    """The settings a command loads ``--model`` with: ``base_url`` (``--base-url``) and
    ``out_dir``, the folder of ``--out``, where a model keeps what a rerun resumes (the batches
    of ``batch_api=true``)."""
    context: dict = {"base_url": base_url} if base_url else {}
    if out is not None:
        context["out_dir"] = os.path.dirname(os.path.abspath(out))
    return context


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
