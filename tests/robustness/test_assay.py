"""The robustness suite's declared results and its part in ``chemassay assay``: typed details
that survive a write and a read, the AMORE setting of every result and the published rows it
brings, drops that are zero up to rounding reported as zero, and the assay's tasks (quick) with
the built-in baseline, a forest property model and a real embeddings endpoint on 127.0.0.1."""

from __future__ import annotations

import json

import chemassay.robustness as robustness
import numpy as np
import pytest
from pydantic import ValidationError

from chemassay.contract.errors import UserInputError
from chemassay.contract.result import Result, read_result
from chemassay.suites.robustness.assay import (
    ASSAY,
    PAPER_AUGMENTATIONS,
    QUICK_ITEMS,
    embedding_requests,
)
from chemassay.suites.robustness.details import DownstreamDetails, EvaluateDetails, RetrievalMiss


def test_evaluate_details_survive_write_and_read(tmp_path, isolated_home):
    result = robustness.evaluate(model="char-ngram", reference="isomers", augmentations=["canonical", "explicit_h"],
                                 limit=40, bootstrap=50)
    assert isinstance(result.details, EvaluateDetails)
    assert [row["augmentation"] for row in result.details.table] == ["canonical", "explicit_h"]
    assert result.details.misses and isinstance(result.details.misses[0], RetrievalMiss)
    assert set(result.details.strings) == {"original", "canonical", "explicit_h"}
    back = read_result(result.write(tmp_path / "r.json"))
    assert isinstance(back.details, EvaluateDetails)
    assert back.details.model_dump() == json.loads(result.to_json())["details"]
    assert back.details.misses[0].rank > 1 and back.n == 40 and back.config["limit"] == 40
    # nothing of the old loose top-level fields is left
    raw = json.loads((tmp_path / "r.json").read_text())
    assert not {"table", "misses", "strings", "per_layer", "warnings", "not_applied"} & set(raw)


def test_undeclared_detail_is_refused(tmp_path):
    with pytest.raises(ValidationError, match="bogus"):
        Result(suite="robustness", task="evaluate", metrics={}, n=0, details={"bogus": 1})
    with pytest.raises(ValidationError, match="declares no details"):
        Result(suite="robustness", task="retrieve", metrics={}, n=0, details={"table": []})
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"suite": "robustness", "task": "downstream", "metrics": {}, "n": 0,
                                "details": {"table": [], "missing": [3]}}))
    with pytest.raises(UserInputError, match="details.missing"):
        read_result(path)


def test_pair_and_embedding_runs_key_their_fields_as_pair(tmp_path, isolated_home):
    originals = np.eye(4)
    layered = robustness.evaluate([originals, originals], [originals + 0.1, originals + 0.1], bootstrap=0)
    assert len(layered.details.per_layer["pair"]) == 2 and layered.setting == {}
    back = read_result(layered.write(tmp_path / "e.json"))
    assert back.details.per_layer == layered.details.per_layer
    bad = originals.copy()
    bad[2, 0] = np.nan
    skipped = robustness.evaluate(bad, originals, bootstrap=0)
    assert [(s.index, s.item) for s in skipped.skipped] == [(2, "2")]
    assert "NaN" in skipped.details.warnings[0]


def test_every_skip_is_a_skipped_item_naming_its_rewrite(isolated_home):
    # "C1CC" is no molecule: every rewrite skips it, and says which rewrite in the reason.
    result = robustness.evaluate(model="fingerprint", reference=["CCO", "c1ccccc1O", "C1CC", "CC(=O)O"],
                                 augmentations=["kekulize", "explicit_h"], bootstrap=0)
    reasons = sorted(s.reason.split(":")[0] for s in result.skipped)
    assert reasons == ["explicit_h", "kekulize"] and all(s.item == "2" for s in result.skipped)


