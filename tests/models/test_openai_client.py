"""The client for models behind OpenAI-compatible endpoints, against real servers on 127.0.0.1:
the retry schedule, slots given back while waiting, the per-attempt deadline, the cache key
(endpoint, revision), refresh, replicas, a dead server, the answer size cap, token usage and
an interrupted batch keeping what it received."""

from __future__ import annotations

import re
import time

import pytest

pytest.importorskip("httpx")

from chemassay.models import load_model  # noqa: E402
from chemassay.models.openai_chat import (  # noqa: E402
    ChatError,
    EndpointFailing,
    EndpointUnreachable,
    OpenAIChatClient,
    request_key,
)
from chemassay.runtime.cache import KeyValueStore  # noqa: E402
from support.openai_server import OpenAIServer, first_bodies, free_port  # noqa: E402

HI = [{"role": "user", "content": "Write 2 different molecules"}]


def conversation(i: int) -> list[dict]:
    return [{"role": "user", "content": f"Write 1 different molecule, number {i}"}]


@pytest.fixture
def server():
    server = OpenAIServer()
    yield server
    server.close()


@pytest.fixture
def second_server():
    server = OpenAIServer()
    yield server
    server.close()


def test_backoff_doubles_and_retry_after_is_honoured_up_to_the_cap(server):
    waits: list[float] = []
    client = OpenAIChatClient(server.base_url, "m", sleep=waits.append)
    server.fault, server.fault_times = "http-500", 5
    assert client.complete(HI).attempts == 6
    assert waits == [1.0, 2.0, 4.0, 8.0, 16.0]
    waits.clear()
    server.fault, server.fault_times, server.retry_after = "http-429", 2, "120"
    assert client.complete(conversation(1)).attempts == 3
    assert waits == [60.0, 60.0]  # the server's Retry-After, capped at max_backoff
    waits.clear()
    server.fault, server.fault_times, server.retry_after = "http-500", None, None
    with pytest.raises(ChatError, match="HTTP 500 after 6 attempts"):
        client.complete(conversation(2))


def test_a_request_waiting_to_retry_gives_its_slot_back(server):
    server.fault, server.retry_after = "http-429", "1.0"
    server.fault_filter, server.fault_times = first_bodies(1), 1
    server.latency = 0.05
    client = OpenAIChatClient(server.base_url, "m")
    finished: dict[int, float] = {}
    started = time.perf_counter()
    client.complete_many([conversation(i) for i in range(6)], concurrency=1,
                         on_result=lambda i, outcome: finished.setdefault(i, time.perf_counter() - started))
    # concurrency=1: the five others are answered while the first waits its second out
    first = min(finished, key=finished.get)
    assert max(finished.values()) >= 1.0 and first != max(finished, key=finished.get)
    assert sorted(finished.values())[4] < 0.9


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("fault", ["hang", "trickle", "ramble"])
def test_a_hanging_or_trickling_server_cannot_hold_a_request(server, fault, stream):
    """``timeout`` (+ the time to read the input) bounds the wait for a first piece of the answer
    while the server shows no progress: a server that hangs, or trickles bytes that never make a
    whole streamed event. The cap, ``timeout`` + ``seconds_per_token`` × (``max_tokens`` + the
    input's tokens), bounds an answer that streams on without ever being silent that long
    (``ramble``: a piece every 0.1 s) and a reply not streamed (no sign of progress before it)."""
    server.fault, server.hang_seconds, server.trickle_interval = fault, 30.0, 0.1
    client = OpenAIChatClient(server.base_url, "m", timeout=0.5, backoff=0.0, seconds_per_token=0.1,
                              params={"max_tokens": 4}, stream=stream)
    # reading the input: 0.1 s per 4 bytes of its 27; the cap: timeout + 0.1 s × (4 + 6.75 tokens)
    assert client.time_allowed("chat", {"messages": HI, "max_tokens": 4}) == pytest.approx((0.675, 1.575))
    started = time.perf_counter()
    waiting = stream and fault != "ramble"
    reason = r"no complete reply in time \(" + ("no reply within 1.2 s" if waiting else "not whole within 1.6 s: timeout")
    with pytest.raises(ChatError, match=reason) as info:
        client.complete(HI)
    assert info.value.attempts == 2 and str(info.value).endswith("after 2 attempts")
    elapsed = time.perf_counter() - started
    assert info.value.kind == "no complete reply in time after 2 attempts"
    assert (2.3 if waiting else 3.1) <= elapsed < 5.5  # asked once more, then failed


