"""Readers: the bundled Schneider 50k set, generic tables, Lowe .rsmi, Pistachio JSON lines."""

from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.suites.reaction_ood.io import (
    STANDARD_COLUMNS,
    detect_format,
    iter_reactions,
    read_reactions,
    read_schneider_50k,
    schneider_50k_path,
)

# real reactions from the Schneider 50k set (rows 1-3)
RXN = [
    "C1CCCCC1.CCO.CS(=O)(=O)N1CCN(Cc2ccccc2)CC1.[OH-].[OH-].[Pd+2]>>CS(=O)(=O)N1CCNCC1",
    "CCOC(C)=O.Cc1cc([N+](=O)[O-])ccc1NC(=O)c1ccccc1.Cl[Sn]Cl.O.O.O=C([O-])O.[Na+]>>Cc1cc(N)ccc1NC(=O)c1ccccc1",
    "COc1ccc(-c2coc3ccc(-c4nnc(S)o4)cc23)cc1.COc1ccc(CCl)cc1F>>COc1ccc(-c2coc3ccc(-c4nnc(SCc5ccc(OC)c(F)c5)o4)cc23)cc1",
]


@pytest.fixture(scope="module")
def schneider():
    return read_schneider_50k()


def test_schneider_reader(schneider):
    assert list(schneider.columns) == list(STANDARD_COLUMNS)
    assert len(schneider) == 50_000
    assert schneider["document_id"].nunique() == 20_771  # 'US' stripped: one id per patent
    assert schneider["class_code"].nunique() == 50
    assert (schneider["class_code"].value_counts() == 1000).all()
    assert schneider.loc[0, "rxn_smiles"] == RXN[0]
    assert schneider.loc[0, "document_id"] == "06887874"
    assert schneider["source_row"].tolist()[:3] == [1, 2, 3]
    assert schneider["authors"].isna().all()
    assert str(schneider["year"].dtype) == "Int64"
    # 49,752 grants + 103 applications get a year; 143 reissues and 2 SIRs cannot
    assert int(schneider["year"].notna().sum()) == 49_855
    assert int(schneider["year"].min()) == 1976 and int(schneider["year"].max()) == 2013
    missing = schneider.loc[schneider["year"].isna(), "document_id"]
    assert missing.str.startswith(("RE", "H")).all()
    assert detect_format(schneider_50k_path()) == "schneider"


def test_generic_csv_tsv_parquet_agree(tmp_path):
    frame = pd.DataFrame({
        "rxn_smiles": RXN,
        "document_id": ["US06887874", "EP1234567A1", ""],
        "authors": ["Smith, J; Doe, A", "", "Lee, K"],
        "year": ["2005", "", "2013"],
        "class_code": ["6.1.5", "7.1.1", ""],
        "assignee": ["Acme", None, None],
        "extra": [1, 2, 3],
    })
    frame.to_csv(tmp_path / "r.csv", index=False)
    frame.to_csv(tmp_path / "r.tsv", sep="\t", index=False)
    frame.to_parquet(tmp_path / "r.parquet", index=False)
    read = [read_reactions(tmp_path / name) for name in ("r.csv", "r.tsv", "r.parquet")]
    for got in read:
        assert list(got.columns) == list(STANDARD_COLUMNS)
        assert got["rxn_smiles"].tolist() == RXN
        assert got["document_id"].tolist() == ["06887874", "EP1234567A1", None]
        assert got["authors"].tolist() == ["Smith, J; Doe, A", None, "Lee, K"]
        assert got["year"].tolist()[0] == 2005 and got["year"].tolist()[2] == 2013
        assert pd.isna(got["year"].tolist()[1])  # EP number: no year derived
        assert got["class_code"].tolist() == ["6.1.5", "7.1.1", None]


def test_year_derived_from_patent_when_missing(tmp_path):
    pd.DataFrame({"rxn_smiles": RXN[:2], "document_id": ["US5000000", "US20120123456A1"]}).to_csv(tmp_path / "a.csv", index=False)
    got = read_reactions(tmp_path / "a.csv")
    assert got["year"].tolist() == [1991, 2012]
    kept = read_reactions(tmp_path / "a.csv", derive_year=False)
    assert kept["year"].isna().all()


