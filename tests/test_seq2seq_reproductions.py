"""The committed results of the seq2seq reproductions (benchmarks/results/*.json.gz) are what the
docs quote: every result row the ``table`` stage prints from them appears, cell for cell, in the
suite's page. A re-run that changes a number and is committed without the docs fails here."""

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CASES = [("stoichiometry_seq2seq.py", "stoichiometry_seq2seq.json.gz", "docs/stoichiometry.md"),
         ("reaction_ood_seq2seq.py", "reaction_ood_seq2seq.json.gz", "docs/reaction-ood.md")]


def _table(script: str, tmp_path: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "table", "--out", str(tmp_path)],
                          capture_output=True, text=True, env=env, check=True, timeout=300)
    return done.stdout


def _rows(text: str) -> list[list[str]]:
    """Result rows of the printed tables: cells of every row that holds an interval ``[a, b]``."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and "[" in line and not line.startswith("| ---"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


@pytest.mark.parametrize(("script", "summary", "page"), CASES)
def test_committed_summary_is_complete(script, summary, page):
    data = json.loads(gzip.decompress((RESULTS / summary).read_bytes()))
    assert data["results"], summary
    assert data["train_times"], summary
    for stem, result in data["results"].items():
        assert "__" in stem
        assert result["n"] > 0 and "metrics" in result, stem


@pytest.mark.parametrize(("script", "summary", "page"), CASES)
def test_docs_quote_the_committed_results(script, summary, page, tmp_path):
    printed = _table(script, tmp_path)
    rows = _rows(printed)
    assert rows, printed
    doc_lines = [[c.strip() for c in line.strip().strip("|").split("|")]
                 for line in (ROOT / page).read_text().splitlines() if line.startswith("|")]
    for row in rows:
        intervals = [cell for cell in row if "[" in cell]
        # the docs may relabel the row (names, paper columns), but one of its table rows must
        # hold every interval cell of the printed row, in order
        found = any(all(cell in doc for cell in intervals) and
                    [c for c in doc if c in intervals] == intervals for doc in doc_lines)
        assert found, f"{page} lacks the row {row}"


def test_stoichiometry_plan_reproduces_the_committed_run_lengths(tmp_path):
    """``plan`` prints the command for every model; for each committed ChemAlgebra run its
    ``--epochs`` (of 500 steps) must give the steps that run trained for."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "stoichiometry_seq2seq.py"), "plan",
                           "--out", str(tmp_path)], capture_output=True, text=True, env=env, check=True, timeout=120)
    epochs = {}
    for line in done.stdout.splitlines():
        words = line.split()
        if words and "--epochs" in words:
            epochs[words[0]] = int(words[words.index("--epochs") + 1])
    data = json.loads(gzip.decompress((RESULTS / "stoichiometry_seq2seq.json.gz").read_bytes()))
    runs = {r["name"]: r for r in data["train_times"] if r["name"] != "uspto15k_plain"}
    assert runs
    for name, run in runs.items():
        assert name in epochs, f"plan prints no --epochs for {name}"
        assert epochs[name] * 500 == run["steps"], (name, epochs[name], run["steps"])


def test_stoichiometry_figure_draws_the_committed_table4(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    png = tmp_path / "table4.png"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "stoichiometry_seq2seq.py"), "figure",
                    "--out", str(tmp_path / "empty"), "--png", str(png)],
                   capture_output=True, text=True, env=env, check=True, timeout=120)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 35_000  # bars and ticks: two empty panels of this size take 17 kB
