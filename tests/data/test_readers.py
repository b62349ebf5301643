import gzip

import pandas as pd
import pytest

from chemassay.data.readers import iter_lines, read_smiles_file, read_table
from chemassay.errors import UserInputError


def test_plain_list_with_header_comments_and_blanks(tmp_path):
    path = tmp_path / "gen.txt"
    path.write_text("SMILES\n# sampled with seed 0\nCCO\n\nc1ccccc1 benzene\nnot-a-smiles\n")
    result = read_smiles_file(path)
    assert result.smiles == ["CCO", "c1ccccc1", "not-a-smiles"]
    assert result.lines == [3, 5, 6]


def test_csv_with_smiles_column_and_empty_cell(tmp_path):
    path = tmp_path / "gen.csv"
    path.write_text("id,SMILES\n1,CCO\n2,\n3,CCN\n")
    result = read_smiles_file(path)
    assert result.smiles == ["CCO", "CCN"]
    assert result.skipped == [{"line": 3, "reason": "empty SMILES cell"}]


def test_table_without_smiles_column_is_a_clear_error(tmp_path):
    path = tmp_path / "gen.csv"
    path.write_text("id,structure\n1,CCO\n")
    with pytest.raises(UserInputError) as info:
        read_smiles_file(path)
    assert "--column" in str(info.value)
    assert read_smiles_file(path, column="structure").smiles == ["CCO"]


def test_gzip_and_missing_file(tmp_path):
    path = tmp_path / "gen.txt.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("CCO\nCCC\n")
    assert read_smiles_file(path).smiles == ["CCO", "CCC"]
    assert list(iter_lines(path)) == [(1, "CCO"), (2, "CCC")]
    with pytest.raises(UserInputError):
        read_smiles_file(tmp_path / "absent.txt")


def test_read_table_formats_and_required_columns(tmp_path):
    frame = pd.DataFrame({"rxn_smiles": ["CC>>C"], "year": ["2001"]})
    frame.to_parquet(tmp_path / "t.parquet")
    frame.to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    assert read_table(tmp_path / "t.parquet", required=("rxn_smiles",))["year"][0] == "2001"
    assert read_table(tmp_path / "t.tsv")["rxn_smiles"][0] == "CC>>C"
    with pytest.raises(UserInputError) as info:
        read_table(tmp_path / "t.tsv", required=("document_id",))
    assert "document_id" in str(info.value)
