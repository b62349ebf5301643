"""The generation suite's declared result (typed details, dataset ``moses``), its report
charts and its part in ``chemassay assay`` (MOSES, 30,000 samples; quick: 1,000)."""

from __future__ import annotations

import json
from pathlib import Path

import chemassay.generation as generation
import pytest
from pydantic import ValidationError

from chemassay.contract.errors import UserInputError
from chemassay.contract.result import Result, read_result
from chemassay.suites.generation.details import EvaluateDetails, FilterDetails, SplitDetails

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"
TEST_STATS = DATA / "moses_test_300.stats.npz"
TRAIN = DATA / "moses_train_2000.txt"

# small sample sets: MOSES's unique@k warns that k exceeds the valid molecules (tested elsewhere)
pytestmark = pytest.mark.filterwarnings("ignore:Can't compute unique@")


@pytest.fixture(scope="module")
def ngram_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("models") / "ngram.npz"
    generation.train(f"ngram:{path}", TRAIN)
    return path


def test_evaluate_details_survive_a_round_trip(small_reference, tmp_path):
    samples = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "C1CC", "CCO"]
    result = generation.evaluate(samples, reference=TEST_STATS, scaffold_test=None, train=TRAIN, bootstrap=50,
                                 plot=tmp_path / "p.png")
    details = result.details
    assert isinstance(details, EvaluateDetails)
    assert (details.counts.input, details.counts.valid, details.counts.invalid, details.counts.unique_valid) == (5, 4, 1, 3)
    assert details.references["Test"].sha256 and "TestSF" not in details.references
    assert details.plot == str(tmp_path / "p.png") and Path(details.plot).is_file()
    assert details.timings_s["references"] >= 0 and details.estimates is None and details.resumed_chunks == 0
    assert any("unique@1000" in warning for warning in details.warnings)
    assert result.dataset.name == "moses_test_300" and result.setting == {}  # not the MOSES test set
    back = read_result(result.write(tmp_path / "r.json"))
    assert back.details == details
    raw = json.loads((tmp_path / "r.json").read_text())
    raw["details"]["paper_ngram"] = {"valid": 0.2376}
    with pytest.raises(ValidationError, match="paper_ngram"):
        Result.model_validate(raw)
    raw = json.loads((tmp_path / "r.json").read_text())
    raw["details"]["counts"]["duplicates"] = 1
    (tmp_path / "bad.json").write_text(json.dumps(raw))
    with pytest.raises(UserInputError, match="duplicates"):
        read_result(tmp_path / "bad.json")
    assert not (result.model_extra or {})


def test_filter_and_split_details(tmp_path):
    molecules = TRAIN.read_text().splitlines()[:400] + ["C1CC"]
    kept = tmp_path / "kept.txt"
    filtered = generation.filter(molecules, out=kept, rejected=tmp_path / "rejected.csv")
    assert isinstance(filtered.details, FilterDetails) and filtered.details.output.kept == str(kept)
    assert filtered.details.output.rejected == str(tmp_path / "rejected.csv") and filtered.details.output.sha256
    assert isinstance(filtered.details.alert_hits, dict)
    assert read_result(filtered.write(tmp_path / "f.json")).details == filtered.details
    split = generation.split(molecules, tmp_path / "split", seed=0)
    assert isinstance(split.details, SplitDetails) and Path(split.details.output.manifest).is_file()
    assert split.details.output.folder == str(tmp_path / "split")
    assert read_result(split.write(tmp_path / "s.json")).details == split.details
    assert not (split.model_extra or {}) and not (filtered.model_extra or {})


def test_a_result_on_the_moses_test_set_is_named_moses_and_meets_the_papers_rows(moses_home, tmp_path):
    from chemassay.report.scorecard import build_scorecard

    samples = TRAIN.read_text().splitlines()[1:200]
    result = generation.evaluate(samples, reference="moses", scaffold_test=None, train=None, bootstrap=0,
                                 plot=tmp_path / "p.png")
    assert result.dataset.name == "moses" and result.setting == {"samples": "199"}
    card = build_scorecard([result], resamples=0)
    (section,) = card.sections
    published = [row for board in section.leaderboards for row in board.rows if row.published]
    tables = {table for row in published for table in row.source.split(", ")[1:]}
    assert {"Table 1", "Table 3"} <= tables and any(row.label.startswith("CharRNN") for row in published)
    assert [figure.title for figure in section.figures if figure.kind == "png"] == ["Property distributions"]