def test_cache_key_holds_endpoint_model_revision_and_body(server, second_server, isolated_home):
    server.model_roots = {"m": "/checkpoints/step-1000"}
    store = KeyValueStore("llm-responses")
    first = OpenAIChatClient(server.base_url, "m", cache=store)
    assert not first.complete(HI).from_cache
    assert OpenAIChatClient(server.base_url, "m", cache=store).complete(HI).from_cache
    # another endpoint serving a model of the same name is asked
    assert not OpenAIChatClient(second_server.base_url, "m", cache=store).complete(HI).from_cache
    # a new checkpoint under the same name and URL (the root vLLM reports) is asked
    server.model_roots = {"m": "/checkpoints/step-2000"}
    assert not OpenAIChatClient(server.base_url, "m", cache=store).complete(HI).from_cache
    # refresh asks again and overwrites; a declared revision is part of the key
    asked = len(server.requests)
    assert not OpenAIChatClient(server.base_url, "m", cache=store, refresh=True).complete(HI).from_cache
    assert len(server.requests) == asked + 1
    assert not OpenAIChatClient(server.base_url, "m", cache=store, revision="v2").complete(HI).from_cache
    assert request_key("m", {"a": 1}, endpoint=["http://a/v1"]) != request_key("m", {"a": 1}, endpoint=["http://b/v1"])
    assert request_key("m", {"a": 1}, endpoint=["http://a/v1", "http://b/v1"]) == \
        request_key("m", {"a": 1}, endpoint=["http://b/v1/", "http://a/v1"])


def test_cache_false_and_refresh_as_spec_options(server, isolated_home):
    spec = f"openai:m,base_url={server.base_url}"
    load_model(spec, "reaction-predictor").predict(["CCO.CC"], k=1)
    asked = len(server.requests)
    model = load_model(spec, "reaction-predictor")
    model.predict(["CCO.CC"], k=1)
    assert len(server.requests) == asked and model.request_stats.cached == 1
    for option in ("cache=false", "refresh=true"):
        model = load_model(f"{spec},{option}", "reaction-predictor")
        model.predict(["CCO.CC"], k=1)
        assert model.request_stats.new == 1 and model.request_stats.cached == 0, option
    assert len(server.requests) == asked + 2


def test_replicas_share_the_requests(server, second_server):
    server.latency = second_server.latency = 0.05
    client = OpenAIChatClient(f"{server.base_url}|{second_server.base_url}", "m")
    outcomes = client.complete_many([conversation(i) for i in range(40)], concurrency=8)
    assert all(not isinstance(o, ChatError) for o in outcomes)
    counts = sorted([len(server.requests), len(second_server.requests)])
    assert sum(counts) == 40 and counts[0] >= 15  # least-in-flight: about half each
    assert client.stats.summary().endpoints == [server.base_url, second_server.base_url]


def test_a_dead_replica_is_left_aside(server):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    client = OpenAIChatClient(f"{dead}|{server.base_url}", "m", backoff=0.01)
    outcomes = client.complete_many([conversation(i) for i in range(10)], concurrency=4)
    assert all(not isinstance(o, ChatError) for o in outcomes) and len(server.requests) == 10


def test_a_dead_server_fails_at_once_with_its_url(isolated_home):
    url = f"http://127.0.0.1:{free_port()}/v1"
    for cache in (None, KeyValueStore("llm-responses")):
        started = time.perf_counter()
        with pytest.raises(EndpointUnreachable, match=f"{url}: connection failed"):
            OpenAIChatClient(url, "m", cache=cache).complete(HI)
        assert time.perf_counter() - started < 2


