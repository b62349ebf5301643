"""Chat requests through an OpenAI-compatible **Batch API** (``batch_api=true`` on the ``openai``
kind): the same requests, answered within a completion window (24 h) at about half the price
on the providers that offer one (OpenAI, and servers that copy its ``/v1/batches``).

:class:`BatchChatClient` wraps an :class:`~chemassay.models.openai_chat.OpenAIChatClient` and
answers :meth:`~BatchChatClient.complete_many` like it, so every caller of the direct client (the
text backend, the mechanism runner) sends its requests as a batch unchanged:

1. **The cache first.** Each request body is looked up in the same response cache, under the same
   key (endpoint, model, body, revision), as the direct path: a rerun, or a switch between
   ``batch_api=true`` and direct requests, is answered from it.
2. **One line per distinct request** of the rest: a JSONL file of ``{"custom_id", "method":
   "POST", "url": "/v1/chat/completions", "body"}``; the ``custom_id`` is the sha256 of the body,
   so identical requests go once and each line maps back to its requests.
3. **Upload** it (``POST /files``, multipart, ``purpose=batch``), **create** the batch (``POST
   /batches``: ``input_file_id``, ``endpoint``, ``completion_window: "24h"``), and **poll**
   (``GET /batches/{id}``) every ``poll_interval`` seconds until the batch is ``completed``,
   ``failed``, ``expired`` or ``cancelled`` (``validating``, ``in_progress``, ``finalizing`` and
   ``cancelling`` are waited out).
4. **Download** the output file and the error file (``GET /files/{id}/content``) and map each
   line back by its ``custom_id``. A line is read as the direct path reads a reply (the same
   whole-answer contract: an answer cut off, empty or over ``max_answer_bytes`` is a failed
   request); a line with an ``error``, or a ``response`` whose ``status_code`` is not 200, is a
   failed request with that reason; a request with no line is failed with the batch's status
   (``batch expired before this request was answered``...). Answers are cached, failures are
   not (a rerun sends them again, in a new batch).

**Resume.** The batch is remembered in a small JSON state file (batch id, input file id, base
URL, model and the ``custom_id`` of every request) written as soon as the file is uploaded and
again when the batch is created: under ``OUT/batches/`` when the run has an output folder, else
under ``$CHEMASSAY_HOME/cache/batches/``, named by the sha256 of the request set. A rerun of the
same requests after a kill finds it and polls that batch instead of uploading and submitting
again; the file is removed once the answers are cached. A state whose batch the server no
longer knows (HTTP 404) is dropped and the requests are submitted afresh.

The Batch API calls retry transient errors as the direct path does (``max_retries``, the same
back-off and ``Retry-After``); a server without a Batch API (404 on ``/files``), or one that
keeps failing, ends the run with one line (exit code 2) and the batch, if created, is kept
for the rerun. With several replicas in ``base_url`` the batch goes to the first.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError
from chemassay.models.openai_chat import (
    RETRY_STATUSES,
    ChatError,
    ChatResponse,
    EndpointUnreachable,
    Message,
    OpenAIChatClient,
    _Problem,
    _retry_after,
)
from chemassay.runtime.cache import cache_root
from chemassay.runtime.files import atomic_write_text
from chemassay.runtime.progress import info, warn

CHAT_PATH = "/v1/chat/completions"
"""The ``url`` of every line and the batch's ``endpoint`` (the path OpenAI's Batch API names)."""
COMPLETION_WINDOW = "24h"
DEFAULT_POLL_INTERVAL = 30.0
"""Seconds between two looks at a running batch."""
ACTIVE_STATUSES = frozenset({"validating", "in_progress", "finalizing", "cancelling"})
FINAL_STATUSES = frozenset({"completed", "failed", "expired", "cancelled"})
STATE_VERSION = 1
STATE_FOLDER = "batches"


class BatchAPIError(ChatError, UserInputError):
    """The Batch API cannot be used (no such API, or it keeps failing): the run stops (exit 2)."""

    exit_code = 2


def custom_id(body: Mapping[str, Any]) -> str:
    """The ``custom_id`` of a request body: its sha256, so identical requests share one line."""
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    return f"chemassay-{digest[:40]}"


def batch_state_dir(out_dir: str | Path | None) -> Path:
    """Where batch state files live: ``OUT/batches`` for a run with an output folder, else
    ``$CHEMASSAY_HOME/cache/batches``."""
    return (Path(out_dir) if out_dir else cache_root()) / STATE_FOLDER


def _requests(count: int) -> str:
    return f"{count} request" + ("" if count == 1 else "s")


def _cached_response(value: Any) -> ChatResponse | None:
    # the same stored form as OpenAIChatClient.complete_many (one cache for both paths)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return ChatResponse(text=value["text"], model=value.get("model"), finish_reason=value.get("finish_reason"),
                            usage=value.get("usage"), attempts=0, reasoning=value.get("reasoning"),
                            system_fingerprint=value.get("system_fingerprint"), from_cache=True)
    return None


def _stored(response: ChatResponse) -> dict[str, Any]:
    return {"text": response.text, "model": response.model, "finish_reason": response.finish_reason,
            "usage": response.usage, "reasoning": response.reasoning,
            "system_fingerprint": response.system_fingerprint}


class BatchChatClient:
    """Chat completions of ``client``'s model through the Batch API of its (first) server.

    ``poll_interval`` is the wait between two looks at a running batch; ``state_dir`` the
    folder of the resume state files (:func:`batch_state_dir`). Timeouts, retries, the
    answer size cap, the cache and the request accounting are ``client``'s. See the module
    docstring for the flow.
    """

    def __init__(self, client: OpenAIChatClient, *, poll_interval: float = DEFAULT_POLL_INTERVAL,
                 state_dir: str | Path | None = None) -> None:
        if poll_interval < 0:
            raise UserInputError(f"batch_poll must be 0 or more seconds, got {poll_interval:g}")
        self.client = client
        self.poll_interval = poll_interval
        self.state_dir = Path(state_dir) if state_dir is not None else batch_state_dir(None)
        self.base = client.base_urls[0]
        self._http_client: Any = None
        self._answered = False
        self.submitted = 0
        """Batches this client created (a resumed batch is not counted)."""

    # ------------------------------------------------------------------ the direct client's face
    @property
    def model(self) -> str:
        return self.client.model

    @property
    def stats(self) -> Any:
        """The request accounting (the wrapped client's)."""
        return self.client.stats

    @property
    def params(self) -> dict[str, Any]:
        return self.client.params

    @property
    def endpoint_label(self) -> str:
        return self.client.endpoint_label

    def close(self) -> None:
        """Close the connections."""
        if self._http_client is not None:
            self._http_client.close()
            self._http_client = None
        self.client.close()

    def complete(self, messages: Sequence[Message], **params: Any) -> ChatResponse:
        """One chat completion (a batch of one); raises :class:`ChatError` on failure."""
        outcome = self.complete_many([messages], params=[params])[0]
        if isinstance(outcome, ChatError):
            raise outcome
        return outcome

    def complete_many(
        self,
        conversations: Sequence[Sequence[Message]],
        *,
        concurrency: int | None = None,
        on_result: Callable[[int, ChatResponse | ChatError], None] | None = None,
        params: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[ChatResponse | ChatError]:
        """Answer every conversation, in input order, through one batch (``concurrency`` is
        ignored: the provider schedules a batch). ``on_result(index, outcome)`` is called for
        each cached answer at once, and for the others when the batch has ended."""
        del concurrency
        client = self.client
        bodies, keys, stored = client.request_bodies(conversations, params)
        outcomes: list[Any] = [None] * len(bodies)
        waiting: dict[str, list[int]] = {}
        lines: dict[str, dict[str, Any]] = {}
        for index, body in enumerate(bodies):
            cached = _cached_response(stored.get(keys[index])) if keys[index] else None
            if cached is not None:
                outcomes[index] = cached
                client.stats.answered_from_cache()
                if on_result is not None:
                    on_result(index, cached)
                continue
            request_id = custom_id(body)
            waiting.setdefault(request_id, []).append(index)
            lines.setdefault(request_id, body)
        if not lines:
            return outcomes
        results = self._run_batch(lines)
        writes: list[tuple[str, Any]] = []
        for request_id, indices in waiting.items():
            outcome = results[request_id]
            if isinstance(outcome, ChatError):
                client.stats.failed_for_good(outcome.kind, len(indices))
            else:
                client.stats.answered_new(len(indices))
            for index in indices:
                outcomes[index] = outcome
                if isinstance(outcome, ChatResponse) and keys[index]:
                    writes.append((keys[index], _stored(outcome)))
        if client.cache is not None and writes:
            client.cache.put_many(writes)
        self._forget(self._state_path(lines))  # the answers are kept: a rerun needs no batch
        if on_result is not None:
            for index in sorted(i for indices in waiting.values() for i in indices):
                on_result(index, outcomes[index])
        return outcomes

    # ------------------------------------------------------------------ one batch
    def _run_batch(self, lines: dict[str, dict[str, Any]]) -> dict[str, ChatResponse | ChatError]:
        """Submit ``lines`` (custom_id → body) as one batch, or resume the batch a state file
        remembers for them; wait for it to end and read its results."""
        path = self._state_path(lines)
        state = self._load_state(path, lines)
        batch: dict[str, Any] | None = None
        if state is not None and state.get("batch_id"):
            info(f"[batch] {self.base}: resuming batch {state['batch_id']} ({_requests(len(lines))}; state {path})")
            batch = self._poll(state["batch_id"])
            if batch is None:
                warn(f"[batch] {self.base} no longer knows batch {state['batch_id']}: submitting the requests again")
                state = None
        if batch is None:
            state = self._submit(lines, path, state)
            batch = self._poll(state["batch_id"])
            if batch is None:
                raise BatchAPIError(f"{self.base}: batch {state['batch_id']} was created but GET /batches/"
                                    f"{state['batch_id']} answers 404", kind="batch lost")
        started = float(state.get("submitted_at") or time.time()) if state else time.time()
        return self._results(batch, lines, time.time() - started)

    def _submit(self, lines: dict[str, dict[str, Any]], path: Path, state: dict[str, Any] | None) -> dict[str, Any]:
        """Upload the requests (unless a state file kept the uploaded file) and create the batch;
        the state file is written after each step."""
        state = {"version": STATE_VERSION, "base_url": self.base, "model": self.client.model,
                 "input_file_id": (state or {}).get("input_file_id"), "batch_id": None,
                 "submitted_at": time.time(), "custom_ids": sorted(lines)}
        reused = bool(state["input_file_id"])
        if not reused:
            state["input_file_id"] = self._upload(lines)
            self._save(path, state)
        response = self._create(state["input_file_id"])
        if response.status_code in (400, 404) and reused:  # the server no longer has the file uploaded before
            state["input_file_id"] = self._upload(lines)
            self._save(path, state)
            response = self._create(state["input_file_id"])
        created = self._json(response, "create the batch (POST /batches)")
        if not isinstance(created.get("id"), str):
            raise BatchAPIError(f"{self.base}: POST /batches answered without a batch id", kind="batch create")
        state["batch_id"] = created["id"]
        self._save(path, state)
        self.submitted += 1
        info(f"[batch] {self.base}: submitted batch {created['id']} ({_requests(len(lines))}); polling every "
             f"{self.poll_interval:g} s; a rerun resumes it (state {path})")
        return state

    def _upload(self, lines: dict[str, dict[str, Any]]) -> str:
        """Upload the JSONL file of the requests; its file id."""
        jsonl = "".join(json.dumps({"custom_id": request_id, "method": "POST", "url": CHAT_PATH, "body": body},
                                   ensure_ascii=False) + "\n" for request_id, body in lines.items())
        what = "upload the requests (POST /files)"
        response = self._call("POST", "/files", what, data={"purpose": "batch"},
                              files={"file": ("chemassay-batch.jsonl", jsonl.encode("utf-8"), "application/jsonl")})
        uploaded = self._json(response, what)
        if not isinstance(uploaded.get("id"), str):
            raise BatchAPIError(f"{self.base}: POST /files answered without a file id", kind="batch upload")
        return uploaded["id"]

    def _create(self, input_file_id: str) -> Any:
        return self._call("POST", "/batches", "create the batch (POST /batches)",
                          json={"input_file_id": input_file_id, "endpoint": CHAT_PATH,
                                "completion_window": COMPLETION_WINDOW})

    def _poll(self, batch_id: str) -> dict[str, Any] | None:
        """The batch once it has ended (``None``: the server does not know it)."""
        seen: tuple[Any, ...] | None = None
        while True:
            response = self._call("GET", f"/batches/{batch_id}", f"look at batch {batch_id}", keep_state=True)
            if response.status_code == 404:
                return None
            batch = self._json(response, f"look at batch {batch_id}", keep_state=True)
            status = batch.get("status")
            counts = batch.get("request_counts") if isinstance(batch.get("request_counts"), dict) else {}
            now = (status, counts.get("completed"), counts.get("failed"))
            if status in FINAL_STATUSES:
                return batch
            if now != seen:
                seen = now
                done = f": {counts.get('completed', 0)} of {counts.get('total', '?')} done" if counts else ""
                if status in ACTIVE_STATUSES:
                    info(f"[batch] {batch_id} {status}{done}")
                else:
                    warn(f"[batch] {batch_id}: unknown status {status!r}{done}; waiting for it to end")
            self._sleep(self.poll_interval)

    def _results(self, batch: dict[str, Any], lines: dict[str, Any], elapsed: float) -> dict[str, Any]:
        """Every request's outcome, read from the batch's output and error files."""
        status = str(batch.get("status"))
        found: dict[str, ChatResponse | ChatError] = {}
        for field_name in ("output_file_id", "error_file_id"):
            file_id = batch.get(field_name)
            if not isinstance(file_id, str) or not file_id:
                continue
            text = self._download(file_id)
            for number, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    warn(f"[batch] {batch.get('id')}: line {number} of file {file_id} is not JSON; skipped")
                    continue
                request_id = entry.get("custom_id") if isinstance(entry, dict) else None
                if request_id not in lines:
                    continue
                outcome = self._read_line(entry, elapsed)
                if not isinstance(found.get(request_id), ChatResponse):  # an answer beats an error line
                    found[request_id] = outcome
        missing = [request_id for request_id in lines if request_id not in found]
        if missing:
            reason, kind = self._missing_reason(batch, status)
            for request_id in missing:
                found[request_id] = ChatError(reason, kind=kind)
            if status != "completed":
                warn(f"[batch] {batch.get('id')} {status}: {len(missing)} of {len(lines)} requests unanswered "
                     f"({reason}); a rerun sends them again")
        return found

    def _read_line(self, entry: dict[str, Any], elapsed: float) -> ChatResponse | ChatError:
        """One line of an output or error file, read as the direct path reads a reply."""
        error = entry.get("error")
        if isinstance(error, dict) and error:
            code = error.get("code") or "error"
            return ChatError(f"batch: {code}: {error.get('message') or 'no message'}", kind=f"batch: {code}")
        response = entry.get("response")
        if not isinstance(response, dict):
            return ChatError("batch line has no response", kind="batch line has no response")
        status = response.get("status_code")
        body = response.get("body")
        if isinstance(body, str):
            with contextlib.suppress(ValueError):
                body = json.loads(body)
        if status != 200:
            message = body.get("error") if isinstance(body, dict) else None
            message = message.get("message") if isinstance(message, dict) else message
            snippet = str(message if message else body)[:300].replace("\n", " ")
            return ChatError(f"HTTP {status}: {snippet}", status=status if isinstance(status, int) else None,
                             kind=f"HTTP {status}")
        if not isinstance(body, dict):
            return ChatError("reply is not a JSON object", status=200)
        self.client.stats.add_usage(body.get("usage"))
        try:
            answer = self.client._read_chat(body)
        except _Problem as problem:
            return ChatError(problem.reason, status=200, kind=problem.kind)
        answer.elapsed_s = elapsed
        return answer

    @staticmethod
    def _missing_reason(batch: dict[str, Any], status: str) -> tuple[str, str]:
        if status == "failed":
            errors = batch.get("errors")
            data = errors.get("data") if isinstance(errors, dict) else None
            first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
            detail = first.get("message") or first.get("code") or "no reason given"
            return f"batch failed: {detail}", "batch failed"
        if status == "expired":
            return (f"batch expired (completion window {COMPLETION_WINDOW}) before this request was answered",
                    "batch expired")
        if status == "cancelled":
            return "batch cancelled before this request was answered", "batch cancelled"
        return "batch ended without a result for this request", "batch: no result"

    def _download(self, file_id: str) -> str:
        what = f"download file {file_id} (GET /files/{file_id}/content)"
        response = self._call("GET", f"/files/{file_id}/content", what, keep_state=True)
        if response.status_code != 200:
            raise BatchAPIError(f"{self.base}: {what}: HTTP {response.status_code}; the batch is kept, run again "
                                "to resume", kind="batch download")
        return response.content.decode("utf-8", "replace")

    # ------------------------------------------------------------------ state files
    def _state_path(self, lines: Mapping[str, Any]) -> Path:
        text = json.dumps({"endpoint": self.base, "model": self.client.model, "requests": sorted(lines)})
        return self.state_dir / f"{hashlib.sha256(text.encode('utf-8')).hexdigest()[:32]}.json"

    def _load_state(self, path: Path, lines: Mapping[str, Any]) -> dict[str, Any] | None:
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            warn(f"[batch] {path}: unreadable batch state ({exc}); submitting the requests again")
            return None
        if (not isinstance(state, dict) or state.get("version") != STATE_VERSION or state.get("base_url") != self.base
                or state.get("model") != self.client.model or state.get("custom_ids") != sorted(lines)):
            return None
        return state

    @staticmethod
    def _save(path: Path, state: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(state, indent=1) + "\n")

    @staticmethod
    def _forget(path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only when empty: the folder goes with its last batch

    # ------------------------------------------------------------------ HTTP
    def _http(self) -> Any:
        if self._http_client is None:
            httpx = self.client._httpx
            # not the direct client's HTTP clients: their JSON Content-Type would override the
            # multipart one of the upload
            headers = dict(self.client.headers)
            if self.client.api_key:
                headers["Authorization"] = f"Bearer {self.client.api_key}"
            self._http_client = httpx.Client(headers=headers, timeout=httpx.Timeout(self.client.timeout))
        return self._http_client

    def _sleep(self, seconds: float) -> None:
        if self.client.sleep is not None:
            self.client.sleep(seconds)
        elif seconds > 0:
            time.sleep(seconds)

    def _call(self, method: str, path: str, what: str, *, keep_state: bool = False, **kwargs: Any) -> Any:
        """One Batch API call, with the direct path's retries of transient errors; the reply
        (any status but a retried one), or :class:`BatchAPIError` once the retries are spent."""
        httpx = self.client._httpx
        attempt = 0
        while True:
            attempt += 1
            retry_after = None
            try:
                response = self._http().request(method, self.base + path, **kwargs)
            except httpx.ConnectError as exc:
                if not self._answered:
                    raise EndpointUnreachable(
                        f"{self.base}: connection failed ({exc or 'refused'}); is the server running and is the base "
                        "URL (--base-url, base_url=) right?") from None
                problem = f"connection failed ({type(exc).__name__})"
            except httpx.TransportError as exc:
                problem = f"connection lost ({type(exc).__name__})"
            else:
                self._answered = True
                if response.status_code not in RETRY_STATUSES:
                    return response
                problem, retry_after = f"HTTP {response.status_code}", _retry_after(response.headers)
            if attempt > self.client.max_retries:
                kept = "; the batch keeps running on the server: run again to resume it" if keep_state else ""
                raise BatchAPIError(f"{self.base}: could not {what}: {problem} after {attempt} attempts{kept}",
                                    kind=f"batch API: {problem}")
            self._sleep(self.client.wait_time(attempt, retry_after))

    def _json(self, response: Any, what: str, *, keep_state: bool = False) -> dict[str, Any]:
        """The JSON object of a 200 reply, else one line saying what failed."""
        if response.status_code != 200:
            snippet = response.content[:300].decode("utf-8", "replace").replace("\n", " ")
            hint = ""
            if response.status_code in (404, 405) and not keep_state:
                hint = " (this server has no Batch API: drop batch_api=true to ask it directly)"
            elif keep_state:
                hint = "; run again to resume the batch"
            raise BatchAPIError(f"{self.base}: could not {what}: HTTP {response.status_code}: {snippet}{hint}",
                                status=response.status_code, kind=f"batch API: HTTP {response.status_code}")
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise BatchAPIError(f"{self.base}: could not {what}: the reply is not a JSON object", kind="batch API: not JSON")
        return data
