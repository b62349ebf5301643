"""reaction-ood evaluation commands: evaluate, predict, iterate, shift, train, map, plot.

Each command parses its options, calls :mod:`chemassay.suites.reaction_ood.api` and writes
what it returns.
"""

from __future__ import annotations

from pathlib import Path

import typer

from chemassay.cli.tools import (
    JobsOption,
    OutOption,
    SeedOption,
    emit,
    finish_requests,
    info,
    model_context,
    need_file,
    writable_out,
)
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import read_result
from chemassay.runtime.progress import progress_task
from chemassay.suites.reaction_ood import api
from chemassay.suites.reaction_ood.atom_mapping import map_reactions_to_file
from chemassay.suites.reaction_ood.details import breakdowns_of
from chemassay.suites.reaction_ood.plots import plot_accuracy_by_year, plot_split_bars
from chemassay.suites.reaction_ood.tables import read_table

app = typer.Typer()

ModelOption = typer.Option(
    None, "--model", "-m",
    help="Model spec KIND:ARG[,key=value...]: template-knn:MODEL.npz, openai:NAME,base_url=URL, "
         "python:MODULE:CALLABLE, predictions:FILE ... (see 'chemassay models list --suite reaction-ood').",
)
BaseUrlOption = typer.Option(None, "--base-url", help="Server URL for an openai:NAME model (else base_url= in the spec or $OPENAI_BASE_URL).")
BootstrapOption = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the 95% intervals (0: none).")


def _context(base_url: str | None, out: Path | None = None) -> dict:
    return model_context(base_url, out)


def _warn_about(result) -> None:
    """One line per kind of item that counted as wrong or was ignored, so it is never silent."""

    def first_with(text: str):
        return next((item for item in result.skipped if text in item.reason), None)

    duplicates = result.metrics.get("n_duplicate_predictions")
    if duplicates:
        first = first_with("given again")
        example = f"; e.g. line {first.line}: {first.reason}" if first is not None else ""
        info(f"warning: {duplicates} prediction row(s) repeat an item given earlier and were ignored (the first row "
             f"counts{example}); listed in skipped")
    failures = result.metrics.get("n_model_failures")
    if failures:
        first = first_with("the model failed")
        example = f" (e.g. {first.reason})" if first is not None else ""
        info(f"warning: the model failed on {failures} reaction(s), scored as wrong{example}; listed in skipped")


@app.command("evaluate")
def evaluate_command(
    predictions: Path = typer.Argument(None, help="Prediction file (CSV/TSV/Parquet/JSONL or one SMILES per line); leave out with --model."),
    truth: Path = typer.Option(..., "--truth", "-t", help="Test reactions (a split part with products/rxn_smiles)."),
    model: str = ModelOption,
    out: Path = OutOption,
    k: int = typer.Option(None, "--k", help="Top-k: predictions used per reaction (default: all given; with --model, 10 asked)."),
    match: str = typer.Option("exact", "--match", help="exact (product multiset equal) or subset."),
    id_column: str = typer.Option(None, "--id-column", help="Column joining predictions to test rows."),
    n_best: int = typer.Option(None, "--n-best", help="For one-SMILES-per-line files: lines per reaction."),
    group_by: list[str] = typer.Option(None, "--group-by", help="Extra breakdown by this test column (repeatable)."),
    per_item: Path = typer.Option(None, "--per-item", help="Write the per-reaction scores to this table."),
    label: str = typer.Option(None, "--label", help="Name of this run (used by 'plot')."),
    base_url: str = BaseUrlOption,
    bootstrap: int = BootstrapOption,
    seed: int = SeedOption,
    n_jobs: int = JobsOption,
) -> None:
    """Top-k accuracy (product-set match), stereo-agnostic accuracy, breakdowns by year and class.

    Scores a predictions file, or runs --model on the test reactions first.
    """
    writable_out(out)
    if predictions is None and model is None:
        raise UserInputError("give a predictions file to score, or --model SPEC to run a model first")
    if predictions is not None and model is not None:
        raise UserInputError("give a predictions file or --model, not both")
    result = api.evaluate(
        str(predictions) if predictions is not None else None, truth, model=model, k=k, match=match,
        id_column=id_column, n_best=n_best, group_by=group_by or (), label=label, out=per_item, n_jobs=n_jobs,
        context=_context(base_url, out), bootstrap=bootstrap, seed=seed,
    )
    _warn_about(result)
    emit(result, out)
    finish_requests(result.requests)