def test_answer_size_cap_is_a_setting(server, isolated_home):
    with pytest.raises(ChatError, match="answer over 10 bytes"):
        OpenAIChatClient(server.base_url, "m", max_answer_bytes=10).complete(HI)
    model = load_model(f"openai:m,base_url={server.base_url},max_answer_bytes=5", "reaction-predictor")
    assert model.predict(["CCO.CCCCO"], k=2) == [[]]
    assert model.failures == {0: "request failed: answer over 5 bytes"}
    assert model.request_stats.summary().reasons == {"answer over 5 bytes": 1}


def test_usage_is_summed_for_new_answers_only(server, isolated_home):
    store = KeyValueStore("llm-responses")
    client = OpenAIChatClient(server.base_url, "m", cache=store)
    client.complete_many([conversation(i) for i in range(3)])
    summary = client.stats.summary()
    assert summary.new == 3 and summary.prompt_tokens == 3 * 6 and summary.completion_tokens > 0
    client.complete_many([conversation(i) for i in range(3)])
    again = client.stats.summary()
    assert again.cached == 3 and again.prompt_tokens == summary.prompt_tokens


def test_nearly_every_request_failing_stops_early(server, isolated_home):
    server.fault = "no-content"
    server.fault_filter = lambda body: "number 0 " not in body["messages"][0]["content"] + " "
    client = OpenAIChatClient(server.base_url, "m", backoff=0.0, max_retries=0, cache=KeyValueStore("llm-responses"))
    with pytest.raises(EndpointFailing, match=r"stopped early, \d+ of \d+ requests failed for good "
                                              r"\(most common: reply has no content\)") as info:
        client.complete_many([conversation(i) for i in range(100)], concurrency=1)
    assert info.value.exit_code == 2
    assert len(server.requests) < 20  # not all hundred
    # the one answer received is cached: a rerun asks it no more
    again = OpenAIChatClient(server.base_url, "m", cache=KeyValueStore("llm-responses"))
    assert again.complete(conversation(0)).from_cache


def test_an_interrupted_batch_keeps_what_it_received(server, isolated_home):
    server.latency = 0.02
    client = OpenAIChatClient(server.base_url, "m", cache=KeyValueStore("llm-responses"))
    seen: list[int] = []

    def stop_after_five(index, outcome):
        seen.append(index)
        if len(seen) == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        client.complete_many([conversation(i) for i in range(30)], concurrency=2, on_result=stop_after_five)
    rerun = OpenAIChatClient(server.base_url, "m", cache=KeyValueStore("llm-responses"))
    rerun.complete_many([conversation(i) for i in range(30)], concurrency=4)
    assert rerun.stats.cached == 5 and rerun.stats.new == 25


def test_the_refresh_flag_asks_every_endpoint_model_again(server, isolated_home, cli, tmp_path):
    source = tmp_path / "src.txt"
    source.write_text("{1}CC(=O)Cl.{1}OCC\n")
    spec = f"openai:m,base_url={server.base_url}"
    args = ("stoichiometry", "predict", "--model", spec, "--src", source, "--out", tmp_path / "p.txt")
    assert cli(*args).code == 0
    asked = len(server.requests)
    assert cli(*args).code == 0 and len(server.requests) == asked  # answered from the cache
    refreshed = cli("--refresh", *args)
    assert refreshed.code == 0 and len(server.requests) == asked + 1
    assert "1 new, 0 from cache" in refreshed.stderr + refreshed.stdout


