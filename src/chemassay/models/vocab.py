"""Tokenizers and vocabularies of chemassay's sequence models.

Four tokenizers, each loss-free (joining the tokens gives the text back):

* ``smiles`` — the atom-level SMILES regular expression of the Molecular Transformer
  (:func:`chemassay.chem.tokenize_smiles`); reaction SMILES (``>``) and ``.`` included.
* ``bag`` — ChemAlgebra bags of SMILES species, ``{3}CCO.{2}O``: the coefficient is written
  ``{``, its digits one by one, ``}``, the species with the SMILES tokenizer.
* ``formula`` — ChemAlgebra bags of formula species, ``{1}CO2.{4}H2``: ``{``, ``}``, single
  digits, element symbols (``Cl``, ``Na``...), ``+``, ``-``, ``.``, ``>`` and bracketed isotopes.
* ``char`` — one token per character (any text: mechanism steps, names).

Coefficients and counts are written digit by digit, so a coefficient never seen in training
(``{7}`` when training drew 1–5) is still made of known symbols: the ChemAlgebra
out-of-distribution test asks the model to *use* such coefficients, not to read new symbols.
For the same reason the ``bag`` and ``formula`` vocabularies always hold the digits 0–9 and
the brackets (their fixed alphabet), whatever the training data contained.

A :class:`Vocabulary` is built from training texts (:meth:`Vocabulary.build`), saved as JSON
and read back. Encoding a text holding a symbol the vocabulary lacks raises
:class:`UnknownSymbol` (``unknown="error"``, used at inference: that prediction fails and is
counted) or maps it to ``<unk>`` (``unknown="unk"``, used for validation data).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chemassay.chem.tokenizer import TokenizationError, tokenize_smiles
from chemassay.contract.errors import ChemassayError

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
SPECIALS = (PAD, BOS, EOS, UNK)
DIGITS = tuple("0123456789")

_COEFFICIENT = re.compile(r"\{([0-9]+)\}")
_FORMULA_TOKEN = re.compile(r"\[[^\]]+\]|[A-Z][a-z]?|[0-9]|\{|\}|\.|>|\+|-")


class UnknownSymbol(ValueError, ChemassayError):
    """A text holds a symbol the vocabulary (or the tokenizer) does not know."""


def tokenize_bag(text: str) -> list[str]:
    """Tokens of a bag of SMILES species (``{3}CCO.{2}O``): coefficients digit by digit."""
    tokens: list[str] = []
    position = 0
    for match in _COEFFICIENT.finditer(text):
        if match.start() > position:
            tokens.extend(tokenize_smiles(text[position:match.start()]))
        tokens.append("{")
        tokens.extend(match.group(1))
        tokens.append("}")
        position = match.end()
    if position < len(text):
        tokens.extend(tokenize_smiles(text[position:]))
    return tokens


def tokenize_formula(text: str) -> list[str]:
    """Tokens of a bag of formula species (``{1}CO2.{4}H2``); other text raises
    :class:`~chemassay.chem.tokenizer.TokenizationError`."""
    tokens: list[str] = []
    position = 0
    for match in _FORMULA_TOKEN.finditer(text):
        if match.start() != position:
            raise TokenizationError(text, position)
        tokens.append(match.group(0))
        position = match.end()
    if position != len(text):
        raise TokenizationError(text, position)
    return tokens


def tokenize_chars(text: str) -> list[str]:
    """One token per character."""
    return list(text)


TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "smiles": tokenize_smiles, "bag": tokenize_bag, "formula": tokenize_formula, "char": tokenize_chars,
}
"""Tokenizer name → function (the names a vocabulary records)."""

ALPHABETS: dict[str, tuple[str, ...]] = {
    "smiles": (), "bag": ("{", "}", ".", *DIGITS), "formula": ("{", "}", ".", *DIGITS), "char": (),
}
"""Symbols always in a tokenizer's vocabulary (coefficients are made of them)."""


def tokenize(text: str, tokenizer: str) -> list[str]:
    """``text`` split by the named tokenizer; text it cannot cover raises :class:`UnknownSymbol`."""
    try:
        function = TOKENIZERS[tokenizer]
    except KeyError:
        raise ValueError(f"unknown tokenizer {tokenizer!r}; known: {', '.join(TOKENIZERS)}") from None
    try:
        return function(text)
    except TokenizationError as exc:
        raise UnknownSymbol(f"not a {tokenizer} text: {exc}") from None


