"""CLI of the ``robustness`` suite (AMORE): augment, retrieve, run, downstream, train-lm.

The retrieval commands live here; downstream robustness and language-model training are
in :mod:`.cli_models`, merged into one Typer app.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import typer

from chemassay.clitools import OutOption, SeedOption, console, emit, info, need_file
from chemassay.errors import UserInputError
from chemassay.report.result import DatasetRef, Result, SkippedItem, Timer, input_ref
from chemassay.runtime.files import atomic_write_text, sha256_file
from chemassay.runtime.progress import settings

app = typer.Typer(
    help="AMORE: SMILES augmentations, embedding retrieval and downstream robustness (Ganeeva et al. 2024).",
    no_args_is_help=True,
)

SUITE = "robustness"
EncoderOption = typer.Option("fingerprint", "--encoder", "-e",
                             help="fingerprint[:radius=2,bits=2048,chirality=1] | char-ngram[:n=1-3,dim=4096] | hf:PATH")
LayersOption = typer.Option("last", "--layers", help="last: the last hidden layer; all: every layer (0 = embeddings).")
MetricOption = typer.Option("l2", "--metric", help="l2 (squared Euclidean, as AMORE) or cosine.")
TiesOption = typer.Option("index", "--ties", help="index (lower row first, FAISS's order) | optimistic | pessimistic.")
BackendOption = typer.Option("auto", "--backend",
                             help="auto | faiss | numpy (exact ranks) | faiss-search (AMORE's own per-query FAISS search).")
DeviceOption = typer.Option("cpu", "--device", help="cpu, cuda, cuda:N or auto (hf: encoders).")
BatchOption = typer.Option(32, "--batch-size", help="Strings per forward pass (hf: encoders).")
PoolingOption = typer.Option("mean", "--pooling", help="mean (real tokens only) or mean-all (special tokens too, as AMORE).")
PartOption = typer.Option("auto", "--part", help="Encoder-decoder models: encoder (default) or decoder states.")
MaxLengthOption = typer.Option(None, "--max-length", help="Truncate inputs to this many tokens (hf: encoders).")
JobsOption = typer.Option(1, "--n-jobs", "-j", help="Worker processes for augmentation (-1: all cores).")
CacheOption = typer.Option(True, "--cache/--no-cache", help="Reuse cached augmentations and embeddings.")


def _encoder(spec: str, device: str, batch_size: int, pooling: str, part: str, max_length: int | None):
    from chemassay.suites.robustness.encoders import make_encoder

    return make_encoder(spec, device=device, batch_size=batch_size, pooling=pooling, part=part, max_length=max_length)


def _ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(k) for k in text.split(",") if k.strip()}))
    except ValueError:
        raise UserInputError(f"--k must be a comma-separated list of integers, got {text!r}") from None
    if not ks or ks[0] < 1:
        raise UserInputError("--k values must be positive")
    return ks


@app.command()
def augment(
    input_file: Path = typer.Argument(..., help="CSV/TSV with a SMILES column (or a shipped dataset: chebi20, isomers)."),
    kind: str = typer.Option(..., "--kind", "-k", help="canonical | explicit_h | kekulize | cycle_renumber | randomized"),
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
    from chemassay.suites.robustness.amore import rows_to_csv
    from chemassay.suites.robustness.augment import augment_many, check_kind
    from chemassay.suites.robustness.datasets import SHIPPED, read_molecules, shipped_dataset

    check_kind(kind)
    with Timer() as timer:
        if str(input_file) in SHIPPED and not input_file.exists():
            table, malformed = shipped_dataset(str(input_file)), []
        else:
            table, malformed = read_molecules(need_file(input_file, "molecule"), smiles_column=smiles_column)
        rows = augment_many(table.smiles, kind, seed=seed, n_jobs=n_jobs, use_inchikey=use_inchikey)
        atomic_write_text(out, rows_to_csv(rows, table.ids))
    counts = {status: sum(r.status == status for r in rows) for status in ("ok", "not_applicable", "failed")}
    problems = [{"line": table.lines[r.index], "id": table.ids[r.index], "status": r.status, "reason": r.reason}
                for r in rows if not r.ok]
    problems += [{"line": line, "status": "malformed", "reason": reason} for line, reason in malformed]
    manifest = {
        "suite": SUITE, "kind": kind, "seed": seed, "input": str(table.path), "input_sha256": table.file_sha256(),
        "output": str(out), "output_sha256": sha256_file(out), "rows": len(rows), "counts": counts,
        "malformed_input_rows": len(malformed), "identity_check": "canonical SMILES" + (" + InChIKey" if use_inchikey else ""),
        "problems": problems, "elapsed_s": round(timer.elapsed, 2),
    }
    manifest_path = out.with_name(out.name + ".manifest.json")
    atomic_write_text(manifest_path, json.dumps(manifest, indent=2) + "\n")
    if not settings.quiet:
        console.print(f"{kind}: {counts['ok']} ok, {counts['not_applicable']} not applicable, {counts['failed']} failed, "
                      f"{len(malformed)} malformed input rows -> {out} ({manifest_path.name})", highlight=False)
        for problem in problems[:5]:
            console.print(f"  line {problem['line']}: {problem['status']}: {problem['reason']}", highlight=False, markup=False)


def _read_pair(original: Path, augmented: Path, smiles_column: str | None):
    from chemassay.suites.robustness.amore import rows_from_csv
    from chemassay.suites.robustness.augment import AugmentedRow
    from chemassay.suites.robustness.datasets import read_molecules

    orig_table, orig_bad = read_molecules(need_file(original, "original molecules"), smiles_column=smiles_column)
    aug_table, aug_bad = read_molecules(need_file(augmented, "augmented molecules"), smiles_column=smiles_column,
                                        keep_columns=("status", "reason", "original"))
    if orig_bad or aug_bad:
        where = f"{original}" if orig_bad else f"{augmented}"
        line, reason = (orig_bad or aug_bad)[0]
        raise UserInputError(f"{where}: line {line}: {reason}; original and augmented rows must stay aligned, fix the file")
    if len(orig_table) != len(aug_table):
        raise UserInputError(
            f"{augmented}: {len(aug_table)} rows but {original} has {len(orig_table)}; row i of both files "
            "must be the same molecule"
        )
    if "status" in aug_table.columns:
        rows = rows_from_csv(augmented.read_text(encoding="utf-8-sig"))
    else:
        rows = [AugmentedRow(i, s, a, "ok") for i, (s, a) in enumerate(zip(orig_table.smiles, aug_table.smiles, strict=True))]
    return orig_table, aug_table, rows


def _identity_mismatches(orig_smiles, aug_smiles, keep) -> list[int]:
    from chemassay.chem.molecules import InvalidSmiles
    from chemassay.suites.robustness.augment import molecule_identity

    bad = []
    for index in np.flatnonzero(keep):
        try:
            if molecule_identity(orig_smiles[index]) != molecule_identity(aug_smiles[index]):
                bad.append(int(index))
        except InvalidSmiles:
            bad.append(int(index))
    return bad


@app.command()
def retrieve(
    original: Path = typer.Option(None, "--original", help="Originals: CSV/TSV with a SMILES column."),
    augmented: Path = typer.Option(None, "--augmented", help="Augmented molecules, row i = original row i."),
    encoder_spec: str = EncoderOption,
    embeddings: tuple[Path, Path] | None = typer.Option(None, "--embeddings",
                                                   help="Score precomputed ORIG.npy AUG.npy instead of encoding."),
    layers: str = LayersOption,
    metric: str = MetricOption,
    ties: str = TiesOption,
    backend: str = BackendOption,
    k: str = typer.Option("1,5", "--k", help="Cut-offs for acc@k."),
    check_identity: bool = typer.Option(True, "--check-identity/--no-check-identity",
                                        help="Check row i of both files is the same molecule (reported; see --drop-mismatched)."),
    drop_mismatched: bool = typer.Option(False, "--drop-mismatched", help="Leave out pairs that are not the same molecule."),
    smiles_column: str = typer.Option(None, "--smiles-column"),
    per_row: Path = typer.Option(None, "--per-row", help="Write per-molecule ranks (0-based) to this CSV."),
    device: str = DeviceOption, batch_size: int = BatchOption, pooling: str = PoolingOption, part: str = PartOption,
    max_length: int = MaxLengthOption, cache: bool = CacheOption,
    out: Path = OutOption,
) -> None:
    """AMORE retrieval between an original set and its augmentation: Acc@k and MRR both ways."""
    from chemassay.suites.robustness.amore import pair_skips, score_embeddings, string_statistics
    from chemassay.suites.robustness.encoders import encode_cached, load_embeddings
    from chemassay.suites.robustness.retrieval import resolve_backend

    ks = _ks(k)
    inputs = []
    skipped: list[dict] = []
    extra: dict = {}
    with Timer() as timer:
        if embeddings:
            orig_layers = load_embeddings(embeddings[0])
            aug_layers = load_embeddings(embeddings[1])
            if len(orig_layers) != len(aug_layers):
                raise UserInputError(f"{embeddings[1]}: {len(aug_layers)} layers but {embeddings[0]} has {len(orig_layers)}")
            if orig_layers[0].shape != aug_layers[0].shape:
                raise UserInputError(f"{embeddings[1]}: shape {aug_layers[0].shape} differs from {embeddings[0]} {orig_layers[0].shape}")
            inputs = [input_ref(embeddings[0]), input_ref(embeddings[1])]
            keep = np.ones(orig_layers[0].shape[0], dtype=bool)
            config_encoder: dict = {"encoder": "precomputed"}
            ids = [str(i) for i in range(len(keep))]
        else:
            if original is None or augmented is None:
                raise UserInputError("pass --original and --augmented (or --embeddings ORIG.npy AUG.npy)")
            orig_table, aug_table, rows = _read_pair(original, augmented, smiles_column)
            inputs = [input_ref(original), input_ref(augmented)]
            ids = orig_table.ids
            encoder = _encoder(encoder_spec, device, batch_size, pooling, part, max_length)
            config_encoder = encoder.describe()
            aug_text = [r.augmented or r.original for r in rows]
            if layers not in ("last", "all"):
                raise UserInputError(f"--layers must be last or all, got {layers!r}")
            orig_set = encode_cached(encoder, orig_table.smiles, layers, use_cache=cache)
            aug_set = encode_cached(encoder, aug_text, layers, use_cache=cache)
            orig_layers, aug_layers = orig_set.layers, aug_set.layers
            keep, skipped = pair_skips(rows, orig_table, {**orig_set.failures, **aug_set.failures})
            if check_identity:
                mismatched = _identity_mismatches(orig_table.smiles, aug_text, keep)
                extra["identity_mismatches"] = [{"line": orig_table.lines[i], "id": orig_table.ids[i]} for i in mismatched]
                if drop_mismatched:
                    keep[mismatched] = False
                    skipped += [{"line": orig_table.lines[i], "item": orig_table.ids[i],
                                 "reason": "augmented SMILES is not the same molecule"} for i in mismatched]
            extra["not_applied"] = sum(r.status == "not_applicable" for r in rows)
            extra["truncated"] = sorted(set(orig_set.truncated) | set(aug_set.truncated))
            kept = np.flatnonzero(keep)
            extra["strings"] = string_statistics([orig_table.smiles[i] for i in kept], [aug_text[i] for i in kept])
        scores = score_embeddings(orig_layers, aug_layers, keep=keep, metric=metric, ties=ties, backend=backend, ks=ks)
    metrics = dict(scores.metrics)
    if len(scores.per_layer) > 1:
        for layer, values in enumerate(scores.per_layer):
            for key, value in values.items():
                metrics[f"layer{layer}/{key}"] = value
        extra["per_layer"] = scores.per_layer
    if per_row is not None:
        lines = ["id,rank_o2a,rank_a2o"] + [
            f"{ids[i]},{scores.ranks['o2a'][j]},{scores.ranks['a2o'][j]}" for j, i in enumerate(scores.kept)
        ]
        atomic_write_text(per_row, "\n".join(lines) + "\n")
    result = Result(
        suite=SUITE, task="retrieve", metrics=metrics, n=int(len(scores.kept)),
        skipped=[SkippedItem(**s) for s in skipped], inputs=inputs,
        config={**config_encoder, "layers": layers, "metric": metric, "ties": ties, "backend": resolve_backend(backend),
                "k": list(ks)},
        elapsed_s=round(timer.elapsed, 3), **extra,
    )
    emit(result, out)


@app.command()
def run(
    dataset: str = typer.Option("chebi20", "--dataset", "-d", help="chebi20 (3,300 ChEBI-20 molecules) or isomers (918 QM9 C7H10O2)."),
    input_file: Path = typer.Option(None, "--input", help="Use your own molecule file instead of a shipped dataset."),
    encoder_spec: str = EncoderOption,
    augmentations: str = typer.Option("canonical,explicit_h,kekulize,cycle_renumber", "--augmentations", "-a",
                                      help="Comma-separated; add 'randomized' for random atom orders."),
    layers: str = LayersOption,
    metric: str = MetricOption,
    ties: str = TiesOption,
    backend: str = BackendOption,
    k: str = typer.Option("1,5", "--k", help="Cut-offs for acc@k."),
    seed: int = SeedOption,
    n_jobs: int = JobsOption,
    table: Path = typer.Option(None, "--table", help="Write the Markdown table (paper's Tables 1-2 layout) here."),
    plot: Path = typer.Option(None, "--plot", help="With --layers all: write the layer-wise plot (Fig. 3) here."),
    device: str = DeviceOption, batch_size: int = BatchOption, pooling: str = PoolingOption, part: str = PartOption,
    max_length: int = MaxLengthOption, cache: bool = CacheOption,
    out: Path = OutOption,
) -> None:
    """Every augmentation of a dataset scored with one encoder: the paper's table (and Fig. 3)."""
    from chemassay.suites.robustness.amore import markdown_table, plot_layers, run_amore, run_result
    from chemassay.suites.robustness.augment import check_kind
    from chemassay.suites.robustness.datasets import (
        read_molecules,
        shipped_dataset,
        shipped_dataset_ref,
    )
    from chemassay.suites.robustness.retrieval import resolve_backend

    kinds = [check_kind(a.strip()) for a in augmentations.split(",") if a.strip()]
    if layers not in ("last", "all"):
        raise UserInputError(f"--layers must be last or all, got {layers!r}")
    with Timer() as timer:
        if input_file is not None:
            molecules, malformed = read_molecules(need_file(input_file, "molecule"))
            dataset_ref = DatasetRef(name=input_file.name, sha256=sha256_file(input_file))
            inputs = [input_ref(input_file)]
        else:
            molecules, malformed = shipped_dataset(dataset), []
            name, digest = shipped_dataset_ref(dataset)
            dataset_ref = DatasetRef(name=name, sha256=digest)
            inputs = []
        encoder = _encoder(encoder_spec, device, batch_size, pooling, part, max_length)
        outcome = run_amore(molecules, encoder, augmentations=kinds, layers=layers, metric=metric, ties=ties,
                            backend=backend, seed=seed, n_jobs=n_jobs, use_cache=cache, ks=_ks(k))
    title = f"AMORE {dataset_ref.name} - {encoder.name}"
    if table is not None:
        atomic_write_text(table, markdown_table(outcome.table_rows, title))
    if plot is not None:
        if layers != "all":
            info("--plot needs --layers all; no plot written")
        else:
            plot_layers(outcome.per_layer, plot, title=title)
    result = run_result(
        outcome, encoder, dataset=dataset_ref, inputs=inputs, malformed=malformed, elapsed_s=timer.elapsed,
        config={"augmentations": kinds, "layers": layers, "metric": metric, "ties": ties,
                "backend": resolve_backend(backend), "seed": seed},
    )
    if not settings.quiet:
        console.print(markdown_table(outcome.table_rows, title), highlight=False, markup=False)
    emit(result, out)


from chemassay.suites.robustness import cli_models  # noqa: E402  (registers its commands on ``app``)

cli_models.register(app)
