import gzip

import pandas as pd
import pytest

from chemassay.contract.errors import UserInputError
from chemassay.data.readers import iter_lines, read_smiles_file, read_table


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
    # The one rule for empty cells: the row is an item whose SMILES is empty (invalid),
    # kept in place so it is counted, never dropped.
    assert result.smiles == ["CCO", "", "CCN"]
    assert result.lines == [2, 3, 4]
    assert result.empty_lines == [3]


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


def test_unreadable_files_give_one_line_errors(tmp_path):
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"CCO\n\xff\xfe\x00\x01\n")
    with pytest.raises(UserInputError, match="not UTF-8 text"):
        read_smiles_file(binary)
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"CCO\nC\x00C\n")
    with pytest.raises(UserInputError, match="binary file"):
        list(iter_lines(nul))
    truncated = tmp_path / "cut.txt.gz"
    data = gzip.compress(b"CCO\n" * 20000)
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(UserInputError, match="gzip file is truncated"):
        read_smiles_file(truncated)
    with pytest.raises(UserInputError, match="truncated"):
        list(iter_lines(truncated))
    fake = tmp_path / "fake.gz"
    fake.write_text("CCO\n")
    with pytest.raises(UserInputError, match="not gzip-compressed"):
        read_smiles_file(fake)


def test_smi_list_with_tab_separated_names_is_a_list(tmp_path):
    path = tmp_path / "mols.smi"
    path.write_text("CCO\tethanol\nc1ccccc1\tbenzene\n")
    result = read_smiles_file(path)
    assert result.smiles == ["CCO", "c1ccccc1"] and result.layout == "text"
    table = tmp_path / "mols.tsv"
    table.write_text("name\tsmiles\nethanol\tCCO\n")
    assert read_smiles_file(table).smiles == ["CCO"]
