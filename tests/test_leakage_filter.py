"""The InChIKey filter of the leakage audit: a training molecule's InChIKey is computed only when
its element graph can equal a test molecule's, and every InChIKey or skeleton match of the full
path is still found (tautomers, charges, zwitterions, salts, metals, isotopes, stereo)."""

from __future__ import annotations

import pytest
from rdkit import Chem

from chemassay.leaks import MOLECULE, TestSet, leakage
from chemassay.leaks.keys import filterable_atoms, graph_key, heavy_graph_key, molecule_keys

# (test molecule, training molecule, how the full InChIKey path matches them)
PAIRS = [
    ("Oc1ccccn1", "O=c1cccc[nH]1", "exact"),  # tautomers: standard InChI's mobile hydrogen
    ("NCC(=O)O", "[NH3+]CC(=O)[O-]", "exact"),  # zwitterion
    ("CC(=O)O", "CC(=O)[O-]", "skeleton"),  # deprotonated: the key's last character differs
    ("CN.Cl", "C[NH3+].[Cl-]", "exact"),  # a salt written as ions
    ("CC(=O)O[Na]", "CC(=O)[O-].[Na+]", "exact"),  # a metal: InChI disconnects its bond
    ("CC(=O)O[Mg]OC(C)=O", "CC(=O)[O-].CC(=O)[O-].[Mg+2]", "exact"),
    ("ClC(Cl)Cl", "[2H]C(Cl)(Cl)Cl", "skeleton"),  # deuterium: an isotopic hydrogen
    ("[2H]OC", "CO", "skeleton"),  # deuterium on the test side
    ("CO", "[13CH3]O", "skeleton"),  # a heavy isotope
    ("C[C@H](N)C(=O)O", "CC(N)C(=O)O", "skeleton"),  # stereo dropped
    ("C[C@H](N)C(=O)O", "C[C@@H](N)C(=O)O", "skeleton"),  # the enantiomer
    ("C/C=C/C(=O)O", "C/C=C\\C(=O)O", "skeleton"),  # E/Z
    ("c1ccccc1O", "OC1=CC=CC=C1", "exact"),  # Kekule spelling
    ("C[N+](C)(C)CC(=O)[O-]", "C[N+](C)(C)CC(=O)O", "skeleton"),  # betaine and its protonated cation
    ("CC(=O)Nc1ccc(O)cc1", "[CH3:1][C:2](=[O:3])[NH:4]c1ccc(O)cc1", "exact"),  # atom maps
    ("O=[N+]([O-])c1ccccc1", "[O-][N+](=O)c1ccccc1", "exact"),  # nitro written two ways
]


def _keys(tests: list[str], trains: list[str]):
    test = molecule_keys(tests, fingerprints=False, graphs=True)
    candidates = frozenset(g for g in test.graphs if g is not None)
    full = molecule_keys(trains, fingerprints=False)
    filtered = molecule_keys(trains, fingerprints=False, candidates=candidates)
    return test, full, filtered


@pytest.mark.parametrize(("test_smiles", "train_smiles", "how"), PAIRS)
def test_the_filter_lets_every_inchikey_match_through(test_smiles, train_smiles, how):
    test, full, filtered = _keys([test_smiles], [train_smiles, "CCCCCCCCCCCCCCCCCCCC"])
    # the full path matches the pair as stated
    assert full.keys["skeleton"][0] == test.keys["skeleton"][0]
    assert (full.keys["inchikey"][0] == test.keys["inchikey"][0]) == (how == "exact")
    # the filtered path computes the same keys for it, and none for an unrelated molecule
    assert filtered.keys["inchikey"][0] == full.keys["inchikey"][0]
    assert filtered.keys["skeleton"][0] == full.keys["skeleton"][0]
    assert filtered.keys["inchikey"][1] is None and full.keys["inchikey"][1] is not None
    assert filtered.ok.all() and full.ok.all()


