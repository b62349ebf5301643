"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks (no mocked client),
with faults to inject.

It answers ``POST /v1/chat/completions`` with the text a ``responder(body)`` function returns,
``POST /v1/embeddings`` with deterministic vectors (hashed character 1- and 2-grams of each
input, so different strings get different vectors and the same string the same one) and
``GET /v1/models`` with ``model_roots`` (model name → the ``root`` vLLM reports: the served
checkpoint). Every POST body is recorded in ``server.requests``.

**Streaming**: a chat request with ``"stream": true`` is answered with server-sent events
(``data: {chunk}`` with ``delta`` pieces of ``stream_chunk_chars`` characters every
``stream_interval`` seconds, the usage when ``stream_options.include_usage`` asks, then
``data: [DONE]``), as vLLM does; ``streaming = False`` answers it with one JSON body (a server
that ignores ``stream``) and ``refuse_stream = True`` with HTTP 400 (one that refuses it).
``streamed`` counts the replies streamed, ``generating`` the generations in progress and
``cancelled`` those a closed connection stopped (a streaming server stops generating when the
client goes away; a non-streamed generation runs to its end).

**Reasoning**: ``reasoning = "content"`` sends ``reasoning_text`` as the message's
``reasoning_content`` (streamed as ``delta.reasoning_content``), ``"think"`` as a
``<think>`` block before the answer; both report ``usage.completion_tokens_details.reasoning_tokens``.

**Embeddings**: ``embedding_dim`` numbers per vector (32), plus deterministic noise of
``embedding_noise`` (dense vectors of realistic size: about 20 bytes of JSON per number);
``per_token = True`` answers one vector per character of each input (a list of vectors per
input, as llama.cpp's server without ``--pooling``).

The default responder plays a chemist who knows a few things:

* a reaction prompt → the reactants' largest molecule, as a bare SMILES line, then a
  second guess;
* a bag prompt → ``{1}`` plus the last species of the input;
* a generation prompt → ``n`` SMILES chosen by the request's seed from a fixed list
  (numbered, to exercise the parser);
* anything else (a mechanism prompt) → a JSON mechanism of one step.

**Faults** (set the attributes at any time): ``latency`` seconds before every answer;
``fault`` one of :data:`FAULTS`, given to the requests ``fault_filter(body)`` selects (all when
``None``), at most ``fault_times`` times (every time when ``None``); ``fault_rate`` a random
share of requests that get a transient fault (429, 500 or a reset) from ``rng``.
``retry_after`` is sent with 429 and 503 answers. The server is one asyncio loop on a thread
(HTTP/1.1 with keep-alive), so it serves hundreds of requests a second.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import socket
import struct
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

MOLECULES = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "O=C(O)c1ccccc1", "CC(C)O", "C1CCOC1", "CCOC(C)=O",
             "Cc1ccccc1", "OCCO", "NC(=O)c1ccccc1", "CC#N", "ClCCl", "CC(=O)Nc1ccc(O)cc1", "C1CCNCC1"]

FAULTS = ("http-429", "http-500", "reset", "malformed", "no-choices", "no-content", "empty", "length", "huge",
          "hang", "trickle", "ramble")
"""``http-429``/``http-500``: that status; ``reset``: the connection is reset (TCP RST) without
an answer; ``malformed``: a 200 whose body is not JSON; ``no-choices``: empty ``choices``
(embeddings: empty ``data``); ``no-content``: a message without ``content`` (embeddings: items
without ``embedding``); ``empty``: ``content: ""``; ``length``: ``finish_reason: length``;
``huge``: an answer of ``huge_bytes``; ``hang``: no answer for ``hang_seconds``; ``trickle``:
a whole answer sent one byte every ``trickle_interval`` seconds; ``ramble``: an answer that
never ends (a model rambling to its token limit), a token every ``trickle_interval`` seconds:
streamed when asked (until the connection closes), else generated for ``hang_seconds``
before one body cut off at the length limit is sent (embeddings: as ``hang``)."""


