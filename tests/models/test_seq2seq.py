"""The seq2seq model on the ``tiny`` config: training through ``fit`` (loss falls, pieces give
the uncut weights), save/load with a checksum, deterministic decoding, both protocols,
hidden states, unknown symbols at inference, and bad checkpoints (one line, exit 2)."""

import json
import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("pytorch_lightning")

import chemassay  # noqa: E402
from chemassay.contract.errors import UserInputError  # noqa: E402
from chemassay.models import check_model, load_model  # noqa: E402
from chemassay.models.seq2seq import (  # noqa: E402
    CONFIGS,
    MODEL_JSON,
    WEIGHTS,
    Seq2SeqPredictor,
    get_config,
    load_seq2seq,
    train_seq2seq,
)
from chemassay.models.seq2seq_data import reaction_pair  # noqa: E402
from chemassay.models.vocab import UnknownSymbol  # noqa: E402


@pytest.fixture(scope="module")
def reactions():
    lines = chemassay.load_dataset("uspto-15k", part="train", limit=160)
    pairs = [reaction_pair(line) for line in lines]
    return [p for p in pairs if p is not None]


def _train(pairs, out, **options):
    settings = {"config": "tiny", "valid": pairs[-20:], "seed": 0, "threads": 1, "progress": False}
    settings.update(options)
    return train_seq2seq(pairs[:-20], out, **settings)


@pytest.fixture(scope="module")
def trained(reactions, tmp_path_factory):
    out = tmp_path_factory.mktemp("seq2seq") / "model"
    report = _train(reactions, out, metadata={"task": "reactions"})
    return out, report


def _weights(folder):
    from safetensors.torch import load_file

    return load_file(str(folder / WEIGHTS))


def test_training_lowers_the_loss_and_writes_the_model(trained):
    out, report = trained
    assert report.finished and report.epochs_done == CONFIGS["tiny"].max_epochs
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert log[-1]["loss"] < log[0]["loss"] - 0.5 and log[-1]["val_loss"] < log[0]["val_loss"]
    record = json.loads((out / MODEL_JSON).read_text())
    umask = os.umask(0)
    os.umask(umask)
    assert (out / WEIGHTS).stat().st_mode & 0o777 == 0o666 & ~umask  # like any file (safetensors writes 0600)
    assert record["format"] == "chemassay-seq2seq/1" and record["config"]["name"] == "tiny"
    assert record["training"]["finished"] and record["training"]["tokens_per_s"] > 0
    assert report.parameters == record["parameters"] and report.vocab_size == len(record["vocab"]["tokens"])


def test_pieces_give_the_uncut_weights(reactions, trained, tmp_path):
    uncut, _ = trained
    finished = []
    for _ in range(6):
        report = _train(reactions, tmp_path / "cut", stop_after_epochs=1, metadata={"task": "reactions"})
        finished.append(report.finished)
        if report.finished:
            break
    assert finished == [False, False, False, True]
    first, second = _weights(uncut), _weights(tmp_path / "cut")
    assert first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def test_a_piece_cut_mid_epoch_resumes_to_the_uncut_weights(reactions, trained, tmp_path):
    uncut, _ = trained
    first = _train(reactions, tmp_path / "cut", max_minutes=0.0, metadata={"task": "reactions"})
    assert not first.finished and first.epochs_done == 0
    second = _train(reactions, tmp_path / "cut", metadata={"task": "reactions"})
    assert second.finished
    a, b = _weights(uncut), _weights(tmp_path / "cut")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_resuming_on_other_data_is_refused(reactions, tmp_path):
    _train(reactions, tmp_path / "run", stop_after_epochs=1)
    with pytest.raises(UserInputError, match="other train_sha256"):
        _train(reactions[5:], tmp_path / "run", stop_after_epochs=1)


def test_decoding_is_deterministic_and_ranked(trained, reactions):
    out, _ = trained
    model = load_seq2seq(out)
    sources = [s for s, _ in reactions[:4]]
    first = model.generate(sources, beam=3)
    again = model.generate(sources, beam=3)
    assert [g.texts for g in first] == [g.texts for g in again]
    assert all(len(g.texts) == 3 and g.scores == sorted(g.scores, reverse=True) for g in first)
    greedy = model.generate(sources, beam=1)
    assert all(len(g.texts) == 1 for g in greedy)
    predictor = Seq2SeqPredictor(model)
    ranked = predictor.predict(sources, k=3)
    assert all(len(row) == len(set(row)) <= 3 for row in ranked)
    assert predictor.predict(sources, k=3) == ranked


