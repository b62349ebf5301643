"""reaction-ood data commands: clean, split, verify."""

from __future__ import annotations

import typer

app = typer.Typer()
