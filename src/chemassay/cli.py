"""The ``chemassay`` command: global options, ``doctor``, ``data``, ``models``, ``metrics``,
``reference``, ``results``, ``compare``, ``report``, ``demo`` and the suites.

Each suite lives in ``chemassay.suites.<name>`` and exposes a Typer app in its ``cli``
module; every suite package present is mounted under its CLI name.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

import typer

from chemassay import __version__
from chemassay.clitools import console, err_console, install_terminal_output, remove_terminal_output
from chemassay.errors import ChemassayError, UserInputError, describe_os_error
from chemassay.runtime.progress import settings

app = typer.Typer(
    name="chemassay",
    help="A test bench for chemistry machine-learning models.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"chemassay {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars or summaries."),
    no_store: bool = typer.Option(False, "--no-store", help="Do not record results in the results store "
                                  "(also: CHEMASSAY_NO_STORE=1)."),
    refresh: bool = typer.Option(False, "--refresh", help="Ask models behind endpoints again instead of answering "
                                 "from the response cache, and overwrite the cached answers (per model: refresh=true; "
                                 "no cache at all: cache=false)."),
) -> None:
    """chemassay: does this model understand chemistry, or does it pattern-match?"""
    from chemassay.report.store import set_recording

    settings.debug = debug
    settings.quiet = quiet
    settings.refresh = refresh
    set_recording(not no_store)
    install_terminal_output()


_mounted: set[str] = set()


def _mount_suites() -> None:
    """Mount every registered suite's Typer app under its name (``chemassay reaction-ood``);
    a suite registered later is mounted by the next call (``main`` calls it every time)."""
    from chemassay.suites import all_suites

    for suite in all_suites():
        if suite.name in _mounted:
            continue
        suite_app = suite.load("cli")
        if suite_app is not None:
            app.add_typer(suite_app, name=suite.name, help=f"{suite.reproduces}: {suite.title}")
        _mounted.add(suite.name)


@app.command()
def doctor() -> None:
    """Versions of chemassay and its dependencies, the data cache and dataset status."""
    import platform

    import rdkit
    from rich.table import Table

    from chemassay.data import chemassay_home, list_specs, verify

    table = Table(title="chemassay doctor", show_header=True)
    table.add_column("component")
    table.add_column("status")
    table.add_row("chemassay", __version__)
    table.add_row("python", platform.python_version())
    table.add_row("rdkit", rdkit.__version__)
    for module in ("numpy", "pandas", "torch", "transformers", "faiss", "dask", "fcd_torch", "drfp", "httpx"):
        try:
            imported = importlib.import_module(module)
            table.add_row(module, getattr(imported, "__version__", "installed"))
        except ImportError:
            table.add_row(module, "not installed")
    from chemassay.chem.similarity import resolve_backend

    table.add_row("similarity backend", resolve_backend())
    table.add_row("data cache", str(chemassay_home()))
    for spec in list_specs():
        statuses = verify(spec.name)
        ok = sum(s.ok for s in statuses)
        bad = [s for s in statuses if not s.ok and s.path is not None]
        state = f"{ok}/{len(statuses)} files verified"
        if bad:
            state += f"; {len(bad)} checksum mismatch"
        elif ok < len(statuses):
            state += f" (run: chemassay data fetch {spec.name})"
        table.add_row(f"dataset {spec.name}", state)
    console.print(table)


data_app = typer.Typer(help="List, fetch, locate and verify datasets.", no_args_is_help=True)
app.add_typer(data_app, name="data")


@data_app.command("list")
def data_list() -> None:
    """List registered datasets with license and where they come from."""
    from rich.table import Table

    from chemassay.data import list_specs, locate

    table = Table(show_header=True)
    for column in ("name", "files", "present", "license", "description"):
        table.add_column(column, overflow="fold")
    for spec in list_specs():
        present = locate(spec.name) is not None
        table.add_row(spec.name, str(len(spec.files)), "yes" if present else "no", spec.license, spec.description)
    console.print(table)


@data_app.command("fetch")
def data_fetch(
    name: str = typer.Argument(..., help="Dataset name (see 'chemassay data list')."),
    force: bool = typer.Option(False, "--force", help="Remove the cached copy first and fetch it again (repairs a corrupted download)."),
) -> None:
    """Fetch a dataset into the cache (bundled datasets are only verified)."""
    from chemassay.data import fetch

    path = fetch(name, quiet=settings.quiet, force=force)
    console.print(str(path))


@data_app.command("path")
def data_path(
    name: str = typer.Argument(..., help="Dataset name."),
    file: str = typer.Option(None, "--file", help="One file of the dataset."),
) -> None:
    """Print the local folder (or file) of a dataset; error if it is not present."""
    from chemassay.data import locate

    path = locate(name, file)
    if path is None:
        raise UserInputError(f"dataset {name!r} is not on this machine: run 'chemassay data fetch {name}'")
    console.print(str(path), highlight=False)


@data_app.command("verify")
def data_verify(name: str = typer.Argument(None, help="Dataset name (default: all).")) -> None:
    """Check the sha256 of every present file; exit 1 on a mismatch."""
    from chemassay.data import list_specs, verify

    names = [name] if name else [s.name for s in list_specs()]
    bad = 0
    for dataset in names:
        for status in verify(dataset):
            where = str(status.path) if status.path else "-"
            console.print(f"{dataset:<20} {status.name:<28} {status.message:<10} {where}", highlight=False)
            bad += status.path is not None and not status.ok
    if bad:
        raise typer.Exit(1)


models_app = typer.Typer(help="The model kinds (one registry, one spec grammar KIND:ARG[,key=value...]).",
                         no_args_is_help=True)
app.add_typer(models_app, name="models")


@models_app.command("list")
def models_list(
    protocol: str = typer.Option(None, "--protocol", help="Only kinds implementing this protocol."),
    suite: str = typer.Option(None, "--suite", help="Only kinds usable in this suite."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List the registered model kinds, the protocols each implements and what each needs."""
    import json

    from chemassay.models import all_protocols, list_kinds

    if suite is not None:
        from chemassay.suites import get_suite

        suite = get_suite(suite).name
    kinds = list_kinds(protocol, suite)
    if as_json:
        from chemassay.models.protocols import protocol_suites

        payload = {"protocols": {name: {"method": info.method, "signature": info.signature,
                                        "suites": protocol_suites(name), "summary": info.summary,
                                        "answered_by": list(info.answered_by),
                                        "predictions_layout": info.predictions_layout}
                                 for name, info in all_protocols().items()},
                   "kinds": [kind.as_dict() for kind in kinds]}
        print(json.dumps(payload, indent=2))
        return
    from rich.markup import escape
    from rich.table import Table

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
    import json

    from chemassay.models import check_model

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
    from chemassay.models.seq2seq import parse_settings, train_from_source

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


