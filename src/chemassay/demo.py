"""``chemassay demo``: every suite on its bundled real data with its built-in baseline.

Each suite package provides ``chemassay.suites.<name>.demo.run_demo(out_dir)``, which calls
the suite's Python API, writes its results under ``out_dir`` and returns the
:class:`Result` objects. This module runs the selected suites in turn, records failures
without stopping the others, writes each suite's section to ``<out>/<suite>/summary.md``,
and then rebuilds ``<out>/summary.md`` from every suite section present, so running one
suite (``--suite X``) updates its section and keeps the others. The results of the suites that
ran are recorded in the results store (unless ``--no-store``), and the scorecard
``<out>/index.html`` / ``index.md`` (``chemassay report``) is rebuilt from every result under
``<out>``.

Tables list every scalar metric of a result with the arrow of its metric card (↑ higher is
better, ↓ lower is better), and each section ends with a glossary of the keys it shows
(meaning and the paper's name), read from the metric cards.
"""

from __future__ import annotations

import importlib
import importlib.util
import time
import traceback
from pathlib import Path

from chemassay.report.cards import card_for
from chemassay.report.result import Result, read_result
from chemassay.report.store import store_result
from chemassay.runtime.files import atomic_write_text
from chemassay.runtime.progress import info

SECTION = "summary.md"


def _suite_demos(selected: list[str] | None) -> list[tuple[str, str]]:
    from chemassay.suites import all_suites, get_suite

    chosen = [get_suite(name) for name in selected] if selected else all_suites()
    demos = []
    for suite in all_suites():
        if suite in chosen and importlib.util.find_spec(f"{suite.module}.demo") is not None:
            demos.append((suite.name, f"{suite.module}.demo"))
    return demos


def run_demo(out: Path, suites: list[str] | None = None) -> Path:
    """Run the demos of the selected (default: all) suites; return the summary path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    failures = []
    for cli_name, module in _suite_demos(suites):
        info(f"[demo] {cli_name} ...")
        started = time.perf_counter()
        suite_dir = out / cli_name
        suite_dir.mkdir(parents=True, exist_ok=True)
        try:
            demo_module = importlib.import_module(module)
            demo_module.run_demo(suite_dir)
        except Exception as exc:  # one suite failing must not hide the others' results
            failures.append((cli_name, exc))
            lines = [f"## {cli_name}", "", f"FAILED: {type(exc).__name__}: {exc}", "",
                     "```", traceback.format_exc(limit=5), "```", ""]
            atomic_write_text(suite_dir / SECTION, "\n".join(lines) + "\n")
            continue
        elapsed = time.perf_counter() - started
        for path, result in _results_in(suite_dir):
            store_result(result, path)
        lines = [f"## {cli_name} ({elapsed:.1f} s)", ""]
        notes = getattr(demo_module, "DEMO_NOTES", "")
        if notes:
            lines += [notes.strip(), ""]
        lines += suite_section(cli_name, suite_dir, out)
        atomic_write_text(suite_dir / SECTION, "\n".join(lines) + "\n")
    summary = out / "summary.md"
    try:
        write_scorecard(out)
        (out / "report.failed.md").unlink(missing_ok=True)
    except Exception as exc:  # the suites' results are written; a report bug must not hide them
        failures.append(("report", exc))
        lines = ["## report", "", f"FAILED: {type(exc).__name__}: {exc}", "", "```", traceback.format_exc(limit=5), "```", ""]
        atomic_write_text(out / "report.failed.md", "\n".join(lines) + "\n")
    atomic_write_text(summary, assemble_summary(out))
    if failures:
        names = ", ".join(name for name, _ in failures)
        raise RuntimeError(f"demo failed for: {names} (details in {summary})")
    return summary


def write_scorecard(out: Path) -> Path | None:
    """``<out>/index.html`` and ``index.md``: the scorecard of every result under ``<out>``,
    with each suite's pictures; ``None`` when there is no result yet."""
    from chemassay.report.scorecard import build_report
    from chemassay.suites import suite_names

    results: list[Result] = []
    pictures: dict[str, list[Path]] = {}
    for cli_name in suite_names():
        suite_dir = out / cli_name
        if not suite_dir.is_dir():
            continue
        for path, result in _results_in(suite_dir):
            object.__setattr__(result, "_source", str(path))
            results.append(result)
        pictures[cli_name] = sorted(suite_dir.rglob("*.png"))
    if not results:
        return None
    html, _markdown = build_report(results, out, title="chemassay demo scorecard", extra_images=pictures)
    return html


def assemble_summary(out: Path) -> str:
    """``summary.md``: the sections of every suite that has one, in the suites' order."""
    from chemassay.suites import suite_names

    parts = ["# chemassay demo", ""]
    if (out / "index.html").is_file():
        parts += ["The scorecard of these results, beside the papers' published ones: [index.html](index.html) "
                  "(self-contained; also [index.md](index.md)).", ""]
    for cli_name in suite_names():
        section = out / cli_name / SECTION
        if section.is_file():
                parts.append(section.read_text(encoding="utf-8").rstrip() + "\n")
    failed = out / "report.failed.md"
    if failed.is_file():
        parts.append(failed.read_text(encoding="utf-8").rstrip() + "\n")
    return "\n".join(parts) + "\n"


def _results_in(suite_dir: Path) -> list[tuple[Path, Result]]:
    found = []
    for path in sorted(suite_dir.rglob("*.json")):
        if path.name.endswith(".manifest.json") or path.name == "manifest.json":
            continue
        try:
            found.append((path, read_result(path)))
        except Exception:  # noqa: BLE001 - other JSON files (manifests, configs) are not results
            continue
    return found


def _format(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def suite_section(suite: str, suite_dir: Path, root: Path) -> list[str]:
    """The table of every result file in ``suite_dir``, its glossary and its pictures."""
    lines = ["| result | task | model | dataset | n | skipped | metrics |", "| --- | --- | --- | --- | --- | --- | --- |"]
    shown: dict[str, str] = {}
    for path, result in _results_in(suite_dir):
        cells = []
        for key, value in result.metrics.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            card = card_for(result.suite, key)
            arrow = card.arrow if card else ""
            text = f"{key}{arrow}={_format(value)}"
            interval = result.intervals.get(key)
            if interval is not None and interval.low is not None and interval.high is not None:
                text += f" [{_format(interval.low)}, {_format(interval.high)}]"
            cells.append(text)
            if card is not None:
                shown.setdefault(card.key, _gloss(card))
        model = result.model.name if result.model else "-"
        dataset = result.dataset.name if result.dataset else "-"
        lines.append(f"| {path.relative_to(root).as_posix()} | {result.task} | {model} | {dataset} | {result.n} | "
                     f"{len(result.skipped)} | {', '.join(cells)} |")
    if shown:
        lines += ["", "Metrics (↑ higher is better, ↓ lower is better; intervals are 95 % bootstrap intervals):", ""]
        lines += [f"- `{key}`: {text}" for key, text in shown.items()]
    pictures = sorted(p.relative_to(root) for p in suite_dir.rglob("*.png"))
    if pictures:
        lines.append("")
    for picture in pictures:
        lines.append(f"![{picture.stem}]({picture.as_posix()})")
    return lines + [""]


def _gloss(card) -> str:
    paper = ""
    if card.paper_name or card.paper_table:
        paper = " (paper: " + ", ".join(x for x in (card.paper_name, card.paper_table) if x) + ")"
    direction = {"higher": " ↑", "lower": " ↓"}.get(card.direction, "")
    return f"{card.description}{direction}{paper}"
