"""Result files checked field by field, and paired comparisons of two models."""

import json

import numpy as np
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.contract.result import DatasetRef, Result
from chemassay.report.compare import IncomparableResults, compare, mcnemar_exact
from chemassay.report.load import load_result, load_results

from .conftest import write_json


def _result(scores: dict, ids=None, suite="reaction-ood", task="evaluate", dataset_sha="a" * 64, **extra) -> Result:
    n = len(next(iter(scores.values())))
    ids = ids or [f"rxn-{i}" for i in range(n)]
    metrics = {k: float(np.mean([v for v in vals if v is not None])) for k, vals in scores.items()}
    return Result(suite=suite, task=task, metrics=metrics, n=n, item_ids=ids, item_scores=scores,
                  dataset=DatasetRef(name="schneider-50k", sha256=dataset_sha), **extra)


# --- loading -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.pop("metrics"), "field 'metrics': Field required"),
    (lambda d: d.update(n="many"), "field 'n': Input should be a valid integer"),
    (lambda d: d["metrics"].update(top1_accuracy="high"), "field 'metrics.top1_accuracy': expected a number or null, got str"),
    (lambda d: d["item_scores"]["top1_accuracy"].pop(), "field 'item_scores.top1_accuracy': 2 values for 3 item_ids"),
    (lambda d: d["intervals"].update(nope={"low": 0.1, "high": 0.2}), "field 'intervals.nope': no metric of that name"),
    (lambda d: d["intervals"].update(top1_accuracy={"low": 0.9, "high": 0.2}), "field 'intervals.top1_accuracy': low 0.9 is above high 0.2"),
    (lambda d: d.update(item_ids=["a", "a", "b"]), "field 'item_ids': 1 duplicated ids"),
    (lambda d: d.update(suite="alchemy"), "field 'suite': unknown suite 'alchemy'"),
])
def test_hand_edited_result_is_named_by_file_and_field(tmp_path, edit, message):
    good = _result({"top1_accuracy": [1, 0, 1]})
    data = json.loads(good.to_json())
    data["intervals"] = {}
    edit(data)
    path = write_json(tmp_path / "edited.json", data)
    with pytest.raises(UserInputError) as caught:
        load_result(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text


def test_result_from_another_version_says_so(tmp_path):
    data = json.loads(_result({"top1_accuracy": [1, 0]}).to_json())
    data["versions"]["chemassay"] = "0.0.1"
    data["suite"] = 7
    path = write_json(tmp_path / "old.json", data)
    with pytest.raises(UserInputError, match=r"field 'suite': .*written by chemassay 0\.0\.1"):
        load_result(path)
    bad_json = tmp_path / "broken.json"
    bad_json.write_text('{"suite": "x",')
    with pytest.raises(UserInputError, match=r"broken.json: not a chemassay result file \(invalid JSON at line 1"):
        load_result(bad_json)
    listing = tmp_path / "list.json"
    listing.write_text("[1, 2]")
    with pytest.raises(UserInputError, match="top level is a list"):
        load_result(listing)


def test_loading_a_folder_skips_non_results_but_not_broken_results(tmp_path):
    _result({"top1_accuracy": [1, 0]}).write(tmp_path / "a.json")
    write_json(tmp_path / "sub" / "samples.manifest.json", {"kind": "manifest"})
    write_json(tmp_path / "sub" / "notes.json", {"hello": 1})
    loaded = load_results([tmp_path])
    assert len(loaded) == 1 and loaded[0].suite == "reaction-ood"
    write_json(tmp_path / "sub" / "broken.json", {"suite": "generation", "task": "y", "metrics": {"valid": "b"}, "n": 1})
    with pytest.raises(UserInputError, match=r"broken.json: .*field 'metrics.valid'"):
        load_results([tmp_path])


# --- comparing -----------------------------------------------------------------------------------
def test_mcnemar_exact_by_hand():
    # 3 discordant items, all won by A: P = 2 * (1/2)^3
    assert mcnemar_exact(3, 0) == 0.25
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(4, 4) == 1.0
    # 1 vs 9: 2 * (C(10,0) + C(10,1)) / 2^10 = 22 / 1024
    assert mcnemar_exact(1, 9) == pytest.approx(22 / 1024)


def test_paired_comparison_of_two_accuracies(test_cards):
    rng = np.random.default_rng(5)
    a_scores = (rng.random(400) < 0.70).astype(float)
    b_scores = a_scores.copy()
    flip = rng.choice(400, size=60, replace=False)
    b_scores[flip[:50]] = 0.0  # B loses 50 items A gets right (where A had them right)
    b_scores[flip[50:]] = 1.0
    a = _result({"top1_accuracy": a_scores.tolist(), "top2_accuracy": a_scores.tolist()}, model=None)
    b = _result({"top1_accuracy": b_scores.tolist(), "top2_accuracy": a_scores.tolist()})
    comparison = compare(a, b, resamples=1500, seed=3)
    top1 = next(m for m in comparison.metrics if m.key == "top1_accuracy")
    a_only = int(((a_scores == 1) & (b_scores == 0)).sum())
    b_only = int(((a_scores == 0) & (b_scores == 1)).sum())
    assert top1.mcnemar == {"a_only": a_only, "b_only": b_only, "p_value": mcnemar_exact(a_only, b_only)}
    assert top1.difference == pytest.approx(a_scores.mean() - b_scores.mean())
    assert top1.low < top1.difference < top1.high and top1.low > 0
    assert top1.verdict == "A better" and top1.direction == "higher"
    same = next(m for m in comparison.metrics if m.key == "top2_accuracy")
    assert same.difference == 0 and same.p_value == 1.0 and same.verdict == "no difference shown"
    assert same.mcnemar["p_value"] == 1.0
    # seeded: the same call gives the same interval; another seed a slightly different one
    again = compare(a, b, resamples=1500, seed=3).metrics[0]
    assert (again.low, again.high) == (top1.low, top1.high)
    assert "paired items" in comparison.summary() and "A better" in comparison.summary()


def test_items_are_paired_by_id_and_missing_values_left_out():
    ids = ["x", "y", "z", "w"]
    a = _result({"top1_accuracy": [1, 0, None, 1]}, ids=ids)
    b = _result({"top1_accuracy": [0, 1, 1, None]}, ids=["w", "z", "y", "x"])  # same items, other order
    row = compare(a, b, resamples=200).metrics[0]
    # paired: x (1 vs None: left out), y (0 vs 1), z (None vs 1: left out), w (1 vs 0)
    assert row.n == 2 and row.mean_a == 0.5 and row.mean_b == 0.5
    assert row.mcnemar["a_only"] == 1 and row.mcnemar["b_only"] == 1


def test_continuous_metric_gets_bootstrap_but_no_mcnemar():
    a = _result({"S_total": [0.2, 0.4, 0.9, 0.5]}, suite="mechanism", task="evaluate")
    b = _result({"S_total": [0.1, 0.3, 0.8, 0.4]}, suite="mechanism", task="evaluate")
    row = compare(a, b, resamples=500).metrics[0]
    assert row.mcnemar is None and row.difference == pytest.approx(0.1) and row.low == pytest.approx(0.1)


@pytest.mark.parametrize(("change", "message"), [
    (dict(suite="stoichiometry"), "different suites or tasks"),
    (dict(task="score"), "different suites or tasks"),
    (dict(dataset_sha="b" * 64), "different datasets"),
    (dict(ids=["rxn-0", "rxn-1", "other"]), "different items (1 only in A, 1 only in B"),
])
def test_refuses_results_that_cannot_be_paired(change, message):
    a = _result({"top1_accuracy": [1, 0, 1]})
    key = "EM" if change.get("suite") == "stoichiometry" else "top1_accuracy"
    b = _result({key: [1, 1, 0]}, **change)
    with pytest.raises(IncomparableResults) as caught:
        compare(a, b)
    assert message in str(caught.value)


def test_refuses_results_without_per_item_scores():
    a = _result({"top1_accuracy": [1, 0, 1]})
    b = Result(suite="reaction-ood", task="evaluate", metrics={"top1_accuracy": 0.5}, n=3,
               dataset=DatasetRef(name="schneider-50k", sha256="a" * 64))
    with pytest.raises(IncomparableResults, match="has no per-item scores"):
        compare(a, b)


def test_the_verdict_on_an_accuracy_follows_mcnemar_not_the_bootstrap(test_cards):
    # docs/report.md's example: A right on 4 items where B is wrong, never the reverse; the paired
    # bootstrap interval excludes 0 but McNemar's exact p is 2 / 2^4 = 0.125
    a = _result({"top1_accuracy": [1, 1, 1, 1, 0, 1, 0, 1]}, model=None)
    b = _result({"top1_accuracy": [0, 0, 0, 0, 0, 1, 0, 1]})
    row = compare(a, b, resamples=2000, seed=0).metrics[0]
    assert row.low > 0 and row.mcnemar["p_value"] == pytest.approx(0.125)
    assert row.verdict == "no difference shown"
    # a continuous metric with the same interval keeps the bootstrap's verdict
    s_a = _result({"S_total": [0.9, 0.9, 0.9, 0.9, 0.1, 0.95, 0.1, 0.95]}, suite="mechanism", task="evaluate")
    s_b = _result({"S_total": [0.1, 0.1, 0.1, 0.1, 0.1, 0.95, 0.1, 0.95]}, suite="mechanism", task="evaluate")
    assert compare(s_a, s_b, resamples=2000, seed=0).metrics[0].verdict == "A better"
