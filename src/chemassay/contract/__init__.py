"""Leaf types every layer may import and that import nothing of chemassay: the Protocol
object, the Run, the common evaluation Options."""

from chemassay.contract.options import Options
from chemassay.contract.protocol import CAPABILITIES, Check, Protocol, Request, TextAsker, TextOutcome
from chemassay.contract.run import Run

__all__ = ["CAPABILITIES", "Check", "Options", "Protocol", "Request", "Run", "TextAsker", "TextOutcome"]
