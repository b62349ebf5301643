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
cannot fix them. An endpoint that refuses the connection (or whose host does not resolve)
before it has answered once fails at once too, with :class:`EndpointUnreachable` naming the
URL: a server that is not running is not a transient error. The API key is read by the
caller (only from an environment variable) and sent as a bearer token; it is never logged.

With ``cache`` (a :class:`~chemassay.runtime.cache.KeyValueStore`), every successful answer
is stored under a key made of the model name, the messages and the sampling parameters, and
the same request is answered from the store the next time: an interrupted run resumes
without asking again, and a sampled answer is reproduced exactly. :meth:`embed` does the same
for ``/v1/embeddings`` (per input text).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from chemassay.errors import UserInputError, require

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


class EndpointUnreachable(ChatError, UserInputError):
    """The endpoint refused the connection (or its host does not resolve) before any answer."""

    exit_code = 2


def chat_url(base_url: str) -> str:
    """The chat-completions URL for a base URL (``.../v1`` or the full endpoint)."""
    url = base_url.rstrip("/")
    if url.endswith("/chat/completions"):
        return url
    if url.endswith("/embeddings"):
        url = url[: -len("/embeddings")]
    return url + "/chat/completions"


def embeddings_url(base_url: str) -> str:
    """The embeddings URL for a base URL (``.../v1`` or the full endpoint)."""
    url = base_url.rstrip("/")
    if url.endswith("/embeddings"):
        return url
    if url.endswith("/chat/completions"):
        url = url[: -len("/chat/completions")]
    return url + "/embeddings"


