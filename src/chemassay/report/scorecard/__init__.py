"""``chemassay report``: a static, self-contained HTML scorecard and its Markdown twin.

:func:`build_scorecard` turns results into a :class:`Scorecard`: first the answer (the model,
one verdict line per suite, and each suite's paper headline table in the paper's own shape with
the results among the paper's rows, beside one small figure of the paper's central finding),
then the details, one section per suite, never mixing suites (leaderboards with the papers'
published rows, figures, a failure gallery, the papers' tables as printed, and every metric of
every result); :func:`write_report` writes
``index.html`` (CSS inline, every picture a data URI: it opens from a file, offline) and
``index.md`` (pictures under ``assets/``).

>>> from chemassay.contract.result import Result
>>> result = Result(suite="generation", task="evaluate", metrics={"valid": 0.98, "FCD/Test": 0.5}, n=30000)
>>> card = build_scorecard([result])
>>> row = card.sections[0].leaderboards[0].rows[0]  # no model: labelled by its task; no dataset: '-'
>>> [section.suite for section in card.sections], row.label, row.data
(['generation'], 'evaluate', '-')
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemassay.contract.result import Result
from chemassay.report.intervals import metric_interval
from chemassay.report.load import source_of
from chemassay.report.published import papers as all_papers
from chemassay.report.published import reference_tables
from chemassay.report.scorecard.galleries import DEFAULT_LIMIT, Gallery, suite_gallery
from chemassay.report.scorecard.leaderboard import Leaderboard, build_leaderboards
from chemassay.report.scorecard.plots import Figure, image_figure, suite_figures
from chemassay.runtime.files import atomic_write_bytes, atomic_write_text


@dataclass
class SuiteSection:
    """Everything the report shows for one suite."""

    suite: str
    results: list[Result]
    leaderboards: list[Leaderboard]
    figures: list[Figure]
    gallery: Gallery | None
    papers: list = field(default_factory=list)
    published_tables: list = field(default_factory=list)

    @property
    def anchor(self) -> str:
        """The section's HTML id."""
        return f"suite-{self.suite}"


@dataclass
class Scorecard:
    """A whole report."""

    title: str
    generated: str
    version: str
    sections: list[SuiteSection]
    sources: list[str]
    resamples: int
    notes: list[str] = field(default_factory=list)
    paper_tables: list = field(default_factory=list)
    """Each suite's paper headline table with the results among the paper's rows
    (:mod:`chemassay.report.paper_tables`), shown first."""
    verdicts: dict[str, str] | None = None
    """Each suite's verdict of its results (its assay's), filled when first rendered without an assay."""
    assay: Any = None
    """The :class:`chemassay.assaying.AssayReport` this scorecard closes (verdicts, failures,
    skipped suites), when it was written by ``chemassay assay``."""
    leakage: Any = None
    """The leakage audit shown in its own section (:class:`chemassay.report.leakage.LeakageView`),
    when the folder holds a ``leakage.json``."""


def _suite_order(suite: str) -> tuple[int, str]:
    from chemassay.suites import suite_names

    names = suite_names()
    return (names.index(suite), suite) if suite in names else (len(names), suite)


def fill_intervals(result: Result, resamples: int, seed: int = 0) -> Result:
    """A copy of ``result`` with an interval (the method its metric card declares:
    :func:`chemassay.report.intervals.metric_interval`) for every metric that has per-item
    scores but no stored interval (stored intervals are kept as they are)."""
    missing = [k for k in result.item_scores if k not in result.intervals and k in result.metrics]
    if resamples <= 0 or not missing:
        return result
    copy = result.model_copy()
    copy.intervals = dict(result.intervals)
    for key in missing:
        copy.intervals[key] = metric_interval(result.item_scores[key], suite=result.suite, key=key,
                                              resamples=resamples, seed=seed)
    return copy


def build_scorecard(results: list[Result], *, title: str = "chemassay scorecard", published: bool = True,
                    resamples: int = 1000, seed: int = 0, extra_images: dict[str, list[Path]] | None = None,
                    gallery_limit: int = DEFAULT_LIMIT, leakage: Any = None) -> Scorecard:
    """Assemble the report of ``results`` (see the module docstring).

    ``resamples`` bootstrap resamples fill intervals a result does not store (0: none);
    ``extra_images`` adds picture files to a suite's figures (the demo's plots); ``leakage`` (a
    :class:`~chemassay.report.leakage.LeakageView`) adds the leakage section.
    """
    from chemassay import __version__

    by_suite: dict[str, list[Result]] = {}
    for result in results:
        by_suite.setdefault(result.suite.replace("_", "-"), []).append(fill_intervals(result, resamples, seed))
    extra_images = {k.replace("_", "-"): v for k, v in (extra_images or {}).items()}
    sections = []
    for suite in sorted(set(by_suite) | set(extra_images), key=_suite_order):
        members = by_suite.get(suite, [])
        boards = build_leaderboards(suite, members, published=published) if members else []
        figures = suite_figures(suite, members, boards)
        shown = {f.path for f in figures if f.path is not None}
        figures += [image_figure(Path(p)) for p in extra_images.get(suite, [])
                    if Path(p).is_file() and Path(p).resolve() not in shown]
        known = {p.suite for p in all_papers()}
        papers = [p for p in all_papers() if p.suite == suite]
        tables = reference_tables(suite) if published and suite in known else []
        sections.append(SuiteSection(suite=suite, results=members, leaderboards=boards, figures=figures,
                                     gallery=suite_gallery(suite, members, gallery_limit) if members else None,
                                     papers=papers, published_tables=tables))

    suites_shown = [section.suite for section in sections if section.results]
    # the paper tables build on this package's leaderboards: imported here, not at the top
    from chemassay.report.paper_tables import paper_tables

    tables = paper_tables([r for section in sections for r in section.results], published=published,
                          suites=suites_shown, with_verdicts=False)
    sources = [source_of(r) or "(in memory)" for r in results]
    notes = [f"{figure.data}: picture named by a result ({figure.caption}) not found"
             for section in sections for figure in section.figures if figure.kind == "missing"]
    return Scorecard(title=title, generated=time.strftime("%Y-%m-%d %H:%M:%S %Z"), version=__version__,
                     sections=sections, sources=sources, resamples=resamples, notes=notes, paper_tables=tables,
                     leakage=leakage)


def write_report(card: Scorecard, out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``index.html`` and ``index.md`` (+ ``assets/``) into ``out_dir``; return both paths."""
    from chemassay.report.scorecard.render import render_html, render_markdown

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    html_path = out / "index.html"
    atomic_write_text(html_path, render_html(card))
    markdown, assets = render_markdown(card)
    # the pictures of an earlier report in this folder would otherwise linger beside the new ones
    shutil.rmtree(out / "assets", ignore_errors=True)
    for name, data in assets.items():
        target = out / "assets" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data if isinstance(data, bytes) else data.encode("utf-8"))
    md_path = out / "index.md"
    atomic_write_text(md_path, markdown)
    return html_path, md_path


def build_report(results: list[Result], out_dir: str | Path, **options) -> tuple[Path, Path]:
    """:func:`build_scorecard` then :func:`write_report`; returns the HTML and Markdown paths."""
    return write_report(build_scorecard(results, **options), out_dir)


__all__ = ["Scorecard", "SuiteSection", "build_report", "build_scorecard", "fill_intervals", "write_report"]
