"""Commands of the ``robustness`` suite that involve models: downstream robustness of a
property model, the augmented test sets to predict, and training the small SMILES LM."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import typer

from chemassay.clitools import OutOption, SeedOption, console, emit, info, need_file
from chemassay.errors import UserInputError
from chemassay.report.result import DatasetRef, Result, SkippedItem, Timer, input_ref
from chemassay.runtime.files import atomic_write_text, sha256_file
from chemassay.runtime.progress import settings

SUITE = "robustness"
DEFAULT_PROPERTY_DATA = "solubility"


def _property_file(data: str) -> tuple[Path, DatasetRef]:
    from chemassay.data import dataset_file

    if data == DEFAULT_PROPERTY_DATA:
        path = dataset_file("solubility-huuskonen", "solubility_huuskonen.csv")
        return path, DatasetRef(name="solubility-huuskonen", sha256=sha256_file(path))
    path = need_file(data, "property dataset")
    return path, DatasetRef(name=path.name, sha256=sha256_file(path))


def _augmentations(text: str) -> list[str]:
    from chemassay.suites.robustness.augment import check_kind

    return [check_kind(a.strip()) for a in text.split(",") if a.strip()]


def downstream(
    data: str = typer.Option(DEFAULT_PROPERTY_DATA, "--data",
                             help="MoleculeNet-style CSV (SMILES + targets [+ split]) or 'solubility' (bundled, measured logS)."),
    target: list[str] = typer.Option(None, "--target", "-t", help="Target column (repeatable; default: every numeric column)."),
    task: str = typer.Option("auto", "--task", help="regression | classification | auto"),
    model: str = typer.Option("baseline-fingerprint", "--model", "-m",
                              help="baseline-fingerprint | baseline-char-ngram | predictions:FILE.csv | python:module:function"),
    augmentations: str = typer.Option("canonical,explicit_h,kekulize,cycle_renumber,randomized", "--augmentations", "-a"),
    test_fraction: float = typer.Option(0.2, "--test-fraction", help="Held-out share when the CSV has no split column."),
    n_estimators: int = typer.Option(200, "--n-estimators", help="Trees of the baseline random forest."),
    seed: int = SeedOption,
    n_jobs: int = typer.Option(1, "--n-jobs", "-j", help="Worker processes (forest training, augmentation)."),
    out: Path = OutOption,
) -> None:
    """Evaluate a property model on the original test set and on each augmentation: metric and drop."""
    from chemassay.suites.robustness.downstream import (
        BASELINES,
        BaselineModel,
        CallableModel,
        PredictionFileModel,
        evaluate_downstream,
        load_callable,
        read_property_csv,
    )

    kinds = _augmentations(augmentations)
    with Timer() as timer:
        path, dataset_ref = _property_file(data)
        dataset = read_property_csv(path, targets=target or None, task=task, test_fraction=test_fraction, seed=seed)
        inputs = [input_ref(path)]
        if model in BASELINES:
            predictor = BaselineModel(model, dataset.task, seed=seed, n_estimators=n_estimators, n_jobs=n_jobs)
            predictor.fit(dataset.train_smiles, dataset.train_targets)
        elif model.startswith("predictions:"):
            prediction_file = need_file(model.split(":", 1)[1], "prediction")
            predictor = PredictionFileModel(prediction_file, dataset)
            inputs.append(input_ref(prediction_file))
        elif model.startswith("python:"):
            spec = model.split(":", 1)[1]
            predictor = CallableModel(load_callable(spec), dataset.task, len(dataset.target_names), name=spec)
        else:
            raise UserInputError(f"unknown --model {model!r}; use {', '.join(BASELINES)}, predictions:FILE or python:module:function")
        report = evaluate_downstream(dataset, predictor, kinds, seed=seed, n_jobs=1 if n_jobs < 2 else n_jobs)
    skipped = [SkippedItem(**s) for s in report.skipped]
    skipped += [SkippedItem(line=line, reason=f"malformed row: {reason}") for line, reason in dataset.malformed]
    result = Result(
        suite=SUITE, task="downstream", metrics=report.metrics, n=report.n_scored, skipped=skipped, dataset=dataset_ref,
        inputs=inputs,
        config={"model": model, "task": dataset.task, "targets": dataset.target_names, "augmentations": kinds,
                "split": dataset.split_source, "n_train": len(dataset.train_smiles), "n_test": len(dataset.test_smiles),
                "seed": seed, "n_estimators": n_estimators if model in BASELINES else None},
        elapsed_s=round(timer.elapsed, 3), table=report.table,
        classes=dataset.classes,
    )
    if not settings.quiet:
        keys = ["rmse"] if dataset.task == "regression" else ["accuracy", "roc_auc"]
        console.print("| augmentation | n | " + " | ".join(f"{k} | {k}_drop" for k in keys) + " | mean_length | levenshtein |",
                      highlight=False, markup=False)
        for row in report.table:
            cells = " | ".join(f"{row.get(k, float('nan')):.3f} | {row.get(k + '_drop', 0.0):+.3f}" for k in keys)
            console.print(f"| {row['augmentation']} | {row['n']} | {cells} | {row['mean_length']:.1f} | "
                          f"{row['levenshtein_ratio']:.3f} |", highlight=False, markup=False)
    emit(result, out)


def downstream_sets(
    data: str = typer.Option(DEFAULT_PROPERTY_DATA, "--data", help="Property CSV or 'solubility'."),
    target: list[str] = typer.Option(None, "--target", "-t"),
    augmentations: str = typer.Option("canonical,explicit_h,kekulize,cycle_renumber,randomized", "--augmentations", "-a"),
    test_fraction: float = typer.Option(0.2, "--test-fraction"),
    seed: int = SeedOption,
    out: Path = typer.Option(..., "--out", "-o", help="CSV of test SMILES to predict (augmentation,row,SMILES)."),
) -> None:
    """Write the test SMILES of every augmentation, for a prediction file (--model predictions:FILE)."""
    from chemassay.suites.robustness.augment import augment_many
    from chemassay.suites.robustness.downstream import read_property_csv

    path, _ = _property_file(data)
    dataset = read_property_csv(path, targets=target or None, test_fraction=test_fraction, seed=seed)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["augmentation", "row", "SMILES", "status"])
    for row, smiles in enumerate(dataset.test_smiles):
        writer.writerow(["original", row, smiles, "ok"])
    for kind in _augmentations(augmentations):
        for row in augment_many(dataset.test_smiles, kind, seed=seed):
            writer.writerow([kind, row.index, row.augmented or row.original, row.status])
    atomic_write_text(out, buffer.getvalue())
    info(f"wrote {out}: predict every SMILES, then pass --model predictions:FILE with columns SMILES,"
         f"{','.join(dataset.target_names)}")


def train_lm(
    data: str = typer.Option("moses", "--data", help="'moses' (registry, train split) or a CSV/CSV.gz with a SMILES column."),
    out: Path = typer.Option(..., "--out", "-o", help="Checkpoint folder to write (loadable as hf:DIR)."),
    n_train: int = typer.Option(20000, "--n-train", help="Training SMILES sampled from the data."),
    n_valid: int = typer.Option(1000, "--n-valid", help="Held-out SMILES for the validation loss."),
    steps: int = typer.Option(600, "--steps", help="Optimizer steps."),
    batch_size: int = typer.Option(32, "--batch-size"),
    layers: int = typer.Option(4, "--layers", help="Transformer layers."),
    hidden: int = typer.Option(128, "--hidden", help="Hidden size."),
    heads: int = typer.Option(4, "--heads", help="Attention heads."),
    learning_rate: float = typer.Option(5e-4, "--lr"),
    device: str = typer.Option("cpu", "--device", help="cpu or cuda."),
    seed: int = SeedOption,
    result_out: Path = typer.Option(None, "--result", help="Also write a Result JSON (validation metrics) here."),
) -> None:
    """Train a small RoBERTa-style masked language model on SMILES; save a Hugging Face checkpoint."""
    from chemassay.suites.robustness.lm import (
        LMConfig,
        read_smiles_corpus,
        sample_corpus,
        train_smiles_lm,
    )

    if hidden % heads:
        raise UserInputError(f"--hidden ({hidden}) must be a multiple of --heads ({heads})")
    with Timer() as timer:
        if data == "moses":
            from chemassay.data import dataset_file

            corpus_path = dataset_file("moses", "train.csv.gz")
        else:
            corpus_path = need_file(data, "SMILES corpus")
        corpus = read_smiles_corpus(corpus_path)
        config = LMConfig(layers=layers, hidden=hidden, heads=heads, intermediate=4 * hidden, n_train=n_train,
                          n_valid=n_valid, steps=steps, batch_size=batch_size, learning_rate=learning_rate,
                          warmup_steps=min(100, max(1, steps // 10)), seed=seed)
        train, valid = sample_corpus(corpus, n_train, n_valid, seed)
        manifest = train_smiles_lm(train, valid, out, config, device=device, data_name=f"{data} ({corpus_path.name})")
    if not settings.quiet:
        console.print(f"trained {manifest['parameters']:,} parameters in {manifest['elapsed_s']} s; "
                      f"train loss {manifest['train_loss_first']:.3f} -> {manifest['train_loss_last']:.3f}; "
                      f"validation {manifest['validation']}; checkpoint {out} (use --encoder hf:{out})", highlight=False)
    if result_out is not None:
        result = Result(
            suite=SUITE, task="train-lm", metrics={**manifest["validation"], "train_loss_last": manifest["train_loss_last"]},
            n=len(valid), dataset=DatasetRef(name=data, sha256=sha256_file(corpus_path)), inputs=[input_ref(corpus_path)],
            config=manifest["config"], elapsed_s=round(timer.elapsed, 3), checkpoint=str(out),
        )
        emit(result, result_out)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the suite's Typer app."""
    app.command("downstream")(downstream)
    app.command("downstream-sets")(downstream_sets)
    app.command("train-lm")(train_lm)
