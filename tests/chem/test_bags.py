import pytest
from hypothesis import given
from hypothesis import strategies as st

from chemassay.chem import Bag, BagParseError, element_balance, is_balanced, parse_bag


def test_sabatier_reaction_in_both_encodings():
    # CO2 + 4 H2 -> CH4 + 2 H2O, the ChemAlgebra running example.
    left = parse_bag("{1}CO2.{4}H2", "formula")
    right = parse_bag("{1}CH4.{2}H2O", "formula")
    assert is_balanced(left, right)
    left_smiles = parse_bag("{1}O=C=O.{4}[H][H]")
    right_smiles = parse_bag("{1}C.{2}O")
    assert is_balanced(left_smiles, right_smiles)
    assert left.element_counts() == left_smiles.element_counts()


def test_unbalanced_reports_per_element_difference():
    assert element_balance(parse_bag("{1}C.{1}O"), parse_bag("{1}CO")) == {"H": 2}
    assert element_balance(parse_bag("{1}[Na+]"), parse_bag("{1}[Na]")) == {"charge": 1}


def test_species_are_canonicalized_and_merged():
    bag = parse_bag("{2}OCC.{1}C(C)O.{3}O")
    assert dict(bag) == {"CCO": 3, "O": 3}
    assert parse_bag("{1}OH2", "formula") == parse_bag("{1}H2O", "formula")


def test_plain_smiles_with_duplicates_count_once_each():
    assert parse_bag("CCO.CCO.O") == Bag({"CCO": 2, "O": 1})


def test_format_round_trip_and_order():
    bag = parse_bag("{3}O.{2}CCO")
    assert bag.format() == "{3}O.{2}CCO"
    assert parse_bag(bag.format()) == bag
    assert Bag({"CCO": 1}).format(explicit_ones=False) == "CCO"


def test_arithmetic():
    a = parse_bag("{2}O.{1}CCO")
    b = parse_bag("{1}O.{4}C")
    assert a + b == Bag({"O": 3, "CCO": 1, "C": 4})
    assert a.scale(3) == Bag({"O": 6, "CCO": 3})
    assert 2 * a == a.scale(2)
    assert a - b == Bag({"O": 1, "CCO": 1})
    assert (a - a).total() == 0
    assert a.intersection(b) == Bag({"O": 1})
    with pytest.raises(ValueError):
        a + parse_bag("{1}H2O", "formula")
    with pytest.raises(ValueError):
        a.scale(0)


@pytest.mark.parametrize(
    "text, position, reason",
    [
        ("{3CCO", 0, "unclosed"),
        ("{0}C", 1, "coefficient 0"),
        ("C{2}", 1, "before the species"),
        ("{2}", 0, "empty species"),
        ("{2}O.{x}C", 5, "positive integer"),
        ("{1}O.{2}C1CC", 8, "bad species"),
        ("{1}O..{1}C", 5, "empty species"),
    ],
)
def test_malformed_bags_name_the_position(text, position, reason):
    with pytest.raises(BagParseError) as info:
        parse_bag(text)
    assert info.value.position == position
    assert reason in info.value.reason


SPECIES = ["O", "CCO", "[H][H]", "O=C=O", "C", "Cl", "[Na+]", "[Cl-]", "c1ccccc1", "CC(=O)O", "N"]


@given(st.dictionaries(st.sampled_from(SPECIES), st.integers(1, 12), min_size=1))
def test_bag_text_round_trip(content):
    bag = Bag(content)
    again = parse_bag(bag.format())
    assert again == bag
    assert again.element_counts() == bag.element_counts()


@given(st.dictionaries(st.sampled_from(SPECIES), st.integers(1, 12), min_size=1), st.integers(1, 10))
def test_formula_and_smiles_encodings_agree_on_element_counts(content, factor):
    from chemassay.chem import molecular_formula

    smiles_bag = Bag(content).scale(factor)
    formula_bag = Bag([(molecular_formula(s), c) for s, c in smiles_bag.items()], "formula")
    assert formula_bag.element_counts() == smiles_bag.element_counts()
