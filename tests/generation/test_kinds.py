"""The ngram and combinatorial baselines as generator model kinds: specs, training on first
use, the cached default model, checkpoints of the wrong kind or damaged, and the CLI verbs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chemassay.contract.errors import UserInputError
from chemassay.models import check_model, load_model, model_ref
from chemassay.runtime.files import sha256_file
from support.logs import chemassay_messages

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"
REFERENCE_NGRAM = (DATA / "reference_ngram_seed0.txt").read_text().splitlines()


@pytest.fixture(scope="module")
def ngram_file(tmp_path_factory) -> Path:
    import chemassay.generation as generation

    path = tmp_path_factory.mktemp("models") / "ngram.npz"
    generation.train(f"ngram:{path}", DATA / "moses_train_2000.txt")
    return path


@pytest.fixture(scope="module")
def combinatorial_file(tmp_path_factory) -> Path:
    import chemassay.generation as generation

    path = tmp_path_factory.mktemp("models") / "comb.json.gz"
    generation.train(f"combinatorial:{path}", DATA / "moses_train_2000.txt", limit=300)
    return path


def same_metrics(written: dict, computed: dict) -> bool:
    """A result file's metrics (NaN written as null) equal the computed ones."""
    return written == {key: None if value != value else pytest.approx(value) for key, value in computed.items()}


def test_ngram_kind_samples_the_reference_draw_for_draw(ngram_file):
    generator = load_model(f"ngram:{ngram_file}", "generator")
    # The reference's NGram(10) trained on the same molecules draws these with seed 0.
    assert generator.sample(25, seed=0)[:20] == REFERENCE_NGRAM
    ref = model_ref(generator)
    assert ref.kind == "ngram" and ref.checksum == sha256_file(ngram_file)
    assert ref.parameters["n_train"] == 2000 and ref.parameters["context_len"] == 10
    assert ref.parameters["train_sha256"] == sha256_file(DATA / "moses_train_2000.txt")


@pytest.mark.parametrize("kind", ["ngram", "combinatorial"])
def test_baselines_pass_the_generator_contract(kind, ngram_file, combinatorial_file):
    path = ngram_file if kind == "ngram" else combinatorial_file
    report = check_model(f"{kind}:{path}", "generator")
    assert report.passed, report.summary()


def test_train_on_first_use_then_reuse(tmp_path, isolated_home):
    target = tmp_path / "new" / "comb.json.gz"
    spec = f"combinatorial:{target},train={DATA / 'moses_train_2000.txt'},limit=200,join=moses"
    with chemassay_messages() as messages:
        first = load_model(spec, "generator")
    assert target.is_file() and any("training it" in m for m in messages)
    assert first.model.info["n_train"] == 200 and first.sampling == {"join": "moses"}
    with chemassay_messages() as messages:
        again = load_model(spec, "generator")
    assert not any("training" in m for m in messages)
    assert again.sample(5, seed=3) == first.sample(5, seed=3)


def test_missing_file_without_train_is_a_clear_error(tmp_path):
    with pytest.raises(UserInputError, match="no such n-gram model file.*train=SET"):
        load_model(f"ngram:{tmp_path / 'missing.npz'}", "generator")
    with pytest.raises(UserInputError, match="unknown option"):
        load_model(f"ngram:{tmp_path / 'missing.npz'},jion=valid", "generator")
    with pytest.raises(UserInputError, match="join must be one of"):
        load_model("combinatorial:x.json.gz,join=sometimes", "generator")


