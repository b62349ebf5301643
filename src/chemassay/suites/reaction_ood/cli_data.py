"""reaction-ood data commands: info, clean, split, split-defs, verify (thin callers of the API)."""

from __future__ import annotations

from pathlib import Path

import typer

from chemassay.cli.tools import JobsOption, console, emit, info, writable_out
from chemassay.runtime.progress import settings
from chemassay.suites.reaction_ood import api
from chemassay.suites.reaction_ood.data import reaction_input
from chemassay.suites.reaction_ood.io import detect_format, iter_reactions
from chemassay.suites.reaction_ood.splits import list_split_definitions

app = typer.Typer()

FormatOption = typer.Option(
    "auto", "--format", "-f", help="Input format: auto, table, rsmi, schneider, pistachio."
)
SchedulerOption = typer.Option(
    None, "--scheduler", help="Dask scheduler address (tcp://host:8786) or 'dask-local'; default: local processes."
)


def _show_progress() -> bool | None:
    return False if settings.quiet else None


@app.command("info")
def info_command(
    path: Path = typer.Argument(..., help="Reaction file (CSV/TSV/Parquet table, .rsmi, Schneider CSV, Pistachio JSONL), or schneider-50k (the bundled set)."),
    fmt: str = FormatOption,
) -> None:
    """Summarize a reaction file: rows, documents, years, classes, authors."""
    path, dataset_fmt = reaction_input(path)
    if fmt == "auto":
        fmt = dataset_fmt
    kind = detect_format(path) if fmt == "auto" else fmt
    rows = 0
    documents: set[str] = set()
    years: dict[int, int] = {}
    classes: set[str] = set()
    with_authors = 0
    problems = 0
    for chunk in iter_reactions(path, kind):
        rows += len(chunk)
        documents.update(chunk["document_id"].dropna())
        for year, count in chunk["year"].value_counts().items():
            years[int(year)] = years.get(int(year), 0) + int(count)
        classes.update(chunk["class_code"].dropna())
        with_authors += int(chunk["authors"].notna().sum())
        problems += len(chunk.attrs.get("read_problems", []))
    console.print(f"{path}: format {kind}, {rows} reactions, {len(documents)} documents, "
                  f"{len(classes)} class codes, {with_authors} with authors, {problems} unreadable cells",
                  highlight=False, soft_wrap=True)
    if years:
        console.print(f"years {min(years)}-{max(years)}, {sum(years.values())} reactions with a year", highlight=False, soft_wrap=True)


@app.command("clean")
def clean_command(
    path: Path = typer.Argument(..., help="Reaction file to clean, or schneider-50k (the bundled set)."),
    out: Path = typer.Option(..., "--out", "-o", help="Cleaned table (.parquet or .csv)."),
    fmt: str = FormatOption,
    report: Path = typer.Option(None, "--report", help="Write the cleaning report (a result JSON) here."),
    max_tokens: int = typer.Option(800, "--max-tokens", help="Remove reactions whose reactants or products have this many SMILES tokens or more."),
    dedup: str = typer.Option("paper", "--dedup", help="Duplicate rule: paper (class code, then earliest year, then first row), reference (the authors' sequential rule), none."),
    keep_isotopes: bool = typer.Option(False, "--keep-isotopes", help="Keep isotope labels (the reference removes them)."),
    n_jobs: int = JobsOption,
    scheduler: str = SchedulerOption,
    chunk_rows: int = typer.Option(100_000, "--chunk-rows", help="Rows read and processed per chunk (memory bound)."),
) -> None:
    """Standardize, filter (the paper's six rules) and deduplicate reactions (Section S1.1)."""
    writable_out(report, "cleaning report")
    result = api.clean(str(path), out, fmt=fmt, max_tokens=max_tokens, dedup=dedup, keep_isotopes=keep_isotopes,
                       n_jobs=n_jobs, scheduler=scheduler, chunk_rows=chunk_rows, show_progress=_show_progress())
    emit(result, report)
    info(f"wrote {out} ({result.metrics['rows_out']} reactions)")


@app.command("split")
def split_command(
    path: Path = typer.Argument(..., help="Cleaned reaction table (.parquet or .csv from 'clean')."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for <part>.parquet files and manifest.json."),
    kind: str = typer.Option(None, "--kind", "-k", help="random, document, author, time, reaction-type or bespoke (default: the config's 'kind')."),
    config: Path = typer.Option(None, "--config", "-c", help="Split definition JSON (sizes, years, held-out classes...), or the name of a shipped one (see 'split-defs')."),
    seed: int = typer.Option(None, "--seed", help="Seed for every random choice (default: the config's 'seed', else 0)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a split already in the folder."),
) -> None:
    """Split a cleaned table (Sections S1.2-S1.4); write the parts and a manifest."""
    split_config = str(config) if config is not None else None
    manifest = api.split(path, out, kind=kind, config=split_config, seed=seed, overwrite=overwrite)
    if not settings.quiet:
        sizes = ", ".join(f"{name} {entry['rows']}" for name, entry in manifest["parts"].items())
        console.print(f"{manifest['kind']} split of {manifest['input']['rows']} reactions: {sizes}", highlight=False,
                      soft_wrap=True)
        console.print(f"wrote {out}/manifest.json", highlight=False, soft_wrap=True)


@app.command("split-defs")
def split_defs_command() -> None:
    """List the shipped split definitions (the paper's settings, and ones sized for Schneider 50k)."""
    for name, description in list_split_definitions().items():
        console.print(f"{name:<40} {description}", highlight=False, markup=False, soft_wrap=True)


@app.command("verify")
def verify_command(
    directory: Path = typer.Argument(..., help="A folder written by 'reaction-ood split'."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the verification result JSON here."),
) -> None:
    """Prove a split's guarantees (no shared reaction, document, author, year or class leak)."""
    writable_out(out, "verification result")
    result = api.verify(directory)
    checks = result.details.checks
    if not settings.quiet:
        for check in checks:
            mark = "ok  " if check.passed else "FAIL"
            line = f"{mark} {check.description}"
            if not check.passed:
                line += f" ({check.violations} violation(s); e.g. {'; '.join(check.examples[:3])})"
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    if out is not None:
        result.write(out)
    if result.metrics["failed"]:
        raise typer.Exit(1)
