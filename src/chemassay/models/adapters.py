"""An object that implements any protocol's method by answering items: what the text, the
embeddings and the predictions-file kinds return, so that they serve every protocol without
knowing any.

:func:`protocol_model` builds it from a protocol and a function ``answer(items, options) ->
TextOutcome``; calling the protocol's method (``model.predict(reactants, 3)``) maps the call to
items and options (:meth:`~chemassay.contract.Protocol.items_of_call`), answers them, keeps the
failed items in ``failures`` (index → reason) and the items whose answer was unreadable in
``unreadable`` (index → why; also counted in the model's ``request_stats`` where it has them),
and returns what the method promises (:meth:`~chemassay.contract.Protocol.join`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chemassay.contract import Protocol, TextOutcome

Answer = Callable[[Sequence[Any], Mapping[str, Any]], TextOutcome]


class ProtocolModel:
    """Base of the objects :func:`protocol_model` builds (see the module docstring)."""

    protocol: Protocol
    name: str

    def __init__(self, answer: Answer, *, name: str, describe: Mapping[str, Any] | None = None,
                 checksum: str | None = None) -> None:
        self._answer = answer
        self.name = name
        self.failures: dict[int, str] = {}
        self.unreadable: dict[int, str] = {}
        self._describe = dict(describe or {})
        self._checksum = checksum

    def describe(self) -> dict[str, Any]:
        """Settings that determine the outputs."""
        return dict(self._describe)

    def checksum(self) -> str | None:
        """The sha256 that identifies the model (a predictions file's), if it has one."""
        return self._checksum

    def answer_items(self, items: Sequence[Any], options: Mapping[str, Any]) -> TextOutcome:
        """The outputs of ``items`` (the run pipeline calls this directly)."""
        outcome = self._answer(items, options)
        self.failures = dict(outcome.failures)
        self.unreadable = dict(getattr(outcome, "unreadable", None) or {})
        count = getattr(getattr(self, "request_stats", None), "answered_unreadable", None)
        if self.unreadable and callable(count):
            count(len(self.unreadable))
        return outcome

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        items, options = self.protocol.items_of_call(args, kwargs)
        return self.protocol.join(self.answer_items(items, options).outputs, options)


_CLASSES: dict[tuple[str, str], type] = {}


def protocol_model(protocol: Protocol, answer: Answer, *, name: str, describe: Mapping[str, Any] | None = None,
                   checksum: str | None = None, base: type = ProtocolModel, **attributes: Any) -> Any:
    """An object with ``protocol``'s method, answering items with ``answer`` (see the module
    docstring); ``attributes`` are set on it (``request_stats``, ``backend``...)."""
    key = (base.__qualname__ + base.__module__, protocol.method)
    cls = _CLASSES.get(key)
    if cls is None:
        cls = type(base.__name__, (base,), {protocol.method: base._call, "__module__": base.__module__})
        _CLASSES[key] = cls
    model = cls(answer, name=name, describe=describe, checksum=checksum)
    model.protocol = protocol
    for attribute, value in attributes.items():
        setattr(model, attribute, value)
    return model
