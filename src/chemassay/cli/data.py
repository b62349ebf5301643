"""``chemassay data``: list, fetch, locate and verify the registered datasets."""

from __future__ import annotations

import typer
from rich.table import Table

from chemassay.cli.tools import console
from chemassay.contract.errors import UserInputError
from chemassay.data import fetch, list_specs, locate, verify
from chemassay.runtime.progress import settings

data_app = typer.Typer(help="List, fetch, locate and verify datasets.", no_args_is_help=True)


@data_app.command("list")
def data_list() -> None:
    """List registered datasets with license and where they come from."""
    table = Table(show_header=True)
    for column in ("name", "files", "present", "license", "description"):
        table.add_column(column, overflow="fold")
    for spec in list_specs():
        present = locate(spec.name) is not None
        table.add_row(spec.name, str(len(spec.files)), "yes" if present else "no", spec.license, spec.description)
    console.print(table)


@data_app.command("fetch")
def data_fetch(
    name: str = typer.Argument(..., help="Dataset name (see 'chemassay data list')."),
    force: bool = typer.Option(False, "--force", help="Remove the cached copy first and fetch it again (repairs a corrupted download)."),
) -> None:
    """Fetch a dataset into the cache (bundled datasets are only verified)."""
    path = fetch(name, quiet=settings.quiet, force=force)
    console.print(str(path))


@data_app.command("path")
def data_path(
    name: str = typer.Argument(..., help="Dataset name."),
    file: str = typer.Option(None, "--file", help="One file of the dataset."),
) -> None:
    """Print the local folder (or file) of a dataset; error if it is not present."""
    path = locate(name, file)
    if path is None:
        raise UserInputError(f"dataset {name!r} is not on this machine: run 'chemassay data fetch {name}'")
    console.print(str(path), highlight=False)


@data_app.command("verify")
def data_verify(name: str = typer.Argument(None, help="Dataset name (default: all).")) -> None:
    """Check the sha256 of every present file; exit 1 on a mismatch."""
    names = [name] if name else [s.name for s in list_specs()]
    bad = 0
    for dataset in names:
        for status in verify(dataset):
            where = str(status.path) if status.path else "-"
            console.print(f"{dataset:<20} {status.name:<28} {status.message:<10} {where}", highlight=False)
            bad += status.path is not None and not status.ok
    if bad:
        raise typer.Exit(1)
