"""CLI of the ``generation`` suite (MOSES): thin callers of :mod:`.api`.

Verbs: ``evaluate`` (score a file of generated SMILES, or ``--model SPEC`` sampled first),
``predict`` (sample ``--model SPEC`` into a file), ``train`` (train the ``ngram`` /
``combinatorial`` baselines and the learned ones), ``filter`` and ``split`` (data commands).
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import typer

from chemassay.cli.tools import (
    JobsOption,
    OutOption,
    SeedOption,
    console,
    emit,
    finish_requests,
    info,
    need_file,
    writable_out,
)
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import RequestSummary
from chemassay.models.spec import parse_spec
from chemassay.runtime.progress import settings
from chemassay.suites.generation import api
from chemassay.suites.generation.data import parse_moses_name

app = typer.Typer(
    help="Distribution learning of molecular generators: the MOSES benchmark.",
    no_args_is_help=True,
)

ModelOption = typer.Option(
    None, "--model", "-m",
    help="Model spec KIND:ARG[,key=value...]: ngram[:PATH], combinatorial[:PATH], openai:NAME,base_url=URL, "
         "python:MODULE:FACTORY... (see 'chemassay models list --suite generation').",
)
NOption = typer.Option(30000, "--n", help="Samples to draw from --model (MOSES: 30,000).")
BaseUrlOption = typer.Option(
    None, "--base-url", help="Server URL of an openai: model (else base_url= in the spec or $OPENAI_BASE_URL)."
)


def _with_base_url(model: str | None, base_url: str | None) -> str | None:
    """``model`` with ``base_url=`` added when it is an ``openai:`` spec that names none."""
    if model is None or base_url is None:
        return model
    spec = parse_spec(model)
    if spec.kind != "openai":
        raise UserInputError(f"--base-url is for openai: models, not {spec.kind}:")
    return spec.text if "base_url" in spec.options else spec.with_options(base_url=base_url).text


def _say(text: str) -> None:
    if not settings.quiet:
        console.print(text, highlight=False, markup=False, soft_wrap=True)


def _show_progress() -> bool | None:
    return False if settings.quiet else None


def _reference_option(value: str, what: str, allow_none: bool) -> str | None:
    lowered = value.strip().lower()
    if lowered == "none":
        if not allow_none:
            raise UserInputError(f"--{what} none is not allowed; give 'moses' or a SMILES file")
        return None
    if parse_moses_name(value) is not None:
        return value.strip()
    path = Path(value)
    if not path.is_file():
        raise UserInputError(f"{value}: no such {what} file; give 'moses', 'moses:PART' or a SMILES file (text or CSV)")
    return str(path)


def properties_plot_path(out: Path) -> Path:
    """Where the property-distribution PNG goes: next to ``OUT.json`` as ``OUT.properties.png``."""
    return out.with_name(out.stem + ".properties.png")


def _k_values(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise UserInputError(f"--k {text}: expected whole numbers above 0, e.g. --k 1000,10000")
    return values


@app.command("evaluate")
def evaluate_command(
    gen: Path | None = typer.Argument(
        None, help="Generated SMILES: a text file (one per line) or a CSV with a SMILES column. Or use --model."
    ),
    model: str | None = ModelOption,
    base_url: str | None = BaseUrlOption,
    n: int = NOption,
    seed: int = typer.Option(0, "--seed", help="Seed of the samples drawn from --model and of the bootstrap."),
    samples: Path | None = typer.Option(None, "--samples", help="With --model: also write the drawn samples here."),
    out: Path | None = OutOption,
    test: str = typer.Option(
        "moses", "--test", help="Test set: 'moses' (published statistics), a SMILES file, or a statistics .npz."
    ),
    scaffold_test: str = typer.Option(
        "moses", "--scaffold-test", help="Scaffold test set: 'moses', a SMILES file, a statistics .npz, or 'none'."
    ),
    train: str = typer.Option("moses", "--train", help="Training set for Novelty: 'moses', a SMILES file, or 'none'."),
    bootstrap: int = typer.Option(1000, "--bootstrap", help="Bootstrap resamples of the 95% intervals (0: none)."),
    n_jobs: int = JobsOption,
    device: str = typer.Option(
        "cpu", "--device", help="Where ChemNet (FCD), SNN and IntDiv run: cpu or cuda (RDKit work stays on the CPU)."
    ),
    batch_size: int = typer.Option(512, "--batch-size", help="ChemNet batch size."),
    plot: bool = typer.Option(True, "--plot/--no-plot", help="Write the property-distribution PNG next to OUT."),
    scheduler: str | None = typer.Option(
        None, "--scheduler",
        help="Run the RDKit work and the similarity blocks on a Dask cluster: tcp://host:8786, or dask-local.",
    ),
    threads: int | None = typer.Option(
        None, "--threads", min=1,
        help="Threads for ChemNet and the similarity blocks, one kernel thread each (default: torch's count).",
    ),
    work_dir: Path | None = typer.Option(
        None, "--work-dir",
        help="Keep each finished chunk here; a run interrupted and started again with the same folder resumes.",
    ),
    chunk_rows: int | None = typer.Option(None, "--chunk-rows", min=1, help="Input strings per chunk (50000)."),
    intdiv_exact_max: int | None = typer.Option(
        None, "--intdiv-exact-max", min=0,
        help="Above this many distinct molecules IntDiv is estimated on one CPU (100000; exact with cuda or --scheduler).",
    ),
    unique_k: str = typer.Option("1000,10000", "--k", metavar="K[,K...]",
                                 help="The unique@k values, as MOSES's get_all_metrics(gen, k=...)."),
) -> None:
    """Every MOSES metric of generated SMILES (values as the MOSES reference code computes them)."""
    writable_out(out)
    model = _with_base_url(model, base_url)
    if gen is not None and model is not None:
        raise UserInputError("give a file of generated SMILES or --model SPEC, not both")
    if gen is None and model is None:
        raise UserInputError("give a file of generated SMILES, or --model SPEC to sample one first")
    if gen is not None:
        need_file(gen, "SMILES")
    reference_spec = _reference_option(test, "test", allow_none=False)
    scaffold_spec = _reference_option(scaffold_test, "scaffold-test", allow_none=True)
    train_spec = _reference_option(train, "train", allow_none=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # each warning is printed below and kept in the result
        result = api.evaluate(
            gen, model=model, n=n, seed=seed, reference=reference_spec, scaffold_test=scaffold_spec, train=train_spec,
            bootstrap=bootstrap, n_jobs=n_jobs, device=device, batch_size=batch_size,
            plot=properties_plot_path(out) if out is not None and plot else None, out=samples,
            progress=not settings.quiet, scheduler=scheduler, n_threads=threads, work_dir=work_dir,
            chunk_rows=chunk_rows, intdiv_exact_max=intdiv_exact_max, unique_at=_k_values(unique_k),
        )
    for warning in result.details.warnings:
        if not warning.startswith("Can't compute unique@"):  # those are printed once as they happen
            info(f"warning: {warning}")
    emit(result, out)
    finish_requests(result.requests)


@app.command("predict")
def predict_command(
    model: str = typer.Option(..., "--model", "-m", help=ModelOption.help),
    out: Path = typer.Option(..., "--out", "-o", help="Write the samples here, one per line (and OUT.manifest.json)."),
    base_url: str | None = BaseUrlOption,
    n: int = NOption,
    seed: int = SeedOption,
    n_jobs: int = JobsOption,
) -> None:
    """Sample --model SPEC with a seed and write the SMILES (reproducible draw for draw)."""
    writable_out(out, "samples file")
    model = _with_base_url(model, base_url)
    started = time.perf_counter()
    samples = api.sample(model, n, seed, out=out, n_jobs=n_jobs, show_progress=_show_progress())
    _say(
        f"generation / predict {model}: {len(samples)} samples, seed {seed}, {time.perf_counter() - started:.1f} s\n"
        f"wrote {out} and {out.name}.manifest.json"
    )
    requests = json.loads(out.with_name(out.name + ".manifest.json").read_text()).get("requests")
    finish_requests(RequestSummary(**requests) if requests else None)


@app.command("train")
def train_command(
    model: str | None = typer.Option(
        None, "--model", "-m",
        help="What to train and where to save it: ngram:PATH[,context_len=10], combinatorial:PATH "
             "(without PATH: the cached model that --model ngram uses), or charrnn|vae|aae|latentgan|hmm:DIR"
             "[,size=tiny|cpu|paper][,key=value...].",
    ),
    train: str = typer.Option("moses", "--train", help="Training SMILES: moses, moses:PART, or a SMILES file."),
    limit: int | None = typer.Option(None, "--limit", help="Train on the first N molecules only."),
    n_jobs: int = JobsOption,
    seed: int = typer.Option(0, "--seed", help="Learned models: seed of the training run."),
    device: str = typer.Option("auto", "--device", help="Learned models: cpu, cuda or auto (a GPU when there is one)."),
    threads: int | None = typer.Option(None, "--threads", help="Learned models: CPU threads for torch."),
    max_minutes: float | None = typer.Option(
        None, "--max-minutes", help="Learned models: end this piece after about this long; run again to resume."),
) -> None:
    """Train a baseline and save it: ngram/combinatorial once; charrnn, vae, aae, latentgan, hmm
    (learned, resumable: run the same command again to continue a cut run)."""
    if model is None:
        raise UserInputError("name the model to train: --model ngram:PATH or --model combinatorial:PATH")
    spec = parse_spec(model).text
    started = time.perf_counter()
    if parse_spec(spec).kind in ("charrnn", "vae", "aae", "latentgan", "hmm"):
        generator = api.train(spec, train, limit=limit, show_progress=_show_progress(), seed=seed, device=device,
                              threads=threads, max_minutes=max_minutes)
        state = "finished" if generator.finished else "not finished: run the same command again to resume"
        _say(
            f"generation / train {generator.kind}: {generator.info['train'].get('n_train')} training SMILES, "
            f"{generator.info.get('epochs_done')} epochs done ({state}), {time.perf_counter() - started:.1f} s\n"
            f"wrote {generator.folder}\nsample it with --model {generator.spec.text}"
        )
        return
    generator = api.train(spec, train, limit=limit, n_jobs=n_jobs, show_progress=_show_progress())
    _say(
        f"generation / train {generator.kind}: {generator.info.get('n_train')} training SMILES, "
        f"{time.perf_counter() - started:.1f} s\nwrote {generator.path}\nsample it with --model {generator.spec.text}"
    )


@app.command("filter")
def filter_command(
    source: Path = typer.Argument(..., help="SMILES file: one per line, or a CSV/TSV with a SMILES column."),
    out: Path = typer.Option(..., "--out", "-o", help="Write the molecules that pass every filter here (one SMILES per line)."),
    report: Path | None = typer.Option(None, "--report", help="Result JSON with the per-filter counts (default: OUT.filter.json)."),
    rejected: Path | None = typer.Option(None, "--rejected", help="Also write removed molecules as CSV: line, smiles, filter, all failures, alerts."),
    column: str | None = typer.Option(None, "--column", help="SMILES column of a CSV input (default: SMILES/smiles)."),
    max_ring_size: int = typer.Option(7, "--max-ring-size", help="Largest ring kept (MOSES code: 7, i.e. rings of 8+ atoms removed)."),
    no_screen: bool = typer.Option(False, "--no-screen", help="Match every MCF/PAINS pattern without the fingerprint pre-screen (slower, same result)."),
    n_jobs: int = JobsOption,
) -> None:
    """Apply the MOSES dataset filters (atoms, charge, ring size, MCF, PAINS) and count removals."""
    report_path = report if report is not None else out.with_name(out.name + ".filter.json")
    for target in (out, report_path, rejected):
        writable_out(target)
    need_file(source, "SMILES")
    result = api.filter(source, out=out, rejected=rejected, column=column, max_ring_size=max_ring_size,
                        screen=not no_screen, n_jobs=n_jobs, show_progress=_show_progress())
    emit(result, report_path)


@app.command("split")
def split_command(
    source: Path = typer.Argument(..., help="SMILES file: one per line, or a CSV/TSV with a SMILES column."),
    out_dir: Path = typer.Option(..., "--out-dir", "-o", help="Folder for train.csv, test.csv, test_scaffolds.csv, manifest.json."),
    test_fraction: float = typer.Option(0.1, "--test-fraction", help="Share of valid molecules in the random test set."),
    scaffold_test_fraction: float = typer.Option(0.1, "--scaffold-test-fraction", help="Share of valid molecules whose scaffolds are held out."),
    keep_duplicates: bool = typer.Option(False, "--keep-duplicates", help="Keep repeated molecules (default: keep the first, report the rest)."),
    column: str | None = typer.Option(None, "--column", help="SMILES column of a CSV input."),
    result_out: Path | None = typer.Option(None, "--out", help="Also write the split's Result JSON (sizes, skipped rows) here."),
    seed: int = SeedOption,
    n_jobs: int = JobsOption,
) -> None:
    """MOSES-style split: hold out random Bemis–Murcko scaffolds, then a random test set."""
    writable_out(result_out)
    need_file(source, "SMILES")
    result = api.split(
        source, out_dir, test_fraction=test_fraction, scaffold_test_fraction=scaffold_test_fraction, seed=seed,
        keep_duplicates=keep_duplicates, column=column, n_jobs=n_jobs, show_progress=_show_progress(),
    )
    if result_out is not None:
        result.write(result_out)
    sizes = result.metrics
    _say(
        f"generation / split: train={sizes['n_train']} test={sizes['n_test']} "
        f"test_scaffolds={sizes['n_test_scaffolds']} skipped={sizes['n_skipped']} "
        f"held-out scaffolds={sizes['n_held_out_scaffolds']}\nwrote {result.details.output.manifest}"
        + (f" and {result_out}" if result_out is not None else "")
    )
