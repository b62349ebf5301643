"""Prediction-file layouts, alignment with the test file, breakdowns and the evaluate CLI."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.suites.reaction_ood.evaluation import (
    class_prefix,
    evaluate_predictions,
    parse_predictions,
)

TEST_ROWS = [
    # id, reactants, products, year, class_code
    ("a", "CC(=O)Cl.NCc1ccccc1", "CC(=O)NCc1ccccc1", 2001, "2.1.1"),
    ("b", "CCOC(C)=O.[OH-].[Na+]", "CC(=O)O.CCO", 2001, "6.2.1"),
    ("c", "O=C(O)/C=C/c1ccccc1.[H][H]", "O=C(O)CCc1ccccc1", 2002, "7.1.1"),
    ("d", "C[C@H](N)C(=O)OC.O", "C[C@H](N)C(=O)O", 2002, "6.2.1"),
    ("e", "Brc1ccccc1.OB(O)c1ccccc1", "c1ccc(-c2ccccc2)cc1", 2003, "3.1.1"),
]


@pytest.fixture
def test_frame() -> pd.DataFrame:
    return pd.DataFrame(TEST_ROWS, columns=["id", "reactants", "products", "year", "class_code"])


def long_predictions() -> pd.DataFrame:
    rows = [
        ("a", 1, "CC(=O)NCc1ccccc1"),
        ("b", 2, "OCC.CC(O)=O"), ("b", 1, "CC(=O)O"),          # ranks given out of order
        ("c", 1, "O=C(O)C=Cc1ccccc1"), ("c", 2, "OC(=O)CCc1ccccc1"),
        ("d", 1, "CC(N)C(=O)O"), ("d", 2, "C[C@@H](N)C(=O)O"),  # flat, then wrong enantiomer
        ("zz", 1, "C"),                                          # not in the test file
    ]  # "e" has no prediction at all
    return pd.DataFrame(rows, columns=["id", "rank", "prediction"])


def test_long_layout_sorted_by_rank_and_aligned_by_id(test_frame):
    parsed = parse_predictions(long_predictions(), source="p.csv")
    assert parsed.layout == "long"
    result = evaluate_predictions(test_frame, parsed, source="p.csv")
    ranks = dict(zip(result.per_item["id"], result.per_item["rank"], strict=True))
    assert ranks["a"] == 1 and ranks["b"] == 2 and ranks["c"] == 2
    assert pd.isna(ranks["d"]) and pd.isna(ranks["e"])
    flat = dict(zip(result.per_item["id"], result.per_item["rank_stereo_agnostic"], strict=True))
    assert flat["d"] == 1
    m = result.metrics
    assert m["top1_accuracy"] == pytest.approx(1 / 5)
    assert m["top2_accuracy"] == pytest.approx(3 / 5)
    assert m["top1_accuracy_stereo_agnostic"] == pytest.approx(2 / 5)
    assert m["n_missing_predictions"] == 1
    assert result.missing_ids == ["e"]
    assert result.unmatched_prediction_ids == ["zz"]


def test_breakdowns_by_year_and_class_prefix(test_frame):
    result = evaluate_predictions(test_frame, parse_predictions(long_predictions(), source="p"), source="p")
    years = {row["group"]: row for row in result.breakdowns["year"]}
    assert years[2001]["n"] == 2 and years[2001]["top1_accuracy"] == 0.5
    assert years[2002]["top2_accuracy"] == 0.5
    assert years[2003]["top1_accuracy"] == 0.0
    level1 = {row["group"]: row["n"] for row in result.breakdowns["class_level1"]}
    assert level1 == {"2": 1, "3": 1, "6": 2, "7": 1}
    assert [row["group"] for row in result.breakdowns["class_level2"]] == ["2.1", "3.1", "6.2", "7.1"]


def test_class_prefix_levels():
    assert class_prefix("3.1.2", 1) == "3"
    assert class_prefix("3.1.2", 2) == "3.1"
    assert class_prefix("3", 2) is None
    assert class_prefix(None, 1) is None
    assert class_prefix("0", 1) is None  # NameRxn's "unrecognized"


def test_wide_layouts_and_json_lists(test_frame):
    wide = pd.DataFrame({"id": ["a", "b"], "pred_1": ["CC(=O)NCc1ccccc1", "CC(=O)O"], "pred_2": ["", "CCO.CC(=O)O"]})
    parsed = parse_predictions(wide, source="w")
    assert parsed.layout == "wide"
    assert parsed.ranked == [["CC(=O)NCc1ccccc1"], ["CC(=O)O", "CCO.CC(=O)O"]]
    dashed = wide.rename(columns={"pred_1": "pred-1", "pred_2": "pred-2"})
    assert parse_predictions(dashed, source="d").ranked == parsed.ranked
    listed = pd.DataFrame({"id": ["a", "b"], "predictions": ['["CC(=O)NCc1ccccc1"]', "CC(=O)O CCO.CC(=O)O"]})
    assert parse_predictions(listed, source="l").ranked == parsed.ranked
    result = evaluate_predictions(test_frame, parsed, source="w")
    assert result.metrics["n_missing_predictions"] == 3


def test_n_best_layout_is_positional(test_frame):
    lines = pd.DataFrame({"prediction": ["CC(=O)NCc1ccccc1", "x", "CC(=O)O", "CCO.CC(=O)O", "", "",
                                         "C", "C", "C", "C"]})
    parsed = parse_predictions(lines, source="p.txt", n_best=2)
    assert parsed.ids is None and len(parsed.ranked) == 5
    result = evaluate_predictions(test_frame, parsed, source="p.txt")
    assert result.metrics["top1_accuracy"] == pytest.approx(0.2)
    assert result.metrics["top2_accuracy"] == pytest.approx(0.4)
    assert result.metrics["top1_invalid_rate"] == 0.0
    assert result.metrics["invalid_prediction_rate"] == pytest.approx(1 / 8)
    with pytest.raises(UserInputError, match="multiple of --n-best"):
        parse_predictions(lines, source="p.txt", n_best=3)
    with pytest.raises(UserInputError, match="--n-best"):
        parse_predictions(lines, source="p.txt")


def test_row_count_mismatch_without_ids_is_a_clear_error(test_frame):
    parsed = parse_predictions(pd.DataFrame({"prediction": ["C"] * 4}), source="p.txt", n_best=1)
    with pytest.raises(UserInputError, match="4 predicted items but 5 test reactions"):
        evaluate_predictions(test_frame, parsed, source="p.txt")


def test_unreadable_truth_rows_are_skipped_with_line_numbers(test_frame):
    broken = test_frame.copy()
    broken.loc[2, "products"] = "C1CC"
    result = evaluate_predictions(broken, parse_predictions(long_predictions(), source="p"), source="p")
    assert len(result.per_item) == 4
    assert result.skipped == [{"line": 4, "item": "c", "reason": "recorded products 'C1CC' cannot be read by RDKit"}]


def test_evaluate_cli_writes_the_result_contract(cli, tmp_path, test_frame):
    truth = tmp_path / "test.csv"
    preds = tmp_path / "preds.csv"
    test_frame.to_csv(truth, index=False)
    long_predictions().to_csv(preds, index=False)
    out = tmp_path / "result.json"
    items = tmp_path / "items.parquet"
    run = cli("reaction-ood", "evaluate", preds, "--truth", truth, "--out", out, "--per-item", items,
              "--group-by", "class_code", "--label", "random")
    assert run.code == 0, run.stderr
    assert "top1_accuracy" in run.stdout
    data = json.loads(out.read_text())
    for key in ("suite", "task", "metrics", "n", "skipped", "dataset", "inputs", "config", "versions", "elapsed_s"):
        assert key in data
    assert data["suite"] == "reaction-ood" and data["task"] == "evaluate" and data["n"] == 5
    assert data["metrics"]["top1_accuracy"] == pytest.approx(0.2)
    assert data["config"]["label"] == "random"
    assert set(data["details"]["breakdowns"]) == {"year", "class_level1", "class_level2", "class_code"}
    assert data["details"]["per_item"] == str(items)
    # the test reaction without predictions and the prediction id no test reaction has: listed
    assert data["skipped"] == [
        {"line": 6, "item": "e", "index": 4, "reason": "no prediction for this test reaction; scored as wrong"},
        {"line": None, "item": "zz", "index": None,
         "reason": "prediction file: id not among the test reactions; ignored"},
    ]
    assert data["metrics"]["n_missing_predictions"] == 1 and data["metrics"]["n_unmatched_prediction_ids"] == 1
    assert [i["sha256"] is not None for i in data["inputs"]] == [True, True]
    assert len(pd.read_parquet(items)) == 5


def test_evaluate_cli_bad_inputs_exit_2(cli, tmp_path, test_frame):
    truth = tmp_path / "test.csv"
    test_frame.drop(columns=["products"]).rename(columns={"reactants": "r"}).to_csv(truth, index=False)
    preds = tmp_path / "preds.csv"
    long_predictions().to_csv(preds, index=False)
    run = cli("reaction-ood", "evaluate", preds, "--truth", truth)
    assert run.code == 2
    assert "needs a 'products' or 'rxn_smiles' column" in run.stderr
    missing = cli("reaction-ood", "evaluate", tmp_path / "nope.csv", "--truth", truth)
    assert missing.code == 2 and "no such prediction file" in missing.stderr
    weird = tmp_path / "preds.xlsx"
    weird.write_text("x")
    assert cli("reaction-ood", "evaluate", weird, "--truth", truth).code == 2


def test_result_names_the_split_from_its_manifest(cli, tmp_path, test_frame):
    split_dir = tmp_path / "split"
    split_dir.mkdir()
    test_frame.to_parquet(split_dir / "test_ood.parquet")
    (split_dir / "manifest.json").write_text(json.dumps({
        "kind": "document", "config": {"name": "schneider_document"},
        "input": {"path": "/data/schneider_clean.parquet", "rows": 5},
    }))
    preds = tmp_path / "preds.csv"
    long_predictions().to_csv(preds, index=False)
    out = tmp_path / "r.json"
    assert cli("reaction-ood", "evaluate", preds, "--truth", split_dir / "test_ood.parquet", "--out", out).code == 0
    data = json.loads(out.read_text())
    # the part and split kind go into the setting; the name is the data the split was made from
    assert data["dataset"]["name"] == "schneider_clean.parquet" and len(data["dataset"]["sha256"]) == 64
    assert data["setting"] == {"split": "document", "part": "test_ood"}
