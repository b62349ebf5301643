"""Prompts: the paper's one-shot prompt, its chain-of-thought variant, and k-shot prompts.

``default`` and ``cot`` are the oMeBench prompt files (``prompts/default.txt`` and
``prompts/cot.txt`` of skylarkie/oMeBench, MIT licence), shipped verbatim and filled in
exactly as the published ``run.py`` does: plain text replacement of ``{ reactants_smiles }``
and ``{ products_smiles }`` by the JSON of the SMILES lists and of ``{ conditions }`` by the
condition text. Their quirks are kept on purpose, for comparable numbers: the doubled
braces ``{{...}}`` reach the model as written, the header line becomes
``{["CC=O", "CC=O"]}``, and the one-shot example of ``default`` files its second step under
type ``proton_transfer`` with subtype ``nucleophilic_addition``.

``kshot`` keeps the ``default`` instructions and replaces its single fixed example by the
``k`` pool reactions most similar to the query by DRFP (never the query itself, see
:mod:`chemassay.suites.mechanism.retrieval`), each shown as its input and its mechanism.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources

from chemassay.contract.errors import UserInputError
from chemassay.suites.mechanism.records import Reaction

PROMPT_STYLES = ("default", "cot", "kshot")
_FILES = {"default": "omebench_default.txt", "cot": "omebench_cot.txt"}
_EXAMPLE_START = "### Example\n"
_EXAMPLE_END = "### Task for you\n"


@cache
def prompt_template(style: str) -> str:
    """The text of a shipped prompt template (``default`` or ``cot``)."""
    if style not in _FILES:
        raise UserInputError(f"unknown prompt template {style!r}; choose from {', '.join(_FILES)}")
    return (resources.files("chemassay.suites.mechanism") / "prompts" / _FILES[style]).read_text(encoding="utf-8")


def fill(template: str, reaction: Reaction) -> str:
    """Fill a template the way oMeBench's ``run.py`` does (plain replacement, JSON lists)."""
    return (
        template.replace("{ reactants_smiles }", json.dumps(list(reaction.reactants)))
        .replace("{ products_smiles }", json.dumps(list(reaction.products)))
        .replace("{ conditions }", reaction.conditions)
    )


def _exemplar_block(number: int, exemplar: Reaction) -> str:
    given = {
        "reactants_smiles": list(exemplar.reactants),
        "products_smiles": list(exemplar.products),
        "conditions": exemplar.conditions,
    }
    steps = [
        {
            "step": index,
            "type": step.type,
            "subtype": step.subtype,
            "intermediate_smiles": step.intermediate_smiles,
        }
        for index, step in enumerate(exemplar.steps, start=1)
    ]
    return (
        f"#### Example {number}\n\n**Input**:\n{json.dumps(given, indent=2)}\n\n"
        f"**output**:\n{json.dumps(steps, indent=2)}\n"
    )


def kshot_prompt(reaction: Reaction, exemplars: Sequence[Reaction]) -> str:
    """The ``default`` prompt with its example replaced by ``exemplars`` (most similar first)."""
    template = prompt_template("default")
    start = template.index(_EXAMPLE_START)
    end = template.index(_EXAMPLE_END)
    heading = "### Examples (reactions similar to yours, with their mechanisms)\n\n"
    blocks = "\n".join(_exemplar_block(number, ex) for number, ex in enumerate(exemplars, start=1))
    return fill(template[:start] + heading + blocks + "\n" + template[end:], reaction)


def build_prompt(style: str, reaction: Reaction, exemplars: Sequence[Reaction] = ()) -> str:
    """The prompt of ``style`` (``default``, ``cot`` or ``kshot``) for one reaction."""
    if style == "kshot":
        return kshot_prompt(reaction, exemplars)
    return fill(prompt_template(style), reaction)


_COUNT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def paper_protocol(style: str) -> str | None:
    """The paper's name of a prompt style (a result's ``setting["prompt"]``, as the published
    tables name their protocols): ``default`` is the one-shot prompt of Table 3
    (``one-shot``), ``cot`` its chain-of-thought variant of Table 14 (``one-shot-cot``),
    ``kshot3`` the three-shot in-context learning of Table 15 (``three-shot-icl``; other
    ``k`` give ``five-shot-icl``...); ``None`` for a style the paper does not know.
    """
    if style == "default":
        return "one-shot"
    if style == "cot":
        return "one-shot-cot"
    if style.startswith("kshot") and style[5:].isdigit():
        k = int(style[5:])
        return f"{_COUNT_WORDS[k] if k < len(_COUNT_WORDS) else k}-shot-icl"
    return None
