"""The mechanism suite's declared result (typed details, dataset and setting in the paper's
words), its report (gallery of actual errors, labelled charts) and its part in ``chemassay
assay`` (oMe-Gold with the one-shot prompt; quick: the first 30 reactions; resumable)."""

from __future__ import annotations

import importlib.util
import json

import chemassay.mechanism as mechanism
import pytest
from pydantic import ValidationError

from chemassay.contract.errors import UserInputError
from chemassay.contract.result import Result, read_result
from chemassay.suites.mechanism.details import EvaluateDetails, VerifyDetails

needs_drfp = pytest.mark.skipif(importlib.util.find_spec("drfp") is None,
                                reason="the drfp extra is not installed (pip install 'chemassay[drfp]')")


@pytest.fixture(scope="module")
def oracle() -> Result:
    return mechanism.evaluate(model="gold-oracle", limit=12, bootstrap=0)


def test_evaluate_details_survive_a_round_trip(oracle, tmp_path):
    assert isinstance(oracle.details, EvaluateDetails)
    path = oracle.write(tmp_path / "oracle.json")
    back = read_result(path)
    assert isinstance(back.details, EvaluateDetails)
    assert back.details.by_level == oracle.details.by_level and back.details.by_level["easy"].n > 0
    assert [row.reaction_id for row in back.details.reactions] == oracle.item_ids
    assert back.details.reactions[0].gold_steps[0].subtype == oracle.details.reactions[0].gold_steps[0].subtype
    assert back.details.error_taxonomy.events == oracle.details.error_taxonomy.events
    # the closed schema: no undeclared field at the top of the details or in a nested row
    raw = json.loads(path.read_text())
    raw["details"]["by_levels"] = {}
    with pytest.raises(ValidationError, match="by_levels"):
        Result.model_validate(raw)
    raw = json.loads(path.read_text())
    raw["details"]["reactions"][0]["score"] = 1.0
    (tmp_path / "bad.json").write_text(json.dumps(raw))
    with pytest.raises(UserInputError, match="score"):
        read_result(tmp_path / "bad.json")


def test_verify_details_and_dataset(tmp_path):
    checked = mechanism.verify("gold")
    assert isinstance(checked.details, VerifyDetails) and len(checked.details.problems) == checked.metrics["errors"] + \
        checked.metrics["warnings"]
    assert checked.dataset.name == "omebench" and checked.setting == {"dataset": "gold"}
    back = read_result(checked.write(tmp_path / "v.json"))
    assert back.details.problems[0].reaction_id == checked.details.problems[0].reaction_id


def test_items_not_scored_as_asked_are_skipped_with_their_reason():
    answer = '[ANSWER][{"type": "proton_transfer", "subtype": "acid_base_proton_transfer", "intermediate_smiles": "[CH2-]C=O"}][/ANSWER]'
    result = mechanism.evaluate({"NR-001": answer, "NR-002": "I cannot say.", "NOPE": answer}, bootstrap=0)
    reasons = {item.item: item.reason for item in result.skipped}
    assert reasons["NR-002"].startswith("unparsed prediction:") and "scored 0" in reasons["NR-002"]
    assert reasons["NR-003"].startswith("no prediction: scored as an empty mechanism")
    assert reasons["NOPE"] == "reaction_id not among the gold reactions scored"
    assert len(result.skipped) == 1 + 194 + 1 and result.n == 196  # unparsed and missing are scored (0)
    assert not hasattr(result, "failures") and not (result.model_extra or {})


def test_a_model_run_records_the_papers_protocol(oracle, tmp_path):
    assert oracle.dataset.name == "omebench" and oracle.setting == {"dataset": "gold", "prompt": "one-shot"}
    cot = mechanism.evaluate(model="gold-oracle", prompt="cot", limit=3, bootstrap=0, out=tmp_path / "cot.jsonl")
    assert cot.setting == {"dataset": "gold", "prompt": "one-shot-cot"}
    # the answers scored from the file written by the run: the rows name their prompt style
    again = mechanism.evaluate(tmp_path / "cot.jsonl", bootstrap=0)
    assert again.setting == {"dataset": "gold", "prompt": "one-shot-cot"}
    template = mechanism.evaluate(model="gold-oracle", reference="template", limit=2, bootstrap=0)
    assert template.dataset.name == "omebench" and template.setting == {"dataset": "templates", "prompt": "one-shot"}


