"""``chemassay assay``: one model through every suite whose protocol it implements, on the
papers' headline settings, with one scorecard (a thin caller of :mod:`chemassay.assay`)."""

from __future__ import annotations

from pathlib import Path

import typer

from chemassay.assay import ENDPOINT_KINDS, plan
from chemassay.assay import assay as run_assay
from chemassay.cli.tools import console
from chemassay.errors import UserInputError
from chemassay.models.spec import parse_spec
from chemassay.suites import get_suite


def assay_command(
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
    spec: str | dict[str, str] | None = None
    if model:
        pairs = [m for m in model if "=" in m.split(":", 1)[0]]
        if pairs and len(pairs) != len(model):
            raise UserInputError("--model: give either one spec for every suite or SUITE=SPEC for each, not both")
        if pairs:
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