def test_cached_default_model_is_trained_once_and_rebuilt_when_damaged(isolated_home, logged):
    spec = f"ngram:train={DATA / 'moses_train_2000.txt'},limit=500,context_len=4"
    with chemassay_messages() as messages:
        first = load_model(spec, "generator")
    assert any("training the n-gram baseline" in m for m in messages)
    entry = first.path
    assert entry.is_relative_to(isolated_home / "cache" / "generation" / "models")
    samples = first.sample(30, seed=1)
    with chemassay_messages() as messages:
        assert load_model(spec, "generator").sample(30, seed=1) == samples
    assert not any("training" in m for m in messages)
    entry.write_bytes(entry.read_bytes()[: entry.stat().st_size // 2])  # truncated: once a BadZipFile forever
    with chemassay_messages() as messages:
        rebuilt = load_model(spec, "generator")
    said = logged.read() + "\n".join(messages)
    assert "not usable" in said and "training the n-gram baseline" in said
    assert rebuilt.sample(30, seed=1) == samples


def test_another_kind_or_a_damaged_checkpoint_is_one_line_exit_2(cli, tmp_path, ngram_file, combinatorial_file):
    out = tmp_path / "s.txt"
    wrong = cli("generation", "predict", "--model", f"ngram:{combinatorial_file}", "--n", "5", "--out", out)
    assert wrong.code == 2 and "holds a combinatorial model, not an n-gram one" in wrong.stderr
    assert f"--model combinatorial:{combinatorial_file}" in wrong.stderr
    assert len(wrong.stderr.strip().splitlines()) == 1
    wrong = cli("generation", "predict", "--model", f"combinatorial:{ngram_file}", "--n", "5", "--out", out)
    assert wrong.code == 2 and "holds an n-gram model, not a combinatorial one" in wrong.stderr
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(ngram_file.read_bytes()[:5000])
    broken = tmp_path / "broken.json.gz"
    broken.write_bytes(combinatorial_file.read_bytes()[:-40])
    for spec in (f"ngram:{truncated}", f"combinatorial:{broken}"):
        outcome = cli("generation", "predict", "--model", spec, "--n", "5", "--out", out)
        assert outcome.code == 2 and "damaged" in outcome.stderr, outcome.stderr
        assert len(outcome.stderr.strip().splitlines()) == 1 and "Traceback" not in outcome.stderr
    assert not out.exists()


@pytest.mark.parametrize("n", ["0", "-3"])
def test_n_below_one_exits_2(cli, tmp_path, ngram_file, n):
    outcome = cli("generation", "predict", "--model", f"ngram:{ngram_file}", "--n", n, "--out", tmp_path / "s.txt")
    assert outcome.code == 2 and "--n must be" in outcome.stderr
    outcome = cli("generation", "evaluate", "--model", f"ngram:{ngram_file}", "--n", n)
    assert outcome.code == 2 and "--n must be" in outcome.stderr


def test_samples_are_those_of_the_pre_contract_sample_command(tmp_path, ngram_file):
    # sha256 of `chemassay generation sample ngram --n 300 --seed 3` written by the code before
    # the contract change (same 2,000 training molecules): nothing about the draws changed.
    import chemassay.generation as generation

    out = tmp_path / "ng300.txt"
    generation.sample(f"ngram:{ngram_file}", 300, 3, out=out)
    assert sha256_file(out) == "b415354c0b50241b1385cc579382950c14ab8a634c003867f0973ac7168b0f6a"


def test_predict_writes_the_reference_samples(cli, tmp_path, ngram_file):
    new = tmp_path / "new.txt"
    assert cli("generation", "predict", "--model", f"ngram:{ngram_file}", "--n", "25", "--out", new).code == 0
    assert new.read_text().splitlines()[:20] == REFERENCE_NGRAM
    manifest = json.loads((tmp_path / "new.txt.manifest.json").read_text())
    assert manifest["model"]["kind"] == "ngram" and manifest["model"]["checksum"] == sha256_file(ngram_file)
    assert manifest["files"]["new.txt"]["sha256"] == sha256_file(new)


def test_train_command(cli, tmp_path):
    new = tmp_path / "a.npz"
    outcome = cli("generation", "train", "--model", f"ngram:{new},context_len=3", "--train",
                  DATA / "moses_train_2000.txt", "--limit", "100")
    assert outcome.code == 0, outcome.stderr
    assert f"--model ngram:{new}" in outcome.stdout
    trained = load_model(f"ngram:{new}", "generator")
    assert trained.model.max_context_len == 3
    assert trained.sample(10, seed=2) == trained.sample(10, seed=2)
    missing = cli("generation", "train", "--train", DATA / "moses_train_2000.txt")
    assert missing.code == 2 and "--model ngram:PATH" in missing.stderr
    assert cli("generation", "train", "--model", "openai:gpt").code == 2


def test_evaluate_samples_a_model_first(cli, tmp_path, ngram_file, small_reference, isolated_home):
    import chemassay.generation as generation

    reference = tmp_path / "ref.txt"
    reference.write_text("\n".join(small_reference) + "\n")
    samples = tmp_path / "drawn.txt"
    result = generation.evaluate(model=f"ngram:{ngram_file}", n=40, seed=0, reference=small_reference,
                                 scaffold_test=None, train=DATA / "moses_train_2000.txt", out=samples,
                                 bootstrap=100)
    assert result.task == "evaluate" and result.model.kind == "ngram"
    assert result.model.checksum == sha256_file(ngram_file)
    assert result.config["n"] == 40 and result.config["seed"] == 0
    assert samples.read_text().splitlines()[:20] == REFERENCE_NGRAM
    assert result.details.counts.input == 40 and len(result.item_ids) == 40
    out = tmp_path / "r.json"
    outcome = cli("generation", "evaluate", "--model", f"ngram:{ngram_file}", "--n", "40", "--test", reference,
                  "--scaffold-test", "none", "--train", DATA / "moses_train_2000.txt", "--out", out, "--no-plot")
    assert outcome.code == 0, outcome.stderr
    written = json.loads(out.read_text())
    assert same_metrics(written["metrics"], result.metrics)
    assert written["model"]["spec"] == f"ngram:{ngram_file}"
