"""A suite whose protocol is new, registered at run time from the tests folder, answered by every
general model kind (``python:``, ``predictions:``, ``openai:`` against a real local server, a
local ``hf:`` text model) and checked with ``check_model``, with no file under src/ naming it;
and the run pipeline's de-duplication and response cache for a ``python:`` model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chemassay.models import check_model, run
from support.toy_suite import CountingModel, FormulaPredictor, evaluate, load_molecules

SRC = Path(__file__).resolve().parents[1] / "src"


def _formula(smiles: str) -> str:
    from rdkit import Chem
    from rdkit.Chem.rdMolDescriptors import CalcMolFormula

    return CalcMolFormula(Chem.MolFromSmiles(smiles))


def test_nothing_under_src_names_the_new_protocol():
    named = [str(path) for path in SRC.rglob("*.py")
             if re.search(r"formula-predictor|predict_formulas|FormulaPredictor", path.read_text(encoding="utf-8"))]
    assert named == []


def test_a_python_model_answers_the_new_protocol_and_passes_its_checks(toy_suite):
    result = evaluate("python:support.toy_suite:CountingModel")
    assert result.metrics["exact"] == 1.0 and result.n == len(load_molecules())
    assert result.model.kind == "python"
    report = check_model("python:support.toy_suite:CountingModel", "formula-predictor")
    assert report.passed, report.summary()
    assert [c.name for c in report.checks] == ["loads", "returns one formula per molecule",
                                               "nothing asked, nothing answered"]
    wrong = check_model("python:support.toy_suite:CarbonOnlyModel", "formula-predictor")
    assert wrong.passed  # right shapes, wrong chemistry: the checks test the contract, not the answers


def test_a_predictions_file_answers_the_new_protocol_in_its_own_layout(toy_suite, tmp_path):
    molecules = load_molecules()
    path = tmp_path / "formulas.jsonl"
    rows = [{"smiles": smiles, "formula": _formula(smiles)} for _, smiles in molecules if smiles != "c1ccccc1"]
    rows += [{"smiles": "O", "formula": "H2O"}]  # CCO and O: the inputs of the protocol's checks
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = evaluate(f"predictions:{path}")
    assert result.model.kind == "predictions" and result.n == len(molecules)
    assert result.metrics["exact"] == pytest.approx((len(molecules) - 1) / len(molecules))
    missing = [entry for entry in result.skipped if "has no prediction" in entry.reason]
    assert len(missing) == 1 and missing[0].line == 2 and "formulas.jsonl" in missing[0].reason
    assert check_model(f"predictions:{path}", "formula-predictor").passed
    (tmp_path / "bad.jsonl").write_text(json.dumps({"smiles": "CCO"}) + "\n")
    failed = check_model(f"predictions:{tmp_path / 'bad.jsonl'}", "formula-predictor")
    assert not failed.passed and "no formula column" in failed.checks[0].message


def test_a_chat_endpoint_answers_the_new_protocol_with_its_prompt_and_parser(toy_suite, openai_server):
    def chemist(body):
        prompt = body["messages"][-1]["content"]
        smiles = re.search(r"of the molecule (\S+)\. Answer", prompt).group(1)
        return f"<think>count the atoms</think>\nThe formula is **{_formula(smiles)}**"

    openai_server.responder = chemist
    spec = f"openai:toy-chemist,base_url={openai_server.base_url},cache=false"
    result = evaluate(spec)
    assert result.metrics["exact"] == 1.0, [r.predicted for r in result.details.rows]
    assert result.requests.new == len(load_molecules())
    prompts = [body["messages"][-1]["content"] for body in openai_server.chat_requests()]
    assert all(p.startswith("Give the molecular formula (Hill order)") for p in prompts)
    assert check_model(spec, "formula-predictor").passed


def test_a_local_hf_text_model_answers_the_new_protocol(toy_suite, tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.train_from_iterator(["Give the molecular formula C2H6O H2O CH4 of the molecule"],
                            tokenizers.trainers.WordLevelTrainer(special_tokens=["[PAD]", "[UNK]", "[EOS]"]))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                                eos_token="[EOS]")
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=len(fast), n_embd=16, n_layer=1,
                                                                 n_head=2, n_positions=256, eos_token_id=2))
    model.save_pretrained(tmp_path / "tiny")
    fast.save_pretrained(tmp_path / "tiny")
    result = evaluate(f"hf:{tmp_path / 'tiny'},max_new_tokens=3,prompting=chat", limit=3)
    # a randomly initialised model answers noise, not formulas: every answer is read and scored
    # (an empty one as no answer), none is lost as a failed request
    assert result.n == 3 and result.model.kind == "hf"
    assert all(entry.reason == "no answer" for entry in result.skipped)
    assert all(isinstance(row.predicted, str) for row in result.details.rows)
    assert check_model(f"hf:{tmp_path / 'tiny'},max_new_tokens=3,prompting=chat", "formula-predictor").passed


def test_a_python_model_evaluated_twice_with_the_cache_on_is_called_once(toy_suite, isolated_home):
    CountingModel.calls.clear()
    first = evaluate("python:support.toy_suite:CountingModel", cache=True)
    second = evaluate("python:support.toy_suite:CountingModel", cache=True)
    assert CountingModel.calls == [len(load_molecules())]
    assert first.metrics == second.metrics
    evaluate("python:support.toy_suite:CountingModel", cache=False)
    assert len(CountingModel.calls) == 2


def test_the_pipeline_asks_identical_items_once_and_keeps_failures_with_reasons(toy_suite, isolated_home):
    class Forgetful:
        name = "forgetful"

        def __init__(self):
            self.asked = []
            self.failures = {}

        def predict_formulas(self, smiles):
            self.asked.append(list(smiles))
            self.failures = {i: "request failed: the model forgot" for i, s in enumerate(smiles) if s == "O"}
            return ["" if s == "O" else _formula(s) for s in smiles]

    model = Forgetful()
    done = run(model, FormulaPredictor(), ["CCO", "O", "CCO", "O", "C"], cache=True)
    assert model.asked == [["CCO", "O", "C"]] and done.duplicates == 2 and done.calls == 1
    assert done.outputs == ["C2H6O", "", "C2H6O", "", "CH4"]
    assert done.failures == {1: "request failed: the model forgot", 3: "request failed: the model forgot"}
    again = run(model, FormulaPredictor(), ["CCO", "O", "C"], cache=True)
    # answered items come from the cache; the failed one is asked again (failures are never cached)
    assert model.asked[-1] == ["O"] and again.cached == 2
