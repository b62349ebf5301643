"""The prompts a text model (an OpenAI-compatible chat model or a local Hugging Face model)
is asked with when it stands in for a suite's protocol, and the parsers of its answers.

Each prompt asks for a bare answer; each parser also accepts one wrapped in prose, code
fences, numbering or a ``<think>`` block, and a bare answer with nothing around it (just
the SMILES, just the bag). The prompts are documented in docs/adding-a-model.md.

* reaction-predictor (:func:`reaction_prompt`, :func:`parse_ranked_smiles`): k product
  SMILES, best first, one per line;
* bag-predictor (:func:`bag_prompt`, :func:`parse_bag_answer`): the product bag in the
  input's own ``{n}X.{m}Y`` notation;
* generator (:func:`generation_prompt`, :func:`parse_smiles_lines`): ``n`` SMILES, one per
  line (every line counts as a sample, valid or not, as MOSES counts them);
* mechanism-predictor (:func:`mechanism_prompt`): the suite normally supplies the paper's
  prompt in the record's ``prompt`` field; this default is used only without one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

SYSTEM_PROMPT = "You are an expert organic chemist. Answer exactly in the format asked for, without explanations."

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*")
_BULLET = re.compile(r"^\s*(?:[-*•]|\(?\d{1,3}[.):]|#\d+[.):]?)\s*")
_LABEL = re.compile(r"^\s*(?:answer|products?|prediction|smiles|product smiles|final answer|result)\s*[:=-]\s*", re.IGNORECASE)
_COEFF = re.compile(r"\{\d+\}")


def reaction_prompt(reactants: str, k: int) -> str:
    """Ask for the ``k`` most likely products of a reaction, best first."""
    count = "the most likely product" if k == 1 else f"the {k} most likely products, best first,"
    return (
        "Predict the major product of this chemical reaction.\n"
        f"Reactants and reagents (SMILES, separated by '.'): {reactants}\n"
        f"Answer with {count} as SMILES, one per line (several product molecules of one answer joined by '.'), "
        "and nothing else."
    )


def bag_prompt(source: str, encoding: str = "smiles") -> str:
    """Ask for the products, with coefficients, of a ChemAlgebra reactant bag."""
    species = "SMILES string" if encoding == "smiles" else "molecular formula"
    return (
        "Complete this chemical reaction so that it is balanced.\n"
        f"Notation: every species is written {{n}}X, where n is its stoichiometric coefficient and X its {species}; "
        "species are joined by '.'.\n"
        f"Reactants: {source}\n"
        "Answer with the products in the same notation, on one line, and nothing else."
    )


def generation_prompt(n: int) -> str:
    """Ask for ``n`` new drug-like molecules as SMILES."""
    return (
        f"Write {n} different, new, drug-like molecules as SMILES strings: molecular weight 250 to 350, "
        "only the elements C, N, S, O, F, Cl, Br and H, no charged atoms, no rings larger than 8 atoms. "
        "One SMILES per line, no numbering, nothing else."
    )


def mechanism_prompt(record: dict[str, Any]) -> str:
    """The default mechanism prompt (the suite passes the paper's prompt in ``record['prompt']``)."""
    reactants = record.get("reactants", "")
    products = record.get("products", "")
    conditions = record.get("conditions") or ""
    if isinstance(reactants, (list, tuple)):
        reactants = ".".join(reactants)
    if isinstance(products, (list, tuple)):
        products = ".".join(products)
    return (
        "Give the step-by-step mechanism of this organic reaction.\n"
        f"Reactants: {reactants}\nProducts: {products}\n"
        + (f"Conditions: {conditions}\n" if conditions else "")
        + 'Answer with JSON: {"mechanism": [{"step": 1, "type": "<step type>", '
        '"intermediate": "<SMILES after this step>"}, ...]}'
    )


def clean_answer(text: str) -> str:
    """The answer without ``<think>`` blocks and code fences."""
    text = _THINK.sub("", text or "")
    if "<think>" in text.lower():  # an unterminated reasoning block: keep what follows nothing
        text = text[: text.lower().index("<think>")]
    return _FENCE.sub("", text)


def _candidate_lines(text: str) -> list[str]:
    lines = []
    for raw in clean_answer(text).splitlines():
        line = _LABEL.sub("", _BULLET.sub("", raw.strip())).strip().strip("`'\"").strip()
        if line:
            lines.append(line)
    return lines


def _as_smiles(candidate: str) -> str | None:
    from chemassay.chem.molecules import InvalidSmiles, parse_smiles, rdkit_log_silenced

    token = candidate.strip().rstrip(".,;").strip("`'\"")
    if not token or " " in token or len(token) > 2000:
        return None
    try:
        with rdkit_log_silenced():
            parse_smiles(token)
    except (InvalidSmiles, ValueError, RuntimeError):
        return None
    return token


def _looks_like_smiles_word(word: str) -> bool:
    return len(word) >= 4 or (len(word) >= 2 and not word.isalpha())


def parse_ranked_smiles(text: str, k: int) -> list[str]:
    """Up to ``k`` distinct SMILES from an answer, in the order given.

    A line counts if it (or one of its whitespace-separated words) parses as a molecule;
    prose lines are skipped. A bare SMILES answer is one candidate.
    """
    found: list[str] = []
    for line in _candidate_lines(text):
        candidate = _as_smiles(line)
        if candidate is None:
            # A SMILES inside prose: a short purely alphabetic word ("I", "No", "CO") is far
            # more likely English than an answer, so a word must look like SMILES.
            words = [w.strip(",;:") for w in re.split(r"\s+", line) if _looks_like_smiles_word(w.strip(",;:"))]
            candidate = next((c for c in (_as_smiles(w) for w in reversed(words)) if c), None)
        if candidate is not None and candidate not in found:
            found.append(candidate)
        if len(found) >= k:
            break
    return found


def parse_bag_answer(text: str) -> str:
    """The bag of an answer: the last line in ``{n}X`` notation, else the first non-empty line."""
    lines = _candidate_lines(text)
    with_coefficients = [line for line in lines if _COEFF.search(line)]
    if with_coefficients:
        line = with_coefficients[-1]
        start = _COEFF.search(line).start()
        return line[start:].split()[0].rstrip(".,;") if " " in line[start:] else line[start:].rstrip(",;")
    return lines[0].split()[0] if lines else ""


def parse_smiles_lines(text: str, limit: int | None = None) -> list[str]:
    """One sample per answer line (its first word), valid or not, up to ``limit``."""
    samples = [line.split()[0] for line in _candidate_lines(text)]
    return samples[:limit] if limit is not None else samples


def reactants_text(reactants: str | Sequence[str]) -> str:
    """Reactants as one dot-joined SMILES string."""
    return reactants if isinstance(reactants, str) else ".".join(reactants)