def test_the_audit_finds_the_same_duplicates_through_the_filter(tmp_path):
    tests = [t for t, _, _ in PAIRS]
    trains = [t for _, t, _ in PAIRS] + ["c1ccc2ccccc2c1", "CCN(CC)CC", "not-a-smiles"]
    path = tmp_path / "train.smi"
    path.write_text("\n".join(trains) + "\n")
    ids = [str(i) for i in range(len(tests))]
    report = leakage(path, sets=[TestSet(suite="toy", task="pairs", kind=MOLECULE, ids=ids, items=tests)],
                     near=False)
    [task] = report["tasks"]
    # the exact and skeleton counts are those of the full path (every pair, and a few across
    # pairs: the training methanol of one pair is the test methanol of another)
    full = molecule_keys(trains, fingerprints=False)
    test = molecule_keys(tests, fingerprints=False)
    exact = [i for i, key in enumerate(test.keys["inchikey"]) if key in set(full.keys["inchikey"])]
    skeleton = [i for i, key in enumerate(test.keys["skeleton"]) if key in set(full.keys["skeleton"])]
    assert task["exact"] == len(exact) > sum(how == "exact" for _, _, how in PAIRS)
    assert {i for i, (_, _, how) in enumerate(PAIRS) if how == "exact"} <= set(exact)
    assert task["exact_keys"]["skeleton"] == len(skeleton) == len(PAIRS)
    assert task["leaked_ids"]["exact"] == [ids[i] for i in exact]
    assert report["training"][0]["unreadable"] == 1


def test_what_must_bypass_the_filter():
    for smiles in ("[2H]C", "[13CH4]", "[H]N=c1cccc[nH]1", "CC(=O)O[Na]", "B(O)O", "[Fe]", "*C", "[Se]",
                   "C[Si](C)C", "F[C@TH1H](Cl)Br"):
        assert filterable_atoms(smiles) is None, smiles
    assert filterable_atoms("C[C@@H](N)C(=O)[O-]") == [6, 6, 7, 6, 8, 8]
    assert filterable_atoms("Clc1ccc(Br)cc1[NH3+]") == [17, 6, 6, 6, 6, 35, 6, 6, 7]
    assert filterable_atoms("[CH3:1]S(=O)(=O)I") == [6, 16, 8, 8, 53]


def test_the_graph_key_ignores_spelling_bonds_charges_and_stereo(moses_like):
    for smiles in moses_like:
        mol = Chem.MolFromSmiles(smiles)
        atoms = filterable_atoms(smiles)
        assert atoms == [atom.GetAtomicNum() for atom in mol.GetAtoms()]  # RDKit's atom order
        key = graph_key(mol, atoms)
        for seed in range(3):
            spelling = Chem.MolToSmiles(mol, doRandom=True, canonical=False, kekuleSmiles=seed == 1)
            other = Chem.MolFromSmiles(spelling)
            assert graph_key(other, filterable_atoms(spelling)) == key
        assert heavy_graph_key(mol)[0] == key == heavy_graph_key(mol, smiles)[0]
        assert heavy_graph_key(Chem.AddHs(mol))[0] == key  # hydrogen atoms are not in the graph
    # different graphs (an isomer, a ring opened, an element changed) get different keys here
    keys = {heavy_graph_key(Chem.MolFromSmiles(s))[0] for s in ("CCCO", "CC(C)O", "CCOC", "C1CC1O", "CCCN")}
    assert len(keys) == 5


def test_a_bridging_hydrogen_turns_the_filter_off():
    # RDKit refuses such a molecule when it sanitizes (so no readable test item has one); the
    # graph key does not vouch for it either
    bridged = Chem.MolFromSmiles("[H]1CC1", sanitize=False)
    assert Chem.MolFromSmiles("[H]1CC1") is None
    assert heavy_graph_key(bridged) == (None, False)
    assert not molecule_keys(["CC", "[2H]OC", "[Na+].[Cl-]"], fingerprints=False, graphs=True).graphs_unsafe


@pytest.fixture(scope="module")
def moses_like() -> list[str]:
    return ["CC(=O)Nc1ccc(O)cc1", "Cc1ccc(S(=O)(=O)N2CCOCC2)cc1", "O=C(O)c1ccccc1Cl", "CN1CCN(C(=O)c2ccc(Br)cc2)CC1",
            "COc1cc2c(cc1OC)C(=O)N(C)C2", "Fc1ccc(-c2nc3ccccc3[nH]2)cc1", "C[C@H](N)C(=O)O", "CC[NH+](CC)CC"]
