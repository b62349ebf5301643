"""CLI of the dataset and baseline commands: filter, split, train, sample."""

from __future__ import annotations

import csv
import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"


def test_filter_command(cli, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("SMILES\nCCO\nC1CC\n\nCCCCl\n# a comment\nC[N+](C)(C)C\nc1ccccc1\n")
    kept = tmp_path / "kept.txt"
    outcome = cli("generation", "filter", source, "--out", kept, "--rejected", tmp_path / "rej.csv")
    assert outcome.code == 0, outcome.stderr
    assert kept.read_text() == "CCO\nc1ccccc1\n"
    result = json.loads((tmp_path / "kept.txt.filter.json").read_text())
    assert result["task"] == "filter" and result["n"] == 5
    assert result["metrics"]["n_kept"] == 2
    assert result["metrics"]["removed/parse"] == 1
    assert result["metrics"]["removed/mcf"] == 1
    assert result["metrics"]["removed/charge"] == 1
    assert result["skipped"][0]["line"] == 3 and "unparseable" in result["skipped"][0]["reason"]
    assert result["details"]["alert_hits"] == {"MCF4": 1}
    assert result["details"]["output"]["kept"] == str(kept) and result["details"]["output"]["rejected"]
    rows = list(csv.DictReader((tmp_path / "rej.csv").open()))
    assert [(r["line"], r["filter"]) for r in rows] == [("3", "parse"), ("5", "mcf"), ("7", "charge")]


def test_filter_command_errors(cli, tmp_path):
    outcome = cli("generation", "filter", tmp_path / "missing.txt", "--out", tmp_path / "o.txt")
    assert outcome.code == 2 and "missing.txt" in outcome.stderr


def test_split_command(cli, tmp_path):
    source = tmp_path / "moses_400.txt"
    source.write_text("\n".join((DATA / "moses_train_2000.txt").read_text().splitlines()[:401]) + "\n")
    out_dir = tmp_path / "split"
    outcome = cli("generation", "split", source, "--out-dir", out_dir, "--seed", "5")
    assert outcome.code == 0, outcome.stderr
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert sum(manifest["sizes"].values()) == 400
    assert manifest["sizes"]["test"] == 40
    assert manifest["input"]["path"].endswith("moses_400.txt")
    assert "held-out scaffolds" in outcome.stdout
    # The files the split command wrote before the contract change, byte for byte.
    assert {name: entry["sha256"] for name, entry in manifest["files"].items()} == {
        "train.csv": "4eb752cd261175c9659fa519ea8a727f3b7cbcb0f23014e53fad6452c4444d5c",
        "test.csv": "42bf3a9c8c2975a118670783bea6101e23e32b17936e137e608d9894a5241660",
        "test_scaffolds.csv": "a6f4402e52933bb11de09fe3e5c9b8c0399c915087091e437526036e69ed9da0",
        "skipped.csv": "97e3b10b53153b800c33090d8b00ec5859a6478d8c3328e4eee376ae6a5173f9",
        "held_out_scaffolds.txt": "e615db562b651e296a19322757b269c341a2d89ab3efbae8293af33a5b285742",
    }


def test_split_command_reports_bad_rows(cli, tmp_path):
    source = tmp_path / "table.csv"
    source.write_text("id,SMILES\n1,CCO\n2,\n3,C1CC\n4,c1ccccc1O\n5,OCC\n")
    outcome = cli("generation", "split", source, "--out-dir", tmp_path / "s", "--test-fraction", "0",
                  "--scaffold-test-fraction", "0")
    assert outcome.code == 0, outcome.stderr
    rows = list(csv.DictReader((tmp_path / "s" / "skipped.csv").open()))
    # The one SMILES reader keeps an empty cell as an empty (invalid) SMILES in its place.
    assert [(r["line"], r["reason"]) for r in rows] == [
        ("3", "invalid SMILES: empty string"), ("4", "invalid SMILES: SMILES syntax error"),
        ("6", "duplicate of input 0"),
    ]
    assert (tmp_path / "s" / "train.csv").read_text() == "SMILES\nCCO\nc1ccccc1O\n"


def test_train_and_predict_commands(cli, tmp_path, isolated_home):
    train = DATA / "moses_train_2000.txt"
    model = tmp_path / "ngram.npz"
    outcome = cli("generation", "train", "--model", f"ngram:{model}", "--train", train)
    assert outcome.code == 0, outcome.stderr
    assert model.is_file()
    first = tmp_path / "a.txt"
    second = tmp_path / "b.txt"
    for out in (first, second):
        assert cli("generation", "predict", "--model", f"ngram:{model}", "--n", "25", "--seed", "0", "--out", out).code == 0
    assert first.read_text() == second.read_text()
    # The reference's NGram(10) trained on the same molecules draws these with seed 0.
    expected = (DATA / "reference_ngram_seed0.txt").read_text().splitlines()
    assert first.read_text().splitlines()[:20] == expected
    manifest = json.loads((tmp_path / "a.txt.manifest.json").read_text())
    assert manifest["seed"] == 0 and manifest["n"] == 25 and manifest["model"]["parameters"]["n_train"] == 2000


def test_predict_trains_a_default_model_once(cli, tmp_path, isolated_home):
    out = tmp_path / "comb.txt"
    spec = f"combinatorial:train={DATA / 'moses_train_2000.txt'},limit=300"
    outcome = cli("generation", "predict", "--model", spec, "--n", "12", "--seed", "1", "--out", out)
    assert outcome.code == 0, outcome.stderr
    assert "training the combinatorial baseline" in outcome.stderr
    assert len(out.read_text().splitlines()) == 12
    models = list((isolated_home / "cache" / "generation" / "models").glob("*.json.gz"))
    assert len(models) == 1
    again = cli("generation", "predict", "--model", spec, "--n", "12", "--seed", "1", "--out", tmp_path / "again.txt")
    assert "training" not in again.stderr
    assert (tmp_path / "again.txt").read_text() == out.read_text()


def test_unknown_and_hmm_baselines(cli, tmp_path):
    outcome = cli("generation", "predict", "--model", "hmm", "--out", tmp_path / "x.txt")
    assert outcome.code == 2 and "hmm needs an argument, hmm:DIR" in outcome.stderr
    outcome = cli("generation", "train", "--model", f"nope:{tmp_path / 'x.npz'}")
    assert outcome.code == 2 and "unknown baseline 'nope'" in outcome.stderr
    outcome = cli("generation", "train", "--model", "vae")
    assert outcome.code == 2 and "--model vae:DIR" in outcome.stderr
