"""Unreadable answers: a text model's answer with nothing its protocol can read is counted, from
the protocol's text path (TextOutcome.unreadable) through the model, the run pipeline (and its
response cache) to the result's requests summary; it is never confused with a failed request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from chemassay.contract import Protocol, TextAsker
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import RequestSummary, make_result
from chemassay.models import run
from chemassay.models.text_model import TextBackend, text_model


class Canned(TextBackend):
    """A local text model (no endpoint, like hf): each prompt's answer from ``reply``."""

    name = "canned"

    def __init__(self, reply) -> None:
        self.reply = reply
        self.asked: list[str] = []

    def answer(self, prompts: Sequence[str], params: Sequence[Mapping[str, Any]] | None = None) -> list[Any]:
        self.asked.extend(prompts)
        return [self.reply(prompt) for prompt in prompts]


def chemist(prompt: str) -> Any:
    if "CC(=O)Cl" in prompt:
        return "The product is **CCOC(C)=O** (ethyl acetate)."
    if "C=C" in prompt:
        return "I am not sure what forms here."
    return RuntimeError("HTTP 500")


def test_the_text_path_tells_unreadable_answers_from_failed_requests():
    model = text_model(Canned(chemist), "reaction-predictor", name="canned")
    assert model.predict(["CCO.CC(=O)Cl", "C=C.BrBr", "N"], 1) == [["CCOC(C)=O"], [], []]
    assert model.unreadable == {1: "no product SMILES in the answer 'I am not sure what forms here.'"}
    assert list(model.failures) == [2] and model.failures[2].startswith("request failed")
    strict = text_model(Canned(chemist), "reaction-predictor", name="canned", extract="strict")
    assert strict.predict(["CCO.CC(=O)Cl"], 1) == [[]] and list(strict.unreadable) == [0]
    assert strict.describe()["extract"] == "strict" and model.describe()["extract"] == "lenient"
    with pytest.raises(UserInputError, match="extract must be lenient or strict"):
        text_model(Canned(chemist), "reaction-predictor", name="canned", extract="loose")


def test_a_parser_that_gives_missing_for_a_non_empty_answer_marks_it_unreadable():
    class Echo(Protocol):
        name, method, missing = "echo-test", "echo", ""

        def prompt(self, items, options, settings):
            from chemassay.contract import Request

            return [Request(str(item)) for item in items]

        def parse(self, answer, options, settings):
            return answer if answer.isupper() else ""

    class Asker(TextAsker):
        def ask(self, requests, parse=None):
            return [parse(request.prompt) for request in requests]

    outcome = Echo().answer_text(Asker(), ["YES", "no", ""], {})
    assert outcome.outputs == ["YES", "", ""] and outcome.failures == {}
    assert outcome.unreadable == {1: "nothing readable in the answer 'no'"}


def test_the_run_pipeline_carries_unreadable_items_to_the_result(isolated_home):
    backend = Canned(chemist)
    model = text_model(backend, "reaction-predictor", name="canned")
    items = ["CCO.CC(=O)Cl", "C=C.BrBr", "C=C.BrBr", "N"]
    done = run(model, "reaction-predictor", items, {"k": 1}, cache=True)
    assert done.outputs == [["CCOC(C)=O"], [], [], []]
    assert list(done.unreadable) == [1, 2] and list(done.failures) == [3] and done.duplicates == 1
    result = make_result("reaction-ood", "evaluate", metrics={}, n=len(items), run=done)
    assert result.requests == RequestSummary(unreadable=2)  # a local model: only the count
    assert result.requests.line() == "2 unreadable answers"
    assert [item.line for item in result.skipped] == [4]  # failed requests are skipped; unreadable are counted

    again = run(model, "reaction-predictor", items, {"k": 1}, cache=True)  # from the response cache
    assert again.cached == 2 and again.unreadable == done.unreadable and again.outputs == done.outputs
    assert len(backend.asked) == 3 + 1  # three distinct items, then only the failed one again


def test_the_summary_line_shows_unreadable_answers_beside_requests():
    summary = RequestSummary(new=3, cached=1, failed=0, unreadable=2, endpoints=["http://x/v1"])
    assert summary.line() == "4 answered: 3 new, 1 from cache, 0 failed, 2 unreadable"
    assert "unreadable" not in RequestSummary(new=1, endpoints=["http://x/v1"]).line()


def test_a_generator_counts_the_samples_its_unreadable_answers_left_empty():
    model = text_model(Canned(lambda prompt: "Sorry, I cannot write molecules."), "generator", name="canned", batch=2)
    done = run(model, "generator", list(range(3)), {"seed": 0})
    assert done.outputs == ["", "", ""] and sorted(done.unreadable) == [0, 1, 2]
    assert "held no SMILES line" in done.unreadable[0]
    lines = text_model(Canned(lambda prompt: "Here are 2 molecules:\n1. **CCO**\n2. `c1ccccc1`"), "generator",
                       name="canned", batch=2)
    assert lines.sample(2, seed=0) == ["CCO", "c1ccccc1"] and lines.unreadable == {}