def test_amore_results_record_the_papers_setting_and_meet_only_its_rows(isolated_home):
    from chemassay.report.scorecard import build_scorecard

    chebi = robustness.evaluate(model="fingerprint", reference="chebi20", augmentations=PAPER_AUGMENTATIONS,
                                limit=30, bootstrap=50)
    isomers = robustness.evaluate(model="fingerprint", reference="isomers", augmentations=["explicit_h"], limit=30,
                                  bootstrap=0)
    assert (chebi.dataset.name, chebi.setting) == ("amore-chebi20", {"dataset": "chebi20"})
    assert (isomers.dataset.name, isomers.setting) == ("amore-isomers", {"dataset": "isomers"})
    downstream = robustness.downstream("rf-fingerprint", targets=["logS"], augmentations=["explicit_h"],
                                       n_estimators=5, limit=20, bootstrap=0)
    assert (downstream.dataset.name, downstream.setting) == ("solubility-huuskonen", {"task": "solubility"})
    card = build_scorecard([chebi, isomers, downstream], resamples=0)
    section = next(s for s in card.sections if s.suite == "robustness")
    published = {board.dataset: [row for row in board.rows if row.published] for board in section.leaderboards}
    # ChEBI-20: AMORE's retrieval rows measured on this very set (Tables 1 and 3), nothing else
    assert published["amore-chebi20"]
    assert {row.source.rsplit(", ", 1)[1] for row in published["amore-chebi20"]} <= {"Table 1", "Table 3"}
    assert all(row.setting.get("dataset") == "chebi20" for row in published["amore-chebi20"])
    # the paper prints no isomer numbers, and its downstream tables are MoleculeNet sets, not this one
    assert published["amore-isomers"] == [] and published["solubility-huuskonen"] == []


class CrippenLogP:
    """A real property model whose answers depend on the string only through rounding: Crippen
    logP sums atom contributions in the order the SMILES lists the atoms."""

    name = "crippen-logp"

    def predict_properties(self, smiles):
        from rdkit import Chem
        from rdkit.Chem import Crippen

        return np.array([Crippen.MolLogP(Chem.MolFromSmiles(s)) for s in smiles])


def test_a_drop_that_is_rounding_noise_is_exactly_zero(isolated_home):
    from rdkit import Chem
    from rdkit.Chem import Crippen

    from chemassay.suites.robustness.downstream import settle_rounding

    # the noise is real: the same molecule written another way gets another last bit
    first, second = (Crippen.MolLogP(Chem.MolFromSmiles(s)) for s in ("OCc1ccccc1Cl", "Clc1ccccc1CO"))
    assert first != second and abs(first - second) < 1e-12
    settled = settle_rounding(np.array([second, 2.0, 0.0]), np.array([first, 2.5, 1e-17]))
    assert settled[0] == first and settled[1] == 2.0 and settled[2] == 1e-17
    result = robustness.downstream(CrippenLogP(), targets=["logS"], augmentations=["canonical", "randomized"],
                                   bootstrap=100)
    for kind in ("canonical", "randomized"):
        assert result.metrics[f"{kind}/rmse_drop"] == 0.0 and result.metrics[f"{kind}/mse_drop"] == 0.0
        # every molecule's drop is 0: nothing to resample, so no interval rather than a zero-wide one
        interval = result.intervals[f"{kind}/mse_drop"]
        assert (interval.low, interval.high) == (None, None) and interval.method == "none (every item equal)"


def test_threaded_forest_gives_a_graph_rewrite_no_drop(isolated_home):
    # Two threads used to add the trees in whatever order they finished (drops of ~1e-17).
    result = robustness.downstream("rf-fingerprint", targets=["logS"], augmentations=["kekulize", "randomized"],
                                   n_estimators=20, n_jobs=2, bootstrap=0)
    assert {key: value for key, value in result.metrics.items() if key.endswith("_drop")} == {
        "kekulize/mse_drop": 0.0, "kekulize/rmse_drop": 0.0, "randomized/mse_drop": 0.0, "randomized/rmse_drop": 0.0}
    assert isinstance(result.details, DownstreamDetails) and result.details.table[0]["augmentation"] == "original"


