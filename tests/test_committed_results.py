"""The committed compact results of the benchmark runs (benchmarks/results/*.json.gz, written by
each script's summary stage) are what the docs quote: every table row a script's ``table`` stage
prints from its committed file appears, cell for cell, in the suite's page, and every phrase it
prints as ``quote:`` appears in the page's text. A re-run that changes a number and is committed
without the docs fails here. Nothing is re-run: the stages only read the committed files."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CASES = [
    (["mechanism_weights.py", "--table"], "mechanism_weights.json.gz", "docs/mechanism.md"),
    (["stoichiometry_baselines.py", "--table"], "stoichiometry_baselines.json.gz", "docs/stoichiometry.md"),
    (["generation_ngram_scores.py", "table"], "generation_ngram.json.gz", "docs/generation.md"),
    (["mechanism_learned.py", "--table"], "mechanism_learned.json.gz", "docs/mechanism.md"),
    (["reaction_ood_baseline.py", "--table"], "reaction_ood_baseline.json.gz", "docs/reaction-ood.md"),
    (["robustness_models.py", "--table"], "robustness_models.json.gz", "docs/robustness.md"),
    (["leakage_suites.py", "--table", "--suite", "generation"], "leakage_moses.json.gz", "docs/generation.md"),
    (["leakage_suites.py", "--table", "--suite", "reaction-ood"], "leakage_reaction_ood.json.gz",
     "docs/reaction-ood.md"),
    (["leakage_suites.py", "--table", "--suite", "stoichiometry"], "leakage_stoichiometry.json.gz",
     "docs/stoichiometry.md"),
    (["leakage_suites.py", "--table", "--suite", "mechanism"], "leakage_mechanism.json.gz", "docs/mechanism.md"),
    (["leakage_suites.py", "--table", "--suite", "robustness"], "leakage_robustness.json.gz", "docs/robustness.md"),
    (["leakage_speed.py", "--table", "--name", "leakage_speed_memory"], "leakage_speed_memory.json.gz",
     "docs/leakage.md"),
]


def _run(args: list[str]) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / args[0]), *args[1:]],
                          capture_output=True, text=True, env=env, check=True, timeout=300)
    return done.stdout


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table row, stripped of emphasis (the docs bold some findings)."""
    return [cell.replace("**", "").strip() for cell in line.strip().strip("|").split("|")]


def _is_rule(line: str) -> bool:
    return bool(re.fullmatch(r"\|?(\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*", line.strip()))


def printed_rows(text: str) -> list[list[str]]:
    """Every table row (headers included, rule lines excluded) of a stage's output."""
    return [_cells(line) for line in text.splitlines() if line.startswith("|") and not _is_rule(line)]


def printed_quotes(text: str) -> list[str]:
    return [line.removeprefix("quote:").strip() for line in text.splitlines() if line.startswith("quote:")]


def missing(text: str, page: str) -> list[str]:
    """The printed rows and quotes that ``page`` lacks (empty: the page quotes them all)."""
    doc_rows = [_cells(line) for line in page.splitlines() if line.lstrip().startswith("|")]
    prose = " ".join(page.replace("**", "").split())
    lost = [" | ".join(row) for row in printed_rows(text) if row not in doc_rows]
    lost += [quote for quote in printed_quotes(text) if " ".join(quote.split()) not in prose]
    return lost


@pytest.mark.parametrize(("args", "summary", "page"), CASES)
def test_committed_summary_is_small_and_complete(args, summary, page):
    path = RESULTS / summary
    assert path.stat().st_size < 200_000, f"{summary} is not compact"
    data = json.loads(gzip.decompress(path.read_bytes()))
    assert data["versions"]["rdkit"] and data["versions"]["python"]
    assert data["command"].startswith("python benchmarks/")
    assert {"wall_s", "cpu_s"} <= set(data["elapsed"])


@pytest.mark.parametrize(("args", "summary", "page"), CASES)
def test_docs_quote_the_committed_results(args, summary, page):
    printed = _run(args)
    assert printed_rows(printed), printed
    lost = missing(printed, (ROOT / page).read_text(encoding="utf-8"))
    assert not lost, f"{page} does not quote the committed {summary}: {lost}"


def test_a_changed_number_is_caught():
    """The check itself: one digit changed in a quoted row or phrase, or a row cell moved, is found."""
    page = "text: proton transfer (289\nsteps) 0.0074 / 0.0036.\n\n| a | **0.52** | 1.0 [0.9, 1.1] |\n"
    assert missing("| a | 0.52 | 1.0 [0.9, 1.1] |\nquote: proton transfer (289 steps) 0.0074 / 0.0036", page) == []
    assert missing("| a | 0.53 | 1.0 [0.9, 1.1] |", page) == ["a | 0.53 | 1.0 [0.9, 1.1]"]
    assert missing("| a | 1.0 [0.9, 1.1] | 0.52 |", page)
    assert missing("quote: proton transfer (289 steps) 0.0075 / 0.0036", page)


def test_robustness_generated_block_is_the_committed_one():
    """docs/robustness.md holds the tables ``robustness_models.py --summarize`` generates between
    two markers; the same tables printed from the committed summary must equal that block."""
    printed = _run(["robustness_models.py", "--table"])
    begin, end = "<!-- amore-models:begin -->", "<!-- amore-models:end -->"
    page = (ROOT / "docs" / "robustness.md").read_text(encoding="utf-8")
    block = page[page.index(begin):page.index(end) + len(end)]
    generated = printed[printed.index(begin):printed.index(end) + len(end)]
    assert generated.splitlines() == block.splitlines()
