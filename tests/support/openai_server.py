"""A real OpenAI-compatible HTTP server on 127.0.0.1 for tests (no mocked client).

It answers ``POST /v1/chat/completions`` with the text a ``responder(body)`` function
returns, and ``POST /v1/embeddings`` with deterministic vectors (hashed character 1- and
2-grams of each input, so different strings get different vectors and the same string the
same one). Every request body is recorded in ``server.requests``. The default responder
plays a chemist who knows a few things:

* a reaction prompt → the reactants' largest molecule, as a bare SMILES line, then a
  second guess;
* a bag prompt → ``{1}`` plus the last species of the input;
* a generation prompt → ``n`` SMILES chosen by the request's seed from a fixed list
  (numbered, to exercise the parser);
* anything else (a mechanism prompt) → a JSON mechanism of one step.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MOLECULES = ["CCO", "c1ccccc1", "CC(=O)O", "CCN(CC)CC", "O=C(O)c1ccccc1", "CC(C)O", "C1CCOC1", "CCOC(C)=O",
             "Cc1ccccc1", "OCCO", "NC(=O)c1ccccc1", "CC#N", "ClCCl", "CC(=O)Nc1ccc(O)cc1", "C1CCNCC1"]


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


def hashed_embedding(text: str, dim: int = 32) -> list[float]:
    vector = [0.0] * dim
    for n in (1, 2):
        for i in range(len(text) - n + 1):
            digest = hashlib.sha256(text[i:i + n].encode()).digest()
            vector[digest[0] % dim] += 1.0 if digest[1] % 2 else -1.0
    return vector


class OpenAIServer:
    """Start with ``OpenAIServer()``; ``base_url`` is ``http://127.0.0.1:PORT/v1``; ``close()`` stops it."""

    def __init__(self, responder: Callable[[dict[str, Any]], str] = default_responder, *, refuse_chat: bool = False) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.refuse_chat = refuse_chat
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                return

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server.lock:
                    server.requests.append({"path": self.path, **body})
                if self.path.endswith("/embeddings"):
                    inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    data = [{"object": "embedding", "index": i, "embedding": hashed_embedding(t)} for i, t in enumerate(inputs)]
                    self._send(200, {"object": "list", "data": data, "model": body.get("model")})
                    return
                if self.path.endswith("/chat/completions") and not server.refuse_chat:
                    text = server.responder(body)
                    self._send(200, {"id": "x", "object": "chat.completion", "model": body.get("model"),
                                     "choices": [{"index": 0, "finish_reason": "stop",
                                                  "message": {"role": "assistant", "content": text}}]})
                    return
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        """The chat-completion request bodies received so far."""
        with self.lock:
            return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
