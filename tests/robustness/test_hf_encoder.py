"""HFEncoder round trip through tiny randomly initialised checkpoints saved to a temp dir:
encoder-only (RoBERTa), encoder-decoder (T5) and decoder-only (GPT-2), built offline."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from chemassay.contract.errors import UserInputError  # noqa: E402
from chemassay.models.hf_encoder import HFEncoder, checkpoint_kind  # noqa: E402
from chemassay.suites.robustness.lm import build_smiles_tokenizer  # noqa: E402

SMILES = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "[CH3][OH]", "C"]


def _save(model, tokenizer, folder):
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_checkpoints(tmp_path_factory):
    torch.manual_seed(0)
    tokenizer = build_smiles_tokenizer(model_max_length=64)
    root = tmp_path_factory.mktemp("hf")
    roberta = transformers.RobertaForMaskedLM(transformers.RobertaConfig(
        vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=66, pad_token_id=tokenizer.pad_token_id, type_vocab_size=1,
    ))
    t5 = transformers.T5ForConditionalGeneration(transformers.T5Config(
        vocab_size=len(tokenizer), d_model=16, d_kv=8, d_ff=32, num_layers=2, num_decoder_layers=3, num_heads=2,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    ))
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=len(tokenizer), n_embd=16, n_layer=2, n_head=2, n_positions=64,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
    ))
    return {
        "roberta": _save(roberta, tokenizer, root / "roberta"),
        "t5": _save(t5, tokenizer, root / "t5"),
        "gpt2": _save(gpt2, tokenizer, root / "gpt2"),
    }


def _manual_mean(folder, smiles: str, part: str = "model") -> np.ndarray:
    """Last-layer mean over the real tokens of one string, computed directly with transformers."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.AutoModel.from_pretrained(folder).eval()
    encoded = tokenizer(smiles, return_tensors="pt", return_special_tokens_mask=True)
    with torch.no_grad():
        if part == "encoder":
            states = model.get_encoder()(input_ids=encoded["input_ids"], output_hidden_states=True).hidden_states
        else:
            states = model(input_ids=encoded["input_ids"], output_hidden_states=True).hidden_states
    real = encoded["special_tokens_mask"][0] == 0
    return states[-1][0][real].mean(dim=0).numpy()


@pytest.mark.parametrize("name,kind,n_layers", [("roberta", "encoder-only", 3), ("t5", "encoder-decoder", 3),
                                                 ("gpt2", "decoder-only", 3)])
def test_round_trip_shapes_layers_and_kind(tiny_checkpoints, name, kind, n_layers):
    encoder = HFEncoder(tiny_checkpoints[name], batch_size=2)
    last = encoder.encode(SMILES)
    assert last.shape == (len(SMILES), 16) and last.dtype == np.float32
    assert encoder.kind == kind
    every = encoder.encode(SMILES, layers="all")
    assert len(every) == n_layers == encoder.n_layers()
    assert np.allclose(every[-1], last, atol=1e-6)
    assert not np.allclose(every[0], every[-1])


def test_pooling_excludes_padding_and_special_tokens(tiny_checkpoints):
    folder = tiny_checkpoints["roberta"]
    batched = HFEncoder(folder, batch_size=len(SMILES)).encode(SMILES)
    single = HFEncoder(folder, batch_size=1).encode(SMILES)
    assert np.allclose(batched, single, atol=1e-5)  # padding does not leak into the mean
    for row, smiles in enumerate(SMILES):
        assert np.allclose(single[row], _manual_mean(folder, smiles), atol=1e-5)
    with_special = HFEncoder(folder, pooling="mean-all").encode(SMILES)
    assert not np.allclose(with_special, single, atol=1e-4)


def test_encoder_decoder_parts_and_decoder_only(tiny_checkpoints):
    t5 = tiny_checkpoints["t5"]
    encoder_states = HFEncoder(t5, batch_size=3).encode(SMILES)
    assert np.allclose(encoder_states[1], _manual_mean(t5, SMILES[1], part="encoder"), atol=1e-5)
    decoder = HFEncoder(t5, part="decoder", batch_size=3)
    decoder_states = decoder.encode(SMILES, layers="all")
    assert len(decoder_states) == 4  # 3 decoder layers + embeddings
    assert not np.allclose(decoder_states[-1], encoder_states)
    gpt2 = tiny_checkpoints["gpt2"]
    batched = HFEncoder(gpt2, batch_size=5).encode(SMILES)
    single = HFEncoder(gpt2, batch_size=1).encode(SMILES)
    assert np.allclose(batched, single, atol=1e-5)
    with pytest.raises(UserInputError, match="encoder-decoder"):
        HFEncoder(gpt2, part="decoder").encode(SMILES)


def test_truncation_is_reported(tiny_checkpoints):
    encoder = HFEncoder(tiny_checkpoints["roberta"], max_length=6)
    encoder.encode(["CC", "CCCCCCCCCCCC"])
    assert encoder.truncated == [1]


def test_checkpoint_kind_from_config():
    assert checkpoint_kind(transformers.BertConfig()) == "encoder-only"
    assert checkpoint_kind(transformers.BartConfig()) == "encoder-decoder"
    assert checkpoint_kind(transformers.GPT2Config()) == "decoder-only"
