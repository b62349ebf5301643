"""Fixtures of the mechanism suite: the bundled oMeBench data, a DRFP index of the
templates, and a real OpenAI-compatible HTTP server on 127.0.0.1 whose behaviour each test
scripts (answers, errors, delays)."""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from chemassay.suites.mechanism.data import omebench_file as bundled_path
from chemassay.suites.mechanism.prompts import build_prompt
from chemassay.suites.mechanism.records import load_reactions


@pytest.fixture(scope="session")
def gold_reactions():
    return load_reactions(bundled_path("gold")).reactions


@pytest.fixture(scope="session")
def template_reactions():
    return load_reactions(bundled_path("template")).reactions


@pytest.fixture(scope="session")
def template_index(template_reactions):
    pytest.importorskip("drfp", reason="the drfp extra is not installed (pip install 'chemassay[drfp]')")
    from chemassay.suites.mechanism.retrieval import ReactionIndex

    return ReactionIndex(template_reactions)


@pytest.fixture(autouse=True)
def _private_home(tmp_path, monkeypatch):
    """Keep the on-disk molecule cache of every test in its own temporary home."""
    monkeypatch.setenv("CHEMASSAY_HOME", str(tmp_path / "home"))


def gold_answer(reaction) -> str:
    """A chatty model answer holding the gold mechanism between [ANSWER] tags."""
    steps = [
        {"step": i, "type": s.type, "subtype": s.subtype, "intermediate_smiles": s.intermediate_smiles}
        for i, s in enumerate(reaction.steps, start=1)
    ]
    return f"Let me think about {reaction.name}.\n[ANSWER]\n{json.dumps(steps, indent=1)}\n[/ANSWER]\nDone."


@dataclass
class Script:
    """What the fake endpoint does: answers by prompt, and failures to inject first."""

    answers: dict[str, str] = field(default_factory=dict)
    fail_first: dict[str, list[int]] = field(default_factory=dict)  # reaction id -> statuses to return first
    always_fail: dict[str, int] = field(default_factory=dict)  # reaction id -> status returned every time
    delay_first: dict[str, float] = field(default_factory=dict)  # reaction id -> seconds to sleep on first request
    retry_after: str | None = None
    delay_all: float = 0.0
    prompt_ids: dict[str, str] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    in_flight: int = 0
    max_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class FakeOpenAI:
    """A ThreadingHTTPServer answering POST /v1/chat/completions like an OpenAI endpoint."""

    def __init__(self, script: Script) -> None:
        self.script = script
        handler = self._handler_class()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _handler_class(self):
        script = self.script

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # headers and body in one packet: no 40 ms delayed-ACK stalls

            def log_message(self, *args):  # keep test output clean
                return

            def _leave(self) -> None:
                """The request stops counting as in flight (once), before its answer is sent: a
                client that reads the answer may send its next request at once."""
                if getattr(self, "_counted", False):
                    self._counted = False
                    with script.lock:
                        script.in_flight -= 1

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                body = json.dumps(payload).encode()
                self._leave()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (time-out test)

            def do_POST(self):  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                prompt = body["messages"][-1]["content"]
                rid = script.prompt_ids.get(prompt, "?")
                with script.lock:
                    script.requests.append({"body": body, "auth": self.headers.get("Authorization"), "rid": rid})
                    script.seen[rid] += 1
                    attempt = script.seen[rid]
                    script.in_flight += 1
                    script.max_in_flight = max(script.max_in_flight, script.in_flight)
                self._counted = True
                try:
                    if self.path != "/v1/chat/completions":
                        return self._send(404, {"error": {"message": "not found"}})
                    if rid in script.always_fail:
                        return self._send(script.always_fail[rid], {"error": {"message": "bad request"}})
                    if attempt == 1 and rid in script.delay_first:
                        time.sleep(script.delay_first[rid])
                    if script.delay_all:
                        time.sleep(script.delay_all)
                    statuses = script.fail_first.get(rid, [])
                    if attempt <= len(statuses):
                        headers = {"Retry-After": script.retry_after} if script.retry_after is not None else None
                        return self._send(statuses[attempt - 1], {"error": {"message": "try again"}}, headers)
                    answer = script.answers.get(prompt, "I do not know.")
                    return self._send(200, {
                        "id": "chatcmpl-test", "object": "chat.completion", "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": answer}}],
                        "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(answer.split())},
                    })
                finally:
                    self._leave()

        return Handler


@pytest.fixture
def fake_openai(gold_reactions):
    """Start the fake endpoint primed with gold answers for the default prompt."""
    script = Script()
    for reaction in gold_reactions:
        prompt = build_prompt("default", reaction)
        script.prompt_ids.setdefault(prompt, reaction.reaction_id)
        script.answers.setdefault(prompt, gold_answer(reaction))
    server = FakeOpenAI(script)
    try:
        yield server
    finally:
        server.close()
