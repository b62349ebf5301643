"""Accounting of requests to a model behind an endpoint, shared by every suite.

Every model that talks to a server (the ``openai`` kind: chat completions and embeddings)
exposes one :class:`RequestStats` as ``model.request_stats``. It counts, for the life of the
model object, the answers that came from the server (``new``), those answered from the
response cache (``cached``), the requests that failed for good with their reasons, the
answers the protocol could read nothing from (``unreadable``, counted by the model that parsed
them) and the ``usage`` tokens the server reported. Suites read it the same way
(:func:`request_summary`) into the result's declared ``requests`` field
(:class:`~chemassay.report.result.RequestSummary`), and the CLI prints its one summary line.
Library code never prints it.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from chemassay.report.result import RequestSummary


class RequestStats:
    """Counts of one model's requests (thread-safe; see the module docstring)."""

    def __init__(self, endpoints: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self.new = 0
        self.cached = 0
        self.failed = 0
        self.unreadable = 0
        self.reasons: Counter[str] = Counter()
        self.prompt_tokens: int | None = None
        self.completion_tokens: int | None = None
        self.endpoints = list(endpoints)

    def answered_new(self, count: int = 1) -> None:
        """``count`` answers arrived from the server."""
        with self._lock:
            self.new += count

    def answered_from_cache(self, count: int = 1) -> None:
        """``count`` answers were found in the response cache."""
        with self._lock:
            self.cached += count

    def failed_for_good(self, reason: str, count: int = 1) -> None:
        """``count`` requests failed for good with ``reason``."""
        with self._lock:
            self.failed += count
            self.reasons[reason] += count

    def answered_unreadable(self, count: int = 1) -> None:
        """``count`` answers held nothing the protocol could read."""
        with self._lock:
            self.unreadable += count

    def add_usage(self, usage: Mapping[str, Any] | None) -> None:
        """Add the ``usage`` object of one reply (``prompt_tokens``, ``completion_tokens``)."""
        if not isinstance(usage, Mapping):
            return
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        with self._lock:
            if isinstance(prompt, int) and not isinstance(prompt, bool):
                self.prompt_tokens = (self.prompt_tokens or 0) + prompt
            if isinstance(completion, int) and not isinstance(completion, bool):
                self.completion_tokens = (self.completion_tokens or 0) + completion

    def summary(self) -> RequestSummary:
        """The counts as the result's :class:`~chemassay.report.result.RequestSummary`."""
        with self._lock:
            return RequestSummary(
                new=self.new, cached=self.cached, failed=self.failed, reasons=dict(self.reasons.most_common()),
                unreadable=self.unreadable,
                prompt_tokens=self.prompt_tokens, completion_tokens=self.completion_tokens,
                endpoints=list(self.endpoints),
            )


def request_stats(model: Any) -> RequestStats | None:
    """The :class:`RequestStats` of a model that talks to an endpoint, else ``None``."""
    stats = getattr(model, "request_stats", None)
    return stats if isinstance(stats, RequestStats) else None


def request_summary(model: Any) -> RequestSummary | None:
    """The result's ``requests`` field for ``model`` (``None`` for a model without an endpoint)."""
    stats = request_stats(model)
    return stats.summary() if stats is not None else None
