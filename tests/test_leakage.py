"""The leakage audit on real data: MOSES molecules, their one-atom variants and training
molecules; reaction-ood test reactions rewritten with shuffled molecules and atom maps; bad
training files."""

from __future__ import annotations

import gzip
import json
import random

import pytest
from rdkit import Chem

import chemassay
from chemassay.chem.molecules import rdkit_log_silenced
from chemassay.contract.errors import UserInputError
from chemassay.leaks import (
    MOLECULE,
    REACTION,
    TestSet,
    clean_ids,
    leakage,
    reaction_key,
    read_report,
)


def _moses_or_skip():
    from chemassay.data import locate

    if locate("moses", "test.csv.gz") is None or locate("moses", "train.csv.gz") is None:
        pytest.skip("MOSES not fetched (chemassay data fetch moses)")
    from chemassay.suites.generation.data import load_moses

    return load_moses


def one_atom_variant(smiles: str, rng: random.Random) -> str | None:
    """``smiles`` with one heavy atom changed at a chain end: a terminal heavy atom's element
    replaced (C, N, O, F or Cl) or a methyl added to it; the first change, in a seeded random
    order, that gives a valid molecule (a molecule without chain ends: a methyl on a ring
    carbon)."""
    mol = Chem.MolFromSmiles(smiles)
    changes = []
    for atom in mol.GetAtoms():
        if atom.GetDegree() != 1:
            continue
        changes += [(atom.GetIdx(), element) for element in (6, 7, 8, 9, 17) if element != atom.GetAtomicNum()]
        if atom.GetTotalNumHs() > 0:
            changes.append((atom.GetIdx(), 0))
    rng.shuffle(changes)
    ring_carbons = [(a.GetIdx(), 0) for a in mol.GetAtoms() if a.GetAtomicNum() == 6 and a.GetTotalNumHs() > 0]
    rng.shuffle(ring_carbons)
    changes += ring_carbons
    original = Chem.MolToSmiles(mol)
    for index, element in changes:
        editable = Chem.RWMol(mol)
        if element:
            editable.GetAtomWithIdx(index).SetAtomicNum(element)
        else:
            editable.AddBond(index, editable.AddAtom(Chem.Atom(6)), Chem.BondType.SINGLE)
        try:
            with rdkit_log_silenced():
                Chem.SanitizeMol(editable)
        except Exception:
            continue
        text = Chem.MolToSmiles(editable)
        if text != original and Chem.MolFromSmiles(text) is not None:
            return text
    return None


@pytest.fixture(scope="module")
def moses_training_file(tmp_path_factory):
    """500 MOSES test molecules (rows 0-499), a one-atom variant of each of rows 500-999,
    500 MOSES training molecules, a blank line and two unreadable lines, in a gzipped list."""
    load_moses = _moses_or_skip()
    test = load_moses(part="test", limit=1000)
    train = load_moses(part="train", limit=500)
    rng = random.Random(0)
    variants = [one_atom_variant(s, rng) for s in test[500:1000]]
    assert all(variants)
    lines = ["SMILES", *test[:500], *variants, *train, "C1CC(", ""]
    path = tmp_path_factory.mktemp("leakage") / "train.smi.gz"
    path.write_bytes(gzip.compress("\n".join(lines).encode() + b"\nnot-a-molecule\n"))
    return path


