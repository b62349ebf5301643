"""Honest marks in the scorecard's leaderboards: no ★ from a zero-wide interval, values fixed
by construction marked † and never ranked, a metric computed on fewer items than its name says
labelled so, one unit per metric with the paper's own decimals, and a line saying why a
published table has no row for a setting."""

from __future__ import annotations

import numpy as np

from chemassay.contract.result import DatasetRef, ModelRef, Result
from chemassay.report.intervals import attach_intervals
from chemassay.report.scorecard import build_scorecard
from chemassay.report.scorecard.leaderboard import build_leaderboards, format_cell


def _retrieval(name: str, kind: str, hits: int, n: int = 50, dataset: str = "chebi20") -> Result:
    keys = ("canonical", "explicit_h", "kekulize", "cycle_renumber_amore")
    per_item = {f"{k}/o2a_acc@1": [1.0] * hits + [0.0] * (n - hits) for k in keys}
    result = Result(suite="robustness", task="evaluate", metrics={k: hits / n for k in per_item}, n=n,
                    item_ids=[f"CID{i}" for i in range(n)], item_scores=per_item,
                    model=ModelRef(spec=kind, name=name, kind=kind, checksum="a" * 64),
                    dataset=DatasetRef(name=f"amore-{dataset}", sha256="4" * 64), setting={"dataset": dataset})
    return attach_intervals(result, resamples=300, seed=0)


def test_no_star_from_a_zero_wide_interval():
    """0 of 40 unreadable first answers against 2 of 40: the bootstrap's [0, 0] sat below the
    other row's interval and won the ★ (lower is better); Wilson's [0, 8.8 %] does not."""
    def run(name: str, bad: int) -> Result:
        values = [1.0] * bad + [0.0] * (40 - bad)
        result = Result(suite="reaction-ood", task="evaluate", metrics={"top1_invalid_rate": bad / 40}, n=40,
                        item_ids=[f"r{i}" for i in range(40)], item_scores={"top1_invalid_rate": values},
                        model=ModelRef(spec=name, name=name, kind="python"),
                        dataset=DatasetRef(name="schneider-50k", sha256="2" * 64),
                        setting={"split": "random", "part": "test"})
        return attach_intervals(result)

    (board,) = build_leaderboards("reaction-ood", [run("clean", 0), run("sloppy", 4)], published=False)
    cells = [row.cells["top1_invalid_rate"] for row in board.user_rows]
    assert cells[0].low == 0.0 and cells[0].high > 0.08
    assert not any(cell.best for cell in cells)


def test_a_value_by_construction_is_marked_and_never_ranked():
    """The fingerprint encoder retrieves every rewrite by construction: shown with † and the
    reason, no ★, and it does not stand in the way of the best learned encoder's ★."""
    results = [_retrieval("fingerprint", "fingerprint", 50), _retrieval("good", "python", 45),
               _retrieval("weak", "python", 10)]
    (board,) = build_leaderboards("robustness", results, published=False)
    fingerprint, good, weak = board.user_rows
    assert fingerprint.label == "fingerprint †" and good.label == "good"
    cell = fingerprint.cells["kekulize/o2a_acc@1"]
    assert cell.by_construction and "molecular graph" in cell.by_construction and not cell.best
    value, _spread = format_cell(cell)
    assert value.endswith(" †")
    assert good.cells["kekulize/o2a_acc@1"].best and not weak.cells["kekulize/o2a_acc@1"].best
    assert any(note.startswith("fingerprint †: by construction: Morgan fingerprints") and "never ranked" in note
               for note in board.notes)
    assert fingerprint.notes and "by construction" in fingerprint.notes[0]


def test_the_nearest_neighbour_mechanism_baselines_validity_is_by_construction():
    from .samples import mechanism_result

    nn = mechanism_result("nearest-neighbour")
    nn.model = ModelRef(spec="nearest-neighbour", name="nearest-neighbour", kind="nearest-neighbour")
    (board,) = build_leaderboards("mechanism", [nn], published=False)
    (row,) = board.user_rows
    assert row.cells["V"].by_construction and "first product" in row.cells["V"].by_construction
    assert row.cells["S_total"].by_construction is None
    assert format_cell(row.cells["V"]) == ("100.0 % †", "[72.2, 100.0]")  # Wilson of 10 of 10, as the verdict prints it


def test_unique_at_k_on_fewer_valid_molecules_is_labelled_with_its_size():
    from chemassay.suites.generation.details import EvaluateDetails

    details = EvaluateDetails(counts={"input": 30000, "valid": 7255, "invalid": 22745, "unique_valid": 7250})
    result = Result(suite="generation", task="evaluate", n=30000, details=details,
                    metrics={"valid": 0.2418, "unique@1000": 1.0, "unique@10000": 0.9993},
                    model=ModelRef(spec="ngram", name="ngram", kind="ngram"),
                    dataset=DatasetRef(name="moses", sha256="3" * 64))
    (alone,) = build_leaderboards("generation", [result], published=False)
    labels = {column.key: column.label for column in alone.columns}
    assert labels["unique@10000"] == "unique@7,255" and labels["unique@1000"] == "unique@1000"
    (row,) = alone.user_rows
    assert format_cell(row.cells["unique@10000"])[0] == "0.9993 @7,255"
    assert any("unique@10000 is computed on 7,255 items" in note for note in alone.notes)
    # beside the paper's rows (computed on 10,000) the column keeps its name; the cell says its size
    (beside,) = build_leaderboards("generation", [result])
    assert {c.key: c.label for c in beside.columns}["unique@10000"] == "unique@10000"
    assert format_cell(beside.user_rows[0].cells["unique@10000"])[0] == "0.9993 @7,255"


