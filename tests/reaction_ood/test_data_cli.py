"""The data commands end to end: info, clean, split, verify, and their errors (exit code 2)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from chemassay.suites.reaction_ood.io import read_schneider_50k


@pytest.fixture(scope="module")
def raw_csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("rood") / "schneider_head.csv"
    frame = read_schneider_50k().iloc[:1200]
    # the Schneider CSV layout, as shipped, so the format is detected
    pd.DataFrame({"rxn_class": frame["class_code"], "source": "US" + frame["document_id"],
                  "rxn": frame["rxn_smiles"], "split": "train", "y": 0}).to_csv(path, index=False)
    return path


def test_info(cli, raw_csv):
    out = cli("reaction-ood", "info", raw_csv)
    assert out.code == 0, out.stderr
    assert "format schneider, 1200 reactions" in out.stdout


def test_info_accepts_a_registered_dataset_name(cli):
    out = cli("reaction-ood", "info", "schneider-50k")
    assert out.code == 0, out.stderr
    assert "50000 reactions" in out.stdout
    missing = cli("reaction-ood", "info", "schneider-5k")
    assert missing.code == 2 and "no such reaction file" in missing.stderr


def test_clean_split_verify(cli, raw_csv, tmp_path):
    clean = tmp_path / "clean.parquet"
    report = tmp_path / "clean.json"
    out = cli("reaction-ood", "clean", raw_csv, "--out", clean, "--report", report, "-j", "2")
    assert out.code == 0, out.stderr
    result = json.loads(report.read_text())
    assert result["suite"] == "reaction-ood" and result["task"] == "clean"
    metrics = result["metrics"]
    assert metrics["rows_in"] == 1200 and metrics["rows_out"] == result["n"] == len(pd.read_parquet(clean))
    assert result["inputs"][0]["sha256"]
    config = tmp_path / "split.json"
    config.write_text(json.dumps({"kind": "document", "test_ood": 120, "valid": 60, "test": 120}))
    folder = tmp_path / "doc"
    out = cli("reaction-ood", "split", clean, "--config", config, "--seed", "5", "--out", folder)
    assert out.code == 0, out.stderr
    assert "document split" in out.stdout
    assert {p.name for p in folder.iterdir()} == {"manifest.json", "train.parquet", "valid.parquet",
                                                 "test.parquet", "test_ood.parquet"}
    verdict = tmp_path / "verify.json"
    out = cli("reaction-ood", "verify", folder, "--out", verdict)
    assert out.code == 0, out.stdout
    assert "FAIL" not in out.stdout and "no document in both [test_ood]" in out.stdout
    assert json.loads(verdict.read_text())["metrics"]["failed"] == 0
    # a tampered part makes verify fail with exit code 1
    train = pd.read_parquet(folder / "train.parquet")
    pd.concat([pd.read_parquet(folder / "test.parquet"), train.iloc[:1]]).to_parquet(folder / "test.parquet", index=False)
    out = cli("reaction-ood", "verify", folder)
    assert out.code == 1 and "FAIL no reaction in two of" in out.stdout


def test_clean_errors(cli, tmp_path):
    out = cli("reaction-ood", "clean", tmp_path / "nope.csv", "--out", tmp_path / "x.parquet")
    assert out.code == 2 and "no such" in out.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("smiles\nCCO\n")
    out = cli("reaction-ood", "clean", bad, "--out", tmp_path / "x.parquet")
    assert out.code == 2 and "no reaction column" in out.stderr
    good = tmp_path / "good.csv"
    good.write_text("rxn_smiles\nCCCCC(=O)O.CCO>>CCCCC(=O)OCC\n")
    out = cli("reaction-ood", "clean", good, "--out", tmp_path / "x.csv.gz")
    assert out.code == 2 and "must end in .parquet" in out.stderr
    out = cli("reaction-ood", "clean", good, "--out", tmp_path / "x.parquet", "--dedup", "latest")
    assert out.code == 2 and "unknown dedup rule" in out.stderr


def test_split_errors(cli, raw_csv, tmp_path):
    clean = tmp_path / "clean.parquet"
    assert cli("reaction-ood", "clean", raw_csv, "--out", clean).code == 0
    out = cli("reaction-ood", "split", clean, "--kind", "author", "--out", tmp_path / "a")
    assert out.code == 2 and "no authors" in out.stderr
    out = cli("reaction-ood", "split", clean, "--out", tmp_path / "a")
    assert out.code == 2 and "--kind" in out.stderr
    out = cli("reaction-ood", "split", clean, "--kind", "wrong", "--out", tmp_path / "a")
    assert out.code == 2 and "unknown split kind" in out.stderr
    out = cli("reaction-ood", "verify", tmp_path / "not-a-split")
    assert out.code == 2 and "no such split folder" in out.stderr
