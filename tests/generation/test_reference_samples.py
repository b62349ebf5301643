"""The shipped reference samples: every scores.json row points at its 30,000 draws, and its
stored validity and uniqueness are those of the shipped strings."""

from __future__ import annotations

import gzip

import pytest

from chemassay.data.readers import read_smiles_file
from chemassay.errors import UserInputError
from chemassay.suites.generation.baselines.reference_samples import (
    PAPER_TABLES,
    paper_value,
    reference_rows,
    sample_path,
)
from chemassay.suites.generation.descriptors import canonicalize


def test_every_row_names_its_samples_and_the_train_row_is_there():
    rows = reference_rows()
    assert {"charrnn", "combinatorial", "train"} <= {row["model"] for row in rows}
    assert sorted(row["seed"] for row in rows if row["model"] == "charrnn") == [0, 1, 2]
    for row in rows:
        draws = gzip.open(sample_path(row["model"], row["seed"]), "rt").read().split("\n")[:-1]
        assert len(draws) == 30000
        # what the one SMILES reader takes from a text list: blank lines and '#' lines are skipped
        assert row["n_samples"] == len(read_smiles_file(sample_path(row["model"], row["seed"])))
        assert 29900 < row["n_samples"] <= 30000
        assert row["label"] and row["metrics"]["valid"] is not None and row["versions"]["chemassay"]


@pytest.mark.parametrize("model", ["charrnn", "combinatorial", "train"])
def test_stored_validity_and_uniqueness_are_those_of_the_shipped_strings(model):
    row = next(r for r in reference_rows() if r["model"] == model and r["seed"] == 0)
    draws = read_smiles_file(sample_path(model, 0)).smiles
    canonical = [canonicalize(d) for d in draws]
    valid = [c for c in canonical if c is not None]
    assert row["metrics"]["valid"] == pytest.approx(len(valid) / len(draws))
    assert row["metrics"]["unique@1000"] == pytest.approx(len(set(valid[:1000])) / 1000)


def test_paper_tables_and_a_missing_model_are_clear():
    assert paper_value("charrnn", "FCD/Test") == (0.073, 0.025)
    assert paper_value("Train", "valid") == (1.0, None)
    assert set(PAPER_TABLES) >= {"HMM", "NGram", "Combinatorial", "CharRNN", "VAE", "AAE", "JTN-VAE", "LatentGAN"}
    with pytest.raises(UserInputError, match="no reference samples for vae seed 0; shipped: .*charrnn_s0"):
        sample_path("vae", 0)


def test_the_combinatorial_rows_reproduce_the_paper_within_its_spread():
    rows = [r for r in reference_rows() if r["model"] == "combinatorial"]
    assert len(rows) == 3
    for metric in ("FCD/Test", "SNN/Test", "Frag/Test", "Filters", "Novelty"):
        values = [r["metrics"][metric] for r in rows]
        mean = sum(values) / 3
        paper_mean, paper_std = paper_value("combinatorial", metric)
        assert abs(mean - paper_mean) <= max(paper_std, 1e-3), metric
