"""The model protocols: what a suite asks of a model.

Any object with the right method works (structural typing): a wrapper around a local
checkpoint, an HTTP client for a served model, or a plain Python function adapted with
:func:`from_callable`. Prediction files are the universal alternative: every suite also
scores a file of outputs produced by the user's own code, and the ``predictions`` model kind
turns such a file into a model.

Each protocol has a name used by the model registry and ``chemassay models list``:

========================  ===========================
name                      method
========================  ===========================
``bag-predictor``         ``predict_bags(sources)``
``reaction-predictor``    ``predict(reactants, k)``
``generator``             ``sample(n, seed)``
``encoder``               ``encode(smiles, layers)``
``mechanism-predictor``   ``predict_mechanisms(rxns)``
``property-predictor``    ``predict_properties(smi)``
========================  ===========================

Which suites ask which protocol is the suite registry's business (``Suite.protocols``;
:func:`protocol_suites`). A suite that needs a protocol of its own declares it
(``Suite.model_protocols``) and it is added here with :func:`register_protocol`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    """mechanism: reaction records → raw model text (or parsed step lists) per reaction.

    A record is a dict with at least ``reaction_id``, ``reactants`` and ``products``
    (SMILES); the suite may add ``prompt`` (the text an instruction-following model should
    answer) and ``conditions``. Models that do not read text ignore ``prompt``.
    """

    def predict_mechanisms(self, reactions: Sequence[dict[str, Any]]) -> list[str | list[dict]]: ...


@runtime_checkable
class PropertyPredictor(Protocol):
    """robustness (downstream): SMILES → predicted property values ``(n,)`` or ``(n, targets)``
    (class probabilities ``(n, classes)`` for a classification task)."""

    def predict_properties(self, smiles: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class ProtocolInfo:
    """A protocol's registry name, class, its one method and what it does."""

    name: str
    cls: type
    method: str
    summary: str


PROTOCOLS: dict[str, ProtocolInfo] = {
    info.name: info
    for info in (
        ProtocolInfo("bag-predictor", BagPredictor, "predict_bags",
                     "reactant bag ({n}X.{m}Y) -> product bag"),
        ProtocolInfo("reaction-predictor", ReactionPredictor, "predict",
                     "reactant SMILES -> k ranked product SMILES"),
        ProtocolInfo("generator", MoleculeGenerator, "sample", "sample(n, seed) -> SMILES"),
        ProtocolInfo("encoder", Encoder, "encode", "SMILES -> embeddings (n, d), per layer"),
        ProtocolInfo("mechanism-predictor", MechanismPredictor, "predict_mechanisms",
                     "reaction -> list of mechanism steps"),
        ProtocolInfo("property-predictor", PropertyPredictor, "predict_properties",
                     "SMILES -> property values (downstream robustness)"),
    )
}


def register_protocol(info: ProtocolInfo) -> ProtocolInfo:
    """Add a protocol a suite defines; a name taken by another protocol is an error."""
    existing = PROTOCOLS.get(info.name)
    if existing is not None and existing != info:
        raise ValueError(f"protocol {info.name!r} is already registered")
    PROTOCOLS[info.name] = info
    return info


def unregister_protocol(name: str) -> None:
    """Remove a protocol added with :func:`register_protocol`."""
    PROTOCOLS.pop(name, None)


def protocol_suites(name: str) -> list[str]:
    """The suites that ask a model for protocol ``name`` (from the suite registry)."""
    from chemassay.suites import all_suites

    return [suite.name for suite in all_suites() if name in suite.protocols]


def conforms(model: Any, protocol: str) -> bool:
    """Whether ``model`` has the protocol's method (and, for encoders, a ``name``)."""
    info = PROTOCOLS[protocol]
    if not callable(getattr(model, info.method, None)):
        return False
    if protocol == "encoder" and not isinstance(getattr(model, "name", None), str):
        return False
    return True


class _CallableAdapter:
    def __init__(self, fn: Callable, method: str) -> None:
        self._fn = fn
        self._method = method
        self.name = getattr(fn, "__name__", "callable")

    def describe(self) -> dict[str, Any]:
        module = getattr(self._fn, "__module__", None) or "?"
        return {"callable": f"{module}:{getattr(self._fn, '__qualname__', self.name)}"}


def from_callable(fn: Callable, protocol: str | type) -> Any:
    """Wrap a plain function so it satisfies ``protocol`` (its single method calls ``fn``).

    ``protocol`` is a registry name (``"reaction-predictor"``) or a protocol class.
    """
    if isinstance(protocol, str):
        if protocol not in PROTOCOLS:
            raise TypeError(f"unknown protocol {protocol!r}")
        method = PROTOCOLS[protocol].method
    else:
        methods = [name for name in protocol.__dict__ if not name.startswith("_") and callable(protocol.__dict__[name])]
        if len(methods) != 1:
            raise TypeError(f"{protocol.__name__} has no single method to adapt")
        method = methods[0]
    adapter = _CallableAdapter(fn, method)
    setattr(adapter, method, fn)
    return adapter
