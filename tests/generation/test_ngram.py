"""Character n-gram baseline: hand-counted contexts, reference samples, persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.suites.generation.baselines.ngram import CharNGram

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"


def _moses_train() -> list[str]:
    """The first 2,000 MOSES train SMILES (the file's first line is the SMILES header)."""
    lines = (DATA / "moses_train_2000.txt").read_text().split()
    assert lines[0] == "SMILES"
    return lines[1:]


def _counts(model: CharNGram, context: str) -> dict[str, int]:
    vocab = model.vocab
    code = 0
    for token in context.split():
        code = (code << model.bits) | (vocab.index(token) + 1)
    row = int(np.searchsorted(model.context_codes, np.uint64(code)))
    assert model.context_codes[row] == code, f"context {context!r} missing"
    lo, hi = model.offsets[row], model.offsets[row + 1]
    return {vocab[i]: int(c) for i, c in zip(model.next_ids[lo:hi], model.counts[lo:hi], strict=True)}


def test_hand_counted_contexts():
    # "CC" and "CO" between <bos> and <eos>, contexts of length 1 and 2.
    model = CharNGram.fit(["CC", "CO"], max_context_len=2)
    assert model.vocab == ["C", "O", "<bos>", "<eos>", "<pad>", "<unk>"]
    assert model.n_contexts == 6
    assert _counts(model, "<bos>") == {"C": 2}
    assert _counts(model, "C") == {"C": 1, "O": 1, "<eos>": 1}
    assert _counts(model, "O") == {"<eos>": 1}
    assert _counts(model, "<bos> C") == {"C": 1, "O": 1}
    assert _counts(model, "C C") == {"<eos>": 1}
    assert _counts(model, "C O") == {"<eos>": 1}
    row = int(np.searchsorted(model.context_codes, np.uint64(1)))  # context "C"
    probs = model.next_token_probs(row)
    np.testing.assert_allclose(probs, np.array([1.01, 1.01, 0, 1.01, 0, 0]) / 3.03)


def test_samples_equal_the_moses_reference_draw_for_draw():
    # Reference files: molsets 0.3.1 NGram(10).fit(moses_train_2000); np.random.seed(s);
    # generate(20) (and generate(20, context_len=3) for seed 7).
    train = _moses_train()
    model = CharNGram.fit(train)
    assert model.sample(20, seed=0) == (DATA / "reference_ngram_seed0.txt").read_text().splitlines()
    assert model.sample(20, seed=7, context_len=3) == (DATA / "reference_ngram_seed7_ctx3.txt").read_text().splitlines()


def test_chunked_training_equals_one_pass(tmp_path):
    train = _moses_train()[:500]
    whole = CharNGram.fit(train, chunk_size=10_000)
    chunked = CharNGram.fit(train, chunk_size=37)
    np.testing.assert_array_equal(whole.context_codes, chunked.context_codes)
    np.testing.assert_array_equal(whole.counts, chunked.counts)
    path = whole.save(tmp_path / "ngram.npz")
    loaded = CharNGram.load(path)
    np.testing.assert_array_equal(loaded.next_ids, whole.next_ids)
    assert loaded.sample(15, seed=3) == whole.sample(15, seed=3)
    assert loaded.sample(15, seed=3) != whole.sample(15, seed=4)
    assert loaded.info["n_train"] == 500


def test_max_len_truncates():
    model = CharNGram.fit(["C" * 40], max_context_len=3)
    assert model.sample(3, seed=0, max_len=10) == ["C" * 9] * 3


def test_bad_inputs(tmp_path):
    with pytest.raises(UserInputError):
        CharNGram.fit([])
    with pytest.raises(UserInputError, match="too long"):
        CharNGram.fit(["CO"], max_context_len=40)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a model")
    with pytest.raises(UserInputError, match="not a chemassay n-gram model"):
        CharNGram.load(junk)
    with pytest.raises(UserInputError, match="no such"):
        CharNGram.load(tmp_path / "missing.npz")