def test_both_protocols_pass_check_model(trained):
    out, _ = trained
    for protocol in ("reaction-predictor", "bag-predictor"):
        report = check_model(f"seq2seq:{out}", protocol)
        assert report.passed, report.summary()


def test_unknown_symbols_fail_alone_and_are_counted(trained, reactions):
    out, _ = trained
    predictor = load_model(f"seq2seq:{out},beam=2", "reaction-predictor")
    queries = [reactions[0][0], "[U]CC", reactions[1][0]]
    ranked = predictor.predict(queries, k=2)
    assert ranked[1] == [] and ranked[0] and ranked[2]
    assert list(predictor.failures) == [1] and "'[U]'" in predictor.failures[1]
    result = chemassay.reaction_ood.evaluate(model=predictor, reference=[t for _, t in reactions[:2]] + ["CC"],
                                             reactants=[queries[0], queries[2], queries[1]], k=2)
    assert result.metrics["n_model_failures"] == 1 and result.n == 3
    run = chemassay.stoichiometry.run_predictions(f"seq2seq:{out}", queries)
    assert run.result.metrics["failed"] >= 1 and 1 in run.failures


def test_hidden_states_of_every_layer(trained, reactions):
    out, _ = trained
    model = load_seq2seq(out)
    sources = [s for s, _ in reactions[:5]]
    encoder = model.hidden_states(sources)
    config = CONFIGS["tiny"]
    assert len(encoder) == config.encoder_layers + 1 and encoder[0].shape == (5, config.d_model)
    assert (model.hidden_states(sources, layers="last")[0] == encoder[-1]).all()
    decoder = model.hidden_states(sources, targets=[t for _, t in reactions[:5]], part="decoder")
    assert len(decoder) == config.decoder_layers + 1 and decoder[-1].shape == (5, config.d_model)
    tokens = model.hidden_states(sources[:2], pooling="none", layers="last")[0]
    assert tokens[0].shape == (len(model.vocab.encode(sources[0])), config.d_model)
    with pytest.raises(UnknownSymbol):
        model.hidden_states(["[U]"])


def test_configs_follow_the_papers():
    paper = CONFIGS["paper"]
    assert (paper.encoder_layers, paper.decoder_layers, paper.attention_heads, paper.d_model, paper.ffn_dim) == (
        6, 6, 8, 512, 512)
    assert paper.batch_size == 64 and paper.lr == 1e-5 and paper.label_smoothing == 0.1
    assert paper.steps_per_epoch * paper.plateau_patience == 1000 and paper.steps_per_epoch * paper.patience == 5000
    assert get_config("small", lr=3e-4).lr == 3e-4
    with pytest.raises(UserInputError, match="unknown seq2seq config"):
        get_config("huge")


def test_bad_checkpoints_are_one_clear_line(trained, tmp_path):
    out, _ = trained
    with pytest.raises(UserInputError, match="no such seq2seq model folder"):
        load_seq2seq(tmp_path / "absent")
    other = tmp_path / "model.npz"
    other.write_bytes(b"PK\x03\x04 not a seq2seq model")
    with pytest.raises(UserInputError, match="not a seq2seq model folder"):
        load_seq2seq(other)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / MODEL_JSON).write_bytes((out / MODEL_JSON).read_bytes())
    data = bytearray((out / WEIGHTS).read_bytes())
    data[-10] ^= 0xFF
    (broken / WEIGHTS).write_bytes(bytes(data))
    with pytest.raises(UserInputError, match="model.safetensors: checksum mismatch"):
        load_seq2seq(broken)
    (broken / MODEL_JSON).write_text(json.dumps({"format": "chemassay-generator/1"}))
    with pytest.raises(UserInputError, match="not a chemassay seq2seq model record"):
        load_seq2seq(broken)
    record = json.loads((out / MODEL_JSON).read_text())
    record["config"]["d_model"] = 16
    (broken / WEIGHTS).write_bytes((out / WEIGHTS).read_bytes())
    (broken / MODEL_JSON).write_text(json.dumps(record))
    with pytest.raises(UserInputError, match="incompatible with seq2seq.json"):
        load_seq2seq(broken)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "last.ckpt").write_bytes(b"not a checkpoint")
    with pytest.raises(UserInputError, match="not a usable checkpoint"):
        train_seq2seq([("CCO", "CC=O")] * 4, foreign, config="tiny", progress=False)


