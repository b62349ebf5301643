"""Leaf types every layer may import and that import nothing of chemassay: the Protocol
object, the Run."""

from chemassay.contract.protocol import CAPABILITIES, Check, Protocol, Request, TextAsker, TextOutcome
from chemassay.contract.run import Run

__all__ = ["CAPABILITIES", "Check", "Protocol", "Request", "Run", "TextAsker", "TextOutcome"]
