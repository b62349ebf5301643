"""generation dataset and baseline commands: filter, split, train, sample."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import typer

from chemassay.clitools import JobsOption, SeedOption, console, emit, info, need_file
from chemassay.errors import UserInputError
from chemassay.report.result import DatasetRef, Result, SkippedItem, input_ref
from chemassay.runtime.files import atomic_write_text, sha256_file
from chemassay.runtime.progress import settings

app = typer.Typer()

SUITE = "generation"


def _say(text: str) -> None:
    console.print(text, highlight=False, markup=False, soft_wrap=True)


def _show_progress() -> bool | None:
    return False if settings.quiet else None


@app.command("filter")
def filter_command(
    source: Path = typer.Argument(..., help="SMILES file: one per line, or a CSV/TSV with a SMILES column."),
    out: Path = typer.Option(..., "--out", "-o", help="Write the molecules that pass every filter here (one SMILES per line)."),
    report: Path = typer.Option(None, "--report", help="Result JSON with the per-filter counts (default: OUT.filter.json)."),
    rejected: Path = typer.Option(None, "--rejected", help="Also write removed molecules as CSV: line, smiles, filter, all failures, alerts."),
    column: str = typer.Option(None, "--column", help="SMILES column of a CSV input (default: SMILES/smiles)."),
    max_ring_size: int = typer.Option(7, "--max-ring-size", help="Largest ring kept (MOSES code: 7, i.e. rings of 8+ atoms removed)."),
    no_screen: bool = typer.Option(False, "--no-screen", help="Match every MCF/PAINS pattern without the fingerprint pre-screen (slower, same result)."),
    n_jobs: int = JobsOption,
) -> None:
    """Apply the MOSES dataset filters (atoms, charge, ring size, MCF, PAINS) and count removals."""
    from chemassay.data.readers import read_smiles_file
    from chemassay.suites.generation.filters import FILTER_NAMES, filter_molecules

    started = time.perf_counter()
    need_file(source, "SMILES")
    table = read_smiles_file(source, column=column)
    summary = filter_molecules(
        table.smiles, max_ring_size=max_ring_size, screen=not no_screen, n_jobs=n_jobs,
        show_progress=_show_progress(),
    )
    atomic_write_text(out, "".join(f"{table.smiles[i]}\n" for i in summary.kept))
    if rejected is not None:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["line", "smiles", "filter", "failures", "alerts"])
        for index, verdict in enumerate(summary.verdicts):
            if not verdict.passed:
                writer.writerow([
                    table.lines[index], table.smiles[index], verdict.first_failure,
                    ";".join(verdict.failures), ";".join(verdict.alerts) or verdict.reason,
                ])
        atomic_write_text(rejected, buffer.getvalue())
    skipped = [SkippedItem(line=row["line"], reason=row["reason"]) for row in table.skipped]
    skipped += [
        SkippedItem(line=table.lines[i], item=table.smiles[i], reason=f"unparseable SMILES: {v.reason}")
        for i, v in enumerate(summary.verdicts) if v.first_failure == "parse"
    ]
    metrics: dict[str, float | int] = {
        "n_input": summary.n_input,
        "n_kept": len(summary.kept),
        "n_removed": summary.n_removed,
        "fraction_kept": len(summary.kept) / summary.n_input if summary.n_input else 0.0,
    }
    metrics.update({f"removed/{name}": summary.removed_by[name] for name in FILTER_NAMES})
    metrics.update({f"failing/{name}": summary.failing[name] for name in FILTER_NAMES})
    result = Result(
        suite=SUITE,
        task="filter",
        metrics=metrics,
        n=summary.n_input,
        skipped=skipped,
        dataset=DatasetRef(name=str(source), sha256=sha256_file(source)),
        inputs=[input_ref(source)],
        config={"max_ring_size": max_ring_size, "screen": not no_screen, "column": table.column,
                "allowed_atoms": "C N S O F Cl Br H", "order": list(FILTER_NAMES)},
        elapsed_s=round(time.perf_counter() - started, 3),
        output={"kept": str(out), "sha256": sha256_file(out), "rejected": None if rejected is None else str(rejected)},
        alert_hits=summary.alert_hits,
    )
    emit(result, report if report is not None else out.with_name(out.name + ".filter.json"))


@app.command("split")
def split_command(
    source: Path = typer.Argument(..., help="SMILES file: one per line, or a CSV/TSV with a SMILES column."),
    out_dir: Path = typer.Option(..., "--out-dir", "-o", help="Folder for train.csv, test.csv, test_scaffolds.csv, manifest.json."),
    test_fraction: float = typer.Option(0.1, "--test-fraction", help="Share of valid molecules in the random test set."),
    scaffold_test_fraction: float = typer.Option(0.1, "--scaffold-test-fraction", help="Share of valid molecules whose scaffolds are held out."),
    keep_duplicates: bool = typer.Option(False, "--keep-duplicates", help="Keep repeated molecules (default: keep the first, report the rest)."),
    column: str = typer.Option(None, "--column", help="SMILES column of a CSV input."),
    seed: int = SeedOption,
    n_jobs: int = JobsOption,
) -> None:
    """MOSES-style split: hold out random Bemis–Murcko scaffolds, then a random test set."""
    from chemassay.data.readers import read_smiles_file
    from chemassay.suites.generation.split import scaffold_split, write_split

    need_file(source, "SMILES")
    table = read_smiles_file(source, column=column)
    if not table.smiles:
        raise UserInputError(f"{source}: no SMILES to split")
    split = scaffold_split(
        table.smiles, test_fraction=test_fraction, scaffold_test_fraction=scaffold_test_fraction,
        seed=seed, deduplicate=not keep_duplicates, n_jobs=n_jobs, show_progress=_show_progress(),
    )
    for row in table.skipped:  # unreadable rows of the file itself are reported too
        split.skipped.append({"index": None, "smiles": "", "reason": row["reason"], "line": row["line"]})
    lines = list(table.lines)
    manifest = write_split(split, table.smiles, out_dir, lines=lines, input_path=source)
    if not settings.quiet:
        sizes = split.sizes
        _say(
            f"generation / split: train={sizes['train']} test={sizes['test']} "
            f"test_scaffolds={sizes['test_scaffolds']} skipped={len(split.skipped)} "
            f"held-out scaffolds={len(split.held_out_scaffolds)}\nwrote {manifest}"
        )


def _training_set(train: str, limit: int | None) -> tuple[list[str], str, str | None]:
    """SMILES, a label for default model names, and the file checksum (None for MOSES)."""
    from chemassay.suites.generation.dataset import load_smiles_set

    smiles, described = load_smiles_set(train, limit=limit)
    if not smiles:
        raise UserInputError(f"{train}: the training set is empty")
    checksum = None if described.startswith("moses:") else sha256_file(train)
    return smiles, _training_set_label(train, limit), checksum


def _train(baseline: str, smiles: list[str], *, context_len: int, n_jobs: int):
    from chemassay.suites.generation.baselines import BASELINES

    model_class = BASELINES[baseline]
    if baseline == "ngram":
        return model_class.fit(smiles, max_context_len=context_len, show_progress=_show_progress())
    return model_class.fit(smiles, n_jobs=n_jobs, show_progress=_show_progress())


def _model_options(baseline: str, context_len: int) -> dict:
    return {"ctx": context_len} if baseline == "ngram" else {}


@app.command("train")
def train_command(
    baseline: str = typer.Argument(..., help="ngram or combinatorial."),
    train: str = typer.Option("moses", "--train", help="Training SMILES: moses (the MOSES train split), moses:SPLIT, or a file."),
    limit: int = typer.Option(None, "--limit", help="Train on the first N molecules only."),
    model: Path = typer.Option(None, "--model", "-m", help="Save the model here (default: under $CHEMASSAY_HOME/models/generation)."),
    context_len: int = typer.Option(10, "--context-len", help="n-gram: longest context (MOSES: 10, so up to 11-grams)."),
    n_jobs: int = JobsOption,
) -> None:
    """Train a baseline once and save it, so that sampling does not retrain."""
    from chemassay.suites.generation.baselines import check_baseline, default_model_path

    baseline = check_baseline(baseline)
    started = time.perf_counter()
    smiles, label, checksum = _training_set(train, limit)
    fitted = _train(baseline, smiles, context_len=context_len, n_jobs=n_jobs)
    fitted.info.update({"train": train, "train_limit": limit, "train_sha256": checksum})
    target = model or default_model_path(baseline, label, **_model_options(baseline, context_len))
    fitted.save(target)
    if not settings.quiet:
        _say(
            f"generation / train {baseline}: {len(smiles)} training SMILES, "
            f"{time.perf_counter() - started:.1f} s\nwrote {target}"
        )


@app.command("sample")
def sample_command(
    baseline: str = typer.Argument(..., help="ngram or combinatorial."),
    n: int = typer.Option(30000, "--n", help="Number of samples."),
    out: Path = typer.Option(..., "--out", "-o", help="Write the samples here, one per line."),
    seed: int = SeedOption,
    model: Path = typer.Option(None, "--model", "-m", help="A model saved by 'train' (default: the one for --train, trained now if missing)."),
    train: str = typer.Option("moses", "--train", help="Training set of the default model."),
    limit: int = typer.Option(None, "--limit", help="Default model trained on the first N molecules only."),
    context_len: int = typer.Option(10, "--context-len", help="n-gram: context length of the default model."),
    max_len: int = typer.Option(100, "--max-len", help="n-gram: stop after max-len - 1 characters (MOSES: 100)."),
    join: str = typer.Option("valid", "--join", help="combinatorial: 'valid' (join only where the result is a valid molecule) or 'moses' (reference behaviour)."),
    n_jobs: int = JobsOption,
) -> None:
    """Sample SMILES from a trained baseline with a seed (reproducible draw for draw)."""
    from chemassay.suites.generation.baselines import (
        check_baseline,
        default_model_path,
        load_baseline,
    )

    baseline = check_baseline(baseline)
    if n < 0:
        raise UserInputError(f"--n must be non-negative, got {n}")
    started = time.perf_counter()
    if model is None:
        label = _training_set_label(train, limit)
        model = default_model_path(baseline, label, **_model_options(baseline, context_len))
        if not model.is_file():
            info(f"no trained {baseline} model at {model}: training it now (once)")
            smiles, _, checksum = _training_set(train, limit)
            fitted = _train(baseline, smiles, context_len=context_len, n_jobs=n_jobs)
            fitted.info.update({"train": train, "train_limit": limit, "train_sha256": checksum})
            fitted.save(model)
    generator = load_baseline(baseline, model)
    sample_started = time.perf_counter()
    if baseline == "ngram":
        samples = generator.sample(n, seed, max_len=max_len, show_progress=_show_progress())
        config = {"max_len": max_len, "l_smooth": 0.01, "context_len": generator.max_context_len}
    else:
        samples = generator.sample(n, seed, join=join, n_jobs=n_jobs, show_progress=_show_progress())
        config = {"join": join}
    sample_seconds = time.perf_counter() - sample_started
    atomic_write_text(out, "".join(f"{s}\n" for s in samples))
    manifest = {
        "kind": "chemassay generation samples",
        "baseline": baseline,
        "n": n,
        "seed": seed,
        "n_empty": sum(1 for s in samples if not s),
        "model": {"path": str(model), "sha256": sha256_file(model), "info": generator.info},
        "config": config,
        "files": {out.name: {"rows": len(samples), "sha256": sha256_file(out)}},
        "sample_seconds": round(sample_seconds, 3),
        "elapsed_s": round(time.perf_counter() - started, 3),
    }
    manifest_path = out.with_name(out.name + ".manifest.json")
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2) + "\n")
    if not settings.quiet:
        _say(
            f"generation / sample {baseline}: {n} samples, seed {seed}, {sample_seconds:.1f} s\n"
            f"wrote {out} and {manifest_path}"
        )


def _training_set_label(train: str, limit: int | None) -> str:
    if train == "moses" or train.startswith("moses:"):
        from chemassay.suites.generation.dataset import moses_split_name

        label = f"moses-{moses_split_name(train.partition(':')[2] or 'train')}"
    else:
        label = f"file{sha256_file(need_file(train, 'training SMILES'))[:12]}"
    return label if limit is None else f"{label}-first{limit}"
