"""Built-in encoders (model kinds): hand-checked n-gram counts, fingerprint invariance, specs,
the embedding cache, embeddings files."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from chemassay.contract.errors import UserInputError
from chemassay.models import load_model
from chemassay.suites.robustness.augment import AUGMENTATIONS, NotApplicable, augment
from chemassay.suites.robustness.data import load_amore
from chemassay.suites.robustness.encoders import (
    CharNgramEncoder,
    FingerprintEncoder,
    encode_cached,
    load_embeddings,
    nonfinite_rows,
)


def make_encoder(spec):
    return load_model(spec, "encoder")


def test_char_ngram_counts_hand_checked():
    encoder = CharNgramEncoder(n_min=1, n_max=3, dim=2**20)
    matrix = encoder.encode(["CCO"])
    # 1-grams C, C, O; 2-grams CC, CO; 3-gram CCO: six n-grams, "C" twice.
    assert matrix.sum() == 6
    assert sorted(matrix.data.tolist()) == [1, 1, 1, 1, 2]
    upper, lower = encoder.encode(["C"]), encoder.encode(["c"])
    assert (upper != lower).nnz > 0  # case matters: aromatic c is not aliphatic C


def test_fingerprint_is_invariant_to_every_augmentation():
    smiles = load_amore("isomers").smiles[:150]
    encoder = FingerprintEncoder()
    base = encoder.encode(smiles)
    for kind in AUGMENTATIONS:
        augmented = []
        for text in smiles:
            try:
                augmented.append(augment(text, kind, 3))
            except NotApplicable:
                augmented.append(text)
        assert augmented != smiles
        assert (encoder.encode(augmented) != base).nnz == 0, kind


def test_fingerprint_failures_are_recorded():
    encoder = FingerprintEncoder()
    matrix = encoder.encode(["CCO", "C1CC", "c1ccccc1"])
    assert list(encoder.failures) == [1]
    assert matrix[1].nnz == 0 and matrix[0].nnz > 0


def test_encoder_specs():
    assert make_encoder("fingerprint:radius=3,bits=1024,chirality=0").describe() == {
        "encoder": "fingerprint", "radius": 3, "bits": 1024, "chirality": False}
    assert make_encoder("char-ngram:n=2-4,dim=512").describe()["ngram_range"] == [2, 4]
    for bad in ("morgan", "fingerprint:radius", "fingerprint:bits=100", "char-ngram:n=3-1", "fingerprint:foo=1", "hf:"):
        with pytest.raises(UserInputError):
            make_encoder(bad)
    with pytest.raises(UserInputError, match="no such checkpoint folder"):
        make_encoder("hf:/nonexistent/checkpoint")


def test_embedding_cache_round_trip(isolated_home):
    smiles = ["CCO", "c1ccccc1", "CC(=O)O"]
    encoder = make_encoder("fingerprint")
    first = encode_cached(encoder, smiles)
    second = encode_cached(encoder, smiles)
    assert not first.from_cache and second.from_cache
    assert (first.layers[0] != second.layers[0]).nnz == 0
    assert sparse.issparse(second.layers[0])
    assert list((isolated_home / "cache" / "robustness" / "embeddings").rglob("*.npz"))
    other = encode_cached(encoder, smiles[:2])
    assert not other.from_cache


def test_load_embeddings(tmp_path):
    np.save(tmp_path / "two.npy", np.ones((4, 3)))
    np.save(tmp_path / "three.npy", np.ones((2, 4, 3)))
    np.save(tmp_path / "bad.npy", np.array([1.0, np.nan]).reshape(1, 2))
    assert len(load_embeddings(tmp_path / "two.npy")) == 1
    assert len(load_embeddings(tmp_path / "three.npy")) == 2
    # NaN rows are read, then found and left out (counted) by the retrieval.
    assert nonfinite_rows(load_embeddings(tmp_path / "bad.npy")).tolist() == [0]
    (tmp_path / "text.npy").write_text("not numpy")
    with pytest.raises(UserInputError):
        load_embeddings(tmp_path / "text.npy")