# ---------------------------------------------------------------------------- streaming
def test_a_streamed_reply_is_the_same_answer_under_the_same_cache_key(server, isolated_home):
    store = KeyValueStore("llm-responses")
    streamed = OpenAIChatClient(server.base_url, "m", cache=store).complete(HI)
    assert streamed.streamed and server.streamed == 1 and server.chat_requests()[0]["stream"] is True
    assert streamed.usage == {"prompt_tokens": 4, "completion_tokens": 4}  # asked with stream_options
    plain = OpenAIChatClient(server.base_url, "m", cache=None, stream=False).complete(HI)
    assert not plain.streamed and "stream" not in server.chat_requests()[1]
    assert (plain.text, plain.finish_reason, plain.usage) == (streamed.text, streamed.finish_reason, streamed.usage)
    # the key does not say whether the reply was streamed: either client finds the other's answer
    assert OpenAIChatClient(server.base_url, "m", cache=store, stream=False).complete(HI).from_cache
    OpenAIChatClient(server.base_url, "m", cache=store, stream=False).complete(conversation(1))
    assert OpenAIChatClient(server.base_url, "m", cache=store).complete(conversation(1)).from_cache
    assert len(server.chat_requests()) == 3


@pytest.mark.parametrize("fault", ["malformed", "no-choices", "no-content", "empty", "length", "huge", "trickle"])
def test_a_fault_gives_the_same_reason_streamed_or_not(server, fault):
    server.fault, server.trickle_interval = fault, 0.05
    reasons = []
    for stream in (True, False):
        client = OpenAIChatClient(server.base_url, "m", timeout=0.5, backoff=0.0, max_retries=1, stream=stream,
                                  seconds_per_token=0.01, params={"max_tokens": 4})
        with pytest.raises(ChatError) as info:
            client.complete(HI)
        reasons.append(info.value.kind)  # the reason without details (an oversized body says its size)
    assert reasons[0] == reasons[1], reasons
    assert server.streamed >= 1


def test_giving_up_on_a_streamed_answer_stops_its_generation(server):
    """A model rambling past the deadline: the client closes the connection, and a streaming
    server stops generating (a non-streamed generation runs on after the client gave up)."""
    server.fault, server.trickle_interval, server.hang_seconds = "ramble", 0.05, 3.0
    client = OpenAIChatClient(server.base_url, "m", timeout=0.5, backoff=0.0, seconds_per_token=0.01,
                              params={"max_tokens": 4})  # a cap of 0.61 s: 0.5 s + 0.01 s × (4 + 6.75 tokens)
    started = time.perf_counter()
    with pytest.raises(ChatError, match=r"no complete reply in time \(not whole within 0.6 s.* after 2 attempts"):
        client.complete(HI)
    assert time.perf_counter() - started < 2
    deadline = time.monotonic() + 2
    while server.generating and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.generating == 0 and server.cancelled == 2 and server.streamed == 2
    # the same answer not streamed: both attempts are still being generated after the client gave up
    with pytest.raises(ChatError, match="no complete reply in time"):
        OpenAIChatClient(server.base_url, "m", timeout=0.5, backoff=0.0, stream=False, seconds_per_token=0.01,
                         params={"max_tokens": 4}).complete(HI)
    assert server.generating == 2 and server.cancelled == 2


def test_an_answer_over_the_cap_ends_its_stream_at_once(server):
    server.fault, server.huge_bytes = "huge", 50_000_000
    started = time.perf_counter()
    with pytest.raises(ChatError, match="answer over 65536 bytes"):
        OpenAIChatClient(server.base_url, "m").complete(HI)
    assert time.perf_counter() - started < 2
    deadline = time.monotonic() + 2
    while not server.cancelled and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.cancelled == 1  # the server stopped sending the other 49.9 MB


@pytest.mark.parametrize("server_kind", ["ignores stream", "refuses stream"])
def test_a_server_that_does_not_stream_still_answers(server, server_kind):
    if server_kind == "ignores stream":
        server.streaming = False
    else:
        server.refuse_stream = True
    client = OpenAIChatClient(server.base_url, "m")
    outcomes = client.complete_many([conversation(i) for i in range(6)], concurrency=1)
    assert all(not isinstance(o, ChatError) and not o.streamed for o in outcomes)
    assert client.stats.summary().failed == 0 and server.streamed == 0
    asked = [body.get("stream") for body in server.chat_requests()]
    # asked to stream once; told no (an HTTP 400, then asked again at once without it) or
    # answered with one body, it asks that server without stream from then on
    expected = [True, None] if server_kind == "refuses stream" else [True]
    assert asked == expected + [None] * (6 - 1)