def test_one_unit_per_metric_and_the_papers_own_decimals():
    """oMeBench prints oMeS in percent (0.0, 6.3...): the leaderboard shows S_total in percent
    for the user's rows and the paper's, each published value with its printed decimals; MOSES
    prints fractions with its own precision (no padding to four significant figures)."""
    from .samples import generation_result, mechanism_result

    card = build_scorecard([mechanism_result("a-model"), generation_result()])
    mech = card.sections[[s.suite for s in card.sections].index("mechanism")].leaderboards[0]
    column = {c.key: c for c in mech.columns}
    assert column["S_total"].label == "S_total" and column["S_total"].percent
    user = mech.user_rows[0].cells["S_total"]
    value, spread = format_cell(user)
    assert np.mean([0.0, 0.2, 0.5, 1.0, 0.0, 0.3, 0.1, 0.0, 0.6, 0.4]) == user.value and value == "31.0 %"
    low, high = (float(x) for x in spread.strip("[]").split(", "))
    assert (low, high) == (round(100 * user.low, 1), round(100 * user.high, 1)) and high > 31  # in percent too
    published = [row for row in mech.rows + mech.other_data if row.published and "S_total" in row.cells]
    assert published
    for row in published:
        cell = row.cells["S_total"]
        shown = format_cell(cell)[0]
        printed = cell.printed.strip()
        assert shown == f"{printed} %", (row.label, printed, shown)  # as printed, in percent
    gen = card.sections[[s.suite for s in card.sections].index("generation")].leaderboards[0]
    texts = [format_cell(row.cells.get("FCD/Test"))[0] for row in gen.rows if row.published]
    printed = [row.cells["FCD/Test"].printed for row in gen.rows if row.published and "FCD/Test" in row.cells]
    assert texts and all("±" not in t for t in texts)
    spreads = [format_cell(row.cells["FCD/Test"])[1] for row in gen.rows if row.published and "FCD/Test" in row.cells]
    for text, spread, shown in zip(printed, spreads, texts, strict=True):
        assert f"{shown} {spread}".strip() == text.replace("  ", " ")  # "0.073 ± 0.025", not "0.07300 ± 0.02500"


def test_a_published_table_without_a_row_for_the_setting_says_why():
    isomers = _retrieval("char-ngram", "char-ngram", 20, dataset="isomers")
    (board,) = build_leaderboards("robustness", [isomers])
    assert not any(row.published for row in board.rows + board.other_data)
    assert any(note.startswith("No published row for this setting: AMORE's Table 2") for note in board.notes)
    chebi = _retrieval("char-ngram", "char-ngram", 20)
    (board,) = build_leaderboards("robustness", [chebi])
    assert any(row.published for row in board.rows + board.other_data)
    assert not any(note.startswith("No published row") for note in board.notes)

    def rood(setting: dict[str, str]) -> Result:
        return Result(suite="reaction-ood", task="evaluate", metrics={"top1_accuracy": 0.5}, n=2,
                      model=ModelRef(spec="m", name="m", kind="python"),
                      dataset=DatasetRef(name="schneider-50k", sha256="2" * 64), setting=setting)

    (seen,) = build_leaderboards("reaction-ood", [rood({"split": "document", "part": "test"})])
    assert any("seen patents" in note for note in seen.notes)
    (time,) = build_leaderboards("reaction-ood", [rood({"split": "time", "part": "test_ood", "cutoff": "2004"})])
    assert any("Buchwald-Hartwig" in note for note in time.notes)


def test_every_key_the_paper_names_alike_shares_its_unit():
    """AMORE prints original→augmented Acc@1 in percent; the augmented→original Acc@1 beside it
    (the same metric, another direction) is shown in percent too, not as a fraction."""
    result = _retrieval("char-ngram", "char-ngram", 20)
    result.metrics["canonical/a2o_acc@1"] = 0.3
    (board,) = build_leaderboards("robustness", [result], published=False)
    units = {column.key: column.percent for column in board.columns}
    assert units["canonical/o2a_acc@1"] and units["canonical/a2o_acc@1"]
    assert format_cell(board.user_rows[0].cells["canonical/a2o_acc@1"])[0] == "30.0 %"


def test_the_generation_verdict_names_the_size_unique_at_k_was_computed_on():
    from chemassay.suites.generation.assay import ASSAY
    from chemassay.suites.generation.details import EvaluateDetails

    details = EvaluateDetails(counts={"input": 1000, "valid": 242, "invalid": 758, "unique_valid": 241})
    result = Result(suite="generation", task="evaluate", n=1000, details=details, quick=True,
                    metrics={"valid": 0.242, "unique@1000": 0.9959, "unique@10000": 0.9959},
                    dataset=DatasetRef(name="moses", sha256="3" * 64))
    verdict = ASSAY.verdict([result])
    assert "unique@242 0.996" in verdict and "unique@10000" not in verdict
