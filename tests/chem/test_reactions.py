import pytest

from chemassay.chem import InvalidReaction, detect_reagents, parse_reaction, strip_cxsmiles
from chemassay.chem.reactions import (
    parse_reaction_mols,
    remove_atom_maps_text,
    remove_reaction_atom_maps,
)


def test_parse_three_roles_and_double_arrow():
    reaction = parse_reaction("CCO.CC(=O)O>[H+]>CCOC(C)=O.O")
    assert reaction.reactants == ["CCO", "CC(=O)O"]
    assert reaction.reagents == ["[H+]"]
    assert reaction.products == ["CCOC(C)=O", "O"]
    assert parse_reaction("A>>B".replace("A", "CC").replace("B", "C")).reagents == []


def test_round_trip_text():
    text = "CCO.CC(=O)O>[H+]>CCOC(C)=O.O"
    assert parse_reaction(text).to_smiles() == text


def test_cxsmiles_extension_stripped():
    assert strip_cxsmiles("CC.O>>CCO |f:0.1|") == "CC.O>>CCO"
    assert parse_reaction("[Na+].[Cl-]>>[Na+].[Cl-] |f:0.1,2.3|").products == ["[Na+]", "[Cl-]"]


@pytest.mark.parametrize("bad", ["", "CCO", "A>B>C>D", "CC O>>CCO", ">>CCO"])
def test_malformed_reactions(bad):
    with pytest.raises(InvalidReaction):
        parse_reaction(bad)


def test_bad_molecule_is_named():
    with pytest.raises(InvalidReaction) as info:
        parse_reaction_mols("C1CC.O>>CCO")
    assert "C1CC" in str(info.value)


def test_atom_map_removal():
    assert remove_atom_maps_text("[CH3:1][OH:12]") == "[CH3][OH]"
    assert remove_reaction_atom_maps("[CH3:1][OH:2].[Na+:3]>>[CH3:1][O-:2]") == "CO.[Na+]>>C[O-]"


def test_canonical_merges_reagents_and_sorts():
    reaction = parse_reaction("OCC.CC(O)=O>[H+]>O.CCOC(C)=O").canonical(merge_reagents=True)
    assert reaction.reactants == sorted(["CCO", "CC(=O)O", "[H+]"])
    assert reaction.reagents == []
    assert reaction.products == sorted(["O", "CCOC(C)=O"])


def test_reagent_detection_with_atom_maps():
    # A real USPTO-15K line: K2CO3, water and the counter-ions contribute no mapped atom.
    text = (
        "[CH3:30][O:31][CH2:32][CH2:33][Br:34].[K+:35].[K+:36].[O:1]=[c:2]1[c:3]([OH:4])[cH:5][n:6]"
        "(-[c:7]2[cH:8][cH:9][cH:10][c:11]([C:12]([F:13])([F:14])[F:15])[cH:16]2)[n:17][c:18]1-[c:19]1"
        "[cH:20][cH:21][n:22][n:23]1-[c:24]1[cH:25][cH:26][cH:27][cH:28][cH:29]1.[O:37]=[C:38]([O-:39])"
        "[O-:40].[OH2:41]>>[CH3:30][O:31][CH2:32][CH2:33][O:4][c:3]1[cH:5][n:6](-[c:7]2[cH:8][cH:9][cH:10]"
        "[c:11]([C:12]([F:13])([F:14])[F:15])[cH:16]2)[n:17][c:18](-[c:19]2[cH:20][cH:21][n:22][n:23]2-"
        "[c:24]2[cH:25][cH:26][cH:27][cH:28][cH:29]2)[c:2]1=[O:1]"
    )
    reaction = parse_reaction(text)
    assert detect_reagents(reaction) == [False, True, True, False, True, True]
    moved = reaction.with_detected_reagents()
    assert len(moved.reactants) == 2 and len(moved.reagents) == 4


def test_reagent_detection_without_maps_is_conservative():
    # Pd catalyst (no Pd in products) and unchanged toluene are reagents; the aryl bromide is not.
    reaction = parse_reaction("Brc1ccccc1.OB(O)c1ccccc1.[Pd].Cc1ccccc1>>c1ccc(-c2ccccc2)cc1.Cc1ccccc1")
    assert detect_reagents(reaction) == [False, False, True, True]
