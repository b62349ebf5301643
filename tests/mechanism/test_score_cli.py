"""``chemassay mechanism evaluate`` / ``predict`` / ``verify`` end to end on oMe-Gold."""

from __future__ import annotations

import json

import pytest

from chemassay.contract.result import read_result
from chemassay.suites.mechanism.baselines import gold_oracle, nearest_neighbour
from chemassay.suites.mechanism.data import omebench_file as bundled_path
from chemassay.suites.mechanism.retrieval import reaction_family


def write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_gold_oracle_scores_one_on_all_196(cli, tmp_path, gold_reactions):
    pred = write_jsonl(tmp_path / "oracle.jsonl", gold_oracle(gold_reactions))
    out = tmp_path / "oracle.json"
    result = cli("mechanism", "evaluate", pred, "--out", out)
    assert result.code == 0, result.stderr
    data = read_result(out)
    assert data.n == 196 and not data.skipped
    assert {k: data.metrics[k] for k in ("S_total", "S_partial", "V", "L")} == {"S_total": 1.0, "S_partial": 1.0, "V": 1.0, "L": 1.0}
    assert data.metrics["exact_mechanisms"] == 196
    extra = data.model_dump()["details"]
    assert set(extra["by_level"]) == {"easy", "medium", "hard"} and extra["by_level"]["hard"]["n"] == 23
    assert extra["alignment_tags"] == {"match": 858, "type_mismatch": 0, "skip_gold": 0, "skip_pred": 0}
    assert all(row["S_total"] == 1.0 for row in extra["reactions"])
    assert extra["by_type"]["proton_transfer"]["steps"] == 289 and extra["by_type"]["proton_transfer"]["match_rate"] == 1.0
    assert sum(v["n"] for v in extra["by_length"].values()) == 196
    assert data.dataset.name == "omebench" and data.setting == {"dataset": "gold"}  # a file's rows name no prompt
    assert [i.sha256 for i in data.inputs][0] == data.dataset.sha256
    assert "S_total" in result.stdout


def test_messy_prediction_file_is_reported_not_dropped(cli, tmp_path, gold_reactions):
    first, second, third = gold_reactions[:3]
    steps = gold_oracle([first])[0]["mechanism"]
    rows = [
        {"reaction_id": first.reaction_id, "response": "Sure:\n```json\n" + json.dumps(steps) + "\n```"},
        {"reaction_id": second.reaction_id, "response": "I am not sure what happens here."},
        "this line is not JSON",
        {"reaction_id": "NOPE-1", "mechanism": []},
        {"reaction_id": first.reaction_id, "mechanism": []},
        {"mechanism": []},
    ]
    pred = write_jsonl(tmp_path / "messy.jsonl", rows)
    out = tmp_path / "messy.json"
    result = cli("mechanism", "evaluate", pred, "--out", out)
    assert result.code == 0
    data = read_result(out).model_dump()
    assert data["n"] == 196
    reasons = {(s["line"], s["item"]): s["reason"] for s in data["skipped"]}
    assert reasons[(4, "NOPE-1")] == "reaction_id not among the gold reactions scored"
    assert reasons[(5, first.reaction_id)].startswith("repeated reaction_id (line 1")
    assert reasons[(6, None)] == "no reaction_id"
    assert "not valid JSON" in reasons[(3, None)]
    assert reasons[(2, second.reaction_id)] == "unparsed prediction: no JSON list of steps found in the response (scored 0)"
    missing = [s["item"] for s in data["skipped"] if s["reason"].startswith("no prediction:")]
    assert len(missing) == 194 and third.reaction_id in missing
    rows_by_id = {r["reaction_id"]: r for r in data["details"]["reactions"]}
    assert rows_by_id[first.reaction_id]["S_total"] == 1.0 and rows_by_id[first.reaction_id]["repairs"] == {"code_fence": 1}
    assert rows_by_id[second.reaction_id]["status"] == "unparsed" and rows_by_id[second.reaction_id]["V"] == 0.0
    assert rows_by_id[third.reaction_id]["status"] == "missing" and rows_by_id[third.reaction_id]["alignment"] == ["skip_gold"] * len(third.steps)
    assert data["metrics"]["S_total"] == pytest.approx(1 / 196)
    assert data["metrics"]["n_unparsed"] == 1 and data["metrics"]["n_missing"] == 194