def default_responder(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if "Reactants and reagents (SMILES" in prompt:
        reactants = prompt.split("): ", 1)[1].splitlines()[0].split(".")
        largest = max(reactants, key=len)
        return f"{largest}\n{reactants[0]}"
    if "Complete this chemical reaction" in prompt:
        source = prompt.split("Reactants: ", 1)[1].splitlines()[0]
        species = source.split(".")[-1].split("}", 1)[-1]
        return f"Products: {{1}}{species}"
    match = re.search(r"Write (\d+) different", prompt)
    if match:
        count = int(match.group(1))
        rng = random.Random(body.get("seed", 0))
        return "\n".join(f"{i + 1}. {rng.choice(MOLECULES)}" for i in range(count))
    return json.dumps({"mechanism": [{"step": 1, "type": "proton transfer", "intermediate": "CCO"}]})


def hashed_embedding(text: str, dim: int = 32, noise: float = 0.0) -> list[float]:
    """The server's vector of ``text``: hashed character 1- and 2-grams (over ``dim`` numbers:
    2 bytes of the digest), plus Gaussian noise of ``noise`` seeded by the text."""
    vector = [0.0] * dim
    for n in (1, 2):
        for i in range(len(text) - n + 1):
            digest = hashlib.sha256(text[i:i + n].encode()).digest()
            vector[int.from_bytes(digest[:2], "big") % dim if dim > 256 else digest[0] % dim] += \
                1.0 if digest[2 if dim > 256 else 1] % 2 else -1.0
    if noise:
        rng = random.Random(hashlib.sha256(text.encode()).digest())
        vector = [value + rng.gauss(0.0, noise) for value in vector]
    return vector


def body_share(share: float) -> Callable[[dict[str, Any]], bool]:
    """A ``fault_filter`` selecting a fixed share of request bodies (the same body always
    gets the same answer, so a retried request keeps failing)."""
    def select(body: dict[str, Any]) -> bool:
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).digest()
        return int.from_bytes(digest[:4], "big") % 1000 < share * 1000
    return select


