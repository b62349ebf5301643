"""Accounting of requests to a model behind an endpoint, shared by every suite.

Every model that talks to a server (the ``openai`` kind: chat completions and embeddings)
exposes one :class:`RequestStats` as ``model.request_stats``. It counts, for the life of the
model object, the answers that came from the server (``new``), those answered from the
response cache (``cached``), the requests that failed for good with their reasons (and among
them the answers ``cut_off`` at the length limit), the answers the protocol could read
nothing from (``unreadable``, counted by the model that parsed them) and the ``usage`` tokens
the server reported (reasoning tokens included where it reports them). Suites read it the same way
(:func:`request_summary`) into the result's declared ``requests`` field
(:class:`~chemassay.contract.result.RequestSummary`), and the CLI prints its one summary line.
Library code never prints it.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from chemassay.contract.result import RequestSummary


class RequestStats:
    """Counts of one model's requests (thread-safe; see the module docstring)."""

    def __init__(self, endpoints: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self.new = 0
        self.cached = 0
        self.failed = 0
        self.unreadable = 0
        self.cut_off = 0
        self.reasons: Counter[str] = Counter()
        self.prompt_tokens: int | None = None
        self.completion_tokens: int | None = None
        self.reasoning_tokens: int | None = None
        self.endpoints = list(endpoints)

    def answered_new(self, count: int = 1) -> None:
        """``count`` answers arrived from the server."""
        with self._lock:
            self.new += count

    def answered_from_cache(self, count: int = 1) -> None:
        """``count`` answers were found in the response cache."""
        with self._lock:
            self.cached += count

    def failed_for_good(self, reason: str, count: int = 1, *, cut_off: bool = False) -> None:
        """``count`` requests failed for good with ``reason`` (``cut_off``: their answers were
        cut off at the length limit)."""
        with self._lock:
            self.failed += count
            self.cut_off += count if cut_off else 0
            self.reasons[reason] += count

    def answered_unreadable(self, count: int = 1) -> None:
        """``count`` answers held nothing the protocol could read."""
        with self._lock:
            self.unreadable += count

    def add_usage(self, usage: Mapping[str, Any] | None) -> None:
        """Add the ``usage`` object of one reply (``prompt_tokens``, ``completion_tokens`` and
        ``completion_tokens_details.reasoning_tokens``)."""
        if not isinstance(usage, Mapping):
            return
        details = usage.get("completion_tokens_details")
        reasoning = details.get("reasoning_tokens") if isinstance(details, Mapping) else None
        with self._lock:
            self.prompt_tokens = _added(self.prompt_tokens, usage.get("prompt_tokens"))
            self.completion_tokens = _added(self.completion_tokens, usage.get("completion_tokens"))
            self.reasoning_tokens = _added(self.reasoning_tokens, reasoning)

    def summary(self) -> RequestSummary:
        """The counts as the result's :class:`~chemassay.contract.result.RequestSummary`."""
        with self._lock:
            return RequestSummary(
                new=self.new, cached=self.cached, failed=self.failed, reasons=dict(self.reasons.most_common()),
                unreadable=self.unreadable,
                prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens,
                reasoning_tokens=self.reasoning_tokens, cut_off=self.cut_off, endpoints=list(self.endpoints),
            )


def _added(total: int | None, value: Any) -> int | None:
    """``total + value`` when ``value`` is a token count (``None`` stays "not reported")."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (total or 0) + value
    return total


def request_stats(model: Any) -> RequestStats | None:
    """The :class:`RequestStats` of a model that talks to an endpoint, else ``None``."""
    stats = getattr(model, "request_stats", None)
    return stats if isinstance(stats, RequestStats) else None


def request_summary(model: Any) -> RequestSummary | None:
    """The result's ``requests`` field for ``model`` (``None`` for a model without an endpoint)."""
    stats = request_stats(model)
    return stats.summary() if stats is not None else None
