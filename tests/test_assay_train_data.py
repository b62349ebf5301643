"""``chemassay assay --train-data``: the leakage audit beside the assay, and every headline metric
on the clean subset (the test items with no exact or near duplicate in the training data).

Real data and real RDKit: reaction-ood's quick test parts (Schneider 50k), a training file
holding every other reaction of each test part, a memorising reaction predictor (a lookup table
built from that file: right only on reactions it has seen) and the suite's template-kNN
baseline (which applies reaction templates: it computes products it has never seen)."""

from __future__ import annotations

import json
import math

import pytest

from chemassay.contract.result import Result
from chemassay.report.leakage import NO_ITEMS, clean_row, seen_line

SUITE = "reaction-ood"


@pytest.fixture(scope="module")
def training_file(tmp_path_factory):
    """Every other reaction of each of the suite's quick test parts, one reaction SMILES a line."""
    from chemassay.leaks import suite_test_sets

    sets = suite_test_sets([SUITE], quick=True)
    folder = tmp_path_factory.mktemp("train-data")
    path = folder / "train.smi"
    path.write_text("\n".join(item for test_set in sets for item in test_set.items[::2]) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def memoriser_assay(training_file, tmp_path_factory):
    from chemassay.assaying import assay
    from support.memoriser import Memoriser

    out = tmp_path_factory.mktemp("memoriser")
    return assay(Memoriser(str(training_file)), suites=[SUITE], quick=True, out=out, train_data=str(training_file))


@pytest.fixture(scope="module")
def baseline_assay(training_file, tmp_path_factory):
    from chemassay.assaying import assay

    out = tmp_path_factory.mktemp("template-knn")
    return assay(None, suites=[SUITE], quick=True, out=out, train_data=str(training_file), scorecard=False)


def pooled(report, which: str) -> tuple[int, int]:
    """``(right, scored)`` of top-1 accuracy over every task, on the full set or the clean subset."""
    right = scored = 0
    for row in report.clean:
        result = Result.model_validate(row["result"]) if which == "clean" else None
        if which == "clean":
            values = result.item_scores["top1_accuracy"]
        else:
            path = next(t.path for s in report.suites for t in s.tasks if t.task == row["task"])
            values = Result.model_validate_json(open(path, encoding="utf-8").read()).item_scores["top1_accuracy"]
        present = [v for v in values if v is not None]
        right, scored = right + int(sum(present)), scored + len(present)
    return right, scored


def test_the_memoriser_falls_to_its_floor_on_the_clean_subset(memoriser_assay, training_file):
    report = memoriser_assay
    assert not report.failed
    audit = json.loads((report.out / "leakage.json").read_text(encoding="utf-8"))
    assert audit["training"][0]["path"] == str(training_file)
    assert {t["task"] for t in audit["tasks"]} == {t.task for t in report.suites[0].tasks}
    assert len(report.clean) == 8
    for row in report.clean:
        [metric] = row["metrics"]
        assert metric["key"] == "top1_accuracy" and row["ids_checked"]
        assert row["scored_clean"] >= 5 and row["scored_seen"] >= 5
        assert row["clean"] == row["n"] - row["leaked"] and row["leaked"] >= row["n"] // 2
        # right only on what it has seen: nothing on the clean items, with a Wilson interval that is not zero-wide
        assert metric["clean"] == 0.0 and metric["clean_interval"][0] == 0.0 and metric["clean_interval"][1] > 0.1
        assert metric["full"] >= 0.4
        subset = row["result"]["subset"]
        assert subset["method"] == "clean" and subset["size"] == row["scored_clean"] and subset["of"] == 30
    right, scored = pooled(report, "full")
    assert right / scored > 0.5
    verdict = report.suites[0].verdict
    seen = sum(t["leaked"] for t in audit["tasks"])
    assert f"may have seen {seen:,} of {sum(t['n'] for t in audit['tasks']):,} test items" in verdict
    manifest = json.loads((report.out / "assay.json").read_text(encoding="utf-8"))
    assert manifest["leakage"]["tasks"][0]["leaked"] == audit["tasks"][0]["leaked"]
    saved = json.loads((report.out / "leakage-clean.json").read_text(encoding="utf-8"))
    assert saved["tasks"] == json.loads(json.dumps(report.clean))


def test_the_rule_based_baseline_keeps_its_accuracy_on_the_clean_subset(baseline_assay, memoriser_assay):
    report = baseline_assay
    assert not report.failed
    full_right, full_n = pooled(report, "full")
    clean_right, clean_n = pooled(report, "clean")
    assert clean_n == sum(row["scored_clean"] for row in report.clean) and clean_n >= 60
    full, clean = full_right / full_n, clean_right / clean_n
    assert clean > 0.3  # far from the floor the memoriser falls to
    assert abs(clean - full) < 0.15, (full, clean)
    # the same clean items for both models: the audit does not depend on the model
    by_task = {row["task"]: row["result"]["item_ids"] for row in memoriser_assay.clean}
    assert all(row["result"]["item_ids"] == by_task[row["task"]] for row in report.clean)


def test_the_scorecard_has_the_leakage_section(memoriser_assay, browser):
    from report.test_page_layout import page_facts

    html = memoriser_assay.scorecard.read_text(encoding="utf-8")
    assert 'id="leakage"' in html and 'href="#leakage"' in html
    assert html.count('alt="nearest-similarity histogram"') == 8
    assert 'id="leakage-comparison"' in html and "0.000 [0.000, " in html
    markdown = (memoriser_assay.out / "index.md").read_text(encoding="utf-8")
    assert "## Leakage: has the model seen the test items?" in markdown
    assert (memoriser_assay.out / "assets" / "leakage-full-vs-clean.svg").is_file()
    facts = page_facts(browser, memoriser_assay.scorecard)
    assert facts["errors"] == [] and facts["wide"] == [] and facts["clipped"] == [], facts


def test_chemassay_report_on_the_folder_shows_it(memoriser_assay, cli, tmp_path):
    outcome = cli("report", memoriser_assay.out, "--out", tmp_path / "card")
    assert outcome.code == 0, outcome.stderr
    html = (tmp_path / "card" / "index.html").read_text(encoding="utf-8")
    assert 'id="leakage-metrics"' in html and "may have seen" in html
    # without the clean file the rows are computed again from the results, ids matched by name
    copy = tmp_path / "copy"
    import shutil

    shutil.copytree(memoriser_assay.out, copy, ignore=shutil.ignore_patterns("leakage-clean.json", "index.*"))
    assert cli("report", copy, "--out", tmp_path / "again").code == 0
    again = (tmp_path / "again" / "index.html").read_text(encoding="utf-8")
    assert "(ids matched by name)" in again and again.count("0.000 [0.000, ") >= 8


def test_the_command_line_runs_it_and_reuses_an_audit_of_the_same_file(memoriser_assay, training_file, cli, tmp_path):
    import shutil

    out = tmp_path / "cli"
    out.mkdir()
    for name in ("leakage.json", "leakage-stamp.json"):  # the audit an earlier run left in this folder
        shutil.copy(memoriser_assay.out / name, out / name)
    spec = f"python:support.memoriser:Memoriser,train={training_file}"
    outcome = cli("assay", "--model", spec, "--suites", SUITE, "--quick", "--train-data", training_file,
                  "--out", out)
    assert outcome.code == 0, outcome.stderr
    assert "leakage audit: done earlier" in outcome.stderr
    lines = [line for line in outcome.stdout.splitlines() if line.startswith("clean subset")]
    assert len(lines) == 8 and all("0.000 [0.000," in line and "clean ones" in line for line in lines)


def test_the_plan_says_the_audit_runs_first(cli, training_file):
    outcome = cli("assay", "--dry-run", "--quick", "--suites", SUITE, "--train-data", training_file,
                  "--leak-threshold", "0.8")
    assert outcome.code == 0, outcome.stderr
    assert outcome.stdout.splitlines()[-1] == (f"first: the leakage audit of these suites' test sets against "
                                               f"{training_file} (near at Tanimoto >= 0.8), then every headline "
                                               "metric on the clean subset too")


@pytest.mark.parametrize(("args", "message"), [
    (["--train-data", "no-such-file.smi"], "--train-data no-such-file.smi: no such file"),
    (["--leak-threshold", "0.5"], "give --train-data FILE too"),
    (["--train-data", "{train}", "--leak-threshold", "1.5"], "--leak-threshold 1.5"),
])
def test_bad_leakage_options_are_one_line(cli, tmp_path, training_file, args, message):
    args = [a.replace("{train}", str(training_file)) for a in args]
    outcome = cli("assay", "--suites", "stoichiometry", "--quick", "--out", tmp_path / "x", *args)
    assert outcome.code == 2 and message in outcome.stderr
    assert len([line for line in outcome.stderr.splitlines() if line.strip()]) == 1
    assert not (tmp_path / "x" / "stoichiometry").exists()


def test_a_task_without_per_item_test_scores_says_so():
    report = {"tasks": [{"suite": "generation", "task": "moses-test", "n": 10, "exact": 2, "near": 1, "leaked": 3,
                         "clean": 7, "threshold": 0.7, "ids_sha256": "", "leaked_ids": {"exact": ["1", "2"]}}]}
    samples = Result(suite="generation", task="evaluate", metrics={"FCD/Test": 0.5}, n=100)
    row = clean_row(samples, report, task="moses-test")
    assert row["note"] == NO_ITEMS and row["metrics"] == [] and row["leaked"] == 3
    other = Result(suite="generation", task="evaluate", metrics={"valid": 1.0}, n=2, item_ids=["0", "1"],
                   item_scores={"valid": [1.0, 1.0]})
    assert "no clean-subset value" in clean_row(other, report, task="moses")["note"]
    assert seen_line(report, "generation") == "may have seen 3 of 10 test items (2 exact + 1 near, Tanimoto ≥ 0.7)"
    assert math.isclose(clean_row(other, report, task="moses-test")["metrics"][0]["full"], 1.0)
    exact_only = {"tasks": [{**report["tasks"][0], "near": None, "leaked": 2}]}  # --leak-exact-only
    assert seen_line(exact_only, "generation") == "may have seen 2 of 10 test items (2 exact; near duplicates not checked)"


def test_the_clean_value_is_the_mean_over_the_clean_items_with_the_cards_interval():
    from chemassay.report.intervals import metric_interval, wilson_interval
    from chemassay.report.leakage import clean_result

    ids = [str(i) for i in range(12)]
    accuracy = [1.0, 0.0, 1.0, None, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    scores = [0.9, 0.1, 0.5, 0.3, 0.7, 0.2, 0.4, 0.8, 0.6, 0.0, 0.5, 1.0]
    full = Result(suite="mechanism", task="evaluate", n=12, item_ids=ids, metrics={"S_total": sum(scores) / 12},
                  item_scores={"S_total": scores})
    clean = clean_result(full, {"1", "2", "5", "7", "11"}, ["S_total"])
    assert clean.item_ids == ["1", "2", "5", "7", "11"] and clean.n == 5
    assert math.isclose(clean.metrics["S_total"], (0.1 + 0.5 + 0.2 + 0.8 + 1.0) / 5)
    expected = metric_interval([0.1, 0.5, 0.2, 0.8, 1.0], suite="mechanism", key="S_total")
    assert clean.intervals["S_total"] == expected and expected.method == "bootstrap"
    assert clean.subset.method == "clean" and (clean.subset.size, clean.subset.of) == (5, 12)
    top1 = Result(suite="reaction-ood", task="evaluate", n=12, item_ids=ids, metrics={"top1_accuracy": 7 / 11},
                  item_scores={"top1_accuracy": accuracy})
    clean = clean_result(top1, {"0", "1", "3", "4"}, ["top1_accuracy"])  # item 3 has no value: left out
    assert math.isclose(clean.metrics["top1_accuracy"], 2 / 3)
    box = clean.intervals["top1_accuracy"]
    assert box.method == "wilson" and (box.low, box.high) == wilson_interval(2, 3)