def request_key(model: str, payload: Any) -> str:
    """The response-cache key of a request: sha256 of the model and the request body."""
    import hashlib
    import json

    text = json.dumps({"model": model, "request": payload}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    cache: Any = None
    """A :class:`~chemassay.runtime.cache.KeyValueStore` of answers (``None``: no cache)."""

    def __post_init__(self) -> None:
        httpx = require("httpx", "llm", "OpenAI-compatible endpoints")
        headers = {"Content-Type": "application/json", **self.headers}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        self._httpx = httpx
        self._client = httpx.Client(headers=headers, timeout=httpx.Timeout(self.timeout))
        self.url = chat_url(self.base_url)
        self.embed_url = embeddings_url(self.base_url)
        self._lock = threading.Lock()
        self._answered = False
        self.cache_hits = 0
        self.requests_sent = 0

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

    def _post(self, url: str, body: dict[str, Any]):
        """POST ``body``; a refused connection before any answer raises :class:`EndpointUnreachable`."""
        httpx = self._httpx
        with self._lock:
            self.requests_sent += 1
        try:
            response = self._client.post(url, json=body)
        except httpx.ConnectError as exc:
            if not self._answered:
                raise EndpointUnreachable(
                    f"{url}: connection failed ({exc or 'refused'}); is the server running and is --base-url right?"
                ) from None
            raise
        self._answered = True
        return response

    def _once(self, body: dict[str, Any]) -> tuple[ChatResponse | None, ChatError | None, float | None]:
        httpx = self._httpx
        try:
            response = self._post(self.url, body)
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
        """One chat completion (with retries); raises :class:`ChatError` on failure.

        With a cache, an answer stored for the same model, messages and parameters is
        returned without a request (``attempts == 0``).
        """
        body = {"model": self.model, "messages": list(messages), **self.params, **params}
        key = request_key(self.model, {k: v for k, v in body.items() if k != "model"}) if self.cache is not None else None
        if key is not None:
            stored = self.cache.get(key)
            if isinstance(stored, dict) and isinstance(stored.get("text"), str):
                with self._lock:
                    self.cache_hits += 1
                return ChatResponse(
                    text=stored["text"], model=stored.get("model"), finish_reason=stored.get("finish_reason"),
                    usage=stored.get("usage"), attempts=0, elapsed_s=0.0, reasoning=stored.get("reasoning"),
                )
        started = time.perf_counter()
        attempt = 0
        while True:
            attempt += 1
            result, error, retry_after = self._once(body)
            if result is not None:
                result.attempts = attempt
                result.elapsed_s = time.perf_counter() - started
                if key is not None:
                    self.cache.put(key, {"text": result.text, "model": result.model, "finish_reason": result.finish_reason,
                                         "usage": result.usage, "reasoning": result.reasoning})
                return result
            assert error is not None
            error.attempts = attempt
            if not error.retryable or attempt > self.max_retries:
                if error.retryable:
                    error.args = (f"{error.args[0]} (gave up after {attempt} attempts)",)
                raise error
            self.sleep(self.wait_time(attempt, retry_after))

    def embed(self, texts: Sequence[str], *, batch_size: int = 64, **params: Any) -> list[list[float]]:
        """Embeddings of ``texts`` from ``/v1/embeddings`` (cached per text), in input order.

        Raises :class:`ChatError` when the endpoint fails for good or answers with a
        different number of vectors than it was sent texts.
        """
        vectors: list[list[float] | None] = [None] * len(texts)
        keys: list[str | None] = [None] * len(texts)
        todo: list[int] = []
        for index, text in enumerate(texts):
            if self.cache is not None:
                keys[index] = request_key(self.model, {"embeddings": text, **params})
                stored = self.cache.get(keys[index])
                if isinstance(stored, list):
                    vectors[index] = stored
                    with self._lock:
                        self.cache_hits += 1
                    continue
            todo.append(index)
        for start in range(0, len(todo), max(1, batch_size)):
            chunk = todo[start:start + batch_size]
            body = {"model": self.model, "input": [texts[i] for i in chunk], **params}
            data = self._embed_request(body)
            if len(data) != len(chunk):
                raise ChatError(f"{self.embed_url}: sent {len(chunk)} texts, got {len(data)} embeddings", status=200)
            for index, vector in zip(chunk, data, strict=True):
                vectors[index] = vector
                if keys[index] is not None:
                    self.cache.put(keys[index], vector)
        return vectors  # type: ignore[return-value]

    def _embed_request(self, body: dict[str, Any]) -> list[list[float]]:
        httpx = self._httpx
        attempt = 0
        while True:
            attempt += 1
            retry_after = None
            try:
                response = self._post(self.embed_url, body)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                error = ChatError(f"{self.embed_url}: {type(exc).__name__}: {exc}", retryable=True)
            else:
                if response.status_code == 200:
                    try:
                        items = sorted(response.json()["data"], key=lambda item: item.get("index", 0))
                        return [[float(x) for x in item["embedding"]] for item in items]
                    except (ValueError, KeyError, TypeError, AttributeError):
                        raise ChatError(f"{self.embed_url}: unexpected response body {response.text[:200]!r}", status=200) from None
                retryable = response.status_code in RETRY_STATUSES
                error = ChatError(f"{self.embed_url}: HTTP {response.status_code}: {response.text[:200]}",
                                  status=response.status_code, retryable=retryable)
                retry_after = _retry_after(response.headers)
            error.attempts = attempt
            if not error.retryable or attempt > self.max_retries:
                raise error
            self.sleep(self.wait_time(attempt, retry_after))

    def complete_many(
        self,
        conversations: Sequence[Sequence[Message]],
        *,
        concurrency: int = 4,
        on_result: Callable[[int, ChatResponse | ChatError], None] | None = None,
        params: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[ChatResponse | ChatError]:
        """Run many completions, ``concurrency`` at a time; outcomes in input order.

        ``on_result(index, outcome)`` is called (serialized, from worker threads) as each
        request finishes, so results can be saved before the whole batch is done.
        ``params`` gives per-request body fields (a seed per sampling request, say).
        An unreachable endpoint stops the whole batch with :class:`EndpointUnreachable`.
        """
        outcomes: list[ChatResponse | ChatError | None] = [None] * len(conversations)
        if params is not None and len(params) != len(conversations):
            raise ValueError("params must give one mapping per conversation")

        def run(index: int) -> tuple[int, ChatResponse | ChatError]:
            try:
                extra = dict(params[index]) if params is not None else {}
                return index, self.complete(conversations[index], **extra)
            except EndpointUnreachable:
                raise
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
