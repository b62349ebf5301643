"""Bad inputs and faults of issue 18 in reaction-ood: each gets one line naming the right file
(exit code 2), nothing is dropped silently, and an unwritable output fails before any work; and
a fuzz test of the suite's readers (``CHEMASSAY_FUZZ_EXAMPLES`` examples, 60 by default)."""

from __future__ import annotations

import gzip
import json
import os

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

TRUTH = "id,reactants,products\na,CC(=O)Cl.NC,CNC(C)=O\nb,CCO.CC(=O)O,CCOC(C)=O\nc,CCO.CC(=O)O,CCOC(C)=O\n"


def one_line_error(run) -> str:
    assert run.code == 2, (run.code, run.stdout, run.stderr)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    assert "Traceback" not in run.stderr
    return lines[0]


@pytest.fixture
def truth(tmp_path):
    path = tmp_path / "truth.csv"
    path.write_text(TRUTH)
    return path


def truncated_gzip(path, text: str) -> None:
    path.write_bytes(gzip.compress(text.encode())[:-12])  # cut before the end marker


def test_jsonl_given_to_clean_names_the_file_and_the_formats(cli, tmp_path):
    # before: numpy's _UFuncNoLoopError traceback
    records = tmp_path / "reactions.jsonl"
    records.write_text('{"rxn_smiles": "CCO.CC(=O)O>>CCOC(C)=O"}\n{"rxn_smiles": "CC(=O)Cl.NC>>CNC(C)=O"}\n')
    line = one_line_error(cli("reaction-ood", "clean", records, "--out", tmp_path / "clean.parquet"))
    assert str(records) in line and "not Pistachio JSON lines" in line
    for accepted in ("table", "rsmi", "schneider", "pistachio", "--format"):
        assert accepted in line
    assert not (tmp_path / "clean.parquet").exists()


