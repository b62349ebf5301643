"""reaction-ood evaluation commands: evaluate, predict, iterate, shift, plot, train-baseline, map."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import typer

from chemassay.clitools import JobsOption, OutOption, emit, info, need_file
from chemassay.errors import UserInputError
from chemassay.report.result import DatasetRef, Result, SkippedItem, input_ref, read_result

app = typer.Typer()

SUITE = "reaction-ood"
MAX_LISTED = 200


def _dataset_ref(path: Path) -> DatasetRef:
    """Name a split part by its split folder's manifest (or the file name) plus its checksum."""
    from chemassay.runtime.files import sha256_file

    manifest = path.parent / "manifest.json"
    name = path.name
    if manifest.is_file():
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (ValueError, OSError):
            data = {}
        source = data.get("input", {}).get("path") if isinstance(data.get("input"), dict) else None
        split = (data.get("config") or {}).get("name") or data.get("kind")
        if source or split:
            name = f"{Path(str(source)).name if source else '?'} / {split or '?'} split / {path.name}"
    return DatasetRef(name=name, sha256=sha256_file(path))


def _skipped(entries: list[dict]) -> list[SkippedItem]:
    return [SkippedItem(line=e.get("line"), item=None if e.get("item") is None else str(e.get("item")),
                        reason=str(e.get("reason"))) for e in entries]


@app.command("evaluate")
def evaluate_command(
    predictions: Path = typer.Argument(..., help="Prediction file (CSV/TSV/Parquet/JSONL or one SMILES per line)."),
    truth: Path = typer.Option(..., "--truth", "-t", help="Test reactions (a split part with products/rxn_smiles)."),
    out: Path = OutOption,
    k: int = typer.Option(None, "--k", help="Predictions used per reaction (default: all given)."),
    match: str = typer.Option("exact", "--match", help="exact (product multiset equal) or subset."),
    id_column: str = typer.Option(None, "--id-column", help="Column joining predictions to test rows."),
    n_best: int = typer.Option(None, "--n-best", help="For one-SMILES-per-line files: lines per reaction."),
    group_by: list[str] = typer.Option(None, "--group-by", help="Extra breakdown by this test column (repeatable)."),
    per_item: Path = typer.Option(None, "--per-item", help="Write the per-reaction scores to this table."),
    label: str = typer.Option(None, "--label", help="Name of this run (used by 'plot')."),
    n_jobs: int = JobsOption,
) -> None:
    """Top-k accuracy (product-set match), stereo-agnostic accuracy, breakdowns by year and class."""
    from chemassay.suites.reaction_ood.evaluate import evaluate_predictions, parse_predictions
    from chemassay.suites.reaction_ood.tables import read_table, write_table

    started = time.perf_counter()
    need_file(predictions, "prediction")
    need_file(truth, "test")
    test = read_table(truth, what="test")
    parsed = parse_predictions(read_table(predictions, what="prediction"), source=str(predictions),
                               id_column=id_column, n_best=n_best)
    result = evaluate_predictions(
        test, parsed, source=str(predictions), max_k=k, match=match, id_column=id_column,
        group_by=group_by or (), n_jobs=n_jobs,
    )
    if per_item is not None:
        write_table(result.per_item, per_item)
    outcome = Result(
        suite=SUITE, task="evaluate", metrics=result.metrics, n=len(result.per_item),
        skipped=_skipped(result.skipped), dataset=_dataset_ref(truth),
        inputs=[input_ref(predictions), input_ref(truth)],
        config={"k": max(result.k_values), "k_values": result.k_values, "match": match, "id_column": id_column,
                "n_best": n_best, "group_by": group_by or [], "layout": parsed.layout,
                "label": label or predictions.stem},
        elapsed_s=time.perf_counter() - started,
        breakdowns=result.breakdowns,
        missing_prediction_ids=result.missing_ids[:MAX_LISTED],
        unmatched_prediction_ids=result.unmatched_prediction_ids[:MAX_LISTED],
        n_unmatched_prediction_ids=len(result.unmatched_prediction_ids),
        prediction_file_problems=result.problems[:MAX_LISTED],
    )
    emit(outcome, out)