@needs_drfp
def test_kshot3_is_the_papers_three_shot_icl():
    result = mechanism.evaluate(model="gold-oracle", prompt="kshot", shots=3, limit=2, bootstrap=0)
    assert result.setting == {"dataset": "gold", "prompt": "three-shot-icl"}


def test_paper_protocol_names():
    from chemassay.suites.mechanism.prompts import paper_protocol

    assert [paper_protocol(s) for s in ("default", "cot", "kshot3", "kshot5", "other")] == [
        "one-shot", "one-shot-cot", "three-shot-icl", "five-shot-icl", None]


def test_scorecard_shows_table_3_one_shot_rows_only(oracle):
    from chemassay.report.scorecard import build_scorecard

    card = build_scorecard([oracle], resamples=0)
    (section,) = card.sections
    (board,) = section.leaderboards
    published = [row for row in board.rows if row.published]
    models = {row.label for row in published}
    assert {"GPT-5", "o3", "GPT-4o"} <= models
    assert all(row.source.endswith("Table 3") for row in published), {row.source for row in published}
    assert len(published) == 15  # Table 3's rows; not Table 14 (CoT), 15 (ICL) or 16 (fine-tuning)


def test_gallery_shows_only_actual_errors(oracle):
    from chemassay.suites.mechanism.report import has_error, mechanism_gallery

    clean = mechanism_gallery([oracle])
    assert not clean.items and "no reaction with an error" in clean.missing and "all 12 scored" in clean.missing
    answers = {row.reaction_id: [{"subtype": s.subtype, "intermediate_smiles": s.smiles} for s in row.gold_steps]
               for row in oracle.details.reactions}
    answers["NR-001"] = answers["NR-001"][:-1]  # one step left out: an error
    answers["NR-002"] = "no steps here"

    class Answers:  # a mechanism predictor that knows these answers
        def predict_mechanisms(self, records):
            return [answers[record["reaction_id"]] for record in records]

    mixed = mechanism.evaluate(model=Answers(), limit=12, bootstrap=0)
    rows = [row.model_dump() for row in mixed.details.reactions]
    flagged = {row["reaction_id"] for row in rows if has_error(row)}
    assert flagged == {"NR-001", "NR-002"}
    gallery = mechanism_gallery([mixed], limit=20)
    assert len(gallery.items) == 2 and "NR-001" in gallery.items[0].caption  # steps to align come first
    assert "NR-002" in gallery.items[1].caption and "could not be parsed" in gallery.items[1].caption


def test_charts_label_their_axes_and_counts(oracle):
    from chemassay.suites.mechanism.report import mechanism_charts

    nothing = mechanism.evaluate({"NR-001": "no"}, bootstrap=0)  # every type unmatched: zero bars
    figures = {figure.title: figure for figure in mechanism_charts([oracle, nothing])}
    assert set(figures) == {"oMeS by difficulty", "Step match by type", "Score by mechanism length"}
    by_type = figures["Step match by type"].data
    assert by_type.startswith("<svg") and "gold step type (n = gold steps of that type)" in by_type
    assert "proton_transfer" in by_type and "n=" in by_type
    assert ">0<" in by_type  # the zero bars carry a visible 0
    by_length = figures["Score by mechanism length"].data
    assert "gold mechanism length (steps); n = reactions of that length" in by_length
    n_three = oracle.details.by_length["3"].n
    assert f"n={n_three}/" in by_length  # the 12 reactions of one result, the 196 of the other


