import json

import numpy as np
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.report import Result, SkippedItem, input_ref, read_result


def test_result_round_trip_and_contract_fields(tmp_path):
    data = tmp_path / "pred.txt"
    data.write_text("CCO\n")
    result = Result(
        suite="generation", task="metrics",
        metrics={"valid": np.float64(0.5), "FCD/Test": float("nan"), "n_input": np.int64(3)},
        n=2, skipped=[SkippedItem(line=4, reason="invalid SMILES")],
        inputs=[input_ref(data)], config={"seed": 0}, elapsed_s=0.25, setting={"dataset": "moses", "none": None},
    )
    path = result.write(tmp_path / "out" / "result.json")
    raw = json.loads(path.read_text())
    for key in ("suite", "task", "metrics", "n", "skipped", "dataset", "setting", "quick", "inputs", "config",
                "versions", "elapsed_s", "details"):
        assert key in raw
    assert raw["metrics"] == {"valid": 0.5, "FCD/Test": None, "n_input": 3}
    assert set(raw["versions"]) >= {"chemassay", "rdkit", "python"}
    assert raw["setting"] == {"dataset": "moses"} and raw["quick"] is False and raw["details"] is None
    again = read_result(path)
    assert again.n == 2 and again.skipped[0].line == 4
    assert "generation / metrics" in again.summary()


def test_the_schema_is_closed(tmp_path):
    """A field the schema does not declare is refused, on building and on reading; per-suite
    fields live in the suite's typed details."""
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="per_item"):
        Result(suite="generation", task="evaluate", metrics={}, n=0, per_item=[{"smiles": "CCO"}])
    with pytest.raises(ValidationError, match="index_of"):
        SkippedItem(reason="x", index_of=3)
    # every part of the result is closed, not only the top level
    from chemassay.contract import DatasetRef, InputRef, Interval, ModelRef, RequestSummary

    for part, fields in [(DatasetRef, {"name": "moses"}), (InputRef, {"path": "x.txt"}),
                         (Interval, {"low": 0.1, "high": 0.2}), (RequestSummary, {}),
                         (ModelRef, {"spec": "s", "name": "n", "kind": "k"})]:
        with pytest.raises(ValidationError, match="misspelt"):
            part(**fields, misspelt=1)
    path = tmp_path / "extra.json"
    raw = json.loads(Result(suite="generation", task="evaluate", metrics={}, n=0).to_json())
    path.write_text(json.dumps({**raw, "breakdowns": {}}))
    with pytest.raises(UserInputError, match="breakdowns"):
        read_result(path)
    raw["details"] = {"not_a_field": 1}
    path.write_text(json.dumps(raw))
    with pytest.raises(UserInputError, match="field .details"):
        read_result(path)


def test_make_result_fills_timing_inputs_and_model_identity(tmp_path):
    import time

    from chemassay.contract.result import make_result

    data = tmp_path / "samples.txt"
    data.write_text("CCO\n")

    class Sampler:
        name = "sampler"

        def sample(self, n, seed=0):
            return ["CCO"] * n

        def describe(self):
            return {"temperature": 1.0}

    started = time.perf_counter() - 2.0
    from chemassay.models.identity import model_ref

    with pytest.raises(TypeError, match="model_ref"):  # the contract imports no layer above it
        make_result("generation", "evaluate", metrics={"valid": 1.0}, n=1, model=Sampler())
    result = make_result("generation", "evaluate", metrics={"valid": 1.0}, n=1,
                         model=model_ref(Sampler(), "python:my:Sampler"),
                         inputs=[data, tmp_path / "not-written.txt"], started=started)
    assert result.elapsed_s >= 2.0
    assert result.model.spec == "python:my:Sampler" and result.model.name == "sampler"
    assert result.model.parameters == {"temperature": 1.0} and len(result.model.checksum) == 64
    assert result.inputs[0].sha256 == input_ref(data).sha256 and result.inputs[1].sha256 is None



def test_make_result_lists_each_failed_item_of_the_run_once():
    """A failed item the suite lists itself (by line, or by ``index`` where lines do not apply)
    with the run's reason is not listed again; the others are added from the run."""
    from chemassay.contract import Run
    from chemassay.contract.result import make_result

    done = Run(protocol="generator", items=[0, 1, 2, 3], outputs=["CCO", "", "", ""],
               failures={1: "request failed: HTTP 404", 2: "request failed: HTTP 404", 3: "timeout"})
    listed = [SkippedItem(item="", index=1, reason="request failed: HTTP 404"),
              SkippedItem(line=3, item="", reason="request failed: HTTP 404")]
    result = make_result("generation", "evaluate", metrics={}, n=1, run=done, skipped=listed)
    assert [(entry.line, entry.index, entry.reason) for entry in result.skipped] == [
        (None, 1, "request failed: HTTP 404"), (3, None, "request failed: HTTP 404"), (4, None, "timeout"),
    ]


def test_make_result_lists_a_runs_failures_unless_the_suite_does(isolated_home):
    from chemassay.contract.result import make_result
    from chemassay.models import from_callable, run

    def predict(reactants, k):
        return [["CCO"] for _ in reactants]

    model = from_callable(predict, "reaction-predictor")
    done = run(model, "reaction-predictor", ["CC.O", "CN"], {"k": 1})
    done.failures = {1: "request failed: timeout"}
    listed = make_result("reaction-ood", "evaluate", metrics={}, n=2, run=done)
    assert [(s.line, s.item, s.reason) for s in listed.skipped] == [(2, "CN", "request failed: timeout")]
    assert listed.model == done.model
    own = [SkippedItem(line=3, item="r2", index=1, reason="the model failed (timeout); scored as wrong")]
    left = make_result("reaction-ood", "evaluate", metrics={}, n=2, run=done, list_failures=False, skipped=own)
    assert left.skipped == own and left.model == done.model


def test_reading_a_non_result_is_a_user_error(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(UserInputError):
        read_result(bad)
    with pytest.raises(UserInputError):
        read_result(tmp_path / "missing.json")
