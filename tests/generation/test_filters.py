"""MOSES dataset filters: hand-checked molecules, the shipped alert files, real data."""

from __future__ import annotations

from pathlib import Path

import pytest

from chemassay.data import dataset_file
from chemassay.runtime.files import sha256_file
from chemassay.suites.generation.filters import (
    DATA_DIR,
    FILTER_NAMES,
    filter_molecules,
    filter_verdict,
    largest_ring_size,
    matching_alerts,
    parse_like_moses,
    passes_filters,
    structural_alerts,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "generation"


def test_alert_files_are_the_moses_files():
    # Byte-identical to moses/metrics/*.csv of molsets 0.3.1.
    assert sha256_file(DATA_DIR / "mcf.csv") == "f4a2bfacb4cb8877295eb2a4b4e61ec9770a26388f1331e5dc9c193d22dd5f89"
    assert sha256_file(DATA_DIR / "wehi_pains.csv") == "d762e5420ec70f06d7e41d336cae6f67e2feb0eddf05c6171192a332726d296f"
    alerts = structural_alerts()
    assert sum(a.source == "MCF" for a in alerts) == 22
    assert sum(a.source == "PAINS" for a in alerts) == 480
    assert alerts[0].name == "MCF1" and alerts[0].smarts == "[#6]=&!@[#6]-[#6]#[#7]"
    assert all(not a.smarts.endswith(" ") for a in alerts)


@pytest.mark.parametrize(
    ("smiles", "failures"),
    [
        ("CC(=O)Nc1ccccc1", ()),                     # acetanilide passes
        ("C1CCCCCC1", ()),                           # a 7-membered ring is allowed
        ("C1CCCCCCC1", ("ring_size",)),              # 8-membered ring: removed (code: len >= 8)
        ("C[N+](C)(C)C", ("charge",)),
        ("CCP", ("atoms",)),
        ("CCI", ("atoms", "mcf")),                   # iodine, and MCF4 (alkyl halide)
        ("CCCCl", ("mcf",)),                         # MCF4 [H]C([H])([#6])[F,Cl,Br,I]
        ("C=CC#N", ("mcf",)),                        # MCF1 acrylonitrile
        ("S=C1SC(=Cc2ccccc2)C(=O)N1", ("pains",)),   # ene_rhod_A (benzylidene rhodanine)
        ("C1CC", ("parse",)),
    ],
)
def test_hand_checked_molecules(smiles, failures):
    verdict = filter_verdict(smiles)
    assert verdict.failures == failures
    assert verdict.passed is (not failures)
    assert passes_filters(smiles) is (not failures)
    if failures:
        assert verdict.first_failure == failures[0]


def test_alert_names_and_largest_ring():
    assert [a.name for a in matching_alerts(parse_like_moses("CCCCl"))] == ["MCF4"]
    assert [a.name for a in matching_alerts(parse_like_moses("S=C1SC(=Cc2ccccc2)C(=O)N1"), "PAINS")] == [
        "<regId=ene_rhod_A(235)>"
    ]
    assert largest_ring_size(parse_like_moses("C1CCCCCCC1")) == 8
    assert largest_ring_size(parse_like_moses("CCO")) == 0


def test_custom_limits():
    assert filter_verdict("C1CCCCCCC1", max_ring_size=8).passed
    assert not filter_verdict("CCO", allowed={"C", "H"}).passed


def test_parse_like_moses_removes_explicit_hydrogens():
    # MOSES parses with MolFromSmiles, which drops the explicit [H] of this MOSES molecule.
    from rdkit import Chem

    mol = parse_like_moses("[H]N=c1c(C#N)c(C)c(C(=O)OCC)nn1-c1ccccc1")
    assert Chem.MolToSmiles(mol) == "CCOC(=O)c1nn(-c2ccccc2)c(=N)c(C#N)c1C"


def test_moses_molecules_pass(tmp_path):
    smiles = (DATA / "moses_test_300.txt").read_text().split()[1:151]
    summary = filter_molecules(smiles)
    assert summary.n_removed == 0
    assert summary.kept == list(range(150))


def test_screen_changes_nothing_on_real_molecules_with_alerts():
    # ChEBI-20 (bundled) has charged, metal-containing and PAINS molecules.
    rows = dataset_file("amore-chebi20", "chebi20_original.tsv").read_text().splitlines()[1:]
    smiles = [row.split("\t")[1].replace("\\\\", "\\") for row in rows[:100]]
    screened = filter_molecules(smiles, screen=True)
    full = filter_molecules(smiles, screen=False)
    assert screened.verdicts == full.verdicts
    assert sum(screened.alert_hits.values()) > 5
    assert screened.n_removed == sum(screened.removed_by.values())
    for name in FILTER_NAMES:
        assert screened.failing[name] >= screened.removed_by[name]
    assert screened.removed_by["charge"] > 0 and screened.removed_by["atoms"] > 0


def test_filter_molecules_in_parallel_matches_serial():
    smiles = ["CCO", "C1CC", "CCCCl", "c1ccccc1", "C[N+](C)(C)C", "C=CC#N"] * 3
    serial = filter_molecules(smiles, n_jobs=1)
    parallel = filter_molecules(smiles, n_jobs=2)
    assert serial.verdicts == parallel.verdicts
    assert serial.kept == [0, 3, 6, 9, 12, 15]
    assert serial.removed_by == {"parse": 3, "ring_size": 0, "charge": 3, "atoms": 0, "mcf": 6, "pains": 0, "roundtrip": 0}
    assert serial.alert_hits == {"MCF4": 3, "MCF1": 3}


def test_agrees_with_the_filters_metric():
    # The ``Filters`` metric (descriptors.passes_moses_filters) and the dataset filter are
    # two entry points to the same MOSES rule: they must never disagree.
    from chemassay.suites.generation.descriptors import moses_mol, passes_moses_filters

    rows = dataset_file("amore-chebi20", "chebi20_original.tsv").read_text().splitlines()[1:61]
    smiles = [row.split("\t")[1].replace("\\\\", "\\") for row in rows]
    smiles += ["C1CCCCCCC1", "CCI", "C=CC#N", "S=C1SC(=Cc2ccccc2)C(=O)N1", "C1CC", "CCO"]
    for text in smiles:
        mol = moses_mol(text)
        expected = mol is not None and passes_moses_filters(mol)
        assert passes_filters(text) is expected, text