def test_shipped_reference_runs_say_they_were_measured_on_moses():
    from chemassay.report.published import reference_results

    runs = [record for record in reference_results("generation", runs=True) if not record.published]
    assert runs and all(record.data == "moses" for record in runs)


def test_charts_report_a_missing_picture(tmp_path):
    from chemassay.suites.generation.report import generation_charts

    result = generation.evaluate(["CCO", "c1ccccc1O"], reference=TEST_STATS, scaffold_test=None, train=None, bootstrap=0,
                                 plot=tmp_path / "gone.png")
    (tmp_path / "gone.png").unlink()
    (figure,) = generation_charts([result])
    assert figure.kind == "missing" and figure.data.endswith("gone.png")


# ------------------------------------------------------------------------------- assay


def test_assay_tasks_and_requests_per_batch():
    from chemassay.assaying import plan
    from chemassay.suites.generation.assay import ASSAY, requests_for

    assert ASSAY.baseline == "ngram" and "1,000 samples" in ASSAY.quick_note and "unique@10000" in ASSAY.quick_note
    assert ASSAY.tasks({"embedder"}, quick=False, spec="ngram") == []
    (full,) = ASSAY.tasks({"generator"}, quick=False, spec="ngram")
    assert (full.key, full.items, full.dataset, dict(full.setting)) == ("moses", 30_000, "moses", {})
    assert requests_for("openai:m,base_url=http://127.0.0.1:9/v1", 30_000) == 600  # 50 molecules per request
    assert requests_for("openai:m,batch=8", 1_000) == 125
    _outcomes, planned = plan("openai:m,base_url=http://127.0.0.1:9/v1,batch=100", suites=["generation"], quick=True)
    assert [(p.task.items, p.task.request_count) for p in planned] == [(1_000, 10)]


@pytest.fixture
def small_references(monkeypatch):
    """The assay's MOSES references replaced by the small bundled sets (the full ones are
    tested in the slow test below): the plumbing is the same, the work a fraction."""
    from chemassay.suites.generation import assay as generation_assay

    monkeypatch.setattr(generation_assay, "REFERENCES", {"reference": str(TEST_STATS), "scaffold_test": None,
                                                         "train": str(TRAIN)})


def test_quick_task_draws_scores_and_keeps_its_files(ngram_file, small_references, tmp_path):
    from chemassay.contract.assay import AssayContext
    from chemassay.suites.generation.assay import ASSAY, samples_path

    spec = f"ngram:{ngram_file}"
    (task,) = ASSAY.tasks({"generator"}, quick=True, spec=spec)
    assert task.items == 1_000
    ctx = AssayContext(spec=spec, out_dir=tmp_path, quick=True)
    result = task.run(ctx)
    assert result.quick and result.model.spec == spec and result.details.counts.input == 1_000
    assert len(Path(samples_path(ctx)).read_text().splitlines()) == 1_000
    assert Path(result.details.plot).is_file()
    verdict = ASSAY.verdict([result])
    assert verdict.startswith("valid 0.") and "FCD/Test" in verdict and "on 1,000 samples" in verdict
    assert "quick subset" in verdict and "MOSES Table 3's lowest FCD/Test: CharRNN 0.073" in verdict


def test_assay_entry_point_runs_and_resumes(ngram_file, small_references, tmp_path):
    from chemassay.assaying import assay

    spec = f"ngram:{ngram_file}"
    report = assay(spec, suites=["generation"], quick=True, out=tmp_path, scorecard=False)
    (outcome,) = report.suites
    assert [t.status for t in outcome.tasks] == ["done"] and outcome.verdict.startswith("valid")
    (result,) = report.results
    assert result.suite == "generation" and result.quick and (tmp_path / "generation" / "moses.json").is_file()
    again = assay(spec, suites=["generation"], quick=True, out=tmp_path, scorecard=False)
    assert [t.status for t in again.suites[0].tasks] == ["resumed"]


@pytest.mark.slow
def test_quick_assay_with_the_built_in_baseline(moses_home, tmp_path):
    """The n-gram trained on the full MOSES train split (about a minute the first time),
    1,000 samples scored against the MOSES statistics: about two minutes from an empty cache."""
    from chemassay.assaying import assay

    report = assay(None, suites=["generation"], quick=True, out=tmp_path, scorecard=False)
    (result,) = report.results
    assert report.suites[0].spec == "ngram" and result.quick
    assert result.dataset.name == "moses" and result.setting == {"samples": "1000"} and result.details.counts.input == 1_000
    assert 0.15 < result.metrics["valid"] < 0.35  # the paper's n-gram: 0.2376 on 30,000 samples
