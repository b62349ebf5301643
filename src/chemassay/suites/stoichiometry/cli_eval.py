"""stoichiometry model commands: evaluate and predict.

Thin callers of :mod:`chemassay.suites.stoichiometry.api`: they parse options, call it and
write its result.
"""

from __future__ import annotations

from pathlib import Path

import typer

from chemassay.cli.tools import emit, finish_requests, info, model_context, need_file, writable_out
from chemassay.contract.errors import UserInputError
from chemassay.runtime.files import atomic_write_text
from chemassay.suites.stoichiometry.api import evaluate, run_predictions

app = typer.Typer()

EncodingOption = typer.Option(
    None, "--encoding", help="smiles or formula (default: from the manifest next to the target/input file, else smiles)."
)
BaseUrlOption = typer.Option(
    None, "--base-url", help="Server URL for an openai:NAME model without base_url= (else $OPENAI_BASE_URL)."
)


def _context(base_url: str | None, out: Path | None = None) -> dict:
    return model_context(base_url, out)


def evaluate_command(
    files: list[Path] = typer.Argument(..., metavar="[PREDICTIONS] TARGETS",
                                       help="PREDICTIONS TARGETS: predicted and true bags, line-aligned "
                                            "(with --model: TARGETS only)."),
    src: Path = typer.Option(None, "--src", help="Input bags, line-aligned: the model's inputs with --model, and the "
                                                 "BAL/DEF/EXC/DE diagnostics."),
    model: str = typer.Option(None, "--model", "-m", help="Model spec to run on --src first: algebraic:TRAIN_DIR, "
                                                          "copy-coefficient:TRAIN_DIR, openai:NAME,base_url=URL..."),
    protocol: str = typer.Option("bag-predictor", "--protocol", help="With --model: bag-predictor (predict_bags) or "
                                 "reaction-predictor (its top-1 product SMILES is the bag: ChemAlgebra Table 2)."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the JSON result (metrics and per-sample rows) here."),
    predictions_out: Path = typer.Option(None, "--predictions-out", help="With --model: also write its predicted "
                                                                         "bags here."),
    encoding: str = EncodingOption,
    compat: str = typer.Option("chemassay", "--compat", help="chemassay (bags, strict validity) or reference (the "
                               "authors' notebook: greedy list matching, unparseable species dropped)."),
    rows: bool = typer.Option(True, "--rows/--no-rows", help="Include per-sample rows in the result."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples for the 95% intervals (0: none)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    limit: int = typer.Option(None, "--limit", help="Score only the first N lines."),
    base_url: str = BaseUrlOption,
) -> None:
    """Score predicted bags with ChemAlgebra's metrics: EM, JAC, F1, mol_JAC, mol_F1, ACC, ALO, VAL, and BAL/DEF/EXC/DE with --src. Targets in a built folder record its dataset and setting (variant, split)."""
    writable_out(out)
    writable_out(predictions_out, "predictions file")
    if model is not None:
        if len(files) != 1:
            raise UserInputError("with --model give only TARGETS (the model predicts from --src)")
        if src is None:
            raise UserInputError("--model needs --src: the input bags the model predicts from")
        predictions, targets = None, files[0]
    else:
        if len(files) != 2:
            raise UserInputError("give PREDICTIONS TARGETS (two files), or TARGETS with --model SPEC --src SRC")
        predictions, targets = need_file(files[0], "prediction"), files[1]
        if predictions_out is not None:
            raise UserInputError("--predictions-out needs --model (a predictions file is already written)")
    need_file(targets, "target")
    if src is not None:
        need_file(src, "source")
    if protocol != "bag-predictor" and model is None:
        raise UserInputError("--protocol says what --model is asked; a predictions file needs none")
    result = evaluate(predictions, targets, src, model=model, protocol=protocol, encoding=encoding, compat=compat,
                      rows=rows, bootstrap=bootstrap, seed=seed, limit=limit, context=_context(base_url, out),
                      out=predictions_out)
    emit(result, out)
    finish_requests(result.requests)


app.command("evaluate")(evaluate_command)


@app.command("predict")
def predict_command(
    src: Path = typer.Option(..., "--src", help="Input bags to predict from (e.g. src-test_in.txt)."),
    out: Path = typer.Option(..., "--out", "-o", help="Write the predicted bags here, one per line."),
    model: str = typer.Option(None, "--model", "-m", help="Model spec: algebraic:TRAIN_DIR[,split=...,oracle=TGT], "
                                                          "copy-coefficient:TRAIN_DIR, openai:NAME,base_url=URL..."),
    encoding: str = EncodingOption,
    report: Path = typer.Option(None, "--report", help="Write a JSON result with the run's counts here."),
    base_url: str = BaseUrlOption,
) -> None:
    """Predict product bags with a model: the baselines algebraic / copy-coefficient, a chat model, your own."""
    writable_out(out, "predictions file")
    writable_out(report, "report")
    if model is None:
        raise UserInputError("predict needs --model SPEC (e.g. algebraic:TRAIN_DIR; see 'chemassay models list')")
    need_file(src, "source")
    run = run_predictions(model, src, encoding=encoding, context=_context(base_url, out))
    atomic_write_text(out, "".join(line + "\n" for line in run.bags))
    counts = run.result.metrics
    detail = ""
    if "unknown_reactions" in counts:
        detail = (f" ({counts['unknown_reactions']} unknown reactions, {counts['undetermined']} undetermined, "
                  f"{counts['unreadable_inputs']} unreadable inputs)")
    info(f"wrote {counts['lines']} predictions to {out}{detail}; {counts['failed']} without a usable prediction")
    for item in run.result.skipped[:5]:
        info(f"line {item.line}: {item.reason}")
    if report is not None:
        emit(run.result, report)
    finish_requests(run.result.requests)
