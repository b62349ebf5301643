"""A real OpenAI-compatible server on 127.0.0.1 with a **Batch API**, for tests (no mocked client).

:class:`BatchServer` is an :class:`~support.openai_server.OpenAIServer` (chat completions,
embeddings, ``/models``, the same ``responder``) that also answers:

* ``POST /v1/files`` (multipart: ``file`` and ``purpose``) → ``{"id": "file-N", ...}``;
* ``GET /v1/files/{id}/content`` → the file's bytes;
* ``POST /v1/batches`` (``input_file_id``, ``endpoint``, ``completion_window``) → the batch,
  ``validating``;
* ``GET /v1/batches/{id}`` → the batch: ``in_progress`` until ``delay`` seconds after it was
  created, then its requests are answered by the ``responder`` (each line as the chat endpoint
  would answer its body) and it is ``completed`` with an ``output_file_id`` and, when some
  lines failed, an ``error_file_id``.

Counted: ``uploads``, ``creations``, ``polls``, ``downloads``; ``batch_lines`` holds the
bodies the batches answered. **Faults**: ``line_error(body)`` (``None``: none) returns, for a
line that should fail, ``"http-400"`` (a ``response`` with ``status_code`` 400 in the error
file), ``"error"`` (an ``error`` object, as OpenAI writes for a request it could not run),
``"length"`` (a 200 answer cut off: ``finish_reason: length``) or ``None``; ``outcome`` ends
every batch ``completed`` (default), ``expired`` (only the first ``expire_after`` lines
answered, the rest in the error file as ``batch_expired``) or ``failed`` (validation failed:
no output at all); ``forget()`` drops every batch and file (a server that lost them).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from typing import Any

from support.openai_server import OpenAIServer


def _multipart(raw: bytes) -> dict[str, bytes]:
    """The fields of a multipart/form-data body (the boundary is its first line)."""
    boundary = raw.split(b"\r\n", 1)[0]
    fields: dict[str, bytes] = {}
    for part in raw.split(boundary)[1:]:
        if part.startswith(b"--"):
            break
        head, _, value = part.strip(b"\r\n").partition(b"\r\n\r\n")
        for line in head.decode("latin-1").split("\r\n"):
            if line.lower().startswith("content-disposition") and 'name="' in line:
                fields[line.split('name="', 1)[1].split('"', 1)[0]] = value
    return fields


class BatchServer(OpenAIServer):
    """An :class:`OpenAIServer` with files and batches (see the module docstring)."""

    def __init__(self, *args: Any, delay: float = 0.3, **kwargs: Any) -> None:
        self.delay = delay
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.uploads = 0
        self.creations = 0
        self.polls = 0
        self.downloads = 0
        self.batch_lines: list[dict[str, Any]] = []
        self.line_error: Callable[[dict[str, Any]], str | None] | None = None
        self.outcome = "completed"
        self.expire_after = 1
        self._ids = itertools.count(1)
        super().__init__(*args, **kwargs)

    def forget(self) -> None:
        """Drop every file and batch (a server that no longer knows them)."""
        self.files.clear()
        self.batches.clear()

    async def _handle(self, method: str, path: str, raw: bytes, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> bool:
        route = path.split("/v1", 1)[-1]
        if route == "/files" and method == "POST":
            fields = _multipart(raw)
            if fields.get("purpose") != b"batch" or "file" not in fields:
                return await self._send(writer, 400, {"error": {"message": "need file and purpose=batch"}})
            self.uploads += 1
            file_id = f"file-{next(self._ids)}"
            self.files[file_id] = fields["file"]
            return await self._send(writer, 200, {"id": file_id, "object": "file", "purpose": "batch",
                                                  "bytes": len(fields["file"])})
        if route.startswith("/files/") and route.endswith("/content") and method == "GET":
            data = self.files.get(route[len("/files/"):-len("/content")])
            if data is None:
                return await self._send(writer, 404, {"error": {"message": "no such file"}})
            self.downloads += 1
            return await self._send(writer, 200, data)
        if route == "/batches" and method == "POST":
            body = json.loads(raw or b"{}")
            if body.get("input_file_id") not in self.files:
                return await self._send(writer, 404, {"error": {"message": "no such input file"}})
            if body.get("endpoint") != "/v1/chat/completions" or body.get("completion_window") != "24h":
                return await self._send(writer, 400, {"error": {"message": "bad endpoint or completion_window"}})
            self.creations += 1
            batch_id = f"batch_{next(self._ids)}"
            lines = [json.loads(line) for line in self.files[body["input_file_id"]].decode().splitlines() if line]
            self.batches[batch_id] = {"id": batch_id, "object": "batch", "endpoint": body["endpoint"],
                                      "input_file_id": body["input_file_id"], "completion_window": "24h",
                                      "status": "validating", "created_at": time.time(), "output_file_id": None,
                                      "error_file_id": None, "errors": None,
                                      "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
            return await self._send(writer, 200, self.batches[batch_id])
        if route.startswith("/batches/") and method == "GET":
            batch = self.batches.get(route[len("/batches/"):])
            if batch is None:
                return await self._send(writer, 404, {"error": {"message": "no such batch"}})
            self.polls += 1
            if batch["status"] in ("validating", "in_progress"):
                if time.time() - batch["created_at"] >= self.delay:
                    self._finish(batch)
                else:
                    batch["status"] = "in_progress"
            return await self._send(writer, 200, batch)
        return await super()._handle(method, path, raw, reader, writer)

    def _finish(self, batch: dict[str, Any]) -> None:
        """Answer a batch's lines (as the chat endpoint would) and end it with ``outcome``."""
        lines = [json.loads(line) for line in self.files[batch["input_file_id"]].decode().splitlines() if line]
        if self.outcome == "failed":
            batch.update(status="failed", errors={"object": "list", "data": [
                {"code": "invalid_model", "message": "model not found for this batch", "line": 1}]})
            return
        output: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for number, line in enumerate(lines):
            body = line["body"]
            entry: dict[str, Any] = {"id": f"batch_req_{number}", "custom_id": line["custom_id"], "error": None}
            if self.outcome == "expired" and number >= self.expire_after:
                errors.append({**entry, "response": None, "error": {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion window expired."}})
                continue
            fault = self.line_error(body) if self.line_error is not None else None
            if fault == "http-400":
                errors.append({**entry, "response": {"status_code": 400, "request_id": f"req_{number}", "body": {
                    "error": {"message": "this model does not take that request", "type": "invalid_request_error"}}}})
                continue
            if fault == "error":
                errors.append({**entry, "response": None,
                               "error": {"code": "server_error", "message": "the request could not be run"}})
                continue
            text = self.responder(body)
            finish = "stop"
            if fault == "length":
                text, finish = text[: max(1, len(text) // 2)], "length"
            self.batch_lines.append(body)
            output.append({**entry, "response": {"status_code": 200, "request_id": f"req_{number}",
                                                 "body": self._chat(body, text, finish)}})
        for name, rows in (("output_file_id", output), ("error_file_id", errors)):
            if rows:
                file_id = f"file-{next(self._ids)}"
                self.files[file_id] = "".join(json.dumps(row) + "\n" for row in rows).encode()
                batch[name] = file_id
        batch["status"] = "expired" if self.outcome == "expired" else "completed"
        batch["request_counts"] = {"total": len(lines), "completed": len(output), "failed": len(errors)}


if __name__ == "__main__":  # a server in its own process: prints its URL, stops at EOF on stdin
    import sys

    served = BatchServer()
    print(served.base_url, flush=True)
    sys.stdin.read()
    served.close()