def test_the_answers_cut_off_at_the_length_limit_are_counted(server):
    server.fault, server.fault_filter = "length", first_bodies(2)
    client = OpenAIChatClient(server.base_url, "m")
    outcomes = client.complete_many([conversation(i) for i in range(5)], concurrency=1)
    assert sum(isinstance(o, ChatError) for o in outcomes) == 2
    summary = client.stats.summary()
    assert summary.failed == summary.cut_off == 2 and summary.cut_off_share == pytest.approx(0.4)
    assert "2 failed; 2 cut off at the length limit (40 % of the replies)" in summary.line()


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("where", ["content", "think"])
def test_reasoning_is_taken_out_of_the_answer_and_kept(server, isolated_home, stream, where):
    server.reasoning = where
    store = KeyValueStore("llm-responses")
    client = OpenAIChatClient(server.base_url, "m", cache=store, stream=stream)
    reply = client.complete(HI)
    plain = server.responder({"messages": HI})
    assert reply.answer == plain and reply.all_reasoning == server.reasoning_text
    assert (reply.reasoning is not None) == (where == "content")  # reasoning_content as sent
    assert client.stats.summary().reasoning_tokens == len(server.reasoning_text.split())
    again = OpenAIChatClient(server.base_url, "m", cache=store).complete(HI)
    assert again.from_cache and again.text == reply.text and again.reasoning == reply.reasoning  # the whole reply


# ---------------------------------------------------------------------------- progress lines
def test_slow_requests_are_never_silent(server):
    """With a slow server a progress line comes every interval (answered, failed, in flight,
    the oldest request's age), through the chemassay logger."""
    import logging

    server.latency = 1.2
    lines: list[tuple[float, str]] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append((time.perf_counter(), record.getMessage()))

    logger = logging.getLogger("chemassay")
    handler, level = Keep(logging.INFO), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        client = OpenAIChatClient(server.base_url, "m", progress_interval=0.5)
        started = time.perf_counter()
        client.complete_many([conversation(i) for i in range(6)], concurrency=2)
        ended = time.perf_counter()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    times = [started] + [t for t, _ in lines]
    assert ended - started > 3.4 and len(lines) >= 6
    assert max(b - a for a, b in zip(times, times[1:], strict=False)) < 0.5 + 0.3  # the interval, checked every 0.2 s
    first = re.fullmatch(rf"m at {re.escape(server.base_url)}: 0/6 requests answered, 0 failed, 2 in flight "
                         r"\(oldest (\d\.\d) s\); (\d\.\d) s", lines[0][1])
    assert first and 0.5 <= float(first[1]) <= float(first[2]) < 1.0, lines[0][1]
    assert any(" 2/6 requests answered, 0 failed, 2 in flight" in text for _, text in lines)
    assert re.fullmatch(rf"m at {re.escape(server.base_url)}: 6/6 requests answered, 0 failed; \d\.\d s \(done\)",
                        lines[-1][1]), lines[-1][1]


def test_progress_lines_name_the_requests_waiting_to_retry(server, logged):
    server.fault = "http-500"
    client = OpenAIChatClient(server.base_url, "m", progress_interval=0.3, backoff=1.0, max_retries=1)
    with pytest.raises(ChatError, match="HTTP 500 after 2 attempts"):
        client.complete(HI)
    text = logged.read()
    assert re.search(r"0/1 requests answered, 0 failed, 0 in flight \(oldest 0\.\d s\), 1 waiting to retry "
                     r"\(last problem: HTTP 500\)", text), text