def free_port() -> int:
    """A port nothing listens on (a dead server)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


_REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error",
            501: "Not Implemented", 503: "Service Unavailable"}


class OpenAIServer:
    """Start with ``OpenAIServer()``; ``base_url`` is ``http://127.0.0.1:PORT/v1``; ``close()`` stops it."""

    def __init__(self, responder: Callable[[dict[str, Any]], str] = default_responder, *, refuse_chat: bool = False,
                 latency: float = 0.0, seed: int = 0) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.refuse_chat = refuse_chat
        self.latency = latency
        self.fault: str | None = None
        self.fault_filter: Callable[[dict[str, Any]], bool] | None = None
        self.fault_times: int | None = None
        self.fault_rate = 0.0
        self.rng = random.Random(seed)
        self.retry_after: str | None = None
        self.huge_bytes = 1_000_000
        self.hang_seconds = 60.0
        self.trickle_interval = 0.2
        self.streaming = True
        self.refuse_stream = False
        self.stream_chunk_chars = 4
        self.stream_interval = 0.0
        self.streamed = 0
        self.generating = 0
        self.cancelled = 0
        self.reasoning: str | None = None
        self.reasoning_text = ("The acid chloride could react first.\nCCCCCCCCCC\nProducts: {2}O\n"
                               "1. c1ccccc1CCCCCC\nNo, let me check the balance again.")
        self.embedding_dim = 32
        self.embedding_noise = 0.0
        self.per_token = False
        self.model_roots: dict[str, str] = {}
        self.faulted: Counter[str] = Counter()
        """How often each fault was given."""
        self.faulted_bodies: set[str] = set()
        self.model_lookups = 0
        self.authorizations: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.record = True
        self.capacity: int | None = None
        """Requests worked on at once (``None``: no limit); the others queue, as on a real server."""
        self._capacity_slots: asyncio.Semaphore | None = None
        self.served = 0
        self.answered_bodies: list[str] = []
        """Bodies of the requests answered (200 with a whole answer), in order."""
        self._writers: set[asyncio.StreamWriter] = set()
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self.loop)
            self.server = self.loop.run_until_complete(
                asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=4096))
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        ready.wait()
        self.port = self.server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    # ------------------------------------------------------------------ bookkeeping
    def chat_requests(self) -> list[dict[str, Any]]:
        """The chat-completion request bodies received so far."""
        with self.lock:
            return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def embedding_requests(self) -> list[dict[str, Any]]:
        """The embeddings request bodies received so far."""
        with self.lock:
            return [r for r in self.requests if r["path"].endswith("/embeddings")]

    def clear_faults(self) -> None:
        """No faults from now on (latency stays)."""
        self.fault = None
        self.fault_filter = None
        self.fault_times = None
        self.fault_rate = 0.0

    def close(self) -> None:
        async def stop() -> None:
            self.server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)

    # ------------------------------------------------------------------ HTTP
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        key, value = line.split(":", 1)
                        headers[key.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0") or 0)
                raw = await reader.readexactly(length) if length else b""
                auth = headers.get("authorization")
                if auth is not None:
                    self.authorizations[auth] += 1
                if not await self._handle(method, path, raw, reader, writer):
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        except asyncio.CancelledError:
            pass  # the server is closing: end quietly (a re-raised cancel is logged by asyncio)
        finally:
            self._writers.discard(writer)
            writer.close()

    @staticmethod
    def _head(status: int, length: int, extra: dict[str, str] | None = None) -> bytes:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", "Content-Type: application/json",
                 f"Content-Length: {length}"]
        lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    async def _send(self, writer: asyncio.StreamWriter, status: int, payload: Any,
                    extra: dict[str, str] | None = None) -> bool:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        writer.write(self._head(status, len(data), extra) + data)
        await writer.drain()
        return True

    def _pick_fault(self, body: dict[str, Any]) -> str | None:
        with self.lock:
            if self.fault_rate and self.rng.random() < self.fault_rate:
                return self.rng.choice(("http-429", "http-500", "reset"))
            if self.fault is None or (self.fault_filter is not None and not self.fault_filter(body)):
                return None
            if self.fault_times is not None:
                if self.fault_times <= 0:
                    return None
                self.fault_times -= 1
            self.faulted_bodies.add(json.dumps(body, sort_keys=True))
            return self.fault

    async def _handle(self, method: str, path: str, raw: bytes, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> bool:
        if method == "GET" and path.endswith("/models"):
            self.model_lookups += 1
            data = [{"id": name, "object": "model", "root": root} for name, root in self.model_roots.items()]
            return await self._send(writer, 200, {"object": "list", "data": data})
        if method != "POST":
            return await self._send(writer, 501, {"error": {"message": f"no {method}"}})
        if not path.endswith(("/chat/completions", "/embeddings")):  # as a real server: before reading the body
            return await self._send(writer, 404, {"error": {"message": f"no route {path}"}})
        body = json.loads(raw or b"{}")
        with self.lock:
            if self.record:
                self.requests.append({"path": path, **body})
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.capacity is not None:
                if self._capacity_slots is None:
                    self._capacity_slots = asyncio.Semaphore(self.capacity)
                async with self._capacity_slots:  # a server that works on `capacity` requests at once
                    if self.latency:
                        await asyncio.sleep(self.latency)
            elif self.latency:
                await asyncio.sleep(self.latency)
            embeddings = path.endswith("/embeddings")
            if not embeddings and not (path.endswith("/chat/completions") and not self.refuse_chat):
                return await self._send(writer, 404, {"error": {"message": f"no route {path}"}})
            stream = not embeddings and body.get("stream") is True
            if stream and self.refuse_stream:
                return await self._send(writer, 400, {"error": {"message": "stream is not supported"}})
            stream = stream and self.streaming
            fault = self._pick_fault(body)
            if fault is not None:
                self.faulted[fault] += 1
                return await self._faulty(fault, body, embeddings, stream, reader, writer)
            if embeddings:
                sent = await self._send(writer, 200, self._embeddings(body))
            elif stream:
                sent = await self._stream(reader, writer, body, self.responder(body))
            else:
                sent = await self._send(writer, 200, self._chat(body, self.responder(body)))
            if sent:
                with self.lock:
                    self.served += 1
                    if self.record:
                        self.answered_bodies.append(json.dumps(body, sort_keys=True))
            return sent
        finally:
            with self.lock:
                self.in_flight -= 1

    def _reasoned(self, text: str | None) -> tuple[str | None, str | None]:
        """The content and ``reasoning_content`` of an answer, as ``reasoning`` says."""
        if self.reasoning == "think" and text is not None:
            return f"<think>{self.reasoning_text}</think>\n{text}", None
        return text, self.reasoning_text if self.reasoning == "content" else None

    def _usage(self, body: dict[str, Any], text: str | None, reasoning: str | None) -> dict[str, Any]:
        prompt = body.get("messages", [{}])[-1].get("content") or ""
        usage: dict[str, Any] = {"prompt_tokens": len(prompt.split()),
                                 "completion_tokens": len((text or "").split()) + len((reasoning or "").split())}
        if self.reasoning is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": len(self.reasoning_text.split())}
        return usage

    def _chat(self, body: dict[str, Any], text: str | None, finish: str = "stop", *, content: bool = True) -> dict:
        text, reasoning = self._reasoned(text)
        message: dict[str, Any] = {"role": "assistant"}
        if content:
            message["content"] = text
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        return {"id": "chatcmpl-test", "object": "chat.completion", "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                "usage": self._usage(body, text, reasoning)}

    def _embeddings(self, body: dict[str, Any], *, embedding: bool = True, dim: int | None = None) -> dict:
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        dim = dim or self.embedding_dim

        def vector(text: str) -> list[Any]:
            if self.per_token:  # one vector per "token" (character): the prefixes' vectors
                return [hashed_embedding(text[:end], dim, self.embedding_noise) for end in range(1, len(text) + 1)]
            return hashed_embedding(text, dim, self.embedding_noise)

        data = [{"object": "embedding", "index": i, **({"embedding": vector(t)} if embedding else {})}
                for i, t in enumerate(inputs)]
        return {"object": "list", "data": data, "model": body.get("model"),
                "usage": {"prompt_tokens": sum(len(t) for t in inputs), "total_tokens": sum(len(t) for t in inputs)}}

    # ------------------------------------------------------------------ streaming
    def _events(self, body: dict[str, Any], text: str | None, finish: str = "stop", *, content: bool = True,
                choices: bool = True, piece: int | None = None) -> list[bytes]:
        """The server-sent events of a streamed reply (``data: ...`` lines), ``[DONE]`` included."""
        text, reasoning = self._reasoned(text)
        piece = piece or self.stream_chunk_chars
        base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "model": body.get("model")}

        def delta(fields: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
            return {**base, "choices": [{"index": 0, "delta": fields, "finish_reason": finish_reason}]}

        chunks: list[dict[str, Any]] = []
        if choices:
            chunks.append(delta({"role": "assistant", **({"content": ""} if content and text else {})}))
            for start in range(0, len(reasoning or ""), piece):
                chunks.append(delta({"reasoning_content": reasoning[start:start + piece]}))
            if content:
                pieces = [text[start:start + piece] for start in range(0, len(text or ""), piece)] or [text]
                chunks.extend(delta({"content": part}) for part in pieces)
            chunks.append(delta({}, finish))
        else:
            chunks.append({**base, "choices": []})
        if (body.get("stream_options") or {}).get("include_usage"):
            chunks.append({**base, "choices": [], "usage": self._usage(body, text, reasoning)})
        return [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks] + [b"data: [DONE]\n\n"]

    @staticmethod
    def _gone(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        return reader.at_eof() or writer.transport.is_closing()

    async def _stream(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, body: dict[str, Any],
                      text: str | None, finish: str = "stop", *, events: list[bytes] | None = None,
                      endless: bool = False, byte_interval: float | None = None, **options: Any) -> bool:
        """Send a streamed reply (chunked transfer encoding, one HTTP chunk per event, or per
        byte with ``byte_interval``); ``endless`` streams content pieces until the connection
        closes. A closed connection stops the generation (counted in ``cancelled``)."""
        if events is None and not endless:
            events = self._events(body, text, finish, **options)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        with self.lock:
            self.streamed += 1
            self.generating += 1
        try:
            pieces = iter(events) if not endless else (
                f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': 'CC '}}]})}\n\n".encode()
                for _ in iter(int, 1))
            for event in pieces:
                parts = [event[i:i + 1] for i in range(len(event))] if byte_interval else [event]
                for part in parts:
                    if self._gone(reader, writer):
                        with self.lock:
                            self.cancelled += 1
                        return False
                    writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                    await writer.drain()
                    pause = byte_interval or (self.trickle_interval if endless else self.stream_interval)
                    if pause:
                        await asyncio.sleep(pause)
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        except ConnectionError:
            with self.lock:
                self.cancelled += 1
            return False
        finally:
            with self.lock:
                self.generating -= 1

    async def _faulty(self, fault: str, body: dict[str, Any], embeddings: bool, stream: bool,
                      reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        extra = {"Retry-After": self.retry_after} if self.retry_after is not None else None
        if fault in ("http-429", "http-500"):
            status = int(fault[5:])
            return await self._send(writer, status, {"error": {"message": "try again later"}},
                                    extra if status == 429 else None)
        if fault == "reset":
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if fault == "malformed":
            if stream:
                return await self._stream(reader, writer, body, None,
                                          events=[b'data: {"choices": [{"delta": {"content": "CCO"\n\n', b"data: [DONE]\n\n"])
            return await self._send(writer, 200, b'{"choices": [{"message": {"content": "CCO"')
        if fault == "hang" or (fault == "ramble" and embeddings):
            await asyncio.sleep(self.hang_seconds)
            return False
        if fault == "ramble":
            if stream:
                return await self._stream(reader, writer, body, None, endless=True)
            with self.lock:
                self.generating += 1
            try:  # a generation nobody stops: it runs to its end, whether the client waits or not
                await asyncio.sleep(self.hang_seconds)
            finally:
                with self.lock:
                    self.generating -= 1
            return await self._send(writer, 200, self._chat(body, "CC " * 100, "length"))
        if embeddings:
            if fault == "no-choices":
                return await self._send(writer, 200, {"object": "list", "data": [], "model": body.get("model")})
            if fault == "no-content":
                return await self._send(writer, 200, self._embeddings(body, embedding=False))
            if fault == "huge":
                return await self._send(writer, 200, self._embeddings(body, dim=self.huge_bytes // 4))
            payload = self._embeddings(body)
        elif stream:
            text = self.responder(body)
            if fault == "no-choices":
                return await self._stream(reader, writer, body, text, choices=False)
            if fault == "no-content":
                return await self._stream(reader, writer, body, None, content=False)
            if fault == "empty":
                return await self._stream(reader, writer, body, "")
            if fault == "length":
                return await self._stream(reader, writer, body, text[: max(1, len(text) // 2)], "length")
            if fault == "huge":
                return await self._stream(reader, writer, body, "C" * self.huge_bytes, piece=4096)
            return await self._stream(reader, writer, body, text, byte_interval=self.trickle_interval)
        else:
            text = self.responder(body)
            if fault == "no-choices":
                return await self._send(writer, 200, {**self._chat(body, text), "choices": []})
            if fault == "no-content":
                return await self._send(writer, 200, self._chat(body, None, content=False))
            if fault == "empty":
                return await self._send(writer, 200, self._chat(body, ""))
            if fault == "length":
                return await self._send(writer, 200, self._chat(body, text[: max(1, len(text) // 2)], "length"))
            if fault == "huge":
                return await self._send(writer, 200, self._chat(body, "C" * self.huge_bytes))
            payload = self._chat(body, text)
        # trickle: a whole, valid answer, one byte at a time
        data = json.dumps(payload).encode()
        writer.write(self._head(200, len(data)))
        for index in range(len(data)):
            writer.write(data[index:index + 1])
            await writer.drain()
            await asyncio.sleep(self.trickle_interval)
        return True


def first_bodies(count: int) -> Callable[[dict[str, Any]], bool]:
    """A ``fault_filter`` selecting the first ``count`` distinct request bodies to arrive, and
    only them, every time they come back (a retried request keeps failing)."""
    chosen: set[str] = set()

    def select(body: dict[str, Any]) -> bool:
        key = json.dumps(body, sort_keys=True)
        if key not in chosen and len(chosen) < count:
            chosen.add(key)
        return key in chosen
    return select


if __name__ == "__main__":  # a server in its own process (benchmarks): prints its URL, stops at EOF on stdin
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--capacity", type=int, default=None)
    options = parser.parse_args()
    served = OpenAIServer(latency=options.latency)
    served.record = False  # a long benchmark would keep every body
    served.capacity = options.capacity
    print(served.base_url, flush=True)
    sys.stdin.read()
    served.close()
