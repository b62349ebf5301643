"""Embeddings from an OpenAI-compatible server, against a real server on 127.0.0.1: wide
vectors in batches of 32 (1,536 and 3,072 numbers: replies far over the chat-answer cap, under
their own bound of batch × max_dimension), one vector per token (llama.cpp's server without
``--pooling``) pooled with ``pooling=mean|last`` or refused in one line, and the robustness
suite (``evaluate`` and the assay's tasks) through such a server."""

from __future__ import annotations

import json

import chemassay.robustness as robustness
import numpy as np
import pytest

pytest.importorskip("httpx")

from chemassay.models.openai_chat import (  # noqa: E402
    DEFAULT_MAX_ANSWER_BYTES,
    ChatError,
    EndpointMisconfigured,
    OpenAIChatClient,
)
from support.openai_server import OpenAIServer, hashed_embedding  # noqa: E402

MOLECULES = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "OC[C@H]1OC(O)[C@H](O)[C@@H](O)[C@@H]1O", "C1CCNCC1",
             "Cc1ccccc1", "CC(C)Cc1ccc(C(C)C(=O)O)cc1", "CN1CCC[C@H]1c1cccnc1"]


@pytest.fixture
def server():
    server = OpenAIServer()
    yield server
    server.close()


@pytest.mark.parametrize("dim", [1536, 3072])
def test_wide_vectors_in_batches_of_32(server, dim):
    server.embedding_dim, server.embedding_noise = dim, 0.01  # dense numbers, ~20 bytes of JSON each
    texts = [f"{smiles}.{'C' * i}" for i, smiles in enumerate(MOLECULES * 8)]  # 64 texts: two batches
    client = OpenAIChatClient(server.base_url, "e")
    vectors = client.embed(texts, batch_size=32)
    # the first text alone (is it one vector per input?), then batches of 32; once known, no probe
    sizes = [len(r["input"]) for r in server.embedding_requests()]
    assert sizes[0] == 1 and sorted(sizes[1:]) == [31, 32]  # the two batches go concurrently
    client.embed([f"CCO.{'N' * i}" for i in range(32)], batch_size=32)
    assert [len(r["input"]) for r in server.embedding_requests()][3:] == [32]
    assert all(len(v) == dim for v in vectors)
    assert np.allclose(vectors[5], hashed_embedding(texts[5], dim, 0.01))
    # each reply is far over the chat-answer cap that was applied to it before (8 x 64 KiB + 64 KiB)
    reply = json.dumps(server._embeddings({"input": texts[:32]})).encode()
    assert len(reply) > 8 * DEFAULT_MAX_ANSWER_BYTES + 65536 and len(reply) / (32 * dim) > 15
    assert len(reply) < client.embeddings_body_limit(texts[:32])
    assert client.stats.summary().failed == 0


def test_the_bound_scales_with_the_batch_and_max_dimension(server):
    client = OpenAIChatClient(server.base_url, "e", max_dimension=1024)
    assert client.embeddings_body_limit(["CCO"] * 32) == 32 * 1024 * 32 + 65536
    server.embedding_dim = 2048
    (vector,) = client.embed(["CCO"])
    assert isinstance(vector, ChatError) and str(vector) == "embedding of 2048 numbers, over max_dimension=1024"
    server.embedding_dim, server.embedding_noise = 8192, 0.01  # about 160 kB: over the bound of one input
    (vector,) = client.embed(["CCO"])
    assert isinstance(vector, ChatError)
    assert str(vector).startswith(f"embeddings reply over {1024 * 32 + 65536} bytes (1 input of at most "
                                  "max_dimension=1024 numbers)")


