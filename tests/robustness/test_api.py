"""The Python API (chemassay.robustness): evaluate in its three forms, the numbers the CLI gave
before the contract (pinned), model kinds, dataset loaders, downstream, and an embeddings
endpoint evaluated end to end against a real local OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

import chemassay.robustness as robustness
import numpy as np
import pytest

import chemassay
from chemassay.contract.errors import UserInputError
from chemassay.models import check_model, get_kind, list_kinds, load_model
from chemassay.report.cards import undeclared_keys

DATA = Path(__file__).resolve().parents[1] / "data" / "robustness"

# `chemassay robustness run --dataset isomers --encoder ENC -a <all five>` on main before the
# contract (o2a then a2o: Acc@1, Acc@5, MRR per augmentation).
ISOMERS_BEFORE = {
    "char-ngram": {
        "canonical": (0.21241830065359477, 0.41721132897603486, 0.31170911610862806,
                      0.22657952069716775, 0.4139433551198257, 0.32088626750959703),
        "explicit_h": (0.008714596949891068, 0.026143790849673203, 0.028068667045839418,
                       0.0, 0.0054466230936819175, 0.008170755330604391),
        "kekulize": (0.25925925925925924, 0.4912854030501089, 0.3680359067401591,
                     0.2570806100217865, 0.4651416122004357, 0.3561577849320831),
        "cycle_renumber": (0.3572984749455338, 0.5697167755991286, 0.45682983772537183,
                           0.5119825708061002, 0.7058823529411765, 0.6076689727622828),
        "randomized": (0.08061002178649238, 0.1895424836601307, 0.1428749570762315,
                       0.0860566448801743, 0.22004357298474944, 0.16114096326381522),
    },
    "fingerprint": {kind: (0.9934640522875817, 1.0, 0.9967320261437909) * 2
                    for kind in ("canonical", "explicit_h", "kekulize", "cycle_renumber", "randomized")},
}
COLUMNS = ("o2a_acc@1", "o2a_acc@5", "o2a_mrr", "a2o_acc@1", "a2o_acc@5", "a2o_mrr")


@pytest.fixture(scope="module")
def isomer_results(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CHEMASSAY_HOME", str(home))
        return {encoder: robustness.evaluate(model=encoder, reference="isomers", bootstrap=200)
                for encoder in ("char-ngram", "fingerprint")}


@pytest.mark.parametrize("encoder", ["char-ngram", "fingerprint"])
def test_isomer_tables_equal_the_numbers_before_the_contract(isomer_results, encoder):
    result = isomer_results[encoder]
    assert result.task == "evaluate" and result.n == 918 and result.model.spec == encoder
    assert result.config["augmentations"] == ["canonical", "explicit_h", "kekulize", "cycle_renumber", "randomized"]
    for kind, values in ISOMERS_BEFORE[encoder].items():
        assert tuple(result.metrics[f"{kind}/{c}"] for c in COLUMNS) == values, kind
    assert undeclared_keys("robustness", result.metrics) == []
    # Per-molecule values behind the intervals: their mean is the metric.
    scores = result.item_scores["kekulize/o2a_mrr"]
    assert len(scores) == len(result.item_ids) == 918
    assert np.mean(scores) == pytest.approx(result.metrics["kekulize/o2a_mrr"])
    interval = result.intervals["canonical/o2a_acc@1"]
    # Acc@k is a proportion: a Wilson interval; MRR a bootstrap one
    assert interval.low <= result.metrics["canonical/o2a_acc@1"] <= interval.high and interval.method == "wilson"
    assert result.intervals["kekulize/o2a_mrr"].resamples == 200


def test_evaluate_embeddings_arrays_files_and_layers(tmp_path):
    originals = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    augmented = np.array([[0.9, 0.0], [1.0, 0.2], [0.0, 1.0], [5.0, 4.0]])
    result = robustness.evaluate(originals, augmented, ids=["a", "b", "c", "d"], bootstrap=0)
    # Hand-checked in test_retrieval: o2a ranks 0, 1, 0, 0.
    assert result.metrics["o2a_acc@1"] == 0.75 and result.metrics["o2a_mrr"] == pytest.approx(3.5 / 4)
    assert result.item_ids == ["a", "b", "c", "d"] and result.item_scores["o2a_acc@1"] == [1.0, 0.0, 1.0, 1.0]
    assert result.model.kind == "predictions" and len(result.model.checksum) == 64 and result.intervals == {}
    np.save(tmp_path / "o.npy", originals)
    np.save(tmp_path / "a.npy", augmented)
    from_files = robustness.evaluate(tmp_path / "o.npy", str(tmp_path / "a.npy"), k=[1, 2])
    assert from_files.metrics["o2a_acc@2"] == 1.0 and len(from_files.inputs) == 2
    assert from_files.model.spec.startswith("predictions:") and "o2a_acc@1" in from_files.intervals
    layered = robustness.evaluate(np.stack([originals, originals]), [augmented, originals], bootstrap=0)
    assert layered.metrics["layer1/o2a_acc@1"] == 1.0 and layered.metrics["layer0/o2a_acc@1"] == 0.75
    assert layered.metrics["o2a_acc@1"] == 1.0 and len(layered.details.per_layer["pair"]) == 2
    with pytest.raises(UserInputError, match="give both"):
        robustness.evaluate(originals)
    with pytest.raises(UserInputError, match="differ|shape"):
        robustness.evaluate(originals, augmented[:3])


def test_evaluate_pair_of_lists_with_identity_check(isolated_home):
    originals = ["CCO", "c1ccccc1O", "CC(=O)O", "CCN"]
    rewritten = ["OCC", "Oc1ccccc1", "CCO", "NCC"]  # row 2 is another molecule
    result = robustness.evaluate(model="fingerprint", reference=originals, augmented=rewritten, bootstrap=0)
    assert result.n == 4 and result.details.model_dump()["identity_mismatches"] == [{"line": 3, "id": "2"}]
    assert result.details.warnings and "not the same molecule" in result.details.warnings[0]
    dropped = robustness.evaluate(model="fingerprint", reference=originals, augmented=rewritten, drop_mismatched=True,
                                  bootstrap=0)
    assert dropped.n == 3 and dropped.metrics["o2a_acc@1"] == 1.0 and dropped.skipped[0].item == "2"


def test_model_kinds_of_the_suite():
    names = {kind.name for kind in list_kinds(suite="robustness") if kind.suite == "robustness"}
    assert names == {"fingerprint", "char-ngram", "rf-fingerprint", "rf-char-ngram", "rxnmapper", "rxnfp", "chemnet",
                     "gnn", "hf-finetune"}
    assert "encoder" in get_kind("hf").protocol_names  # hf:PATH comes from the general kind
    for spec in ("fingerprint", "char-ngram:n=2-4,dim=512"):
        report = check_model(spec, "encoder")
        assert report.passed, report.summary()
    report = check_model("rf-fingerprint:trees=5", "property-predictor")
    assert report.passed, report.summary()
    forest = load_model("rf-fingerprint:trees=5", "property-predictor")
    assert forest.describe()["trained_on"].startswith("solubility-huuskonen/train")
    assert forest.predict_properties(["CCO", "c1ccccc1"]).shape == (2,)


def test_isomers_all_have_the_formula_the_docs_state():
    """The shipped QM9 isomers are all C7H10O2 (nine heavy atoms, within QM9's limit of nine);
    the AMORE paper's text says C9H12N2O, which has twelve heavy atoms and so cannot be a QM9
    formula (docs/robustness.md notes the discrepancy)."""
    from chemassay.chem.formula import molecular_formula, parse_formula

    isomers = robustness.load_dataset("isomers")
    assert len(isomers) == 918
    assert {molecular_formula(smiles) for smiles in isomers.smiles} == {"C7H10O2"}
    def heavy_atoms(formula: str) -> int:
        return sum(n for element, n in parse_formula(formula).items() if element != "H")

    assert heavy_atoms("C7H10O2") == 9 and heavy_atoms("C9H12N2O") == 12
    page = (Path(__file__).resolve().parents[2] / "docs" / "robustness.md").read_text()
    assert "C7H10O2" in page and "C9H12N2O" in page


def test_dataset_loaders_through_the_registry():
    chebi = chemassay.load_dataset("chebi20")
    assert len(chebi) == 3300 and chebi.name == "amore-chebi20" and chebi.ids[0] == "5354212"
    isomers = robustness.load_dataset("amore-isomers")
    assert len(isomers) == 918 and isomers.columns["name"][0].startswith("1-(6-Oxabicyclo")
    train, test = (chemassay.load_dataset("solubility", part=p) for p in ("train", "test"))
    assert (len(train), len(test)) == (1025, 257) and set(test.columns["split"]) == {"test"}
    assert len(chemassay.load_dataset("solubility-huuskonen")) == 1282
    with pytest.raises(UserInputError, match="no part"):
        chemassay.load_dataset("solubility", part="valid")


def test_downstream_equals_the_numbers_before_the_contract(isolated_home):
    # `robustness downstream --model baseline-char-ngram --n-estimators 100 --target logS` on main
    # (baseline-char-ngram was rf-char-ngram's name then).
    result = robustness.downstream("rf-char-ngram", targets=["logS"], n_estimators=100,
                                   augmentations=["explicit_h", "randomized"], bootstrap=0)
    assert result.task == "downstream" and result.model.kind == "rf-char-ngram" and result.n == 257
    assert result.metrics["original/rmse"] == 0.8176325420496938
    assert result.metrics["explicit_h/rmse"] == 1.2119159658661316
    assert result.metrics["randomized/rmse_drop"] == 0.11525070731230591
    assert result.config["n_estimators"] == 100 and undeclared_keys("robustness", result.metrics) == []


def test_downstream_classification_has_accuracy_intervals(isolated_home):
    result = robustness.downstream("rf-fingerprint", DATA / "solubility_160.csv", targets=["is_low"],
                                   augmentations=["kekulize"], n_estimators=10, bootstrap=100)
    assert result.config["task"] == "classification"
    assert result.metrics["kekulize/accuracy_drop"] == pytest.approx(0.0)
    assert "kekulize/accuracy" in result.intervals and "kekulize/roc_auc" not in result.intervals


def test_downstream_predictions_file_layout(tmp_path, isolated_home):
    old_layout = tmp_path / "old.csv"
    old_layout.write_text("SMILES,logS\nCCO,1.0\n")
    with pytest.raises(UserInputError, match="prediction"):
        robustness.downstream(f"predictions:{old_layout}", DATA / "solubility_160.csv", targets=["logS"],
                              augmentations=["kekulize"])


def test_embeddings_endpoint_as_encoder_end_to_end(openai_server, isolated_home, cli, tmp_path):
    from support.openai_server import hashed_embedding

    spec = f"openai:embedder,base_url={openai_server.base_url}"
    molecules = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "OC[C@H]1OC(O)[C@H](O)[C@@H](O)[C@@H]1O", "C1CCNCC1",
                 "Cc1ccccc1"]
    result = robustness.evaluate(model=spec, reference=molecules, augmentations=["kekulize", "explicit_h"], bootstrap=0)
    assert result.model.kind == "openai" and result.n == 6
    assert any(r["path"].endswith("/embeddings") for r in openai_server.requests)
    # The same numbers from the server's vectors scored as precomputed embeddings.
    kekule = robustness.augment(molecules, "kekulize").smiles
    direct = robustness.evaluate(np.array([hashed_embedding(s) for s in molecules]),
                                 np.array([hashed_embedding(s) for s in kekule]), bootstrap=0)
    for key in ("o2a_acc@1", "o2a_mrr", "a2o_acc@1", "a2o_mrr"):
        assert result.metrics[f"kekulize/{key}"] == pytest.approx(direct.metrics[key])
    path = tmp_path / "molecules.csv"
    path.write_text("SMILES\n" + "\n".join(molecules) + "\n")
    out = tmp_path / "r.json"
    outcome = cli("--quiet", "robustness", "evaluate", "--model", "openai:embedder", "--base-url",
                  openai_server.base_url, "--dataset", path, "--augmentations", "kekulize", "--out", out)
    assert outcome.code == 0, outcome.stderr
    data = json.loads(out.read_text())
    assert data["metrics"]["kekulize/o2a_acc@1"] == pytest.approx(result.metrics["kekulize/o2a_acc@1"])
    assert data["model"]["spec"].startswith("openai:embedder")


def test_augment_api_counts_and_csv():
    augmented = robustness.augment(["CCO", "c1ccccc1O", "C1CC"], "cycle_renumber", seed=3)
    assert augmented.counts() == {"ok": 1, "not_applicable": 1, "failed": 1}
    assert [p["status"] for p in augmented.problems()] == ["not_applicable", "failed"]
    assert augmented.to_csv().splitlines()[0] == "row,id,SMILES,original,status,reason"
    with pytest.raises(UserInputError, match="unknown augmentation"):
        robustness.augment(["CCO"], "shuffle")


def test_evaluate_takes_the_common_options_and_runs_the_encoder_through_the_pipeline(isolated_home):
    from chemassay.contract import Options
    from chemassay.suites.robustness.encoders import FingerprintEncoder

    class Counting:
        name = "counting"

        def __init__(self):
            self.asked = []

        def encode(self, smiles, layers="last"):
            self.asked.append(list(smiles))
            return FingerprintEncoder().encode(smiles, layers=layers)

    encoder = Counting()
    molecules = ["CCO", "c1ccccc1O", "CCO", "C1CCNCC1"]
    result = robustness.evaluate(model=encoder, reference=molecules, augmentations=["kekulize"],
                                 options=Options(bootstrap=0, seed=1))
    assert encoder.asked[0] == ["CCO", "c1ccccc1O", "C1CCNCC1"]  # identical SMILES embedded once
    assert result.model.kind == "python" and result.model.name == "counting"
    assert result.config["seed"] == 1 and result.intervals == {} and result.n == 4
    keyword = robustness.evaluate(model="fingerprint", reference=molecules, augmentations=["kekulize"], bootstrap=0,
                                  seed=1)
    assert keyword.metrics == result.metrics and keyword.model.spec == "fingerprint"
    with pytest.raises(UserInputError, match="writes no model outputs"):
        robustness.evaluate(model="fingerprint", reference=molecules, options=Options(out="x.npz"))
    with pytest.raises(TypeError):
        robustness.evaluate(model="fingerprint", dataset=molecules)  # the old name is gone
