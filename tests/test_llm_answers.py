"""Answers as LLMs write them, end to end: a real OpenAI-compatible server on 127.0.0.1 answers
every test item in another style (Markdown, JSON, reaction SMILES, equations, fences, lists,
labels, prose, a <think> block); the suites' public evaluate and chemassay.models.run score each
right prediction as right, and count an answer with nothing readable as unreadable (in the
result's requests summary), never as a wrong molecule; extract=strict keeps the papers' reading."""

from __future__ import annotations

import re

import pytest

from chemassay import reaction_ood, stoichiometry
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import make_result
from chemassay.models import load_model, run
from chemassay.suites.reaction_ood.metrics import score_item

# reaction → (the answer's style, the answer)
REACTIONS = {
    "CCO.CC(=O)Cl>>CCOC(C)=O": "The product is **CCOC(C)=O** (ethyl acetate).",
    "CC(=O)Cl.NCc1ccccc1>>CC(=O)NCc1ccccc1": '{"products": ["CC(=O)NCc1ccccc1"]}',
    "Brc1ccccc1.OB(O)c1ccccc1>>c1ccc(-c2ccccc2)cc1": "Brc1ccccc1.OB(O)c1ccccc1>>c1ccc(-c2ccccc2)cc1",
    "O=C(Cl)c1ccccc1.OC>>COC(=O)c1ccccc1": 'Sure.\n```json\n{"product": "COC(=O)c1ccccc1"}\n```',
    "CC(C)=O.[BH4-]>>CC(C)O": "Reduction of the ketone gives `CC(C)O`.",
    "C=CC=C.C=CC(C)=O>>CC(=O)C1CC=CCC1": "1. CC(=O)C1CC=CCC1\n2. C=CC(C)=O",
    "CC(=O)O.OCC>>CCOC(C)=O": "<think>Fischer esterification.</think>\nProduct: CCOC(C)=O",
    "CCBr.[OH-]>>CCO": "I am not sure what forms here.",
}
READ_STRICTLY = {"C=CC=C.C=CC(C)=O>>CC(=O)C1CC=CCC1", "CC(=O)O.OCC>>CCOC(C)=O", "CC(C)=O.[BH4-]>>CC(C)O"}
UNREADABLE = "CCBr.[OH-]>>CCO"

# reactant bag (formulas) → the answer
BAGS = {
    "{2}H2.{1}O2": ("{2}H2O", "2 H2 + O2 -> 2 H2O"),
    "{1}CH4.{2}O2": ("{1}CO2.{2}H2O", "The balanced products are **{1}CO2.{2}H2O**."),
    "{1}C.{1}O2": ("{1}CO2", "C + O2 → CO2"),
    "{1}N2.{3}H2": ("{2}H3N", '{"products": ["2 NH3"]}'),
    "{2}Na.{1}Cl2": ("{2}ClNa", "I cannot balance this."),
}


def responder(body: dict) -> str:
    prompt = body["messages"][-1]["content"]
    if "Reactants and reagents (SMILES" in prompt:
        reactants = prompt.split("): ", 1)[1].splitlines()[0]
        return next(answer for reaction, answer in REACTIONS.items() if reaction.split(">>")[0] == reactants)
    source = re.search(r"Reactants: (\S+)", prompt).group(1)
    return BAGS[source][1]


@pytest.fixture
def server(openai_server, isolated_home):
    openai_server.responder = responder
    return openai_server


def test_reaction_answers_in_every_style_are_scored_and_the_unreadable_one_counted(server):
    spec = f"openai:chemist,base_url={server.base_url}"
    truth = list(REACTIONS)
    result = reaction_ood.evaluate(reference=truth, model=spec, k=1, bootstrap=0)
    scores = dict(zip(truth, result.item_scores["top1_accuracy"], strict=True))
    assert {reaction for reaction, score in scores.items() if score == 1.0} == set(truth) - {UNREADABLE}
    assert result.metrics["top1_accuracy"] == pytest.approx(7 / 8)
    assert result.requests.unreadable == 1 and result.requests.failed == 0
    assert "8 answered: 8 new, 0 from cache, 0 failed, 1 unreadable" in result.requests.line()

    strict = reaction_ood.evaluate(reference=truth, model=spec + ",extract=strict", k=1, bootstrap=0)
    strict_scores = dict(zip(truth, strict.item_scores["top1_accuracy"], strict=True))
    assert {reaction for reaction, score in strict_scores.items() if score == 1.0} == READ_STRICTLY
    assert strict.requests.unreadable == len(truth) - len(READ_STRICTLY)
    assert strict.model.parameters["extract"] == "strict" and result.model.parameters["extract"] == "lenient"


def test_the_run_pipeline_counts_unreadable_answers_into_the_result(server):
    reactants = [reaction.split(">>")[0] for reaction in REACTIONS]
    done = run(f"openai:chemist,base_url={server.base_url}", "reaction-predictor", reactants, {"k": 1})
    products = [reaction.split(">>")[1] for reaction in REACTIONS]
    right = [i for i, (output, product) in enumerate(zip(done.outputs, products, strict=True))
             if score_item(product, output).rank == 1]
    assert right == [i for i, reaction in enumerate(REACTIONS) if reaction != UNREADABLE]
    assert list(done.unreadable) == [list(REACTIONS).index(UNREADABLE)] and done.failures == {}
    assert "'I am not sure what forms here.'" in done.unreadable[list(REACTIONS).index(UNREADABLE)]
    result = make_result("reaction-ood", "evaluate", metrics={}, n=done.n, run=done)
    assert result.requests.unreadable == 1 and result.requests.new == len(REACTIONS) and not result.skipped


def test_bag_answers_in_every_style_are_scored_and_the_unreadable_one_counted(server):
    sources, targets = list(BAGS), [bag for bag, _ in BAGS.values()]
    result = stoichiometry.evaluate(model=f"openai:chemist,base_url={server.base_url}", sources=sources,
                                    reference=targets, encoding="formula", bootstrap=0)
    assert result.item_scores["EM"] == [1.0, 1.0, 1.0, 1.0, 0.0]
    assert [row.prediction for row in result.details.rows][:4] == ["{2}H2O", "{1}CO2.{2}H2O", "{1}CO2", "{2}NH3"]
    assert result.requests.unreadable == 1 and result.requests.failed == 0

    strict = stoichiometry.evaluate(model=f"openai:chemist,base_url={server.base_url},extract=strict",
                                    sources=sources, reference=targets, encoding="formula", bootstrap=0)
    assert strict.item_scores["EM"] == [0.0, 0.0, 0.0, 0.0, 0.0]  # '2', '{1}CO2.{2}H2O**.', 'C', ...


def test_a_bad_extract_setting_is_a_clear_error(server):
    with pytest.raises(UserInputError, match="extract must be lenient or strict, got 'loose'"):
        load_model(f"openai:chemist,base_url={server.base_url},extract=loose", "reaction-predictor")