def test_moses_exact_and_near_duplicates(moses_training_file, tmp_path):
    report = leakage(moses_training_file, suites=["generation"], tasks=["moses-test"], quick=True, threshold=0.7,
                     out=tmp_path)
    [task] = report["tasks"]
    assert task["n"] == 2000 and task["kind"] == MOLECULE
    assert task["exact"] == 500 and task["exact_keys"]["skeleton"] >= 500
    assert task["leaked_ids"]["exact"] == [str(i) for i in range(500)]
    near = {int(i) for i in task["leaked_ids"]["near"]}
    assert task["near"] == len(near) >= 400
    assert len(near & set(range(500, 1000))) >= 400  # the one-atom variants' originals
    distribution = task["nearest_similarity"]
    assert distribution["at_least"]["1"] >= 500
    assert sum(distribution["histogram"]["counts"]) == 2000
    assert len(near - set(range(500, 1000))) < 50  # rows 1000-1999 are in no way in the file
    assert distribution["quantiles"]["0.1"] < 0.5
    assert task["clean"] == 2000 - task["exact"] - task["near"] - len(task["leaked_ids"]["stereo"])
    assert task["scaffold"] >= 1000
    # the training file: the two unreadable lines listed with their numbers, never dropped
    # (line 1 is the header, 1503 is blank)
    [record] = report["training"]
    assert record["molecules"] == 1502 and record["unreadable"] == 2
    assert [row["line"] for row in record["unreadable_lines"]] == [1502, 1504]
    assert record["kinds"] == [MOLECULE]
    written = read_report(tmp_path)
    assert written["tasks"][0]["exact"] == 500 and len(written["training"][0]["sha256"]) == 64
    # the clean subset: every id not leaked, in order, tied to the id list by its hash
    ids = [str(i) for i in range(2000)]
    clean = clean_ids(tmp_path, "generation", "moses-test", ids)
    assert len(clean) == task["clean"] and clean[0] not in near and "0" not in clean
    with pytest.raises(UserInputError, match="not the ones"):
        clean_ids(written, "generation", "moses-test", ids[:-1])


def test_a_threshold_of_one_counts_only_identical_fingerprints(moses_training_file):
    report = leakage(moses_training_file, suites=["generation"], tasks=["moses-test"], quick=True, threshold=1.0)
    assert report["tasks"][0]["exact"] == 500
    assert report["tasks"][0]["near"] < 50


def _scrambled(reaction: str, rng: random.Random) -> str:
    """The reaction with its molecules in another order, random SMILES and atom maps."""
    left, _, right = reaction.split(">")

    def rewrite(part: str) -> str:
        out = []
        number = 1
        for smiles in part.split("."):
            mol = Chem.MolFromSmiles(smiles)
            for atom in mol.GetAtoms():
                atom.SetAtomMapNum(number)
                number += 1
            out.append(Chem.MolToSmiles(mol, doRandom=True))
        rng.shuffle(out)
        return ".".join(out)

    return f"{rewrite(left)}>>{rewrite(right)}"


def test_reaction_ood_test_reactions_rewritten_are_exact(tmp_path):
    from chemassay.leaks import suite_test_sets

    sets = [s for s in suite_test_sets(["reaction-ood"], quick=True) if s.task == "random-test"]
    [test_set] = sets
    assert test_set.kind == REACTION and test_set.products
    rng = random.Random(1)
    chosen = test_set.items[:30]
    path = tmp_path / "train.csv"
    path.write_text("id,rxn\n" + "".join(f"{i},{_scrambled(r, rng)}\n" for i, r in enumerate(chosen)) + "99,C>>>C\n")
    report = leakage(path, sets=sets, column="rxn")
    [task] = report["tasks"]
    assert task["exact"] == 30 and task["exact_keys"]["products"] >= 30
    assert task["leaked_ids"]["exact"] == test_set.ids[:30]
    assert task["nearest_similarity"]["at_least"]["1"] >= 30
    record = report["training"][0]
    assert record["reactions"] == 31 and record["kinds"] == [REACTION]
    assert record["unreadable"] == 1 and record["unreadable_lines"][0]["line"] == 32
    assert "'>'" in record["unreadable_lines"][0]["reason"]


def test_reaction_key_ignores_order_maps_and_agents():
    import numpy as np

    plain = reaction_key("CC(=O)O.OCC>>CC(=O)OCC")
    assert plain[:2] == ("CC(=O)O.CCO>>CCOC(C)=O", "CCOC(C)=O")
    mapped = reaction_key("[CH2:5]([OH:6])[CH3:7].[CH3:1][C:2](=[O:3])[OH:4]>[Na+].[Cl-]>"
                          "[CH3:1][C:2](=[O:3])[O:6][CH2:5][CH3:7]")
    assert mapped[:2] == plain[:2] and np.array_equal(mapped[2], plain[2])
    assert reaction_key("OCC.CC(=O)O.[Na+].[Cl-]>>CC(=O)OCC")[0] == plain[0]
    assert reaction_key("CC(=O)O.OCC>>CC(=O)OC")[0] != plain[0]