def test_embedding_requests_count_what_the_cache_does_not_answer():
    calls = [["A", "B", "C"], ["A", "D", "E"], ["D", "F", "F"]]
    assert embedding_requests(calls, batch=2) == 2 + 1 + 1
    assert embedding_requests(calls, batch=2, cache=False) == 2 + 2 + 1  # a call asks for F once
    assert embedding_requests([[], ["A"]], batch=64) == 1
    # the first text of the first call alone (an endpoint client without pooling=), then chunks
    assert embedding_requests(calls, batch=2, probe=True) == (1 + 1) + 1 + 1
    assert embedding_requests([["A"], ["B", "C"]], batch=2, probe=True) == 1 + 1


def test_assay_plan_names_the_papers_settings():
    encoder = ASSAY.tasks({"encoder"}, quick=False, spec="fingerprint")
    assert [(t.key, t.dataset, dict(t.setting), t.items) for t in encoder] == [
        ("amore-chebi20", "amore-chebi20", {"dataset": "chebi20"}, 3300),
        ("amore-isomers", "amore-isomers", {"dataset": "isomers"}, 918)]
    both = ASSAY.tasks({"encoder", "property-predictor"}, quick=True, spec="gnn:DIR")
    assert [(t.key, t.items) for t in both] == [("amore-chebi20", QUICK_ITEMS), ("amore-isomers", QUICK_ITEMS),
                                                 ("downstream-solubility", QUICK_ITEMS)]
    assert both[2].setting == {"task": "solubility"} and both[2].protocol == "property-predictor"
    assert ASSAY.baseline == "fingerprint" and str(QUICK_ITEMS) in ASSAY.quick_note


def test_assay_quick_with_the_baseline_and_a_forest(tmp_path, isolated_home):
    from chemassay.assaying import assay
    from chemassay.contract.assay import AssayContext

    report = assay(None, suites=["robustness"], quick=True, out=tmp_path / "assay")
    (outcome,) = report.suites
    assert outcome.spec == "fingerprint" and [t.status for t in outcome.tasks] == ["done", "done"]
    results = {r.dataset.name: r for r in report.results}
    assert {name: (r.setting, r.quick, r.n) for name, r in results.items()} == {
        "amore-chebi20": ({"dataset": "chebi20"}, True, QUICK_ITEMS),
        "amore-isomers": ({"dataset": "isomers"}, True, QUICK_ITEMS)}
    assert set(PAPER_AUGMENTATIONS) == set(results["amore-chebi20"].config["augmentations"])
    assert "chebi20 Acc@1" in outcome.verdict and "isomers Acc@1" in outcome.verdict and "quick" in outcome.verdict
    assert read_result(tmp_path / "assay" / "robustness" / "amore-isomers.json").details.table
    assert report.scorecard is not None and report.scorecard.is_file()
    # a property predictor gets the downstream task instead
    (task,) = ASSAY.tasks({"property-predictor"}, quick=True, spec="rf-fingerprint")
    result = task.run(AssayContext(spec="rf-fingerprint", out_dir=tmp_path, quick=True))
    assert (result.dataset.name, result.setting, result.quick, result.n) == (
        "solubility-huuskonen", {"task": "solubility"}, True, QUICK_ITEMS)
    assert result.metrics["explicit_h/mse_drop"] == 0.0  # the fingerprint forest is invariant
    assert "ΔMSE" in ASSAY.verdict([result])


def test_assay_sends_an_endpoint_exactly_the_requests_it_plans(openai_server, tmp_path, isolated_home):
    from chemassay.assaying import assay, plan

    spec = f"openai:embedder,base_url={openai_server.base_url}"
    _outcomes, planned = plan(spec, suites=["robustness"], quick=True)
    assert [p.task.key for p in planned] == ["amore-chebi20", "amore-isomers"]
    report = assay(spec, suites=["robustness"], quick=True, out=tmp_path / "assay")
    assert [t.status for t in report.suites[0].tasks] == ["done", "done"]
    sent = [r for r in openai_server.requests if r["path"].endswith("/embeddings")]
    assert len(sent) == sum(p.task.request_count for p in planned)
    assert all(r.model.kind == "openai" and r.setting for r in report.results)
