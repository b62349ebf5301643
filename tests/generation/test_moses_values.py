"""One full metric run on real MOSES molecules, pinned to the MOSES reference's own values.

Data (tests/data/generation, MIT, from the molsets 0.3.1 wheel): 310 "generated" strings
(150 training molecules, 120 scaffold-test molecules, 25 training SMILES with one random
character edit, 15 repeats), 300 test and 300 scaffold-test molecules with their
statistics computed by chemassay (``make_reference_stats.py``) and 2,000 training SMILES.

The pinned numbers are what ``moses.metrics.get_all_metrics(gen, test=..., test_scaffolds=...,
train=...)`` of molsets 0.3.1 returned on exactly these lists (RDKit 2026.09.1, fcd_torch
1.0.7; run by benchmarks/generation_compare_moses.py's reference venv).
"""

import json
import math
from pathlib import Path

import pytest

from chemassay.data.readers import read_smiles_file
from chemassay.suites.generation.metrics import METRIC_KEYS
from chemassay.suites.generation.metrics import evaluate_samples as evaluate
from chemassay.suites.generation.reference import load_stats
from support.logs import expect_message

pytest.importorskip("fcd_torch", reason="FCD needs the torch extra")

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"

MOSES_VALUES = {
    "valid": 0.9258064516129032,
    "unique@1000": 0.9477351916376306,
    "unique@10000": 0.9477351916376306,
    "FCD/Test": 10.278398178194834,
    "SNN/Test": 0.33227021696260167,
    "Frag/Test": 0.9728588975680241,
    "Scaf/Test": 0.15365466506930725,
    "FCD/TestSF": 10.904064935802168,
    "SNN/TestSF": 0.33382787521707885,
    "Frag/TestSF": 0.9701625310087679,
    "Scaf/TestSF": 0.04951559503277092,
    "IntDiv": 0.8503839003068508,
    "IntDiv2": 0.8333612583905362,
    "Filters": 1.0,
    "logP": 0.12687907177700358,
    "SA": 0.16670025441570296,
    "QED": 0.014961093943066444,
    "weight": 5.906007746806052,
    "Novelty": 0.4485294117647059,
}


@pytest.fixture(scope="module")
def evaluation():
    gen = read_smiles_file(DATA / "moses_gen_310.txt").smiles
    train = read_smiles_file(DATA / "moses_train_2000.txt").smiles
    with expect_message("unique@1000"):
        return evaluate(
            gen,
            test=load_stats(DATA / "moses_test_300.stats.npz"),
            scaffold_test=load_stats(DATA / "moses_test_scaffolds_300.stats.npz"),
            train=train,
            show_progress=False,
        )


def test_every_metric_equals_the_moses_reference(evaluation):
    assert list(evaluation.metrics) == list(METRIC_KEYS)
    for key, expected in MOSES_VALUES.items():
        tolerance = 1e-3 if key.startswith("FCD") else 1e-6
        assert evaluation.metrics[key] == pytest.approx(expected, abs=tolerance), key


def test_counts_invalid_strings_and_warnings(evaluation):
    assert evaluation.n_input == 310
    assert evaluation.n_valid == 287 and len(evaluation.invalid) == 23
    assert all(bad.reason for bad in evaluation.invalid)
    assert evaluation.n_unique_valid == 272
    assert any("unique@10000" in w for w in evaluation.warnings)
    assert len(evaluation.properties["QED"]) == 287


def test_shipped_statistics_are_what_our_code_computes(isolated_home):
    from chemassay.suites.generation.reference import compute_stats

    smiles = read_smiles_file(DATA / "moses_test_300.txt").smiles[:40]
    shipped = load_stats(DATA / "moses_test_300.stats.npz")
    fresh = compute_stats(smiles, name="first 40")
    assert (fresh.fingerprints == shipped.fingerprints[:40]).all()
    for name in ("logP", "SA", "QED", "weight"):
        assert fresh.properties[name].tolist() == shipped.properties[name][:40].tolist()
    assert set(fresh.scaffolds) <= set(shipped.scaffolds)
    assert not math.isnan(float(fresh.fcd_mu.sum()))


def test_metrics_cli_on_shipped_data(cli, tmp_path, isolated_home):
    # The values are checked above; here the command's result file on a part of the data.
    lines = (DATA / "moses_gen_310.txt").read_text().splitlines()[:61]
    gen = tmp_path / "gen.txt"
    gen.write_text("\n".join(lines) + "\n")
    out = tmp_path / "result.json"
    outcome = cli(
        "generation", "evaluate", gen, "--out", out,
        "--test", DATA / "moses_test_300.stats.npz",
        "--scaffold-test", DATA / "moses_test_scaffolds_300.stats.npz",
        "--train", DATA / "moses_train_2000.txt",
    )
    assert outcome.code == 0, outcome.stderr
    assert "unique@1000" in outcome.stderr  # the warning is shown once, not as a traceback
    result = json.loads(out.read_text())
    assert result["suite"] == "generation" and result["task"] == "evaluate"
    assert list(result["metrics"]) == list(METRIC_KEYS)
    counts = result["details"]["counts"]
    assert counts["input"] == 60 and counts["valid"] + counts["invalid"] == 60
    assert result["n"] == counts["valid"] and len(result["skipped"]) == counts["invalid"] > 0
    first_bad = result["skipped"][0]
    assert first_bad["line"] >= 2 and first_bad["reason"].startswith("invalid SMILES")
    assert lines[first_bad["line"] - 1] == first_bad["item"]
    assert result["dataset"]["name"] == "moses_test_300"
    assert {ref["path"] for ref in result["inputs"]} >= {str(gen), str(DATA / "moses_train_2000.txt")}
    png = tmp_path / "result.properties.png"
    assert png.is_file() and png.read_bytes()[:4] == b"\x89PNG"
    assert result["details"]["plot"] == str(png)
