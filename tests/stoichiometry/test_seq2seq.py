"""The learned seq2seq model in the stoichiometry suite: trained on a ChemAlgebra folder (the
tokenizer follows the folder's encoding), run with --model seq2seq:DIR by predict and evaluate,
greedy decoding, unknown symbols counted."""

import json

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("pytorch_lightning")

from chemassay import stoichiometry  # noqa: E402


@pytest.fixture(scope="module")
def formula_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ca") / "formula_t1_x1"
    stoichiometry.build("uspto-15k", folder, encoding="formula", task="t1", aug=1, seed=0, limit=80)
    return folder


def test_train_on_a_chemalgebra_folder_and_evaluate(cli, formula_folder, tmp_path):
    model = tmp_path / "model"
    done = cli("models", "train", "seq2seq", "--train", formula_folder, "--task", "bags", "--config", "tiny",
               "--max-epochs", "2", "--out", model, "--threads", "1")
    assert done.code == 0, done.stderr
    record = json.loads((model / "seq2seq.json").read_text())
    assert record["vocab"]["tokenizer"] == "formula"
    assert record["training"]["metadata"]["encoding"] == "formula" and record["training"]["valid_pairs"] > 0
    tokens = record["vocab"]["tokens"]
    assert all(d in tokens for d in "0123456789") and "{" in tokens
    source = formula_folder / "src-test_out.txt"
    out = tmp_path / "pred.txt"
    ran = cli("stoichiometry", "predict", "--model", f"seq2seq:{model},max_new_tokens=40", "--src", source, "--out", out)
    assert ran.code == 0, ran.stderr
    assert len(out.read_text().splitlines()) == len(source.read_text().splitlines())
    result = stoichiometry.evaluate(model=f"seq2seq:{model},max_new_tokens=40", sources=source,
                                    reference=formula_folder / "tgt-test_out.txt")
    assert result.model.kind == "seq2seq" and result.model.checksum == record["weights_sha256"]
    assert 0.0 <= result.metrics["JAC"] <= 1.0 and "JAC" in result.intervals
    # greedy decoding: the same bags twice; an unknown element fails alone and is counted
    run = stoichiometry.run_predictions(f"seq2seq:{model},max_new_tokens=40", ["{1}CH4.{2}O2", "{1}UF6", "{2}H2O"])
    assert run.bags[1] == "" and 1 in run.failures and "'U'" in run.failures[1]
    assert run.result.metrics["failed"] >= 1
    assert stoichiometry.predict(f"seq2seq:{model},max_new_tokens=40", ["{1}CH4.{2}O2"]) == [run.bags[0]]
