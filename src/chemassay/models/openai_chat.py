"""The one client for models behind OpenAI-compatible endpoints (OpenAI, vLLM, llama.cpp,
Ollama, LM Studio, TGI...): chat completions and embeddings over HTTP with ``httpx`` (the
``llm`` extra). Every suite asks a served model through it, so every suite gets the same
failure contract:

* **A reply is an answer only when it is whole.** A reply with no ``choices``, no
  ``content``, an empty answer, a body that is not JSON, an answer cut off by the server
  (``finish_reason: length``, also counted as ``cut_off``) or one over ``max_answer_bytes``
  (default 65,536 bytes of UTF-8; its reasoning may be 8 times that) is a *failed request*
  with that reason: it is never cached, and it is asked again where that can help (a
  malformed or empty reply may be a glitch; a cut-off or oversized answer would come back the
  same, so it is not retried). An answer that arrives whole but does not parse as what the
  suite asked for is the model's answer: the suite scores it as invalid output and it is
  cached like any answer (asking again would change the result).
* **Streaming**: chat requests ask for ``"stream": true`` (with ``stream_options.include_usage``)
  and the reply's server-sent events (``data:`` chunks up to ``data: [DONE]``) are put together
  into the same answer a plain reply gives, checked by the same rules (an answer over the cap
  is refused as it arrives). A request given up (its deadline, an answer over the cap) closes
  its connection, and a streaming server then stops generating: a model rambling to its token
  limit no longer keeps the server busy after the client gave up. A server that answers one
  JSON body instead, or refuses ``stream`` (HTTP 400, 415 or 422 whose message names
  ``stream``, before any streamed answer; the request is asked again at once without it; any
  other such error is the request's, and fails as before), is asked without it from then on
  (``stream=False`` never asks). Streamed or not, the request is the same for the cache key.
* **Reasoning**: a reply's ``reasoning_content`` (or ``reasoning``) and the ``<think>`` blocks
  of its content are not the answer: :attr:`ChatResponse.answer` (what protocols parse) is the
  content without them; the cache keeps the whole reply. Reasoning tokens
  (``usage.completion_tokens_details.reasoning_tokens``) are counted where the server
  reports them.
* **Embeddings**: a batch's reply may be up to ``max_dimension`` (16,384) numbers of 32
  bytes per input, plus 64 KiB (about 16 MiB for a batch of 32; a 3,072-number vector takes
  about 60 kB of JSON), instead of the chat-answer cap; a longer vector is refused. A reply of
  one vector per token (llama.cpp's server without ``--pooling``) is pooled with
  ``pooling="mean"`` or ``"last"`` (the bound then allows a vector per byte of each input),
  and without it ends the run at once (:class:`EndpointMisconfigured`) with one line naming
  the server option (``--pooling mean``) and the spec option.
* **Never silent**: while a batch runs, a progress line goes to the ``chemassay`` logger every
  ``progress_interval`` seconds (default :func:`~chemassay.runtime.progress.progress_interval`,
  5 s or ``$CHEMASSAY_PROGRESS_INTERVAL``): requests answered and failed, in flight (and the
  age of the oldest request), waiting to retry and the last problem; the CLI shows it on
  stderr, on a terminal and in a log alike.
* **Retries** on transport errors and the statuses a server uses for "try again" (408, 409,
  425, 429, 500, 502, 503, 504): ``backoff × 2^(attempt-1)`` seconds (1, 2, 4, 8, 16 by
  default), or the server's ``Retry-After``, both capped at ``max_backoff`` (60 s). A request
  that is waiting to retry gives its concurrency slot back, so one failing item does not
  hold a slot through its retries. Other 4xx statuses fail at once.
* **Deadlines** that a slow server answering one request at a time meets, and a server that
  hangs or trickles does not (one watchdog thread per batch shuts the socket of an attempt whose
  time is up; a request that runs out of time twice fails):

  - ``timeout`` (default 60 s) is the longest *silence*: connecting, and between two pieces of
    a streamed answer (``no complete reply in time (reply stalled: nothing for 60 s)``);
  - a request still waiting for the first piece of its answer is not timed out while its
    server is visibly at work (a piece of another answer arrived from it lately): a server that
    answers one request at a time (llama.cpp on a CPU) queues the others, and a queued request
    is not lost for waiting its turn. Without such progress it fails ``timeout`` + the time to
    read its input (``seconds_per_token`` per 4 bytes of its messages) after it was sent or
    after the last progress (``... (no reply within 60 s)``); busy server or not, it waits at most
    that + the cap of each other request in flight to the same server;
  - the **cap**: once its answer has begun, an attempt may take ``timeout`` +
    ``seconds_per_token`` (default 0.5 s, i.e. 2 tokens a second) × (its answer budget +
    its input's tokens): the answer budget is ``max_tokens`` (each protocol sets it; 4,096
    without it; none for embeddings), the input counted as a token per 4 bytes. A trickle
    that is never silent long still ends (``... (not whole within 2,233 s ...)``), while a
    4,096-token answer streamed at 23 tokens/s (SmolLM2 on one CPU core, 180 s) is whole well
    before it;
  - a server that does not stream gives no sign of progress before its whole reply: a request
    to it waits up to its cap, counted from when that server last finished a reply.

  A server that drops the request it is streaming when another arrives (llama-cpp-python's
  server by default: a stream that ends without a ``finish_reason`` while another request to
  it waits) is asked one request at a time from then on (one line says so); the cut answer
  is asked again; the other clients of the process ask it one at a time from the start.
* **Concurrency**: ``concurrency`` worker threads, each with one request in flight, and each
  outcome reported to the caller as it arrives (callers write answers incrementally, which
  makes resuming an interrupted run possible). The synchronous ``httpx`` client is used, one
  per worker thread: its asyncio client costs several times the CPU per request, and one
  connection pool shared by many threads scans every connection for every request
  (``benchmarks/endpoint_throughput.py`` measures the client against a local server).
* **Several replicas**: ``base_url`` may name several servers of the same model
  (``http://a:8000/v1|http://b:8000/v1``); each request goes to the one with the fewest
  requests in flight (ties in turn).
* **Failing fast**: an endpoint that refuses the connection before it ever answered ends
  the run at once (:class:`EndpointUnreachable`); a run in which at least
  ``STOP_MIN_FAILURES`` requests failed for good and they are ``STOP_RATE`` (90 %) or more of
  the requests finished stops early (:class:`EndpointFailing`), with one line naming the
  endpoint and the most common reason. Both are user errors (exit code 2). Answers received
  before stay cached, so a rerun resumes.
* **The response cache** (a :class:`~chemassay.runtime.cache.KeyValueStore`): an answer is
  stored under the sha256 of the endpoint (the sorted set of base URLs), the model name, the
  full request body (messages and sampling parameters) and the model revision, and the same
  request is answered from the store the next time. The revision is the ``revision`` option
  when given, else what the server reports for the model in ``GET /models`` as ``root`` (vLLM
  reports the checkpoint served there), else nothing. ``refresh`` asks again and overwrites.
  Writes are batched (one transaction per batch, not one per answer).
* **Accounting**: :attr:`OpenAIChatClient.stats` (a
  :class:`~chemassay.models.request_stats.RequestStats`) counts new answers, cached ones,
  failures by reason and the ``usage`` tokens the server reported.

The API key is read by the caller (only from an environment variable) and sent as a bearer
token; it is never logged, cached or written.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import json
import queue
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chemassay.contract.errors import UserInputError, require
from chemassay.models.request_stats import RequestStats
from chemassay.runtime.progress import info, progress_interval

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
DEFAULT_TIMEOUT = 60.0
"""Longest silence of an attempt (seconds): connecting, waiting for an answer while the server
shows no progress, or between two pieces of a streamed answer."""
DEFAULT_SECONDS_PER_TOKEN = 0.5
"""Time allowed per answer token on top of ``timeout``: the cap on a whole reply (2 tokens a second)."""
DEFAULT_ANSWER_TOKENS = 4096
"""The answer budget assumed for a request without ``max_tokens`` (for its time cap)."""
PROMPT_BYTES_PER_TOKEN = 4
"""Bytes of a request's input (its messages, the texts to embed) counted as one token of its
time. SMILES take about 2 bytes a token, prose about 4; a small model on a busy CPU reads its
input little faster than it writes (SmolLM2-135M on this project's 2-core machine: 15-33 input
tokens a second, 23-45 answer tokens), so an input token is given the time of an answer token."""
DEFAULT_MAX_ANSWER_BYTES = 65536
"""Largest answer (UTF-8 bytes of the message content) taken as an answer."""
REASONING_FACTOR = 8
"""A reply's reasoning (``reasoning_content``) may be this many times ``max_answer_bytes``."""
DEFAULT_MAX_DIMENSION = 16384
"""Longest embedding taken (numbers per vector): the embeddings reply bound scales with it."""
NUMBER_BYTES = 32
"""Bytes one number of an embedding may take in a JSON reply (``-1.2345678901234567e-05, ``)."""
POOLINGS = ("mean", "last")
"""How a per-token embeddings reply (one vector per token) is pooled into one vector."""
STREAM_REFUSED = frozenset({400, 415, 422})
"""Statuses with which a server may refuse ``stream``: a reply of one of them whose message
names ``stream``, before the server ever streamed, is asked again at once without it."""
TIMED_OUT = "no complete reply in time"
"""The reason of an attempt given up by its deadlines (the details follow in brackets)."""
STREAM_ENDED = "the stream ended before the answer did"
"""The reason of a streamed reply without a ``finish_reason``: not an answer, asked again."""
_ONE_AT_A_TIME: set[str] = set()
"""Base URLs of the servers found to answer one request at a time, for every client of this
process (an assay builds a client per task: the next ones need not find it out again)."""
STOP_MIN_FAILURES = 8
STOP_RATE = 0.9
CACHE_FLUSH_SECONDS = 0.2
Message = Mapping[str, Any]