def test_mixed_molecules_and_reactions_are_told_apart(tmp_path):
    sets = [TestSet("toy", "mols", MOLECULE, ["a", "b"], ["CCO", "c1ccccc1O"]),
            TestSet("toy", "rxns", REACTION, ["r"], ["CC(=O)O.OCC>>CC(=O)OCC"], products=True)]
    path = tmp_path / "train.txt"
    path.write_text("OCC\nOCC.CC(O)=O>>O=C(OCC)C\nc1ccccc1\n")
    report = chemassay.leakage(path, sets=sets)
    mols, rxns = report["tasks"]
    assert (mols["exact"], rxns["exact"]) == (1, 1)
    assert mols["leaked_ids"]["exact"] == ["a"]
    assert report["training"][0]["molecules"] == 2 and report["training"][0]["reactions"] == 1
    assert report["training"][0]["kinds"] == [MOLECULE, REACTION]


def test_parallel_and_chunked_runs_give_the_same_report(tmp_path):
    load_moses = _moses_or_skip()
    test = load_moses(part="test", limit=300)
    sets = [TestSet("toy", "t", MOLECULE, [str(i) for i in range(300)], test)]
    path = tmp_path / "train.smi"
    path.write_text("\n".join(test[:40] + load_moses(part="train", limit=400)) + "\n")
    one = leakage(path, sets=sets)
    many = leakage(path, sets=sets, n_jobs=2, chunk_lines=97)
    assert many["timing"]["chunks"] == 5
    keep = ("exact", "near", "clean", "nearest_similarity", "leaked_ids")
    assert {k: one["tasks"][0][k] for k in keep} == {k: many["tasks"][0][k] for k in keep}
    pytest.importorskip("distributed")
    dask = leakage(path, sets=sets, scheduler="dask-local", chunk_lines=200)
    assert {k: one["tasks"][0][k] for k in keep} == {k: dask["tasks"][0][k] for k in keep}


def test_parquet_training_table(tmp_path):
    import pandas as pd

    sets = [TestSet("toy", "mols", MOLECULE, ["a", "b"], ["CCO", "CCN"])]
    path = tmp_path / "train.parquet"
    pd.DataFrame({"name": ["x", "y", "z"], "structure": ["CCO", None, "C[C@H](N)O"]}).to_parquet(path)
    report = leakage(path, sets=sets, column="structure")
    assert report["tasks"][0]["exact"] == 1
    assert report["training"][0]["unreadable_lines"] == [{"line": 2, "reason": "empty SMILES"}]


def test_bad_training_files_are_one_line_errors(tmp_path, cli):
    empty = tmp_path / "empty.smi"
    empty.write_text("")
    table = tmp_path / "t.csv"
    table.write_text("name,SMILES\nx,CCO\n")
    only_header = tmp_path / "h.smi"
    only_header.write_text("SMILES\n")
    sets = [TestSet("toy", "mols", MOLECULE, ["a"], ["CCO"])]
    for path, column, message in ((empty, None, "is empty"), (table, "nope", "no column 'nope'"),
                                  (only_header, None, "no training items"), (tmp_path / "missing.smi", None,
                                                                             "no such training file")):
        with pytest.raises(UserInputError, match=message):
            leakage(path, sets=sets, column=column)
    outcome = cli("leakage", "--train", empty, "--suites", "generation", "--out", tmp_path / "o")
    assert outcome.code == 2 and "is empty" in outcome.stderr and "Traceback" not in outcome.stderr
    outcome = cli("leakage", "--train", table, "--column", "nope", "--out", tmp_path / "o")
    assert outcome.code == 2 and "no column 'nope'" in outcome.stderr
    with pytest.raises(UserInputError, match="threshold"):
        leakage(table, sets=sets, threshold=1.5)


def test_cli_writes_leakage_json(tmp_path, cli):
    _moses_or_skip()
    path = tmp_path / "train.smi"
    from chemassay.suites.generation.data import load_moses

    path.write_text("\n".join(load_moses(part="test", limit=25)) + "\n")
    outcome = cli("leakage", "--train", path, "--suites", "generation", "--quick", "--out", tmp_path / "out")
    assert outcome.code == 0, outcome.stderr
    data = json.loads((tmp_path / "out" / "leakage.json").read_text())
    assert [t["task"] for t in data["tasks"]] == ["moses-test", "moses-test-scaffolds"]
    assert data["tasks"][0]["exact"] == 25 and data["tasks"][1]["exact"] == 0
    assert "moses-test" in outcome.stdout
