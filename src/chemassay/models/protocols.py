"""The model protocols of the five suites.

Any object with the right method works (structural typing): a wrapper around a local
checkpoint, an HTTP client for a served model, or a plain Python function adapted with
:func:`from_callable`. Prediction files are the universal alternative: every suite also
scores a file of outputs produced by the user's own code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class BagPredictor(Protocol):
    """stoichiometry: input bag text (``{n}X.{m}Y``) → predicted product bag text."""

    def predict_bags(self, sources: Sequence[str]) -> list[str]: ...


@runtime_checkable
class ReactionPredictor(Protocol):
    """reaction-ood: reactant SMILES → up to ``k`` ranked product SMILES per query."""

    def predict(self, reactants: Sequence[str], k: int = 10) -> list[list[str]]: ...


@runtime_checkable
class MoleculeGenerator(Protocol):
    """generation: draw ``n`` SMILES strings (valid or not) with a seed."""

    def sample(self, n: int, seed: int = 0) -> list[str]: ...


@runtime_checkable
class Encoder(Protocol):
    """robustness: SMILES → embeddings ``(n, d)``; with ``layers='all'`` a list per layer."""

    name: str

    def encode(self, smiles: Sequence[str], layers: str = "last") -> np.ndarray | list[np.ndarray]: ...


@runtime_checkable
class MechanismPredictor(Protocol):
    """mechanism: reaction records → raw model text (or parsed step lists) per reaction."""

    def predict_mechanisms(self, reactions: Sequence[dict[str, Any]]) -> list[str | list[dict]]: ...


class _CallableAdapter:
    def __init__(self, fn: Callable, method: str) -> None:
        self._fn = fn
        self._method = method
        self.name = getattr(fn, "__name__", "callable")

    def __getattr__(self, item: str):
        if item == self._method:
            return self._fn
        raise AttributeError(item)


def from_callable(fn: Callable, protocol: type) -> Any:
    """Wrap a plain function so it satisfies ``protocol`` (its single method calls ``fn``)."""
    methods = [name for name in protocol.__dict__ if not name.startswith("_") and callable(protocol.__dict__[name])]
    if len(methods) != 1:
        raise TypeError(f"{protocol.__name__} has no single method to adapt")
    adapter = _CallableAdapter(fn, methods[0])
    setattr(adapter, methods[0], fn)
    return adapter
