"""Per-molecule descriptors: the shortcuts give exactly the plain RDKit / MOSES answers."""

from pathlib import Path

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import QED, Crippen, Descriptors
from rdkit.Chem.Scaffolds import MurckoScaffold

from chemassay.data import dataset_file
from chemassay.data.readers import read_smiles_file, read_table
from chemassay.suites.generation import descriptors as D

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"


@pytest.fixture(scope="module")
def chebi_mols():
    # ChEBI-20 (bundled): varied natural products and drugs, many PAINS/MCF hits.
    smiles = read_table(dataset_file("amore-chebi20", "chebi20_original.tsv"), sep="\t")["SMILES"].tolist()
    mols = [D.moses_mol(s) for s in smiles[:250]]
    return [m for m in mols if m is not None]


@pytest.fixture(scope="module")
def moses_mols():
    return [D.moses_mol(s) for s in read_smiles_file(DATA / "moses_test_300.txt").smiles[:150]]


def test_pattern_screen_never_drops_a_matching_alert(chebi_mols):
    patterns, packed = D._screened_alerts()
    n_matches = 0
    for mol in chebi_mols:
        with_h = Chem.AddHs(mol)
        mol_bits = D._pack_bitvect(Chem.PatternFingerprint(with_h, D.PATTERN_FP_BITS))
        candidates = set(np.flatnonzero(~np.any(packed & ~mol_bits, axis=1)).tolist())
        matched = {i for i, p in enumerate(patterns) if with_h.HasSubstructMatch(p)}
        assert matched <= candidates
        n_matches += bool(matched)
    assert n_matches > 20  # the set really exercises matching alerts


def test_filters_equal_the_unscreened_moses_test(chebi_mols):
    outcomes = []
    for mol in chebi_mols:
        fast = D.passes_moses_filters(mol, parses=Chem.MolToSmiles(mol, isomericSmiles=False))
        plain = D.passes_moses_filters(mol, screen=False)
        assert fast == plain
        outcomes.append(plain)
    assert 0 < sum(outcomes) < len(outcomes)


def test_qed_equals_rdkit(chebi_mols, moses_mols):
    for mol in chebi_mols[:120] + moses_mols[:80]:
        assert D.qed_score(mol, Crippen.MolLogP(mol)) == QED.qed(mol)
    explicit_h = Chem.MolFromSmiles("[2H]C([2H])([2H])c1ccccc1O")  # isotopic H atoms stay explicit
    assert any(a.GetAtomicNum() == 1 for a in explicit_h.GetAtoms())
    assert D.qed_score(explicit_h, Crippen.MolLogP(explicit_h)) == QED.qed(explicit_h)


def test_sa_score_known_values_and_range(moses_mols):
    # Values of RDKit's Contrib sascorer (the one MOSES ships) for two textbook molecules.
    assert D.sa_score(Chem.MolFromSmiles("CC(=O)Oc1ccccc1C(=O)O")) == pytest.approx(1.580039750008826, abs=1e-12)
    assert D.sa_score(Chem.MolFromSmiles("CN1C=NC2=C1C(=O)N(C(=O)N2C)C")) == pytest.approx(2.29798245679401, abs=1e-12)
    scores = [D.sa_score(m) for m in moses_mols]
    assert all(1.0 <= s <= 10.0 for s in scores)


def test_describe_matches_moses_definitions(moses_mols):
    for mol in moses_mols[:40]:
        record = D.describe_mol(mol)
        assert record.canonical == Chem.MolToSmiles(mol)
        assert record.logp == Crippen.MolLogP(mol) and record.weight == Descriptors.MolWt(mol)
        dense = np.unpackbits(np.frombuffer(record.fingerprint, np.uint8), bitorder="little")
        from rdkit.Chem import rdFingerprintGenerator

        expected = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024).GetFingerprintAsNumPy(mol)
        assert np.array_equal(dense, expected)
        assert list(record.fragments) == Chem.MolToSmiles(Chem.FragmentOnBRICSBonds(mol)).split(".")
        scaffold = MurckoScaffold.GetScaffoldForMol(mol)
        rings = scaffold.GetRingInfo().NumRings()
        assert record.scaffold == (Chem.MolToSmiles(scaffold) if rings >= 2 else None)


def test_scaffold_needs_two_rings():
    assert D.murcko_scaffold(Chem.MolFromSmiles("CCc1ccccc1")) is None
    assert D.murcko_scaffold(Chem.MolFromSmiles("CCc1ccc(-c2ccncc2)cc1")) == "c1ccc(-c2ccncc2)cc1"
    assert D.murcko_scaffold(Chem.MolFromSmiles("CCO")) is None
