"""Empty and all-invalid input, SMILES file layouts, and CLI errors."""

import gzip
import json
import math
from pathlib import Path

import pytest

from chemassay.contract.errors import UserInputError
from chemassay.data.readers import read_smiles_file
from chemassay.suites.generation.metrics import evaluate_samples as evaluate
from chemassay.suites.generation.reference import load_stats
from support.logs import expect_message

pytest.importorskip("fcd_torch", reason="FCD needs the torch extra")

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"


@pytest.fixture(scope="module")
def references():
    return {
        "test": load_stats(DATA / "moses_test_300.stats.npz"),
        "scaffold_test": load_stats(DATA / "moses_test_scaffolds_300.stats.npz"),
    }


def test_empty_input_gives_nan_metrics_not_a_crash(references):
    with expect_message("Can't compute unique@"):
        evaluation = evaluate([], train=["CCO"], show_progress=False, **references)
    assert evaluation.n_input == 0 and evaluation.n_valid == 0
    assert all(math.isnan(value) for value in evaluation.metrics.values())


def test_all_invalid_input_is_counted(references):
    with expect_message("Can't compute unique@"):
        evaluation = evaluate(["xyz", "", "C1CC", "C(C)(C)(C)(C)C"], train=["CCO"], show_progress=False, **references)
    assert evaluation.metrics["valid"] == 0.0
    assert [bad.index for bad in evaluation.invalid] == [0, 1, 2, 3]
    assert evaluation.invalid[1].reason == "empty string"
    assert "valence" in evaluation.invalid[3].reason.lower()
    others = {k: v for k, v in evaluation.metrics.items() if k != "valid"}
    assert all(math.isnan(value) for value in others.values())
    assert any("FCD needs at least 2" in w for w in evaluation.warnings)


def test_one_valid_molecule(references):
    with expect_message("Can't compute unique@"):
        evaluation = evaluate(["CCO", "bad"], scaffold_test=None, train=None, test=references["test"], show_progress=False)
    assert evaluation.metrics["valid"] == 0.5
    assert evaluation.metrics["unique@1000"] == 1.0
    assert math.isnan(evaluation.metrics["FCD/Test"])
    assert evaluation.metrics["IntDiv"] == 0.0  # a single molecule: only its self-pair
    assert "SNN/TestSF" not in evaluation.metrics and "Novelty" not in evaluation.metrics


def test_text_layout_with_header_comments_blanks_and_names(tmp_path):
    path = tmp_path / "gen.txt"
    path.write_text("SMILES\n# a comment\n\nCCO ethanol\n  c1ccccc1  \n\nnot-smiles\n")
    table = read_smiles_file(path)
    assert table.smiles == ["CCO", "c1ccccc1", "not-smiles"]
    assert table.lines == [4, 5, 7]


def test_csv_layout_gzip_and_missing_column(tmp_path):
    path = tmp_path / "gen.csv.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("id,smiles,score\n1,CCO,0.5\n2,,0.1\n3,c1ccccc1,0.2\n")
    table = read_smiles_file(path)
    assert table.smiles == ["CCO", "", "c1ccccc1"] and table.lines == [2, 3, 4]
    bad = tmp_path / "bad.csv"
    bad.write_text("id,molecule\n1,CCO\n")
    with pytest.raises(UserInputError, match="no SMILES column"):
        read_smiles_file(bad)


def test_cli_errors_exit_2(cli, tmp_path):
    missing = cli("generation", "evaluate", tmp_path / "nope.txt")
    assert missing.code == 2 and "no such SMILES file" in missing.stderr
    empty = tmp_path / "empty.txt"
    empty.write_text("SMILES\n\n# nothing\n")
    outcome = cli("generation", "evaluate", empty, "--test", DATA / "moses_test_300.stats.npz")
    assert outcome.code == 2 and "no SMILES" in outcome.stderr
    bad_ref = cli("generation", "evaluate", DATA / "moses_gen_310.txt", "--test", tmp_path / "none.txt")
    assert bad_ref.code == 2 and "no such test file" in bad_ref.stderr
    bad_device = cli("generation", "evaluate", DATA / "moses_gen_310.txt", "--device", "tpu")
    assert bad_device.code == 2


def test_cli_custom_reference_smiles_file_is_cached(cli, tmp_path, isolated_home):
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(read_smiles_file(DATA / "moses_test_300.txt").smiles[:12]) + "\n")
    gen = tmp_path / "gen.txt"
    gen.write_text("CCO\nc1ccccc1C(=O)O\nCC(C)Cc1ccc(C(C)C(=O)O)cc1\nnot_a_smiles\n")
    out = tmp_path / "r.json"
    args = ("generation", "evaluate", gen, "--out", out, "--test", ref, "--scaffold-test", "none",
            "--train", "none", "--no-plot")
    first = cli(*args)
    assert first.code == 0, first.stderr
    cached = list((isolated_home / "cache" / "generation" / "reference-stats").glob("*.npz"))
    assert len(cached) == 1
    result = json.loads(out.read_text())
    assert result["metrics"]["valid"] == 0.75 and "FCD/TestSF" not in result["metrics"]
    assert result["details"]["references"]["Test"]["source"] == "computed"
    assert not (tmp_path / "r.properties.png").exists()
    again = cli(*args)
    assert again.code == 0 and json.loads(out.read_text())["metrics"] == result["metrics"]
