"""The scorecard: leaderboards beside the published rows, best-value marking, plots, galleries,
self-contained HTML and Markdown, and ``chemassay report``."""

import base64
import json
import re

import pytest

from chemassay.report.load import load_result, load_results
from chemassay.report.scorecard import build_report, build_scorecard
from chemassay.report.scorecard.galleries import suite_gallery
from chemassay.report.scorecard.leaderboard import (
    Cell,
    Column,
    Leaderboard,
    Row,
    format_cell,
    format_number,
    mark_best,
)
from chemassay.suites.mechanism.report import align_steps

from .samples import every_suite, mechanism_result, reaction_ood_result, stoichiometry_result


def _board(direction: str, rows: list[tuple[str, Cell, bool]]) -> Leaderboard:
    return Leaderboard(suite="stoichiometry", task="evaluate", dataset=None, setting={},
                       columns=[Column("EM", "EM", direction)],
                       rows=[Row(label, published, "src", "data", {"EM": cell}) for label, cell, published in rows])


def test_best_is_marked_only_where_its_interval_separates_it():
    board = _board("higher", [("a", Cell(0.9, 0.85, 0.95), False), ("b", Cell(0.5, 0.45, 0.55), False)])
    mark_best(board)
    assert [r.cells["EM"].best for r in board.rows] == [True, False]
    overlapping = _board("higher", [("a", Cell(0.9, 0.6, 0.95), False), ("b", Cell(0.7, 0.55, 0.8), False)])
    mark_best(overlapping)
    assert not any(r.cells["EM"].best for r in overlapping.rows)
    # a published value inside the interval (value ± its printed std) prevents the mark
    published = _board("higher", [("a", Cell(0.9, 0.85, 0.95), False), ("paper", Cell(0.84, std=0.02), True)])
    mark_best(published)
    assert not published.rows[0].cells["EM"].best
    # the best value without an interval is never marked
    no_interval = _board("higher", [("paper", Cell(0.99), True), ("a", Cell(0.5, 0.45, 0.55), False)])
    mark_best(no_interval)
    assert not any(r.cells["EM"].best for r in no_interval.rows)
    lower = _board("lower", [("a", Cell(0.1, 0.05, 0.15), False), ("b", Cell(0.5, 0.45, 0.55), False)])
    mark_best(lower)
    assert lower.rows[0].cells["EM"].best
    neutral = _board("none", [("a", Cell(0.9, 0.85, 0.95), False), ("b", Cell(0.5, 0.45, 0.55), False)])
    mark_best(neutral)
    assert not any(r.cells["EM"].best for r in neutral.rows)


def test_format_number():
    assert format_number(15000.0) == "15000" and format_number(82.9933) == "82.99"
    assert format_number(0.652991) == "0.6530" and format_number(0.0003) == "0.0003000"
    assert format_number(3e-05) == "3e-05" and format_number(None) == "–"


def test_a_printed_bound_renders_in_the_column_unit_without_padding(test_cards):
    """ChemAlgebra Table 4 prints SMILES T2 x1 cross EM as "<1e-2" (percent): the leaderboard
    shows EM in percent, as the paper and the verdicts do, so ``<0.01 %``, not ``<0.0001000``,
    and says how the paper printed it."""
    from chemassay.report.scorecard.render import render_html, render_markdown

    assert format_cell(Cell(None, bound="<", bound_value=1e-4)) == ("<0.0001", "")
    assert format_cell(Cell(None, bound="<", bound_value=0.25)) == ("<0.25", "")
    assert format_cell(Cell(None, bound="<", bound_value=3e-05)) == ("<3e-05", "")
    cross = stoichiometry_result("seq2seq", 0.2)
    cross.setting["split"] = "test_cross"
    card = build_scorecard([cross])
    board = card.sections[0].leaderboards[0]
    published = board.other_data  # the paper measured on USPTO-MIT, the user on USPTO-15K
    assert [format_cell(r.cells["EM"])[0] for r in published] == ["<0.01 %"]
    assert published[0].cells["EM"].note == "the paper prints <1e-2 %"
    markdown, _ = render_markdown(card)
    assert "<0.01 % " in markdown.replace("|", " ") and "<0.0001000" not in markdown
    html = render_html(card)
    assert 'title="the paper prints &lt;1e-2 %"' in html and "&lt;0.01 %<" in html and "0.0001000" not in html


