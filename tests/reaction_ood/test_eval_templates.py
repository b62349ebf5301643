"""Forward templates (chemassay.chem.templates) and the template-kNN baseline."""

from __future__ import annotations

import csv
import random

import numpy as np
import pytest

from chemassay.chem.molecules import canonical_smiles, try_canonical
from chemassay.chem.templates import (
    ForwardTemplate,
    TemplateError,
    apply_template,
    extract_forward_template,
)
from chemassay.data import dataset_file
from chemassay.suites.reaction_ood.template_knn import (
    BaselineConfig,
    TemplateKnnModel,
    extract_templates,
)

# amide formation from an acid chloride and a primary amine, hand-mapped
AMIDE = "[CH3:1][C:2](=[O:3])Cl.[NH2:4][CH2:5][c:6]1[cH:7][cH:8][cH:9][cH:10][cH:11]1>>[CH3:1][C:2](=[O:3])[NH:4][CH2:5][c:6]1[cH:7][cH:8][cH:9][cH:10][cH:11]1"
# the same reaction centre on other molecules, mapped differently, with a reagent
AMIDE_2 = "CCN(CC)CC.[NH2:7][CH2:8][CH2:9][CH3:10].[CH3:1][CH2:2][CH2:3][C:4](=[O:5])Cl>>[CH3:1][CH2:2][CH2:3][C:4](=[O:5])[NH:7][CH2:8][CH2:9][CH3:10]"


def dataset_a() -> list[str]:
    with open(dataset_file("schneider-dataseta", "dataSetA.csv"), newline="") as handle:
        return [row["rxn_Smiles"] for row in csv.DictReader(handle)]


def test_template_of_amide_coupling():
    template = extract_forward_template(AMIDE)
    reactant, _, product = template.smarts.partition(">>")
    assert "[#17;A;H0;D1;+0]" in reactant          # the chloride leaves, unmapped
    assert reactant.count(":") >= 4                  # C, O, N and their mapped neighbours
    assert "Cl" not in product and "#17" not in product
    assert template.fragment_molecules == (0, 1)     # two fragments from two molecules


def test_same_centre_gives_the_same_canonical_template():
    first = extract_forward_template(AMIDE)
    second = extract_forward_template(AMIDE_2)
    assert first.key == second.key
    assert ForwardTemplate.from_key(first.key) == first


def test_template_applies_to_new_reactants_and_skips_reagents():
    template = extract_forward_template(AMIDE)
    outcomes = apply_template(template, "CC(C)C(=O)Cl.NCc1ccc(F)cc1.CCN(CC)CC.ClCCl")
    assert canonical_smiles("CC(C)C(=O)NCc1ccc(F)cc1") in outcomes
    assert all(canonical_smiles(o) == o for o in outcomes)
    assert apply_template(template, "CCO.CCCC") == []


def test_grouping_forbids_intramolecular_match_of_a_bimolecular_template():
    template = extract_forward_template(AMIDE)
    # acid chloride and amine in one molecule: the two fragments would match one molecule
    assert apply_template(template, "NCCCCC(=O)Cl") == []


@pytest.mark.parametrize("bad, reason", [
    ("CC(=O)Cl.NC>>CC(=O)NC", "no atom map"),
    ("[CH3:1][OH:2]>>[CH3:1][OH:2]", "no atom changes"),
    ("[CH3:1]Cl.[OH2:2]>>[CH3:1][OH:2].[CH3:1]O", "occurs twice among the products"),
    ("[CH3:1]Cl>>[CH3:1][OH:9]", "absent from the reactants"),
])
def test_extraction_failures_say_why(bad, reason):
    with pytest.raises(TemplateError, match=reason):
        extract_forward_template(bad)


def test_dataset_a_templates_reproduce_their_own_reactions():
    reactions = dataset_a()[:70]
    reproduced = extracted = 0
    for reaction in reactions:
        try:
            template = extract_forward_template(reaction)
        except TemplateError:
            continue
        extracted += 1
        reactants, _, products = reaction.partition(">>")
        truth = canonical_smiles(products, stereo=False)
        if truth in {canonical_smiles(o, stereo=False) for o in apply_template(template, reactants)}:
            reproduced += 1
    assert extracted >= 62
    # misses are reactions whose recorded products include mapped spectator salts
    assert reproduced / extracted >= 0.95


@pytest.fixture(scope="module")
def dataset_a_model():
    reactions = dataset_a()
    random.Random(0).shuffle(reactions)
    return TemplateKnnModel.train(reactions[:160], config=BaselineConfig(n_neighbors=20)), reactions


def test_baseline_reports_training_and_recalls_training_reactions(dataset_a_model):
    model, reactions = dataset_a_model
    report = model.training_report
    assert report["n_reactions"] == 160
    assert 140 <= report["n_with_template"] <= 160
    assert 0 < report["n_templates"] <= report["n_with_template"]
    assert sum(report["failures"].values()) == 160 - report["n_with_template"]
    queries, truths = [], []
    for reaction in reactions[:25]:
        reactants, _, products = reaction.partition(">>")
        canonical = [try_canonical(s) for s in reactants.split(".")]
        truth = try_canonical(products, stereo=False)
        if None in canonical or truth is None:  # a few dataSetA molecules do not kekulize
            continue
        queries.append(".".join(canonical))
        truths.append(truth)
    predictions = model.predict(queries, k=5)
    hits = sum(t in {canonical_smiles(p, stereo=False) for p in ps} for t, ps in zip(truths, predictions, strict=True))
    assert hits / len(truths) >= 0.75
    assert all(len(p) <= 5 for p in predictions)


def test_baseline_save_load_roundtrip_and_parallel_predict(dataset_a_model, tmp_path):
    model, reactions = dataset_a_model
    queries = [r.partition(">>")[0] for r in reactions[160:172]] + ["not a molecule"]
    path = model.save(tmp_path / "model.npz")
    loaded = TemplateKnnModel.load(path)
    assert loaded.templates == model.templates
    assert np.array_equal(loaded.fingerprints, model.fingerprints)
    serial = model.predict(queries, k=3)
    assert loaded.predict(queries, k=3) == serial
    assert model.predict(queries, k=3, n_jobs=2, block=4) == serial
    assert serial[-1] == []


def test_baseline_templates_can_be_shared():
    reactions = dataset_a()[:40]
    shared = extract_templates(reactions)
    assert sum(isinstance(t, str) for t in shared) >= 35
    direct = TemplateKnnModel.train(reactions)
    again = TemplateKnnModel.train(reactions, templates=shared)
    assert again.templates == direct.templates
    assert np.array_equal(again.train_template, direct.train_template)


def test_load_rejects_other_files(tmp_path):
    from chemassay.contract.errors import UserInputError

    other = tmp_path / "x.npz"
    np.savez(other, a=np.zeros(3))
    with pytest.raises(UserInputError, match="not a chemassay baseline model"):
        TemplateKnnModel.load(other)
