"""CLI of the ``reaction-ood`` suite: data commands (read, clean, split, verify) and
evaluation commands (baseline, evaluate, shift analysis) live in two modules whose
commands are merged into one Typer app here."""

from __future__ import annotations

import typer

from chemassay.suites.reaction_ood import cli_data, cli_eval

app = typer.Typer(
    help="Out-of-distribution splits and evaluation for reaction predictors (Bradshaw et al.).",
    no_args_is_help=True,
)
for _part in (cli_data.app, cli_eval.app):
    app.registered_commands.extend(_part.registered_commands)
    app.registered_groups.extend(_part.registered_groups)
