"""Leaf types every layer may import and that import nothing of chemassay: the Protocol
object, the Run, the common evaluation Options."""

from chemassay.contract.options import Options
from chemassay.contract.protocol import (
    CAPABILITIES,
    EXTRACT_MODES,
    Check,
    Protocol,
    Request,
    TextAsker,
    TextOutcome,
    Unreadable,
    answer_excerpt,
    strict_extraction,
)
from chemassay.contract.run import Run

__all__ = ["CAPABILITIES", "EXTRACT_MODES", "Check", "Options", "Protocol", "Request", "Run", "TextAsker", "TextOutcome",
           "Unreadable", "answer_excerpt", "strict_extraction"]
