"""The papers' headline tables in their own shape with the user's rows among the paper's, their
export (LaTeX that compiles, Markdown that renders, CSV), and the report defects they came with:
charts that cut or shorten labels or drop rows, density panels cut at the axis, an uncoloured
alchemy gallery, a data text repeated on every published row."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess

import numpy as np
import pytest

from chemassay.report.paper_tables import (
    PaperTableSpec,
    build_paper_table,
    paper_tables,
    suite_spec,
)
from chemassay.suites import all_suites

from .samples import (
    every_suite,
    generation_result,
    mechanism_result,
    robustness_result,
    stoichiometry_result,
)

SHAPES = {
    # suite: (table, paper rows, columns, spanning groups)
    "stoichiometry": ("Table 4", 8, 9, ["in", "cross", "out"]),
    "reaction-ood": ("Table S2.2", 3, 5, [""]),
    "generation": ("Table 2", 9, 4, [""]),
    "robustness": ("Table 1", 12, 12, ["canon", "hydro", "kekul", "cycle"]),
    "mechanism": ("Table 3", 15, 16, ["overall", "easy", "medium", "hard"]),
}


@pytest.mark.parametrize("suite", sorted(SHAPES))
def test_each_suite_declares_its_papers_table_in_its_own_report_module(suite):
    declared = next(s for s in all_suites() if s.name == suite)
    assert declared.paper_table == f"{declared.module}.report:PAPER_TABLE"
    spec = suite_spec(suite)
    assert isinstance(spec, PaperTableSpec)
    table = build_paper_table(suite, spec, [])
    name, rows, columns, groups = SHAPES[suite]
    assert table.spec.table == name and len(table.rows) == rows and len(table.columns) == columns
    assert [group for group, _span in table.groups()] == groups
    # every paper cell is the paper's own print (its precision), none left empty
    assert all(cell is not None and cell.printed for row in table.rows for cell in row.cells)


def test_a_user_row_stands_under_the_paper_row_it_reproduces_in_the_papers_unit_and_precision():
    table = build_paper_table("stoichiometry", suite_spec("stoichiometry"), [stoichiometry_result("seq2seq", 0.6)])
    labels = [(row.kind, row.label) for row in table.rows]
    at = labels.index(("paper", "SMILES T2 x1"))
    assert labels[at + 1] == ("yours", "seq2seq")
    mine = table.rows[at + 1]
    # the sample is measured on test_in only: its EM in % with two decimals and its interval, cross/out empty
    main, spread = mine.cells[0].text()
    assert re.fullmatch(r"\d+\.\d\d", main) and re.fullmatch(r"\[\d+\.\d\d, \d+\.\d\d\]", spread)
    assert abs(float(main) - 100 * stoichiometry_result("seq2seq", 0.6).metrics["EM"]) < 0.006
    assert mine.cells[3] is None and mine.cells[6] is None
    # paper rows keep the printed text: "<1e-2" stays as printed
    assert table.rows[at].cells[3].text() == ("<1e-2", "")


def test_model_tables_place_the_user_row_beside_its_namesake_or_at_its_rank():
    ngram = generation_result()
    ngram.metrics.update({"Filters": 0.958, "Novelty": 0.97, "IntDiv": 0.874, "IntDiv2": 0.864})
    generation = build_paper_table("generation", suite_spec("generation"), [ngram])
    labels = [row.label for row in generation.rows]
    assert labels[labels.index("NGram") + 1] == "ngram" and generation.rows[0].label == "Train"
    mechanism = build_paper_table("mechanism", suite_spec("mechanism"), [mechanism_result()])
    totals = [(row.kind, row.cells[2].value) for row in mechanism.rows]
    mine = next(i for i, (kind, _v) in enumerate(totals) if kind == "yours")
    assert all(value >= totals[mine][1] for _k, value in totals[:mine])
    assert all(value <= totals[mine][1] for _k, value in totals[mine + 1:])
    # per-difficulty cells come from details.by_level, in percent with one decimal
    easy = next(i for i, c in enumerate(mechanism.columns) if c.key == "easy/S_total")
    assert mechanism.rows[mine].cells[easy].text()[0] == "20.0"


def test_paper_tables_of_every_suite_carry_a_verdict_and_a_figure(tmp_path, test_cards):
    from chemassay.report.load import load_results

    tables = paper_tables(load_results(every_suite(tmp_path / "results")))
    assert [t.suite for t in tables] == list(SHAPES)
    for table in tables:
        assert table.user_rows, table.suite
        if table.suite == "generation":  # the sample carries none of Table 2's metrics: a row of dashes
            assert all(cell is None for cell in table.user_rows[0].cells)
        assert table.figure is not None and table.figure.kind == "svg", table.suite
    assert all(t.verdict for t in tables if t.suite != "generation")


def test_the_training_set_row_is_never_starred():
    """MOSES's Train row is the data itself (novelty 0 by construction): it takes no part in ★."""
    from chemassay.contract.result import Result

    mine = Result(suite="generation", task="evaluate", metrics={"Novelty": 0.5, "Filters": 0.5}, n=30000)
    table = build_paper_table("generation", suite_spec("generation"), [mine])
    train = next(row for row in table.rows if row.label == "Train")
    assert not any(cell.best for cell in train.cells if cell is not None)


