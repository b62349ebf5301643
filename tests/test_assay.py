"""``chemassay assay`` and the suite registry, proven with a sixth suite declared from the tests
folder (``tests/support/toy_suite``): one package plus one registration gives the suite its
CLI, its models, its dataset, its metric cards, its published table, its place in ``assay``
and in the scorecard."""

from __future__ import annotations

import json

import pytest

from chemassay.contract.errors import UserInputError


def test_a_sixth_suite_is_one_package_plus_one_registration(toy_suite, cli, tmp_path):
    import chemassay
    from chemassay.data import list_specs
    from chemassay.models import list_kinds, load_model
    from chemassay.suites import suite_names

    assert suite_names()[-1] == "formula"
    # the api as chemassay.<alias>, its protocol served by the general python: kind
    import chemassay.formula as formula

    assert formula.evaluate(formula.CountingModel()).metrics["exact"] == 1.0
    assert chemassay.formula is formula
    assert "python" in {kind.name for kind in list_kinds("formula-predictor")}
    model = load_model("python:support.toy_suite:CarbonOnlyModel", "formula-predictor")
    assert model.predict_formulas(["CCO"]) == ["C2"]
    assert "toy-formulas" in {spec.name for spec in list_specs()}
    # the CLI mounts it, its cards and its paper's table are listed
    assert cli("formula", "about").code == 0
    cards = cli("metrics", "list", "--suite", "formula", "--json")
    assert [card["key"] for card in json.loads(cards.stdout)] == ["exact"]
    rows = json.loads(cli("reference", "list", "--suite", "formula", "--json").stdout)
    assert {row["model"] for row in rows} == {"Counting model", "Guessing model"}

    outcome = cli("assay", "--model", "python:support.toy_suite:CarbonOnlyModel", "--suites", "formula",
                  "--out", str(tmp_path / "assay"))
    assert outcome.code == 0, outcome.stderr
    assert "formula        exact formula 0.0 %" in outcome.stdout
    result = chemassay.read_result(tmp_path / "assay" / "formula" / "exact.json")
    assert result.suite == "formula" and result.dataset.name == "toy-formulas"
    assert result.setting == {"protocol": "zero-shot"} and type(result.details).__name__ == "FormulaDetails"
    html = (tmp_path / "assay" / "index.html").read_text()
    # the paper's rows stand beside the model's, measured on the same data, in the suite's own section
    assert 'id="suite-formula"' in html and "Counting model" in html and "Guessing model" in html
    assert 'id="gallery-formula"' in html and "Wrong formulas" in html and 'id="verdicts"' in html
    board = __import__("chemassay.report.scorecard", fromlist=["x"]).build_scorecard([result]).sections[0].leaderboards[0]
    assert [row.label for row in board.rows] == ["carbon-only", "Counting model", "Guessing model"]
    assert not board.other_data
    # `chemassay report` over the folder gives the same section
    assert cli("report", str(tmp_path / "assay"), "--out", str(tmp_path / "report")).code == 0
    assert 'id="suite-formula"' in (tmp_path / "report" / "index.html").read_text()


def test_without_the_registration_the_suite_is_gone(toy_suite):
    from chemassay.data.registry import is_dataset_name
    from chemassay.models.protocols import all_protocols
    from chemassay.report.cards import all_cards
    from chemassay.report.published import papers, reference_results
    from chemassay.suites import find_suite, unregister_suite

    def formula_parts():
        return ({c.key for c in all_cards() if c.suite == "formula"}, {p.key for p in papers() if p.suite == "formula"},
                {r.model for r in reference_results() if r.suite == "formula"})

    cards, paper, rows = formula_parts()
    assert cards and paper and rows
    unregister_suite("formula")
    assert find_suite("formula") is None and "formula-predictor" not in all_protocols()
    assert not is_dataset_name("toy-formulas")
    assert formula_parts() == (set(), set(), set())
    from chemassay.suites import register_suite

    register_suite(toy_suite)  # the fixture unregisters it again
    assert "formula-predictor" in all_protocols() and is_dataset_name("toy-formulas")
    assert formula_parts() == (cards, paper, rows)


def test_a_suite_the_model_cannot_answer_is_skipped_with_one_line(toy_suite, tmp_path):
    from chemassay.assaying import assay

    report = assay("python:support.toy_suite:CountingModel", suites=["formula", "generation", "mechanism"],
                   out=tmp_path, scorecard=False)
    skipped = {outcome.suite: outcome.skipped for outcome in report.suites if outcome.skipped}
    assert set(skipped) == {"generation", "mechanism"}
    assert skipped["generation"].startswith("generation asks for generator")
    formula = next(outcome for outcome in report.suites if outcome.suite == "formula")
    assert [t.status for t in formula.tasks] == ["done"] and formula.protocols == ["formula-predictor"]


def test_a_failing_task_is_shown_and_the_others_go_on(toy_suite, cli, tmp_path):
    outcome = cli("assay", "--model", "formula=python:support.toy_suite:Exploding", "--suites", "formula",
                  "--out", str(tmp_path))
    assert outcome.code == 1
    assert "1 of 1 tasks failed: exact: RuntimeError: the model crashed" in outcome.stdout
    manifest = json.loads((tmp_path / "assay.json").read_text())
    assert manifest["suites"][0]["tasks"][0]["status"] == "failed"
    assert "the model crashed" in (tmp_path / "index.html").read_text()


def test_a_rerun_resumes_and_quick_results_are_kept_apart(toy_suite, tmp_path):
    from chemassay.assaying import assay
    from support.toy_suite import CountingModel

    CountingModel.calls.clear()
    spec = "python:support.toy_suite:CountingModel"
    first = assay(spec, suites=["formula"], out=tmp_path, quick=True)
    assert CountingModel.calls == [4] and first.results[0].quick and first.results[0].n == 4
    again = assay(spec, suites=["formula"], out=tmp_path, quick=True)
    assert CountingModel.calls == [4] and [t.status for t in again.suites[-1].tasks] == ["resumed"]
    # a full run is not answered by the quick result
    full = assay(spec, suites=["formula"], out=tmp_path / "full")
    assert CountingModel.calls == [4, 8] and not full.results[0].quick


def test_dry_run_prints_the_plan(toy_suite, cli):
    outcome = cli("assay", "--dry-run", "--quick", "--model", "python:support.toy_suite:CountingModel",
                  "--suites", "formula,generation")
    assert outcome.code == 0
    assert "skip  generation asks for generator" in outcome.stdout
    assert "run   formula" in outcome.stdout and "4 items" in outcome.stdout
    assert outcome.stdout.strip().endswith("1 tasks, 4 items (quick)")


def test_bad_assay_input_is_one_line(cli):
    outcome = cli("assay", "--model", "nosuchsuite=ngram", "--dry-run")
    assert outcome.code == 2 and "unknown suite 'nosuchsuite'" in outcome.stderr
    with pytest.raises(UserInputError):
        from chemassay.suites import get_suite

        get_suite("nope")
