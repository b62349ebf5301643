"""A client for OpenAI-compatible chat-completion endpoints (OpenAI, vLLM, llama.cpp,
Ollama, LM Studio, TGI...), over plain HTTP with ``httpx`` (the ``llm`` extra).

What it adds to a bare POST:

* **retries with exponential backoff** on transport errors, time-outs and the statuses a
  server uses for "try again" (408, 409, 425, 429, 500, 502, 503, 504); the wait is
  ``backoff × 2^(attempt-1)`` seconds capped at ``max_backoff``, or the server's
  ``Retry-After`` when it sends one (also capped);
* a **per-request time-out**;
* **concurrency**: :meth:`OpenAIChatClient.complete_many` runs requests on a thread pool
  and reports each outcome as soon as it arrives (callers write results incrementally,
  which is what makes resuming an interrupted run possible).

Other 4xx statuses (bad request, unauthorized, unknown model...) fail at once: retrying
cannot fix them. The API key is read by the caller (e.g. from an environment variable) and
sent as a bearer token; it is never logged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from chemassay.errors import require

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
Message = Mapping[str, Any]


@dataclass
class ChatResponse:
    """A successful completion: the text and what it cost."""

    text: str
    model: str | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    attempts: int = 1
    elapsed_s: float = 0.0
    reasoning: str | None = None


class ChatError(Exception):
    """A request that failed for good (after retries when retrying made sense)."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1, retryable: bool = False) -> None:
        self.status = status
        self.attempts = attempts
        self.retryable = retryable
        super().__init__(message)


def chat_url(base_url: str) -> str:
    """The chat-completions URL for a base URL (``.../v1`` or the full endpoint)."""
    url = base_url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    return url + "/chat/completions"


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: fall back to the exponential schedule


@dataclass
class OpenAIChatClient:
    """Chat completions against one model of an OpenAI-compatible server.

    ``params`` are extra body fields sent with every request (``temperature``,
    ``max_tokens``, ``top_p``, ``seed``...). ``sleep`` is the function used to wait between
    attempts (injectable so callers can observe the schedule).
    """

    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 120.0
    max_retries: int = 5
    backoff: float = 1.0
    max_backoff: float = 60.0
    params: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    sleep: Callable[[float], None] = time.sleep

    def __post_init__(self) -> None:
        httpx = require("httpx", "llm", "OpenAI-compatible endpoints")
        headers = {"Content-Type": "application/json", **self.headers}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        self._httpx = httpx
        self._client = httpx.Client(headers=headers, timeout=httpx.Timeout(self.timeout))
        self.url = chat_url(self.base_url)
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the underlying connection pool."""
        self._client.close()

    def __enter__(self) -> OpenAIChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_time(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(self.max_backoff, retry_after)
        return min(self.max_backoff, self.backoff * (2 ** (attempt - 1)))

    def _once(self, body: dict[str, Any]) -> tuple[ChatResponse | None, ChatError | None, float | None]:
        httpx = self._httpx
        try:
            response = self._client.post(self.url, json=body)
        except httpx.TimeoutException as exc:
            return None, ChatError(f"timed out after {self.timeout:g} s ({type(exc).__name__})", retryable=True), None
        except httpx.TransportError as exc:
            return None, ChatError(f"connection failed: {exc}", retryable=True), None
        if response.status_code != 200:
            text = response.text[:300].replace("\n", " ")
            retryable = response.status_code in RETRY_STATUSES
            error = ChatError(f"HTTP {response.status_code}: {text}", status=response.status_code, retryable=retryable)
            return None, error, _retry_after(response.headers)
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice.get("message") or {}
            content = message.get("content")
            if content is None:
                content = choice.get("text") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return None, ChatError(f"unexpected response body: {response.text[:300]!r}", status=200), None
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        return (
            ChatResponse(
                text=str(content),
                model=data.get("model"),
                finish_reason=choice.get("finish_reason"),
                usage=data.get("usage"),
                reasoning=reasoning if isinstance(reasoning, str) else None,
            ),
            None,
            None,
        )

    def complete(self, messages: Sequence[Message], **params: Any) -> ChatResponse:
        """One chat completion (with retries); raises :class:`ChatError` on failure."""
        body = {"model": self.model, "messages": list(messages), **self.params, **params}
        started = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            result, error, retry_after = self._once(body)
            if result is not None:
                result.attempts = attempt
                result.elapsed_s = time.perf_counter() - started
                return result
            assert error is not None
            error.attempts = attempt
            if not error.retryable or attempt > self.max_retries:
                if error.retryable:
                    error.args = (f"{error.args[0]} (gave up after {attempt} attempts)",)
                raise error
            self.sleep(self.wait_time(attempt, retry_after))

    def complete_many(
        self,
        conversations: Sequence[Sequence[Message]],
        *,
        concurrency: int = 4,
        on_result: Callable[[int, ChatResponse | ChatError], None] | None = None,
    ) -> list[ChatResponse | ChatError]:
        """Run many completions, ``concurrency`` at a time; outcomes in input order.

        ``on_result(index, outcome)`` is called (serialized, from worker threads) as each
        request finishes, so results can be saved before the whole batch is done.
        """
        outcomes: list[ChatResponse | ChatError | None] = [None] * len(conversations)

        def run(index: int) -> tuple[int, ChatResponse | ChatError]:
            try:
                return index, self.complete(conversations[index])
            except ChatError as exc:
                return index, exc

        with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
            futures = [pool.submit(run, index) for index in range(len(conversations))]
            try:
                for future in as_completed(futures):
                    index, outcome = future.result()
                    outcomes[index] = outcome
                    if on_result is not None:
                        with self._lock:
                            on_result(index, outcome)
            except BaseException:
                # Ctrl-C or a failing callback: do not start the queued requests, only let the
                # ones in flight finish, so an interrupted run stops promptly (and can resume).
                for future in futures:
                    future.cancel()
                raise
        return outcomes  # type: ignore[return-value]
