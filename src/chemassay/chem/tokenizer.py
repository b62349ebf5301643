"""SMILES tokenization of Schwaller et al. (Molecular Transformer), loss-free.

The regular expression is the one published with the Molecular Transformer, extended to
two-digit ring closures written ``%10``...``%99`` and the ``%(123)`` form. Tokenizing and
joining gives back the input exactly; text the pattern cannot cover raises
:class:`TokenizationError` instead of being silently dropped.
"""

from __future__ import annotations

import re

from chemassay.contract.errors import ChemassayError

SMILES_TOKEN_PATTERN = (
    r"(\[[^\]]+]|Br?|Cl?|N|O|S|P|F|I|b|c|n|o|s|p|\(|\)|\.|=|#|-|\+|\\|\/|:|~|@|\?|>|\*|\$"
    r"|%\([0-9]+\)|%[0-9]{2}|[0-9])"
)
_TOKEN_RE = re.compile(SMILES_TOKEN_PATTERN)


class TokenizationError(ValueError, ChemassayError):
    """Part of the text is not a SMILES token; ``position`` is where it starts."""

    def __init__(self, text: str, position: int) -> None:
        self.text = text
        self.position = position
        super().__init__(f"cannot tokenize {text[position:position + 10]!r} at position {position} in {text!r}")


def tokenize_smiles(smiles: str) -> list[str]:
    """Split SMILES (or reaction SMILES) into tokens; ``"".join(tokens) == smiles``."""
    tokens: list[str] = []
    position = 0
    for match in _TOKEN_RE.finditer(smiles):
        if match.start() != position:
            raise TokenizationError(smiles, position)
        tokens.append(match.group(0))
        position = match.end()
    if position != len(smiles):
        raise TokenizationError(smiles, position)
    return tokens


def detokenize(tokens: list[str]) -> str:
    """Join tokens back into SMILES (the inverse of :func:`tokenize_smiles`)."""
    return "".join(tokens)