metrics_app = typer.Typer(help="The metric cards: what every metric key means.", no_args_is_help=True)
app.add_typer(metrics_app, name="metrics")


@metrics_app.command("list")
def metrics_list(
    suite: str = typer.Option(None, "--suite", help="Only this suite's metrics."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Every metric key a result can carry: meaning, better direction, range, the paper's name."""
    import json

    from chemassay.report.cards import all_cards

    try:
        cards = all_cards(suite)
    except KeyError as exc:
        raise UserInputError(str(exc.args[0])) from None
    if as_json:
        print(json.dumps([card.as_dict() for card in cards], indent=2))
        return
    from rich.markup import escape
    from rich.table import Table

    table = Table(show_header=True)
    for column in ("suite", "key", "better", "range", "paper", "interval", "description"):
        table.add_column(column, overflow="fold")
    for card in cards:
        low, high = card.range
        span = f"[{'-inf' if low is None else f'{low:g}'}, {'inf' if high is None else f'{high:g}'}]"
        paper = " ".join(x for x in (card.paper_name, f"({card.paper_table})" if card.paper_table else None) if x)
        cells = (card.suite, card.key, card.direction, span, paper or "-", card.interval, card.description)
        table.add_row(*(escape(cell) for cell in cells))
    console.print(table)


from chemassay.report.cli import compare_command, reference_app, report_command, results_app  # noqa: E402

app.add_typer(reference_app, name="reference")
app.add_typer(results_app, name="results")
app.command("compare")(compare_command)
app.command("report")(report_command)


@app.command()
def assay(
    model: list[str] = typer.Option(None, "--model", "-m", metavar="SPEC", help="The model to assay: one spec for every suite "
                                    "(openai:NAME,base_url=URL, python:module:obj...), or SUITE=SPEC per suite "
                                    "(repeatable). Without it: each suite's built-in baseline."),
    suites: list[str] = typer.Option(None, "--suites", "-s", metavar="SUITE", help="Only these suites (repeatable or comma-separated)."),
    out: Path = typer.Option(Path("assay"), "--out", "-o", help="Folder for the results, assay.json and the scorecard "
                             "(index.html); run again with the same folder to resume."),
    quick: bool = typer.Option(False, "--quick", help="A documented small subset of each suite (a smoke test; "
                               "results marked quick and never ranked)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan (suites, tasks, items, requests) and exit."),
    seed: int = typer.Option(0, "--seed", help="Seed for every random choice."),
    n_jobs: int = typer.Option(1, "--n-jobs", "-j", help="Worker processes for the scoring (-1: all cores)."),
    base_url: str = typer.Option(None, "--base-url", help="Server URL for openai: models without base_url=."),
) -> None:
    """One model through every suite whose protocol it implements, on the papers' headline
    settings, with one scorecard (OUT/index.html). Exit 0 when every task ran, 1 when one failed."""
    from chemassay.assay import ENDPOINT_KINDS, plan
    from chemassay.assay import assay as run_assay
    from chemassay.models.spec import parse_spec

    spec: str | dict[str, str] | None = None
    if model:
        pairs = [m for m in model if "=" in m.split(":", 1)[0]]
        if pairs and len(pairs) != len(model):
            raise UserInputError("--model: give either one spec for every suite or SUITE=SPEC for each, not both")
        if pairs:
            from chemassay.suites import get_suite

            spec = {get_suite(m.split("=", 1)[0]).name: m.split("=", 1)[1] for m in model}
        elif len(model) > 1:
            raise UserInputError("--model given twice: one spec for every suite, or SUITE=SPEC per suite")
        else:
            spec = model[0]
    chosen = [name.strip() for item in (suites or []) for name in item.split(",") if name.strip()] or None
    if dry_run:
        outcomes, planned = plan(spec, suites=chosen, quick=quick, base_url=base_url)
        total_items = total_requests = 0
        for outcome in outcomes:
            if outcome.skipped:
                console.print(f"skip  {outcome.skipped}", highlight=False, markup=False)
        for item in planned:
            endpoint = parse_spec(item.spec).kind in ENDPOINT_KINDS
            requests = f"{item.task.request_count:>7,} requests" if endpoint else ""
            total_items += item.task.items
            total_requests += item.task.request_count if endpoint else 0
            console.print(f"run   {item.suite:<14} {item.task.key:<28} {item.task.items:>7,} items {requests}  "
                          f"{item.task.title} [{item.task.protocol}; {item.spec}]", highlight=False, markup=False)
        line = f"{len(planned)} tasks, {total_items:,} items"
        if total_requests:
            line += f", {total_requests:,} requests to the endpoint"
        console.print(line + (" (quick)" if quick else ""), highlight=False, markup=False)
        return
    report = run_assay(spec, suites=chosen, out=out, quick=quick, seed=seed, n_jobs=n_jobs, base_url=base_url)
    for outcome in report.suites:
        if outcome.skipped:
            line = f"{outcome.suite:<14} skipped: {outcome.skipped}"
        else:
            line = f"{outcome.suite:<14} {outcome.verdict or 'no result'}"
            failed = [t for t in outcome.tasks if t.status == "failed"]
            if failed:
                line += f" — {len(failed)} of {len(outcome.tasks)} tasks failed: " + "; ".join(
                    f"{t.task}: {t.message.splitlines()[0]}" for t in failed)
        console.print(line, highlight=False, markup=False)
    console.print(f"scorecard: {report.scorecard}", highlight=False, markup=False)
    if report.failed:
        raise typer.Exit(1)


def _suite_list() -> str:
    from chemassay.suites import suite_names

    return ", ".join(suite_names())


@app.command()
def demo(
    out: Path = typer.Option(Path("reports/demo"), "--out", "-o", help="Folder for the results, summary.md and the "
                             "scorecard index.html; run again into it to resume."),
    suite: list[str] = typer.Option(None, "--suite", metavar="SUITE",
                                    help=f"Run only these suites (repeatable): {_suite_list()}."),
    quick: bool = typer.Option(False, "--quick", help="The documented quick subset of each suite (a smoke test)."),
    n_jobs: int = typer.Option(1, "--n-jobs", "-j", help="Worker processes for the scoring (-1: all cores)."),
) -> None:
    """Every suite's built-in baseline through `chemassay assay`, on the suites' headline
    settings; writes the scorecard OUT/index.html and OUT/summary.md."""
    from chemassay.demo import SUMMARY, run_demo

    report = run_demo(out, suites=suite or None, quick=quick, n_jobs=n_jobs)
    for outcome in report.suites:
        line = outcome.skipped and f"skipped: {outcome.skipped}" or (outcome.verdict or "no result")
        console.print(f"{outcome.suite:<14} {line}", highlight=False, markup=False)
    console.print(f"summary: {Path(out) / SUMMARY}", highlight=False, markup=False)
    console.print(f"scorecard: {report.scorecard}", highlight=False, markup=False)
    if report.failed:
        raise typer.Exit(1)


_mount_suites()


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning user errors into one line and exit code 2."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    _mount_suites()
    try:
        _run(args, debug)
    finally:
        remove_terminal_output()


def _run(args: list[str], debug: bool) -> None:
    try:
        code = app(args=args, standalone_mode=False)
        if isinstance(code, int) and code:
            if code == 130:  # typer turns Ctrl-C into a silent exit code 130
                err_console.print("interrupted", highlight=False, markup=False)
            sys.exit(code)
    except typer.Exit as exc:
        if exc.exit_code == 130:
            err_console.print("interrupted", highlight=False, markup=False)
        sys.exit(exc.exit_code)
    except typer.Abort as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt) or isinstance(exc.__context__, KeyboardInterrupt):
            err_console.print("interrupted", highlight=False, markup=False)
            sys.exit(130)
        err_console.print("aborted")
        sys.exit(1)
    except KeyboardInterrupt:
        err_console.print("interrupted", highlight=False, markup=False)
        sys.exit(130)
    except SystemExit:
        raise
    except UserInputError as exc:
        if debug:
            raise
        err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(2)
    except OSError as exc:
        # An unreadable input, an unwritable output, a full disk: one line naming the file.
        if debug:
            raise
        err_console.print(f"error: {describe_os_error(exc)}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(2)
    except ChemassayError as exc:
        if debug:
            raise
        err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(2)
    except Exception as exc:
        # Click's usage errors (typer vendors click, so match by behaviour, not by class).
        if hasattr(exc, "show") and isinstance(getattr(exc, "exit_code", None), int):
            if debug:
                raise
            exc.show()
            sys.exit(exc.exit_code)
        raise


