"""The report's commands end to end: ``reference list``, ``compare``, the results store fed by
evaluating commands (``emit``), ``results list|show|export|rm|check`` and ``--no-store``."""

import json

from chemassay.contract.result import DatasetRef, Result


def _result(scores: dict, dataset_sha="a" * 64) -> Result:
    n = len(next(iter(scores.values())))
    metrics = {k: sum(v) / n for k, v in scores.items()}
    return Result(suite="reaction-ood", task="evaluate", metrics=metrics, n=n, item_ids=[f"rxn-{i}" for i in range(n)],
                  item_scores=scores, dataset=DatasetRef(name="schneider-50k", sha256=dataset_sha))


def test_reference_list_cli(cli):
    outcome = cli("reference", "list", "--suite", "generation", "--json")
    assert outcome.code == 0
    records = json.loads(outcome.stdout)
    assert {r["suite"] for r in records} == {"generation"} and all(r["published"] for r in records)
    vae = next(r for r in records if r["model"] == "VAE" and r["table"] == "Table 3")
    assert vae["metrics"]["FCD/Test"] == {"printed": "0.099 ± 0.013", "value": 0.099, "std": 0.013,
                                          "label": "FCD/Test", "paper_metric": "FCD/Test", "key": "FCD/Test",
                                          "unit": "value"}
    table = cli("reference", "list", "--suite", "reaction-ood", "--table", "S2.2")
    assert table.code == 0 and "on documents" in table.stdout and "top1_accuracy=0.58" in table.stdout
    bad = cli("reference", "list", "--suite", "nope")
    assert bad.code == 2 and "unknown suite" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_compare_cli(tmp_path, cli):
    a = _result({"top1_accuracy": [1, 1, 1, 0, 1, 1]})
    b = _result({"top1_accuracy": [0, 1, 0, 0, 0, 1]})
    a.write(tmp_path / "a.json")
    b.write(tmp_path / "b.json")
    outcome = cli("compare", tmp_path / "a.json", tmp_path / "b.json", "--resamples", "300", "--json",
                  "--out", tmp_path / "cmp.json")
    assert outcome.code == 0
    data = json.loads(outcome.stdout)
    assert data["metrics"][0]["mcnemar"] == {"a_only": 3, "b_only": 0, "p_value": 0.25}
    assert json.loads((tmp_path / "cmp.json").read_text()) == data
    other = _result({"top1_accuracy": [1, 1, 1, 0, 1, 1]}, dataset_sha="c" * 64)
    other.write(tmp_path / "other.json")
    refused = cli("compare", tmp_path / "a.json", tmp_path / "other.json")
    assert refused.code == 2 and "different datasets" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "Traceback" not in refused.stderr


def _score_files(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "tgt.txt").write_text("{2}O.{1}CO\n{1}CCO\n")
    (folder / "pred-good.txt").write_text("{2}O.{1}CO\n{1}CCO\n")
    (folder / "pred-bad.txt").write_text("{1}O.{1}CO\n{1}CCN\n")
    return folder


def test_evaluating_commands_record_their_results(store_home, tmp_path, cli):
    files = _score_files(tmp_path / "files")
    good = cli("stoichiometry", "evaluate", files / "pred-good.txt", files / "tgt.txt", "--out", tmp_path / "good.json")
    assert good.code == 0, good.stderr
    skipped = cli("--no-store", "stoichiometry", "evaluate", files / "pred-bad.txt", files / "tgt.txt")
    assert skipped.code == 0
    bad = cli("stoichiometry", "evaluate", files / "pred-bad.txt", files / "tgt.txt", "--out", tmp_path / "bad.json")
    assert bad.code == 0
    listing = cli("results", "list", "--json")
    runs = json.loads(listing.stdout)
    assert [run["model"] for run in runs] == ["pred-bad", "pred-good"]
    assert runs[1]["source"] == str(tmp_path / "good.json") and runs[1]["suite"] == "stoichiometry"
    shown = cli("results", "show", str(runs[1]["id"]), "--json")
    assert json.loads(shown.stdout)["metrics"]["EM"] == 1.0
    exported = cli("results", "export", "--out", tmp_path / "export")
    assert exported.code == 0 and len(list((tmp_path / "export").glob("*.json"))) == 2
    jsonl = cli("results", "export", "--suite", "stoichiometry", "--out", tmp_path / "all.jsonl")
    assert jsonl.code == 0 and len((tmp_path / "all.jsonl").read_text().splitlines()) == 2
    assert cli("results", "check").code == 0
    refused = cli("results", "rm")
    assert refused.code == 2 and "needs run ids or a filter" in refused.stderr
    removed = cli("results", "rm", "--model", "pred-bad")
    assert removed.code == 0 and "removed 1 run(s)" in removed.stdout
    assert [r["model"] for r in json.loads(cli("results", "list", "--json").stdout)] == ["pred-good"]


def test_a_broken_store_costs_a_warning_not_the_command(store_home, tmp_path, cli):
    store_home.mkdir(parents=True)
    (store_home / "results.sqlite").write_bytes(b"garbage" * 100)
    files = _score_files(tmp_path / "files")
    outcome = cli("stoichiometry", "evaluate", files / "pred-good.txt", files / "tgt.txt", "--out", tmp_path / "r.json")
    assert outcome.code == 0 and (tmp_path / "r.json").is_file()
    assert "warning: result not recorded in the results store" in outcome.stderr
    assert (store_home / "results.sqlite").read_bytes() == b"garbage" * 100
    listing = cli("results", "list")
    assert listing.code == 2 and "not an SQLite database" in listing.stderr
    assert len(listing.stderr.strip().splitlines()) == 1


def test_listing_without_a_store_is_empty(store_home, cli):
    outcome = cli("results", "list", "--json")
    assert outcome.code == 0 and json.loads(outcome.stdout) == []
    assert cli("results", "show", "1").code == 2
