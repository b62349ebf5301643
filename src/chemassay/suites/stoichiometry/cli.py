"""CLI of the ``stoichiometry`` suite (ChemAlgebra): data commands (library, balance, build,
build-all, build-uspto-t, verify) and model commands (evaluate, predict) live in two modules
whose commands are merged into one Typer app here.
Every command is a thin caller of :mod:`chemassay.suites.stoichiometry.api`."""

from __future__ import annotations

import typer

from chemassay.suites.stoichiometry import cli_data, cli_eval

app = typer.Typer(
    help="ChemAlgebra: balanced reaction prediction with stoichiometric coefficients (Valenti et al., 2022).",
    no_args_is_help=True,
)
for _part in (cli_data.app, cli_eval.app):
    app.registered_commands.extend(_part.registered_commands)
    app.registered_groups.extend(_part.registered_groups)