@app.command("predict")
def predict_command(
    test: Path = typer.Argument(..., help="Test reactions (reactants or rxn_smiles column)."),
    model: str = typer.Option(..., "--model", "-m", help="baseline:MODEL.npz, python:MODULE:ATTR or an http(s) URL."),
    out: Path = typer.Option(..., "--out", "-o", help="Prediction table to write (long layout: id, rank, prediction)."),
    k: int = typer.Option(10, "--k", help="Predictions per reaction."),
    id_column: str = typer.Option(None, "--id-column", help="Test column used as id (default: id/source_row/row number)."),
    n_jobs: int = JobsOption,
) -> None:
    """Run a live model on test reactions and write its ranked predictions."""
    from chemassay.suites.reaction_ood.baseline import TemplateKnnModel
    from chemassay.suites.reaction_ood.evaluate import ID_CANDIDATES, truth_reactants
    from chemassay.suites.reaction_ood.models import load_predictor
    from chemassay.suites.reaction_ood.tables import read_table, write_table

    need_file(test, "test")
    frame = read_table(test, what="test")
    reactants = truth_reactants(frame, str(test)).tolist()
    predictor = load_predictor(model)
    started = time.perf_counter()
    if isinstance(predictor, TemplateKnnModel):
        ranked = predictor.predict(reactants, k, n_jobs=n_jobs)
    else:
        ranked = predictor.predict(reactants, k)
    key = id_column or next((c for c in ID_CANDIDATES if c in frame.columns), None)
    ids = frame[key].astype(str).tolist() if key else [str(i) for i in range(len(frame))]
    rows = [(item_id, rank, smiles) for item_id, preds in zip(ids, ranked, strict=True)
            for rank, smiles in enumerate(preds, start=1)]
    table = pd.DataFrame(rows, columns=[key or "id", "rank", "prediction"])
    if key and key != "id":
        table = table.rename(columns={key: "id"})
    write_table(table, out)
    info(f"wrote {len(table)} predictions for {len(ids)} reactions to {out} "
         f"({time.perf_counter() - started:.1f} s)")


@app.command("iterate")
def iterate_command(
    test: Path = typer.Argument(..., help="Test reactions (reactants and products)."),
    model: str = typer.Option(..., "--model", "-m", help="baseline:MODEL.npz, python:MODULE:ATTR or an http(s) URL."),
    out: Path = OutOption,
    k: int = typer.Option(5, "--k", help="Predictions per reaction and round."),
    rounds: int = typer.Option(2, "--rounds", help="Rounds of prediction."),
    feed: str = typer.Option("append", "--feed", help="append: reactants + round-1 top-1; alone: top-1 only."),
    predictions_out: Path = typer.Option(None, "--predictions", help="Write every round's predictions here."),
) -> None:
    """Two-round evaluation: round-1 top-1 products are fed back as reactants (Grignard analysis)."""
    from chemassay.suites.reaction_ood.evaluate import truth_products, truth_reactants
    from chemassay.suites.reaction_ood.iterate import iterated_evaluation
    from chemassay.suites.reaction_ood.models import load_predictor
    from chemassay.suites.reaction_ood.tables import read_table, write_table

    started = time.perf_counter()
    need_file(test, "test")
    frame = read_table(test, what="test")
    reactants = truth_reactants(frame, str(test)).tolist()
    truths = truth_products(frame, str(test)).tolist()
    predictor = load_predictor(model)
    result = iterated_evaluation(predictor, reactants, truths, k=k, rounds=rounds, feed=feed)
    skipped = [{"line": i + 2, "reason": s} for i, s in enumerate(result.scores[0]) if isinstance(s, str)]
    if predictions_out is not None:
        rows = [(i, r + 1, rank, p) for r, ranked in enumerate(result.predictions)
                for i, preds in enumerate(ranked) for rank, p in enumerate(preds, start=1)]
        write_table(pd.DataFrame(rows, columns=["row", "round", "rank", "prediction"]), predictions_out)
    outcome = Result(
        suite=SUITE, task="iterate", metrics=result.metrics, n=len(truths) - len(skipped),
        skipped=_skipped(skipped), dataset=_dataset_ref(test), inputs=[input_ref(test)],
        config={"model": model, "k": k, "rounds": rounds, "feed": feed},
        elapsed_s=time.perf_counter() - started,
    )
    emit(outcome, out)


def _parse_named(values: list[str]) -> dict[str, Path]:
    named: dict[str, Path] = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep:
            name, path = Path(value).stem, value
        named[name] = need_file(path, "test")
    return named