def test_leaderboards_put_published_rows_of_the_same_setting_beside_the_users(test_cards):
    card = build_scorecard([stoichiometry_result("seq2seq", 0.9), stoichiometry_result("copy", 0.1, 1),
                            reaction_ood_result()])
    assert [s.suite for s in card.sections] == ["stoichiometry", "reaction-ood"]
    board = card.sections[0].leaderboards[0]
    assert board.setting == {"variant": "smiles_t2_x1", "split": "test_in"}
    assert [c.key for c in board.columns][:2] == ["EM", "JAC"] and board.columns[0].arrow == "↑"
    users, published = board.user_rows, [r for r in board.rows if r.published]
    assert [r.label for r in users] == ["seq2seq", "copy"] and all(r.data == "uspto-15k" for r in users)
    # the paper's Table 4 row of SMILES T2 x1 on test_in, and nothing of other variants or splits; measured on
    # the authors' USPTO-BAL variants, not on USPTO-15K: shown apart as different data, never in the ranked rows
    assert published == []
    assert [(r.source, r.cells["EM"].value) for r in board.other_data] == [
        ("ChemAlgebra (Valenti et al., 2022), Table 4", pytest.approx(0.0003))]
    assert "authors' data" in board.other_data[0].data and not board.other_data[0].cells["EM"].best
    # the 0.9 model's EM interval lies above every other ranked row: marked
    assert users[0].cells["EM"].best and not users[1].cells["EM"].best
    rood = card.sections[1].leaderboards[0]
    assert not [r for r in rood.rows if r.published]
    assert [r.source.rsplit(", ", 1)[1] for r in rood.other_data] == ["Table S2.2"]
    assert rood.other_data[0].label == "BART encoder-decoder (Bradshaw et al.) — on documents"
    # suites are never mixed in one table
    for section in card.sections:
        assert all(row.result is None or row.result.suite == section.suite for b in section.leaderboards for row in b.rows)


def test_galleries_from_per_item_fields(test_cards):
    stoichiometry = suite_gallery("stoichiometry", [stoichiometry_result()])
    first = stoichiometry.items[0]
    assert "DE: S +1, O −1" in first.caption
    panels = [(panel.label, panel.text, panel.svg.upper()) for panel in first.panels]
    # oxygen vanishes: highlighted blue in the source; sulphur appears: red in the prediction
    assert [(label, text) for label, text, _ in panels] == [
        ("source", "CC(=O)O"), ("source", "CCO"), ("predicted", "CCSC(C)=O"), ("predicted", "O"),
        ("true", "CCOC(C)=O"), ("true", "O")]
    assert all("#427ADB" in svg for label, _, svg in panels if label == "source")
    assert "#DB3D3D" in panels[2][2] and "#DB3D3D" not in panels[3][2]
    assert not any("#427ADB" in svg or "#DB3D3D" in svg for label, _, svg in panels if label == "true")
    assert "Cl −1" in stoichiometry.items[1].caption and len(stoichiometry.items) == 2  # the balanced row is no failure
    rood = suite_gallery("reaction-ood", [reaction_ood_result()])
    assert [item.caption.split(" · ")[1] for item in rood.items] == ["rxn-0", "rxn-1"]
    assert "not among the predictions" in rood.items[1].caption
    assert [p.label for p in rood.items[0].panels] == ["reactants", "predicted top-1", "true product"]
    mechanism = suite_gallery("mechanism", [mechanism_result()])
    steps = mechanism.items[0].steps
    assert [tag for tag, _, _ in steps] == ["skip_gold", "match", "type_mismatch", "skip_pred"]
    assert steps[0][2] is None and steps[3][1] is None
    assert steps[1][1].label == steps[1][2].label == "nucleophilic_addition"
    assert "cannot draw" in steps[3][2].svg  # an unparseable intermediate gets a placeholder, not an error


def test_align_steps_consumes_each_side_by_tag():
    gold, predicted = [{"subtype": "g0"}, {"subtype": "g1"}], [{"subtype": "p0"}, {"subtype": "p1"}, {"subtype": "p2"}]
    pairs = align_steps(["match", "skip_pred", "type_mismatch"], gold, predicted)
    assert [(t, g.label if g else None, p.label if p else None) for t, g, p in pairs] == [
        ("match", "g0", "p0"), ("skip_pred", None, "p1"), ("type_mismatch", "g1", "p2")]


