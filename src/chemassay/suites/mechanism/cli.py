"""CLI of the ``mechanism`` suite (oMeBench / oMeS): thin callers of
:mod:`chemassay.suites.mechanism.api`.

Verbs: ``evaluate`` (score predictions, or ``--model SPEC`` then score), ``predict`` (run
``--model SPEC`` into a predictions file), ``train`` (the learned mechanism model on an
expansion), ``verify`` (check an oMeBench file), and the data-side ``expand`` and
``taxonomy``.

Where a command takes a reaction file, a registered dataset name (``gold``, ``template``,
``omebench:templates``) stands for the bundled oMe_Gold.json / oMe_Template.json.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from chemassay.cli.tools import (
    OutOption,
    SeedOption,
    console,
    emit,
    err_console,
    finish_requests,
    info,
    model_context,
    writable_out,
)
from chemassay.contract.errors import UserInputError
from chemassay.runtime.files import ensure_writable_dir
from chemassay.runtime.progress import progress_task, settings
from chemassay.suites.mechanism.api import evaluate as evaluate_api
from chemassay.suites.mechanism.api import expand as expand_api
from chemassay.suites.mechanism.api import load_reactions
from chemassay.suites.mechanism.api import predict as predict_api
from chemassay.suites.mechanism.api import train as train_api
from chemassay.suites.mechanism.api import verify as verify_api
from chemassay.suites.mechanism.data import reactions_path
from chemassay.suites.mechanism.plots import plot_accuracy_by_type, plot_score_by_length
from chemassay.suites.mechanism.records import read_records
from chemassay.suites.mechanism.scoring import UNPARSED
from chemassay.suites.mechanism.taxonomy import SUBTYPE_TO_TYPE, TAXONOMY, derive_taxonomy

app = typer.Typer(
    help="Organic mechanism reasoning: oMeBench data, oMeS scoring, LLM predictors and baselines.",
    no_args_is_help=True,
)

GoldOption = typer.Option("gold", "--gold", help="Gold mechanisms: 'gold', 'template' (bundled) or an oMeBench file.")
GoldArgument = typer.Argument(..., help="oMeBench JSON / JSONL file, or 'gold' / 'template' (bundled).")
ModelOption = typer.Option(None, "--model", "-m", help="Model spec KIND:ARG[,key=value...]: openai:MODEL, hf:PATH, "
                           "nearest-neighbour[:pool=...], gold-oracle, python:module:fn (see 'chemassay models list').")
PromptOption = typer.Option("default", "--prompt", help="default (the paper's one-shot), cot, or kshot.")
KOption = typer.Option(3, "--shots", help="Exemplars (shots) for --prompt kshot.")
PoolOption = typer.Option("template", "--pool", help="Exemplar pool for --prompt kshot ('template', 'gold' or a file).")
SameFamilyOption = typer.Option(False, "--allow-same-family", help="The paper's App. G protocol: leave out only the "
                                "identical reaction (same id or SMILES), not the query's family (leaky).")
WeightsOption = typer.Option("data", "--weights", help="Gold step weights: data (shipped; the fitted scheme where "
                             "missing), paper (the paper's Table 6 formula) or fitted (chemassay's fitted scheme).")
DomainPoolOption = typer.Option(None, "--domain-pool", help="Reactions that define in-domain (Table 16): a training or "
                                "exemplar file, 'template', or 'none'. Default: the model's pool, else 'template'.")
LimitOption = typer.Option(None, "--limit", help="Only the first N reactions.")
BaseUrlOption = typer.Option(None, "--base-url", help="Server URL for openai:... models (else base_url= in the spec or $OPENAI_BASE_URL).")
OverwriteOption = typer.Option(False, "--overwrite", help="Start the predictions file again instead of resuming it.")
TauOption = typer.Option(0.6, "--tau", help="Tanimoto threshold for partial credit.")
RoundOption = typer.Option(None, "--round", help="Round per-reaction values to N decimals like the published tool (e.g. 2).")
StrictOption = typer.Option(False, "--strict", help="Parse predictions exactly like the published tool (no repairs).")
PlotsOption = typer.Option(None, "--plots", help="Write score-by-length and accuracy-by-type PNGs into this folder.")
NoCacheOption = typer.Option(False, "--no-cache", help="Do not read or write the cache of gold molecules.")
BootstrapOption = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the 95 % intervals (0: none).")


def _context(base_url: str | None, out: Path | None = None) -> dict:
    return model_context(base_url, out)


def _print_warnings(result) -> None:
    """Warnings go to stderr even with --quiet: they change how the numbers read."""
    for warning in result.details.warnings if result.details is not None else []:
        err_console.print(f"warning: {warning}", highlight=False, markup=False)


def _plots(result, folder: Path, label: str) -> None:
    plot_score_by_length({label: result.details.by_length}, folder / f"{label}_score_by_length.png")
    plot_accuracy_by_type({label: result.details.by_type}, folder / f"{label}_accuracy_by_type.png")


def _check_plots(plots: Path | None) -> None:
    if plots is not None:
        ensure_writable_dir(plots, "plots folder")


def _total(reactions: str, limit: int | None) -> int:
    return len(load_reactions(reactions)[:limit])


def _finish_run(run: dict, requests, out: Path | None) -> None:
    """The run's one summary line (the shared request line for a model behind an endpoint) and
    its exit code: 1 when a request failed for good (the result is written)."""
    where = f" already in {out}" if out is not None else " already answered"
    resumed = f"; {run['already_done']}{where}" if run["already_done"] else ""
    if requests is not None:
        finish_requests(requests, resumed)
        return
    if not settings.quiet:
        console.print(f"{run['model']}: {run['answered']} answered, {run['failed']} failed{resumed}",
                      highlight=False, markup=False)
    if run["failed"]:
        raise typer.Exit(1)


def _evaluate(predictions, gold: str, result_path: Path | None, *, plots: Path | None = None,
              label: str | None = None, **options) -> None:
    """Score (after predicting with ``options['model']`` when given, its answers kept in
    ``options['out']``), write the result to ``result_path``, warn; exit 1 when a model
    request failed for good."""
    writable_out(result_path)
    _check_plots(plots)
    if options.get("out") is not None:
        writable_out(options["out"], "predictions file")
    result = evaluate_api(predictions, gold, progress=True, info=info, **options)
    run = result.config.get("run")
    if run is not None:
        failed = [item for item in result.skipped if item.reason.startswith((UNPARSED, "request failed"))]
        for failure in failed[:5]:
            info(f"  {failure.item}: {failure.reason}")
    emit(result, result_path)
    _print_warnings(result)
    if plots is not None:
        _plots(result, plots, label or (Path(predictions).stem if predictions is not None else "model"))
    if run is not None:
        _finish_run(run, result.requests, options.get("out"))


@app.command()
def evaluate(
    predictions: Path = typer.Argument(None, help="Predictions (JSONL): {reaction_id, response: text} or "
                                                  "{reaction_id, mechanism: [...]}. Leave out with --model."),
    gold: str = GoldOption,
    model: str = ModelOption,
    out: Path = OutOption,
    tau: float = TauOption,
    round_to: int = RoundOption,
    strict: bool = StrictOption,
    plots: Path = PlotsOption,
    no_cache: bool = NoCacheOption,
    weights: str = WeightsOption,
    domain_pool: str = DomainPoolOption,
    bootstrap: int = BootstrapOption,
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap resampling."),
    prompt: str = PromptOption,
    k: int = KOption,
    pool: str = PoolOption,
    allow_same_family: bool = SameFamilyOption,
    limit: int = LimitOption,
    predictions_out: Path = typer.Option(None, "--predictions-out", help="With --model: keep its answers in this "
                                         "JSONL file (resumable: a rerun asks only unanswered reactions)."),
    overwrite: bool = OverwriteOption,
    base_url: str = BaseUrlOption,
) -> None:
    """Score predictions (or --model SPEC's answers) against gold mechanisms with oMeS (S_total, S_partial, V, L).

    Exit code 1 when a model request failed for good (its reaction scores 0).
    """
    if predictions is not None and model is not None:
        raise UserInputError("give a predictions file or --model SPEC, not both")
    if predictions is None and model is None:
        raise UserInputError("give a predictions file, or --model SPEC to predict and score")
    if model is None and (predictions_out is not None or limit is not None):
        raise UserInputError("--predictions-out and --limit go with --model")
    options = {"tau": tau, "round_to": round_to, "strict": strict, "molecule_cache": not no_cache,
               "bootstrap": bootstrap, "seed": seed, "weights": weights, "domain_pool": domain_pool}
    if model is not None:
        options.update(model=model, prompt=prompt, shots=k, pool=pool, allow_same_family=allow_same_family,
                       limit=limit, out=predictions_out, overwrite=overwrite,
                       context=_context(base_url, predictions_out or out))
    _evaluate(predictions, gold, out, plots=plots, **options)


@app.command()
def predict(
    reactions: str = typer.Argument("gold", help="Reactions to ask about: 'gold', 'template' or an oMeBench file."),
    model: str = typer.Option(..., "--model", "-m", help="Model spec KIND:ARG[,key=value...] (see 'chemassay models list')."),
    out: Path = typer.Option(..., "--out", "-o", help="Predictions (JSONL), appended as answers arrive; resumable."),
    prompt: str = PromptOption,
    k: int = KOption,
    pool: str = PoolOption,
    allow_same_family: bool = SameFamilyOption,
    limit: int = LimitOption,
    overwrite: bool = OverwriteOption,
    base_url: str = BaseUrlOption,
) -> None:
    """Ask --model SPEC for the mechanism of every reaction and write its answers (exit 1 if a request failed)."""
    writable_out(out, "predictions file")
    with progress_task(f"asking {model}", _total(reactions, limit)) as advance:
        run = predict_api(model, reactions, out=out, prompt=prompt, shots=k, pool=pool,
                          allow_same_family=allow_same_family, limit=limit, overwrite=overwrite,
                          context=_context(base_url, out), progress=advance, info=info)
    if not settings.quiet:
        for error in run.errors[:5]:
            console.print(f"  {error['item']}: {error['reason']}", highlight=False, markup=False)
        console.print(f"wrote {out}", highlight=False, markup=False)
    _finish_run(run.as_dict(), run.requests, out)


@app.command()
def verify(
    file: str = GoldArgument,
    out: Path = OutOption,
    show: int = typer.Option(50, "--show", help="Print at most this many problems (all are in --out)."),
) -> None:
    """Check an oMeBench file: labels against the taxonomy, SMILES, step numbering, weights.

    Exit code 1 when an error is found (warnings alone exit 0).
    """
    writable_out(out)
    result = verify_api(file)
    if not settings.quiet:
        problems = result.details.problems
        for problem in problems[:show]:
            console.print(
                f"line {problem.line}  {problem.reaction_id or '-'}  {problem.field}  "
                f"[{problem.kind}] {problem.message}",
                highlight=False, markup=False,
            )
        if len(problems) > show:
            console.print(f"... {len(problems) - show} more (see --out)", highlight=False)
    emit(result, out)
    if result.metrics["errors"]:
        raise typer.Exit(1)


@app.command()
def taxonomy(
    data: str = typer.Option(None, "--data", help="Also count the labels used by this file ('gold', 'template' or a path)."),
) -> None:
    """Print the step-type taxonomy (11 types, 31 subtypes), optionally with label counts."""
    counts = derive_taxonomy(r.data for r in read_records(reactions_path(data)).records) if data else {}
    table = Table(show_header=True)
    for column in ("type", "subtype", *(["steps"] if data else []), "description"):
        table.add_column(column, overflow="fold")
    for entry in TAXONOMY:
        row = [entry.type, entry.subtype]
        if data:
            row.append(str(counts.get((entry.type, entry.subtype), 0)))
        table.add_row(*row, entry.description)
    console.print(table)
    outside = {pair: n for pair, n in counts.items() if SUBTYPE_TO_TYPE.get(pair[1]) != pair[0]}
    if outside:
        console.print("labels outside the taxonomy:", highlight=False)
        for (kind, subtype), n in sorted(outside.items(), key=lambda item: -item[1]):
            console.print(f"  {kind} / {subtype}: {n}", highlight=False, markup=False)


@app.command()
def expand(
    templates: str = typer.Argument(..., help="Template file (oMeBench JSON / JSONL), or 'template' (bundled)."),
    out: Path = typer.Option(..., "--out", "-o", help="Expanded reactions (JSON Lines); a manifest goes next to it."),
    substituents: Path = typer.Option(None, "--substituents", help="Substituent list JSON (default: the shipped one)."),
    per_template: int = typer.Option(18, "--per-template", help="Instances to keep per template (18: oMe-Silver's "
                                     "scale, about 2,500 reactions from oMe-Template)."),
    attempts: int = typer.Option(5, "--attempts", help="Assignments tried per kept instance before giving up."),
    seed: int = SeedOption,
    no_ring_rule: bool = typer.Option(False, "--no-ring-rule", help="Also use ring substituents in templates that hold a ring."),
    no_balance_check: bool = typer.Option(False, "--no-balance-check", help="Do not check the atom balance of steps."),
) -> None:
    """Expand R-group placeholders [*:i] of templates into concrete reactions (oMe-Silver style), each validated."""
    writable_out(out, "expanded reactions file")
    result = expand_api(templates, substituents=substituents, per_template=per_template, attempts=attempts,
                        seed=seed, ring_rule=not no_ring_rule, check_atom_balance=not no_balance_check, out=out)
    if not settings.quiet:
        used = result.templates_read - len(result.templates_without_instance)
        console.print(
            f"{len(result.records)} reactions from {used} of {result.templates_read} templates; "
            f"rejected: {dict(result.rejected) or 'none'}",
            highlight=False, markup=False,
        )
        console.print(f"wrote {out} and {result.manifest_path}", highlight=False, markup=False)


@app.command()
def train(
    reactions: str = typer.Argument(..., help="Training reactions: an expansion written by 'expand' (JSONL), or any "
                                              "oMeBench file."),
    out: Path = typer.Option(..., "--out", "-o", help="Model folder (resumable: run again to continue)."),
    config: str = typer.Option("small", "--config", help="tiny (tests), small (CPU) or paper (GPU)."),
    seed: int = SeedOption,
    valid_fraction: float = typer.Option(0.05, "--valid-fraction", help="Share of the reactions held out for the "
                                         "validation loss (early stopping)."),
    max_minutes: float = typer.Option(None, "--max-minutes", help="Stop this piece after M minutes (resume later)."),
    device: str = typer.Option("auto", "--device", help="cpu, cuda or auto."),
    threads: int = typer.Option(None, "--threads", help="CPU threads for torch."),
    max_epochs: int = typer.Option(None, "--max-epochs", help="Override the config's epochs."),
    steps_per_epoch: int = typer.Option(None, "--steps-per-epoch", help="Override the config's steps per epoch."),
    batch_size: int = typer.Option(None, "--batch-size", help="Override the config's batch size."),
) -> None:
    """Train the learned mechanism model (mechanism-seq2seq:DIR): reaction -> step types and intermediates."""
    report = train_api(reactions, out, config=config, seed=seed, valid_fraction=valid_fraction,
                       max_minutes=max_minutes, device=device, threads=threads, progress=None if not settings.quiet
                       else False, max_epochs=max_epochs, steps_per_epoch=steps_per_epoch, batch_size=batch_size)
    if not settings.quiet:
        state = "finished" if report.finished else "piece done (run again to continue)"
        console.print(
            f"{state}: {report.epochs_done} epochs, {report.global_step} steps, best val loss "
            f"{report.best_val_loss if report.best_val_loss is None else round(report.best_val_loss, 4)}; "
            f"{report.train_pairs} training / {report.valid_pairs} validation reactions"
            + (f", dropped {report.dropped}" if report.dropped else "")
            + (f", {len(report.left_out)} left out (labels outside the taxonomy)" if report.left_out else ""),
            highlight=False, markup=False,
        )
        console.print(f"model: {out}  (use --model mechanism-seq2seq:{out})", highlight=False, markup=False)
