"""The Python API (``chemassay.generation``): the same numbers as the CLI, the Result
contract (model, per-item scores, intervals), one Novelty default, one file reader."""

from __future__ import annotations

import inspect
import json
import math
from pathlib import Path

import chemassay.generation as generation
import numpy as np
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.runtime.files import sha256_file
from chemassay.suites.generation import metrics as metrics_module
from support.logs import expect_message

pytest.importorskip("fcd_torch", reason="FCD needs the torch extra")

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"
TEST_STATS = DATA / "moses_test_300.stats.npz"
SCAFFOLD_STATS = DATA / "moses_test_scaffolds_300.stats.npz"
TRAIN = DATA / "moses_train_2000.txt"


@pytest.fixture(scope="module")
def gen_file(tmp_path_factory) -> Path:
    lines = (DATA / "moses_gen_310.txt").read_text().splitlines()[:41]  # header + 40 strings
    path = tmp_path_factory.mktemp("gen") / "gen.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def from_file(gen_file):
    with expect_message("unique@1000"):
        return generation.evaluate(gen_file, reference=TEST_STATS, scaffold_test=SCAFFOLD_STATS, train=TRAIN)


def test_list_file_and_cli_give_the_same_numbers(from_file, gen_file, cli, tmp_path):
    smiles = gen_file.read_text().split()[1:]
    with expect_message("Can't compute unique@"):
        from_list = generation.evaluate(smiles, reference=TEST_STATS, scaffold_test=SCAFFOLD_STATS, train=TRAIN)
    assert from_list.metrics == from_file.metrics
    assert from_list.intervals == from_file.intervals
    out = tmp_path / "r.json"
    outcome = cli("generation", "evaluate", gen_file, "--test", TEST_STATS, "--scaffold-test", SCAFFOLD_STATS,
                  "--train", TRAIN, "--out", out, "--no-plot")
    assert outcome.code == 0, outcome.stderr
    written = json.loads(out.read_text())
    assert written["metrics"] == pytest.approx(from_file.metrics)
    assert written["intervals"] == {k: v.model_dump() for k, v in from_file.intervals.items()}
    # compute_metrics is the same computation without the Result around it
    assert inspect.signature(generation.compute_metrics).parameters.keys() <= (
        inspect.signature(generation.evaluate).parameters.keys() | {"samples"})


def test_result_contract(from_file, gen_file):
    result = from_file
    assert result.suite == "generation" and result.task == "evaluate"
    assert result.model.kind == "predictions" and result.model.checksum == sha256_file(gen_file)
    counts = result.details.counts
    assert counts.input == 40 and len(result.item_ids) == 40
    assert result.n == counts.valid and len(result.skipped) == counts.invalid > 0
    assert all(item.line == item.index + 2 for item in result.skipped)  # the file's header is line 1
    assert result.dataset.name == "moses_test_300" and result.config["train"] == str(TRAIN)
    assert {ref.path for ref in result.inputs} == {str(gen_file), str(TEST_STATS), str(SCAFFOLD_STATS), str(TRAIN)}
    assert set(result.item_scores) == {"valid", "SNN/Test", "SNN/TestSF", "Filters", "Novelty"}
    for key, values in result.item_scores.items():
        assert len(values) == 40
        scored = [v for v in values if v is not None]
        assert np.mean(scored) == pytest.approx(result.metrics[key], abs=1e-12), key
        interval = result.intervals[key]
        assert interval.low <= result.metrics[key] <= interval.high
        # valid, Filters and Novelty are proportions (Wilson); SNN a bootstrap over molecules
        assert interval.method == "wilson" if key in {"valid", "Filters", "Novelty"} else interval.resamples == 1000
    # Novelty counts each distinct molecule once; Filters and SNN every valid one.
    assert sum(v is not None for v in result.item_scores["Novelty"]) == counts.unique_valid
    assert sum(v is not None for v in result.item_scores["Filters"]) == counts.valid


def test_novelty_has_one_default_everywhere():
    """``metrics.evaluate(train=None)`` silently dropped Novelty while ``compute_metrics``
    included it: every entry point now defaults to the MOSES training split."""
    for function in (metrics_module.evaluate_samples, metrics_module.compute_metrics, generation.evaluate,
                     generation.compute_metrics):
        assert inspect.signature(function).parameters["train"].default == "moses", function.__qualname__
    assert metrics_module.DEFAULT_TRAIN == "moses"


def test_one_reader_rule_for_evaluate_and_filter(tmp_path):
    table = tmp_path / "gen.csv"
    table.write_text("id,SMILES\n1,CCO\n2,\n3,c1ccccc1O\n4,C1CC\n")
    with expect_message("Can't compute unique@"):
        scored = generation.evaluate(table, reference=TEST_STATS, scaffold_test=None, train=None, bootstrap=0)
    filtered = generation.filter(table)
    assert scored.details.counts.input == filtered.n == 4
    assert [(item.line, item.reason) for item in scored.skipped] == [
        (3, "invalid SMILES: empty string"), (5, "invalid SMILES: SMILES syntax error"),
    ]
    assert [(item.line, item.reason) for item in filtered.skipped] == [
        (3, "unparseable SMILES: empty string"), (5, "unparseable SMILES: SMILES syntax error"),
    ]