@app.command("predict")
def predict_command(
    test: Path = typer.Argument(..., help="Test reactions (reactants or rxn_smiles column)."),
    model: str = typer.Option(..., "--model", "-m", help=ModelOption.help),
    out: Path = typer.Option(..., "--out", "-o", help="Prediction table to write (long layout: id, rank, prediction)."),
    k: int = typer.Option(10, "--k", help="Top-k: predictions per reaction."),
    id_column: str = typer.Option(None, "--id-column", help="Test column used as id (default: id/source_row/row number)."),
    base_url: str = BaseUrlOption,
    n_jobs: int = JobsOption,
) -> None:
    """Run a live model on test reactions and write its ranked predictions."""
    writable_out(out, "predictions table")
    run = api.predict_file(model, test, out, k=k, id_column=id_column, n_jobs=n_jobs, context=_context(base_url, out))
    if run.failures:
        info(f"warning: the model failed on {len(run.failures)} reaction(s) (e.g. line {run.failures[0]['line']}: "
             f"{run.failures[0]['reason']}); they have no predictions and score as missing")
    info(f"wrote {run.n_predictions} predictions for {run.n_reactions} reactions to {out} ({run.elapsed_s:.1f} s)")
    finish_requests(run.requests)


@app.command("iterate")
def iterate_command(
    test: Path = typer.Argument(..., help="Test reactions (reactants and products)."),
    model: str = typer.Option(..., "--model", "-m", help=ModelOption.help),
    out: Path = OutOption,
    k: int = typer.Option(5, "--k", help="Top-k: predictions per reaction and round."),
    rounds: int = typer.Option(2, "--rounds", help="Rounds of prediction."),
    feed: str = typer.Option("append", "--feed", help="append: reactants + round-1 top-1; alone: top-1 only."),
    predictions_out: Path = typer.Option(None, "--predictions", help="Write every round's predictions here."),
    base_url: str = BaseUrlOption,
    n_jobs: int = JobsOption,
) -> None:
    """Two-round evaluation: round-1 top-1 products are fed back as reactants (Grignard analysis)."""
    writable_out(out)
    result = api.iterate(model, test, k=k, rounds=rounds, feed=feed, out=predictions_out,
                         n_jobs=n_jobs, context=_context(base_url, out))
    _warn_about(result)
    emit(result, out)
    finish_requests(result.requests)


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
    neighbours: int = typer.Option(5, "--neighbours", "--neighbors", help="Nearest training reactions averaged."),
    maps: str = typer.Option("auto", "--maps", help="Atom maps for reagent removal: auto, schneider, none or a mapping file."),
    device: str = typer.Option("cpu", "--device", help="cpu, cuda or auto."),
    plot: Path = typer.Option(None, "--plot", help="Write the histograms (Fig. 6) to this PNG."),
    per_item: Path = typer.Option(None, "--per-item", help="Write every test reaction's distances here."),
    n_jobs: int = JobsOption,
) -> None:
    """Mean cosine distance of test reactions to their nearest training reactions (two spaces)."""
    writable_out(out)
    tests = _parse_named(test)
    need_file(train, "training")
    result = api.shift(train, tests, neighbours=neighbours, maps=maps, device=device, n_jobs=n_jobs,
                       per_item=per_item, plot=plot)
    emit(result, out)


@app.command("train")
def train_command(
    train: Path = typer.Argument(..., help="Training reactions (a split part)."),
    out: Path = typer.Option(..., "--out", "-o", help="Model file to write (.npz)."),
    maps: str = typer.Option("auto", "--maps", help="auto, schneider, none or a mapping file (see 'map')."),
    n_neighbors: int = typer.Option(50, "--n-neighbors", help="Training neighbours whose templates are tried."),
    radius: int = typer.Option(1, "--template-radius", help="Template radius around changed atoms."),
    n_jobs: int = JobsOption,
) -> None:
    """Train the template-kNN baseline on the atom-mapped training reactions."""
    writable_out(out, "model file")
    model = api.train(train, out, maps=maps, n_neighbors=n_neighbors, template_radius=radius, n_jobs=n_jobs)
    report = model.training_report
    total = report["n_reactions"] + report["n_without_maps"]
    info(f"{report['n_with_template']} of {total} training reactions gave a template "
         f"({report['n_templates']} distinct; {report['n_without_maps']} without atom maps); wrote {out} "
         f"(use it as --model template-knn:{out})")


@app.command("map")
def map_command(
    reactions: Path = typer.Argument(..., help="Reaction table (rxn_smiles/rxn column) to atom-map."),
    out: Path = typer.Option(..., "--out", "-o", help="Mapped-reaction TSV to write (.tsv.gz)."),
    batch_size: int = typer.Option(16, "--batch-size", help="Reactions per model call."),
    threads: int = typer.Option(1, "--threads", help="Torch threads."),
) -> None:
    """Atom-map reactions with RXNMapper (resumable; needs the 'mapping' extra)."""
    writable_out(out, "mapped-reaction table")
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
    writable_out(out, "plot")
    loaded = [read_result(need_file(p, "result")) for p in results]
    if labels and len(labels) != len(loaded):
        raise UserInputError(f"--label given {len(labels)} times for {len(loaded)} results")
    names = labels or [str(r.config.get("label") or Path(p).stem) for r, p in zip(loaded, results, strict=True)]
    if kind == "bars":
        chosen = metric or ["top1_accuracy", "top5_accuracy"]
        plot_split_bars(dict(zip(names, loaded, strict=True)), out, metrics=chosen)
    elif kind == "years":
        lines = {}
        for name, result in zip(names, loaded, strict=True):
            rows = breakdowns_of(result).get("year") or []
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
