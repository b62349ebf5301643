"""``chemassay demo``: the built-in baselines through the assay, one summary naming the scorecard,
each suite's verdict and what its baseline shows; ``--help`` lists the suites."""

from __future__ import annotations


def test_demo_runs_the_baselines_through_the_assay_and_names_the_scorecard(toy_suite, cli, tmp_path):
    outcome = cli("demo", "--suite", "formula", "--out", tmp_path)
    assert outcome.code == 0, outcome.stderr
    assert f"scorecard: {tmp_path / 'index.html'}" in outcome.stdout
    assert "formula        exact formula 100.0 %" in outcome.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "[index.html](index.html)" in summary
    assert "Baseline `python:support.toy_suite:CountingModel`: exact formula 100.0 %" in summary
    assert "- Table 1: exact formula: [formula/exact.json](formula/exact.json)" in summary
    assert (tmp_path / "index.html").is_file() and (tmp_path / "assay.json").is_file()


def test_demo_help_lists_the_suites(cli):
    outcome = cli("demo", "--help")
    assert outcome.code == 0
    text = " ".join(outcome.stdout.split())
    for name in ("stoichiometry", "reaction-ood", "generation", "robustness", "mechanism"):
        assert name in text
