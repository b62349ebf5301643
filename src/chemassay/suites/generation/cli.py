"""CLI of the ``generation`` suite: metric commands and dataset/baseline commands live in
two modules whose commands are merged into one Typer app here."""

from __future__ import annotations

import typer

from chemassay.suites.generation import cli_metrics, cli_models

app = typer.Typer(
    help="Distribution learning of molecular generators: the MOSES benchmark.",
    no_args_is_help=True,
)
for _part in (cli_metrics.app, cli_models.app):
    app.registered_commands.extend(_part.registered_commands)
    app.registered_groups.extend(_part.registered_groups)
