"""The model registry: built-in kinds, lazy factories, duplicates, and the general adapters
(python, predictions, openai against a real local server) run through check_model."""

import json
import sys

import numpy as np
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.models import (
    DuplicateKindError,
    ModelKind,
    all_protocols,
    check_model,
    get_kind,
    list_kinds,
    load_model,
    model_ref,
    register_kind,
    unregister_kind,
)


def test_builtin_kinds_and_protocols():
    names = {kind.name for kind in list_kinds()}
    assert {"openai", "hf", "python", "predictions"} <= names
    assert "encoder" in get_kind("openai").protocol_names
    for kind in list_kinds():
        assert set(kind.protocol_names) <= set(all_protocols())
    assert all(k.implements("generator") for k in list_kinds("generator"))


def test_listing_kinds_imports_no_heavy_library():
    import subprocess

    code = ("import sys; from chemassay.models import list_kinds; list_kinds(); "
            "print(sorted(m for m in ('torch', 'transformers', 'httpx') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_duplicate_kind_is_an_error():
    kind = ModelKind("test-dup", ("generator",), "tests:nothing", "a test kind", aliases=("test-dup-alias",))
    register_kind(kind)
    try:
        with pytest.raises(DuplicateKindError):
            register_kind(ModelKind("test-dup", ("generator",), "tests:nothing", "again"))
        with pytest.raises(DuplicateKindError):
            register_kind(ModelKind("other", ("generator",), "tests:nothing", "x", aliases=("openai",)))
        assert get_kind("test-dup-alias").name == "test-dup"
    finally:
        unregister_kind("test-dup")


def test_wrong_protocol_and_unknown_kind_are_clear(tmp_path):
    with pytest.raises(UserInputError, match="unknown model kind 'nope'"):
        load_model("nope:x", "generator")
    with pytest.raises(UserInputError, match="needs an argument"):
        load_model("python", "generator")


def test_python_kind_function_factory_and_file(tmp_path):
    module = tmp_path / "user_models.py"
    module.write_text(
        "def top1(reactants, k=10):\n    return [[r.split('.')[0]] for r in reactants]\n"
        "class Gen:\n    def __init__(self, prefix='C'):\n        self.prefix = prefix\n"
        "    def sample(self, n, seed=0):\n        if n < 0:\n            raise ValueError('n must be >= 0')\n"
        "        return [self.prefix * (1 + (seed + i) % 3) for i in range(n)]\n"
    )
    predictor = load_model(f"python:{module}:top1", "reaction-predictor")
    assert predictor.predict(["CCO.O"], k=1) == [["CCO"]]
    generator = load_model(f"python:{module}:Gen,prefix=N", "generator")
    assert generator.sample(2, seed=0) == ["N", "NN"]
    assert check_model(f"python:{module}:Gen", "generator").passed
    report = check_model(f"python:{module}:top1", "reaction-predictor")
    assert report.passed, report.summary()
    ref = model_ref(generator)
    assert ref.kind == "python" and ref.spec.endswith(":Gen,prefix=N") and len(ref.checksum) == 64


def test_predictions_kind_for_every_protocol(tmp_path):
    reactions = tmp_path / "rxn.csv"
    reactions.write_text("reactants,rank,prediction\nCCO.CC(=O)O,2,CCOC(C)=O\nCCO.CC(=O)O,1,CC(=O)OCC\n")
    predictor = load_model(f"predictions:{reactions}", "reaction-predictor")
    assert predictor.predict(["CCO.CC(=O)O", "C"], k=5) == [["CC(=O)OCC", "CCOC(C)=O"], []]
    assert 1 in predictor.failures
    smiles = tmp_path / "gen.txt"
    smiles.write_text("CCO\nc1ccccc1\nCCN\n")
    generator = load_model(f"predictions:{smiles}", "generator")
    assert generator.sample(2) == ["CCO", "c1ccccc1"]
    with pytest.raises(UserInputError, match="holds 3 SMILES"):
        generator.sample(5)
    embeddings = tmp_path / "emb.npz"
    np.savez(embeddings, smiles=np.array(["CCO", "CCN"]), embeddings=np.eye(2, dtype=np.float32))
    encoder = load_model(f"predictions:{embeddings}", "encoder")
    assert encoder.encode(["CCN", "CCO"]).tolist() == [[0.0, 1.0], [1.0, 0.0]]
    answers = tmp_path / "mech.jsonl"
    answers.write_text(json.dumps({"reaction_id": "r1", "response": "[]"}) + "\n")
    assert load_model(f"predictions:{answers}", "mechanism-predictor").predict_mechanisms([{"reaction_id": "r1"}]) == ["[]"]
    assert model_ref(encoder).checksum == __import__("chemassay.runtime.files", fromlist=["x"]).sha256_file(embeddings)


def test_openai_kind_is_every_text_protocol_and_an_encoder(openai_server, isolated_home):
    spec = f"openai:chemist,base_url={openai_server.base_url}"
    predictor = load_model(spec, "reaction-predictor")
    assert predictor.predict(["CC(=O)Cl.NCc1ccccc1"], k=2) == [["NCc1ccccc1", "CC(=O)Cl"]]
    bags = load_model(spec, "bag-predictor")
    assert bags.predict_bags(["{1}CC(=O)Cl.{1}NCc1ccccc1"]) == ["{1}NCc1ccccc1"]
    generator = load_model(spec + ",batch=4", "generator")
    first = generator.sample(10, seed=3)
    assert len(first) == 10 and all(isinstance(s, str) and s for s in first)
    sent = len(openai_server.chat_requests())
    assert generator.sample(10, seed=3) == first  # answered from the response cache: no new request
    assert len(openai_server.chat_requests()) == sent
    assert generator.sample(10, seed=4) != first
    encoder = load_model(spec, "encoder")
    vectors = encoder.encode(["CCO", "OCC", "CCO"])
    assert vectors.shape == (3, 32) and np.array_equal(vectors[0], vectors[2]) and not np.array_equal(vectors[0], vectors[1])
    mechanisms = load_model(spec, "mechanism-predictor").predict_mechanisms([{"reaction_id": "r", "prompt": "hi"}])
    assert "mechanism" in mechanisms[0]
    for protocol in ("reaction-predictor", "bag-predictor", "generator", "encoder", "mechanism-predictor"):
        report = check_model(spec, protocol)
        assert report.passed, report.summary()


def test_openai_unreachable_fails_fast(isolated_home):
    import time

    predictor = load_model("openai:m,base_url=http://127.0.0.1:9/v1", "reaction-predictor")
    started = time.perf_counter()
    with pytest.raises(UserInputError, match="127.0.0.1:9.*connection failed"):
        predictor.predict(["CCO"], k=1)
    assert time.perf_counter() - started < 5


def test_openai_needs_a_base_url(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UserInputError, match="no server URL"):
        load_model("openai:gpt", "reaction-predictor")


def test_answer_parsers_accept_bare_and_wrapped_answers_but_not_prose():
    from chemassay.chem.answers import ranked_smiles as parse_ranked_smiles
    from chemassay.chem.answers import smiles_lines as parse_smiles_lines
    from chemassay.suites.stoichiometry.protocol import parse_bag_answer

    assert parse_ranked_smiles("CCO", 3) == ["CCO"]
    assert parse_ranked_smiles("<think>maybe CCN</think>\n```\n1. CC(=O)O\n2) CCO\n```", 3) == ["CC(=O)O", "CCO"]
    assert parse_ranked_smiles("The product is CCOC(C)=O.", 1) == ["CCOC(C)=O"]
    assert parse_ranked_smiles("I do not know.", 3) == []  # not iodine
    assert parse_bag_answer("Products: {2}O.{1}CCO") == "{2}O.{1}CCO"
    assert parse_bag_answer("{1}CCO") == "{1}CCO"
    assert parse_smiles_lines("1. CCO\n2. xyz\n- c1ccccc1") == ["CCO", "xyz", "c1ccccc1"]


def test_a_python_model_is_found_in_the_working_folder(tmp_path, monkeypatch):
    """``chemassay models check python:my_models:Retro`` run from the module's own folder (the
    console script does not put the working folder on sys.path; python -m would)."""
    (tmp_path / "cwd_models_for_test.py").write_text(
        "class Retro:\n    def predict(self, reactants, k=10):\n        return [['CCO'] for _ in reactants]\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    from chemassay.models import load_model

    model = load_model("python:cwd_models_for_test:Retro", "reaction-predictor")
    assert model.predict(["CC.O"], k=1) == [["CCO"]]
    with pytest.raises(UserInputError, match="cannot import 'no_such_module_here'"):
        load_model("python:no_such_module_here:Retro", "reaction-predictor")
