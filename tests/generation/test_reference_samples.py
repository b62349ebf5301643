"""The shipped reference samples: every scores.json row points at its 30,000 draws, and its
stored validity and uniqueness are those of the shipped strings."""

from __future__ import annotations

import gzip

import pytest

from chemassay.contract.errors import UserInputError
from chemassay.data.readers import read_smiles_file
from chemassay.suites.generation.baselines.reference_samples import (
    PAPER_TABLES,
    paper_value,
    reference_rows,
    sample_path,
)
from chemassay.suites.generation.descriptors import canonicalize


def test_every_row_names_its_samples_and_the_train_row_is_there():
    rows = reference_rows()
    shipped = {row["model"] for row in rows}
    assert {"charrnn", "vae", "aae", "latentgan", "hmm", "combinatorial", "train"} <= shipped
    for model in shipped - {"train"}:  # the paper's three seeds for every baseline
        assert sorted(row["seed"] for row in rows if row["model"] == model) == [0, 1, 2], model
    for row in rows:
        draws = gzip.open(sample_path(row["model"], row["seed"]), "rt").read().split("\n")[:-1]
        assert len(draws) == 30000
        # what the one SMILES reader takes from a text list: blank lines and '#' lines are skipped
        assert row["n_samples"] == len(read_smiles_file(sample_path(row["model"], row["seed"])))
        assert row["n_samples"] == sum(1 for d in draws if d.strip() and not d.startswith("#"))
        assert row["label"] and row["metrics"]["valid"] is not None and row["versions"]["chemassay"]


@pytest.mark.parametrize("model", ["charrnn", "vae", "aae", "latentgan", "hmm", "combinatorial", "train"])
def test_stored_validity_and_uniqueness_are_those_of_the_shipped_strings(model):
    row = next(r for r in reference_rows() if r["model"] == model and r["seed"] == 0)
    draws = read_smiles_file(sample_path(model, 0)).smiles
    canonical = [canonicalize(d) for d in draws]
    valid = [c for c in canonical if c is not None]
    assert row["metrics"]["valid"] == pytest.approx(len(valid) / len(draws))
    # MOSES divides by the valid molecules when fewer than k are valid (the AAE and HMM rows)
    assert row["metrics"]["unique@1000"] == pytest.approx(len(set(valid[:1000])) / min(1000, len(valid)))


def test_paper_tables_and_a_missing_model_are_clear():
    assert paper_value("charrnn", "FCD/Test") == (0.073, 0.025)
    assert paper_value("Train", "valid") == (1.0, None)
    assert set(PAPER_TABLES) >= {"HMM", "NGram", "Combinatorial", "CharRNN", "VAE", "AAE", "JTN-VAE", "LatentGAN"}
    with pytest.raises(UserInputError, match="no reference samples for jtnvae seed 0; shipped: .*charrnn_s0"):
        sample_path("jtnvae", 0)


def test_the_combinatorial_rows_reproduce_the_paper_within_its_spread():
    rows = [r for r in reference_rows() if r["model"] == "combinatorial"]
    assert len(rows) == 3
    for metric in ("FCD/Test", "SNN/Test", "Frag/Test", "Filters", "Novelty"):
        values = [r["metrics"][metric] for r in rows]
        mean = sum(values) / 3
        paper_mean, paper_std = paper_value("combinatorial", metric)
        assert abs(mean - paper_mean) <= max(paper_std, 1e-3), metric


def test_the_shipped_runs_stand_beside_the_published_rows(cli):
    """``reference list --runs``: one unpublished record per shipped model, each metric the mean ±
    standard deviation of its seeds' scores; without ``--runs`` only the papers' rows."""
    import json
    import statistics

    from chemassay.report.published import reference_results

    assert all(record.published for record in reference_results("generation"))
    runs = [r for r in reference_results("generation", runs=True) if not r.published]
    assert {r.model for r in runs} >= {"CharRNN", "VAE", "AAE", "LatentGAN", "HMM", "Combinatorial", "Train"}
    vae_seeds = [r["metrics"]["FCD/Test"] for r in reference_rows() if r["model"] == "vae"]
    vae = next(r for r in runs if r.model == "VAE")
    assert vae.metrics["FCD/Test"].value == pytest.approx(statistics.fmean(vae_seeds))
    assert vae.metrics["FCD/Test"].std == pytest.approx(statistics.stdev(vae_seeds))
    assert "seeds 0, 1, 2" in vae.label and "reduced CPU config" in vae.label

    outcome = cli("reference", "list", "--suite", "generation", "--runs", "--model", "HMM", "--json")
    assert outcome.code == 0
    records = json.loads(outcome.stdout)
    assert [r["published"] for r in records].count(False) == 1
    ours = next(r for r in records if not r["published"])
    assert ours["table"] == "chemassay reference samples" and 0 < ours["metrics"]["valid"]["value"] < 0.2
