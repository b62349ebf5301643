"""The ``chemassay`` command: global options, ``doctor``, the shared command groups and every
registered suite's app.

The shared commands live beside this module, one module per group: :mod:`.data`,
:mod:`.models`, :mod:`.report` (``metrics``, ``reference``, ``results``, ``compare``,
``report``), :mod:`.assay` and :mod:`.demo`; :mod:`.tools` holds what every CLI module shares.
Each suite exposes a Typer app in its own ``cli`` module (declared in its ``Suite``); every
registered suite is mounted under its CLI name.
"""

from __future__ import annotations

import importlib
import inspect
import platform
import sys

import rdkit
import typer
from rich.table import Table

from chemassay import __version__
from chemassay.chem.similarity import resolve_backend
from chemassay.cli.assay import assay_command
from chemassay.cli.data import data_app
from chemassay.cli.demo import demo_command
from chemassay.cli.leakage import leakage_command
from chemassay.cli.models import models_app
from chemassay.cli.report import (
    compare_command,
    metrics_app,
    reference_app,
    report_command,
    results_app,
)
from chemassay.cli.tools import (
    console,
    err_console,
    install_terminal_output,
    remove_terminal_output,
)
from chemassay.contract.errors import ChemassayError, UserInputError, describe_os_error
from chemassay.data import chemassay_home, list_specs, verify
from chemassay.report.store import set_recording
from chemassay.runtime.progress import settings
from chemassay.suites import all_suites

app = typer.Typer(
    name="chemassay",
    help="A test bench for chemistry machine-learning models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"chemassay {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars or summaries."),
    no_store: bool = typer.Option(False, "--no-store", help="Do not record results in the results store "
                                  "(also: CHEMASSAY_NO_STORE=1)."),
    refresh: bool = typer.Option(False, "--refresh", help="Ask models behind endpoints again instead of answering "
                                 "from the response cache, and overwrite the cached answers (per model: refresh=true; "
                                 "no cache at all: cache=false)."),
) -> None:
    """chemassay: does this model understand chemistry, or does it pattern-match?"""
    settings.debug = debug
    settings.quiet = quiet
    settings.refresh = refresh
    set_recording(not no_store)
    install_terminal_output()


_mounted: set[str] = set()


def _mount_suites() -> None:
    """Mount every registered suite's Typer app under its name (``chemassay reaction-ood``);
    a suite registered later is mounted by the next call (``main`` calls it every time)."""
    for suite in all_suites():
        if suite.name in _mounted:
            continue
        suite_app = suite.load("cli")
        if suite_app is not None:
            app.add_typer(suite_app, name=suite.name, help=f"{suite.reproduces}: {suite.title}")
        _mounted.add(suite.name)
    _whole_help(app)


def _first_paragraph(text: str) -> str:
    """A help text's first paragraph on one line (a docstring's line breaks are not sentences')."""
    return " ".join(inspect.cleandoc(text).partition("\f")[0].split("\n\n")[0].split())


def _whole_help(typer_app: typer.Typer) -> None:
    """Give every command of ``typer_app`` (and of its groups) a one-line summary: the first
    paragraph of its help. Typer's rich help lists a command by its help text with the
    docstring's line breaks kept, which cut a sentence in two in ``chemassay --help``."""
    for command in typer_app.registered_commands:
        text = command.help if command.help is not None else inspect.getdoc(command.callback) or ""
        if command.short_help is None and text:
            command.short_help = _first_paragraph(text)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _whole_help(group.typer_instance)


@app.command()
def doctor() -> None:
    """Versions of chemassay and its dependencies, the data cache and dataset status."""
    table = Table(title="chemassay doctor", show_header=True)
    table.add_column("component")
    table.add_column("status")
    table.add_row("chemassay", __version__)
    table.add_row("python", platform.python_version())
    table.add_row("rdkit", rdkit.__version__)
    for module in ("numpy", "pandas", "torch", "transformers", "faiss", "dask", "fcd_torch", "drfp", "httpx"):
        try:
            imported = importlib.import_module(module)
            table.add_row(module, getattr(imported, "__version__", "installed"))
        except ImportError:
            table.add_row(module, "not installed")
    table.add_row("similarity backend", resolve_backend())
    table.add_row("data cache", str(chemassay_home()))
    for spec in list_specs():
        statuses = verify(spec.name)
        ok = sum(s.ok for s in statuses)
        bad = [s for s in statuses if not s.ok and s.path is not None]
        state = f"{ok}/{len(statuses)} files verified"
        if bad:
            state += f"; {len(bad)} checksum mismatch"
        elif ok < len(statuses):
            state += f" (run: chemassay data fetch {spec.name})"
        table.add_row(f"dataset {spec.name}", state)
    console.print(table)

app.add_typer(data_app, name="data")
app.add_typer(models_app, name="models")
app.add_typer(metrics_app, name="metrics")
app.add_typer(reference_app, name="reference")
app.add_typer(results_app, name="results")
app.command("compare")(compare_command)
app.command("report")(report_command)
app.command("assay")(assay_command)
app.command("demo")(demo_command)
app.command("leakage")(leakage_command)
_mount_suites()


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning user errors into one line and exit code 2."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    _mount_suites()
    try:
        _run(args, debug)
    finally:
        remove_terminal_output()


def _run(args: list[str], debug: bool) -> None:
    try:
        code = app(args=args, standalone_mode=False)
        if isinstance(code, int) and code:
            if code == 130:  # typer turns Ctrl-C into a silent exit code 130
                err_console.print("interrupted", highlight=False, markup=False)
            sys.exit(code)
    except typer.Exit as exc:
        if exc.exit_code == 130:
            err_console.print("interrupted", highlight=False, markup=False)
        sys.exit(exc.exit_code)
    except typer.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt) or isinstance(exc.__context__, KeyboardInterrupt):
            err_console.print("interrupted", highlight=False, markup=False)
            sys.exit(130)
        err_console.print("aborted")
        sys.exit(1)
    except KeyboardInterrupt:
        err_console.print("interrupted", highlight=False, markup=False)
        sys.exit(130)
    except SystemExit:
        raise
    except UserInputError as exc:
        if debug:
            raise
        err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(2)
    except OSError as exc:
        # An unreadable input, an unwritable output, a full disk: one line naming the file.
        if debug:
            raise
        err_console.print(f"error: {describe_os_error(exc)}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(2)
    except ChemassayError as exc:
        if debug:
            raise
        err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(2)
    except Exception as exc:
        # Click's usage errors (typer vendors click, so match by behaviour, not by class).
        if hasattr(exc, "show") and isinstance(getattr(exc, "exit_code", None), int):
            if debug:
                raise
            exc.show()
            sys.exit(exc.exit_code)
        raise


