"""The reaction-ood demo end to end (slow: about a minute on two cores)."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_demo_writes_results_and_shows_the_document_gap(tmp_path):
    from chemassay.suites.reaction_ood.demo import run_demo

    results = run_demo(tmp_path)
    tasks = [r.task for r in results]
    assert tasks == ["evaluate", "evaluate", "evaluate", "shift"]
    by_label = {r.config["label"]: r.metrics for r in results if r.task == "evaluate"}
    assert by_label["random test"]["top1_accuracy"] > by_label["document test_ood"]["top1_accuracy"]
    assert by_label["document test"]["top1_accuracy"] > by_label["document test_ood"]["top1_accuracy"]
    shift = results[-1].metrics
    assert shift["document test_ood/difference_median"] > shift["document test/difference_median"]
    for name in ("random_test.json", "document_test.json", "document_test_ood.json", "shift.json",
                 "accuracy_by_split.png", "shift_histograms.png"):
        assert (tmp_path / name).stat().st_size > 0
    assert json.loads((tmp_path / "shift.json").read_text())["task"] == "shift"
