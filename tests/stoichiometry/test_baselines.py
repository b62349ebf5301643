"""Baselines: integer null space, the algebraic solver and the copy-coefficient shortcut."""

from __future__ import annotations

import pytest

from chemassay.suites.stoichiometry.algebra import (
    ReactionMemory,
    integer_null_space,
    load_memory,
    predict_lines,
)
from chemassay.suites.stoichiometry.metrics import BagReader
from chemassay.suites.stoichiometry.scoring import score_files
from chemassay.suites.stoichiometry.variants import VariantConfig, build_variants


def test_sabatier_null_space_gives_the_smallest_integer_coefficients():
    # rows C, H, O; columns CO2, H2, CH4, H2O (paper Eq. 3): CO2 + 4 H2 -> CH4 + 2 H2O
    assert integer_null_space([[1, 0, 1, 0], [0, 2, 4, 2], [2, 0, 0, 1]]) == [[-1, -4, 1, 2]]
    assert integer_null_space([[1, 1, 0]]) == [[-1, 1, 0], [0, 0, 1]]
    assert integer_null_space([[1, 0], [0, 1]]) == []


def test_algebraic_solver_on_sabatier_t1_and_t2():
    reader = BagReader("smiles")
    lines, report = predict_lines("algebraic", ["{3}O=C=O.{12}[H][H]"], reader, oracle_lines=["{3}C.{6}O"])
    assert lines == ["{3}C.{6}O"] and report.unknown == report.undetermined == 0
    # T2 with c = (CO2 2, H2 2, CH4 3, H2O 2), k_hat = 2: the input holds CO2 2, H2 8 and the
    # left-over CH4 3 - 2 = 1; the reaction runs twice, as far as CO2 and H2 allow
    memory = ReactionMemory()
    memory.add({"O=C=O": 1, "[H][H]": 4}, {"C": 1, "O": 2})
    lines, _ = predict_lines("algebraic", ["{2}O=C=O.{8}[H][H].{1}C"], reader, memory=memory)
    assert lines == ["{3}C.{4}O"]
    lines, _ = predict_lines("copy-coefficient", ["{3}O=C=O.{12}[H][H]"], reader, memory=memory)
    assert lines == ["{3}C.{3}O"]  # the shortcut copies 3 to every product: H2O should be 6


def test_unknown_and_unreadable_inputs():
    reader = BagReader("smiles")
    memory = ReactionMemory()
    memory.add({"CCO": 1, "CC(=O)O": 1}, {"CCOC(C)=O": 1, "O": 1})
    lines, report = predict_lines("algebraic", ["{1}c1ccccc1", "{1}C1CC", "{2}CCO.{2}CC(=O)O"], reader,
                                  memory=memory)
    assert lines == ["{1}c1ccccc1", "", "{2}CCOC(C)=O.{2}O"]
    assert report.unknown == 1 and report.unreadable == 1
    with pytest.raises(Exception, match="unknown baseline"):
        predict_lines("oracle", ["{1}C"], reader, memory=memory)


@pytest.fixture(scope="module")
def t1_and_t2(uspto_slice, tmp_path_factory):
    root = tmp_path_factory.mktemp("variants")
    configs = [VariantConfig("smiles", "t1", 1, seed=5), VariantConfig("formula", "t2", 1, seed=5)]
    folders = [root / c.name for c in configs]
    build_variants(uspto_slice, configs, folders, source_info={"name": "slice"})
    return folders


def _score(folder, baseline, split, tmp_path, encoding, oracle=False):
    reader = BagReader(encoding)
    memory = None if oracle else load_memory(folder, "train_cross" if "cross" in split else "train", reader)
    sources = (folder / f"src-{split}.txt").read_text().splitlines()
    oracle_lines = (folder / f"tgt-{split}.txt").read_text().splitlines() if oracle else None
    lines, _ = predict_lines(baseline, sources, reader, memory=memory, oracle_lines=oracle_lines)
    out = tmp_path / f"{baseline}-{split}.txt"
    out.write_text("".join(line + "\n" for line in lines))
    return score_files(out, folder / f"tgt-{split}.txt", folder / f"src-{split}.txt").metrics


def test_baselines_on_real_t1_and_t2(t1_and_t2, tmp_path):
    t1, t2 = t1_and_t2
    algebraic = _score(t1, "algebraic", "test_cross", tmp_path, "smiles")
    copying = _score(t1, "copy-coefficient", "test_cross", tmp_path, "smiles")
    assert algebraic["EM"] >= 0.98 and algebraic["BAL"] >= 0.98
    assert copying["EM"] < algebraic["EM"]
    # the algebra alone (species given) solves unseen test reactions of T1 too
    assert _score(t1, "algebraic", "test_out", tmp_path, "smiles", oracle=True)["EM"] >= 0.9
    # memorisation cannot name the products of unseen reactions
    assert _score(t1, "algebraic", "test_in", tmp_path, "smiles")["EM"] < 0.2
    t2_algebraic = _score(t2, "algebraic", "test_cross", tmp_path, "formula")
    t2_copy = _score(t2, "copy-coefficient", "test_cross", tmp_path, "formula")
    assert 0.2 < t2_algebraic["EM"] < 1.0 and t2_copy["EM"] < t2_algebraic["EM"]
    assert t2_algebraic["VAL"] == 1.0


def test_reagent_coefficients_bound_the_t2_extent():
    # Sabatier with a catalyst: c = (CO2 4, H2 3, CH4 5, H2O 4, Pd 2) -> k_hat = 2, drawn by the
    # reagent; CO2 and H2 alone would let the reaction run 3 times
    reader = BagReader("smiles")
    memory = ReactionMemory()
    memory.add({"O=C=O": 1, "[H][H]": 4, "[Pd]": 1}, {"C": 1, "O": 2, "[Pd]": 1})
    # input: CO2 4, H2 3*4, left-over CH4 5-2, left-over H2O (4-2)*2, Pd 2
    lines, _ = predict_lines("algebraic", ["{4}O=C=O.{12}[H][H].{3}C.{4}O.{2}[Pd]"], reader, memory=memory)
    expected = reader.parse("{5}C.{8}O.{2}O=C=O.{4}[H][H].{2}[Pd]").coefficients
    assert reader.parse(lines[0]).coefficients == expected
    # without the reagent the extent is the limiting reactant's: 3 (wrong for this draw)
    memory = ReactionMemory()
    memory.add({"O=C=O": 1, "[H][H]": 4}, {"C": 1, "O": 2})
    lines, _ = predict_lines("algebraic", ["{4}O=C=O.{12}[H][H].{3}C.{4}O"], reader, memory=memory)
    assert reader.parse(lines[0]).coefficients == {"C": 6, "O": 10, "O=C=O": 1}