def test_one_vector_per_token_is_refused_in_one_line_naming_the_setting(server, cli, tmp_path, isolated_home):
    server.per_token = True
    with pytest.raises(EndpointMisconfigured) as info:
        OpenAIChatClient(server.base_url, "e").embed(MOLECULES)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{server.base_url}: the embeddings endpoint returns one "
                                                      "vector per token (3 vectors of 32 numbers for one input)")
    assert "--pooling mean" in message and "pooling=mean" in message
    assert info.value.exit_code == 2
    # told by the first input sent alone, before a whole batch is embedded token by token
    assert [len(r["input"]) for r in server.embedding_requests()] == [1]
    # so large a reply that it passes its bound: still recognized, still the same advice
    server.embedding_dim, server.embedding_noise = 512, 0.01
    with pytest.raises(EndpointMisconfigured, match=r"one vector per token, not one per input; .*--pooling mean"):
        OpenAIChatClient(server.base_url, "e", max_dimension=512).embed(["C" * 200])
    # the command says it in one line and exits with code 2
    path = tmp_path / "molecules.csv"
    path.write_text("SMILES\n" + "\n".join(MOLECULES) + "\n")
    server.embedding_dim, server.embedding_noise = 32, 0.0
    outcome = cli("robustness", "evaluate", "--model", f"openai:e,base_url={server.base_url}", "--dataset", path,
                  "--augmentations", "kekulize", "--bootstrap", "0")
    errors = [line for line in outcome.stderr.splitlines() if line.strip()]
    assert outcome.code == 2 and len(errors) == 1 and "--pooling mean" in errors[0], outcome.stderr


@pytest.mark.parametrize("pooling", ["mean", "last"])
def test_one_vector_per_token_is_pooled_when_the_spec_says_how(server, pooling, isolated_home):
    from chemassay.models import load_model

    server.per_token = True
    client = OpenAIChatClient(server.base_url, "e", pooling=pooling)
    vectors = client.embed(MOLECULES, batch_size=4)
    for smiles, vector in zip(MOLECULES, vectors, strict=True):
        tokens = np.array([hashed_embedding(smiles[:end]) for end in range(1, len(smiles) + 1)])
        expected = tokens.mean(axis=0) if pooling == "mean" else tokens[-1]
        assert np.allclose(vector, expected)
    model = load_model(f"openai:e,base_url={server.base_url},pooling={pooling}", "encoder")
    assert np.allclose(model.encode(MOLECULES[:2]), vectors[:2])
    with pytest.raises(Exception, match="pooling must be mean or last"):
        load_model(f"openai:e,base_url={server.base_url},pooling=max", "encoder")


def test_robustness_evaluate_with_3072_numbers_in_batches_of_32(server, cli, tmp_path, isolated_home):
    server.embedding_dim, server.embedding_noise = 3072, 0.01
    molecules = [f"{smiles}{'C' * i}" for i in range(5) for smiles in MOLECULES]  # 40 molecules
    path = tmp_path / "molecules.csv"
    path.write_text("SMILES\n" + "\n".join(molecules) + "\n")
    out = tmp_path / "result.json"
    outcome = cli("robustness", "evaluate", "--model", f"openai:e,base_url={server.base_url},batch=32", "--dataset",
                  path, "--augmentations", "kekulize", "--bootstrap", "0", "--out", out)
    assert outcome.code == 0, outcome.stdout + outcome.stderr
    result = json.loads(out.read_text())
    assert result["n"] == 40 and result["requests"]["failed"] == 0
    sizes = [len(r["input"]) for r in server.embedding_requests()]
    assert max(sizes) == 32 and sum(sizes) == result["requests"]["new"]
    # the same numbers as the server's vectors scored as precomputed embeddings
    kekule = robustness.augment(molecules, "kekulize").smiles
    direct = robustness.evaluate(np.array([hashed_embedding(s, 3072, 0.01) for s in molecules]),
                                 np.array([hashed_embedding(s, 3072, 0.01) for s in kekule]), bootstrap=0)
    for key in ("o2a_acc@1", "o2a_mrr", "a2o_acc@1", "a2o_mrr"):
        assert result["metrics"][f"kekulize/{key}"] == pytest.approx(direct.metrics[key], abs=1e-6)


def test_the_assay_robustness_tasks_with_3072_numbers_in_batches_of_32(server, tmp_path, isolated_home):
    from chemassay.assaying import assay

    server.embedding_dim, server.embedding_noise = 3072, 0.01
    report = assay(f"openai:e,base_url={server.base_url},batch=32", suites=["robustness"], quick=True,
                   out=tmp_path / "assay")
    assert [task.status for task in report.suites[0].tasks] == ["done", "done"]
    assert all(result.requests.failed == 0 and result.requests.new > 32 for result in report.results)
    assert max(len(r["input"]) for r in server.embedding_requests()) == 32