# --- export -------------------------------------------------------------------------------------------
def _tables(tmp_path):
    from chemassay.report.load import load_results

    return paper_tables(load_results(every_suite(tmp_path / "results")))


def test_latex_export_compiles_with_pdflatex(tmp_path, test_cards):
    from chemassay.report.export import write_export

    written = write_export(_tables(tmp_path), tmp_path / "tex", "latex")
    assert {p.name for p in written} == {f"{s}.tex" for s in SHAPES} | {"paper-tables.tex"}
    fragment = (tmp_path / "tex" / "stoichiometry.tex").read_text()
    assert r"\toprule" in fragment and r"\cmidrule(lr){2-4}" in fragment and "(ours)" in fragment
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.skip("pdflatex is not installed (Debian: apt-get install texlive-latex-base "
                    "texlive-latex-recommended): the LaTeX is written but not compiled")
    run = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", "paper-tables.tex"],
                         cwd=tmp_path / "tex", capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]
    assert (tmp_path / "tex" / "paper-tables.pdf").stat().st_size > 1000
    assert "Undefined control sequence" not in run.stdout and "Missing $" not in run.stdout


def test_markdown_export_renders_as_tables(tmp_path, test_cards):
    from markdown_it import MarkdownIt

    from chemassay.report.export import write_export

    tables = _tables(tmp_path)
    write_export(tables, tmp_path / "md", "markdown")
    html = MarkdownIt("commonmark").enable("table").render((tmp_path / "md" / "paper-tables.md").read_text())
    rendered = re.findall(r"<table>(.*?)</table>", html, re.S)
    assert len(rendered) == len(tables)
    for table, markup in zip(tables, rendered, strict=True):
        rows = re.findall(r"<tr>(.*?)</tr>", markup, re.S)
        assert len(rows) == 1 + len(table.rows)
        assert all(len(re.findall(r"<t[hd]", row)) == 1 + len(table.columns) for row in rows)
    assert "(ours)</strong>" in html


def test_csv_export_puts_intervals_beside_values(tmp_path, test_cards):
    from chemassay.report.export import write_export

    write_export(_tables(tmp_path), tmp_path / "csv", "csv")
    rows = list(csv.DictReader(io.StringIO((tmp_path / "csv" / "stoichiometry.csv").read_text())))
    mine = [row for row in rows if row["kind"] == "yours"]
    assert len(rows) == 8 + 2 and len(mine) == 2
    assert all(float(r["in EM low"]) <= float(r["in EM"]) <= float(r["in EM high"]) for r in mine)
    moses = list(csv.DictReader(io.StringIO((tmp_path / "csv" / "generation.csv").read_text())))
    assert next(r for r in moses if r["row"] == "HMM")["Filters std"] == "0.0489"


def test_report_format_option(tmp_path, cli, test_cards):
    every_suite(tmp_path / "results")
    outcome = cli("report", str(tmp_path / "results"), "--format", "markdown", "--out", str(tmp_path / "out"))
    assert outcome.code == 0, outcome.stderr
    assert (tmp_path / "out" / "paper-tables.md").is_file() and (tmp_path / "out" / "mechanism.md").is_file()
    assert not (tmp_path / "out" / "index.html").exists()
    bad = cli("report", str(tmp_path / "results"), "--format", "docx", "--out", str(tmp_path / "bad"))
    assert bad.code == 2 and "--format 'docx'" in bad.stderr


# --- the defects -----------------------------------------------------------------------------------------
def test_bar_chart_labels_are_never_shortened():
    from chemassay.report.scorecard.svg import bar_chart

    categories = ["formula_t1_x1 cross", "top1_accuracy_stereo_agnostic", "smiles_t2_x1 out"]
    svg = bar_chart(categories, {"a": [0.1, 0.2, 0.3]}, title="EM ↑ on the ChemAlgebra variants")
    assert all(f">{label}</text>" in svg for label in categories) and "…" not in svg


