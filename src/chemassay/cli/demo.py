"""``chemassay demo``: every suite's built-in baseline through the assay (a thin caller of
:mod:`chemassay.demo`)."""

from __future__ import annotations

from pathlib import Path

import typer

from chemassay.cli.tools import console
from chemassay.demo import SUMMARY, run_demo
from chemassay.suites import suite_names


def _suite_list() -> str:
    return ", ".join(suite_names())


def demo_command(
    out: Path = typer.Option(Path("reports/demo"), "--out", "-o", help="Folder for the results, summary.md and the "
                             "scorecard index.html; run again into it to resume."),
    suite: list[str] = typer.Option(None, "--suite", metavar="SUITE",
                                    help=f"Run only these suites (repeatable): {_suite_list()}."),
    quick: bool = typer.Option(False, "--quick", help="The documented quick subset of each suite (a smoke test)."),
    n_jobs: int = typer.Option(1, "--n-jobs", "-j", help="Worker processes for the scoring (-1: all cores)."),
) -> None:
    """Every suite's built-in baseline through `chemassay assay`, on the suites' headline
    settings; writes the scorecard OUT/index.html and OUT/summary.md."""
    report = run_demo(out, suites=suite or None, quick=quick, n_jobs=n_jobs)
    for outcome in report.suites:
        line = outcome.skipped and f"skipped: {outcome.skipped}" or (outcome.verdict or "no result")
        console.print(f"{outcome.suite:<14} {line}", highlight=False, markup=False, soft_wrap=True)
    console.print(f"summary: {Path(out) / SUMMARY}", highlight=False, markup=False)
    console.print(f"scorecard: {report.scorecard}", highlight=False, markup=False)
    if report.failed:
        raise typer.Exit(1)