def test_missing_gallery_fields_are_named():
    from chemassay.contract.result import Result

    bare = Result(suite="stoichiometry", task="evaluate", metrics={}, n=1)
    assert "rows[i].prediction" in suite_gallery("stoichiometry", [bare]).missing
    assert "items = [{id, reactants, target" in suite_gallery("reaction-ood", [Result(suite="reaction-ood", task="evaluate", metrics={}, n=1)]).missing
    assert "misses = [" in suite_gallery("robustness", [Result(suite="robustness", task="evaluate", metrics={}, n=1)]).missing
    assert "gold_steps" in suite_gallery("mechanism", [Result(suite="mechanism", task="evaluate", metrics={}, n=1)]).missing
    assert suite_gallery("generation", []) is None


def test_report_files_are_self_contained(tmp_path, test_cards):
    paths = every_suite(tmp_path / "results")
    html_path, md_path = build_report(load_results(paths), tmp_path / "out")
    html = html_path.read_text()
    assert "<script" not in html and "<link" not in html
    assert not re.search(r"""(src|href)=["'](https?:|//|file:)""", html)
    sources = re.findall(r'<img[^>]*src="([^"]+)"', html)
    assert sources and all(s.startswith("data:image/") for s in sources)
    # the PNG the generation result points to (relative to its file) is embedded byte for byte
    png = (tmp_path / "results" / "generation" / "properties.png").read_bytes()
    assert "data:image/png;base64," + base64.b64encode(png).decode() in html
    for suite in ("stoichiometry", "reaction-ood", "generation", "robustness", "mechanism"):
        for part in ("suite", "leaderboards", "plots", "published", "details"):
            assert f'id="{part}-{suite}"' in html
    for suite in ("stoichiometry", "reaction-ood", "robustness", "mechanism"):
        assert f'id="gallery-{suite}"' in html
    assert 'class="best"' in html and "PUBLISHED" in html and "↑" in html and "↓" in html
    markdown = md_path.read_text()
    assert "### stoichiometry" in markdown and "| model | source | EM ↑ | JAC ↑ |" in markdown
    assert "*(published, different data)* Transformer (ChemAlgebra baseline)" in markdown and "★" in markdown
    for picture in re.findall(r"\]\((assets/[^)]+)\)", markdown):
        assert (md_path.parent / picture).is_file()


def test_missing_picture_is_reported_not_dropped(tmp_path, test_cards):
    from .samples import generation_result

    result = generation_result(tmp_path / "nowhere.png")
    card = build_scorecard([result])
    assert any("nowhere.png" in note for note in card.notes)


def test_report_cli(tmp_path, cli, store_home, test_cards):
    paths = every_suite(tmp_path / "results")
    outcome = cli("report", tmp_path / "results", "--out", tmp_path / "out", "--title", "my models")
    assert outcome.code == 0, outcome.stderr
    html = (tmp_path / "out" / "index.html").read_text()
    assert "<title>my models</title>" in html and (tmp_path / "out" / "index.md").is_file()
    # a hand-edited file: one line naming the file and the field, exit 2
    data = json.loads(paths[0].read_text())
    data["item_scores"]["EM"] = data["item_scores"]["EM"][:-1]
    paths[0].write_text(json.dumps(data))
    refused = cli("report", paths[0], "--out", tmp_path / "out2")
    assert refused.code == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert str(paths[0]) in refused.stderr and "field 'item_scores.EM'" in refused.stderr
    assert not (tmp_path / "out2" / "index.html").exists()
    # from the store, with a filter
    from chemassay.report.store import record

    for path in paths[1:]:
        record(load_result(path), path)
    stored = cli("report", "--from-store", "suite=reaction-ood", "--out", tmp_path / "out3")
    assert stored.code == 0 and "(1 results)" in stored.stdout
    assert 'id="suite-reaction-ood"' in (tmp_path / "out3" / "index.html").read_text()
    assert cli("report", "--from-store", "colour=red", "--out", tmp_path / "out4").code == 2
    assert cli("report", "--out", tmp_path / "out5").code == 2


