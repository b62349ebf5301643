"""Augmentations: hand-checked examples, identity on every shipped molecule, cycle_renumber
never reusing an open ring-closure label (property test over all shipped molecules)."""

from __future__ import annotations

import re
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdkit import Chem

from chemassay.chem.tokenizer import tokenize_smiles
from chemassay.suites.robustness.augment import (
    AUGMENTATIONS,
    NotApplicable,
    augment,
    augment_many,
    canonical,
    cycle_renumber,
    explicit_h,
    kekulize,
    molecule_identity,
    randomized,
    ring_closure_labels,
)
from chemassay.suites.robustness.data import load_amore


@cache
def shipped_smiles() -> tuple[str, ...]:
    return tuple(load_amore("chebi20").smiles) + tuple(load_amore("isomers").smiles)


@cache
def canonical_of(smiles: str) -> str:
    return Chem.MolToSmiles(Chem.MolFromSmiles(smiles))


def test_hand_checked_examples():
    assert canonical("OCC") == "CCO"
    assert explicit_h("CCO") == "[CH3][CH2][OH]"
    assert explicit_h("c1ccccc1") == "[cH]1[cH][cH][cH][cH][cH]1"
    assert kekulize("c1ccccc1") == "C1=CC=CC=C1"
    assert kekulize("Cc1ccncc1") == "CC1=CC=NC=C1"
    assert randomized("CCO", seed=3) == randomized("CCO", seed=3)
    assert {randomized("c1ccccc1CCO", seed=s) for s in range(20)} != {canonical("c1ccccc1CCO")}


def test_kekulize_has_no_aromatic_atoms():
    for smiles in load_amore("isomers").smiles[:200] + ["c1ccc2[nH]ccc2c1", "c1ccsc1"]:
        text = kekulize(smiles)
        outside_brackets = re.sub(r"\[[^\]]*\]", "", text)
        assert not re.search(r"[cnosp]", outside_brackets), text
        assert ":" not in text


def test_cycle_renumber_changes_labels_and_keeps_molecule():
    out = cycle_renumber("C1CC1", seed=0)
    assert ring_closure_labels(out)[0] != 1
    assert canonical_of(out) == canonical_of("C1CC1")
    # A label reused after its ring closed, nested rings, a bond symbol before a digit.
    for smiles in ["C1CC1C1CC1", "C12CCC1CC2", "C1=CC=C2C(=C1)C=CC=C2", "C%10CC%10", "C/C=C\\1/CCC1"]:
        for seed in range(10):
            text = cycle_renumber(smiles, seed)
            assert canonical_of(text) == canonical_of(smiles), (smiles, seed, text)


def test_cycle_renumber_keeps_double_backslash_text():
    smiles = "C[C@]12CCC(=O)C=C1CC[C@@H]3[C@@H]2C(=O)C[C@]\\\\4([C@H]3CC/C4=C/C(=O)OC)C"
    assert "\\\\" in smiles
    out = cycle_renumber(smiles, seed=5)
    assert "\\\\" in out
    assert re.sub(r"\d", "", out) == re.sub(r"\d", "", smiles)
    assert canonical_of(out) == canonical_of(smiles)


def test_cycle_renumber_not_applicable_without_rings():
    with pytest.raises(NotApplicable):
        cycle_renumber("CCO")
    rows = augment_many(["CCO", "C1CC1", "not a smiles"], "cycle_renumber", seed=0)
    assert [r.status for r in rows] == ["not_applicable", "ok", "failed"]
    assert rows[0].augmented == "CCO" and "no ring" in rows[0].reason
    assert rows[2].reason.startswith("original")


def _labels_never_reused_while_open(text: str) -> bool:
    open_labels: set[int] = set()
    for token in tokenize_smiles(text):
        labels = ring_closure_labels(token) if not token.startswith("[") else []
        for label in labels:
            if label in open_labels:
                open_labels.remove(label)
            else:
                open_labels.add(label)
    return not open_labels


def test_cycle_renumber_every_shipped_molecule_seed0():
    """Every shipped molecule with rings: same molecule (canonical SMILES) after renumbering."""
    checked = 0
    for smiles in shipped_smiles():
        try:
            out = cycle_renumber(smiles, seed=0)
        except NotApplicable:
            assert not ring_closure_labels(smiles)
            continue
        assert canonical_of(out) == canonical_of(smiles), smiles
        checked += 1
    assert checked == 2445 + 918


@settings(max_examples=300, deadline=None)
@given(index=st.integers(min_value=0, max_value=3300 + 918 - 1), seed=st.integers(min_value=0, max_value=2**31))
def test_cycle_renumber_property_over_shipped_molecules(index, seed):
    smiles = shipped_smiles()[index]
    try:
        out = cycle_renumber(smiles, seed)
    except NotApplicable:
        return
    assert _labels_never_reused_while_open(out)
    assert len(ring_closure_labels(out)) == len(ring_closure_labels(smiles))
    assert canonical_of(out) == canonical_of(smiles)


def test_every_augmentation_is_identity_on_all_isomers():
    smiles = load_amore("isomers").smiles
    for kind in AUGMENTATIONS:
        rows = augment_many(smiles, kind, seed=1)
        assert not [r for r in rows if r.status == "failed"], kind
        applicable = [r for r in rows if r.status != "not_applicable"]
        assert all(r.ok for r in applicable)
        # Every isomer has a ring; only AMORE's narrower renumbering scope leaves some out.
        assert len(applicable) == len(smiles) or kind == "cycle_renumber_amore"


@pytest.mark.slow
def test_every_augmentation_is_identity_on_all_chebi20():
    smiles = load_amore("chebi20").smiles
    for kind in AUGMENTATIONS:
        rows = augment_many(smiles, kind, seed=0, n_jobs=2)
        statuses = {r.status for r in rows}
        assert "failed" not in statuses, [(r.index, r.reason) for r in rows if r.status == "failed"][:3]
        if kind == "cycle_renumber":
            assert sum(r.status == "not_applicable" for r in rows) == 855


def test_identity_check_flags_a_reused_open_label():
    # A bicyclic C9H16 with ring label 2 renamed to 1 while 1 is still open: two cyclopropane
    # rings instead, same formula, a different molecule - the kind of error 6 rows of the
    # AMORE ChEBI-20 cycle file have.
    original = "C1CC2CCCC1CC2"
    wrong = "C1CC1CCCC1CC1"
    assert Chem.MolFromSmiles(wrong) is not None
    assert molecule_identity(original) != molecule_identity(wrong)
    assert augment(original, "cycle_renumber", 0) != original
    assert molecule_identity(augment(original, "cycle_renumber", 0)) == molecule_identity(original)


def test_cycle_renumber_amore_scope():
    # Only rings whose two labels are adjacent among the ring labels are renumbered (AMORE's
    # scope); the others keep their labels, and no open label is ever reused.
    out = augment("c1ccc2ccccc2c1", "cycle_renumber_amore", 4)
    labels = ring_closure_labels(out)
    assert labels[0] == labels[-1] == 1 and labels[1] == labels[2] != 1
    with pytest.raises(NotApplicable):
        augment("C1CC2CC1C2", "cycle_renumber_amore", 0)
    for smiles in load_amore("chebi20").smiles[:300]:
        try:
            text = augment(smiles, "cycle_renumber_amore", 1)
        except NotApplicable:
            continue
        assert canonical_of(text) == canonical_of(smiles)
