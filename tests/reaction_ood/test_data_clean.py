"""Cleaning (Section S1.1): standardization, each filter rule, dedup tie-breaking, streaming."""

from __future__ import annotations

import pandas as pd
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.suites.reaction_ood.clean import (
    RULES,
    CleanConfig,
    clean_file,
    clean_reactions,
    filter_reason,
    standardize_reaction,
)
from chemassay.suites.reaction_ood.io import read_schneider_50k

ESTER = "CCCCC(=O)O.CCO>>CCCCC(=O)OCC"


def reason(rxn: str, config: CleanConfig = CleanConfig()) -> str | None:
    reactants, products = standardize_reaction(rxn, config)
    return filter_reason(reactants, products, config)


def test_standardization_removes_maps_isotopes_cxsmiles_and_merges_reagents():
    mapped = "[CH3:1][CH2:2][OH:3].[C:4](=[O:5])([OH:6])[CH2:7][CH2:8][CH3:9]>[H+]>[CH3:1][CH2:2][O:3][C:4](=[O:5])[CH2:7][CH2:8][CH3:9] |f:0.1|"
    reactants, products = standardize_reaction(mapped)
    assert reactants == sorted(["CCCC(=O)O", "CCO", "[H+]"])  # reagent merged into reactants
    assert products == ["CCCC(=O)OCC"]
    reactants, _ = standardize_reaction("[13CH3]Cl.C[C@H](N)C(=O)O>>C[C@H](NC)C(=O)O")
    assert "CCl" in reactants and "C[C@H](N)C(=O)O" in reactants  # isotope gone, stereo kept
    kept, _ = standardize_reaction("[13CH3]Cl.CCO>>CCOC", CleanConfig(remove_isotopes=False))
    assert "[13CH3]Cl" in kept
    assert standardize_reaction("[H]OC([H])([H])C.CC>>CCOCC")[0] == ["CC", "CCO"]  # explicit H folded


@pytest.mark.parametrize(("rxn", "rule"), [
    ("CC.O>>CCO", "too_few_reactant_heavy_atoms"),  # 3 heavy atoms
    ("O=S(=O)(O)O.O.O>>O=S(=O)([O-])O", "no_carbon_in_reactants"),
    ("CO.CO.CO>>COC", "no_reactant_with_2_bonds"),  # 6 heavy atoms, 1 bond each
    ("CCCCBr.[Na+].[OH-]>>[Br-]", "no_new_product_heavy_enough"),  # only new product has 1 heavy atom
    ("CCCCO.CCN>>CCCCO", "no_new_product_heavy_enough"),  # product already among reactants
    ("CCCCC(=O)O.[Na+].[OH-]>>CCCCC(=O)[O-]", "protonation_only"),
    ("CCCCN.Cl>>CCCC[NH3+].[Cl-]", "protonation_only"),
    (ESTER, None),
])
def test_each_filter_rule(rxn, rule):
    assert reason(rxn) == rule


def test_token_limit_is_strict_and_counts_both_sides():
    reactants, products = standardize_reaction(ESTER)
    # reactants 'CCCCC(=O)O.CCO' = 14 tokens, products 'CCCCC(=O)OCC' = 12 tokens
    assert filter_reason(reactants, products, CleanConfig(max_tokens=15)) is None
    assert filter_reason(reactants, products, CleanConfig(max_tokens=14)) == "too_many_tokens"
    assert filter_reason(reactants, ["C" * 20], CleanConfig(max_tokens=15)) == "too_many_tokens"  # product side


def test_rules_see_the_molecule_as_its_canonical_text():
    # heavy water keeps its two H atoms when parsed ([2H]O[2H]) and becomes [H]O[H] once the
    # isotope labels are removed; read back, that is plain water with no bond, as in the
    # reference, so it does not count as a reactant with 2 bonds
    assert standardize_reaction("CCl.CCl.CCl.[2H]O[2H]>>CCCl")[0] == ["CCl", "CCl", "CCl", "[H]O[H]"]
    assert reason("CCl.CCl.CCl.[2H]O[2H]>>CCCl") == "no_reactant_with_2_bonds"
    assert reason("CCl.CCl.CCO>>CCCl") is None  # ethanol has 2 bonds: the reaction passes


def test_rules_are_checked_in_the_reference_order():
    # fails both the carbon rule and the bond rule: counted under the earlier one
    assert reason("O.O.O.O.O>>OO") == "no_carbon_in_reactants"


def _table(rows):
    return pd.DataFrame(rows, columns=["rxn_smiles", "document_id", "year", "class_code"])


def test_dedup_prefers_a_class_code_then_the_earlier_year():
    same = ["CCO.CCCCC(=O)O>>CCCCC(=O)OCC", ESTER, "OCC.OC(=O)CCCC>>CCOC(=O)CCCC"]
    frame = _table([[same[0], "d1", 2010, None], [same[1], "d2", 2012, "1.2.3"], [same[2], "d3", 2008, "1.2.3"]])
    clean, report = clean_reactions(frame)
    assert report.duplicates == 2 and report.rows_out == 1
    row = clean.iloc[0]
    assert row["document_id"] == "d3" and row["year"] == 2008 and row["n_records"] == 3
    assert row["rxn_smiles"] == "CCCCC(=O)O.CCO>>CCCCC(=O)OCC"
    assert row["source_rxn_smiles"] == same[2] and row["source_row"] == 3


