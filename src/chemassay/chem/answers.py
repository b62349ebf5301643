"""Reading chemistry out of a text model's answer: what every protocol's parser shares.

An answer may wrap its content in a ``<think>`` block, code fences, numbering, bullets or a
label (``Answer:``); these helpers strip that and find SMILES in what is left. The protocols
(each suite's ``protocol.py``) build their parsers from them.

>>> clean_answer("<think>esters...</think>```\\nCCOC(C)=O\\n```").strip()
'CCOC(C)=O'
>>> ranked_smiles("1. CCO\\n2. not a molecule\\n3. c1ccccc1", 2)
['CCO', 'c1ccccc1']
"""

from __future__ import annotations

import re

from chemassay.chem.molecules import InvalidSmiles, parse_smiles, rdkit_log_silenced

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*")
_BULLET = re.compile(r"^\s*(?:[-*•]|\(?\d{1,3}[.):]|#\d+[.):]?)\s*")
_LABEL = re.compile(r"^\s*(?:answer|products?|prediction|smiles|product smiles|final answer|result)\s*[:=-]\s*",
                    re.IGNORECASE)


def clean_answer(text: str) -> str:
    """The answer without ``<think>`` blocks and code fences."""
    text = _THINK.sub("", text or "")
    if "<think>" in text.lower():  # an unterminated reasoning block: keep what follows nothing
        text = text[: text.lower().index("<think>")]
    return _FENCE.sub("", text)


def candidate_lines(text: str) -> list[str]:
    """The answer's non-empty lines without bullets, numbering, labels and quotes."""
    lines = []
    for raw in clean_answer(text).splitlines():
        line = _LABEL.sub("", _BULLET.sub("", raw.strip())).strip().strip("`'\"").strip()
        if line:
            lines.append(line)
    return lines


def as_smiles(candidate: str) -> str | None:
    """``candidate`` (trailing punctuation and quotes stripped) if it parses as a molecule."""
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


def ranked_smiles(text: str, k: int) -> list[str]:
    """Up to ``k`` distinct SMILES from an answer, in the order given.

    A line counts if it (or one of its whitespace-separated words) parses as a molecule;
    prose lines are skipped. A bare SMILES answer is one candidate.
    """
    found: list[str] = []
    for line in candidate_lines(text):
        candidate = as_smiles(line)
        if candidate is None:
            # A SMILES inside prose: a short purely alphabetic word ("I", "No", "CO") is far
            # more likely English than an answer, so a word must look like SMILES.
            words = [w.strip(",;:") for w in re.split(r"\s+", line) if _looks_like_smiles_word(w.strip(",;:"))]
            candidate = next((c for c in (as_smiles(w) for w in reversed(words)) if c), None)
        if candidate is not None and candidate not in found:
            found.append(candidate)
        if len(found) >= k:
            break
    return found


def smiles_lines(text: str, limit: int | None = None) -> list[str]:
    """One sample per answer line (its first word), valid or not, up to ``limit``."""
    samples = [line.split()[0] for line in candidate_lines(text)]
    return samples[:limit] if limit is not None else samples