def test_plots_write_pngs(oracle, tmp_path):
    from chemassay.suites.mechanism.plots import plot_accuracy_by_type, plot_score_by_length

    assert plot_score_by_length({"oracle": oracle.details.by_length}, tmp_path / "a.png").stat().st_size > 1000
    assert plot_accuracy_by_type({"oracle": oracle.details.by_type}, tmp_path / "b.png").stat().st_size > 1000


# ------------------------------------------------------------------------------- assay


def test_assay_tasks_and_quick_run_with_the_baseline(tmp_path):
    from pathlib import Path

    from chemassay.contract.assay import AssayContext
    from chemassay.suites.mechanism.assay import ASSAY

    assert ASSAY.baseline == "nearest-neighbour" and "30" in ASSAY.quick_note
    assert ASSAY.tasks({"something-else"}, quick=True, spec="x") == []
    (full,) = ASSAY.tasks({"mechanism-predictor"}, quick=False, spec="nearest-neighbour")
    assert (full.items, full.request_count, full.dataset) == (196, 196, "omebench")
    (task,) = ASSAY.tasks({"mechanism-predictor"}, quick=True, spec="nearest-neighbour")
    assert task.items == 30 and dict(task.setting) == {"dataset": "gold", "prompt": "one-shot"}
    result = task.run(AssayContext(spec="nearest-neighbour", out_dir=Path(tmp_path), quick=True))
    assert result.quick and result.n == 30 and result.dataset.name == "omebench"
    assert result.setting == dict(task.setting) and result.model.spec == "nearest-neighbour"
    verdict = ASSAY.verdict([result])
    assert verdict.startswith("S_total ") and "[" in verdict and "on 30 oMe-Gold reactions (one-shot)" in verdict
    assert "quick subset" in verdict and "Table 3's best one-shot S_total: Gemini-Pro-2.5 34.9 %" in verdict
    assert "S_total " in verdict and " % [" in verdict  # percent, as the paper and the scorecard show it


def test_assay_entry_point_runs_the_baseline_and_resumes(tmp_path):
    from chemassay.assaying import assay

    report = assay(None, suites=["mechanism"], quick=True, out=tmp_path, scorecard=False)
    (outcome,) = report.suites
    assert outcome.spec == "nearest-neighbour" and [t.status for t in outcome.tasks] == ["done"]
    (result,) = report.results
    assert result.suite == "mechanism" and result.quick and result.setting == {"dataset": "gold", "prompt": "one-shot"}
    assert outcome.verdict.startswith("S_total")
    again = assay(None, suites=["mechanism"], quick=True, out=tmp_path, scorecard=False)
    assert [t.status for t in again.suites[0].tasks] == ["resumed"]


def test_killed_assay_asks_only_the_missing_reactions(tmp_path, fake_openai):
    pytest.importorskip("httpx", reason="the llm extra is not installed")
    from chemassay.assaying import assay, plan

    spec = f"openai:chem-llm,base_url={fake_openai.base_url},cache=false"
    _outcomes, planned = plan(spec, suites=["mechanism"], quick=True)
    assert [(p.task.key, p.task.request_count) for p in planned] == [("ome-gold-one-shot", 30)]
    first = assay(spec, suites=["mechanism"], quick=True, out=tmp_path, scorecard=False)
    assert len(fake_openai.script.requests) == 30 and first.results[0].metrics["S_total"] == 1.0
    # as if killed after 12 answers: the result was never written, 12 answers are on disk
    (answers,) = (tmp_path / "mechanism").glob("ome-gold-one-shot.predictions.*.jsonl")
    kept = answers.read_text().splitlines()[:12]
    answers.write_text("\n".join(kept) + "\n")
    (tmp_path / "mechanism" / "ome-gold-one-shot.json").unlink()
    asked_before = {json.loads(line)["reaction_id"] for line in kept}
    second = assay(spec, suites=["mechanism"], quick=True, out=tmp_path, scorecard=False)
    fresh = fake_openai.script.requests[30:]
    assert len(fresh) == 18 and not {r["rid"] for r in fresh} & asked_before
    assert second.results[0].n == 30 and second.results[0].metrics["S_total"] == 1.0
    assert second.results[0].model.spec == spec
