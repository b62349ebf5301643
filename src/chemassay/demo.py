"""``chemassay demo``: every suite's built-in baseline through ``chemassay assay``.

The demo is the assay of each suite's built-in baseline (``SuiteAssay.baseline``: the
coefficient-copy shortcut, the template-kNN, the n-gram generator, the fingerprint encoder,
the nearest-neighbour mechanism) on the suites' headline settings, written to one folder:
one JSON result per task under ``<out>/<suite>/``, the manifest ``assay.json``, the scorecard
``index.html`` / ``index.md`` beside the papers' published rows, and ``summary.md``: the
verdict of every suite, what its baseline shows (``Suite.demo_notes``), and the scorecard's
name. Running it again into the same folder resumes (finished tasks are not redone), and
``--suite`` runs some suites only, keeping the others' results in the scorecard.
"""

from __future__ import annotations

from pathlib import Path

from chemassay.assaying import assay
from chemassay.runtime.files import atomic_write_text

SUMMARY = "summary.md"


def run_demo(out: str | Path, suites: list[str] | None = None, *, quick: bool = False, n_jobs: int = 1):
    """Run the baselines of the selected (default: all) suites through the assay; returns the
    :class:`~chemassay.assaying.AssayReport` (its ``scorecard`` is the HTML file)."""
    target = Path(out)
    report = assay(None, suites=suites, out=target, quick=quick, n_jobs=n_jobs, title="chemassay demo scorecard")
    atomic_write_text(target / SUMMARY, summary_text(report))
    return report


def summary_text(report) -> str:
    """``summary.md``: the scorecard's name, then each suite's verdict and what its baseline shows."""
    from chemassay.suites import find_suite

    lines = ["# chemassay demo", ""]
    if report.scorecard is not None:
        lines += [f"The scorecard, beside the papers' published rows: [{report.scorecard.name}]({report.scorecard.name}) "
                  "(self-contained HTML; also [index.md](index.md)).", ""]
    if report.quick:
        lines += ["Quick subset (`--quick`): a smoke test on a few items per task, never ranked.", ""]
    for outcome in report.suites:
        suite = find_suite(outcome.suite)
        lines += [f"## {outcome.suite}", ""]
        if outcome.skipped:
            lines += [f"Skipped: {outcome.skipped}.", ""]
            continue
        lines += [f"Baseline `{outcome.spec}`: {outcome.verdict or 'no result'}.", ""]
        failed = [task for task in outcome.tasks if task.status == "failed"]
        for task in failed:
            lines += [f"- FAILED {task.task}: {task.message.splitlines()[0]}"]
        if failed:
            lines.append("")
        notes = suite.load("demo_notes") if suite is not None and suite.demo_notes else None
        if notes:
            lines += [notes.strip(), ""]
        for task in outcome.tasks:
            if task.path:
                lines.append(f"- {task.title}: [{Path(task.path).relative_to(report.out).as_posix()}]"
                             f"({Path(task.path).relative_to(report.out).as_posix()})")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