@app.command("shift")
def shift_command(
    train: Path = typer.Option(..., "--train", help="Training reactions of the split."),
    test: list[str] = typer.Option(..., "--test", help="NAME=FILE of a test set (repeatable)."),
    out: Path = OutOption,
    k: int = typer.Option(5, "--k", help="Nearest training reactions averaged."),
    maps: str = typer.Option("auto", "--maps", help="Atom maps for reagent removal: auto, schneider, none or a mapping file."),
    device: str = typer.Option("cpu", "--device", help="cpu, cuda or auto."),
    plot: Path = typer.Option(None, "--plot", help="Write the histograms (Fig. 6) to this PNG."),
    per_item: Path = typer.Option(None, "--per-item", help="Write every test reaction's distances here."),
    n_jobs: int = JobsOption,
) -> None:
    """Mean cosine distance of test reactions to their k nearest training reactions (two spaces)."""
    from chemassay.suites.reaction_ood.shift import ShiftConfig, distribution_shift
    from chemassay.suites.reaction_ood.tables import read_table, write_table

    started = time.perf_counter()
    tests = _parse_named(test)
    need_file(train, "training")
    train_frame = read_table(train, what="training")
    reactions_train, train_note = _reactions_with_maps(train_frame, maps)
    test_reactions = {}
    notes = {"train": train_note}
    for name, path in tests.items():
        test_reactions[name], notes[name] = _reactions_with_maps(read_table(path, what="test"), maps)
    config = ShiftConfig(k=k)
    result = distribution_shift(reactions_train, test_reactions, config=config, n_jobs=n_jobs, device=device)
    metrics: dict[str, float] = {}
    for key, summary in result.summaries.items():
        split, space = key.split("/")
        metrics[f"{split}/{space}_median"] = summary["median"]
        metrics[f"{split}/{space}_mean"] = summary["mean"]
    if plot is not None:
        from chemassay.suites.reaction_ood.plots import plot_shift_histograms

        plot_shift_histograms(result.distances, plot, k=k)
    if per_item is not None:
        frames = [pd.DataFrame({"split": name, "row": np.arange(len(d["reactant"])),
                                "reactant_distance": d["reactant"], "difference_distance": d["difference"]})
                  for name, d in result.distances.items()]
        write_table(pd.concat(frames, ignore_index=True), per_item)
    skipped = [{"line": p["row"] + 2, "item": name, "reason": p["reason"]}
               for name, entries in result.problems.items() if name != "train" for p in entries]
    outcome = Result(
        suite=SUITE, task="shift", metrics=metrics,
        n=sum(len(d["reactant"]) for d in result.distances.values()) - len(skipped),
        skipped=_skipped(skipped[:MAX_LISTED]), dataset=_dataset_ref(train),
        inputs=[input_ref(train)] + [input_ref(p) for p in tests.values()],
        config={"k": k, "radius": config.radius, "n_bits": config.n_bits, "fingerprint": "Morgan counts",
                "distance": "cosine", "maps": maps, "device": device, "reagent_removal": notes},
        elapsed_s=time.perf_counter() - started,
        summaries=result.summaries,
        training_problems=result.problems.get("train", [])[:MAX_LISTED],
        plot=str(plot) if plot else None,
    )
    emit(outcome, out)


def _reactions_with_maps(frame: pd.DataFrame, maps: str) -> tuple[list[str], str]:
    """Reaction SMILES for the shift analysis, atom-mapped where a mapping is available."""
    from chemassay.suites.reaction_ood.atom_mapping import mapped_reactions_for

    columns = [str(c) for c in frame.columns]
    column = next((c for c in ("rxn_smiles", "reaction", "rxn") if c in columns), None)
    if column is None:
        raise UserInputError(f"the reaction table needs a rxn_smiles column (columns: {columns})")
    plain = frame[column].astype(str).tolist()
    try:
        mapped, source = mapped_reactions_for(frame, maps)
    except UserInputError:
        if maps != "auto":
            raise
        mapped, source = [None] * len(plain), "none"
    used = sum(m is not None for m in mapped)
    reactions = [m if m is not None else p for m, p in zip(mapped, plain, strict=True)]
    return reactions, f"{used}/{len(plain)} by atom maps ({source}), the rest by the element/identity rule"