def test_a_leaderboard_chart_keeps_every_row_chebi20_gnn_included(test_cards):
    from chemassay.report.scorecard.leaderboard import build_leaderboards
    from chemassay.report.scorecard.plots import leaderboard_charts

    boards = build_leaderboards("robustness", [robustness_result()])
    chebi = next(b for b in boards if b.dataset == "amore-chebi20")
    figures = leaderboard_charts(chebi)
    assert figures and "GNN (DGL-LifeSci)" in figures[0].data
    assert "first 10" not in figures[0].caption.lower()
    drawn = len(re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="10" height="10"', figures[0].data))
    assert drawn == len(chebi.rows)  # one legend entry per row


def test_density_panels_reach_past_a_small_samples_kernel():
    """A quick run's few hundred molecules: the kernel density reached past the axis range."""
    from scipy.stats import gaussian_kde

    from chemassay.suites.generation.plots import axis_range

    rng = np.random.default_rng(3)
    reference = rng.normal(2.5, 1.0, 20_000)
    generated = rng.normal(2.0, 1.5, 60)
    low, high = axis_range(reference, generated)
    density = gaussian_kde(generated)
    peak = density(np.linspace(low, high, 400)).max()
    assert density(low)[0] < 0.02 * peak and density(high)[0] < 0.02 * peak


def _formula_result():
    """A stoichiometry result on a formula variant: ethanol + acetic acid predicted as a
    thioester (sulphur from nowhere, an oxygen lost)."""
    from chemassay.contract.result import Result
    from chemassay.suites.stoichiometry.scoring import score_lines

    scored = score_lines(["{1}C4H8OS.{1}H2O"], ["{1}C4H8O2.{1}H2O"], ["{1}C2H6O.{1}C2H4O2"], encoding="formula")
    return Result(suite="stoichiometry", task="evaluate", metrics={"EM": 0.0}, n=1, config={"encoding": "formula"},
                  setting={"variant": "formula_t1_x1", "split": "test_in"},
                  details={"rows": [sample.row() for sample in scored.samples], "breakdown": scored.breakdown})


def test_the_alchemy_gallery_colours_what_its_heading_promises():
    from chemassay.report.scorecard.depict import APPEAR, VANISH
    from chemassay.report.scorecard.galleries import suite_gallery

    red = "#" + "".join(f"{round(255 * c):02X}" for c in APPEAR)
    blue = "#" + "".join(f"{round(255 * c):02X}" for c in VANISH)
    for result in (stoichiometry_result(), _formula_result()):
        gallery = suite_gallery("stoichiometry", [result])
        assert "red" in gallery.title and "blue" in gallery.title and gallery.items
        panels = gallery.items[0].panels
        source = " ".join(p.svg or "" for p in panels if p.label.startswith("source")).upper()
        predicted = " ".join(p.svg or "" for p in panels if p.label.startswith("predicted")).upper()
        assert blue in source and red in predicted, gallery.items[0].caption


def test_a_long_data_text_is_printed_once_per_leaderboard(tmp_path, test_cards):
    """AMORE's twelve published ChEBI-20 rows share one data text: it is printed once under the
    board, not on every row."""
    from html import escape

    from chemassay.report.load import load_results
    from chemassay.report.published import reference_results
    from chemassay.report.scorecard import build_report

    html, _md = build_report(load_results(every_suite(tmp_path / "results")), tmp_path / "report")
    page = html.read_text()
    data = escape(next(r.dataset for r in reference_results("robustness") if r.table == "Table 1"))
    section = page[page.index('id="suite-robustness"'):page.index('id="suite-mechanism"')]
    boards = [part.split('id="plots-')[0] for part in re.split(r'<h4 id="board-', section)[1:]]
    chebi = [board for board in boards if "amore-chebi20" in board[:200]]
    assert chebi and chebi[0].count("PUBLISHED") >= 12
    assert all(board.count(data) == 1 for board in chebi)


def test_a_value_by_construction_is_marked_in_the_papers_table_and_its_export():
    """The fingerprint encoder retrieves every rewrite by construction: in AMORE's Table 1 its
    cells carry † and the reason, never ★, and the LaTeX export marks them with a dagger."""
    from chemassay.report.export import to_latex

    from .test_marks import _retrieval

    results = [_retrieval("fingerprint", "fingerprint", 50), _retrieval("good", "python", 45)]
    table = build_paper_table("robustness", suite_spec("robustness"), results)
    fingerprint = next(row for row in table.user_rows if row.label.startswith("fingerprint"))
    marked = [cell for cell in fingerprint.cells if cell is not None and cell.by_construction]
    assert marked and all(not cell.best for cell in marked)
    assert all("by construction" in (cell.note or "") for cell in marked)
    assert any(note.startswith("† ") and "never ranked" in note for note in table.notes)
    assert r"$^\dagger$" in to_latex(table)
