import json

import numpy as np
import pytest

from chemassay.errors import UserInputError
from chemassay.report import Result, SkippedItem, input_ref, read_result


def test_result_round_trip_and_contract_fields(tmp_path):
    data = tmp_path / "pred.txt"
    data.write_text("CCO\n")
    result = Result(
        suite="generation", task="metrics",
        metrics={"valid": np.float64(0.5), "FCD/Test": float("nan"), "n_input": np.int64(3)},
        n=2, skipped=[SkippedItem(line=4, reason="invalid SMILES")],
        inputs=[input_ref(data)], config={"seed": 0}, elapsed_s=0.25,
        per_item=[{"smiles": "CCO", "ok": True}],
    )
    path = result.write(tmp_path / "out" / "result.json")
    raw = json.loads(path.read_text())
    for key in ("suite", "task", "metrics", "n", "skipped", "dataset", "inputs", "config", "versions", "elapsed_s"):
        assert key in raw
    assert raw["metrics"] == {"valid": 0.5, "FCD/Test": None, "n_input": 3}
    assert set(raw["versions"]) >= {"chemassay", "rdkit", "python"}
    assert raw["per_item"][0]["smiles"] == "CCO"
    again = read_result(path)
    assert again.n == 2 and again.skipped[0].line == 4
    assert "generation / metrics" in again.summary()


def test_reading_a_non_result_is_a_user_error(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(UserInputError):
        read_result(bad)
    with pytest.raises(UserInputError):
        read_result(tmp_path / "missing.json")
