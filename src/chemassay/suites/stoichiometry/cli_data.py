"""stoichiometry data commands: library, balance, build, build-all, build-uspto-t, build-table2, verify.

Thin callers of :mod:`chemassay.suites.stoichiometry.api`: they parse options, call it and
write or print its result.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from chemassay.cli.tools import JobsOption, SeedOption, console, emit, info, writable_out
from chemassay.contract.result import Result
from chemassay.suites.stoichiometry.api import (
    balance,
    build,
    build_all,
    build_table2,
    build_uspto_t,
    load_library,
    verify,
)

app = typer.Typer()

SourceArgument = typer.Argument(
    ..., help="Reactions: a dataset name (uspto-15k, uspto-mit), a folder with train/valid/test files, or one file."
)
LibraryOption = typer.Option(None, "--library", help="By-product library JSON (default: the shipped one; see 'library').")
MaxByproductsOption = typer.Option(6, "--max-byproducts", help="Most molecules re-balancing may add (1-6).")
LimitOption = typer.Option(None, "--limit", help="Read only the first N reactions of each split (quick runs).")


@app.command("library")
def library_command(library: Path = LibraryOption) -> None:
    """List the by-product library used to re-balance reactions (where each may be added)."""
    loaded = load_library(library)
    table = Table(title=f"{loaded.name} ({len(loaded.entries)} entries) - {loaded.path}")
    for column in ("name", "SMILES", "elements", "may be added to"):
        table.add_column(column)
    for entry in loaded.entries:
        elements = " ".join(f"{e}{c if c > 1 else ''}" for e, c in entry.counts)
        table.add_row(entry.name, entry.smiles, elements, ", ".join(entry.sides))
    console.print(table)


@app.command("balance")
def balance_command(
    source: str = SourceArgument,
    out: Path = typer.Option(None, "--out", "-o", help="Write the JSON result here."),
    library: Path = LibraryOption,
    max_byproducts: int = MaxByproductsOption,
    encoding: str = typer.Option("smiles", "--encoding", help="How bag lines ({n}X) are written: smiles or formula."),
    split: list[str] = typer.Option(None, "--split", help="Only these splits (repeatable)."),
    limit: int = LimitOption,
    details: Path = typer.Option(None, "--details", help="Write one TSV row per reaction (split, line, status, imbalance, reason)."),
    balanced_out: Path = typer.Option(None, "--balanced-out", help="Folder for the balanced reactions (USPTO-BAL), one <split>.txt of 'reactants>reagents>products' each."),
    no_rebalance: bool = typer.Option(False, "--no-rebalance", help="Only classify; do not try by-products."),
    method: str = typer.Option("library", "--method", help="library (exact by-product search) or reference (the authors' notebook: one molecule of the left-over atoms per side, charged atoms counted apart)."),
    n_jobs: int = JobsOption,
) -> None:
    """Classify every reaction as balanced or not (per element, implicit H and charge counted) and re-balance it with by-products when exactly one minimal explanation exists (USPTO-BAL, paper Table 1)."""
    writable_out(out)
    result = balance(source, library=library, max_byproducts=max_byproducts, encoding=encoding, splits=split or None,
                     limit=limit, rebalance=not no_rebalance, method=method, n_jobs=n_jobs, details=details,
                     balanced_out=balanced_out)
    emit(result, out)
    for name, row in result.details.per_split.items():
        info(f"{name}: {row.reactions} reactions, balanced {row.balanced} ({row.balanced_pct or 0:.2f}%), "
             f"re-balanced {row.rebalanced} ({row.rebalanced_pct or 0:.2f}%), usable {row.usable_pct or 0:.2f}%")


def _report_build(result: Result) -> None:
    details = result.details
    for manifest, folder in zip(details.manifests, details.folders, strict=True):
        lines = sum(v["lines"] for k, v in manifest["files"].items() if k.startswith("src-"))
        used = manifest.get("used_reactions")
        name = manifest.get("variant") or manifest.get("kind")
        origin = (f" (from {used['train']}/{used['valid']}/{used['test']} balanced train/valid/test reactions)"
                  if used else "")
        info(f"{folder}: {name}, {lines} reactions written{origin}")
    console.print(f"wrote {len(details.folders)} dataset(s) in {result.elapsed_s:.1f} s", highlight=False)


@app.command("build")
def build_command(
    source: str = SourceArgument,
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the dataset files and manifest."),
    encoding: str = typer.Option("smiles", "--encoding", help="smiles (canonical SMILES species) or formula (Hill formulas)."),
    task: str = typer.Option("t1", "--task", help="t1 (one factor for all coefficients) or t2 (a coefficient per molecule, Appendix C)."),
    aug: int = typer.Option(1, "--aug", help="Augmentations per training/validation reaction (the paper: 1 or 5)."),
    seed: int = SeedOption,
    khat: str = typer.Option("min", "--khat", help="t2 extent: min (k_hat = smallest coefficient) or reference (uniform in 1..min, the authors' notebook)."),
    test_aug: int = typer.Option(1, "--test-aug", help="Augmentations per test reaction."),
    library: Path = LibraryOption,
    max_byproducts: int = MaxByproductsOption,
    limit: int = LimitOption,
    n_jobs: int = JobsOption,
) -> None:
    """Build one ChemAlgebra dataset (src-/tgt- train, valid, test_in, test_out and the _cross splits) with a manifest; every line is checked to balance."""
    _report_build(build(source, out, encoding=encoding, task=task, aug=aug, seed=seed, khat=khat, test_aug=test_aug,
                        library=library, max_byproducts=max_byproducts, limit=limit, n_jobs=n_jobs))


@app.command("build-all")
def build_all_command(
    source: str = SourceArgument,
    out: Path = typer.Option(..., "--out", "-o", help="Root folder; one sub-folder per variant (smiles_t1_x1, ...)."),
    seed: int = SeedOption,
    khat: str = typer.Option("min", "--khat", help="t2 extent rule: min or reference."),
    test_aug: int = typer.Option(1, "--test-aug", help="Augmentations per test reaction."),
    library: Path = LibraryOption,
    max_byproducts: int = MaxByproductsOption,
    limit: int = LimitOption,
    n_jobs: int = JobsOption,
) -> None:
    """Build the eight ChemAlgebra datasets (smiles/formula x t1/t2 x x1/x5), re-balancing once."""
    _report_build(build_all(source, out, seed=seed, khat=khat, test_aug=test_aug, library=library,
                            max_byproducts=max_byproducts, limit=limit, n_jobs=n_jobs))


@app.command("build-uspto-t")
def build_uspto_t_command(
    source: str = SourceArgument,
    kind: str = typer.Option(..., "--kind", help="t1 (every molecule doubled) or t2 (one reactant copied to both sides)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for src-/tgt- files and the manifest."),
    seed: int = SeedOption,
    limit: int = LimitOption,
    n_jobs: int = JobsOption,
) -> None:
    """Build USPTO-T1 or USPTO-T2 (paper Section 3): plain SMILES with duplicated molecules, for standard reaction predictors."""
    result = build_uspto_t(source, out, kind=kind, seed=seed, limit=limit, n_jobs=n_jobs)
    console.print(f"wrote USPTO-{kind.upper()} ({result.metrics['line_pairs']} reactions) to {out} in "
                  f"{result.elapsed_s:.1f} s", highlight=False)


@app.command("build-table2")
def build_table2_command(
    source: str = SourceArgument,
    out: Path = typer.Option(..., "--out", "-o", help="Root folder; one sub-folder per test set (uspto, uspto-bal, "
                                                      "uspto-t1, uspto-t2)."),
    split: list[str] = typer.Option(None, "--split", help="Splits to write (repeatable; default: test)."),
    seed: int = SeedOption,
    library: Path = LibraryOption,
    max_byproducts: int = MaxByproductsOption,
    limit: int = LimitOption,
    n_jobs: int = JobsOption,
) -> None:
    """Build ChemAlgebra Table 2's four test sets for standard reaction predictors: as read, re-balanced (USPTO-BAL), USPTO-T1 and USPTO-T2, plain SMILES with a manifest each."""
    _report_build(build_table2(source, out, seed=seed, splits=split or ("test",), library=library,
                               max_byproducts=max_byproducts, limit=limit, n_jobs=n_jobs))


@app.command("verify")
def verify_command(
    folder: Path = typer.Argument(..., help="Dataset folder written by build, build-all (one variant) or build-uspto-t."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the JSON result here."),
    n_jobs: int = JobsOption,
) -> None:
    """Check a dataset folder: files, line counts and sha256 against its manifest, and that every ChemAlgebra reaction balances. Exit 1 on any problem."""
    writable_out(out)
    result = verify(folder, n_jobs=n_jobs)
    emit(result, out)
    if not result.metrics["ok"]:
        for problem in result.skipped[:10]:
            info(f"{problem.item} line {problem.line}: {problem.reason}")
        raise typer.Exit(1)
