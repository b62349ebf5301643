"""``chemassay demo``: every suite on its bundled real data with its built-in baseline.

Each suite package may provide ``chemassay.suites.<name>.demo.run_demo(out_dir)``, which
writes its results under ``out_dir`` and returns the :class:`Result` objects. This module
runs them in turn, records failures without stopping the others, and writes
``summary.md`` (a table of headline metrics per suite) next to the JSON results.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
import traceback
from pathlib import Path

from chemassay.clitools import info
from chemassay.report.result import Result
from chemassay.runtime.files import atomic_write_text


def _suite_demos(selected: list[str] | None) -> list[tuple[str, str]]:
    from chemassay.cli import available_suites

    demos = []
    for cli_name, module in available_suites():
        if selected and cli_name not in selected and module not in selected:
            continue
        if importlib.util.find_spec(f"chemassay.suites.{module}.demo") is not None:
            demos.append((cli_name, module))
    return demos


def run_demo(out: Path, suites: list[str] | None = None) -> Path:
    """Run the demos of the selected (default: all) suites; return the summary path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sections: list[str] = ["# chemassay demo", ""]
    failures = []
    for cli_name, module in _suite_demos(suites):
        info(f"[demo] {cli_name} ...")
        started = time.perf_counter()
        suite_dir = out / cli_name
        suite_dir.mkdir(parents=True, exist_ok=True)
        try:
            demo_module = importlib.import_module(f"chemassay.suites.{module}.demo")
            results: list[Result] = demo_module.run_demo(suite_dir)
        except Exception as exc:  # one suite failing must not hide the others' results
            failures.append((cli_name, exc))
            sections += [f"## {cli_name}", "", f"FAILED: {type(exc).__name__}: {exc}", "",
                         "```", traceback.format_exc(limit=5), "```", ""]
            continue
        elapsed = time.perf_counter() - started
        sections += [f"## {cli_name} ({elapsed:.1f} s)", ""]
        notes = getattr(demo_module, "DEMO_NOTES", "")
        if notes:
            sections += [notes.strip(), ""]
        sections += _results_table(results, suite_dir, out)
    summary = out / "summary.md"
    atomic_write_text(summary, "\n".join(sections) + "\n")
    if failures:
        names = ", ".join(name for name, _ in failures)
        raise RuntimeError(f"demo failed for: {names} (details in {summary})")
    return summary


def _results_table(results: list[Result], suite_dir: Path, root: Path) -> list[str]:
    lines = ["| task | n | skipped | headline metrics | result |", "| --- | --- | --- | --- | --- |"]
    for result in results:
        scalars = [
            f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
            for k, v in result.metrics.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        ][:8]
        path = getattr(result, "_path", None) or f"{suite_dir.name}/{result.task}.json"
        lines.append(f"| {result.task} | {result.n} | {len(result.skipped)} | {', '.join(scalars)} | {path} |")
    pictures = sorted(p.relative_to(root) for p in suite_dir.rglob("*.png"))
    lines.append("")
    for picture in pictures:
        lines.append(f"![{picture.stem}]({picture.as_posix()})")
    return lines + [""]
