"""stoichiometry data commands: library, balance, build, build-all, build-uspto-t, verify."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import typer

from chemassay.clitools import JobsOption, SeedOption, console, emit, info
from chemassay.errors import UserInputError
from chemassay.report.result import DatasetRef, Result, SkippedItem
from chemassay.runtime.files import atomic_writer

app = typer.Typer()

SourceArgument = typer.Argument(
    ..., help="Reactions: a dataset name (uspto-15k, uspto-mit), a folder with train/valid/test files, or one file."
)
LibraryOption = typer.Option(None, "--library", help="By-product library JSON (default: the shipped one; see 'library').")
MaxByproductsOption = typer.Option(6, "--max-byproducts", help="Most molecules re-balancing may add (1-6).")
LimitOption = typer.Option(None, "--limit", help="Read only the first N reactions of each split (quick runs).")

# The paper's Table 1 (USPTO-MIT): balanced, re-balanced and USPTO-BAL percentages per split.
PAPER_TABLE_1 = {
    "train": {"total": 409035, "balanced": 4.59, "rebalanced": 39.66, "usable": 44.26},
    "valid": {"total": 30000, "balanced": 4.31, "rebalanced": 39.56, "usable": 43.87},
    "test": {"total": 40000, "balanced": 4.52, "rebalanced": 39.93, "usable": 44.45},
}


def _config(library: Path | None, max_byproducts: int, encoding: str = "smiles", **extra):
    from chemassay.suites.stoichiometry.prepare import RebalanceConfig

    if not 1 <= max_byproducts <= 6:
        raise UserInputError(f"--max-byproducts must be between 1 and 6, got {max_byproducts}")
    if encoding not in ("smiles", "formula"):
        raise UserInputError(f"--encoding must be 'smiles' or 'formula', got {encoding!r}")
    return RebalanceConfig(str(library) if library else None, max_byproducts, encoding, **extra)


def _source_info(source) -> dict:
    return {
        "name": source.name,
        "dataset": source.dataset,
        "files": [{"split": f.split, "path": f.describe(), "sha256": ref.sha256}
                  for f, ref in zip(source.files, _refs_by_file(source), strict=True)],
    }


def _refs_by_file(source) -> list:
    refs = {ref.path: ref for ref in source.input_refs()}
    return [refs[str(f.path)] for f in source.files]


@app.command("library")
def library_command(library: Path = LibraryOption) -> None:
    """List the by-product library used to re-balance reactions (where each may be added)."""
    from rich.table import Table

    from chemassay.suites.stoichiometry.library import load_library

    loaded = load_library(library)
    table = Table(title=f"{loaded.name} ({len(loaded.entries)} entries) - {loaded.path}")
    for column in ("name", "SMILES", "elements", "may be added to"):
        table.add_column(column)
    for entry in loaded.entries:
        elements = " ".join(f"{e}{c if c > 1 else ''}" for e, c in entry.counts)
        table.add_row(entry.name, entry.smiles, elements, ", ".join(entry.sides))
    console.print(table)


def balance_metrics(processed) -> tuple[dict, dict]:
    """Table-1 metrics (overall) and per-split rows of a processed source."""
    def row(counts: dict[str, int]) -> dict:
        total = sum(counts.values())
        usable = counts["balanced"] + counts["rebalanced"]
        return {
            "total": total, **counts, "usable": usable,
            "balanced_pct": 100 * counts["balanced"] / total if total else None,
            "rebalanced_pct": 100 * counts["rebalanced"] / total if total else None,
            "usable_pct": 100 * usable / total if total else None,
        }

    return row(processed.counts()), {split: row(processed.counts(split)) for split in processed.outcomes}


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
    from chemassay.suites.stoichiometry.inputs import resolve_source
    from chemassay.suites.stoichiometry.prepare import process_source

    started = time.perf_counter()
    resolved = resolve_source(source)
    if method not in ("library", "reference"):
        raise UserInputError(f"--method must be 'library' or 'reference', got {method!r}")
    config = _config(library, max_byproducts, encoding, rebalance=not no_rebalance, method=method)
    processed = process_source(resolved, config, splits=split or None, limit=limit, n_jobs=n_jobs)
    overall, per_split = balance_metrics(processed)
    outcomes = [o for group in processed.outcomes.values() for o in group]
    element_counts = Counter(e for o in outcomes if o.status != "invalid" for e in o.elements)
    explanations = Counter(o.reason for o in outcomes if o.status == "rebalanced")
    unexplained = Counter(o.reason for o in outcomes if o.status == "unexplained")
    skipped = [SkippedItem(line=o.line, item=o.split, reason=o.reason) for o in outcomes if o.status == "invalid"]
    if details:
        with atomic_writer(details) as handle:
            handle.write("split\tline\tstatus\timbalance\troles\treason\n")
            for o in outcomes:
                handle.write(f"{o.split}\t{o.line}\t{o.status}\t{o.delta}\t{o.roles}\t{o.reason}\n")
    if balanced_out:
        _write_balanced(processed, balanced_out)
    metrics = {
        "reactions": overall["total"], "balanced": overall["balanced"], "rebalanced": overall["rebalanced"],
        "ambiguous": overall["ambiguous"], "unexplained": overall["unexplained"], "invalid": overall["invalid"],
        "balanced_pct": overall["balanced_pct"], "rebalanced_pct": overall["rebalanced_pct"],
        "usable_pct": overall["usable_pct"],
    }
    result = Result(
        suite="stoichiometry", task="balance", metrics=metrics, n=overall["total"] - overall["invalid"],
        skipped=skipped, dataset=DatasetRef(name=resolved.dataset) if resolved.dataset else None,
        inputs=resolved.input_refs(),
        config={"library": processed.library.describe(), "max_byproducts": max_byproducts, "encoding": encoding,
                "rebalance": not no_rebalance, "method": method, "splits": list(processed.outcomes), "limit": limit},
        elapsed_s=time.perf_counter() - started,
        per_split=per_split,
        element_imbalance=dict(element_counts.most_common()),
        top_explanations=dict(explanations.most_common(30)),
        top_unexplained=dict(unexplained.most_common(15)),
        paper_table_1_uspto_mit=PAPER_TABLE_1,
    )
    emit(result, out)
    for name, row in per_split.items():
        info(f"{name}: {row['total']} reactions, balanced {row['balanced']} ({row['balanced_pct'] or 0:.2f}%), "
                 f"re-balanced {row['rebalanced']} ({row['rebalanced_pct'] or 0:.2f}%), usable {row['usable_pct'] or 0:.2f}%")


def _write_balanced(processed, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for split, outcomes in processed.outcomes.items():
        with atomic_writer(folder / f"{split}.txt") as handle:
            for outcome in outcomes:
                reaction = outcome.reaction
                if reaction is None:
                    continue
                fields = [
                    ".".join(key for key, m in side for _ in range(m))
                    for side in (reaction.reactants, reaction.reagents, reaction.products)
                ]
                handle.write(">".join(fields) + "\n")


def _variant_configs(encodings, tasks, augs, seed, khat, test_aug):
    from chemassay.suites.stoichiometry.variants import VariantConfig

    try:
        return [VariantConfig(e, t, a, seed=seed, khat=khat, test_aug=test_aug)
                for e in encodings for t in tasks for a in augs]
    except ValueError as exc:
        raise UserInputError(str(exc)) from None


def _build(source: str, configs, folders, library, max_byproducts, limit, n_jobs) -> list[dict]:
    from chemassay.suites.stoichiometry.inputs import resolve_source
    from chemassay.suites.stoichiometry.prepare import process_source
    from chemassay.suites.stoichiometry.variants import build_variants

    resolved = resolve_source(source)
    for split in ("train", "valid", "test"):
        resolved.split(split)
    processed = process_source(resolved, _config(library, max_byproducts), limit=limit, n_jobs=n_jobs)
    if not processed.usable("train"):
        raise UserInputError(f"{source}: no balanced or re-balanced training reaction to build from")
    return build_variants(processed, configs, folders, source_info=_source_info(resolved), n_jobs=n_jobs)


def _report_build(manifests: list[dict], folders: list[Path], started: float) -> None:
    for manifest, folder in zip(manifests, folders, strict=True):
        lines = sum(v["lines"] for k, v in manifest["files"].items() if k.startswith("src-"))
        used = manifest["used_reactions"]
        info(f"{folder}: {manifest['variant']}, {lines} reactions written "
             f"(from {used['train']}/{used['valid']}/{used['test']} balanced train/valid/test reactions)")
    console.print(f"wrote {len(folders)} dataset(s) in {time.perf_counter() - started:.1f} s", highlight=False)


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
    started = time.perf_counter()
    configs = _variant_configs([encoding], [task], [aug], seed, khat, test_aug)
    manifests = _build(source, configs, [out], library, max_byproducts, limit, n_jobs)
    _report_build(manifests, [out], started)


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
    from chemassay.suites.stoichiometry.variants import AUGMENTATIONS, ENCODINGS, TASKS

    started = time.perf_counter()
    configs = _variant_configs(ENCODINGS, TASKS, AUGMENTATIONS, seed, khat, test_aug)
    folders = [out / config.name for config in configs]
    manifests = _build(source, configs, folders, library, max_byproducts, limit, n_jobs)
    _report_build(manifests, folders, started)


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
    from chemassay.suites.stoichiometry.inputs import resolve_source
    from chemassay.suites.stoichiometry.prepare import process_source
    from chemassay.suites.stoichiometry.variants import write_uspto_t

    if kind not in ("t1", "t2"):
        raise UserInputError(f"--kind must be 't1' or 't2', got {kind!r}")
    started = time.perf_counter()
    resolved = resolve_source(source)
    processed = process_source(resolved, _config(None, 6, rebalance=False, keep_original=True), limit=limit, n_jobs=n_jobs)
    manifest = write_uspto_t(processed, kind, out, seed=seed, source_info=_source_info(resolved))
    lines = sum(v["lines"] for k, v in manifest["files"].items() if k.startswith("src-"))
    console.print(f"wrote USPTO-{kind.upper()} ({lines} reactions) to {out} in {time.perf_counter() - started:.1f} s",
                  highlight=False)


@app.command("verify")
def verify_command(
    folder: Path = typer.Argument(..., help="Dataset folder written by build, build-all (one variant) or build-uspto-t."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the JSON result here."),
    n_jobs: int = JobsOption,
) -> None:
    """Check a dataset folder: files, line counts and sha256 against its manifest, and that every ChemAlgebra reaction balances. Exit 1 on any problem."""
    from chemassay.suites.stoichiometry.verify import verify_folder

    if not folder.is_dir():
        raise UserInputError(f"{folder}: no such dataset folder")
    started = time.perf_counter()
    report = verify_folder(folder, n_jobs=n_jobs)
    result = Result(
        suite="stoichiometry", task="verify",
        metrics={"ok": report.ok, "files_checked": report.files_checked, "pairs_checked": report.pairs_checked,
                 "problems": len(report.problems)},
        n=report.pairs_checked,
        skipped=[SkippedItem(line=p["line"], item=p["file"], reason=p["reason"]) for p in report.problems],
        config={"folder": str(folder), "kind": report.manifest.get("kind"), "variant": report.manifest.get("variant")},
        elapsed_s=time.perf_counter() - started,
    )
    emit(result, out)
    if not report.ok:
        for problem in report.problems[:10]:
            info(f"{problem['file']} line {problem['line']}: {problem['reason']}")
        raise typer.Exit(1)