# ---------------------------------------------------------------------------- slow servers
class OneSlotServer:
    """A slow chat server on 127.0.0.1 that, like llama.cpp on a CPU, answers one request at a
    time: the others wait for the slot, hearing nothing. An answer is ``tokens`` pieces, one every
    ``interval`` seconds, streamed when asked (else sent whole at the end). ``drops_for_newcomer``:
    a streamed answer is cut off (the connection closed) when another request waits, as
    llama-cpp-python's server does by default. ``hang_first``: the first request never gets an
    answer (its slot is held ``hang_seconds``)."""

    def __init__(self, *, tokens: int = 12, interval: float = 0.1, drops_for_newcomer: bool = False,
                 hang_first: bool = False, hang_seconds: float = 30.0) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.tokens, self.interval = tokens, interval
        self.drops_for_newcomer, self.hang_first, self.hang_seconds = drops_for_newcomer, hang_first, hang_seconds
        self.slot = threading.Lock()
        self.lock = threading.Lock()
        self.waiting = 0
        self.served: list[tuple[float, float, bool]] = []
        """``(start, end, whole)`` of each answer the slot served."""
        self.dropped = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                import json

                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.answer(self, body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def answer(self, handler, body: dict) -> None:
        import json

        stream = bool(body.get("stream"))
        with self.lock:
            self.waiting += 1
        with self.slot:
            with self.lock:
                self.waiting -= 1
                first = not self.served
                self.served.append((time.monotonic(), 0.0, False))
                index = len(self.served) - 1
            if first and self.hang_first:
                time.sleep(self.hang_seconds)
                return
            pieces = [f"C{i} " for i in range(self.tokens)]
            try:
                if stream:
                    handler.send_response(200)
                    handler.send_header("Content-Type", "text/event-stream")
                    handler.end_headers()
                    for piece in pieces:
                        if self.drops_for_newcomer and self.waiting:
                            with self.lock:
                                self.dropped += 1
                            return  # the connection closes: the answer is cut off
                        time.sleep(self.interval)
                        chunk = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                        handler.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        handler.wfile.flush()
                    done = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                    handler.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())
                else:
                    time.sleep(self.interval * len(pieces))
                    data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant",
                                       "content": "".join(pieces)}, "finish_reason": "stop"}]}).encode()
                    handler.send_response(200)
                    handler.send_header("Content-Type", "application/json")
                    handler.send_header("Content-Length", str(len(data)))
                    handler.end_headers()
                    handler.wfile.write(data)
            except OSError:
                return  # the client gave up
            self.served[index] = (self.served[index][0], time.monotonic(), True)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def one_slot():
    servers: list[OneSlotServer] = []

    def make(**options) -> OneSlotServer:
        servers.append(OneSlotServer(**options))
        return servers[-1]
    yield make
    for server in servers:
        server.close()


def test_a_steady_stream_longer_than_the_timeout_is_an_answer(one_slot):
    """``timeout`` is the longest silence, not the whole reply: 20 pieces 0.1 s apart (2 s) with
    a 0.5 s timeout; the cap (0.5 s + 0.5 s × 20 tokens) leaves it time."""
    server = one_slot(tokens=20, interval=0.1)
    client = OpenAIChatClient(server.base_url, "m", timeout=0.5, params={"max_tokens": 20})
    reply = client.complete(HI)
    assert reply.text == "".join(f"C{i} " for i in range(20)) and reply.streamed and reply.attempts == 1
    assert reply.elapsed_s >= 2.0


@pytest.mark.parametrize("stream", [True, False])
def test_requests_queued_behind_a_busy_one_slot_server_are_answered(one_slot, stream):
    """Four requests at once to a server that answers one at a time (1.2 s each, silent to the
    ones waiting): the last waits 3.6 s, seven times ``timeout``, and is answered at its first
    attempt, because its server visibly answers the others meanwhile. Not streamed, a reply
    comes whole after 1.2 s of silence: within its cap, counted from the previous reply."""
    server = one_slot(tokens=12, interval=0.1)
    client = OpenAIChatClient(server.base_url, "m", timeout=0.5, params={"max_tokens": 12}, stream=stream,
                              seconds_per_token=0.15)
    started = time.perf_counter()
    outcomes = client.complete_many([conversation(i) for i in range(4)], concurrency=4)
    assert all(not isinstance(o, ChatError) and o.attempts == 1 for o in outcomes), outcomes
    assert [whole for _, _, whole in server.served] == [True] * 4  # nothing asked twice
    assert time.perf_counter() - started >= 4 * 1.2 and max(o.elapsed_s for o in outcomes) >= 3 * 1.2


