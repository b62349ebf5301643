"""stoichiometry evaluation commands: score, predict."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from chemassay.clitools import emit, info, need_file
from chemassay.errors import UserInputError
from chemassay.report.result import Result, SkippedItem, input_ref

app = typer.Typer()

EncodingOption = typer.Option(
    None, "--encoding", help="smiles or formula (default: from the manifest next to the target file, else smiles)."
)


@app.command("score")
def score_command(
    predictions: Path = typer.Argument(..., help="Predicted bags, one per line ({n}X notation or plain SMILES)."),
    targets: Path = typer.Argument(..., help="True bags, line-aligned with the predictions (e.g. tgt-test_in.txt)."),
    src: Path = typer.Option(None, "--src", help="Input bags, line-aligned: enables the BAL/DEF/EXC/DE diagnostics."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the JSON result (metrics and per-sample rows) here."),
    encoding: str = EncodingOption,
    compat: str = typer.Option("chemassay", "--compat", help="chemassay (bags, strict validity) or reference (the authors' notebook: greedy list matching, unparseable species dropped)."),
    rows: bool = typer.Option(True, "--rows/--no-rows", help="Include per-sample rows in the result."),
) -> None:
    """Score predictions with ChemAlgebra's metrics: EM, JAC, F1, mol_JAC, mol_F1, ACC, ALO, VAL, and BAL/DEF/EXC/DE with --src."""
    from chemassay.suites.stoichiometry.scoring import score_files

    started = time.perf_counter()
    need_file(predictions, "prediction")
    need_file(targets, "target")
    if src is not None:
        need_file(src, "source")
    report = score_files(predictions, targets, src, encoding=encoding, compat=compat)
    inputs = [input_ref(predictions), input_ref(targets)] + ([input_ref(src)] if src else [])
    extra = {"rows": [s.row() for s in report.samples]} if rows else {}
    result = Result(
        suite="stoichiometry", task="score", metrics=report.metrics, n=len(report.samples),
        skipped=[SkippedItem(**item) for item in report.skipped], inputs=inputs,
        config={"encoding": report.breakdown["encoding"], "compat": compat, "with_source": src is not None},
        elapsed_s=time.perf_counter() - started, breakdown=report.breakdown, **extra,
    )
    emit(result, out)


def _training_split(train: Path, source: Path, split: str) -> str:
    if split != "auto":
        return split
    return "train_cross" if "cross" in source.name and (train / "src-train_cross.txt").is_file() else "train"


@app.command("predict")
def predict_command(
    baseline: str = typer.Option(..., "--baseline", help="copy-coefficient or algebraic."),
    src: Path = typer.Option(..., "--src", help="Input bags to predict from (e.g. src-test_in.txt)."),
    out: Path = typer.Option(..., "--out", "-o", help="Write the predicted bags here, one per line."),
    train: Path = typer.Option(None, "--train", help="Dataset folder whose training pairs the baseline memorises."),
    train_split: str = typer.Option("auto", "--train-split", help="Which training pairs: auto (train_cross for a *cross* source, else train), train, train_cross."),
    oracle: Path = typer.Option(None, "--oracle", help="Target file whose species (not coefficients) replace the memory: the algebra-only upper bound."),
    encoding: str = EncodingOption,
    report: Path = typer.Option(None, "--report", help="Write a JSON result with the run's counts here."),
) -> None:
    """Predict target bags with a baseline: copy-coefficient (the T1 shortcut) or the exact algebraic solver."""
    from chemassay.data.readers import iter_lines
    from chemassay.runtime.files import atomic_write_text
    from chemassay.suites.stoichiometry.baselines import load_memory, predict_lines
    from chemassay.suites.stoichiometry.metrics import BagReader
    from chemassay.suites.stoichiometry.scoring import encoding_for

    started = time.perf_counter()
    need_file(src, "source")
    if train is None and oracle is None:
        raise UserInputError("predict needs --train DIR (memorised training pairs) or --oracle TGT")
    # the manifest of the training folder (or of the oracle's / source's folder) says the encoding
    anchor = train / "tgt-train.txt" if train is not None else (oracle or src)
    encoding = encoding_for(anchor, encoding)
    reader = BagReader(encoding)
    source_lines = [line for _, line in iter_lines(src)]
    memory = None
    split = None
    inputs = [input_ref(src)]
    if oracle is not None:
        need_file(oracle, "oracle target")
        oracle_lines = [line for _, line in iter_lines(oracle)]
        if len(oracle_lines) != len(source_lines):
            raise UserInputError(f"{oracle} has {len(oracle_lines)} lines but {src} has {len(source_lines)}")
        inputs.append(input_ref(oracle))
    else:
        oracle_lines = None
        if not train.is_dir():
            raise UserInputError(f"{train}: no such dataset folder")
        split = _training_split(train, src, train_split)
        memory = load_memory(train, split, reader)
        inputs.append(input_ref(train / f"src-{split}.txt"))
    lines, counts = predict_lines(baseline, source_lines, reader, memory=memory, oracle_lines=oracle_lines)
    atomic_write_text(out, "".join(line + "\n" for line in lines))
    info(f"wrote {len(lines)} predictions to {out} ({counts.unknown} unknown reactions, "
         f"{counts.undetermined} undetermined, {counts.unreadable} unreadable inputs)")
    if report is not None:
        result = Result(
            suite="stoichiometry", task="predict",
            metrics={"lines": counts.lines, "unknown_reactions": counts.unknown, "undetermined": counts.undetermined,
                     "unreadable_inputs": counts.unreadable,
                     "memorised_reactions": len(memory.entries) if memory else None},
            n=counts.lines, inputs=inputs,
            config={"baseline": baseline, "encoding": encoding, "train": str(train) if train else None,
                    "train_split": split, "oracle": str(oracle) if oracle else None},
            elapsed_s=time.perf_counter() - started,
        )
        emit(result, report)
