"""``--model hf:PATH`` with tiny randomly initialised checkpoints built offline here: a
word-level tokenizer trained with ``tokenizers`` and GPT-2 (causal) / T5 (seq2seq) models
of a few thousand parameters, saved with ``save_pretrained``."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def tiny_checkpoints(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    corpus = [
        "You are an expert in organic reaction mechanisms .",
        '[ANSWER] [ { "step" : 1 , "type" : "addition" , "subtype" : "nucleophilic_addition" } ] [/ANSWER]',
        "CC=O CC(O)CC=O proton_transfer acid_base_proton_transfer intermediate_smiles",
    ]
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(corpus, trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[EOS]"]))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]")
    root = tmp_path_factory.mktemp("hf")
    torch.manual_seed(0)
    causal = transformers.GPT2LMHeadModel(transformers.GPT2Config(
        vocab_size=len(fast), n_embd=16, n_layer=1, n_head=2, n_positions=4096, bos_token_id=2, eos_token_id=2))
    causal.save_pretrained(root / "causal")
    fast.save_pretrained(root / "causal")
    seq2seq = transformers.T5ForConditionalGeneration(transformers.T5Config(
        vocab_size=len(fast), d_model=16, d_ff=32, num_layers=1, num_heads=2, d_kv=8,
        decoder_start_token_id=0, pad_token_id=0, eos_token_id=2))
    seq2seq.save_pretrained(root / "seq2seq")
    fast.save_pretrained(root / "seq2seq")
    return root


def test_causal_checkpoint_through_the_cli(cli, tmp_path, tiny_checkpoints):
    out, scored = tmp_path / "pred.jsonl", tmp_path / "score.json"
    args = ("mechanism", "evaluate", "--model", f"hf:{tiny_checkpoints / 'causal'},max_new_tokens=5", "--limit", "2",
            "--predictions-out", out, "--out", scored)
    result = cli(*args)
    assert result.code == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["reaction_id"] for r in rows] == ["NR-001", "NR-002"]
    assert all(isinstance(r["response"], str) and r["spec"].endswith("max_new_tokens=5") for r in rows)
    # greedy decoding is deterministic: the text equals a direct generate() call
    from chemassay.models.hf_text import HFTextGenerator
    from chemassay.suites.mechanism.data import omebench_file as bundled_path
    from chemassay.suites.mechanism.prompts import build_prompt
    from chemassay.suites.mechanism.records import load_reactions

    generator = HFTextGenerator(tiny_checkpoints / "causal", max_new_tokens=5)
    first = load_reactions(bundled_path("gold")).reactions[0]
    assert generator.generate(build_prompt("default", first)).text == rows[0]["response"]
    # random weights do not write mechanisms: scored as unparsed zeros, n limited to the 2 asked
    from chemassay.contract.result import read_result

    scored_result = read_result(scored)
    assert scored_result.n == 2 and scored_result.metrics["S_total"] == 0.0
    assert scored_result.model.kind == "hf"
    assert cli(*args).code == 0  # resume: nothing left to ask


def test_seq2seq_checkpoint_is_detected_and_generates(tiny_checkpoints):
    from chemassay.models.hf_text import HFTextGenerator

    generator = HFTextGenerator(tiny_checkpoints / "seq2seq", max_new_tokens=4)
    assert generator.encoder_decoder
    results = generator.generate_many(["CC=O CC(O)CC=O", "You are an expert"])
    assert len(results) == 2 and all(0 < r.new_tokens <= 4 for r in results)
    assert generator.generate("CC=O CC(O)CC=O") == results[0]  # greedy: reproducible


def test_missing_checkpoint_is_a_user_error(cli, tmp_path):
    result = cli("mechanism", "predict", "gold", "--model", f"hf:{tmp_path / 'none'}", "--out", tmp_path / "x.jsonl")
    assert result.code == 2 and "no such checkpoint folder" in result.stderr
    assert not (tmp_path / "x.jsonl").exists()
