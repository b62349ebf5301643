"""The reaction predictor's answers as LLMs write them (its protocol's parser): the product is
read from Markdown, JSON and reaction SMILES; an answer without one is unreadable; the strict
reading is the papers'."""

from __future__ import annotations

import pytest

from chemassay.contract import Unreadable
from chemassay.suites.reaction_ood.protocol import REACTION_PREDICTOR

ANSWERS = {
    "bold in prose": "The product is **CCOC(C)=O** (ethyl acetate).",
    "json products": '{"products": ["CCOC(C)=O"]}',
    "json product": '{"product": "CCOC(C)=O"}',
    "json list in fence": '```json\n["CCOC(C)=O", "CC(=O)O"]\n```',
    "reaction smiles": "CCO.CC(=O)Cl>>CCOC(C)=O",
    "inline code": "Product: `CCOC(C)=O`",
    "fenced": "```\nCCOC(C)=O\n```",
    "numbered": "1. CCOC(C)=O\n2. CC(=O)O",
    "label": "Product: CCOC(C)=O",
    "prose ending in the smiles": "Esterification gives CCOC(C)=O",
    "think block": "<think>the alcohol attacks</think>\nCCOC(C)=O",
}


def parse(answer: str, k: int = 1, **settings) -> list[str]:
    return REACTION_PREDICTOR.parse(answer, {"k": k}, settings)


@pytest.mark.parametrize("style", sorted(ANSWERS))
def test_the_product_is_read_from_every_style(style):
    assert parse(ANSWERS[style]) == ["CCOC(C)=O"]


def test_the_measured_failures_give_no_prediction_under_the_strict_reading():
    for style in ("bold in prose", "json products", "reaction smiles"):
        with pytest.raises(Unreadable, match="no product SMILES in the answer"):
            parse(ANSWERS[style], extract="strict")
    for style in ("fenced", "numbered", "label", "prose ending in the smiles", "think block"):
        assert parse(ANSWERS[style], extract="strict") == ["CCOC(C)=O"]


def test_ranked_answers_and_unreadable_ones():
    assert parse('{"products": ["CCOC(C)=O", "CC(=O)O"]}', k=2) == ["CCOC(C)=O", "CC(=O)O"]
    with pytest.raises(Unreadable, match="'I am not sure what forms here.'"):
        parse("I am not sure what forms here.")
    assert parse("") == []  # no answer at all: missing, not unreadable