_THINK_BLOCK = re.compile(r"<think>(.*?)</think>", re.DOTALL | re.IGNORECASE)


def split_reasoning(text: str) -> tuple[str, str | None]:
    """``(answer, reasoning)`` of a message's content: the ``<think>...</think>`` blocks are the
    reasoning, the rest the answer. A content that only closes a block (the chat template
    opened it in the prompt) has its reasoning up to the last ``</think>``; an unterminated
    ``<think>`` (cut off while reasoning) makes the rest reasoning.

    >>> split_reasoning("<think>ester?</think>\\nCCOC(C)=O")
    ('CCOC(C)=O', 'ester?')
    >>> split_reasoning("acid first... </think> CC(=O)O")
    ('CC(=O)O', 'acid first...')
    """
    if "think>" not in text.lower():
        return text, None
    thoughts = [m.strip() for m in _THINK_BLOCK.findall(text)]
    answer = _THINK_BLOCK.sub("", text)
    lower = answer.lower()
    if "</think>" in lower:  # opened by the template, closed by the model
        end = lower.rindex("</think>")
        thoughts.insert(0, answer[:end].strip())
        answer = answer[end + len("</think>"):]
        lower = answer.lower()
    if "<think>" in lower:  # never closed: cut off while reasoning
        start = lower.index("<think>")
        thoughts.append(answer[start + len("<think>"):].strip())
        answer = answer[:start]
    reasoning = "\n\n".join(t for t in thoughts if t)
    return answer.strip(), reasoning or None


@dataclass
class ChatResponse:
    """A whole answer: the text, what the server reported, and what it cost.

    ``text`` is the message's content as the server sent it and ``reasoning`` its
    ``reasoning_content`` (the field reasoning servers send beside the content); both are
    what the response cache keeps. :attr:`answer` is what a protocol parses: the content
    without its ``<think>`` blocks."""

    text: str
    model: str | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] | None = None
    attempts: int = 1
    elapsed_s: float = 0.0
    reasoning: str | None = None
    system_fingerprint: str | None = None
    from_cache: bool = False
    streamed: bool = False

    @property
    def answer(self) -> str:
        """The content without its reasoning (``<think>`` blocks): what is parsed."""
        return split_reasoning(self.text)[0]

    @property
    def all_reasoning(self) -> str | None:
        """Every piece of reasoning of the reply: ``reasoning_content``, then the ``<think>`` blocks."""
        parts = [self.reasoning, split_reasoning(self.text)[1]]
        return "\n\n".join(p for p in parts if p) or None


class ChatError(Exception):
    """A request that failed for good (after retries when retrying made sense).

    ``str(error)`` is the reason (``HTTP 500 after 6 attempts``, ``reply has no content``...);
    ``kind`` the same without details, to count reasons.
    """

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1, retryable: bool = False,
                 kind: str | None = None, cut_off: bool = False, partial: str | None = None) -> None:
        self.status = status
        self.attempts = attempts
        self.retryable = retryable
        self.kind = kind or message
        self.cut_off = cut_off
        """The answer was cut off at the length limit (``finish_reason: length``)."""
        self.partial = partial
        """What a cut-off answer held before the cut (its reasoning taken out), for a protocol
        that can use part of an answer: a generator keeps its complete lines."""
        super().__init__(message)


class EndpointUnreachable(ChatError, UserInputError):
    """The endpoint refused the connection (or its host does not resolve) before any answer."""

    exit_code = 2


class EndpointFailing(ChatError, UserInputError):
    """Nearly every request failed for good: the run stopped early (see the module docstring)."""

    exit_code = 2


class EndpointMisconfigured(ChatError, UserInputError):
    """The server answers in a way no request can use (one vector per token without
    ``pooling=``): the run stops at once with one line naming the setting to change."""

    exit_code = 2


