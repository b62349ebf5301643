"""reaction-ood data commands: info, clean, split, verify."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer

from chemassay.clitools import JobsOption, console, emit, info, need_file
from chemassay.errors import UserInputError
from chemassay.report.result import Result, SkippedItem, input_ref
from chemassay.runtime.progress import settings

app = typer.Typer()

FormatOption = typer.Option(
    "auto", "--format", "-f", help="Input format: auto, table, rsmi, schneider, pistachio."
)
SchedulerOption = typer.Option(
    None, "--scheduler", help="Dask scheduler address (tcp://host:8786) or 'dask-local'; default: local processes."
)


def _show_progress() -> bool | None:
    return False if settings.quiet else None


# Registered reaction sets a user may name instead of a path: name -> its reaction file.
REACTION_DATASETS = {"schneider-50k": "schneider50k.csv.gz"}


def _reaction_input(path: Path) -> Path:
    """A reaction file path, or the file of a registered dataset named instead (``schneider-50k``)."""
    if not path.exists() and str(path) in REACTION_DATASETS:
        from chemassay.data.registry import dataset_file

        return dataset_file(str(path), REACTION_DATASETS[str(path)])
    return need_file(path, "reaction")


@app.command("info")
def info_command(
    path: Path = typer.Argument(..., help="Reaction file (CSV/TSV/Parquet table, .rsmi, Schneider CSV, Pistachio JSONL), or schneider-50k (the bundled set)."),
    fmt: str = FormatOption,
) -> None:
    """Summarize a reaction file: rows, documents, years, classes, authors."""
    from chemassay.suites.reaction_ood.io import detect_format, iter_reactions

    path = _reaction_input(path)
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
    from chemassay.suites.reaction_ood.clean import CleanConfig, clean_file, config_dict

    path = _reaction_input(path)
    config = CleanConfig(max_tokens=max_tokens, dedup=dedup, remove_isotopes=not keep_isotopes)
    started = time.perf_counter()
    result_report = clean_file(path, out, config, fmt=fmt, n_jobs=n_jobs, scheduler=scheduler,
                               chunk_rows=chunk_rows, show_progress=_show_progress())
    elapsed = time.perf_counter() - started
    counts = result_report.counts()
    skipped = [SkippedItem(line=p["row"], reason=p["reason"]) for p in result_report.problems]
    result = Result(
        suite="reaction-ood", task="clean", metrics=counts, n=counts["rows_out"], skipped=skipped,
        inputs=[input_ref(path)], config={**config_dict(config), "format": fmt, "n_jobs": n_jobs},
        elapsed_s=round(elapsed, 3), read_problems=result_report.read_problems, output=str(out),
    )
    emit(result, report)
    info(f"wrote {out} ({counts['rows_out']} reactions)")


def _load_config(config: Path | None) -> tuple[dict, str | None]:
    from chemassay.suites.reaction_ood.splits import split_definition

    if config is None:
        return {}, None
    if not config.exists() and config.suffix == "" and "/" not in str(config):
        data = split_definition(str(config))
        return data, data.get("kind")
    need_file(config, "split config")
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise UserInputError(f"{config}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise UserInputError(f"{config}: a split config must be a JSON object")
    return data, data.get("kind")


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
    from chemassay.suites.reaction_ood.split_files import split_file

    need_file(path, "cleaned reaction")
    data, config_kind = _load_config(config)
    chosen = kind or config_kind
    if chosen is None:
        raise UserInputError("give the split kind with --kind (or a \"kind\" in the config)")
    if kind and config_kind and kind != config_kind:
        raise UserInputError(f"--kind {kind} contradicts \"kind\": {config_kind!r} in {config}")
    if seed is None:
        seed = data.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise UserInputError(f"{config}: 'seed' must be a whole number, got {seed!r}")
    manifest = split_file(path, out, chosen, data, seed, overwrite=overwrite)
    if not settings.quiet:
        sizes = ", ".join(f"{name} {entry['rows']}" for name, entry in manifest["parts"].items())
        console.print(f"{chosen} split of {manifest['input']['rows']} reactions: {sizes}", highlight=False, soft_wrap=True)
        console.print(f"wrote {out}/manifest.json", highlight=False, soft_wrap=True)


@app.command("split-defs")
def split_defs_command() -> None:
    """List the shipped split definitions (the paper's settings, and ones sized for Schneider 50k)."""
    from chemassay.suites.reaction_ood.splits import list_split_definitions

    for name, description in list_split_definitions().items():
        console.print(f"{name:<40} {description}", highlight=False, markup=False, soft_wrap=True)


@app.command("verify")
def verify_command(
    directory: Path = typer.Argument(..., help="A folder written by 'reaction-ood split'."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the verification result JSON here."),
) -> None:
    """Prove a split's guarantees (no shared reaction, document, author, year or class leak)."""
    from chemassay.suites.reaction_ood.verify import results_as_dicts, verify_split_dir

    started = time.perf_counter()
    manifest, results = verify_split_dir(directory)
    failed = [r for r in results if not r.passed]
    if not settings.quiet:
        for r in results:
            mark = "ok  " if r.passed else "FAIL"
            line = f"{mark} {r.description}"
            if not r.passed:
                line += f" ({r.violations} violation(s); e.g. {'; '.join(r.examples[:3])})"
            console.print(line, highlight=False, markup=False, soft_wrap=True)
    if out is not None:
        result = Result(
            suite="reaction-ood", task="verify",
            metrics={"checks": len(results), "passed": len(results) - len(failed), "failed": len(failed)},
            n=len(results), config={"kind": manifest["kind"], "split_config": manifest["config"], "seed": manifest.get("seed")},
            inputs=[input_ref(Path(directory) / "manifest.json")], elapsed_s=round(time.perf_counter() - started, 3),
            checks=results_as_dicts(results),
        )
        result.write(out)
    if failed:
        raise typer.Exit(1)
