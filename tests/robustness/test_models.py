"""Issue-14 models of the robustness suite: the three SMILES LM families trained through
``fit`` (loss falls, pieces resume to the uncut weights, hf: round trip), the pretrained
encoders inside PyPI wheels (rxnmapper, rxnfp, ChemNet), the graph network (invariant to every
rewrite), hub ids offline, fine-tuning, captions and the paper's Levenshtein ratio."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("pytorch_lightning")

from chemassay.contract.errors import UserInputError  # noqa: E402
from chemassay.models import check_model  # noqa: E402
from chemassay.models.registry import resolve_model  # noqa: E402
from chemassay.suites.robustness.augment import AUGMENTATIONS, augment_many  # noqa: E402
from chemassay.suites.robustness.lm import FAMILIES, LMConfig, train_smiles_lm  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "robustness"
MOLECULES = ["CCO", "c1ccccc1O", "CC(=O)Oc1ccccc1C(=O)O", "C[C@H](N)C(=O)O", "F/C=C/Cl", "C1CC2CCCC1CC2",
             "O=C([O-])c1ccccc1.[Na+]", "CN1C=NC2=C1C(=O)N(C(=O)N2C)C"]


def _corpus() -> list[str]:
    from chemassay.suites.robustness.lm import read_smiles_corpus

    return read_smiles_corpus(DATA / "moses_train_200.csv")


def _tiny(family: str, **overrides) -> LMConfig:
    values = dict(family=family, layers=1, hidden=16, heads=2, intermediate=32, steps=8, steps_per_epoch=4,
                  batch_size=8, learning_rate=5e-3, warmup_steps=1, seed=3)
    values.update(overrides)
    return LMConfig(**values)


def _weights(folder: Path) -> dict:
    state = torch.load(folder / "training" / "last.ckpt", map_location="cpu", weights_only=False)["state_dict"]
    return {k: v for k, v in state.items()}


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_learns_resumes_and_loads_as_hf(family, tmp_path):
    corpus = _corpus()
    uncut = train_smiles_lm(corpus[:150], corpus[150:170], tmp_path / "uncut", _tiny(family), threads=1, progress=False)
    assert uncut["finished"] and uncut["epochs_done"] == 2
    assert uncut["train_loss_last"] < uncut["train_loss_first"]
    assert set(uncut["validation"]) >= {"perplexity"} and all(np.isfinite(v) for v in uncut["validation"].values())
    first = train_smiles_lm(corpus[:150], corpus[150:170], tmp_path / "cut", _tiny(family), threads=1, progress=False,
                            stop_after_epochs=1)
    assert not first["finished"] and not (tmp_path / "cut" / "config.json").exists()
    second = train_smiles_lm(corpus[:150], corpus[150:170], tmp_path / "cut", _tiny(family), threads=1,
                             progress=False, stop_after_epochs=1)
    assert second["finished"]
    a, b = _weights(tmp_path / "uncut"), _weights(tmp_path / "cut")
    assert all(torch.equal(a[k], b[k]) for k in a)
    encoder = resolve_model(f"hf:{tmp_path / 'uncut'},pooling=mean-all", "encoder", {})
    layers = encoder.encode(MOLECULES[:3], layers="all")
    assert len(layers) == 2 and layers[-1].shape == (3, 16)


def test_pretrained_wheel_encoders_follow_the_protocol():
    for spec, package in (("rxnmapper", "rxnmapper"), ("rxnfp", "rxnfp"), ("chemnet", "fcd_torch")):
        if importlib.util.find_spec(package) is None:
            continue
        report = check_model(spec, "encoder")
        assert report.passed, report.summary()
        encoder = resolve_model(spec, "encoder", {})
        layers = encoder.encode(MOLECULES[:2], layers="all")
        assert len(layers) == (4 if spec == "chemnet" else 13)


@pytest.mark.skipif(importlib.util.find_spec("fcd_torch") is None, reason="fcd_torch not installed")
def test_chemnet_is_fcd_torch_and_counts_what_it_cannot_read():
    from fcd_torch import FCD

    encoder = resolve_model("chemnet", "encoder", {})
    ours = encoder.encode(MOLECULES)
    assert np.array_equal(ours, FCD(canonize=False).get_predictions(MOLECULES))
    assert encoder.truncated == [6]  # the salt: FCD's one-hot stops at the first '.'
    long = "C" * 400
    encoder.encode([long, "CCO"])
    assert encoder.truncated == [0]
    canonical = resolve_model("chemnet:canonize=true", "encoder", {})
    rewrites = [row.augmented for row in augment_many(MOLECULES, "explicit_h")]
    assert np.allclose(canonical.encode(MOLECULES), canonical.encode(rewrites))


@pytest.mark.skipif(importlib.util.find_spec("rxnmapper") is None, reason="rxnmapper not installed")
def test_rxnmapper_truncation_is_counted_and_a_bad_folder_is_one_line(tmp_path):
    encoder = resolve_model("rxnmapper", "encoder", {})
    out = encoder.encode(["C" * 600, "CCO"])
    assert out.shape == (2, 256) and encoder.truncated == [0]
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserInputError, match="not a ALBERT model folder"):
        resolve_model(f"rxnmapper:{tmp_path / 'empty'}", "encoder", {})
    with pytest.raises(UserInputError, match="model must be"):
        resolve_model("rxnfp:model=bert_xx", "encoder", {})


def test_graph_network_trains_and_is_invariant_to_every_rewrite(tmp_path, isolated_home):
    from chemassay.models.gnn import GNNConfig, check_invariance, train_gnn

    train = [line.split(",")[0] for line in (DATA / "moses_train_200.csv").read_text().splitlines()[1:121]]
    values = [len(s) / 10 for s in train]
    config = GNNConfig(hidden=16, layers=2, epochs=3, steps_per_epoch=4, batch_size=16, seed=1)
    manifest = train_gnn(train[:100], values[:100], train[100:], values[100:], tmp_path / "gnn", config, threads=1)
    assert manifest["finished"] and (tmp_path / "gnn" / "gnn.pt").is_file()
    assert check_model(f"gnn:{tmp_path / 'gnn'}", "encoder").passed
    encoder = resolve_model(f"gnn:{tmp_path / 'gnn'}", "encoder", {})
    for kind in AUGMENTATIONS:
        rewrites = [row.augmented or row.original for row in augment_many(MOLECULES, kind, seed=5)]
        assert check_invariance(encoder, MOLECULES, rewrites) < 1e-5, kind
    pair = encoder.encode(["C[C@H](N)C(=O)O", "C[C@@H](N)C(=O)O"])
    assert np.abs(pair[0] - pair[1]).max() > 1e-4  # enantiomers differ (CIP labels)
    predictor = resolve_model(f"gnn:{tmp_path / 'gnn'}", "property-predictor", {})
    values = predictor.predict_properties(["CCO", "not a smiles"])
    assert np.isfinite(values[0]) and np.isnan(values[1]) and 1 in predictor.failures
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text('{"model_type": "bert"}')
    (tmp_path / "bad" / "gnn.pt").write_bytes(b"x")
    with pytest.raises(UserInputError, match="not a chemassay graph-network config"):
        resolve_model(f"gnn:{tmp_path / 'bad'}", "encoder", {})


def test_hub_id_resolves_to_the_offline_cache(tmp_path, monkeypatch):
    corpus = _corpus()
    train_smiles_lm(corpus[:40], corpus[40:48], tmp_path / "lm", _tiny("encoder", steps=2, steps_per_epoch=2),
                    threads=1, progress=False)
    snapshot = tmp_path / "hf" / "hub" / "models--chem--tiny" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    for file in (tmp_path / "lm").iterdir():
        if file.is_file() and file.suffix in (".json", ".safetensors"):
            shutil.copy(file, snapshot / file.name)
    (tmp_path / "hf" / "hub" / "models--chem--tiny" / "refs").mkdir()
    (tmp_path / "hf" / "hub" / "models--chem--tiny" / "refs" / "main").write_text("a" * 40)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    encoder = resolve_model("hf:chem/tiny", "encoder", {})
    assert encoder.name == "hf:chem/tiny" and encoder.encode(["CCO", "CCN"]).shape == (2, 16)
    with pytest.raises(UserInputError, match="cannot get this hub checkpoint"):
        resolve_model("hf:chem/absent", "encoder", {})


def test_finetuned_encoder_is_a_property_predictor(tmp_path, isolated_home):
    from chemassay.robustness import downstream

    corpus = _corpus()
    train_smiles_lm(corpus[:40], corpus[40:48], tmp_path / "lm", _tiny("encoder", steps=2, steps_per_epoch=2),
                    threads=1, progress=False)
    spec = f"hf-finetune:{tmp_path / 'lm'},epochs=1,steps_per_epoch=2,threads=1"
    result = downstream(spec, DATA / "solubility_160.csv", targets=["logS"], augmentations=["kekulize"], bootstrap=0)
    assert result.model.kind == "hf-finetune" and result.n == 40
    assert np.isfinite(result.metrics["kekulize/rmse_drop"])
    again = downstream(spec, DATA / "solubility_160.csv", targets=["logS"], augmentations=["kekulize"], bootstrap=0)
    assert again.metrics["original/rmse"] == result.metrics["original/rmse"]  # cached, same weights


def test_paper_levenshtein_ratio_and_normalized_similarity():
    from chemassay.suites.robustness.amore import (
        levenshtein_ratio,
        normalized_similarity,
        string_statistics,
    )

    assert levenshtein_ratio("CCO", "CCO") == 0.0
    assert levenshtein_ratio("CCO", "[CH3][CH2][OH]") == pytest.approx(11 / 3)  # unbounded
    assert normalized_similarity("CCO", "[CH3][CH2][OH]") == pytest.approx(1 - 11 / 14)
    stats = string_statistics(["CCO", "CC"], ["OCC", "CC"])
    assert stats["mean_levenshtein_ratio"] == pytest.approx((2 / 3 + 0) / 2) and stats["unchanged"] == 0.5


@pytest.mark.skipif(importlib.util.find_spec("rouge_score") is None or importlib.util.find_spec("nltk") is None,
                    reason="captions extra not installed")
def test_captions_scores_per_rewrite_with_correlations(tmp_path, isolated_home):
    from chemassay.robustness import captions

    gold = {"1": "the molecule is a primary alcohol", "2": "the molecule is a phenol", "3": "the molecule is an acid"}
    rows = ["id\taugmentation\tSMILES\tprediction"]
    for item, smiles, hydro in (("1", "CCO", "[CH3][CH2][OH]"), ("2", "c1ccccc1O", "[OH][c]1[cH][cH][cH][cH][cH]1"),
                                ("3", "CC(=O)O", "[CH3][C](=[O])[OH]")):
        rows.append(f"{item}\toriginal\t{smiles}\t{gold[item]}")
        rows.append(f"{item}\texplicit_h\t{hydro}\ta salt of ammonia")
    rows.append("4\texplicit_h\tC\t")  # empty prediction: counted
    predictions = tmp_path / "p.tsv"
    predictions.write_text("\n".join(rows) + "\n")
    references = tmp_path / "ref.tsv"
    references.write_text("CID\tSMILES\tdescription\n" + "".join(f"{k}\tC\t{v}\n" for k, v in gold.items()))
    result = captions(predictions, references=references, bootstrap=50, meteor=False)
    assert result.metrics["original/rouge2"] == pytest.approx(1.0)
    assert result.metrics["explicit_h/rouge2"] == 0.0
    assert result.metrics["explicit_h/levenshtein_ratio"] > 1
    assert [s.reason for s in result.skipped] == ["explicit_h: empty prediction"]
    with pytest.raises(UserInputError, match="no 'reference' column"):
        captions(predictions)


def test_a_model_folder_of_another_kind_or_corrupted_is_one_line_exit_2(cli, tmp_path, isolated_home):
    gnn = tmp_path / "gnn"
    gnn.mkdir()
    (gnn / "config.json").write_text('{"model_type": "chemassay-gnn", "hidden": 16, "layers": 2}')
    (gnn / "gnn.pt").write_bytes(b"not a torch file")
    outcome = cli("robustness", "evaluate", "--model", f"gnn:{gnn}", "--dataset", DATA / "solubility_160.csv",
                  "--augmentations", "kekulize")
    assert outcome.code == 2 and "not weights of this graph network" in outcome.stderr
    assert "Traceback" not in outcome.stderr and len(outcome.stderr.strip().splitlines()) == 1
    outcome = cli("robustness", "evaluate", "--model", f"hf:{gnn}", "--dataset", DATA / "solubility_160.csv")
    assert outcome.code == 2 and "cannot load the checkpoint" in outcome.stderr
    weights = tmp_path / "chemnet.pt"
    weights.write_bytes(b"garbage")
    outcome = cli("robustness", "evaluate", "--model", f"chemnet:{weights}", "--dataset", DATA / "solubility_160.csv")
    assert outcome.code == 2 and "not a ChemNet weights file" in outcome.stderr


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("nltk") is None, reason="captions extra not installed")
def test_meteor_runs_offline_on_wordnet(isolated_home):
    from nltk.translate.meteor_score import meteor_score

    from chemassay.suites.robustness.captions import tokenize_words, wordnet

    reader = wordnet()
    if reader is None:
        pytest.skip("no WordNet 3.0 on this machine (apt-get install wordnet-base)")
    assert reader.synsets("dog")[0].name() == "dog.n.01"
    same = meteor_score([tokenize_words("the dog runs")], tokenize_words("the dog runs"), wordnet=reader)
    synonym = meteor_score([tokenize_words("the dog runs")], tokenize_words("the domestic_dog ran"), wordnet=reader)
    assert same > 0.9 and 0.5 < synonym < same


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without a GPU")
def test_cuda_without_a_gpu_is_a_clear_error(tmp_path):
    corpus = _corpus()
    with pytest.raises(UserInputError, match="CUDA is not available"):
        train_smiles_lm(corpus[:20], corpus[20:24], tmp_path / "lm", _tiny("decoder"), device="cuda", progress=False)
