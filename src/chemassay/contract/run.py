"""The :class:`Run`: what running one model over a suite's items gave, for every model kind.

``chemassay.models.run(model, protocol, items, options)`` returns it; a suite scores
``run.outputs`` and hands the run to ``make_result(run=...)``, which takes the model's
identity, the request counts and the failed items from it. This module imports nothing of
chemassay (the leaf ``contract`` package).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Run:
    """Outputs of one model for a list of items.

    ``outputs`` has one entry per item, in order (the protocol's ``missing`` where the model
    gave nothing); ``failures`` maps the index of every failed item to its reason (the request
    failed); ``unreadable`` maps the index of every item whose answer the protocol could read
    nothing from to why (the model answered, but not readably: scored as a missing answer
    and counted in the result's ``requests.unreadable``);
    ``model`` is the model's identity (a ``ModelRef``), ``requests`` the request summary of a
    model behind an endpoint (``None`` otherwise); ``calls`` counts the calls of the model's
    method this run made, ``cached`` the items answered from the response cache and
    ``duplicates`` the items answered by an identical earlier item; ``model_object`` is the
    resolved model (for suites that read its own counters).
    """

    protocol: str
    items: list[Any]
    outputs: list[Any]
    failures: dict[int, str] = field(default_factory=dict)
    unreadable: dict[int, str] = field(default_factory=dict)
    model: Any = None
    requests: Any = None
    calls: int = 0
    cached: int = 0
    duplicates: int = 0
    elapsed_s: float = 0.0
    options: dict[str, Any] = field(default_factory=dict)
    model_object: Any = field(default=None, repr=False)

    @property
    def n(self) -> int:
        """How many items were asked."""
        return len(self.items)

    def answered(self) -> list[int]:
        """Indices of the items the model answered."""
        return [i for i in range(len(self.items)) if i not in self.failures]