def test_round_and_strict_reproduce_the_published_tool(cli, tmp_path, gold_reactions):
    reaction = gold_reactions[0]  # NR-001
    steps = [
        {"step": 1, "type": "proton_transfer", "subtype": "acid_base_proton_transfer", "intermediate_smiles": "[CH2-]C=O"},
        {"step": 2, "type": "addition", "subtype": "nucleophilic_addition", "intermediate_smiles": "CC([O-])CC=O"},
        {"step": 3, "type": "addition", "subtype": "nucleophilic_addition", "intermediate_smiles": "CC(O)CC=O"},
    ]
    typeless = [{"type": "proton_transfer", "intermediate_smiles": "[CH2-]C=O"}]
    pred = write_jsonl(tmp_path / "p.jsonl", [
        {"reaction_id": reaction.reaction_id, "mechanism": steps},
        {"reaction_id": gold_reactions[1].reaction_id, "mechanism": typeless},
    ])
    lenient, strict = tmp_path / "lenient.json", tmp_path / "strict.json"
    assert cli("mechanism", "evaluate", pred, "--out", lenient).code == 0
    assert cli("mechanism", "evaluate", pred, "--out", strict, "--round", "2", "--strict").code == 0
    rows_l = {r["reaction_id"]: r for r in read_result(lenient).model_dump()["details"]["reactions"]}
    rows_s = {r["reaction_id"]: r for r in read_result(strict).model_dump()["details"]["reactions"]}
    assert rows_l["NR-001"]["S_total"] == pytest.approx(0.8285714285714285)
    assert (rows_s["NR-001"]["S_total"], rows_s["NR-001"]["L"]) == (0.83, 0.67)
    # a step without subtype: repaired (the type has one subtype) leniently, a zero for the published tool
    assert rows_l["NR-002"]["status"] == "scored" and rows_l["NR-002"]["repairs"]["subtype_inferred_from_type"] == 1
    assert rows_s["NR-002"]["status"] == "unparsed" and rows_s["NR-002"]["S_total"] == 0.0
    assert read_result(strict).config["round"] == 2 and read_result(strict).config["strict"] is True


def test_evaluate_bad_inputs_exit_2(cli, tmp_path):
    missing = cli("mechanism", "evaluate", tmp_path / "nope.jsonl")
    assert missing.code == 2 and "no such prediction file" in missing.stderr
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    result = cli("mechanism", "evaluate", junk)
    assert result.code == 2 and "not oMeBench JSON" in result.stderr
    assert cli("mechanism", "evaluate", junk, "--tau", "1.5").code == 2
    assert "Traceback" not in result.stderr


def test_baseline_through_the_cli_and_plots(cli, tmp_path):
    out = tmp_path / "oracle.jsonl"
    result = cli("mechanism", "evaluate", "--model", "gold-oracle", "--predictions-out", out, "--out", tmp_path / "r.json")
    assert result.code == 0 and read_result(tmp_path / "r.json").metrics["S_total"] == 1.0
    assert cli("mechanism", "predict", "gold", "--model", "magic", "--out", tmp_path / "magic.jsonl").code == 2
    plots = tmp_path / "plots"
    assert cli("mechanism", "evaluate", out, "--plots", plots).code == 0
    assert sorted(p.name for p in plots.iterdir()) == ["oracle_accuracy_by_type.png", "oracle_score_by_length.png"]


def test_nearest_neighbour_never_uses_the_query_family(gold_reactions, template_index):
    rows = nearest_neighbour(gold_reactions, template_index)
    assert len(rows) == 196
    for reaction, row in zip(gold_reactions, rows, strict=True):
        neighbour = row["neighbour"]["reaction_id"]
        assert reaction_family(neighbour) != reaction_family(reaction.reaction_id)
        assert {s["intermediate_smiles"] for s in row["mechanism"]} == {reaction.products[0]}
        analogue = template_index.pool[[r.reaction_id for r in template_index.pool].index(neighbour)]
        assert [s["subtype"] for s in row["mechanism"]] == [s.subtype for s in analogue.steps]


def test_verify_cli(cli, tmp_path):
    out = tmp_path / "v.json"
    gold = cli("mechanism", "verify", "gold", "--out", out)
    assert gold.code == 1 and "step_numbering" in gold.stdout
    data = read_result(out).model_dump()
    assert data["metrics"]["errors"] == 4 and len(data["details"]["problems"]) == 4
    assert data["inputs"][0]["path"] == str(bundled_path("gold"))
    clean = tmp_path / "clean.jsonl"
    step = {"step": 1, "type": "addition", "subtype": "nucleophilic_addition", "intermediate_smiles": "CCO"}
    write_jsonl(clean, [{"reaction_id": "a", "level": "easy", "reactants_smiles": ["CC=O"], "products_smiles": ["CCO"], "mechanism": [step]}])
    assert cli("mechanism", "verify", clean).code == 0
    assert cli("mechanism", "verify", tmp_path / "none.json").code == 2


def test_taxonomy_cli(cli):
    result = cli("mechanism", "taxonomy", "--data", "template")
    assert result.code == 0
    assert "migratory insertion" in result.stdout and "lewis_acid_base_coordination" in result.stdout
