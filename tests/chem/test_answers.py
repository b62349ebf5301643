"""Reading SMILES out of answers as LLMs write them (chemassay.chem.answers): Markdown, JSON,
reaction SMILES and equations are read; SMILES characters survive the unwrapping; the strict
reading stays what it was."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from chemassay.chem.answers import json_answer, ranked_smiles, smiles_lines, strip_markup
from chemassay.chem.molecules import canonical_smiles, rdkit_log_silenced
from support.fuzz_strategies import FUZZ

# What a chat model writes for the product ethyl acetate, and what the lenient reading gets.
STYLES = {
    "bold in prose": "The product is **CCOC(C)=O** (ethyl acetate).",
    "italic": "The product is *CCOC(C)=O*.",
    "underscore bold": "__CCOC(C)=O__",
    "inline code": "The ester `CCOC(C)=O` forms.",
    "json object list": '{"products": ["CCOC(C)=O"]}',
    "json object": '{"product": "CCOC(C)=O"}',
    "json list": '["CCOC(C)=O", "CC(=O)O"]',
    "json fence": 'Here you go:\n```json\n{"products": ["CCOC(C)=O"]}\n```',
    "reaction smiles": "CCO.CC(=O)Cl>>CCOC(C)=O",
    "reaction smiles with reagents": "CCO.CC(=O)Cl>C1CCOC1>CCOC(C)=O",
    "equation": "CCO + CC(=O)Cl -> CCOC(C)=O + Cl",
    "unicode arrow": "CCO + CC(=O)Cl → CCOC(C)=O",
    "fenced": "```\nCCOC(C)=O\n```",
    "numbered": "1. CCOC(C)=O\n2. CC(=O)O",
    "label": "Product: CCOC(C)=O",
    "bold label": "**Answer:** CCOC(C)=O",
    "heading and fence": "### Product\n```smiles\nCCOC(C)=O\n```",
    "prose ending in the smiles": "The product is CCOC(C)=O.",
    "think block": "<think>ethanol CCO is acylated</think>\nCCOC(C)=O",
    "smiles then its name": "CCOC(C)=O (ethyl acetate)",
    "reasoning then conclusion": "Ethanol (CCO) attacks the acyl chloride.\nThe product is ethyl acetate, CCOC(C)=O.",
    "reasoning then bold answer": "Ethanol (CCO) is acylated.\n\n**Product:** `CCOC(C)=O`",
}
READ_TODAY = {"fenced", "numbered", "label", "bold label", "heading and fence", "prose ending in the smiles",
              "think block", "equation", "unicode arrow", "reasoning then conclusion"}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_style_gives_the_product(style):
    assert ranked_smiles(STYLES[style], 1) == ["CCOC(C)=O"]


@pytest.mark.parametrize("style", sorted(READ_TODAY))
def test_the_strict_reading_reads_what_it_read_before(style):
    assert ranked_smiles(STYLES[style], 1, strict=True) == ["CCOC(C)=O"]


@pytest.mark.parametrize("style", ["bold in prose", "json object list", "reaction smiles"])
def test_the_strict_reading_does_not_read_the_new_styles(style):
    assert ranked_smiles(STYLES[style], 1, strict=True) == []


def test_ranked_answers_keep_their_order_and_k():
    assert ranked_smiles('{"products": ["CCOC(C)=O", "CC(=O)O", "CCO"]}', 2) == ["CCOC(C)=O", "CC(=O)O"]
    assert ranked_smiles("1. **CCOC(C)=O** (ester)\n2. `CC(=O)O`\n3. CCO", 3) == ["CCOC(C)=O", "CC(=O)O", "CCO"]
    assert ranked_smiles("CCOC(C)=O (ethyl acetate)\nCC(=O)O (acetic acid)", 2) == ["CCOC(C)=O", "CC(=O)O"]
    # answer lines outrank SMILES mentioned in prose
    assert ranked_smiles("Ethanol, CCO, is the nucleophile.\n- CCOC(C)=O", 2) == ["CCOC(C)=O"]
    assert ranked_smiles('[{"rank": 1, "smiles": "CCOC(C)=O"}, {"rank": 2, "smiles": "CCO"}]', 2) == ["CCOC(C)=O", "CCO"]


def test_prose_without_a_molecule_reads_nothing():
    for text in ("I do not know.", "No reaction occurs.", "**Answer:** none", "{\"products\": []}", "[1]", ""):
        assert ranked_smiles(text, 3) == [], text


def test_smiles_characters_survive():
    assert ranked_smiles("**C=C(*)C#N**", 1) == ["C=C(*)C#N"]
    assert ranked_smiles("*CC*", 1) == ["*CC*"]  # two dummy atoms, not emphasis
    assert ranked_smiles("The product is `[NH4+].[Cl-]`.", 1) == ["[NH4+].[Cl-]"]
    assert ranked_smiles("C/C=C\\C", 1) == ["C/C=C\\C"]
    assert ranked_smiles(json.dumps({"product": "C/C=C\\C"}), 1) == ["C/C=C\\C"]
    assert strip_markup("*C1CC*.C1 and *CCO*") == "*C1CC*.C1 and *CCO*"
    assert strip_markup("***CCO*** and _ethanol_") == "CCO and ethanol"


def test_json_answers_are_found_in_prose_and_fences_only_when_they_hold_text():
    assert json_answer('Sure: {"product": "CCO"} done') == {"product": "CCO"}
    assert json_answer("[C@H](O)C and [1]") is None
    assert json_answer("[[[[[[[[" * 500) is None
    assert json_answer("[" * 900 + '"CCO"' + "]" * 900) is None  # nested past any answer


def test_generation_lines_as_llms_write_them():
    text = "Here are 3 molecules:\n1. **CCO**\n2. `c1ccccc1`\n3. CC(=O)O (acetic acid)\nThese satisfy the constraints."
    assert smiles_lines(text) == ["CCO", "c1ccccc1", "CC(=O)O"]
    assert smiles_lines(text, strict=True)[0] == "Here"
    assert smiles_lines('```json\n["CCO", "c1ccccc1", "C1CC(N"]\n```') == ["CCO", "c1ccccc1", "C1CC(N"]
    assert smiles_lines("C1CC(N - an unclosed ring\nCCO") == ["C1CC(N", "CCO"]  # an invalid sample stays a sample


# --------------------------------------------------------------------------- properties
ATOMS = ["C", "N", "O", "S", "*", "c1ccccc1", "C1CC1", "[NH3+]", "[O-]", "[C@@H](F)", "[nH]1cccc1", "Cl", "Br",
         "[2H]", "[Na+]", "C(=O)", "C#N", "[Si]", "P", "B"]
BONDS = ["", "", "=", "#", "/", "\\", "."]


@st.composite
def valid_smiles(draw) -> str:
    """A valid SMILES, as written or as RDKit writes it (dummy atoms, charges, stereo, bonds)."""
    atoms = draw(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=6))
    bonds = draw(st.lists(st.sampled_from(BONDS), min_size=len(atoms), max_size=len(atoms)))
    text = atoms[0] + "".join(bond + atom for bond, atom in zip(bonds[1:], atoms[1:], strict=True))
    with rdkit_log_silenced():
        try:
            written = canonical_smiles(text) if draw(st.booleans()) else text
            canonical_smiles(written)
        except ValueError:
            written = None
    assume(written is not None and "**" not in written)
    return written


def _wrappable(smiles: str) -> bool:
    """Bold around a SMILES that starts and ends with a dummy atom (``***C***``) reads as
    bold italic: the one wrapping that is ambiguous."""
    return not (smiles.startswith("*") and smiles.endswith("*"))


@FUZZ
@given(valid_smiles())
def test_valid_smiles_survive_markup_stripping(smiles):
    assert strip_markup(smiles) == smiles
    assert strip_markup(f"The product is {smiles}.") == f"The product is {smiles}."
    assume(_wrappable(smiles))
    for wrapped in (f"**{smiles}**", f"`{smiles}`", f"__{smiles}__", f"***{smiles}***"):
        assert strip_markup(wrapped) == smiles


@FUZZ
@given(valid_smiles())
def test_valid_smiles_are_read_from_every_wrapping(smiles):
    assume(_wrappable(smiles))
    for answer in (smiles, f"**{smiles}**", f"The product is **{smiles}**.", f"`{smiles}`",
                   json.dumps({"products": [smiles]}), f"Product: {smiles}", f"```\n{smiles}\n```"):
        assert ranked_smiles(answer, 1) == [smiles], answer
