"""The suite's declared results and its part in ``chemassay assay``: typed details that survive
a round trip through a file (undeclared fields refused), the dataset and setting read from a
built folder's manifest, the published row that setting selects in the scorecard, and the
assay's tasks on the quick subset (built-in baseline, resume, a chat model answering Table 2)."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from pydantic import ValidationError

from chemassay import stoichiometry
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import Result, read_result
from chemassay.suites.stoichiometry.details import BalanceDetails, BuildDetails, EvaluateDetails


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """formula_t1_x1 built from the first 40 reactions of each USPTO-15K split, in a folder whose
    name says nothing (the setting must come from the manifest)."""
    folder = tmp_path_factory.mktemp("built") / "anything"
    result = stoichiometry.build("uspto-15k", folder, encoding="formula", task="t1", aug=1, limit=40)
    return folder, result


def test_every_task_keeps_its_typed_details_through_a_file(built, tmp_path):
    folder, build_result = built
    balance_result = stoichiometry.balance("uspto-15k", splits=["test"], limit=20)
    evaluate_result = stoichiometry.evaluate(model=f"copy-coefficient:{folder}", sources=folder / "src-test_cross.txt",
                                             reference=folder / "tgt-test_cross.txt", bootstrap=50)
    for result, kind in ((build_result, BuildDetails), (balance_result, BalanceDetails),
                         (evaluate_result, EvaluateDetails)):
        back = read_result(result.write(tmp_path / f"{result.task}.json"))
        assert isinstance(back.details, kind), result.task
        assert back.details.model_dump() == result.details.model_dump()
        assert not back.model_extra  # nothing undeclared at the top level
    # the typed fields read as attributes: rows with the three bags, counts, Table 1 per split
    rows = read_result(tmp_path / "evaluate.json").details.rows
    assert len(rows) == evaluate_result.n and all(row.source and row.prediction and row.target for row in rows)
    assert evaluate_result.details.prediction_counts.lines == evaluate_result.n
    assert balance_result.details.per_split["test"].reactions == 20
    assert balance_result.setting == {"split": "test"}  # Table 1's vocabulary
    assert build_result.details.manifests[0]["variant"] == "formula_t1_x1"
    # tasks without details write none
    verified = stoichiometry.verify(folder)
    assert verified.details is None and read_result(verified.write(tmp_path / "v.json")).details is None


def test_an_undeclared_detail_is_refused(built, tmp_path):
    folder, _ = built
    result = stoichiometry.evaluate(folder / "tgt-test_in.txt", folder / "tgt-test_in.txt", bootstrap=0)
    raw = json.loads(result.to_json())
    raw["details"]["missing_prediction_ids"] = [1]
    with pytest.raises(ValidationError, match="missing_prediction_ids"):
        Result.model_validate(raw)
    raw = json.loads(result.to_json())
    raw["details"]["rows"][0]["colour"] = "red"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw))
    with pytest.raises(UserInputError, match=r"details\.rows\.0\.colour"):
        read_result(path)


def test_evaluate_records_the_dataset_and_setting_of_a_built_folder(built, cli, tmp_path):
    folder, _ = built
    manifest = json.loads((folder / "manifest.json").read_text())
    test_sha = next(f["sha256"] for f in manifest["source"]["files"] if f["split"] == "test")
    train_sha = next(f["sha256"] for f in manifest["source"]["files"] if f["split"] == "train")
    scored = stoichiometry.evaluate(folder / "tgt-test_in.txt", folder / "tgt-test_in.txt", bootstrap=0)
    assert scored.dataset.name == "uspto-15k" and scored.dataset.sha256 == test_sha
    assert scored.setting == {"variant": "formula_t1_x1", "split": "test_in"}
    # a --model run records the same, and test_cross was drawn from the training reactions
    out = tmp_path / "cross.json"
    outcome = cli("stoichiometry", "evaluate", folder / "tgt-test_cross.txt", "--model", f"algebraic:{folder}",
                  "--src", folder / "src-test_cross.txt", "--out", out)
    assert outcome.code == 0, outcome.stderr
    written = json.loads(out.read_text())
    assert written["setting"] == {"variant": "formula_t1_x1", "split": "test_cross"}
    assert written["dataset"] == {"name": "uspto-15k", "sha256": train_sha} and written["config"]["encoding"] == "formula"
    # targets outside a built folder, or in memory, state no setting
    shutil.copy(folder / "tgt-test_in.txt", tmp_path / "tgt-test_in.txt")
    loose = stoichiometry.evaluate(tmp_path / "tgt-test_in.txt", tmp_path / "tgt-test_in.txt", encoding="formula",
                                   bootstrap=0)
    assert loose.setting == {} and loose.dataset is None
    assert stoichiometry.evaluate(["{1}C"], ["{1}C"], bootstrap=0).setting == {}


def _stoichiometry_board(result):
    from chemassay.report.scorecard import build_scorecard

    card = build_scorecard([result], resamples=0)
    (section,) = card.sections
    (board,) = section.leaderboards
    return board


def test_the_scorecard_shows_only_the_published_row_of_the_same_variant_and_split(built):
    folder, _ = built
    result = stoichiometry.evaluate(folder / "tgt-test_in.txt", folder / "tgt-test_in.txt", bootstrap=0)
    board = _stoichiometry_board(result)
    assert board.dataset == "uspto-15k" and board.setting == {"variant": "formula_t1_x1", "split": "test_in"}
    # the paper measured on its own USPTO-BAL variants: shown apart, never ranked beside ours
    assert [row.published for row in board.rows] == [False]
    papers = board.other_data
    assert papers and {row.label.split(" — ")[0] for row in papers} == {"Transformer (ChemAlgebra baseline)"}
    assert all(row.setting == {"variant": "formula_t1_x1", "split": "test_in"} for row in papers)
    # Table 4's in-distribution EM of Formula T1 x1 is printed 29.99 %: only that value, not the
    # cross (37.81) or out (0.36) ones, nor another variant's
    em = [row.cells["EM"].value for row in papers if "EM" in row.cells]
    assert em == [pytest.approx(0.2999)]
    assert {row.source.split(", ")[-1] for row in papers} <= {"Table 4", "Table 10", "Table 4, Table 10"}


def test_a_table2_result_meets_the_papers_rows_of_its_test_set(tmp_path):
    stoichiometry.build_table2("uspto-15k", tmp_path, limit=30)
    folder = tmp_path / "uspto-t1"
    result = stoichiometry.evaluate(folder / "tgt-test.txt", folder / "tgt-test.txt", folder / "src-test.txt",
                                    bootstrap=0)
    assert result.setting == {"variant": "uspto-t1", "split": "test"} and result.dataset.name == "uspto-15k"
    board = _stoichiometry_board(result)
    papers = board.other_data
    assert {row.label for row in papers} == {"Molecular Transformer", "Chemformer", "G2S (dgcn)", "G2S (dgat)"}
    assert all(row.setting.get("variant") == "uspto-t1" for row in papers)
    transformer = next(row for row in papers if row.label == "Molecular Transformer")
    assert transformer.cells["ALO"].value == pytest.approx(0.5666)  # T1 ALO, Table 2 / Table 8


def test_table2_test_sets_are_built_and_verified(tmp_path):
    result = stoichiometry.build_table2("uspto-15k", tmp_path, limit=30)
    assert result.details.folders == [str(tmp_path / k) for k in ("uspto", "uspto-bal", "uspto-t1", "uspto-t2")]
    plain = (tmp_path / "uspto" / "tgt-test.txt").read_text().splitlines()
    t1 = (tmp_path / "uspto-t1" / "tgt-test.txt").read_text().splitlines()
    bal = (tmp_path / "uspto-bal" / "tgt-test.txt").read_text().splitlines()
    assert len(plain) == len(t1) == 30 and 0 < len(bal) < 30  # only balanced or re-balanced ones
    # T1 doubles every product molecule of the reaction as read
    assert all(sorted(b.split(".")) == sorted(a.split(".") * 2) for a, b in zip(plain, t1, strict=True))
    for kind in ("uspto", "uspto-bal", "uspto-t1", "uspto-t2"):
        assert stoichiometry.verify(tmp_path / kind).metrics["ok"] is True


def test_the_quick_tasks_run_the_baseline_on_cached_data(isolated_home, tmp_path, monkeypatch):
    from chemassay.contract.assay import AssayContext
    from chemassay.suites.stoichiometry.assay import ASSAY

    assert ASSAY.baseline == "copy-coefficient"
    tasks = ASSAY.tasks({"bag-predictor"}, quick=True, spec=ASSAY.baseline)
    assert [t.setting for t in tasks] == [{"variant": "formula_t1_x1", "split": s}
                                          for s in ("test_in", "test_cross", "test_out")]
    first = {}
    for task in tasks:
        result = task.run(AssayContext(spec=ASSAY.baseline, out_dir=tmp_path / "one", quick=True))
        assert result.quick and result.setting == task.setting and result.dataset.name == task.dataset == "uspto-15k"
        assert result.n == task.items == 40 and len(result.details.rows) == 40
        assert result.model.spec == "copy-coefficient" and result.model.kind == "copy-coefficient"
        first[task.key] = result.metrics
    archives = list((isolated_home / "cache" / "stoichiometry" / "assay-data").glob("*.tar"))
    assert len(archives) == 1
    # a second assay (another folder) unpacks the cached build instead of building again
    from chemassay.suites.stoichiometry import prepare

    def no_build(*args, **kwargs):
        raise AssertionError("the cached build was not reused")

    monkeypatch.setattr(prepare, "process_source", no_build)
    for task in tasks:
        result = task.run(AssayContext(spec=ASSAY.baseline, out_dir=tmp_path / "two", quick=True))
        assert result.metrics == first[task.key]
    # the copied shortcut memorised the cross reactions: right more often than on unseen ones
    assert first["formula_t1_x1-test_cross"]["EM"] > first["formula_t1_x1-test_in"]["EM"]
    # a damaged unpacked file is noticed and unpacked again
    data = tmp_path / "two" / "data-quick" / "formula_t1_x1" / "tgt-test_in.txt"
    data.write_text("{1}C\n")
    again = tasks[0].run(AssayContext(spec=ASSAY.baseline, out_dir=tmp_path / "two", quick=True))
    assert again.metrics == first[tasks[0].key]


def test_assay_runs_the_suite_with_its_baseline_and_resumes(isolated_home, tmp_path):
    from chemassay.assaying import assay

    report = assay(None, suites=["stoichiometry"], quick=True, out=tmp_path / "assay")
    (outcome,) = report.suites
    assert outcome.spec == "copy-coefficient" and [t.status for t in outcome.tasks] == ["done"] * 3
    assert re.fullmatch(r"EM in [\d.]+ % \[[\d.]+, [\d.]+\] · cross [\d.]+ % \[[\d.]+, [\d.]+\] · out [\d.]+ % "
                        r"\[[\d.]+, [\d.]+\] \(1 variant\)", outcome.verdict), outcome.verdict
    assert {r.setting["split"] for r in report.results} == {"test_in", "test_cross", "test_out"}
    assert report.scorecard is not None and report.scorecard.is_file()
    # the gallery draws the baseline's unbalanced predictions from the results' rows
    from chemassay.report.scorecard.galleries import suite_gallery

    gallery = suite_gallery("stoichiometry", report.results)
    assert gallery.missing is None and gallery.items
    assert all(re.search(r"(DEF|EXC|DE): ", item.caption) for item in gallery.items)
    # the charts across settings: EM (higher is better) and EXC (lower is better) apart, with intervals
    from chemassay.suites.stoichiometry.report import stoichiometry_charts

    charts = stoichiometry_charts(report.results)
    assert [f.title for f in charts] == ["EM ↑ on the ChemAlgebra variants", "EXC ↓ on the ChemAlgebra variants"]
    assert all(f.data.count('stroke="#222"') == 3 for f in charts)  # one whisker per split
    again = assay(None, suites=["stoichiometry"], quick=True, out=tmp_path / "assay")
    assert [t.status for t in again.suites[0].tasks] == ["resumed"] * 3


def test_the_planned_items_are_the_lines_of_the_built_test_sets(tmp_path):
    from chemassay.suites.stoichiometry.assay import FULL_ITEMS, TABLE2_ITEMS

    result = stoichiometry.build_table2("uspto-15k", tmp_path)
    lines = {m["kind"]: m["files"]["tgt-test.txt"]["lines"] for m in result.details.manifests}
    assert lines == TABLE2_ITEMS
    # test_in and test_out hold the balanced or re-balanced test reactions: USPTO-BAL's test set
    assert FULL_ITEMS["test_in"] == FULL_ITEMS["test_out"] == lines["uspto-bal"]


def _plain_products(folder):
    """Distinct reactant molecules of the plain test set → its products (a model trained on
    plain reactions: it knows the product, never a by-product or a copy)."""
    sources = (folder / "uspto" / "src-test.txt").read_text().splitlines()
    targets = (folder / "uspto" / "tgt-test.txt").read_text().splitlines()
    return {frozenset(s.split(".")): t for s, t in zip(sources, targets, strict=True)}


def test_a_chat_model_is_asked_table2_as_a_reaction_predictor(openai_server, isolated_home, tmp_path):
    from chemassay.assaying import assay, plan
    from chemassay.suites.stoichiometry.assay import QUICK_ITEMS, QUICK_REACTIONS

    reference = tmp_path / "reference"
    stoichiometry.build_table2("uspto-15k", reference, limit=QUICK_REACTIONS)
    products = _plain_products(reference)

    def chemist(body):
        prompt = body["messages"][-1]["content"]
        found = re.search(r"Reactants and reagents \(SMILES, separated by '\.'\): (.*)", prompt)
        if found is None:  # a bag prompt: answer nothing usable
            return "I cannot balance this."
        return products.get(frozenset(found.group(1).strip().split(".")), "C")

    openai_server.responder = chemist
    spec = f"openai:chemist-2,base_url={openai_server.base_url}"
    _, planned = plan(spec, suites=["stoichiometry"], quick=True)
    assert [p.task.protocol for p in planned] == ["bag-predictor"] * 3 + ["reaction-predictor"] * 4
    assert sum(p.task.request_count for p in planned) == 7 * QUICK_ITEMS
    report = assay(spec, suites=["stoichiometry"], quick=True, out=tmp_path / "assay")
    assert len(openai_server.chat_requests()) <= 7 * QUICK_ITEMS  # one request per item, identical prompts cached
    table2 = {r.setting["variant"]: r for r in report.results if r.details.protocol == "reaction-predictor"}
    assert set(table2) == {"uspto", "uspto-bal", "uspto-t1", "uspto-t2"}
    assert all(r.setting["split"] == "test" and r.n == QUICK_ITEMS and r.quick for r in table2.values())
    # right on plain reactions; on USPTO-BAL only where no by-product was added; never on T1/T2,
    # where at least one true product is still named (ALO)
    assert table2["uspto"].metrics["ACC"] == 1.0
    bal_sources = (reference / "uspto-bal" / "src-test.txt").read_text().splitlines()[:QUICK_ITEMS]
    bal_targets = (reference / "uspto-bal" / "tgt-test.txt").read_text().splitlines()[:QUICK_ITEMS]
    unchanged = sum(products.get(frozenset(s.split("."))) == t for s, t in zip(bal_sources, bal_targets, strict=True))
    assert unchanged < QUICK_ITEMS and table2["uspto-bal"].metrics["ACC"] == pytest.approx(unchanged / QUICK_ITEMS)
    for kind in ("uspto-t1", "uspto-t2"):
        assert table2[kind].metrics["ACC"] == 0.0 and table2[kind].metrics["ALO"] == 1.0
    # 40 of 40 and 0 of 40: Wilson intervals, not the bootstrap's zero-wide [100.0, 100.0] / [0.0, 0.0]
    assert "top-1 ACC uspto 100.0 % [91.2, 100.0]" in report.suites[0].verdict
    assert "uspto-bal 0.0 % [0.0, 8.8]" in report.suites[0].verdict
