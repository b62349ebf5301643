"""generation metric commands: metrics."""

from __future__ import annotations

from pathlib import Path

import typer

from chemassay.clitools import JobsOption, OutOption, emit, info
from chemassay.errors import UserInputError

app = typer.Typer()


def _reference_option(value: str, what: str, allow_none: bool) -> str | None:
    lowered = value.strip().lower()
    if lowered == "moses":
        return "moses"
    if lowered == "none":
        if not allow_none:
            raise UserInputError(f"--{what} none is not allowed; give 'moses' or a SMILES file")
        return None
    path = Path(value)
    if not path.is_file():
        raise UserInputError(f"{value}: no such {what} file; give 'moses' or a SMILES file (text or CSV)")
    return str(path)


def properties_plot_path(out: Path) -> Path:
    """Where the property-distribution PNG goes: next to ``OUT.json`` as ``OUT.properties.png``."""
    return out.with_name(out.stem + ".properties.png")


@app.command("metrics")
def metrics_command(
    gen: Path = typer.Argument(..., help="Generated SMILES: a text file (one per line) or a CSV with a SMILES column."),
    out: Path | None = OutOption,
    test: str = typer.Option(
        "moses", "--test", help="Test set: 'moses' (published statistics), a SMILES file, or a statistics .npz."
    ),
    scaffold_test: str = typer.Option(
        "moses", "--scaffold-test", help="Scaffold test set: 'moses', a SMILES file, a statistics .npz, or 'none'."
    ),
    train: str = typer.Option("moses", "--train", help="Training set for Novelty: 'moses', a SMILES file, or 'none'."),
    n_jobs: int = JobsOption,
    device: str = typer.Option("cpu", "--device", help="Where ChemNet (FCD) runs: cpu or cuda."),
    batch_size: int = typer.Option(512, "--batch-size", help="ChemNet batch size."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write the property-distribution PNG next to OUT."),
) -> None:
    """The MOSES metrics of a generated sample (values as the MOSES reference code computes them)."""
    from chemassay.report import DatasetRef, Result, SkippedItem, Timer, input_ref
    from chemassay.suites.generation.metrics import evaluate
    from chemassay.suites.generation.smiles_files import read_smiles_file

    if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
        raise UserInputError(f"--device {device}: choose cpu or cuda")
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise UserInputError(f"--device {device}: no CUDA device here; use --device cpu")
    test_spec = _reference_option(test, "test", allow_none=False)
    scaffold_spec = _reference_option(scaffold_test, "scaffold-test", allow_none=True)
    train_spec = _reference_option(train, "train", allow_none=True)
    table = read_smiles_file(gen)
    if not table.smiles:
        raise UserInputError(f"{gen}: no SMILES in the file; give one SMILES per line or a CSV with a SMILES column")

    import warnings

    with Timer() as timer, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # reported below and in the result
        evaluation = evaluate(
            table.smiles, test=test_spec, scaffold_test=scaffold_spec, train=train_spec,
            n_jobs=n_jobs, device=device, batch_size=batch_size,
        )
    skipped = [
        SkippedItem(line=table.lines[bad.index], item=bad.smiles, reason=f"invalid SMILES: {bad.reason}")
        for bad in evaluation.invalid
    ] + [
        SkippedItem(line=table.lines[bad.index], item=bad.smiles, reason=bad.reason)
        for bad in evaluation.dropped
    ]
    inputs = [input_ref(table.path)]
    for spec in (test_spec, scaffold_spec, train_spec):
        if spec not in (None, "moses"):
            inputs.append(input_ref(spec))
    test_stats = evaluation.references["Test"]
    dataset = DatasetRef(name="moses" if test_spec == "moses" else test_stats.name, sha256=test_stats.sha256)
    result = Result(
        suite="generation",
        task="metrics",
        metrics=evaluation.metrics,
        n=evaluation.n_valid - len(evaluation.dropped),
        skipped=skipped,
        dataset=dataset,
        inputs=inputs,
        config={
            "test": test_spec, "scaffold_test": scaffold_spec, "train": train_spec,
            "n_jobs": n_jobs, "device": device, "batch_size": batch_size,
            "unique_k": [1000, 10000], "fingerprint": "Morgan radius 2, 1024 bits",
        },
        elapsed_s=timer.elapsed,
        counts={
            "input": evaluation.n_input,
            "valid": evaluation.n_valid,
            "invalid": len(evaluation.invalid),
            "unique_valid": evaluation.n_unique_valid,
        },
        warnings=evaluation.warnings,
        references={label: stats.describe() for label, stats in evaluation.references.items()},
        timings_s=evaluation.timings,
    )
    if out is not None and plot:
        from chemassay.suites.generation.plots import plot_property_distributions

        png = plot_property_distributions(
            evaluation.properties, test_stats.properties, properties_plot_path(out),
            distances={name: evaluation.metrics.get(name, float("nan")) for name in ("logP", "SA", "QED", "weight")},
            reference_label=test_stats.name,
        )
        result.plot = str(png)
    for warning in evaluation.warnings:
        info(f"warning: {warning}")
    emit(result, out)