def test_a_server_that_drops_its_stream_for_a_newcomer_is_asked_one_at_a_time(one_slot, logged):
    """llama-cpp-python's server cuts the answer it streams off when another request arrives:
    the cut answers are not answers (no finish_reason), are asked again, and the client asks
    that server one request at a time from then on (saying so once), so every request is answered."""
    server = one_slot(tokens=6, interval=0.05, drops_for_newcomer=True)
    client = OpenAIChatClient(server.base_url, "m", timeout=0.5, backoff=0.0)
    outcomes = client.complete_many([conversation(i) for i in range(6)], concurrency=3)
    assert all(not isinstance(o, ChatError) and o.text == "".join(f"C{i} " for i in range(6)) for o in outcomes)
    assert 1 <= server.dropped <= 4  # the answers in flight when the client learnt it; none after
    wholes = [start for start, _, whole in server.served if whole]
    assert len(wholes) == 6
    text = logged.read()
    assert text.count("the server answers one request at a time; asking it one at a time from now on") == 1, text
    assert client.endpoints[0].one_at_a_time
    # a later client (an assay's next task) asks it one at a time from the start: nothing dropped
    dropped = server.dropped
    again = OpenAIChatClient(server.base_url, "m", timeout=0.5, backoff=0.0)
    assert again.endpoints[0].one_at_a_time
    outcomes = again.complete_many([conversation(i) for i in range(6, 10)], concurrency=3)
    assert all(not isinstance(o, ChatError) and o.attempts == 1 for o in outcomes)
    assert server.dropped == dropped


def test_a_queued_request_behind_a_hung_server_still_fails(one_slot):
    """A one-slot server that hangs on its first request: nothing progresses, so the requests
    queued behind it fail ``timeout`` (+ reading their input) after they were sent, not never."""
    server = one_slot(hang_first=True, hang_seconds=20.0)
    client = OpenAIChatClient(server.base_url, "m", timeout=0.5, backoff=0.0, max_retries=1, seconds_per_token=0.0)
    started = time.perf_counter()
    outcomes = client.complete_many([conversation(i) for i in range(3)], concurrency=3)
    assert all(isinstance(o, ChatError) and o.kind == "no complete reply in time after 2 attempts" for o in outcomes)
    assert all("(no reply within 0.5 s)" in str(o) for o in outcomes), outcomes
    assert time.perf_counter() - started < 3


@pytest.mark.parametrize("stream", ["true", "false"])
def test_a_generator_keeps_the_complete_lines_of_an_answer_cut_off(server, isolated_home, stream):
    # the first answer is cut off at the length limit half way: its complete lines are samples
    # the model wrote, the line the cut ended is dropped, and the slots left stay failed (not
    # asked again under another seed, as for any failed request)
    server.fault, server.fault_filter = "length", first_bodies(1)
    spec = f"openai:m,base_url={server.base_url},batch=10,cache=false,stream={stream}"
    model = load_model(spec, "generator")
    samples = model.sample(10, seed=0)
    whole = first_answer_molecules(server, 10)
    sent = "\n".join(f"{i + 1}. {m}" for i, m in enumerate(whole))
    cut = sent[: len(sent) // 2]
    complete = cut.rsplit("\n", 1)[0].count("\n") + 1
    assert 0 < complete < 10
    assert samples[:complete] == whole[:complete]
    assert samples[complete:] == [""] * (10 - complete)
    assert sorted(model.failures) == list(range(complete, 10))
    assert all("cut off" in reason for reason in model.failures.values())
    summary = model.request_stats.summary()
    assert summary.cut_off == 1 and summary.failed == 1 and summary.new == 0


def first_answer_molecules(server, count):
    """The molecules the test server writes for the first request of a generator seeded 0."""
    import random

    from support.openai_server import MOLECULES

    seed = server.chat_requests()[0].get("seed", 0)
    rng = random.Random(seed)
    return [rng.choice(MOLECULES) for _ in range(count)]