def test_aliases_and_list_authors_in_parquet(tmp_path):
    frame = pd.DataFrame({"reaction_smiles": RXN[:2], "patent": ["US4000000", "US4000001"],
                          "authors": [["A. One", "B. Two"], []], "namerxn": ["3.1.2", "0.0"]})
    frame.to_parquet(tmp_path / "a.parquet", index=False)
    got = read_reactions(tmp_path / "a.parquet")
    assert got["authors"].tolist() == ["A. One;B. Two", None]
    assert got["class_code"].tolist() == ["3.1.2", "0.0"]
    assert got["year"].tolist() == [1976, 1977]


def test_malformed_years_are_listed_not_dropped(tmp_path):
    pd.DataFrame({"rxn_smiles": RXN, "year": ["2001", "20x1", "1066.5"]}).to_csv(tmp_path / "y.csv", index=False)
    got = read_reactions(tmp_path / "y.csv")
    assert len(got) == 3
    assert got["year"].tolist()[0] == 2001
    problems = got.attrs["read_problems"]
    assert [p["row"] for p in problems] == [2, 3]
    assert "not a whole number" in problems[0]["reason"]


def test_rsmi_reader(tmp_path):
    # Lowe's extraction: tab-separated, a CXSMILES fragment group after a space
    lines = ["ReactionSmiles\tPatentNumber\tParagraphNum\tYear\tTextMinedYield\tCalculatedYield",
             f"{RXN[0]} |f:3.4|\tUS06887874B1\t0012\t2005\t95%\t",
             f"{RXN[1]}\tUS20130079342A1\t0031\t2013\t\t80.1%"]
    path = tmp_path / "grants.rsmi"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert detect_format(path) == "rsmi"
    got = read_reactions(path)
    assert got["rxn_smiles"].tolist()[0].endswith("|f:3.4|")
    assert got["document_id"].tolist() == ["06887874", "20130079342"]
    assert got["year"].tolist() == [2005, 2013]


def test_pistachio_jsonl_reader(tmp_path):
    records = [
        {"title": "US20100123456A1_0001", "data": {"smiles": RXN[2], "namerxn": "1.8.5", "date": "20100520",
                                                   "authors": ["Jane Roe", "John Doe"], "assignees": ["Acme Corp"]}},
        {"data": {"documentId": "EP1234567A1", "smiles": RXN[0], "date": "bad"}},
        "not json at all",
    ]
    path = tmp_path / "pistachio.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for record in records:
            handle.write((json.dumps(record) if isinstance(record, dict) else record) + "\n")
    assert detect_format(path) == "pistachio"
    got = read_reactions(path)
    assert len(got) == 3
    assert got.loc[0, "document_id"] == "20100123456"
    assert got.loc[0, "authors"] == "Jane Roe;John Doe"
    assert got.loc[0, "assignee"] == "Acme Corp"
    assert got.loc[0, "year"] == 2010 and got.loc[0, "class_code"] == "1.8.5"
    assert got.loc[1, "document_id"] == "EP1234567A1" and pd.isna(got.loc[1, "year"])
    assert got.loc[2, "rxn_smiles"] == ""
    assert {p["row"] for p in got.attrs["read_problems"]} == {2, 3}


def test_streaming_chunks_cover_every_row():
    chunks = list(iter_reactions(schneider_50k_path(), chunk_rows=20_000))
    assert [len(c) for c in chunks] == [20_000, 20_000, 10_000]
    assert chunks[1]["source_row"].iloc[0] == 20_001


def test_clear_errors(tmp_path):
    with pytest.raises(UserInputError, match="no such file"):
        read_reactions(tmp_path / "missing.csv")
    pd.DataFrame({"smiles": ["CCO"]}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(UserInputError, match="no reaction column"):
        read_reactions(tmp_path / "bad.csv")
    with pytest.raises(UserInputError, match="unknown format"):
        read_reactions(tmp_path / "bad.csv", fmt="xml")
    pd.DataFrame({"rxn": RXN}).to_csv(tmp_path / "s.csv", index=False)
    with pytest.raises(UserInputError, match="missing column"):
        read_reactions(tmp_path / "s.csv", fmt="schneider")
