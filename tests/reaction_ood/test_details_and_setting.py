"""Every reaction-ood result keeps its typed details through a file; a result records the split
setting and the dataset it was measured on, so only the matching published rows stand beside it."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from chemassay.contract.result import read_result


class FirstMolecule:
    """A toy reaction predictor: the largest reactant, as the one 'product'."""

    def predict(self, reactants, k=5):
        return [[max(text.split("."), key=len)] for text in reactants]


@pytest.fixture(scope="module")
def split_folder(tmp_path_factory):
    """A document split of 1,200 cleaned Schneider reactions made the way the CLI makes it."""
    from chemassay.reaction_ood import clean, load_dataset, split

    folder = tmp_path_factory.mktemp("rood-split")
    raw = load_dataset("schneider-50k").iloc[:1200]
    cleaned = clean(raw, folder / "clean.parquet")
    split(folder / "clean.parquet", folder / "document", config="schneider_document")
    return folder, cleaned


def test_clean_split_evaluate_name_the_registered_dataset_and_the_setting(split_folder):
    from chemassay.reaction_ood import evaluate

    folder, cleaned = split_folder
    assert cleaned.dataset.name == "schneider-50k"
    manifest = json.loads((folder / "document" / "manifest.json").read_text())
    assert manifest["input"]["dataset"] == "schneider-50k"
    test = pd.read_parquet(folder / "document" / "test_ood.parquet")
    result = evaluate([[p] for p in test["products"]], folder / "document" / "test_ood.parquet", bootstrap=0)
    assert result.dataset.name == "schneider-50k" and len(result.dataset.sha256) == 64
    assert result.setting == {"split": "document", "part": "test_ood"}
    assert result.metrics["top1_accuracy"] == 1.0
    # given settings add to (or override) what the manifest says
    extra = evaluate([[p] for p in test["products"]], folder / "document" / "test_ood.parquet", bootstrap=0,
                     setting={"note": "x"}, dataset="mine")
    assert extra.setting == {"split": "document", "part": "test_ood", "note": "x"} and extra.dataset.name == "mine"


def test_a_file_cleaned_from_a_copy_of_the_bundled_csv_is_named_too(tmp_path):
    import shutil

    from chemassay.reaction_ood import clean

    from chemassay.data.registry import dataset_file
    from chemassay.suites.reaction_ood.data import cleaned_table_dataset

    copy = tmp_path / "my_copy.csv.gz"
    shutil.copy(dataset_file("schneider-50k", "schneider50k.csv.gz"), copy)
    other = tmp_path / "other.csv"
    other.write_text("rxn_smiles\nCCO.CC(=O)O>>CCOC(C)=O\n")
    assert clean(other, tmp_path / "other.parquet").dataset is None
    assert cleaned_table_dataset(tmp_path / "other.parquet") is None
    # the bundled file is recognised by its checksum wherever it lies (cleaning 50k rows is slow:
    # the check is on the name lookup, not on a full clean)
    from chemassay.runtime.files import sha256_file
    from chemassay.suites.reaction_ood.data import registered_reaction_dataset

    assert registered_reaction_dataset(sha256_file(copy)) == "schneider-50k"
    assert registered_reaction_dataset(sha256_file(other)) is None


def test_reaction_type_parts_name_the_held_out_type():
    from chemassay.suites.reaction_ood.api import held_out_name, split_setting
    from chemassay.suites.reaction_ood.splits import split_definition

    assert held_out_name(["3.1"]) == "all-suzuki"
    assert held_out_name(["3.1.6"]) == "chloro-suzuki" == held_out_name(["3.1.2", "3.1.6"])
    assert held_out_name(split_definition("paper_reaction_type_grignard_ester")["held_out"]) == "grignard-ester"
    assert held_out_name(["1.2.4"]) == "1.2.4"
    definition = split_definition("schneider_reaction_type_suzuki")
    assert split_setting("reaction-type", definition, "test_ood") == {
        "split": "reaction-type", "part": "test_ood", "held_out": "all-suzuki"}
    assert split_setting("time", split_definition("schneider_time"), "test_2004") == {"split": "time",
                                                                                      "part": "test_2004"}


def test_only_the_matching_table_s22_row_stands_beside_a_document_split_result(split_folder):
    from chemassay.reaction_ood import evaluate

    from chemassay.report.scorecard import build_scorecard

    folder, _ = split_folder
    test = folder / "document" / "test_ood.parquet"
    result = evaluate(model=FirstMolecule(), reference=test, k=3, bootstrap=100)
    card = build_scorecard([result])
    [section] = card.sections
    [board] = section.leaderboards
    assert board.dataset == "schneider-50k" and board.setting == {"split": "document", "part": "test_ood"}
    # the paper measured on Pistachio: its row is shown apart, as other data, never ranked
    assert not [row for row in board.rows if row.published]
    assert [(row.source, row.label.split(" — ")[-1]) for row in board.other_data] == [
        ("Bradshaw et al. (2025), Table S2.2", "on documents")]
    assert board.other_data[0].cells["top1_accuracy"].value == 0.58
    # the in-distribution part of the same split has no published row (the paper prints none)
    in_distribution = evaluate(model=FirstMolecule(), reference=folder / "document" / "test.parquet", k=3, bootstrap=0)
    [board] = build_scorecard([in_distribution]).sections[0].leaderboards
    assert not [row for row in board.rows if row.published] and not board.other_data


def test_every_task_keeps_its_typed_details_through_a_file(split_folder, tmp_path):
    from chemassay.reaction_ood import evaluate, iterate, shift, verify

    from chemassay.suites.reaction_ood.details import (
        CleanDetails,
        EvaluateDetails,
        IterateDetails,
        ShiftDetails,
        VerifyDetails,
    )

    folder, cleaned = split_folder
    part = folder / "document" / "test_ood.parquet"
    results = {
        "evaluate": evaluate(model=FirstMolecule(), reference=part, k=2, bootstrap=0),
        "iterate": iterate(FirstMolecule(), part, k=2),
        "clean": cleaned,
        "verify": verify(folder / "document"),
        "shift": shift(folder / "document" / "train.parquet", {"ood": part}, maps="none"),
    }
    expected = {"evaluate": EvaluateDetails, "iterate": IterateDetails, "clean": CleanDetails,
                "verify": VerifyDetails, "shift": ShiftDetails}
    for task, result in results.items():
        path = result.write(tmp_path / f"{task}.json")
        again = read_result(path)
        assert type(again.details) is expected[task], task
        assert again.details == result.details, task
        assert not result.model_extra, (task, result.model_extra)
    assert results["evaluate"].details.items and results["evaluate"].details.breakdowns["year"]
    assert results["verify"].details.checks[0].passed
    assert results["shift"].details.summaries["ood/reactant"].n > 0
    assert results["shift"].setting == {"split": "document"}
    assert results["clean"].details.output.endswith("clean.parquet")


def test_an_undeclared_details_field_is_refused(tmp_path):
    from chemassay.reaction_ood import evaluate

    result = evaluate([["CCO"]], ["CCO"], bootstrap=0)
    data = json.loads(result.to_json())
    data["details"]["missing_prediction_ids"] = ["a"]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    from chemassay.contract.errors import UserInputError

    with pytest.raises(UserInputError, match="details.missing_prediction_ids"):
        read_result(path)
    data["details"].pop("missing_prediction_ids")
    data["details"]["items"] = [{"id": "0", "target": "CCO", "predictions": [], "oops": 1}]
    path.write_text(json.dumps(data))
    with pytest.raises(UserInputError, match="oops"):
        read_result(path)