class _Problem(Exception):
    """One attempt that did not give an answer."""

    def __init__(self, reason: str, *, retryable: bool, status: int | None = None, retry_after: float | None = None,
                 timeout: bool = False, kind: str | None = None, cut_off: bool = False,
                 partial: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.timeout = timeout
        self.kind = kind or reason
        self.cut_off = cut_off
        self.partial = partial


class _StreamRefused(Exception):
    """The server refused a streamed request (a status of :data:`STREAM_REFUSED`)."""


def split_base_urls(value: str | Sequence[str]) -> list[str]:
    """The base URLs of ``value``: one URL, several joined by ``|``, or a list of them."""
    parts = value.split("|") if isinstance(value, str) else [p for v in value for p in str(v).split("|")]
    urls = [p.strip() for p in parts if p.strip()]
    if not urls:
        raise UserInputError("base_url: no server URL given")
    return urls


def _base(url: str) -> str:
    url = url.rstrip("/")
    for tail in ("/chat/completions", "/embeddings", "/models"):
        if url.endswith(tail):
            return url[: -len(tail)]
    return url


def chat_url(base_url: str) -> str:
    """The chat-completions URL for a base URL (``.../v1`` or the full endpoint)."""
    return _base(base_url) + "/chat/completions"


def embeddings_url(base_url: str) -> str:
    """The embeddings URL for a base URL (``.../v1`` or the full endpoint)."""
    return _base(base_url) + "/embeddings"


def request_key(model: str, payload: Any, *, endpoint: Sequence[str] = (), revision: str | None = None) -> str:
    """The response-cache key: sha256 of the endpoint, model name, revision and request body."""
    text = json.dumps({"endpoint": sorted(_base(u) for u in endpoint), "model": model, "revision": revision or "",
                       "request": payload}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: fall back to the exponential schedule


def _content_text(content: Any) -> str | None:
    """The text of a message ``content``: a string, or the text parts of a list of parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(parts) if parts else None
    return None


@dataclass
class _Endpoint:
    base: str
    in_flight: int = 0
    answered: bool = False
    refused: bool = False
    down_until: float = 0.0
    streams: bool | None = None
    """Whether the server streams chat replies (``None``: not known yet)."""
    progress: float = 0.0
    """When a piece of an answer last arrived from this server (``time.monotonic()``)."""
    waiting: int = 0
    """Attempts sent to this server that have no piece of their answer yet."""
    one_at_a_time: bool = False
    """The server cut a streamed answer off when another request arrived: asked one request at a time."""


@dataclass
class _Job:
    """One request to make: the URL kind, its body, how to read a 200 reply, and its attempts."""

    index: int
    kind: str  # "chat" or "embeddings"
    body: dict[str, Any]
    read: Callable[[Any], Any]
    body_limit: int = 0
    """Largest reply body read (bytes); a longer one is refused."""
    attempt: int = 0
    timeouts: int = 0
    started: float = 0.0


class _Watch:
    """The deadlines of one attempt (see the module docstring, *Deadlines*): ``waiting`` until
    the first piece of its answer arrives, then ``answering``. :meth:`expiry` is when it is
    given up as things stand; the :class:`_Watchdog` ends the attempt then."""

    __slots__ = ("endpoint", "streamed", "timeout", "reading", "cap", "ahead", "started", "first", "last", "sock",
                 "fired", "done", "client", "watchdog")

    def __init__(self, client: OpenAIChatClient, watchdog: _Watchdog, endpoint: _Endpoint, *, streamed: bool,
                 reading: float, cap: float, ahead: int) -> None:
        self.client = client
        self.watchdog = watchdog
        self.endpoint = endpoint
        self.streamed = streamed
        self.timeout = client.timeout
        self.reading = reading
        """Time allowed for reading the input, on top of ``timeout``, before an answer begins."""
        self.cap = cap
        self.started = time.monotonic()
        self.ahead = ahead
        """Other requests in flight to the same server (the most seen while waiting): the ones
        that may be ahead of this one in the server's queue."""
        self.first: float | None = None
        self.last = self.started
        self.sock: Any = None
        self.fired: _Problem | None = None
        self.done = False

    @property
    def bound(self) -> float:
        """The longest a request may wait for its answer, busy server or not: behind the
        requests in flight to its server, each within its cap."""
        return self.started + self.ahead * self.cap + (self.timeout + self.reading if self.streamed else self.cap)

    def expiry(self) -> tuple[float, str]:
        """``(time, which)``: when this attempt is given up, and by which rule."""
        if self.first is None:  # no answer yet: waiting while its server makes progress on others
            self.ahead = max(self.ahead, self.endpoint.in_flight - 1)
            since = max(self.started, self.endpoint.progress)
            wait = since + (self.timeout + self.reading if self.streamed else self.cap)
            return (wait, "wait") if wait <= self.bound else (self.bound, "bound")
        stall, cap = self.last + self.timeout, self.first + self.cap
        return (stall, "stall") if stall <= cap else (cap, "cap")

    def problem(self, which: str) -> _Problem:
        """The reason of an attempt given up by rule ``which`` (all of the one kind :data:`TIMED_OUT`)."""
        if which == "stall":
            detail = f"reply stalled: nothing for {self.timeout:g} s"
        elif which == "wait" and self.streamed:
            detail = f"no reply within {_seconds(self.timeout + self.reading)}"
        elif which == "bound":
            detail = f"no reply within {_seconds(self.bound - self.started)}"
        else:
            detail = (f"not whole within {_seconds(self.cap)}: timeout + {self.client.seconds_per_token:g} s per "
                      "token of its answer budget and input")
        return _Problem(f"{TIMED_OUT} ({detail})", retryable=True, timeout=True, kind=TIMED_OUT)

    def arrived(self) -> None:
        """A piece of the answer arrived (a streamed event, bytes of a body)."""
        now = time.monotonic()
        self.last = now
        self.endpoint.progress = now
        if self.first is None:
            self.first = now
            self.client._answering(self.endpoint)
            self.watchdog.arm(self)  # answering: its expiry may now be closer than when it waited


class _Watchdog:
    """Ends the attempts whose time is up: one thread per batch keeps each attempt at the time
    its :meth:`_Watch.expiry` says, checks it again then (progress moves it later) and shuts
    down the socket of one that expired (a blocked read then fails at once)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, _Watch]] = []
        self._count = 0
        self._stopped = False
        self._thread = threading.Thread(target=self._loop, daemon=True, name="chemassay-deadlines")
        self._thread.start()

    def arm(self, watch: _Watch) -> None:
        """Watch ``watch`` (again: after a change that may bring its expiry closer)."""
        with self._cond:
            self._count += 1
            heapq.heappush(self._heap, (watch.expiry()[0], self._count, watch))
            if self._heap[0][2] is watch:
                self._cond.notify()

    @staticmethod
    def disarm(watch: _Watch) -> None:
        watch.done = True

    def _loop(self) -> None:
        with self._cond:
            while not self._stopped:
                if not self._heap:
                    self._cond.wait()
                    continue
                when, _, watch = self._heap[0]
                wait = when - time.monotonic()
                if wait > 0:
                    self._cond.wait(wait)
                    continue
                heapq.heappop(self._heap)
                if watch.done or watch.fired is not None:
                    continue
                expiry, which = watch.expiry()
                if expiry > time.monotonic():  # progress moved it
                    self._count += 1
                    heapq.heappush(self._heap, (expiry, self._count, watch))
                    continue
                watch.fired = watch.problem(which)
                if watch.sock is not None:
                    try:
                        watch.sock.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass  # already closed: nothing to end

    def close(self) -> None:
        """Stop watching; the attempts still in flight (a batch that ended early) are ended now,
        so their servers stop generating answers nobody waits for."""
        with self._cond:
            self._stopped = True
            for _, _, watch in self._heap:
                if not watch.done and watch.fired is None:
                    watch.fired = _Problem("the batch stopped", retryable=False)
                    if watch.sock is not None:
                        with contextlib.suppress(OSError):  # already closed by its worker
                            watch.sock.shutdown(socket.SHUT_RDWR)
            self._heap.clear()
            self._cond.notify()


def _seconds(value: float) -> str:
    """``0.6 s``, ``37 s``: tenths below 10 s."""
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"


class _Run:
    """One batch of requests: ``concurrency`` worker threads take the jobs that are ready; a job
    waiting to retry is back in the queue with the time it may go again, so it holds no worker."""

    def __init__(self, client: OpenAIChatClient, concurrency: int, jobs: list[_Job]) -> None:
        self.client = client
        self.cond = threading.Condition()
        self.queue: list[tuple[float, int, _Job]] = [(0.0, job.index, job) for job in jobs]
        self.results: queue.SimpleQueue = queue.SimpleQueue()
        self.stop = False
        self.watchdog = _Watchdog()
        self.total = len(jobs)
        self.new = 0
        self.failed = 0
        self.asking: dict[int, _Job] = {}
        """Jobs with an attempt in flight."""
        self.waiting: dict[int, _Job] = {}
        """Jobs waiting out their backoff before the next attempt."""
        self.last_problem: str | None = None
        self.started = time.perf_counter()
        self.writes: list[tuple[str, Any]] = []
        self.flushed = time.monotonic()
        self.workers = [threading.Thread(target=self._work, daemon=True, name="chemassay-request")
                        for _ in range(max(1, min(concurrency, len(jobs))))]
        for worker in self.workers:
            worker.start()

    def _next(self) -> _Job | None:
        with self.cond:
            while not self.stop:
                if not self.queue:
                    self.cond.wait()
                    continue
                wait = self.queue[0][0] - time.monotonic()
                if wait <= 0:
                    job = heapq.heappop(self.queue)[2]
                    self.waiting.pop(job.index, None)
                    self.asking[job.index] = job
                    return job
                self.cond.wait(wait)
            return None

    def _work(self) -> None:
        http = self.client._http()
        try:
            while (job := self._next()) is not None:
                try:
                    outcome = self.client._ask_once(self, job, http)
                except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread, never lost
                    outcome = exc
                if outcome is None:  # to be retried: back in the queue; this worker takes another job
                    continue
                with self.cond:
                    self.asking.pop(job.index, None)
                self.results.put((job, outcome))
        finally:
            self.client._give_back(http)

    def retry_later(self, job: _Job, seconds: float, reason: str) -> None:
        with self.cond:
            self.asking.pop(job.index, None)
            self.waiting[job.index] = job
            self.last_problem = reason
            heapq.heappush(self.queue, (time.monotonic() + seconds, job.index, job))
            self.cond.notify()

    def progress_line(self, label: str, final: bool = False) -> str:
        """``LABEL: 12/40 requests answered, 1 failed, 4 in flight (oldest 37 s), 2 waiting to
        retry (last: HTTP 503); 45 s``: where the batch stands, for the progress lines."""
        now = time.perf_counter()
        with self.cond:
            asking, waiting = len(self.asking), len(self.waiting)
            starts = [job.started for job in (*self.asking.values(), *self.waiting.values()) if job.started]
            last = self.last_problem
        text = f"{label}: {self.new}/{self.total} requests answered, {self.failed} failed"
        if not final:
            text += f", {asking} in flight"
            if starts:
                text += f" (oldest {_seconds(now - min(starts))})"
            if waiting:
                text += f", {waiting} waiting to retry"
            if last:
                text += f" (last problem: {last})"
        return text + f"; {_seconds(now - self.started)}" + (" (done)" if final else "")

    def put(self, key: str | None, value: Any) -> None:
        if key is not None and self.client.cache is not None:
            self.writes.append((key, value))

    def flush(self, force: bool = False) -> None:
        """Write the pending answers in one transaction, at most every ``CACHE_FLUSH_SECONDS``."""
        now = time.monotonic()
        if self.writes and (force or len(self.writes) >= 256 or now - self.flushed >= CACHE_FLUSH_SECONDS):
            writes, self.writes = self.writes, []
            self.client.cache.put_many(writes)
            self.flushed = now

    def close(self, finished: bool) -> None:
        """Stop the workers. After a complete batch they are idle and are waited for; otherwise the
        attempts in flight are ended (their connections closed) and dropped."""
        with self.cond:
            self.stop = True
            self.cond.notify_all()
        self.watchdog.close()
        if finished:
            for worker in self.workers:
                worker.join()


@dataclass
class OpenAIChatClient:
    """Chat completions and embeddings of one model on OpenAI-compatible servers.

    ``base_url`` is one base URL, several joined by ``|`` or a list (replicas of the same
    model). ``params`` are extra body fields sent with every request (``temperature``,
    ``max_tokens``, ``top_p``, ``seed``...). ``sleep``, when given, is called with each wait
    between attempts instead of waiting (a hook to observe the schedule). See the module
    docstring for the failure contract.
    """

    base_url: str | Sequence[str]
    model: str
    api_key: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    max_retries: int = 5
    backoff: float = 1.0
    max_backoff: float = 60.0
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES
    params: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    sleep: Callable[[float], None] | None = None
    cache: Any = None
    """A :class:`~chemassay.runtime.cache.KeyValueStore` of answers (``None``: no cache)."""
    refresh: bool = False
    """Ask again even when the cache holds an answer (and overwrite it)."""
    revision: str | None = None
    """The model revision for the cache key (``None``: ask the server's ``/models``)."""
    stream: bool = True
    """Stream chat replies where the server does (``False``: never ask it to)."""
    pooling: str | None = None
    """How a per-token embeddings reply is pooled: ``mean``, ``last`` or ``None`` (refused)."""
    max_dimension: int = DEFAULT_MAX_DIMENSION
    """Longest embedding taken; the bound on an embeddings reply scales with it."""
    progress_interval: float | None = None
    """Seconds between the progress lines of a batch (``None``: :func:`~chemassay.runtime.progress.progress_interval`)."""
    seconds_per_token: float = DEFAULT_SECONDS_PER_TOKEN
    """Time allowed per answer token (``max_tokens``) on top of ``timeout``: the cap on a whole reply."""

    def __post_init__(self) -> None:
        if self.seconds_per_token < 0 or self.timeout <= 0:
            raise UserInputError("timeout must be above 0 and seconds_per_token at least 0")
        if self.pooling is not None and self.pooling not in POOLINGS:
            raise UserInputError(f"pooling must be one of {', '.join(POOLINGS)}, got {self.pooling!r}")
        self._httpx = require("httpx", "llm", "OpenAI-compatible endpoints")
        self.base_urls = [_base(u) for u in split_base_urls(self.base_url)]
        self.endpoints = [_Endpoint(u, one_at_a_time=u in _ONE_AT_A_TIME) for u in self.base_urls]
        self.url = chat_url(self.base_urls[0])
        self.embed_url = embeddings_url(self.base_urls[0])
        self.stats = RequestStats(self.base_urls)
        self._lock = threading.Lock()
        self._slots = threading.Condition(self._lock)
        self._free: list[Any] = []
        self._verify: Any = None
        self._turn = 0
        self._revision: str | None = self.revision
        self._revision_known = self.revision is not None
        self._vector_per_input = self.pooling is not None
        """Whether the embeddings endpoint is known to send one vector per input (or
        ``pooling`` makes a per-token reply usable): until then one input is sent first."""

    # ------------------------------------------------------------------ public API
    def close(self) -> None:
        """Close the idle connections (a later request opens new ones)."""
        with self._lock:
            free, self._free = self._free, []
        for http in free:
            http.close()

    def __enter__(self) -> OpenAIChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def endpoint_label(self) -> str:
        """The base URL(s), as named in messages."""
        return "|".join(self.base_urls)

    def wait_time(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None:
            return min(self.max_backoff, retry_after)
        return min(self.max_backoff, self.backoff * (2 ** (attempt - 1)))

    def complete(self, messages: Sequence[Message], **params: Any) -> ChatResponse:
        """One chat completion (with retries); raises :class:`ChatError` on failure.

        With a cache, an answer stored for the same request is returned without asking
        (``attempts == 0``).
        """
        outcome = self.complete_many([messages], concurrency=1, params=[params])[0]
        if isinstance(outcome, ChatError):
            raise outcome
        return outcome

    def request_bodies(self, conversations: Sequence[Sequence[Message]],
                       params: Sequence[Mapping[str, Any]] | None = None
                       ) -> tuple[list[dict[str, Any]], list[str | None], dict[str, Any]]:
        """The request body of each conversation, its response-cache key (``None`` without a
        cache) and the stored answers found under those keys (the direct path and the Batch
        API share them)."""
        if params is not None and len(params) != len(conversations):
            raise ValueError("params must give one mapping per conversation")
        bodies = [{"model": self.model, "messages": list(messages), **self.params,
                   **(dict(params[index]) if params is not None else {})}
                  for index, messages in enumerate(conversations)]
        keys: list[str | None] = [None] * len(bodies)
        if self.cache is not None:
            self._ensure_revision()
            keys = [self._key({k: v for k, v in body.items() if k != "model"}) for body in bodies]
        stored = self.cache.get_many([k for k in keys if k]) if self.cache is not None and not self.refresh else {}
        return bodies, keys, stored

    def complete_many(
        self,
        conversations: Sequence[Sequence[Message]],
        *,
        concurrency: int = 4,
        on_result: Callable[[int, ChatResponse | ChatError], None] | None = None,
        params: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[ChatResponse | ChatError]:
        """Run many completions, ``concurrency`` at a time; outcomes in input order.

        ``on_result(index, outcome)`` is called in the calling thread as each outcome is known
        (cached answers first), one at a time: results can be saved before the whole batch is
        done. ``params`` gives per-request body fields (a seed per sampling request, say). An
        unreachable endpoint raises :class:`EndpointUnreachable`, a run in which nearly every
        request fails :class:`EndpointFailing`.
        """
        bodies, keys, stored = self.request_bodies(conversations, params)
        outcomes: list[Any] = [None] * len(bodies)
        jobs = []
        for index, body in enumerate(bodies):
            value = stored.get(keys[index]) if keys[index] else None
            if isinstance(value, dict) and isinstance(value.get("text"), str):
                outcomes[index] = ChatResponse(
                    text=value["text"], model=value.get("model"), finish_reason=value.get("finish_reason"),
                    usage=value.get("usage"), attempts=0, reasoning=value.get("reasoning"),
                    system_fingerprint=value.get("system_fingerprint"), from_cache=True)
                self.stats.answered_from_cache()
                if on_result is not None:
                    on_result(index, outcomes[index])
            else:
                jobs.append(_Job(index, "chat", body, self._read_chat, body_limit=self.chat_body_limit))

        def done(run: _Run, job: _Job, outcome: Any) -> None:
            if isinstance(outcome, ChatResponse):  # the whole reply, streamed or not (the key does not say)
                run.put(keys[job.index], {
                    "text": outcome.text, "model": outcome.model, "finish_reason": outcome.finish_reason,
                    "usage": outcome.usage, "reasoning": outcome.reasoning,
                    "system_fingerprint": outcome.system_fingerprint})
            outcomes[job.index] = outcome
            if on_result is not None:
                on_result(job.index, outcome)

        self._execute(jobs, concurrency, done)
        return outcomes

    @property
    def chat_body_limit(self) -> int:
        """Largest chat reply body read: the answer, its reasoning and JSON escapes."""
        return REASONING_FACTOR * self.max_answer_bytes + 65536

    def embeddings_body_limit(self, texts: Sequence[str]) -> int:
        """Largest embeddings reply read for ``texts``: ``max_dimension`` numbers of
        :data:`NUMBER_BYTES` per vector, one vector per text, or, with ``pooling``, one per
        token (at most the text's UTF-8 bytes + 16), plus 64 KiB."""
        vectors = len(texts) if self.pooling is None else sum(len(t.encode("utf-8")) + 16 for t in texts)
        return vectors * self.max_dimension * NUMBER_BYTES + 65536

    def embed(self, texts: Sequence[str], *, batch_size: int = 64, concurrency: int = 4,
              **params: Any) -> list[list[float] | ChatError]:
        """Embeddings of ``texts`` from ``/embeddings`` (cached per text), in input order.

        Each entry is a vector, or the :class:`ChatError` of the request that should have
        given it. Batches of ``batch_size`` texts go ``concurrency`` at a time. A reply of one
        vector per token is pooled as ``pooling`` says, and refused without it
        (:class:`EndpointMisconfigured`).
        """
        texts = list(texts)
        batch_size = max(1, batch_size)
        vectors: list[Any] = [None] * len(texts)
        keys: list[str | None] = [None] * len(texts)
        if self.cache is not None:
            self._ensure_revision()
            pooled = {"pooling": self.pooling} if self.pooling else {}
            keys = [self._key({"embeddings": text, **params, **pooled}) for text in texts]
        stored = self.cache.get_many(sorted({k for k in keys if k})) if self.cache is not None and not self.refresh else {}
        todo = []
        for index in range(len(texts)):
            value = stored.get(keys[index]) if keys[index] else None
            if isinstance(value, list):
                vectors[index] = value
                self.stats.answered_from_cache()
            else:
                todo.append(index)
        # Until the endpoint is known to send one vector per input, the first input goes alone:
        # a server sending one vector per token without pooling= (llama.cpp's without --pooling)
        # is then told in one short request, not after embedding a whole batch token by token.
        probe = not self._vector_per_input and len(todo) > 1 and batch_size > 1
        chunks = [todo[:1]] if probe else []
        rest = todo[len(chunks):]
        chunks += [rest[start:start + batch_size] for start in range(0, len(rest), batch_size)]
        jobs = []
        for number, chunk in enumerate(chunks):
            inputs = [texts[i] for i in chunk]
            jobs.append(_Job(number, "embeddings", {"model": self.model, "input": inputs, **params},
                             self._read_embeddings, body_limit=self.embeddings_body_limit(inputs)))

        def done(run: _Run, job: _Job, outcome: Any) -> None:
            for position, index in enumerate(chunks[job.index]):
                if isinstance(outcome, ChatError):
                    vectors[index] = outcome
                else:
                    vectors[index] = outcome[position]
                    run.put(keys[index], outcome[position])

        per_job = [len(c) for c in chunks]
        if probe:
            self._execute(jobs[:1], 1, done, per_job=per_job)
            jobs = jobs[1:]
        if jobs:
            self._execute(jobs, concurrency, done, per_job=per_job)
        if vectors and all(isinstance(v, list) for v in vectors):
            self._vector_per_input = True
        return vectors

    # ------------------------------------------------------------------ batches
    def _http(self) -> Any:
        """An HTTP client for one worker thread, from this client's free list (so kept-alive
        connections are reused across batches). One client per worker, each with one
        connection per replica: httpx's pool scans all its connections for every request, which
        costs more than the request itself with dozens of connections in one pool."""
        with self._lock:
            if self._free:
                return self._free.pop()
            if self._verify is None:
                # certificates are loaded once, and only for https endpoints (~70 ms each time)
                https = any(url.startswith("https://") for url in self.base_urls)
                self._verify = self._httpx.create_ssl_context() if https else False
        httpx = self._httpx
        headers = {"Content-Type": "application/json", **self.headers}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        size = len(self.endpoints) + 1
        http = httpx.Client(headers=headers, timeout=httpx.Timeout(self.timeout), verify=self._verify,
                            limits=httpx.Limits(max_connections=size, max_keepalive_connections=size))
        http.chemassay_sockets = {}  # base URL -> the socket of its connection (for the watchdog)
        return http

    def _give_back(self, http: Any) -> None:
        with self._lock:
            self._free.append(http)

    def _key(self, payload: Any) -> str:
        return request_key(self.model, payload, endpoint=self.base_urls, revision=self._revision)

    def _execute(self, jobs: list[_Job], concurrency: int, done: Callable[[_Run, _Job, Any], None],
                 per_job: list[int] | None = None) -> None:
        """Ask every job, ``done(run, job, outcome)`` in this thread as each ends; stop early
        when nearly all fail."""
        if not jobs:
            return
        run = _Run(self, concurrency, jobs)
        interval = progress_interval() if self.progress_interval is None else self.progress_interval
        label = f"{self.model} at {self.endpoint_label}"
        reported = time.perf_counter()
        spoke = False
        finished = False
        try:
            for _ in range(len(jobs)):
                while True:
                    if time.perf_counter() - reported >= interval:  # never silent while requests are slow
                        info(run.progress_line(label))
                        reported, spoke = time.perf_counter(), True
                    try:
                        job, outcome = run.results.get(timeout=CACHE_FLUSH_SECONDS)
                        break
                    except queue.Empty:  # nothing new: write what is pending, so a kill loses little
                        run.flush()
                if isinstance(outcome, UserInputError) or (  # unreachable or misconfigured: the run ends
                        isinstance(outcome, BaseException) and not isinstance(outcome, ChatError)):
                    raise outcome
                count = per_job[job.index] if per_job is not None else 1
                if isinstance(outcome, ChatError):
                    run.failed += 1
                    self.stats.failed_for_good(outcome.kind, count, cut_off=outcome.cut_off)
                else:
                    run.new += 1
                    self.stats.answered_new(count)
                done(run, job, outcome)
                run.flush()
                if isinstance(outcome, ChatError) and run.failed >= STOP_MIN_FAILURES \
                        and run.failed >= STOP_RATE * (run.failed + run.new):
                    raise self._failing(run)
            finished = True
        finally:
            run.close(finished)
            if self.cache is not None:
                run.flush(force=True)
            if spoke and finished:
                info(run.progress_line(label, final=True))

    def _failing(self, run: _Run) -> EndpointFailing:
        common = self.stats.reasons.most_common(1)
        reason = common[0][0] if common else "unknown"
        kept = "are cached: run again to resume" if self.cache is not None else "were not cached (cache=false)"
        return EndpointFailing(
            f"{self.endpoint_label}: stopped early, {run.failed} of {run.failed + run.new} requests failed for good "
            f"(most common: {reason}); the {run.new} answers received {kept}", kind="stopped early")

    # ------------------------------------------------------------------ one request
    def _ask_once(self, run: _Run, job: _Job, http: Any) -> Any:
        """One attempt of ``job``: its value, a :class:`ChatError` when it failed for good, or
        ``None`` when it waits to be asked again (queued with its backoff, holding no worker)."""
        if job.attempt == 0:
            job.started = time.perf_counter()
        job.attempt += 1
        try:
            value = self._attempt(run, job, http)
        except _Problem as problem:
            job.timeouts += problem.timeout
            if not problem.retryable or job.attempt > self.max_retries or job.timeouts >= 2:
                reason, kind = problem.reason, problem.kind
                if problem.retryable and job.attempt > 1:
                    reason, kind = f"{reason} after {job.attempt} attempts", f"{kind} after {job.attempt} attempts"
                return ChatError(reason, status=problem.status, attempts=job.attempt, retryable=problem.retryable,
                                 kind=kind, cut_off=problem.cut_off, partial=problem.partial)
            wait = self.wait_time(job.attempt, problem.retry_after)
            if self.sleep is not None:
                self.sleep(wait)
                wait = 0.0
            run.retry_later(job, wait, problem.reason)
            return None
        if isinstance(value, ChatResponse):
            value.attempts = job.attempt
            value.elapsed_s = time.perf_counter() - job.started
        return value

    def _pick(self, run: _Run) -> _Endpoint | None:
        """The replica for the next attempt: the one with the fewest requests in flight (ties in
        turn). A server asked one request at a time is waited for while it is busy; ``None``:
        the batch stopped meanwhile."""
        with self._slots:
            while True:
                now = time.monotonic()
                usable = [e for e in self.endpoints if e.down_until <= now] or self.endpoints
                free = [e for e in usable if not (e.one_at_a_time and e.in_flight)]
                if free:
                    break
                if run.stop:
                    return None
                self._slots.wait(0.5)
            self._turn += 1
            count = len(self.endpoints)
            chosen = min(free, key=lambda e: (e.in_flight, (self.endpoints.index(e) - self._turn) % count))
            chosen.in_flight += 1
            return chosen

    def _attempt(self, run: _Run, job: _Job, http: Any) -> Any:
        endpoint = self._pick(run)
        if endpoint is None:
            raise _Problem("the batch stopped", retryable=False)
        try:
            stream = job.kind == "chat" and self.stream and endpoint.streams is not False
            try:
                return self._post(run, job, http, endpoint, stream=stream)
            except _StreamRefused:  # asked again at once, without stream; if that works, never stream there
                value = self._post(run, job, http, endpoint, stream=False)
                endpoint.streams = False
                return value
        finally:
            with self._slots:
                endpoint.in_flight -= 1
                self._slots.notify_all()

    def time_allowed(self, kind: str, body: Mapping[str, Any]) -> tuple[float, float]:
        """``(reading, cap)`` of a request: ``seconds_per_token`` per token of its input (its
        UTF-8 bytes over :data:`PROMPT_BYTES_PER_TOKEN`), and the cap on one attempt once its
        server is on it: ``timeout`` + ``seconds_per_token`` per token of its answer budget
        (``max_tokens``, else :data:`DEFAULT_ANSWER_TOKENS`; none for embeddings) and input."""
        if kind == "embeddings":
            texts = body.get("input") or []
            size = sum(len(str(text).encode("utf-8")) for text in (texts if isinstance(texts, list) else [texts]))
            answer = 0.0
        else:
            size = sum(len(text.encode("utf-8")) for message in body.get("messages") or ()
                       if isinstance(message, Mapping) and (text := _content_text(message.get("content"))))
            budget = body.get("max_completion_tokens") or body.get("max_tokens")
            answer = budget if isinstance(budget, (int, float)) and budget > 0 else DEFAULT_ANSWER_TOKENS
        reading = self.seconds_per_token * size / PROMPT_BYTES_PER_TOKEN
        return reading, self.timeout + reading + self.seconds_per_token * answer

    def _answering(self, endpoint: _Endpoint) -> None:
        """An attempt to ``endpoint`` got the first piece of its answer: it no longer waits."""
        with self._lock:
            endpoint.waiting -= 1

    def _cut_off_by_server(self, endpoint: _Endpoint) -> None:
        """A streamed answer ended before it was whole while other requests to the same server
        waited for theirs: a server that serves one request at a time and drops the running one
        for a newcomer (llama-cpp-python's server does, by default). It is asked one request at a
        time from then on (the cut answer is asked again)."""
        with self._lock:
            if endpoint.one_at_a_time or endpoint.waiting <= 0:
                return
            endpoint.one_at_a_time = True
            _ONE_AT_A_TIME.add(endpoint.base)
        info(f"{endpoint.base}: a streamed answer was cut off when another request arrived: the server answers "
             "one request at a time; asking it one at a time from now on")

    def _post(self, run: _Run, job: _Job, http: Any, endpoint: _Endpoint, *, stream: bool) -> Any:
        """One POST of ``job`` to ``endpoint`` (streamed when ``stream``): its value, or a
        :class:`_Problem`."""
        httpx = self._httpx
        url = (chat_url if job.kind == "chat" else embeddings_url)(endpoint.base)
        body = {**job.body, "stream": True, "stream_options": {"include_usage": True}} if stream else job.body
        with self._lock:
            ahead = endpoint.in_flight - 1
            endpoint.waiting += 1
        reading, cap = self.time_allowed(job.kind, job.body)
        watch = _Watch(self, run.watchdog, endpoint, streamed=stream, reading=reading, cap=cap, ahead=ahead)
        sockets = http.chemassay_sockets
        watch.sock = sockets.get(endpoint.base)  # the kept-alive connection, if any

        def trace(event: str, details: Mapping[str, Any]) -> None:
            if event == "connection.connect_tcp.complete":  # a new connection: the socket to watch
                opened = details.get("return_value")
                sock = opened.get_extra_info("socket") if opened is not None else None
                if sock is not None:
                    watch.sock = sockets[endpoint.base] = sock

        # a blocked read is ended by the watchdog (it shuts the socket down); the read time-out
        # is only a last resort, past the longest the request may wait behind every other worker
        last_resort = self.timeout + reading + len(run.workers) * cap + cap
        limits = httpx.Timeout(self.timeout, read=last_resort)
        run.watchdog.arm(watch)
        data: dict[str, Any] | None = None
        events = False
        try:
            # Leaving this block before the reply is whole (a deadline, an answer over the cap)
            # closes the connection: a server streaming its answer then stops generating it.
            with http.stream("POST", url, json=body, timeout=limits, extensions={"trace": trace}) as response:
                network = response.extensions.get("network_stream")
                sock = network.get_extra_info("socket") if network is not None else None
                if sock is not None:
                    watch.sock = sockets[endpoint.base] = sock
                status, headers = response.status_code, response.headers
                if status == 200 and "text/event-stream" in headers.get("content-type", ""):
                    events = True
                    data = self._read_events(response.iter_bytes(), job.body_limit, watch)
                else:
                    watch.arrived()  # a reply not streamed comes whole: its server is done with it
                    content = self._read_body(response, job, watch)
                    if stream and status in STREAM_REFUSED and endpoint.streams is None \
                            and b"stream" in content[:4096].lower():
                        raise _StreamRefused()
        except httpx.ConnectTimeout:
            raise _Problem(f"connection timed out ({self.timeout:g} s)", retryable=True, timeout=True,
                           kind="connection timed out") from None
        except httpx.TimeoutException:
            raise watch.fired or watch.problem("bound") from None
        except httpx.ConnectError as exc:
            with self._lock:
                first = not endpoint.answered
                if first:
                    endpoint.refused = True
                endpoint.down_until = time.monotonic() + 5.0  # send the next requests to the other replicas
                unreachable = first and all(e.refused and not e.answered for e in self.endpoints)
            if unreachable:
                raise self._unreachable(endpoint, exc) from None
            raise _Problem(f"connection failed ({type(exc).__name__})", retryable=True) from None
        except httpx.TransportError as exc:
            if watch.fired is not None:
                raise watch.fired from None
            if stream and watch.first is not None:  # the stream broke off mid-answer
                self._cut_off_by_server(endpoint)
            raise _Problem(f"connection lost ({type(exc).__name__})", retryable=True) from None
        except _Problem as problem:
            if watch.fired is not None:
                raise watch.fired from None
            if problem.kind == STREAM_ENDED:
                self._cut_off_by_server(endpoint)
            raise
        finally:
            run.watchdog.disarm(watch)
            if watch.first is None:
                self._answering(endpoint)  # no longer waiting: given up
        if watch.fired is not None:
            raise watch.fired
        endpoint.answered = True
        if data is None:
            if status != 200:
                snippet = content[:300].decode("utf-8", "replace").replace("\n", " ")
                if status in RETRY_STATUSES:
                    raise _Problem(f"HTTP {status}", retryable=True, status=status, retry_after=_retry_after(headers))
                raise _Problem(f"HTTP {status}: {snippet}", retryable=False, status=status, kind=f"HTTP {status}")
            if content.lstrip().startswith(b"data:"):  # events without their content type
                events = True
                data = self._read_events([content], job.body_limit)
            else:
                if stream:  # asked to stream, the server answered one body: it does not stream
                    endpoint.streams = False
                try:
                    data = json.loads(content)
                except (ValueError, RecursionError):
                    raise _Problem("reply is not JSON", retryable=True, status=200) from None
                if not isinstance(data, dict):
                    raise _Problem("reply is not a JSON object", retryable=True, status=200)
        if events:
            endpoint.streams = True
        self.stats.add_usage(data.get("usage"))
        value = job.read(data)
        if events and isinstance(value, ChatResponse):
            value.streamed = True
        return value

    def _read_body(self, response: Any, job: _Job, watch: _Watch) -> bytes:
        """The whole body of a reply that is not streamed, up to the job's ``body_limit``."""
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            watch.arrived()
            size += len(chunk)
            if size > job.body_limit:
                if job.kind == "embeddings":
                    raise self._embeddings_too_large(job, b"".join([*chunks[:16], chunk])[:65536])
                cap = f"answer over {self.max_answer_bytes} bytes"
                raise _Problem(f"{cap} (a reply of more than {job.body_limit} bytes)", retryable=False, kind=cap)
            chunks.append(chunk)
        return b"".join(chunks)

    def _embeddings_too_large(self, job: _Job, head: bytes) -> Exception:
        """The reason an embeddings reply over its bound is refused: per-token vectors (the
        ``head`` of the reply shows a list of lists: the setting to change), else the bound."""
        if self.pooling is None and re.search(rb'"embedding"\s*:\s*\[\s*\[', head):
            return self._per_token(None)
        count = len(job.body.get("input") or [])
        bound = f"embeddings reply over {job.body_limit} bytes"
        return _Problem(f"{bound} ({count} input{'s' if count != 1 else ''} of at most max_dimension="
                        f"{self.max_dimension} numbers)", retryable=False, status=200, kind=bound)

    def _per_token(self, shape: tuple[int, int] | None) -> EndpointMisconfigured:
        got = f" ({shape[0]} vectors of {shape[1]} numbers for one input)" if shape else ""
        return EndpointMisconfigured(
            f"{self.endpoint_label}: the embeddings endpoint returns one vector per token{got}, not one per input; "
            f"start the server with pooling (llama.cpp: llama-server --embeddings --pooling mean) or add "
            f"pooling=mean (or pooling=last) to the model spec", kind="one vector per token")

    def _read_events(self, chunks: Any, line_limit: int, watch: _Watch | None = None) -> dict[str, Any]:
        """A streamed chat reply (server-sent events: ``data: {chunk}`` lines, then ``data:
        [DONE]``) put together as the body a non-streamed reply would have had. The answer is
        checked against ``max_answer_bytes`` as it arrives: a longer one is refused at once
        (and the connection closed, which stops the generation)."""
        answer_cap, reasoning_cap = self.max_answer_bytes, REASONING_FACTOR * self.max_answer_bytes
        content: list[str] = []
        reasoning: list[str] = []
        sizes = [0, 0]
        state: dict[str, Any] = {"content": False, "choice": False, "finish": None, "done": False}
        reply: dict[str, Any] = {}
        pending: list[bytes] = []

        def event(payload: bytes) -> None:
            if payload.strip() == b"[DONE]":
                state["done"] = True
                return
            try:
                chunk = json.loads(payload)
            except (ValueError, RecursionError):
                raise _Problem("reply is not JSON", retryable=True, status=200) from None
            if not isinstance(chunk, dict):
                raise _Problem("reply is not a JSON object", retryable=True, status=200)
            if watch is not None:
                watch.arrived()
            if chunk.get("error") is not None:
                error = chunk["error"]
                message = error.get("message") if isinstance(error, dict) else error
                raise _Problem(f"error in the stream: {str(message)[:200]}", retryable=True, status=200,
                               kind="error in the stream")
            for key in ("model", "system_fingerprint", "usage"):
                if chunk.get(key) is not None:
                    reply[key] = chunk[key]
            choices = chunk.get("choices")
            for choice in choices if isinstance(choices, list) else []:
                if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                    continue
                state["choice"] = True
                delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else choice.get("message")
                delta = delta if isinstance(delta, dict) else {}
                text = _content_text(delta.get("content"))
                if text is None and isinstance(choice.get("text"), str):
                    text = choice["text"]
                if text is not None:
                    state["content"] = True
                    content.append(text)
                    sizes[0] += len(text.encode("utf-8"))
                    if sizes[0] > answer_cap:
                        raise _Problem(f"answer over {answer_cap} bytes", retryable=False, status=200)
                thought = delta.get("reasoning_content") or delta.get("reasoning")
                if isinstance(thought, str):
                    reasoning.append(thought)
                    sizes[1] += len(thought.encode("utf-8"))
                    if sizes[1] > reasoning_cap:
                        raise _Problem(f"reasoning over {reasoning_cap} bytes", retryable=False, status=200)
                if choice.get("finish_reason"):
                    state["finish"] = choice["finish_reason"]

        def line(raw: bytes) -> None:
            raw = raw.rstrip(b"\r")
            if not raw:  # the end of an event
                if pending:
                    event(b"\n".join(pending))
                    pending.clear()
            elif raw.startswith(b"data:"):
                value = raw[5:]
                pending.append(value[1:] if value.startswith(b" ") else value)
            # comments (": ping") and the event:, id: and retry: fields carry no answer

        rest = b""
        for chunk in chunks:
            if state["done"]:
                continue  # read to the end, so the connection can serve the next request
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            if len(rest) > line_limit:
                raise _Problem(f"answer over {answer_cap} bytes (an event of more than {line_limit} bytes)",
                               retryable=False, kind=f"answer over {answer_cap} bytes")
            for raw in lines:
                line(raw)
                if state["done"]:
                    break
        if not state["done"]:
            line(rest)
            line(b"")
        if state["finish"] is None and (state["choice"] or not state["done"]):
            # no finish_reason: the server stopped before the answer was whole (closed the
            # connection, or sent [DONE] early, as a server dropping a request for another does)
            raise _Problem(f"{STREAM_ENDED} ({'no finish_reason' if state['done'] else 'connection lost'})",
                           retryable=True, kind=STREAM_ENDED)
        if state["choice"]:
            message: dict[str, Any] = {"role": "assistant", "content": "".join(content) if state["content"] else None}
            if reasoning:
                message["reasoning_content"] = "".join(reasoning)
            reply["choices"] = [{"index": 0, "message": message, "finish_reason": state["finish"]}]
        else:
            reply["choices"] = []
        return reply

    @staticmethod
    def _unreachable(endpoint: _Endpoint, exc: Exception) -> EndpointUnreachable:
        return EndpointUnreachable(f"{endpoint.base}: connection failed ({exc or 'refused'}); is the server running "
                                   "and is the base URL (--base-url, base_url=) right?")

    # ------------------------------------------------------------------ reading replies
    def _read_chat(self, data: dict[str, Any]) -> ChatResponse:
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise _Problem("reply has no choices", retryable=True, status=200)
        choice = choices[0]
        message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
        text = _content_text(message.get("content"))
        if text is None:
            text = choice.get("text") if isinstance(choice.get("text"), str) else None
        finish = choice.get("finish_reason")
        if finish == "length":
            partial = split_reasoning(text)[0] if text else None
            raise _Problem("answer cut off (finish_reason=length)", retryable=False, status=200, cut_off=True,
                           partial=partial or None)
        if text is None:
            raise _Problem("reply has no content", retryable=True, status=200)
        if not text.strip():
            raise _Problem("empty answer", retryable=True, status=200)
        if len(text.encode("utf-8")) > self.max_answer_bytes:
            raise _Problem(f"answer over {self.max_answer_bytes} bytes", retryable=False, status=200)
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        cap = REASONING_FACTOR * self.max_answer_bytes
        if isinstance(reasoning, str) and len(reasoning.encode("utf-8")) > cap:
            raise _Problem(f"reasoning over {cap} bytes", retryable=False, status=200)
        fingerprint = data.get("system_fingerprint")
        return ChatResponse(
            text=text, model=data.get("model") if isinstance(data.get("model"), str) else None,
            finish_reason=finish if isinstance(finish, str) else None,
            usage=data.get("usage") if isinstance(data.get("usage"), dict) else None,
            reasoning=reasoning if isinstance(reasoning, str) else None,
            system_fingerprint=fingerprint if isinstance(fingerprint, str) else None,
        )

    def _read_embeddings(self, data: dict[str, Any]) -> list[list[float]]:
        """The vectors of an embeddings reply, in input order. A reply of one vector per token
        (a list of vectors per input: llama.cpp's server without ``--pooling``) is pooled as
        ``pooling`` says (``mean``: the mean of the token vectors; ``last``: the last one), and
        refused without it."""
        items = data.get("data")
        if not isinstance(items, list) or not items:
            raise _Problem("reply has no embeddings", retryable=True, status=200)
        if not all(isinstance(item, dict) and isinstance(item.get("embedding"), list) and item["embedding"]
                   for item in items):
            raise _Problem("an item of the reply has no embedding", retryable=True, status=200)
        try:
            ordered = sorted(items, key=lambda item: int(item.get("index", 0)))
            vectors = [self._one_vector(item["embedding"]) for item in ordered]
        except (TypeError, ValueError):
            raise _Problem("an embedding holds something other than numbers", retryable=True, status=200) from None
        longest = max(len(vector) for vector in vectors)
        if longest > self.max_dimension:
            raise _Problem(f"embedding of {longest} numbers, over max_dimension={self.max_dimension}",
                           retryable=False, status=200, kind="embedding over max_dimension")
        return vectors

    def _one_vector(self, embedding: list[Any]) -> list[float]:
        """One input's vector: the numbers, or its token vectors pooled (see :meth:`_read_embeddings`)."""
        if not isinstance(embedding[0], list):
            return [float(x) for x in embedding]
        tokens = np.asarray(embedding, dtype=np.float64)  # ValueError: ragged or not numbers
        if tokens.ndim != 2 or not tokens.size:
            raise ValueError("not one vector per token")
        if self.pooling is None:
            raise self._per_token(tokens.shape)
        return (tokens[-1] if self.pooling == "last" else tokens.mean(axis=0)).tolist()

    def _ensure_revision(self) -> None:
        """Learn the model revision once (``GET /models``'s ``root`` for this model), for the cache key."""
        if self._revision_known:
            return
        found: set[str] = set()
        http = self._http()
        try:
            self._look_up_revision(http, found)
        finally:
            self._give_back(http)
        self._revision = "|".join(sorted(found)) or None
        self._revision_known = True

    def _look_up_revision(self, http: Any, found: set[str]) -> None:
        """Add to ``found`` the ``root`` each replica reports for this model."""
        httpx = self._httpx
        for endpoint in self.endpoints:  # one look-up per replica
            try:
                response = http.get(endpoint.base + "/models", timeout=min(self.timeout, 10.0))
            except httpx.ConnectError as exc:
                if not endpoint.answered:
                    endpoint.refused = True
                    endpoint.down_until = time.monotonic() + 5.0
                    if all(e.refused and not e.answered for e in self.endpoints):
                        raise self._unreachable(endpoint, exc) from None
                continue
            except httpx.TransportError:
                continue  # a slow or odd server: no revision from it
            endpoint.answered = True
            if response.status_code != 200:
                continue
            try:
                entries = response.json().get("data") or []
            except (ValueError, AttributeError):
                continue
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, dict) and entry.get("id") == self.model and isinstance(entry.get("root"), str):
                    found.add(entry["root"])
