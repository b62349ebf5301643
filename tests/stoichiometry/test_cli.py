"""The stoichiometry commands end to end, through ``chemassay``'s entry point."""

from __future__ import annotations

import json
import zipfile

from chemassay.data import get_spec
from chemassay.data.registry import UrlSource
from chemassay.suites.stoichiometry.data import resolve_source

REACTIONS = """# a few reactions in every accepted form
{1}O=C=O.{4}[H][H]>>{1}C.{2}O
[CH3:1][C:2](=[O:3])[Cl:4].[CH3:5][OH:6]>>CC(=O)OC 2;;2-4-1.0;2-6-1.0
CC(=O)O.OCC>[H+]>CCOC(C)=O
C1CC>>CC
CC.[Pd]>>CC[Pd]
"""


def test_balance_classifies_and_reports_malformed_lines(cli, tmp_path):
    path = tmp_path / "reactions.txt"
    path.write_text(REACTIONS)
    out, details, bal = tmp_path / "balance.json", tmp_path / "details.tsv", tmp_path / "bal"
    result = cli("stoichiometry", "balance", path, "--out", out, "--details", details, "--balanced-out", bal)
    assert result.code == 0, result.stderr
    data = json.loads(out.read_text())
    assert data["suite"] == "stoichiometry" and data["task"] == "balance"
    metrics = data["metrics"]
    assert (metrics["reactions"], metrics["balanced"], metrics["rebalanced"], metrics["invalid"]) == (5, 1, 2, 1)
    assert metrics["unexplained"] == 1
    assert [s["line"] for s in data["skipped"]] == [5] and "SMILES" in data["skipped"][0]["reason"]
    assert data["details"]["element_imbalance"]["H"] >= 2 and data["details"]["paper_table_1_uspto_mit"]["train"]["usable"] == 44.26
    rows = details.read_text().splitlines()
    assert rows[0].startswith("split\tline\tstatus") and len(rows) == 6
    assert (bal / "all.txt").read_text().splitlines()[2] == "CC(=O)O.CCO>[H+]>CCOC(C)=O.O"


def test_build_verify_predict_score(cli, tmp_path):
    data = tmp_path / "t2"
    result = cli("stoichiometry", "build", "uspto-15k", "--encoding", "smiles", "--task", "t2", "--aug", "1",
                 "--seed", "1", "--limit", "40", "--out", data)
    assert result.code == 0, result.stderr
    assert (data / "src-test_cross.txt").is_file() and (data / "manifest.json").is_file()
    verified = tmp_path / "verify.json"
    assert cli("stoichiometry", "verify", data, "--out", verified).code == 0
    assert json.loads(verified.read_text())["metrics"]["problems"] == 0
    prediction = tmp_path / "pred.txt"
    result = cli("stoichiometry", "predict", "--model", f"algebraic:{data}",
                 "--src", data / "src-test_cross.txt", "--out", prediction, "--report", tmp_path / "predict.json")
    assert result.code == 0, result.stderr
    assert json.loads((tmp_path / "predict.json").read_text())["config"]["train_split"] == "train_cross"
    scored = tmp_path / "score.json"
    result = cli("stoichiometry", "evaluate", prediction, data / "tgt-test_cross.txt", "--src",
                 data / "src-test_cross.txt", "--out", scored)
    assert result.code == 0, result.stderr
    score = json.loads(scored.read_text())
    assert set(score["metrics"]) == {"EM", "JAC", "F1", "mol_JAC", "mol_F1", "ACC", "ALO", "VAL",
                                     "BAL", "DEF", "EXC", "DE"}
    assert score["n"] == len(score["details"]["rows"]) > 0 and score["metrics"]["BAL"] == 1.0
    assert score["inputs"][0]["sha256"] and score["versions"]["rdkit"]
    # tampering is caught, with exit code 1
    target = data / "tgt-valid.txt"
    target.write_text(target.read_text().replace("{", "{1", 1))
    assert cli("stoichiometry", "verify", data).code == 1


def test_user_errors_are_one_line_exit_2(cli, tmp_path):
    single = tmp_path / "one.txt"
    single.write_text("{1}C>>{1}C\n")
    result = cli("stoichiometry", "build", single, "--out", tmp_path / "x")
    assert result.code == 2 and "no 'train' split" in result.stderr and "Traceback" not in result.stderr
    assert cli("stoichiometry", "balance", tmp_path / "missing.txt").code == 2
    (tmp_path / "p.txt").write_text("{1}C\n")
    (tmp_path / "t.txt").write_text("{1}C\n{1}C\n")
    result = cli("stoichiometry", "evaluate", tmp_path / "p.txt", tmp_path / "t.txt")
    assert result.code == 2 and "line-aligned" in result.stderr
    result = cli("stoichiometry", "predict", "--model", "algebraic", "--src", tmp_path / "p.txt",
                 "--out", tmp_path / "o.txt")
    assert result.code == 2 and "algebraic:TRAIN_DIR" in result.stderr
    result = cli("stoichiometry", "predict", "--src", tmp_path / "p.txt", "--out", tmp_path / "o.txt")
    assert result.code == 2 and "predict needs --model SPEC" in result.stderr
    assert cli("stoichiometry", "build", "uspto-15k", "--task", "t9", "--out", tmp_path / "y").code == 2


def test_library_command_lists_byproducts(cli):
    result = cli("stoichiometry", "library")
    assert result.code == 0 and "water" in result.stdout and "reactants" in result.stdout


def test_build_uspto_t(cli, tmp_path):
    result = cli("stoichiometry", "build-uspto-t", "uspto-15k", "--kind", "t1", "--limit", "10", "--out", tmp_path)
    assert result.code == 0, result.stderr
    first = (tmp_path / "src-train.txt").read_text().splitlines()[0].split(".")
    assert all(first.count(m) % 2 == 0 for m in first)
    assert cli("stoichiometry", "verify", tmp_path).code == 0


def test_uspto_mit_is_registered_by_url_without_a_checksum():
    spec = get_spec("uspto-mit")
    assert [f.name for f in spec.files] == ["data.zip"] and spec.files[0].sha256 == ""
    urls = [s.base_url for s in spec.sources if isinstance(s, UrlSource)]
    assert urls == ["https://github.com/wengong-jin/nips17-rexgen/raw/master/USPTO/"]
    assert "unverified" in spec.description


def test_zip_sources_are_read_in_place(tmp_path):
    archive = tmp_path / "data.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for split in ("train", "valid", "test"):
            handle.writestr(f"data/{split}.txt", "[CH3:1][OH:2].[Na+:3]>>[CH3:1][OH:2] 1-2\n")
    source = resolve_source(archive)
    assert [f.split for f in source.files] == ["train", "valid", "test"]
    assert list(source.split("valid").lines()) == [(1, "[CH3:1][OH:2].[Na+:3]>>[CH3:1][OH:2] 1-2")]