def test_rounding_noise_and_quick_results_are_never_starred(test_cards):
    noise = _board("lower", [("a", Cell(-8.63e-17, -8.63e-17, -8.63e-17), False), ("b", Cell(0.0, 0.0, 0.0), False)])
    mark_best(noise)
    assert not any(r.cells["EM"].best for r in noise.rows)
    # a real separation of the same size relative to the values is still marked
    tiny = _board("lower", [("a", Cell(1e-6, 0.5e-6, 1.5e-6), False), ("b", Cell(5e-6, 4e-6, 6e-6), False)])
    mark_best(tiny)
    assert tiny.rows[0].cells["EM"].best
    # the same results in quick mode: shown, never ranked
    quick = [stoichiometry_result("seq2seq", 0.9).model_copy(update={"quick": True}),
             stoichiometry_result("copy", 0.1, 1).model_copy(update={"quick": True})]
    board = build_scorecard(quick).sections[0].leaderboards[0]
    assert board.quick and "quick subset" in board.title
    assert not any(cell.best for row in board.rows for cell in row.cells.values())


def test_subset_results_are_shown_beside_the_papers_rows_marked_and_never_starred(test_cards, tmp_path):
    from chemassay.contract.result import SubsetRef
    from chemassay.report.scorecard import write_report
    from chemassay.report.subsets import subset_sha256

    strong, weak = stoichiometry_result("seq2seq", 0.9), stoichiometry_result("copy", 0.1, 1)
    subset = SubsetRef(seed=0, size=60, of=2553, sha256=subset_sha256(strong.item_ids), limit=60)
    subsets = [strong.model_copy(update={"subset": subset}), weak.model_copy(update={"subset": subset})]
    card = build_scorecard([*subsets, strong])
    boards = card.sections[0].leaderboards
    assert len(boards) == 2  # the subset results share a table; the whole-task result has its own
    board = next(b for b in boards if b.subset is not None)
    assert "seeded subset: 60 of 2,553 items (seed 0)" in board.title and not board.ranked
    assert not any(cell.best for row in board.rows for cell in row.cells.values())
    assert any(row.published for row in board.rows + board.other_data)  # beside the papers' rows
    assert all(row.cells["EM"].low is not None for row in board.rows if not row.published)  # with intervals
    # a "subset" that holds every item of its task is the whole task
    whole = strong.model_copy(update={"subset": subset.model_copy(update={"of": 60})})
    assert build_scorecard([whole]).sections[0].leaderboards[0].subset is None
    html, markdown = write_report(card, tmp_path)
    assert "seeded subset: 60 of 2,553 items" in html.read_text() and "never ranked" in markdown.read_text()


def test_a_models_published_metrics_spread_over_several_tables_are_one_row(test_cards):
    from .samples import generation_result

    board = build_scorecard([generation_result()]).sections[0].leaderboards[0]
    published = [row.label for row in board.rows if row.published]
    assert len(published) == len(set(published)) and "CharRNN" in published
    charrnn = next(row for row in board.rows if row.label == "CharRNN")
    # valid is printed in Table 1 and FCD/Test in Table 3: both in the one row, measured on the same data
    assert {"valid", "FCD/Test"} <= set(charrnn.cells) and "Table 1" in charrnn.source and "Table 3" in charrnn.source
    assert charrnn.data.startswith("MOSES") and not board.other_data


def test_charts_keep_directions_apart_and_legends_distinct(test_cards):
    from chemassay.report.scorecard.plots import leaderboard_charts
    from chemassay.report.scorecard.svg import shorten_unique

    board = Leaderboard(suite="stoichiometry", task="evaluate", dataset="uspto-15k", setting={},
                        columns=[Column("EM", "EM", "higher"), Column("DE", "DE", "lower")],
                        rows=[Row(f"Molecular Transformer, a long label that ends in setting {k}", True, "src", "d",
                                  {"EM": Cell(0.1 * k, std=0.01), "DE": Cell(0.05 * k)}) for k in range(1, 4)])
    figures = leaderboard_charts(board)
    assert [f.title.rsplit("(", 1)[1] for f in figures] == ["↑ higher is better)", "↓ lower is better)"]
    labels = shorten_unique([row.label for row in board.rows], 40)
    assert len(set(labels)) == 3 and all(len(label) <= 40 for label in labels)
    assert all(label.endswith(str(k)) for k, label in enumerate(labels, start=1))


def test_a_report_written_again_into_its_folder_keeps_no_stale_pictures(tmp_path, test_cards):
    build_report([stoichiometry_result()], tmp_path)
    stale = tmp_path / "assets" / "left-from-an-older-report.svg"
    stale.write_text("<svg/>")
    build_report([stoichiometry_result()], tmp_path)
    assert not stale.exists() and any((tmp_path / "assets").iterdir())
