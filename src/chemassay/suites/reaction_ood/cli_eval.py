"""reaction-ood evaluation commands: baseline training/prediction, evaluate, shift analysis."""

from __future__ import annotations

import typer

app = typer.Typer()
