"""generation dataset and baseline commands: filter, split, sample."""

from __future__ import annotations

import typer

app = typer.Typer()