def test_cli_trains_predicts_and_refuses_a_broken_model(cli, tmp_path):
    out = tmp_path / "cli-model"
    done = cli("models", "train", "seq2seq", "--train", "uspto-15k", "--limit", "60", "--valid-limit", "10",
               "--config", "tiny", "--max-epochs", "1", "--out", out, "--threads", "1", "--device", "cpu")
    assert done.code == 0, done.stderr
    assert "model: --model seq2seq:" in done.stdout and (out / WEIGHTS).is_file()
    source = tmp_path / "src.txt"
    source.write_text("CC(=O)Cl.OCC\n[U]C\n")
    predictions = tmp_path / "pred.txt"
    ran = cli("stoichiometry", "predict", "--model", f"seq2seq:{out}", "--src", source, "--out", predictions)
    assert ran.code == 0 and len(predictions.read_text().splitlines()) == 2
    (out / WEIGHTS).write_bytes(b"garbage")
    failed = cli("stoichiometry", "predict", "--model", f"seq2seq:{out}", "--src", source, "--out", predictions)
    assert failed.code == 2
    message = failed.stderr.strip()
    assert message.count("\n") == 0 and "model.safetensors: checksum mismatch" in message
    table = tmp_path / "test.csv"
    table.write_text("id,reactants,products\n1,CC(=O)Cl.OCC,CCOC(C)=O\n")
    missing = cli("reaction-ood", "predict", table, "--model", f"seq2seq:{tmp_path / 'none'}", "--out",
                  tmp_path / "p.csv")
    assert missing.code == 2 and "no such seq2seq model folder" in missing.stderr


def test_the_gpu_settings_run_on_cpu(reactions, tmp_path):
    """The GPU path (bf16 mixed precision) checked on the CPU with the tiny config; a GPU
    asked for where there is none is one clear line."""
    report = _train(reactions, tmp_path / "bf16", precision="bf16-mixed", device="cpu", max_epochs=1,
                    steps_per_epoch=2)
    assert report.finished and report.best_val_loss is not None and report.best_val_loss == report.best_val_loss
    assert load_seq2seq(tmp_path / "bf16").generate([reactions[0][0]], max_new_tokens=5)[0].texts
    if not torch.cuda.is_available():
        with pytest.raises(UserInputError, match="CUDA is not available"):
            _train(reactions, tmp_path / "cuda", device="cuda", max_epochs=1)


def test_the_pre_norm_architecture_trains_and_loads(reactions, tmp_path):
    report = _train(reactions, tmp_path / "mbart", max_epochs=1, steps_per_epoch=3, overrides={"architecture": "mbart"})
    assert report.finished
    model = load_seq2seq(tmp_path / "mbart")
    assert type(model.model).__name__ == "MBartForConditionalGeneration" and model.config.architecture == "mbart"
    assert model.generate([reactions[0][0]], max_new_tokens=5)[0].texts
    record = json.loads((tmp_path / "mbart" / MODEL_JSON).read_text())
    del record["config"]["architecture"]  # a record written before the setting existed reads as bart
    (tmp_path / "mbart" / MODEL_JSON).write_text(json.dumps(record))
    with pytest.raises(UserInputError, match="incompatible with seq2seq.json"):
        load_seq2seq(tmp_path / "mbart")
    with pytest.raises(UserInputError, match="unknown seq2seq architecture"):
        _train(reactions, tmp_path / "other", max_epochs=1, overrides={"architecture": "t5"})


def test_the_copy_head_trains_decodes_with_its_cache_and_loads(reactions, tmp_path):
    """The pointer-generator head: its outputs are probabilities, greedy decoding through
    ``generate`` (with the decoder cache and the beams' expanded source ids) picks the same
    tokens as step-by-step decoding without a cache, and the folder loads back."""
    overrides = {"architecture": "mbart", "positions": "sinusoidal", "copy": True}
    report = _train(reactions, tmp_path / "copy", max_epochs=1, steps_per_epoch=20, overrides=overrides)
    assert report.finished
    model = load_seq2seq(tmp_path / "copy")
    assert type(model.model).__name__ == "CopyMBartForConditionalGeneration" and model.config.copy
    net, vocab = model.model, model.vocab
    source = torch.tensor([vocab.encode(reactions[0][0])])
    decoded = [vocab.bos_id]
    with torch.inference_mode():
        for _ in range(12):
            out = net(input_ids=source, attention_mask=torch.ones_like(source), decoder_input_ids=torch.tensor([decoded]))
            assert torch.allclose(out.logits.exp().sum(-1), torch.ones(1, len(decoded)), atol=1e-4)
            decoded.append(int(out.logits[0, -1].argmax()))
            if decoded[-1] == vocab.eos_id:
                break
    greedy = model.generate([reactions[0][0]], max_new_tokens=12)[0].texts[0]
    assert greedy == vocab.decode(decoded[1:])
    beams = model.generate([reactions[0][0], reactions[1][0]], beam=3, max_new_tokens=12)
    assert all(len(g.texts) == 3 and g.scores == sorted(g.scores, reverse=True) for g in beams)


