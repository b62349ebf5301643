"""The ``chemassay`` command: global options, ``doctor``, ``data``, ``demo`` and the suites.

Each suite lives in ``chemassay.suites.<name>`` and exposes a Typer app in its ``cli``
module; every suite package present is mounted under its CLI name.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import typer

from chemassay import __version__
from chemassay.clitools import console, err_console
from chemassay.errors import ChemassayError, UserInputError
from chemassay.runtime.progress import settings

SUITES: tuple[tuple[str, str], ...] = (
    ("stoichiometry", "stoichiometry"),
    ("reaction-ood", "reaction_ood"),
    ("generation", "generation"),
    ("robustness", "robustness"),
    ("mechanism", "mechanism"),
)

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
) -> None:
    """chemassay: does this model understand chemistry, or does it pattern-match?"""
    settings.debug = debug
    settings.quiet = quiet


def available_suites() -> list[tuple[str, str]]:
    """``(cli_name, module_name)`` of every suite package installed."""
    found = []
    for cli_name, module in SUITES:
        if importlib.util.find_spec(f"chemassay.suites.{module}") is not None:
            found.append((cli_name, module))
    return found


def _mount_suites() -> None:
    for cli_name, module in available_suites():
        if importlib.util.find_spec(f"chemassay.suites.{module}.cli") is None:
            continue
        suite_cli = importlib.import_module(f"chemassay.suites.{module}.cli")
        app.add_typer(suite_cli.app, name=cli_name)


@app.command()
def doctor() -> None:
    """Versions of chemassay and its dependencies, the data cache and dataset status."""
    import platform

    import rdkit
    from rich.table import Table

    from chemassay.data import chemassay_home, list_specs, verify

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
    from chemassay.chem.similarity import resolve_backend

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


data_app = typer.Typer(help="List, fetch, locate and verify datasets.", no_args_is_help=True)
app.add_typer(data_app, name="data")


@data_app.command("list")
def data_list() -> None:
    """List registered datasets with license and where they come from."""
    from rich.table import Table

    from chemassay.data import list_specs, locate

    table = Table(show_header=True)
    for column in ("name", "files", "present", "license", "description"):
        table.add_column(column, overflow="fold")
    for spec in list_specs():
        present = locate(spec.name) is not None
        table.add_row(spec.name, str(len(spec.files)), "yes" if present else "no", spec.license, spec.description)
    console.print(table)


@data_app.command("fetch")
def data_fetch(name: str = typer.Argument(..., help="Dataset name (see 'chemassay data list').")) -> None:
    """Fetch a dataset into the cache (bundled datasets are only verified)."""
    from chemassay.data import fetch

    path = fetch(name, quiet=settings.quiet)
    console.print(str(path))


@data_app.command("path")
def data_path(
    name: str = typer.Argument(..., help="Dataset name."),
    file: str = typer.Option(None, "--file", help="One file of the dataset."),
) -> None:
    """Print the local folder (or file) of a dataset; error if it is not present."""
    from chemassay.data import locate

    path = locate(name, file)
    if path is None:
        raise UserInputError(f"dataset {name!r} is not on this machine: run 'chemassay data fetch {name}'")
    console.print(str(path), highlight=False)


@data_app.command("verify")
def data_verify(name: str = typer.Argument(None, help="Dataset name (default: all).")) -> None:
    """Check the sha256 of every present file; exit 1 on a mismatch."""
    from chemassay.data import list_specs, verify

    names = [name] if name else [s.name for s in list_specs()]
    bad = 0
    for dataset in names:
        for status in verify(dataset):
            where = str(status.path) if status.path else "-"
            console.print(f"{dataset:<20} {status.name:<28} {status.message:<10} {where}", highlight=False)
            bad += status.path is not None and not status.ok
    if bad:
        raise typer.Exit(1)


@app.command()
def demo(
    out: Path = typer.Option(Path("reports/demo"), "--out", "-o", help="Folder for results and summary."),
    suite: list[str] = typer.Option(None, "--suite", help="Run only these suites (repeatable)."),
) -> None:
    """Run every suite on its bundled real data with its built-in baseline."""
    from chemassay.demo import run_demo

    summary = run_demo(out, suites=suite or None)
    console.print(f"wrote {summary}")


_mount_suites()


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning user errors into one line and exit code 2."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        code = app(args=args, standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(1)
    except SystemExit:
        raise
    except (UserInputError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        if debug:
            raise
        err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
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


