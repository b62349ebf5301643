"""Issue 18 in the robustness suite: each bad input or fault gets the contract (exit 2 and one
line, a warning where numbers would mislead, a counted skip, no work before an unwritable
output), damaged caches are rebuilt with the right numbers, and the console and plots show
what the result holds (every layer, both directions, a readable training summary)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import chemassay.robustness as robustness
import numpy as np
import pytest

ENCODER_WITH_LAYERS = '''
import numpy as np

class ThreeLayers:
    name = "three-layers"

    def encode(self, smiles, layers="last"):
        base = np.array([[len(s), s.count("C"), s.count("O") + 0.5 * s.count("=")] for s in smiles], dtype=float)
        every = [base, base * [1.0, 0.0, 1.0], base + [[0.0, 1.0, 0.0]]]
        return every if layers == "all" else every[-1]
'''


@pytest.fixture
def molecules(tmp_path) -> Path:
    path = tmp_path / "molecules.tsv"
    path.write_text("CID\tSMILES\n1\tCCO\n2\tc1ccccc1O\n3\tC1CC2CCCC1CC2\n4\tCC(=O)Nc1ccc(O)cc1\n5\tCCCC\n")
    return path


def _one_line_error(outcome) -> str:
    assert outcome.code == 2, (outcome.stdout, outcome.stderr)
    lines = [line for line in outcome.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in outcome.stderr, outcome.stderr
    return lines[0]


def test_empty_embeddings_exit_2_with_one_line(cli, tmp_path):
    np.save(tmp_path / "empty.npy", np.zeros((0, 4)))
    assert "no embeddings (0 rows)" in _one_line_error(cli("robustness", "evaluate", tmp_path / "empty.npy",
                                                           tmp_path / "empty.npy"))


def test_nan_embedding_rows_are_a_counted_skip(cli, tmp_path):
    rng = np.random.default_rng(0)
    originals = rng.normal(size=(6, 4))
    augmented = originals + 0.01
    augmented[2, 1] = np.nan
    np.save(tmp_path / "o.npy", originals)
    np.save(tmp_path / "a.npy", augmented)
    out = tmp_path / "r.json"
    outcome = cli("robustness", "evaluate", tmp_path / "o.npy", tmp_path / "a.npy", "--out", out)
    assert outcome.code == 0, outcome.stderr
    data = json.loads(out.read_text())
    assert data["n"] == 5 and data["metrics"]["o2a_acc@1"] == 1.0
    assert [s["index"] for s in data["skipped"]] == [2] and "NaN" in data["skipped"][0]["reason"]
    assert "warning: 1 of 6 rows have NaN" in outcome.stderr
    all_bad = np.full((3, 2), np.nan)
    np.save(tmp_path / "bad.npy", all_bad)
    assert "no pair left" in _one_line_error(cli("robustness", "evaluate", tmp_path / "bad.npy", tmp_path / "bad.npy"))


def test_misaligned_rows_warn_on_the_console_and_in_the_result(cli, molecules, tmp_path, isolated_home):
    shifted = tmp_path / "shifted.csv"
    # The right molecules, one row off: every pair is another molecule.
    shifted.write_text("SMILES\nCCCC\nCCO\nc1ccccc1O\nC1CC2CCCC1CC2\nCC(=O)Nc1ccc(O)cc1\n")
    out = tmp_path / "r.json"
    outcome = cli("robustness", "evaluate", "--model", "fingerprint", "--dataset", molecules, "--augmented", shifted,
                  "--out", out)
    assert outcome.code == 0, outcome.stderr
    data = json.loads(out.read_text())
    assert data["metrics"]["o2a_acc@1"] == 0.0
    assert "warning: 5 of 5 pairs are not the same molecule" in outcome.stderr
    assert data["details"]["warnings"] and "aligned" in data["details"]["warnings"][0]


def test_evaluate_includes_the_randomized_rewrite_by_default(cli, molecules, tmp_path, isolated_home):
    out = tmp_path / "r.json"
    outcome = cli("--quiet", "robustness", "evaluate", "--dataset", molecules, "--model", "char-ngram", "--out", out)
    assert outcome.code == 0, outcome.stderr
    data = json.loads(out.read_text())
    assert [row["augmentation"] for row in data["details"]["table"]] == [
        "canonical", "explicit_h", "kekulize", "cycle_renumber", "randomized"]
    assert data["config"]["augmentations"][-1] == "randomized"


def test_layers_all_shows_every_layer_on_the_console(cli, molecules, tmp_path, isolated_home):
    encoder = tmp_path / "layered.py"
    encoder.write_text(ENCODER_WITH_LAYERS)
    out = tmp_path / "r.json"
    outcome = cli("robustness", "evaluate", "--model", f"python:{encoder}:ThreeLayers", "--dataset", molecules,
                  "--augmentations", "kekulize,explicit_h", "--layers", "all", "--out", out)
    assert outcome.code == 0, outcome.stderr
    assert "| augmentation | L0 | L1 | L2 |" in outcome.stdout
    assert any(line.startswith("| explicit_h |") and line.count("/") == 3 for line in outcome.stdout.splitlines())
    data = json.loads(out.read_text())
    assert "explicit_h/layer2/a2o_acc@1" in data["metrics"]
    pair = cli("robustness", "evaluate", "--model", f"python:{encoder}:ThreeLayers", "--dataset", molecules,
               "--augmented", molecules, "--layers", "all")
    assert pair.code == 0 and "| pair | 100.0/100.0 |" in pair.stdout


def test_plots_show_both_directions(tmp_path):
    from chemassay.suites.robustness.plots import plot_accuracy, plot_layers

    per_layer = {"kekulize": [{"o2a_acc@1": 0.5, "a2o_acc@1": 0.4}, {"o2a_acc@1": 0.6, "a2o_acc@1": 0.7}]}
    labels = plot_layers(per_layer, tmp_path / "layers.png")
    assert labels == ["kekulize original→augmented", "kekulize augmented→original"]
    rows = [{"augmentation": "kekulize", "o2a_acc@1": 0.5, "a2o_acc@1": 0.25}]
    titles = plot_accuracy({"isomers": {"fingerprint": rows, "char-ngram": rows}}, tmp_path / "bars.png")
    assert any("original→augmented" in t for t in titles) and any("augmented→original" in t for t in titles)
    assert (tmp_path / "bars.png").read_bytes()[:4] == b"\x89PNG"


def test_unwritable_out_fails_before_any_work(cli, molecules, tmp_path, monkeypatch):
    from chemassay.suites.robustness import amore, api, downstream

    def no_work(*args, **kwargs):
        raise AssertionError("work started before the output was checked")

    monkeypatch.setattr(amore, "run_amore", no_work)
    monkeypatch.setattr(api, "augment_many", no_work)
    monkeypatch.setattr(downstream, "evaluate_downstream", no_work)
    monkeypatch.setattr(api, "train", no_work)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    unwritable = blocker / "out.json"
    for args in (("evaluate", "--model", "fingerprint", "--dataset", molecules, "--out", unwritable),
                 ("evaluate", "--model", "fingerprint", "--dataset", molecules, "--table", unwritable),
                 ("evaluate", "--model", "fingerprint", "--dataset", molecules, "--plot", unwritable),
                 ("augment", molecules, "--kind", "kekulize", "--out", unwritable),
                 ("downstream", "--out", unwritable),
                 ("train", "--out", tmp_path / "ckpt", "--result", unwritable)):
        assert "cannot write" in _one_line_error(cli("robustness", *args)), args


def test_unreadable_molecule_files_give_one_line(cli, tmp_path):
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"SMILES\nCC\x00O\n")
    assert "binary" in _one_line_error(cli("robustness", "evaluate", "--model", "fingerprint", "--dataset", binary))
    truncated = tmp_path / "molecules.csv.gz"
    packed = gzip.compress(b"SMILES\n" + "".join(f"C{'C' * (i % 7)}O{i}\n" for i in range(2000)).encode())
    truncated.write_bytes(packed[: len(packed) // 2])
    assert "truncated" in _one_line_error(cli("robustness", "augment", truncated, "--kind", "canonical",
                                              "--out", tmp_path / "o.csv"))
    latin = tmp_path / "latin.csv"
    latin.write_bytes("SMILES,name\nCCO,éthanol\n".encode("latin-1"))
    assert "UTF-8" in _one_line_error(cli("robustness", "evaluate", "--model", "char-ngram", "--dataset", latin))


def test_empty_smiles_cell_is_kept_and_skipped_with_its_line(tmp_path, isolated_home):
    originals = tmp_path / "o.csv"
    originals.write_text("id,SMILES\na,CCO\nb,\nc,c1ccccc1\n")
    augmented = tmp_path / "a.csv"
    augmented.write_text("id,SMILES\na,OCC\nb,CC\nc,C1=CC=CC=C1\n")
    result = robustness.evaluate(model="fingerprint", reference=originals, augmented=augmented, bootstrap=0)
    assert result.n == 2 and result.skipped[0].line == 3 and "empty" in result.skipped[0].reason


def _entries(home: Path, namespace: str, suffix: str) -> list[Path]:
    return sorted((home / "cache" / "robustness" / namespace).glob(f"*{suffix}"))


def test_damaged_caches_are_rebuilt_with_the_right_numbers(isolated_home, capsys, logged):
    def acc() -> float:
        result = robustness.evaluate(model="char-ngram", reference="isomers", augmentations=["canonical"], bootstrap=0)
        return result.metrics["canonical/o2a_acc@1"]

    assert acc() == 0.21241830065359477  # issue 18: a valid but wrong cache gave 0.105
    embeddings = _entries(isolated_home, "embeddings", ".npz")
    augmented = _entries(isolated_home, "augmented", ".csv")
    assert len(embeddings) == 2 and len(augmented) == 1
    capsys.readouterr()
    # A truncated embedding entry (BadZipFile on every later run before).
    embeddings[0].write_bytes(embeddings[0].read_bytes()[:100])
    assert acc() == 0.21241830065359477
    assert "not usable" in logged.read()
    # Valid but wrong: one embedding entry replaced by the other (the originals' vectors).
    originals, rewritten = embeddings
    rewritten.write_bytes(originals.read_bytes())
    assert acc() == 0.21241830065359477
    assert "not usable" in logged.read()
    # Valid but wrong augmented set: the right originals, but unchanged SMILES.
    lines = augmented[0].read_text().splitlines()
    header, rows = lines[0], [line.split(",") for line in lines[1:]]
    wrong = [header] + [",".join([r[0], r[1], r[3], r[3], r[4], r[5]]) for r in rows]
    augmented[0].write_text("\n".join(wrong) + "\n")
    assert acc() == 0.21241830065359477
    assert "not usable" in logged.read()


def test_train_prints_a_readable_summary(cli, tmp_path, isolated_home):
    pytest.importorskip("transformers")
    data = Path(__file__).resolve().parents[1] / "data" / "robustness" / "moses_train_200.csv"
    outcome = cli("robustness", "train", "--data", data, "--out", tmp_path / "lm", "--n-train", "40",
                  "--n-valid", "8", "--steps", "2", "--layers", "1", "--hidden", "16", "--heads", "2",
                  "--batch-size", "8", "--result", tmp_path / "lm.json")
    assert outcome.code == 0, outcome.stderr
    assert "{'" not in outcome.stdout and "validation (8 SMILES): masked-LM loss" in outcome.stdout
    assert "chemassay robustness evaluate --model hf:" in outcome.stdout
    result = json.loads((tmp_path / "lm.json").read_text())
    assert result["task"] == "train" and result["model"]["kind"] == "hf" and len(result["model"]["checksum"]) == 64
