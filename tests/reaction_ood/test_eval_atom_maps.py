"""The shipped RXNMapper mapping of Schneider 50k, and atom-map lookup for reaction tables."""

from __future__ import annotations

import csv
import gzip
import random

import pandas as pd
import pytest

from chemassay.chem.molecules import canonical_smiles
from chemassay.contract.errors import UserInputError
from chemassay.data import dataset_file
from chemassay.runtime.files import sha256_file
from chemassay.suites.reaction_ood.atom_mapping import (
    SCHNEIDER_MAPPED_FILE,
    MappedReaction,
    mapped_reactions_for,
    read_mapped_file,
    schneider_mapped,
    write_mapped_rows,
)


def test_shipped_mapping_matches_its_provenance():
    assert sha256_file(SCHNEIDER_MAPPED_FILE) == "7b52d50a0f14c873edc80d3aa539f122e40d6ac85f16a5c9adbca7c6a7735048"
    table = schneider_mapped()
    assert len(table) == 43491
    failed = [r for r in table.values() if not r.mapped_rxn]
    assert len(failed) == 1 and "512" in failed[0].error


def test_shipped_maps_keep_the_molecules_and_map_every_product_atom():
    with gzip.open(dataset_file("schneider-50k", "schneider50k.csv.gz"), "rt", newline="") as handle:
        rows = [row["rxn"] for row in csv.DictReader(handle)]
    table = schneider_mapped()
    for rxn in random.Random(0).sample(rows, 40):
        mapped = table[rxn].mapped_rxn
        left, _, right = mapped.partition(">>")
        original_left, _, original_right = rxn.partition(">>")
        assert sorted(canonical_smiles(s) for s in left.split(".")) == sorted(canonical_smiles(s) for s in original_left.split("."))
        assert canonical_smiles(right) == canonical_smiles(original_right)
        assert right.count("[") == right.count(":")  # every product atom is bracketed with a map


def test_mapped_reactions_for_tables(tmp_path):
    table = schneider_mapped()
    rxn = next(iter(table))
    frame = pd.DataFrame({"rxn_smiles": ["CCO>>CC=O", "x"], "source_rxn_smiles": [rxn, "CCO>>CC=O"]})
    mapped, source = mapped_reactions_for(frame, "auto")
    assert mapped == [table[rxn].mapped_rxn, None]
    assert "source_rxn_smiles" in source
    own = pd.DataFrame({"rxn_smiles": ["[CH3:1][OH:2]>>[CH3:1][Cl:3]"]})
    assert mapped_reactions_for(own, "auto")[0] == ["[CH3:1][OH:2]>>[CH3:1][Cl:3]"]
    column = pd.DataFrame({"rxn_smiles": ["CCO>>CC"], "mapped_rxn_smiles": ["[CH3:1][CH2:2]O>>[CH3:1][CH3:2]"]})
    assert mapped_reactions_for(column, "auto")[0] == ["[CH3:1][CH2:2]O>>[CH3:1][CH3:2]"]
    mapping = tmp_path / "maps.tsv"
    with open(mapping, "w") as handle:
        handle.write("rxn\tmapped_rxn\tconfidence\terror\n")
        write_mapped_rows(handle, [MappedReaction("CCO>>CC=O", "[CH3:1][CH2:2]O>>[CH3:1][CH:2]=O", 0.9)])
    assert read_mapped_file(mapping)["CCO>>CC=O"].confidence == pytest.approx(0.9)
    assert mapped_reactions_for(pd.DataFrame({"rxn_smiles": ["CCO>>CC=O"]}), str(mapping))[0] == [
        "[CH3:1][CH2:2]O>>[CH3:1][CH:2]=O"]
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\n1\t2\n")
    with pytest.raises(UserInputError, match="missing column"):
        read_mapped_file(bad)


def test_map_command_needs_the_mapping_extra(cli, tmp_path):
    import importlib
    import importlib.util

    installed = importlib.util.find_spec("rxnmapper") is not None
    if installed:
        try:
            importlib.import_module("rxnmapper")
        except ImportError:
            pass  # installed without its dependencies (as `make` installs it): the message must say so
        else:
            pytest.skip("rxnmapper works here")
    reactions = tmp_path / "r.csv"
    pd.DataFrame({"rxn_smiles": ["CC(=O)Cl.NC>>CNC(C)=O"]}).to_csv(reactions, index=False)
    run = cli("reaction-ood", "map", reactions, "--out", tmp_path / "m.tsv.gz")
    assert run.code == 2
    assert "chemassay[mapping]" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    if installed:
        assert "is installed but cannot be imported" in run.stderr


@pytest.mark.slow
def test_rxnmapper_maps_and_resumes(tmp_path):
    pytest.importorskip("rxnmapper")
    from chemassay.suites.reaction_ood.atom_mapping import map_reactions_to_file

    reactions = ["CC(=O)Cl.NC>>CNC(C)=O", "CCO.CC(=O)O>>CCOC(C)=O", "CC(=O)Cl.NC>>CNC(C)=O"]
    out = map_reactions_to_file(reactions, tmp_path / "m.tsv.gz")
    table = read_mapped_file(out)
    assert list(table) == reactions[:2]
    assert all(":" in r.mapped_rxn and r.confidence > 0 for r in table.values())
