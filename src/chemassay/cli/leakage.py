"""``chemassay leakage``: every suite's headline test items against a model's training data
(a thin caller of :mod:`chemassay.leaks`)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from chemassay.cli.tools import console, info
from chemassay.contract.errors import UserInputError
from chemassay.leaks import DEFAULT_THRESHOLD, leakage


def leakage_command(
    train: list[Path] = typer.Option(None, "--train", "-t", metavar="FILE", help="Training data: SMILES or reaction "
                                     "SMILES per line, or a CSV/TSV/Parquet table (gzip allowed); repeatable."),
    suites: list[str] = typer.Option(None, "--suites", "-s", metavar="SUITE", help="Only these suites (repeatable or "
                                     "comma-separated; default: every suite that declares test sets)."),
    tasks: list[str] = typer.Option(None, "--task", metavar="TASK", help="Only these tasks (repeatable)."),
    column: str = typer.Option(None, "--column", "-c", help="The table column holding the SMILES or reactions."),
    threshold: float = typer.Option(DEFAULT_THRESHOLD, "--threshold", metavar="T", help="Tanimoto at or above which "
                                    "the nearest training item is a near duplicate (default 0.7: see docs/leakage.md)."),
    exact_only: bool = typer.Option(False, "--exact-only", help="Exact duplicates only (no fingerprints: faster)."),
    quick: bool = typer.Option(False, "--quick", help="Each suite's small subset of its test sets (a smoke test)."),
    n_jobs: int = typer.Option(1, "--n-jobs", "-j", help="Worker processes over training chunks (-1: all cores)."),
    scheduler: str = typer.Option(None, "--scheduler", help="A Dask scheduler address (tcp://host:8786) or "
                                  "dask-local: training chunks run on the cluster."),
    chunk_lines: int = typer.Option(50_000, "--chunk-lines", min=1, help="Training lines per chunk (memory per worker)."),
    out: Path = typer.Option(Path("leakage"), "--out", "-o", help="Folder for leakage.json."),
) -> None:
    """Exact and near duplicates of every test item in the training data, per task
    (OUT/leakage.json); unreadable training lines are counted and listed."""
    if not train:
        raise UserInputError("no training file given; pass --train FILE")
    chosen = [name.strip() for item in (suites or []) for name in item.split(",") if name.strip()] or None
    report = leakage([str(p) for p in train], suites=chosen, tasks=tasks or None, column=column, threshold=threshold,
                     near=not exact_only, quick=quick, n_jobs=n_jobs, scheduler=scheduler, chunk_lines=chunk_lines,
                     out=out, progress=info)
    table = Table(title=f"leakage (near: Tanimoto >= {threshold:g})")
    for name in ("suite", "task", "n", "exact", "near", "clean", "median NN sim"):
        table.add_column(name, justify="right" if name not in ("suite", "task") else "left")
    for task in report["tasks"]:
        median = task.get("nearest_similarity", {}).get("quantiles", {}).get("0.5")
        table.add_row(task["suite"], task["task"], f"{task['n']:,}", f"{task['exact']:,}",
                      "-" if task["near"] is None else f"{task['near']:,}", f"{task['clean']:,}",
                      "-" if median is None else f"{median:.3f}")
    console.print(table)
    for record in report["training"]:
        kinds = ", ".join(f"{record[kind + 's']:,} {kind}s" for kind in record["kinds"]) or "no items"
        console.print(f"{record['path']}: {kinds}; {record['unreadable']:,} unreadable lines")
    console.print(f"wrote {out / 'leakage.json'}")
