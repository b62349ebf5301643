"""The learned mechanism model on the ``tiny`` config: texts and their decoding, training on
an expansion (loss falls, pieces give the uncut weights), the ``mechanism-seq2seq`` kind
(deterministic answers in the parser's format, its training set as the domain pool), and
bad input (unknown symbols counted, a model of another task or a broken folder: one line,
exit 2)."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("pytorch_lightning")

import chemassay.mechanism as mechanism  # noqa: E402

from chemassay.contract.errors import UserInputError  # noqa: E402
from chemassay.models import check_model  # noqa: E402
from chemassay.suites.mechanism.expand import expand_templates, load_substituents  # noqa: E402
from chemassay.suites.mechanism.learned import (  # noqa: E402
    condition_tokens,
    decode_steps,
    mechanism_source,
    mechanism_target,
    training_pairs,
)
from chemassay.suites.mechanism.parse import parse_response  # noqa: E402
from chemassay.suites.mechanism.records import read_records, to_reaction  # noqa: E402

FAMILIES = ("NR-001", "NR-002", "NG-004", "NG-005", "NR-009")


@pytest.fixture(scope="module")
def silver():
    """A small expansion of five aldol-type templates (six records: two share NG-004), 4 instances each."""
    from chemassay.suites.mechanism.data import omebench_file

    templates = [r.data for r in read_records(omebench_file("template")).records if r.data["reaction_id"] in FAMILIES]
    records = expand_templates(templates, load_substituents(), per_template=4, seed=0).records
    return [to_reaction(record) for record in records]


def _train(silver, out, **options):
    settings = {"config": "tiny", "seed": 0, "threads": 1, "progress": False, "valid_fraction": 0.2,
                "max_epochs": 3, "steps_per_epoch": 8, "device": "cpu"}
    settings.update(options)
    return mechanism.train(silver, out, **settings)


@pytest.fixture(scope="module")
def trained(silver, tmp_path_factory):
    out = tmp_path_factory.mktemp("mechanism-model") / "model"
    return out, _train(silver, out)


def test_texts_round_trip(gold_reactions):
    reaction = gold_reactions[0]  # NR-001, base-catalysed aldol addition
    source, dropped = mechanism_source(reaction.reactants, reaction.products, reaction.conditions)
    assert source == "CC=O.CC=O>[&base]>CC(O)CC=O" and dropped == 0
    target = mechanism_target(reaction.steps)
    assert target == "[acid_base_proton_transfer][CH2-]C=O[nucleophilic_addition]CC([O-])CC=O[acid_base_proton_transfer]CC(O)CC=O"
    steps = decode_steps(target)
    assert [s["subtype"] for s in steps] == [s.subtype for s in reaction.steps]
    assert [s["type"] for s in steps] == [s.type for s in reaction.steps]
    parsed = parse_response(json.dumps(steps), strict=True)  # the format the published parser reads
    assert parsed.ok and [p.smiles for p in parsed.steps] == [s.intermediate_smiles for s in reaction.steps]
    assert condition_tokens("H2SO4, heat") == ["[&h2so4]", "[&heat]"]
    assert mechanism_source(["CCO"], ["CC=O"], "PCC, CH2Cl2", known={"[&pcc]"}) == ("CCO>[&pcc]>CC=O", 1)
    assert decode_steps("CC=O[nucleophilic_addition]CC") is None  # does not start with a step
    assert decode_steps("[nucleophilic_addition]C(") == [
        {"step": 1, "type": "addition", "subtype": "nucleophilic_addition", "intermediate_smiles": "C("}]
    assert decode_steps("[nucleophilic_addition]C$%x") is None  # not SMILES tokens
    assert decode_steps("") is None


def test_training_pairs_leave_out_foreign_labels(silver):
    pairs, left_out = training_pairs(silver)
    assert len(pairs) == len(silver) and not left_out
    broken = silver[0].__class__(**{**silver[0].__dict__, "steps": (silver[0].steps[0].__class__(1, "x", "made_up", "C"),)})
    pairs, left_out = training_pairs([broken])
    assert not pairs and "made_up" in left_out[0]["reason"]


def test_training_lowers_the_loss_and_records_the_families(trained):
    out, report = trained
    assert report.finished and report.epochs_done == 3 and report.valid_pairs == 5 and report.train_pairs == 19  # NG-004: two templates
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert log[-1]["loss"] < log[0]["loss"] and log[-1]["val_loss"] < log[0]["val_loss"]
    record = json.loads((out / "seq2seq.json").read_text())
    metadata = record["training"]["metadata"]
    assert metadata["task"] == "mechanism" and {f["reaction_id"].split("_")[0] for f in metadata["families"]} == set(FAMILIES)


def test_pieces_give_the_uncut_weights(silver, trained, tmp_path):
    from safetensors.torch import load_file

    uncut, _ = trained
    states = []
    for _ in range(5):
        report = _train(silver, tmp_path / "cut", stop_after_epochs=1)
        states.append(report.finished)
        if report.finished:
            break
    assert states == [False, False, True]
    first, second = load_file(str(uncut / "model.safetensors")), load_file(str(tmp_path / "cut" / "model.safetensors"))
    assert all(torch.equal(first[k], second[k]) for k in first)


def test_the_kind_answers_in_the_parsers_format_and_deterministically(trained, gold_reactions):
    out, _ = trained
    spec = f"mechanism-seq2seq:{out},max_new_tokens=96"
    assert check_model(spec, "mechanism-predictor").passed
    rows = mechanism.predict(spec, gold_reactions[:4]).rows
    again = mechanism.predict(spec, gold_reactions[:4]).rows
    assert [r.get("response") for r in rows] == [r.get("response") for r in again]
    result = mechanism.evaluate(model=spec, limit=6, bootstrap=0)
    assert result.n == 6 and result.model.kind == "mechanism-seq2seq" and result.model.checksum
    # in-domain is the model's own training set: NR-001, NR-002, NG-004, NG-005 of the first six
    assert result.config["domain_pool"]["origin"] == "model" and result.metrics["n_in_domain"] == 4
    assert result.metrics["n_scored"] + result.metrics["n_unparsed"] == 6 and result.metrics["n_missing"] == 0
    for row in rows:  # each answer is the parser's JSON step list, or the raw text when it is not one
        if "error" in row:  # a symbol the model never saw: that reaction fails, counted
            assert row["error"].startswith("cannot encode the reaction")
            continue
        text = row["response"]
        assert (text.startswith("[{") and parse_response(text, strict=True).ok) or row.get("not_a_step_sequence")


def test_unknown_symbols_fail_that_prediction_only(trained):
    out, _ = trained
    from chemassay.suites.mechanism.api import load_predictor

    model = load_predictor(f"mechanism-seq2seq:{out}")
    records = [
        {"reaction_id": "a", "reactants_smiles": ["CC=O"], "products_smiles": ["CC(O)CC=O"], "conditions": "Base"},
        {"reaction_id": "b", "reactants_smiles": ["[Ti]"], "products_smiles": ["CC"], "conditions": "Base"},
        {"reaction_id": "c", "reactants_smiles": ["CC=O"], "products_smiles": ["CCO"], "conditions": "unheard-of reagent"},
    ]
    answers = model.predict_mechanisms(records)
    assert len(answers) == 3 and answers[1] == "" and "cannot encode" in model.failures[1]
    assert set(model.failures) == {1} and isinstance(answers[0], str) and answers[0]
    assert model.details[2]["condition_words_unknown"] == 3  # unknown condition words are left out, counted


def test_bad_model_folders(cli, tmp_path, trained):
    out, _ = trained
    record = json.loads((out / "seq2seq.json").read_text())
    other = tmp_path / "reaction-model"
    other.mkdir()
    for name in ("model.safetensors",):
        (other / name).write_bytes((out / name).read_bytes())
    record["training"]["metadata"]["task"] = "reactions"
    (other / "seq2seq.json").write_text(json.dumps(record))
    with pytest.raises(UserInputError, match="not a mechanism model"):
        mechanism.predict(f"mechanism-seq2seq:{other}", "gold", limit=1)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "seq2seq.json").write_text("{")
    result = cli("mechanism", "predict", "gold", "--model", f"mechanism-seq2seq:{broken}", "--limit", "1",
                 "--out", tmp_path / "p.jsonl")
    assert result.code == 2 and len(result.stderr.strip().splitlines()) == 1 and str(broken) in result.stderr
    assert not (tmp_path / "p.jsonl").exists()
    missing = cli("mechanism", "predict", "gold", "--model", "mechanism-seq2seq:", "--out", tmp_path / "q.jsonl")
    assert missing.code == 2 and "needs an argument" in missing.stderr


def test_train_cli(cli, tmp_path, silver):
    data = tmp_path / "silver.jsonl"
    data.write_text("".join(json.dumps({"reaction_id": r.reaction_id, "name": r.name, "level": r.level,
                                        "reactants_smiles": list(r.reactants), "products_smiles": list(r.products),
                                        "conditions": r.conditions,
                                        "mechanism": [{"step": s.step, "type": s.type, "subtype": s.subtype,
                                                       "intermediate_smiles": s.intermediate_smiles}
                                                      for s in r.steps]}) + "\n" for r in silver))
    result = cli("mechanism", "train", data, "--out", tmp_path / "m", "--config", "tiny", "--device", "cpu",
                 "--threads", "1", "--max-epochs", "1", "--steps-per-epoch", "2")
    assert result.code == 0, result.stderr
    assert "finished: 1 epochs, 2 steps" in result.stdout and (tmp_path / "m" / "model.safetensors").is_file()
    assert cli("mechanism", "train", data, "--out", tmp_path / "n", "--valid-fraction", "0.7").code == 2
    if not torch.cuda.is_available():  # the GPU command of the docs, on a machine without one: one line, exit 2
        gpu = cli("mechanism", "train", data, "--out", tmp_path / "g", "--config", "tiny", "--device", "cuda")
        assert gpu.code == 2 and "CUDA is not available" in gpu.stderr and len(gpu.stderr.strip().splitlines()) == 1