@app.command("train-baseline")
def train_baseline_command(
    train: Path = typer.Argument(..., help="Training reactions (a split part)."),
    out: Path = typer.Option(..., "--out", "-o", help="Model file to write (.npz)."),
    maps: str = typer.Option("auto", "--maps", help="auto, schneider, none or a mapping file (see 'map')."),
    n_neighbors: int = typer.Option(50, "--n-neighbors", help="Training neighbours whose templates are tried."),
    radius: int = typer.Option(1, "--template-radius", help="Template radius around changed atoms."),
    n_jobs: int = JobsOption,
) -> None:
    """Train the template-kNN baseline on the atom-mapped training reactions."""
    from chemassay.suites.reaction_ood.atom_mapping import mapped_reactions_for
    from chemassay.suites.reaction_ood.baseline import BaselineConfig, TemplateKnnModel
    from chemassay.suites.reaction_ood.tables import read_table

    need_file(train, "training")
    frame = read_table(train, what="training")
    mapped, source = mapped_reactions_for(frame, maps)
    usable = [m for m in mapped if m is not None]
    if not usable:
        raise UserInputError(f"{train}: no training reaction has atom maps ({source}); run 'reaction-ood map' first")
    config = BaselineConfig(template_radius=radius, n_neighbors=n_neighbors)
    model = TemplateKnnModel.train(usable, config=config, n_jobs=n_jobs)
    model.training_report["n_without_maps"] = len(mapped) - len(usable)
    model.training_report["maps"] = source
    model.save(out)
    report = model.training_report
    info(f"{report['n_with_template']} of {len(mapped)} training reactions gave a template "
         f"({report['n_templates']} distinct; {len(mapped) - len(usable)} without atom maps); wrote {out}")


@app.command("map")
def map_command(
    reactions: Path = typer.Argument(..., help="Reaction table (rxn_smiles/rxn column) to atom-map."),
    out: Path = typer.Option(..., "--out", "-o", help="Mapped-reaction TSV to write (.tsv.gz)."),
    batch_size: int = typer.Option(16, "--batch-size", help="Reactions per model call."),
    threads: int = typer.Option(1, "--threads", help="Torch threads."),
) -> None:
    """Atom-map reactions with RXNMapper (resumable; needs the 'mapping' extra)."""
    from chemassay.runtime.progress import progress_task
    from chemassay.suites.reaction_ood.atom_mapping import map_reactions_to_file
    from chemassay.suites.reaction_ood.tables import read_table

    need_file(reactions, "reaction")
    frame = read_table(reactions, what="reaction")
    column = next((c for c in ("rxn_smiles", "rxn", "reaction") if c in frame.columns), None)
    if column is None:
        raise UserInputError(f"{reactions}: needs a rxn_smiles (or rxn) column")
    texts = frame[column].astype(str).tolist()
    with progress_task("atom mapping", len(set(texts))) as advance:
        map_reactions_to_file(texts, out, batch_size=batch_size, threads=threads, progress=advance)
    info(f"wrote {out}")


@app.command("plot")
def plot_command(
    kind: str = typer.Argument(..., help="bars (Fig. 2/4: accuracy per split) or years (Fig. 3: per test year)."),
    results: list[Path] = typer.Argument(..., help="Result JSON files written by 'evaluate'."),
    out: Path = typer.Option(..., "--out", "-o", help="PNG to write."),
    labels: list[str] = typer.Option(None, "--label", help="Label per result (default: the run's label)."),
    metric: list[str] = typer.Option(None, "--metric", help="Metrics to draw (bars; default top1 and top5)."),
    min_n: int = typer.Option(20, "--min-n", help="years: leave out years with fewer test reactions."),
) -> None:
    """Draw the paper's figures from evaluation results."""
    from chemassay.suites.reaction_ood.plots import plot_accuracy_by_year, plot_split_bars

    loaded = [read_result(need_file(p, "result")) for p in results]
    if labels and len(labels) != len(loaded):
        raise UserInputError(f"--label given {len(labels)} times for {len(loaded)} results")
    names = labels or [str(r.config.get("label") or Path(p).stem) for r, p in zip(loaded, results, strict=True)]
    if kind == "bars":
        chosen = metric or ["top1_accuracy", "top5_accuracy"]
        plot_split_bars({n: r.metrics for n, r in zip(names, loaded, strict=True)}, out, metrics=chosen)
    elif kind == "years":
        lines = {}
        for name, result in zip(names, loaded, strict=True):
            rows = (getattr(result, "breakdowns", None) or {}).get("year") or []
            if not rows:
                raise UserInputError(f"result {name!r} has no per-year breakdown (the test file had no year column)")
            lines[name] = [(int(r["group"]), r.get("top1_accuracy"), int(r["n"])) for r in rows]
        cutoffs = {}
        for name in names:
            digits = "".join(ch for ch in name if ch.isdigit())
            if len(digits) == 4:
                cutoffs[name] = int(digits)
        plot_accuracy_by_year(lines, out, cutoffs=cutoffs, min_n=min_n)
    else:
        raise UserInputError(f"unknown plot kind {kind!r}; use bars or years")
    info(f"wrote {out}")
