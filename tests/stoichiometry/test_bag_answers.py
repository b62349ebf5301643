"""The bag predictor's answers as LLMs write them: {n}X notation in Markdown or prose, balanced
equations with formulas or SMILES, JSON; what cannot be read is unreadable, with why; the
strict reading is the papers'."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chemassay.chem import parse_bag
from chemassay.contract import Unreadable
from chemassay.suites.stoichiometry.protocol import (
    BAG_PREDICTOR,
    equation_bag,
    parse_bag_answer,
    read_bag_answer,
)
from support.fuzz_strategies import FUZZ, adversarial_text

SMILES_STYLES = {
    "bare": ("{2}O.{1}O=C=O", "{2}O.{1}O=C=O"),
    "label": ("Products: {2}O.{1}O=C=O", "{2}O.{1}O=C=O"),
    "bold in prose": ("The balanced products are **{2}O**.", "{2}O"),
    "inline code": ("Answer: `{2}O.{1}O=C=O`", "{2}O.{1}O=C=O"),
    "fence and think": ("<think>{1}C + O2</think>\n```\n{2}O.{1}O=C=O\n```", "{2}O.{1}O=C=O"),
    "notation with plus": ("{1}O=C=O + {2}O", "{1}O=C=O.{2}O"),
    "notation equation": ("{1}C.{2}O=O -> {1}O=C=O.{2}O", "{1}O=C=O.{2}O"),
    "smiles equation": ("C + 2 O=O -> O=C=O + 2 O", "{1}O=C=O.{2}O"),
    "json string": ('{"products": "{2}O.{1}O=C=O"}', "{2}O.{1}O=C=O"),
    "json list": ('```json\n{"products": ["{1}O=C=O", "2 O"]}\n```', "{1}O=C=O.{2}O"),
    "json species": ('{"products": [{"species": "O=C=O", "coefficient": 1}, {"species": "O", "coefficient": 2}]}',
                     "{1}O=C=O.{2}O"),
    "json counts": ('{"O=C=O": 1, "O": 2}', "{1}O=C=O.{2}O"),
    "plain bag": ("O=C=O.O.O", "O=C=O.O.O"),
}

FORMULA_STYLES = {
    "ascii arrow": ("2 H2 + O2 -> 2 H2O", "{2}H2O"),
    "unicode arrow": ("2 H2 + O2 → 2 H2O", "{2}H2O"),
    "long arrow": ("2 H2 + O2 ⟶ 2 H2O", "{2}H2O"),
    "equals": ("2 H2 + O2 = 2 H2O", "{2}H2O"),
    "glued coefficients and states": ("CH4(g) + 2O2(g) → CO2(g) + 2H2O(l)", "{1}CO2.{2}H2O"),
    "equation in prose": ("The balanced equation is **CH4 + 2 O2 -> CO2 + 2 H2O**, which conserves mass.",
                          "{1}CO2.{2}H2O"),
    "ions": ("AgNO3 + NaCl -> AgCl + Na+ + NO3-", "{1}AgCl.{1}Na+.{1}NO3-"),
    "notation": ("**Products:** {1}CO2.{2}H2O", "{1}CO2.{2}H2O"),
}


@pytest.mark.parametrize("style", sorted(SMILES_STYLES))
def test_smiles_bags_as_llms_write_them(style):
    answer, bag = SMILES_STYLES[style]
    assert BAG_PREDICTOR.parse(answer, {}, {"encoding": "smiles"}) == bag
    assert parse_bag(bag, "smiles")  # every bag read is a bag


@pytest.mark.parametrize("style", sorted(FORMULA_STYLES))
def test_formula_bags_as_llms_write_them(style):
    answer, bag = FORMULA_STYLES[style]
    assert BAG_PREDICTOR.parse(answer, {}, {"encoding": "formula"}) == bag
    assert parse_bag(bag, "formula")


def test_the_measured_failures_are_fixed_and_strict_keeps_them():
    strict = {"encoding": "formula", "extract": "strict"}
    assert BAG_PREDICTOR.parse("The balanced products are **{2}O**.", {}, {}) == "{2}O"
    assert BAG_PREDICTOR.parse("The balanced products are **{2}O**.", {}, {"extract": "strict"}) == "{2}O**."
    assert BAG_PREDICTOR.parse("2 H2 + O2 -> 2 H2O", {}, {"encoding": "formula"}) == "{2}H2O"
    assert BAG_PREDICTOR.parse("2 H2 + O2 -> 2 H2O", {}, strict) == "2"
    assert BAG_PREDICTOR.parse("Products: {2}O.{1}CCO", {}, strict) == "{2}O.{1}CCO"


def test_an_answer_without_a_bag_is_unreadable_with_why():
    with pytest.raises(Unreadable, match="no product bag in the answer 'I cannot balance this reaction.'"):
        BAG_PREDICTOR.parse("I cannot balance this reaction.", {}, {})
    # formulas where the bag notation asks for SMILES: not read as a wrong molecule
    with pytest.raises(Unreadable, match="'H2O' is not a valid SMILES"):
        BAG_PREDICTOR.parse("2 H2 + O2 -> 2 H2O", {}, {"encoding": "smiles"})
    with pytest.raises(Unreadable, match="'Xy2' is not a valid formula"):
        BAG_PREDICTOR.parse("H2 + Xy -> 2 Xy2", {}, {"encoding": "formula"})
    assert BAG_PREDICTOR.parse("   ", {}, {}) == ""  # no answer: missing, not unreadable
    assert parse_bag_answer("I cannot balance this reaction.") == ""


def test_equation_sides():
    assert equation_bag("2 H2O (water)", "formula") == ("{2}H2O", None)
    assert equation_bag("0 H2O", "formula") == (None, "coefficient 0")
    assert equation_bag("2 H2O junk + O2", "formula")[0] is None


@FUZZ
@given(st.one_of(adversarial_text, st.text(alphabet="{}0123456789 +->→=HOCN2()*`_.", max_size=60)),
       st.sampled_from(["smiles", "formula"]))
def test_the_bag_reader_reads_a_bag_or_says_why(text, encoding):
    try:
        bag = read_bag_answer(text, encoding)
    except Unreadable as exc:
        assert str(exc)
        return
    assert isinstance(bag, str) and bag