def test_bad_calls_are_clear_errors(tmp_path):
    with pytest.raises(UserInputError, match="not both and not neither"):
        generation.evaluate()
    with pytest.raises(UserInputError, match="not both"):
        generation.evaluate(["CCO"], model="ngram")
    with pytest.raises(UserInputError, match="the list is empty"):
        generation.evaluate([], reference=TEST_STATS)
    with pytest.raises(UserInputError, match="no such reference SMILES file"):
        generation.evaluate(["CCO"], reference=tmp_path / "missing.txt")
    with pytest.raises(UserInputError, match="--n must be"):
        generation.sample("ngram", 0)
    with pytest.raises(UserInputError, match="hmm needs an argument, hmm:DIR"):
        generation.sample("hmm", 5)  # a learned kind: trained into a folder first
    with pytest.raises(UserInputError, match="cpu or cuda"):
        generation.evaluate(["CCO"], device="tpu")



def test_common_options_by_name_or_as_one_object(gen_file):
    from chemassay.contract import Options

    sets = {"reference": TEST_STATS, "scaffold_test": None, "train": None}
    with expect_message("Can't compute unique@"):
        by_name = generation.evaluate(gen_file, **sets, bootstrap=20, seed=2, limit=12)
        as_object = generation.evaluate(gen_file, **sets, options=Options(bootstrap=20, seed=2, limit=12))
        from_list = generation.evaluate(gen_file.read_text().split()[1:13], **sets, bootstrap=20, seed=2)
    assert by_name.metrics == as_object.metrics == from_list.metrics and by_name.intervals == as_object.intervals
    assert by_name.details.counts.input == 12 and by_name.config["limit"] == 12 and by_name.config["bootstrap"] == 20
    assert "limit" not in from_list.config
    with pytest.raises(TypeError):  # the old names are gone, not aliases
        generation.evaluate(["CCO"], test=TEST_STATS)
    with pytest.raises(UserInputError, match="limit must be"):
        generation.evaluate(["CCO"], **sets, limit=0)


class Drawing:
    """A generator object that records its calls; slots 1 and 3 are failed requests."""

    def __init__(self, answer=("CCO", "", "c1ccccc1O", "", "C1CC", "CCN")):
        self.answer, self.calls, self.failures = list(answer), [], {}

    def sample(self, n, seed=0):
        self.calls.append((n, seed))
        self.failures = {i: "request failed: HTTP 500" for i in (1, 3) if i < n}
        return (self.answer * n)[:n]


def test_a_model_is_sampled_through_the_run_pipeline():
    from chemassay.contract import Options

    model = Drawing()
    sets = {"reference": TEST_STATS, "scaffold_test": None, "train": None}
    with expect_message("Can't compute unique@"):
        result = generation.evaluate(model=model, n=30, limit=5, seed=4, options=Options(seed=1, bootstrap=0), **sets)
    assert model.calls == [(5, 4)]  # the first limit slots, with the keyword's seed over the object's
    assert result.config["n"] == 5 and result.config["seed"] == 4 and result.details.counts.input == 5
    assert result.model.kind == "python" and result.model.spec.endswith(":Drawing")  # named by the run
    # each failed request once, with its reason (the run's failures are not listed a second time)
    assert [(item.index, item.reason) for item in result.skipped] == [
        (1, "request failed: HTTP 500"), (3, "request failed: HTTP 500"), (4, "invalid SMILES: SMILES syntax error"),
    ]
    assert any("requests to the model failed" in warning for warning in result.details.warnings)
    assert generation.sample(model, 3, 7) == ["CCO", "", "c1ccccc1O"] and model.calls[-1] == (3, 7)
    with pytest.raises(UserInputError, match="expected a list of 2 strings"):
        generation.sample(Drawing(answer=(1, 2)), 2)

def test_filter_and_split_results(tmp_path):
    molecules = (DATA / "moses_train_2000.txt").read_text().split()[1:201] + ["C[N+](C)(C)C", "CCO"]
    filtered = generation.filter(molecules, out=tmp_path / "kept.txt")
    assert filtered.task == "filter" and filtered.metrics["n_input"] == 202
    assert filtered.metrics["removed/charge"] == 1
    assert filtered.metrics["n_kept"] == len((tmp_path / "kept.txt").read_text().splitlines())
    assert filtered.dataset.name == "list of 202 SMILES"
    parts = generation.split(molecules, tmp_path / "split", seed=3)
    assert parts.task == "split"
    assert parts.metrics["n_train"] + parts.metrics["n_test"] + parts.metrics["n_test_scaffolds"] == 202
    manifest = json.loads((tmp_path / "split" / "manifest.json").read_text())
    assert manifest["sizes"] == {"train": parts.metrics["n_train"], "test": parts.metrics["n_test"],
                                 "test_scaffolds": parts.metrics["n_test_scaffolds"]}


def test_intervals_can_be_turned_off(gen_file):
    with expect_message("Can't compute unique@"):
        result = generation.evaluate(gen_file, reference=TEST_STATS, scaffold_test=None, train=None, bootstrap=0)
    assert result.intervals == {} and "Novelty" not in result.metrics and "SNN/TestSF" not in result.metrics
    assert not math.isnan(result.metrics["FCD/Test"])


def test_compute_metrics_is_evaluate_without_the_result():
    smiles = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "CCO", "xyz"]
    with expect_message("Can't compute unique@"):
        plain = generation.compute_metrics(smiles, reference=TEST_STATS, scaffold_test=None, train=["CCO"])
    with expect_message("Can't compute unique@"):
        full = generation.evaluate(smiles, reference=TEST_STATS, scaffold_test=None, train=["CCO"], bootstrap=0)
    assert plain == full.metrics and plain["valid"] == 0.8 and plain["Novelty"] == pytest.approx(2 / 3)