@dataclass
class Vocabulary:
    """Token ↔ id for one tokenizer; ids 0–3 are ``<pad> <s> </s> <unk>``."""

    tokenizer: str
    tokens: list[str] = field(default_factory=lambda: list(SPECIALS))

    def __post_init__(self) -> None:
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"unknown tokenizer {self.tokenizer!r}; known: {', '.join(TOKENIZERS)}")
        if tuple(self.tokens[:4]) != SPECIALS:
            raise ValueError(f"a vocabulary starts with {SPECIALS}")
        self.index = {token: i for i, token in enumerate(self.tokens)}
        if len(self.index) != len(self.tokens):
            raise ValueError("a vocabulary lists a token twice")

    pad_id, bos_id, eos_id, unk_id = 0, 1, 2, 3

    def __len__(self) -> int:
        return len(self.tokens)

    @classmethod
    def build(cls, texts: Iterable[str], tokenizer: str, *, min_count: int = 1) -> Vocabulary:
        """The vocabulary of ``texts``: the specials, the tokenizer's fixed alphabet, then every
        token seen at least ``min_count`` times, most frequent first (ties
        alphabetically), so the same texts always give the same ids. A text the tokenizer cannot
        cover raises :class:`UnknownSymbol` naming it."""
        counts: Counter[str] = Counter()
        for number, text in enumerate(texts, 1):
            try:
                counts.update(tokenize(text, tokenizer))
            except UnknownSymbol as exc:
                raise UnknownSymbol(f"text {number}: {exc}") from None
        fixed = [t for t in ALPHABETS[tokenizer] if t not in SPECIALS]
        seen = sorted((t for t, c in counts.items() if c >= min_count and t not in fixed and t not in SPECIALS),
                      key=lambda t: (-counts[t], t))
        return cls(tokenizer, [*SPECIALS, *fixed, *seen])

    def encode(self, text: str, *, unknown: str = "error", bos: bool = False, eos: bool = True) -> list[int]:
        """Token ids of ``text`` (with ``</s>`` at the end unless ``eos=False``). A symbol the
        vocabulary lacks raises :class:`UnknownSymbol` (``unknown="error"``) or becomes
        ``<unk>`` (``unknown="unk"``)."""
        ids: list[int] = [self.bos_id] if bos else []
        for token in tokenize(text, self.tokenizer):
            found = self.index.get(token)
            if found is None:
                if unknown != "unk":
                    raise UnknownSymbol(f"symbol {token!r} is not in the model's vocabulary")
                found = self.unk_id
            ids.append(found)
        if eos:
            ids.append(self.eos_id)
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids``, stopping at ``</s>`` and skipping ``<pad>``/``<s>`` (``<unk>``
        is written as the text ``<unk>`` so that it can never parse as chemistry)."""
        pieces: list[str] = []
        for value in ids:
            value = int(value)
            if value == self.eos_id:
                break
            if value in (self.pad_id, self.bos_id):
                continue
            pieces.append(self.tokens[value] if 0 <= value < len(self.tokens) else UNK)
        return "".join(pieces)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored in a model's ``model.json``)."""
        return {"tokenizer": self.tokenizer, "tokens": list(self.tokens)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Vocabulary:
        """The vocabulary :meth:`as_dict` wrote."""
        return cls(str(data["tokenizer"]), [str(t) for t in data["tokens"]])

    def to_json(self) -> str:
        """JSON text of :meth:`as_dict`."""
        return json.dumps(self.as_dict(), ensure_ascii=False)


def guess_tokenizer(texts: Sequence[str]) -> str:
    """The tokenizer for a sample of texts: ``bag`` or ``formula`` for ChemAlgebra bags
    (``bag`` when the species of the first texts all read as SMILES), ``smiles`` when every
    text tokenizes as SMILES, else ``char``."""
    sample = [t for t in texts[:200] if t]
    if sample and all(t.startswith("{") for t in sample):
        from chemassay.chem import try_canonical

        species = [s for t in sample[:20] for s in _COEFFICIENT.sub("", t).replace(">", ".").split(".") if s]
        try:
            for text in sample:
                tokenize_bag(text)
            if all(try_canonical(s) is not None for s in species):
                return "bag"
        except TokenizationError:  # not bags: the formula tokenizer reads the rest
            pass
        return "formula"
    try:
        for text in sample:
            tokenize_smiles(text)
        return "smiles"
    except TokenizationError:
        return "char"
