"""CLI of the ``robustness`` suite (AMORE): a thin caller of :mod:`.api`.

Verbs: ``evaluate`` (retrieval from two embedding files, or ``--model`` over a dataset's
augmentations or over an original/augmented pair of files), ``augment``, ``downstream``,
``downstream-sets``, ``train``, ``train-gnn`` and ``captions``.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import time
from pathlib import Path

import typer

from chemassay.cli.tools import (
    OutOption,
    SeedOption,
    console,
    emit,
    finish_requests,
    info,
    writable_out,
)
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import Result
from chemassay.runtime.files import atomic_write_text, sha256_file
from chemassay.runtime.progress import settings
from chemassay.suites.robustness import api
from chemassay.suites.robustness.amore import layers_table, markdown_table
from chemassay.suites.robustness.api import _augmentation_list, _property_file
from chemassay.suites.robustness.augment import augment_many, check_kind
from chemassay.suites.robustness.captions import markdown_captions
from chemassay.suites.robustness.downstream import read_property_csv
from chemassay.suites.robustness.plots import plot_layers

app = typer.Typer(
    help="AMORE: SMILES augmentations, embedding retrieval and downstream robustness (Ganeeva et al. 2024).",
    no_args_is_help=True,
)

DEFAULT_AUGMENTATIONS_TEXT = "canonical,explicit_h,kekulize,cycle_renumber,randomized"
ModelHelp = ("Encoder spec: fingerprint[:radius=2,bits=2048,chirality=1] | char-ngram[:n=1-3,dim=4096] | hf:DIR | "
             "openai:NAME,base_url=URL | python:MODULE:CALLABLE | predictions:FILE.npz (chemassay models list)")
LayersOption = typer.Option("last", "--layers", help="last: the last hidden layer; all: every layer (0 = embeddings).")
MetricOption = typer.Option("l2", "--metric", help="l2 (squared Euclidean, as AMORE) or cosine.")
TiesOption = typer.Option("index", "--ties", help="index (lower row first, FAISS's order) | optimistic | pessimistic.")
BackendOption = typer.Option("auto", "--backend",
                             help="auto | faiss | numpy (exact ranks) | faiss-search (AMORE's own per-query FAISS search).")
KOption = typer.Option("1,5", "--k", help="Cut-offs for Acc@k (top-k), comma-separated.")
DeviceOption = typer.Option(None, "--device", help="cpu, cuda, cuda:N or auto (hf: encoders).")
BatchOption = typer.Option(None, "--batch-size", help="Strings per forward pass (hf: encoders; default 32).")
PoolingOption = typer.Option(None, "--pooling", help="mean (real tokens only) or mean-all (special tokens too, as AMORE).")
PartOption = typer.Option(None, "--part", help="Encoder-decoder models: encoder (default) or decoder states.")
MaxLengthOption = typer.Option(None, "--max-length", help="Truncate inputs to this many tokens (hf: encoders).")
BaseUrlOption = typer.Option(None, "--base-url", help="Server URL of an openai: model (else base_url= in the spec or $OPENAI_BASE_URL).")
JobsOption = typer.Option(1, "--n-jobs", "-j", help="Worker processes for augmentation (-1: all cores).")
CacheOption = typer.Option(True, "--cache/--no-cache", help="Reuse cached augmentations and embeddings.")
BootstrapOption = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the 95 % intervals (0: none).")
AugmentationsHelp = ("Comma-separated augmentations (default: canonical, explicit_h, kekulize, cycle_renumber, randomized; "
                     "cycle_renumber_amore is the paper's cycle).")


def _ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(k) for k in text.split(",") if k.strip()}))
    except ValueError:
        raise UserInputError(f"--k must be a comma-separated list of integers, got {text!r}") from None
    if not ks or ks[0] < 1:
        raise UserInputError("--k values must be positive")
    return ks


def _context(device, batch_size, pooling, part, max_length, base_url) -> dict:
    values = {"device": device, "batch_size": batch_size, "pooling": pooling, "part": part,
              "max_length": max_length, "base_url": base_url}
    return {key: value for key, value in values.items() if value is not None}


def _warn(result: Result) -> None:
    # Warnings change how the numbers must be read: shown even with --quiet.
    for message in getattr(result.details, "warnings", None) or []:
        print(f"warning: {message}", file=sys.stderr, flush=True)


def _write_per_row(result: Result, path: Path) -> None:
    """Per-molecule 0-based ranks of the true match in both directions (scored rows only)."""
    o2a = result.item_scores.get("o2a_mean_rank") or []
    a2o = result.item_scores.get("a2o_mean_rank") or []
    lines = ["id,rank_o2a,rank_a2o"] + [
        f"{item},{int(first) - 1},{int(second) - 1}"
        for item, first, second in zip(result.item_ids or [], o2a, a2o, strict=True)
    ]
    atomic_write_text(path, "\n".join(lines) + "\n")


def _evaluate_command(
    embeddings: list[Path], model: str | None, dataset: str, augmented: Path | None, augmentations: str,
    layers: str, metric: str, ties: str, backend: str, k: str, seed: int, n_jobs: int, table: Path | None,
    plot: Path | None, per_row: Path | None, check_identity: bool, drop_mismatched: bool, smiles_column: str | None,
    context: dict, cache: bool, bootstrap: int, out: Path | None,
) -> None:
    for path, what in ((out, "result"), (table, "table"), (plot, "plot"), (per_row, "per-row ranks")):
        writable_out(path, what)
    ks = _ks(k)
    if embeddings:
        if len(embeddings) != 2:
            raise UserInputError(f"give two embedding files, ORIG.npy AUG.npy (got {len(embeddings)})")
        if model is not None or augmented is not None:
            raise UserInputError("give embedding files, or --model (with --dataset/--augmented), not both")
        result = api.evaluate(str(embeddings[0]), str(embeddings[1]), metric=metric, ties=ties, backend=backend, k=ks,
                              bootstrap=bootstrap, seed=seed)
    elif model is None:
        raise UserInputError("nothing to evaluate: give ORIG.npy AUG.npy, or --model SPEC (with --dataset, "
                             "or --dataset ORIG.csv --augmented AUG.csv)")
    else:
        result = api.evaluate(
            model=model, reference=dataset, augmented=str(augmented) if augmented is not None else None,
            augmentations=augmentations, layers=layers, metric=metric, ties=ties, backend=backend, k=ks,
            check_identity=check_identity, drop_mismatched=drop_mismatched, smiles_column=smiles_column,
            n_jobs=n_jobs, cache=cache, context=context, bootstrap=bootstrap, seed=seed,
        )
    title = f"AMORE {result.dataset.name if result.dataset else 'embeddings'} - {result.model.name if result.model else ''}"
    rows = result.details.table
    per_layer = result.details.per_layer
    if rows is not None:
        if table is not None:
            atomic_write_text(table, markdown_table(rows, title))
        if not settings.quiet:
            console.print(markdown_table(rows, title), highlight=False, markup=False)
    elif table is not None:
        info("--table needs --model with a dataset (one row per augmentation); no table written")
    if per_layer is not None and not settings.quiet:
        console.print(layers_table(per_layer), highlight=False, markup=False)
    if plot is not None:
        if per_layer is None:
            info("--plot needs --layers all (and a model with several layers); no plot written")
        else:
            plot_layers(per_layer, plot, title=title)
    if per_row is not None:
        if rows is not None:
            info("--per-row needs a single pair (embedding files or --augmented); no ranks written")
        else:
            _write_per_row(result, per_row)
    _warn(result)
    emit(result, out)
    finish_requests(result.requests)


@app.command()
def evaluate(
    embeddings: list[Path] = typer.Argument(None, help="ORIG.npy AUG.npy: precomputed embeddings, row i = same molecule.",
                                            show_default=False),
    model: str = typer.Option(None, "--model", "-m", help=ModelHelp),
    dataset: str = typer.Option("chebi20", "--dataset", "-d",
                                help="With --model: chebi20 (3,300), isomers (918), or a CSV/TSV with a SMILES column."),
    augmented: Path = typer.Option(None, "--augmented",
                                   help="Score this augmented file against --dataset ORIG.csv (row i = same molecule)."),
    augmentations: str = typer.Option(DEFAULT_AUGMENTATIONS_TEXT, "--augmentations", "-a", help=AugmentationsHelp),
    layers: str = LayersOption, metric: str = MetricOption, ties: str = TiesOption, backend: str = BackendOption,
    k: str = KOption, seed: int = SeedOption, n_jobs: int = JobsOption,
    table: Path = typer.Option(None, "--table", help="Write the Markdown table (paper's Tables 1-2 layout) here."),
    plot: Path = typer.Option(None, "--plot", help="With --layers all: the layer-wise plot (Fig. 3), both directions."),
    per_row: Path = typer.Option(None, "--per-row", help="For one pair: per-molecule ranks (0-based) as CSV."),
    check_identity: bool = typer.Option(True, "--check-identity/--no-check-identity",
                                        help="For --augmented: check row i of both files is the same molecule (warns)."),
    drop_mismatched: bool = typer.Option(False, "--drop-mismatched", help="Leave out pairs that are not the same molecule."),
    smiles_column: str = typer.Option(None, "--smiles-column", help="Name of the SMILES column."),
    device: str = DeviceOption, batch_size: int = BatchOption, pooling: str = PoolingOption, part: str = PartOption,
    max_length: int = MaxLengthOption, base_url: str = BaseUrlOption, cache: bool = CacheOption,
    bootstrap: int = BootstrapOption, out: Path = OutOption,
) -> None:
    """AMORE retrieval: Acc@k and MRR in both directions, from embedding files or a --model.

    \b
    chemassay robustness evaluate ORIG.npy AUG.npy
    chemassay robustness evaluate --model fingerprint --dataset isomers --table t.md
    chemassay robustness evaluate --model hf:DIR --dataset ORIG.csv --augmented AUG.csv
    """
    _evaluate_command(list(embeddings or []), model, dataset, augmented, augmentations, layers, metric, ties,
                      backend, k, seed, n_jobs, table, plot, per_row, check_identity, drop_mismatched, smiles_column,
                      _context(device, batch_size, pooling, part, max_length, base_url), cache, bootstrap, out)


@app.command()
def augment(
    input_file: str = typer.Argument(..., help="CSV/TSV with a SMILES column, or a dataset name (chebi20, isomers)."),
    kind: str = typer.Option(..., "--kind", "-k",
                             help="canonical | explicit_h | kekulize | cycle_renumber | randomized | cycle_renumber_amore"),
    out: Path = typer.Option(..., "--out", "-o", help="Output CSV (row,id,SMILES,original,status,reason)."),
    seed: int = SeedOption,
    smiles_column: str = typer.Option(None, "--smiles-column", help="Name of the SMILES column."),
    n_jobs: int = JobsOption,
    use_inchikey: bool = typer.Option(True, "--inchikey/--no-inchikey", help="Also compare InChIKeys in the identity check."),
) -> None:
    """Write an augmented copy of a molecule file; every row is identity-checked.

    Rows the augmentation cannot be applied to keep their SMILES with status
    ``not_applicable``; rows that fail (unparsable input, or an output that is a different
    molecule) have status ``failed`` and a reason. A manifest ``OUT.manifest.json`` records
    the counts, the seed and the sha256 of input and output.
    """
    writable_out(out, "augmented file")
    manifest_path = out.with_name(out.name + ".manifest.json")
    writable_out(manifest_path, "manifest")
    check_kind(kind)
    started = time.perf_counter()
    augmented = api.augment(input_file, kind, seed=seed, n_jobs=n_jobs, use_inchikey=use_inchikey,
                            smiles_column=smiles_column)
    atomic_write_text(out, augmented.to_csv())
    manifest = {**augmented.manifest(), "output": str(out), "output_sha256": sha256_file(out),
                "elapsed_s": round(time.perf_counter() - started, 2)}
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2) + "\n")
    counts = augmented.counts()
    if not settings.quiet:
        console.print(f"{kind}: {counts['ok']} ok, {counts['not_applicable']} not applicable, {counts['failed']} failed, "
                      f"{len(augmented.malformed)} malformed input rows -> {out} ({manifest_path.name})", highlight=False)
        for problem in augmented.problems()[:5]:
            console.print(f"  line {problem['line']}: {problem['status']}: {problem['reason']}", highlight=False, markup=False)


@app.command()
def downstream(
    data: str = typer.Option("solubility", "--data",
                             help="MoleculeNet-style CSV (SMILES + targets [+ split]) or 'solubility' (bundled, measured logS)."),
    target: list[str] = typer.Option(None, "--target", "-t", help="Target column (repeatable; default: every numeric column)."),
    task: str = typer.Option("auto", "--task", help="regression | classification | auto"),
    model: str = typer.Option("rf-fingerprint", "--model", "-m",
                              help="Property-predictor spec: rf-fingerprint | rf-char-ngram (random forests trained here) | "
                                   "predictions:FILE.csv | python:MODULE:CALLABLE"),
    augmentations: str = typer.Option(DEFAULT_AUGMENTATIONS_TEXT, "--augmentations", "-a", help=AugmentationsHelp),
    test_fraction: float = typer.Option(0.2, "--test-fraction", help="Held-out share when the CSV has no split column."),
    n_estimators: int = typer.Option(200, "--n-estimators", help="Trees of the random-forest models."),
    smiles_column: str = typer.Option(None, "--smiles-column", help="Name of the SMILES column."),
    seed: int = SeedOption,
    n_jobs: int = typer.Option(1, "--n-jobs", "-j", help="Worker processes (forest training, augmentation)."),
    bootstrap: int = BootstrapOption,
    out: Path = OutOption,
) -> None:
    """Evaluate a property model on the original test set and on each augmentation: metric and drop."""
    writable_out(out, "result")
    result = api.downstream(model, data, targets=target or None, task=task, augmentations=augmentations,
                            test_fraction=test_fraction, n_estimators=n_estimators, smiles_column=smiles_column,
                            n_jobs=n_jobs, bootstrap=bootstrap, seed=seed)
    if not settings.quiet:
        keys = ["rmse"] if result.config["task"] == "regression" else ["accuracy", "roc_auc"]
        console.print("| augmentation | n | " + " | ".join(f"{k} | {k}_drop" for k in keys) + " | mean_length | levenshtein_ratio |",
                      highlight=False, markup=False)
        for row in result.details.table:
            cells = " | ".join(f"{_number(row.get(k)):.3f} | {_number(row.get(k + '_drop'), 0.0):+.3f}" for k in keys)
            console.print(f"| {row['augmentation']} | {row['n']} | {cells} | {_number(row['mean_length']):.1f} | "
                          f"{_number(row['levenshtein_ratio']):.3f} |", highlight=False, markup=False)
    _warn(result)
    emit(result, out)


def _number(value, default: float = float("nan")) -> float:
    return default if value is None else float(value)


@app.command("downstream-sets")
def downstream_sets(
    data: str = typer.Option("solubility", "--data", help="Property CSV or 'solubility'."),
    target: list[str] = typer.Option(None, "--target", "-t"),
    augmentations: str = typer.Option(DEFAULT_AUGMENTATIONS_TEXT, "--augmentations", "-a", help=AugmentationsHelp),
    test_fraction: float = typer.Option(0.2, "--test-fraction"),
    seed: int = SeedOption,
    out: Path = typer.Option(..., "--out", "-o", help="CSV of test SMILES to predict (augmentation,row,SMILES,status)."),
) -> None:
    """Write the test SMILES of every augmentation, for a prediction file (--model predictions:FILE)."""
    writable_out(out, "SMILES list")
    kinds = _augmentation_list(augmentations)
    path, _ = _property_file(data)
    dataset = read_property_csv(path, targets=target or None, test_fraction=test_fraction, seed=seed)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["augmentation", "row", "SMILES", "status"])
    for row, smiles in enumerate(dataset.test_smiles):
        writer.writerow(["original", row, smiles, "ok"])
    for kind in kinds:
        for row in augment_many(dataset.test_smiles, kind, seed=seed):
            writer.writerow([kind, row.index, row.augmented or row.original, row.status])
    atomic_write_text(out, buffer.getvalue())
    columns = "prediction" if len(dataset.target_names) == 1 else ",".join(f"prediction_{t}" for t in dataset.target_names)
    info(f"wrote {out}: predict every SMILES, then pass --model predictions:FILE.csv with columns SMILES,{columns}")


def _train_command(data: str, out: Path, family: str, n_train: int, n_valid: int, steps: int, steps_per_epoch: int,
                   batch_size: int, layers: int, hidden: int, heads: int, learning_rate: float, device: str,
                   threads: int | None, max_minutes: float | None, seed: int, result_out: Path | None) -> None:
    writable_out(result_out, "result")
    result = api.train(out, family=family, data=data, n_train=n_train, n_valid=n_valid, steps=steps,
                       steps_per_epoch=steps_per_epoch, batch_size=batch_size, layers=layers, hidden=hidden,
                       heads=heads, learning_rate=learning_rate, device=device, threads=threads,
                       max_minutes=max_minutes, seed=seed)
    if not settings.quiet:
        console.print(train_summary(result), highlight=False, markup=False)
    if result_out is not None:
        result.write(result_out)
        info(f"wrote {result_out}")


def train_summary(result: Result) -> str:
    """The readable console summary of a training run (what ``train`` and ``train-gnn`` print)."""
    metrics, config, run = result.metrics, result.config, result.details
    family = run.family
    what = "graph neural network" if family == "gnn" else f"{family} SMILES language model"
    if not run.finished:
        return (f"trained {run.epochs_done} epochs of the {what} in this piece; "
                f"run the same command again to continue ({run.checkpoint})")
    steps = (f"{config.get('steps')} steps of {config.get('batch_size')}" if family != "gnn"
             else f"{run.epochs_done} epochs of {config.get('steps_per_epoch')} steps")
    lines = [
        f"trained a {config.get('layers')}-layer {what} ({_number(run.parameters):,.0f} parameters) "
        f"on {run.n_train:,} molecules in {run.train_seconds:.1f} s of training ({steps}, {config.get('device')})",
    ]
    if "train_loss_first" in metrics:
        lines.append(f"  training loss      {_number(metrics.get('train_loss_first')):.3f} -> "
                     f"{_number(metrics.get('train_loss_last')):.3f} (first -> last epoch)")
    for loss_key, accuracy_key, label in (("mlm_loss", "masked_accuracy", "masked-LM loss"),
                                          ("clm_loss", "next_token_accuracy", "next-token loss"),
                                          ("denoising_loss", "reconstruction_accuracy", "denoising loss")):
        if loss_key in metrics:
            lines.append(f"  validation ({result.n:,} SMILES): {label} {_number(metrics[loss_key]):.3f}, "
                         f"perplexity {_number(metrics['perplexity']):.2f}, "
                         f"token accuracy {100 * _number(metrics[accuracy_key]):.1f} %")
    if "valid_rmse" in metrics:
        lines.append(f"  validation ({result.n:,} molecules): RMSE {_number(metrics['valid_rmse']):.3f}")
    lines.append(f"  checkpoint         {run.checkpoint}")
    kind = "gnn" if family == "gnn" else "hf"
    lines.append(f"  score it with      chemassay robustness evaluate --model {kind}:{run.checkpoint} --dataset isomers")
    return "\n".join(lines)


TrainData = typer.Option("moses", "--data", help="'moses' (registry, train split) or a SMILES file (CSV with a SMILES column, or one per line).")
TrainOut = typer.Option(..., "--out", "-o", help="Checkpoint folder to write (loadable as hf:DIR).")


@app.command()
def train(
    data: str = TrainData, out: Path = TrainOut,
    family: str = typer.Option("encoder", "--family",
                               help="encoder (RoBERTa masked LM) | decoder (GPT-2 causal LM) | encoder-decoder (BART denoiser)."),
    n_train: int = typer.Option(20000, "--n-train", help="Training SMILES sampled from the data."),
    n_valid: int = typer.Option(1000, "--n-valid", help="Held-out SMILES for the validation loss."),
    steps: int = typer.Option(600, "--steps", help="Optimizer steps."),
    steps_per_epoch: int = typer.Option(100, "--steps-per-epoch", help="Steps between checkpoints (resumable epochs)."),
    batch_size: int = typer.Option(32, "--batch-size"),
    layers: int = typer.Option(4, "--layers", help="Transformer layers (each side for encoder-decoder)."),
    hidden: int = typer.Option(128, "--hidden", help="Hidden size."),
    heads: int = typer.Option(4, "--heads", help="Attention heads."),
    learning_rate: float = typer.Option(5e-4, "--lr"),
    device: str = typer.Option("cpu", "--device", help="cpu, cuda or auto (bf16 mixed precision on a GPU)."),
    threads: int = typer.Option(None, "--threads", help="CPU threads for torch (default: torch's choice)."),
    max_minutes: float = typer.Option(None, "--max-minutes", help="Train one piece this long; run again to resume."),
    seed: int = SeedOption,
    result_out: Path = typer.Option(None, "--result", help="Also write the Result JSON (validation metrics) here."),
) -> None:
    """Train a small SMILES language model (encoder, decoder or encoder-decoder); save a Hugging Face checkpoint."""
    _train_command(data, out, family, n_train, n_valid, steps, steps_per_epoch, batch_size, layers, hidden, heads,
                   learning_rate, device, threads, max_minutes, seed, result_out)


@app.command("train-gnn")
def train_gnn(
    out: Path = typer.Option(..., "--out", "-o", help="Folder to write (loadable as gnn:DIR)."),
    data: str = typer.Option("solubility", "--data", help="'solubility' (bundled measured logS) or a property CSV."),
    target: str = typer.Option("logS", "--target", "-t", help="Regression target column."),
    hidden: int = typer.Option(128, "--hidden"), layers: int = typer.Option(4, "--layers"),
    epochs: int = typer.Option(60, "--epochs"), steps_per_epoch: int = typer.Option(32, "--steps-per-epoch"),
    batch_size: int = typer.Option(32, "--batch-size"), learning_rate: float = typer.Option(1e-3, "--lr"),
    device: str = typer.Option("cpu", "--device", help="cpu, cuda or auto."),
    threads: int = typer.Option(None, "--threads"),
    max_minutes: float = typer.Option(None, "--max-minutes", help="Train one piece this long; run again to resume."),
    seed: int = SeedOption,
    result_out: Path = typer.Option(None, "--result", help="Also write the Result JSON here."),
) -> None:
    """Train the graph neural network on a property (AMORE's GNN row); an encoder invariant to every rewrite."""
    writable_out(result_out, "result")
    result = api.train_gnn(out, data=data, target=target, hidden=hidden, layers=layers, epochs=epochs,
                           steps_per_epoch=steps_per_epoch, batch_size=batch_size, learning_rate=learning_rate,
                           device=device, threads=threads, max_minutes=max_minutes, seed=seed)
    if not settings.quiet:
        console.print(train_summary(result), highlight=False, markup=False)
    if result_out is not None:
        result.write(result_out)
        info(f"wrote {result_out}")


@app.command()
def captions(
    predictions: Path = typer.Argument(..., help="Table with id, augmentation, prediction [, SMILES, reference]."),
    references: Path = typer.Option(None, "--references", help="Gold captions: a table with id (or CID) and description."),
    retrieval: Path = typer.Option(None, "--retrieval", help="AMORE evaluate result JSON of the same model and molecules."),
    meteor: bool = typer.Option(True, "--meteor/--no-meteor", help="Compute METEOR (needs WordNet; see docs)."),
    table: Path = typer.Option(None, "--table", help="Write the Markdown table (Tables 3 and 11 columns) here."),
    bootstrap: int = BootstrapOption, seed: int = SeedOption, out: Path = OutOption,
) -> None:
    """Captioning metrics per rewrite (ROUGE, METEOR), their correlation with retrieval, string analysis."""
    writable_out(out, "result")
    writable_out(table, "table")
    result = api.captions(predictions, references=references, retrieval=retrieval, meteor=meteor,
                          bootstrap=bootstrap, seed=seed)
    text = markdown_captions(result.details.table, f"captions - {predictions.name}")
    if table is not None:
        atomic_write_text(table, text)
    if not settings.quiet:
        console.print(text, highlight=False, markup=False)
    _warn(result)
    emit(result, out)