def test_dedup_ties_keep_the_first_row():
    frame = _table([[ESTER, "d1", 2010, "1.2.3"], [ESTER, "d2", 2010, "1.2.3"]])
    clean, _ = clean_reactions(frame)
    assert clean["document_id"].tolist() == ["d1"]


def test_reference_dedup_reproduces_the_authors_sequential_rule():
    # the authors' code replaces a record that has a class by a later one without a class
    # when the later one is earlier in time; the 'paper' rule keeps the classified record
    frame = _table([[ESTER, "d1", 2010, "1.2.3"], [ESTER, "d2", 2005, None]])
    paper, _ = clean_reactions(frame, CleanConfig(dedup="paper"))
    reference, _ = clean_reactions(frame, CleanConfig(dedup="reference"))
    assert paper["document_id"].tolist() == ["d1"]
    assert reference["document_id"].tolist() == ["d2"]
    # unknown years: every later record displaces the kept one in the reference code
    frame = _table([[ESTER, "d1", None, None], [ESTER, "d2", None, None], [ESTER, "d3", None, None]])
    reference, _ = clean_reactions(frame, CleanConfig(dedup="reference"))
    paper, _ = clean_reactions(frame, CleanConfig(dedup="paper"))
    assert reference["document_id"].tolist() == ["d3"] and paper["document_id"].tolist() == ["d1"]
    none, report = clean_reactions(frame, CleanConfig(dedup="none"))
    assert len(none) == 3 and report.duplicates == 0


def test_unparsable_reactions_are_counted_and_listed():
    frame = pd.DataFrame({"rxn_smiles": [ESTER, "C1CC>>CC", "CC>CC", "", "CC(C)(C)(C)(C)C.CCO>>CC"]})
    clean, report = clean_reactions(frame)
    assert report.unparsable == 4 and report.rows_out == 1
    rows = {p["row"]: p["reason"] for p in report.problems}
    assert set(rows) == {2, 3, 4, 5}
    assert "C1CC" in rows[2]
    assert "2 '>' signs" in rows[3]
    assert rows[4] == "empty reaction"
    assert "valence" in rows[5].lower()
    counts = report.counts()
    assert counts["rows_in"] == counts["unparsable"] + sum(counts[r] for r in RULES) + counts["duplicates"] + counts["rows_out"]


def test_bad_config():
    with pytest.raises(UserInputError, match="dedup"):
        CleanConfig(dedup="latest")
    with pytest.raises(UserInputError, match="rxn_smiles"):
        clean_reactions(pd.DataFrame({"smiles": ["CCO"]}))


@pytest.fixture(scope="module")
def schneider_sample():
    return read_schneider_50k().iloc[:1500].reset_index(drop=True)


def test_clean_real_reactions_and_the_streaming_path_agree(schneider_sample, tmp_path):
    clean, report = clean_reactions(schneider_sample)
    counts = report.counts()
    assert counts["rows_in"] == 1500 and counts["unparsable"] == 0
    assert counts["rows_in"] == sum(counts[r] for r in RULES) + counts["duplicates"] + counts["rows_out"]
    assert clean["rxn_smiles"].is_unique
    assert (clean["rxn_smiles"] == clean["reactants"] + ">>" + clean["products"]).all()
    assert int(clean["n_records"].sum()) == counts["rows_out"] + counts["duplicates"]
    source = tmp_path / "sample.csv"
    schneider_sample.to_csv(source, index=False)
    out = tmp_path / "clean.parquet"
    streamed = clean_file(source, out, chunk_rows=400, n_jobs=2, batch_size=250)
    assert streamed.counts() == counts
    again = pd.read_parquet(out)
    assert again["rxn_smiles"].tolist() == clean["rxn_smiles"].tolist()
    assert again["source_row"].tolist() == clean["source_row"].tolist()
    csv_out = tmp_path / "clean.csv"
    clean_file(source, csv_out, chunk_rows=700)
    assert pd.read_csv(csv_out)["rxn_smiles"].tolist() == clean["rxn_smiles"].tolist()


def test_dask_scheduler_gives_the_same_result(schneider_sample):
    pytest.importorskip("distributed")
    sample = schneider_sample.iloc[:60]
    local, local_report = clean_reactions(sample, batch_size=20)
    dask, dask_report = clean_reactions(sample, batch_size=20, scheduler="dask-local")
    assert dask_report.counts() == local_report.counts()
    assert dask["rxn_smiles"].tolist() == local["rxn_smiles"].tolist()


def test_report_reads_as_counts():
    _, report = clean_reactions(pd.DataFrame({"rxn_smiles": [ESTER, ESTER, "CC.O>>CCO"]}))
    assert dict(report) == report.counts()
    assert report["duplicates"] == 1 and report["too_few_reactant_heavy_atoms"] == 1 and report["rows_out"] == 1