def test_sinusoidal_positions_are_fixed(reactions, tmp_path):
    import math

    overrides = {"architecture": "mbart", "positions": "sinusoidal"}
    _train(reactions, tmp_path / "sin", max_epochs=1, steps_per_epoch=5, overrides=overrides)
    table = load_seq2seq(tmp_path / "sin").model.model.encoder.embed_positions.weight
    offset = table.shape[0] - CONFIGS["tiny"].max_positions
    assert not table.requires_grad
    assert float(table[offset + 3, 0]) == pytest.approx(math.sin(3.0), abs=1e-6)
    assert float(table[offset + 3, 1]) == pytest.approx(math.cos(3.0), abs=1e-6)
    with pytest.raises(UserInputError, match="unknown seq2seq positions"):
        _train(reactions, tmp_path / "other", max_epochs=1, overrides={"positions": "rotary"})


def test_ordered_sources_and_aligned_targets(reactions, tmp_path):
    from rdkit import Chem

    from chemassay.models.seq2seq_data import aligned_product, arrange_pairs, order_molecules

    assert order_molecules("O.CCO.c1ccccc1.CC") == "c1ccccc1.CCO.CC.O"
    assert order_molecules("O.CCO", "as-given") == "O.CCO"
    # the ester is written from the carbonyl that starts the acid chloride's SMILES
    assert aligned_product("O=C(Cl)c1ccccc1.OCC", "CCOC(=O)c1ccccc1") == "O=C(OCC)c1ccccc1"
    for source, target in reactions[:40]:
        ordered = order_molecules(source)
        aligned = aligned_product(ordered, target)
        assert Chem.CanonSmiles(aligned) == Chem.CanonSmiles(target)  # the same molecules
    arranged = arrange_pairs(reactions[:5], source_order="largest-first", target_root="aligned")
    assert [Chem.CanonSmiles(t) for _, t in arranged] == [Chem.CanonSmiles(t) for _, t in reactions[:5]]
    bags = [("{1}H2.{2}O2", "{2}H2O")]
    assert arrange_pairs(bags, source_order="largest-first", target_root="aligned", tokenizer="formula") == bags
    overrides = {"source_order": "largest-first", "target_root": "aligned"}
    _train(reactions, tmp_path / "arranged", max_epochs=1, steps_per_epoch=3, overrides=overrides,
           metadata={"task": "reactions"})
    predictor = Seq2SeqPredictor(load_seq2seq(tmp_path / "arranged"))
    assert predictor._prepare(["OCC.O=C(Cl)c1ccccc1"]) == ["O=C(Cl)c1ccccc1.CCO"]


def test_config_settings_from_the_command_line():
    from chemassay.models.seq2seq import parse_settings

    assert parse_settings(["copy=false", "lr=5e-4", "patience=none", "positions=learned", "batch_size=16"]) == {
        "copy": False, "lr": 5e-4, "patience": None, "positions": "learned", "batch_size": 16}
    for bad in ("copy", "colour=red", "copy=maybe", "batch_size=many"):
        with pytest.raises(UserInputError, match="--set"):
            parse_settings([bad])
    small = get_config("small", **parse_settings(["copy=false"]))
    assert not small.copy and small.target_root == "aligned" and CONFIGS["small"].copy


def test_a_copy_model_cut_into_pieces_ends_with_the_uncut_weights(reactions, tmp_path):
    overrides = {"architecture": "mbart", "positions": "sinusoidal", "copy": True, "source_order": "largest-first",
                 "target_root": "aligned"}
    options = {"max_epochs": 2, "steps_per_epoch": 4, "overrides": overrides, "metadata": {"task": "reactions"}}
    _train(reactions, tmp_path / "uncut", **options)
    for _ in range(3):
        if _train(reactions, tmp_path / "cut", stop_after_epochs=1, **options).finished:
            break
    first, second = _weights(tmp_path / "uncut"), _weights(tmp_path / "cut")
    assert "copy_gate.weight" in first
    assert first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)
