"""A chat model behind a real OpenAI-compatible server (127.0.0.1) evaluated as a generator,
end to end: the Python API and the CLI, with small custom reference sets."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fcd_torch", reason="FCD needs the torch extra")


def same_metrics(written: dict, computed: dict) -> bool:
    """A result file's metrics (NaN written as null) equal the computed ones."""
    return written == {key: None if value != value else pytest.approx(value) for key, value in computed.items()}


def test_chat_model_is_evaluated_as_a_generator(openai_server, isolated_home, small_reference, tmp_path, cli):
    import chemassay.generation as generation

    spec = f"openai:chemist,base_url={openai_server.base_url},batch=8"
    result = generation.evaluate(model=spec, n=20, seed=0, reference=small_reference, scaffold_test=None,
                                 train=small_reference[:20], bootstrap=100)
    assert result.model.kind == "openai" and result.model.spec == spec
    assert result.model.parameters["model"] == "chemist"
    assert result.details.counts.input == 20 and result.metrics["valid"] == 1.0  # the server's SMILES are all valid
    assert result.metrics["Novelty"] == 1.0  # none of its 15 molecules is in the MOSES sample
    assert 0.0 < result.metrics["SNN/Test"] < 1.0 and result.metrics["FCD/Test"] > 0
    requests = openai_server.chat_requests()
    assert len(requests) == 3 and all("Write 8 different" in r["messages"][-1]["content"] or
                                      "Write 4 different" in r["messages"][-1]["content"] for r in requests)
    assert {r["temperature"] for r in requests} == {1.0}  # sampling, each request with its own seed
    assert len({r["seed"] for r in requests}) == 3

    reference = tmp_path / "ref.txt"
    reference.write_text("\n".join(small_reference) + "\n")
    train = tmp_path / "train.txt"
    train.write_text("\n".join(small_reference[:20]) + "\n")
    out = tmp_path / "chat.json"
    samples = tmp_path / "chat_samples.txt"
    outcome = cli("generation", "evaluate", "--model", spec, "--n", "20", "--seed", "0", "--samples", samples,
                  "--test", reference, "--scaffold-test", "none", "--train", train, "--out", out, "--no-plot")
    assert outcome.code == 0, outcome.stderr
    assert len(openai_server.chat_requests()) == 3  # the same prompts and seeds: answered from the cache
    written = json.loads(out.read_text())
    assert written["model"]["kind"] == "openai" and same_metrics(written["metrics"], result.metrics)
    assert len(samples.read_text().splitlines()) == 20


def test_prose_and_failed_requests_are_counted_as_invalid_samples(openai_server, isolated_home, small_reference):
    import chemassay.generation as generation

    spec = f"openai:chemist,base_url={openai_server.base_url},batch=5,retries=0"
    openai_server.responder = lambda body: "Sorry, I cannot help with that."
    result = generation.evaluate(model=spec, n=5, reference=small_reference, scaffold_test=None, train=None, bootstrap=0)
    # Every answer line is a sample, valid or not (as MOSES counts them): all five are invalid.
    assert result.metrics["valid"] == 0.0 and len(result.skipped) == 5
    assert all(item.reason.startswith("invalid SMILES") for item in result.skipped)
    openai_server.refuse_chat = True
    result = generation.evaluate(model=spec, n=5, seed=1, reference=small_reference, scaffold_test=None, train=None,
                                 bootstrap=0)
    # the samples a failed request should have given are invalid, listed with the request's reason
    assert result.metrics["valid"] == 0.0 and len(result.skipped) == 5
    assert all(item.reason.startswith("request failed: HTTP 404") for item in result.skipped)
    assert any("requests to the model failed" in warning for warning in result.details.warnings)
    assert result.requests.failed == 1 and result.requests.new == 0


def test_base_url_option_points_an_openai_spec_at_the_server(openai_server, isolated_home, tmp_path, cli):
    out = tmp_path / "samples.txt"
    outcome = cli("generation", "predict", "--model", "openai:chemist,batch=8", "--base-url", openai_server.base_url,
                  "--n", "8", "--seed", "0", "--out", out)
    assert outcome.code == 0, outcome.stderr
    assert len(out.read_text().splitlines()) == 8
    assert len(openai_server.chat_requests()) == 1
    manifest = json.loads((tmp_path / "samples.txt.manifest.json").read_text())
    assert f"base_url={openai_server.base_url}" in json.dumps(manifest)
    refused = cli("generation", "predict", "--model", "ngram", "--base-url", openai_server.base_url,
                  "--n", "8", "--out", tmp_path / "other.txt")
    assert refused.code == 2 and "--base-url is for openai: models" in refused.stderr