def test_clean_of_a_table_without_any_readable_reaction_writes_an_empty_table(cli, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("rxn_smiles\nxx>>yy\nC1CC>>C\n")
    report = tmp_path / "report.json"
    run = cli("reaction-ood", "clean", bad, "--out", tmp_path / "clean.parquet", "--report", report)
    assert run.code == 0, run.stderr
    result = json.loads(report.read_text())
    assert result["metrics"]["unparsable"] == 2 and result["metrics"]["rows_out"] == 0
    assert [s["line"] for s in result["skipped"]] == [1, 2]
    assert len(pd.read_parquet(tmp_path / "clean.parquet")) == 0


@pytest.mark.parametrize("which", ["predictions", "truth"])
def test_truncated_gzip_to_evaluate_is_named(cli, tmp_path, truth, which):
    # before: the single word "aborted" (click's answer to an EOFError), exit code 1
    preds = tmp_path / "preds.csv"
    preds.write_text("id,pred_1\na,CNC(C)=O\nb,CCO\n")
    broken = tmp_path / f"{which}.csv.gz"
    truncated_gzip(broken, (preds if which == "predictions" else truth).read_text() * 50)
    args = (broken, "--truth", truth) if which == "predictions" else (preds, "--truth", broken)
    line = one_line_error(cli("reaction-ood", "evaluate", *args))
    assert str(broken) in line and "truncated" in line


def test_truncated_gzip_to_clean_is_named(cli, tmp_path):
    broken = tmp_path / "reactions.csv.gz"
    truncated_gzip(broken, "rxn_smiles\n" + "CCCCC(=O)O.CCO>>CCCCC(=O)OCC\n" * 400)
    line = one_line_error(cli("reaction-ood", "clean", broken, "--out", tmp_path / "clean.parquet"))
    assert str(broken) in line and "truncated" in line


def test_bad_truth_columns_blame_the_truth_file(cli, tmp_path):
    # before: "error: preds.csv: needs a 'products' or 'rxn_smiles' column"
    preds = tmp_path / "preds.csv"
    preds.write_text("id,pred_1\na,CNC(C)=O\n")
    bad_truth = tmp_path / "truth.csv"
    bad_truth.write_text("id,foo\na,x\n")
    line = one_line_error(cli("reaction-ood", "evaluate", preds, "--truth", bad_truth))
    assert line.startswith(f"error: {bad_truth}:") and str(preds) not in line
    assert "'products' or 'rxn_smiles'" in line
    no_ids = tmp_path / "no_ids.csv"
    no_ids.write_text("products\nCNC(C)=O\n")
    line = one_line_error(cli("reaction-ood", "evaluate", preds, "--truth", no_ids))
    assert line.startswith(f"error: {no_ids}: no id column")
    grouped = one_line_error(cli("reaction-ood", "evaluate", preds, "--truth", no_ids, "--group-by", "year"))
    assert grouped.startswith(f"error: {no_ids}:")


@pytest.mark.parametrize(("rows", "top1"), [
    (["a,CNC(C)=O", "b,CCOC(C)=O", "b,CCC", "c,CCOC(C)=O"], 1.0),
    (["a,CNC(C)=O", "b,CCC", "b,CCOC(C)=O", "c,CCOC(C)=O"], 2 / 3),
])
def test_duplicated_prediction_ids_are_reported_and_the_first_counts(cli, tmp_path, truth, rows, top1):
    # before: the second row of id b was dropped silently (top-1 1.00 or 0.67 by row order)
    preds = tmp_path / "preds.csv"
    preds.write_text("id,pred_1\n" + "\n".join(rows) + "\n")
    out = tmp_path / "result.json"
    run = cli("reaction-ood", "evaluate", preds, "--truth", truth, "--out", out)
    assert run.code == 0, run.stderr
    assert "1 prediction row(s) repeat an item" in run.stderr and "line 4" in run.stderr
    result = json.loads(out.read_text())
    assert result["metrics"]["top1_accuracy"] == pytest.approx(top1)
    assert result["metrics"]["n_duplicate_predictions"] == 1
    [duplicate] = result["skipped"]
    assert duplicate["line"] == 4 and duplicate["item"] == "b" and "first on line 3" in duplicate["reason"]
    assert duplicate["reason"].startswith("prediction file: ")


def test_duplicated_ranks_in_the_long_layout_are_reported(tmp_path, truth):
    from chemassay.reaction_ood import evaluate

    preds = tmp_path / "preds.jsonl"
    rows = [{"id": "a", "rank": 1, "prediction": "CCC"}, {"id": "a", "rank": 2, "prediction": "CNC(C)=O"},
            {"id": "a", "rank": 1, "prediction": "CNC(C)=O"}, {"id": "b", "rank": 1, "prediction": "CCOC(C)=O"}]
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = evaluate(str(preds), truth, bootstrap=0)
    assert result.metrics["top1_accuracy"] == pytest.approx(1 / 3) and result.metrics["top2_accuracy"] == pytest.approx(2 / 3)
    assert [item.model_dump() for item in result.skipped] == [
        {"line": 4, "item": "c", "index": 2, "reason": "no prediction for this test reaction; scored as wrong"},
        {"line": 3, "item": "a", "index": None,
         "reason": "prediction file: id 'a' rank 1 given again; the first row counts"}]


def test_unwritable_out_fails_before_any_work(cli, tmp_path, truth):
    # before: the per-item table (or the cleaned table) was written, then OSError on --out
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    unwritable = blocker / "result.json"
    preds = tmp_path / "preds.csv"
    preds.write_text("id,pred_1\na,CNC(C)=O\n")
    items = tmp_path / "items.csv"
    line = one_line_error(cli("reaction-ood", "evaluate", preds, "--truth", truth, "--out", unwritable,
                              "--per-item", items))
    assert str(unwritable) in line
    assert not items.exists()
    good = tmp_path / "good.csv"
    good.write_text("rxn_smiles\nCCCCC(=O)O.CCO>>CCCCC(=O)OCC\n")
    cleaned = tmp_path / "clean.parquet"
    line = one_line_error(cli("reaction-ood", "clean", good, "--out", cleaned, "--report", unwritable))
    assert str(unwritable) in line and not cleaned.exists()
    line = one_line_error(cli("reaction-ood", "clean", good, "--out", blocker / "clean.parquet"))
    assert "clean.parquet" in line
    for args in (("predict", truth, "--model", "template-knn:nowhere.npz", "--out", unwritable),
                 ("train", good, "--out", blocker / "m.npz"),
                 ("iterate", truth, "--model", "template-knn:nowhere.npz", "--out", unwritable),
                 ("verify", tmp_path, "--out", unwritable)):
        line = one_line_error(cli("reaction-ood", *args))
        assert "cannot write" in line, (args, line)


# --- fuzz: the suite's readers on hostile files give a result or a UserInputError, nothing else

EXAMPLES = int(os.environ.get("CHEMASSAY_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 150)
TEXT = "CNOc1()=[]@+-.>,\t\n#\"{}:"


@st.composite
def hostile_bytes(draw) -> bytes:
    kind = draw(st.sampled_from(["random", "latin1", "gzip-truncated", "gzip-ok", "nul", "text", "json"]))
    if kind == "random":
        return draw(st.binary(max_size=300))
    if kind == "latin1":
        return draw(st.text(alphabet="CNOé,ü\n\t", max_size=150)).encode("latin-1")
    if kind in ("gzip-truncated", "gzip-ok"):
        data = gzip.compress(draw(st.text(alphabet=TEXT, min_size=1, max_size=300)).encode())
        return data[: draw(st.integers(1, len(data) - 1))] if kind == "gzip-truncated" else data
    if kind == "nul":
        return draw(st.binary(max_size=40)) + b"\x00" + draw(st.binary(max_size=40))
    if kind == "json":
        return "\n".join(json.dumps(v) for v in draw(st.lists(
            st.one_of(st.dictionaries(st.sampled_from(["data", "title", "id", "rxn_smiles"]),
                                      st.one_of(st.text(TEXT, max_size=30), st.dictionaries(
                                          st.sampled_from(["smiles", "date", "namerxn"]), st.text(TEXT, max_size=30)))),
                      st.integers(), st.text(TEXT, max_size=20)), max_size=5))).encode()
    return draw(st.text(alphabet=TEXT, max_size=300)).encode()


@FUZZ
@given(data=hostile_bytes(), suffix=st.sampled_from([".csv", ".tsv", ".csv.gz", ".jsonl", ".txt", ".parquet", ".rsmi"]))
def test_readers_fail_only_with_user_errors(tmp_path_factory, data, suffix):
    from chemassay.contract.errors import UserInputError
    from chemassay.suites.reaction_ood.evaluation import parse_predictions, truth_products
    from chemassay.suites.reaction_ood.io import read_reactions
    from chemassay.suites.reaction_ood.tables import read_table

    path = tmp_path_factory.mktemp("fuzz") / f"input{suffix}"
    path.write_bytes(data)
    try:
        frame = read_reactions(path)
        assert list(frame.columns[:2]) == ["rxn_smiles", "document_id"]
    except UserInputError as exc:
        assert str(path) in str(exc) or "format" in str(exc)
    if suffix == ".rsmi":
        return
    try:
        table = read_table(path, what="test")
    except UserInputError as exc:
        assert str(path) in str(exc)
        return
    for step in (lambda: parse_predictions(table, source=str(path), n_best=1), lambda: truth_products(table, str(path))):
        try:
            step()
        except UserInputError as exc:
            assert str(path) in str(exc)
