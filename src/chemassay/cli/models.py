"""``chemassay models``: the model kinds (list), a protocol's contract on a model (check), and
training chemassay's learned reference models (train seq2seq)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from chemassay.cli.tools import console
from chemassay.models import all_protocols, check_model, list_kinds
from chemassay.models.protocols import protocol_suites
from chemassay.models.seq2seq import parse_settings, train_from_source
from chemassay.suites import get_suite

models_app = typer.Typer(help="The model kinds (one registry, one spec grammar KIND:ARG[,key=value...]).",
                         no_args_is_help=True)


@models_app.command("list")
def models_list(
    protocol: str = typer.Option(None, "--protocol", help="Only kinds implementing this protocol."),
    suite: str = typer.Option(None, "--suite", help="Only kinds usable in this suite."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List the registered model kinds, the protocols each implements and what each needs."""
    if suite is not None:
        suite = get_suite(suite).name
    kinds = list_kinds(protocol, suite)
    if as_json:
        payload = {"protocols": {name: {"method": info.method, "signature": info.signature,
                                        "suites": protocol_suites(name), "summary": info.summary,
                                        "answered_by": list(info.answered_by),
                                        "predictions_layout": info.predictions_layout}
                                 for name, info in all_protocols().items()},
                   "kinds": [kind.as_dict() for kind in kinds]}
        print(json.dumps(payload, indent=2))
        return
    table = Table(show_header=True, title="model kinds: --model KIND:ARG[,key=value...]")
    for column in ("kind", "ARG", "protocols", "suite", "needs", "description"):
        table.add_column(column, overflow="fold")
    for kind in kinds:
        cells = (kind.name, kind.arg or "-", ", ".join(kind.protocol_names), kind.suite or "all", kind.needs(),
                 kind.description)
        table.add_row(*(escape(cell) for cell in cells))
    console.print(table)


@models_app.command("check")
def models_check(
    spec: str = typer.Argument(..., help="A model spec, e.g. openai:MODEL,base_url=URL or predictions:FILE."),
    protocol: str = typer.Option(..., "--protocol", "-p", help="The protocol to check (see 'chemassay models list')."),
    base_url: str = typer.Option(None, "--base-url", help="Server URL for openai: models."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Run a protocol's contract on a model with small bundled inputs; exit 1 if it fails."""
    report = check_model(spec, protocol, {"base_url": base_url} if base_url else None)
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        console.print(report.summary(), highlight=False, markup=False)
    if not report.passed:
        raise typer.Exit(1)


models_train_app = typer.Typer(help="Train chemassay's learned reference models (resumable: run the same command "
                                    "again to continue a run cut short).", no_args_is_help=True)
models_app.add_typer(models_train_app, name="train")


@models_train_app.command("seq2seq")
def models_train_seq2seq(
    train: str = typer.Option(..., "--train", help="Training pairs: a registered dataset (uspto-15k), a stoichiometry "
                              "build folder, a reaction-ood split folder or part, a table or a reaction file."),
    out: Path = typer.Option(..., "--out", "-o", help="Model folder (seq2seq.json, model.safetensors, last.ckpt)."),
    task: str = typer.Option("reactions", "--task", help="reactions (reactants -> products), bags (ChemAlgebra "
                             "bags) or pairs (a source/target table)."),
    valid: str = typer.Option(None, "--valid", help="Validation pairs (default: the valid part or files beside --train)."),
    split: str = typer.Option("train", "--split", help="Training part: train, or train_cross for a ChemAlgebra folder."),
    config: str = typer.Option("small", "--config", help="tiny (tests), small (CPU) or paper (ChemAlgebra App. D)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the initial weights, the data order and dropout."),
    augment: int = typer.Option(0, "--augment", help="Randomized-SMILES copies of every training source."),
    max_minutes: float = typer.Option(None, "--max-minutes", help="Length of this piece; run again to continue."),
    device: str = typer.Option("auto", "--device", help="cpu, cuda or auto."),
    precision: str = typer.Option("auto", "--precision", help="auto (bf16-mixed on a GPU that has it), 32-true, "
                                  "bf16-mixed or 16-mixed."),
    threads: int = typer.Option(None, "--threads", help="CPU threads for torch."),
    max_epochs: int = typer.Option(None, "--max-epochs", help="Override the config's epochs."),
    steps_per_epoch: int = typer.Option(None, "--steps-per-epoch", help="Override the config's steps per epoch."),
    batch_size: int = typer.Option(None, "--batch-size", help="Override the config's batch size (pairs)."),
    lr: float = typer.Option(None, "--lr", help="Override the config's peak learning rate."),
    architecture: str = typer.Option(None, "--architecture", help="Override the config's architecture: bart "
                                     "(post-norm, Bradshaw et al.) or mbart (pre-norm, as the Molecular Transformer)."),
    limit: int = typer.Option(None, "--limit", help="Use the first N training pairs."),
    valid_limit: int = typer.Option(2000, "--valid-limit", help="Use the first N validation pairs (0: all)."),
    tokenizer: str = typer.Option(None, "--tokenizer", help="smiles, bag, formula or char (default: from the task)."),
    settings: list[str] = typer.Option(None, "--set", help="Override any config setting, KEY=VALUE (repeatable): "
                                       "copy=false, positions=learned, target_root=canonical, dropout=0.2..."),
    stop_after_epochs: int = typer.Option(None, "--stop-after-epochs", hidden=True),
) -> None:
    """Train (or continue training) the BART sequence-to-sequence model; use it as --model seq2seq:OUT."""
    report = train_from_source(
        train, out, task=task, valid=valid, split=split, limit=limit, valid_limit=valid_limit or None,
        tokenizer=tokenizer, config=config, seed=seed, augment=augment, max_minutes=max_minutes, device=device,
        precision=precision, threads=threads, max_epochs=max_epochs, steps_per_epoch=steps_per_epoch,
        batch_size=batch_size, stop_after_epochs=stop_after_epochs,
        overrides={**parse_settings(settings or []),
                   **{k: v for k, v in (("lr", lr), ("architecture", architecture)) if v is not None}},
    )
    state = "finished" if report.finished else "not finished: run the same command again to continue"
    rate = f", {report.tokens_per_s:,.0f} tokens/s" if report.tokens_per_s else ""
    best = f", best validation loss {report.best_val_loss:.4f}" if report.best_val_loss is not None else ""
    dropped = f"; left out {report.dropped}" if report.dropped else ""
    console.print(f"seq2seq ({config}, {report.parameters:,} parameters, vocabulary {report.vocab_size}) on "
                  f"{report.train_pairs} pairs: epoch {report.epochs_done}, step {report.global_step}{best}{rate}; "
                  f"{state} ({report.stopped_by}, {report.elapsed_s:.0f} s){dropped}", highlight=False, markup=False)
    console.print(f"model: --model seq2seq:{out}", highlight=False, markup=False)
