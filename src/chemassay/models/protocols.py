"""Which protocols exist: asked of the suite registry, never kept here.

Each suite owns its protocols (``suites/<name>/protocol.py``, :class:`~chemassay.contract.Protocol`
objects) and declares them in its :class:`~chemassay.suites.Suite` (``model_protocols``). This
module only looks them up (:func:`get_protocol`, :func:`all_protocols`), checks an object
against one (:func:`conforms`) and adapts a plain function to one (:func:`from_callable`).
``chemassay models list`` shows every protocol with the suites that ask it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chemassay.contract import Protocol
from chemassay.contract.errors import UserInputError
from chemassay.suites import all_suites


def all_protocols() -> dict[str, Protocol]:
    """Every protocol the registered suites declare, by name, in the suites' order."""
    found: dict[str, Protocol] = {}
    for suite in all_suites():
        for protocol in suite.load("model_protocols") or ():
            if not isinstance(protocol, Protocol):
                raise TypeError(f"suite {suite.name}: {protocol!r} is not a chemassay.contract.Protocol")
            found.setdefault(protocol.name, protocol)
    return found


def get_protocol(protocol: str | Protocol) -> Protocol:
    """The protocol object called ``protocol`` (an object is returned as it is); an unknown
    name is a one-line error listing the known ones."""
    if isinstance(protocol, Protocol):
        return protocol
    known = all_protocols()
    if protocol not in known:
        raise UserInputError(f"unknown protocol {protocol!r}; known: {', '.join(sorted(known))}")
    return known[protocol]


def protocol_suites(name: str) -> list[str]:
    """The suites that ask a model for protocol ``name``."""
    return [suite.name for suite in all_suites() if name in suite.protocols]


def conforms(model: Any, protocol: str | Protocol) -> bool:
    """Whether ``model`` has the protocol's method. A ``name`` is never required: a model
    without one is named by its spec (``python:MODULE:NAME``), also where the protocol's
    ``needs_name`` asks for a display name."""
    return callable(getattr(model, get_protocol(protocol).method, None))


class _CallableAdapter:
    def __init__(self, fn: Callable, method: str) -> None:
        self._fn = fn
        self._method = method
        self.name = getattr(fn, "__name__", "callable")

    def describe(self) -> dict[str, Any]:
        module = getattr(self._fn, "__module__", None) or "?"
        return {"callable": f"{module}:{getattr(self._fn, '__qualname__', self.name)}"}


def from_callable(fn: Callable, protocol: str | Protocol) -> Any:
    """Wrap a plain function so it satisfies ``protocol`` (a name or a protocol object): its
    one method calls ``fn``.

    >>> echo = from_callable(lambda sources: list(sources), "bag-predictor")
    >>> echo.predict_bags(["{1}O"])
    ['{1}O']
    """
    method = get_protocol(protocol).method
    adapter = _CallableAdapter(fn, method)
    setattr(adapter, method, fn)
    return adapter
