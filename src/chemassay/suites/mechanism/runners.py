"""Running a mechanism predictor over oMeBench reactions into prediction rows (and a file).

Any model of the ``mechanism-predictor`` protocol works: a chat model (kind ``openai``,
through the one OpenAI-compatible client of :mod:`chemassay.models`), a local checkpoint
(kind ``hf``), the built-in baselines (``nearest-neighbour``, ``gold-oracle``), a Python
object. Each reaction is sent as a record::

    {"reaction_id", "reactants", "products" (dot-joined SMILES), "reactants_smiles",
     "products_smiles" (lists), "conditions", "prompt", "prompt_style"}

where ``prompt`` is the paper's prompt (``default`` one-shot, ``cot``, or ``kshot`` with the
``k`` most DRFP-similar pool reactions as worked examples, :mod:`.prompts`): text models
answer it, the baselines ignore it.

Rows are ``{"reaction_id", "response": text}`` (or ``"mechanism": steps`` when the model
returns parsed steps), plus ``model`` (``KIND:ARG``), ``spec``, ``prompt_style`` and
``exemplars``; a request that failed for good gives ``{"reaction_id", "error": reason}``.
A chat reply's reasoning (a reasoning server's ``reasoning_content``, ``<think>`` blocks)
is kept in ``reasoning``, and ``response`` is the answer without it.
**Streaming** (chat models on an OpenAI-compatible server: vLLM, llama.cpp's server, TGI,
Ollama, a hosted API): every pending reaction is queued at once on the client's pool of
``concurrency`` workers, so exactly ``concurrency`` requests stay in flight until the queue
runs dry (no wave ends waiting for its slowest answer), and each answer is appended to the
output file the moment it arrives. Other predictors (local checkpoints, baselines, Python
objects) are asked chunk by chunk through the run pipeline (:func:`chemassay.models.run`:
identical records asked once, the response cache with ``cache=True``, failures with their
reasons) and their rows are appended after each chunk.
Either way an interrupted run loses at most the answers in flight (streaming) or one chunk:
running the same command again **resumes**, asking only reactions without a
``response``/``mechanism`` row (failed ones are asked again; a line cut short by a crash is
dropped). An endpoint that refuses connections
stops the run at once (:class:`~chemassay.models.openai_chat.EndpointUnreachable`, a
one-line error naming the URL), before anything is written. Either way the run ends as a
:class:`~chemassay.contract.Run` (``PredictionRun.run``: every reaction asked or resumed, the
model's identity and request counts) that ``evaluate`` hands to ``make_result``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chemassay.contract import Run
from chemassay.contract.errors import UserInputError
from chemassay.contract.result import RequestSummary
from chemassay.data.readers import open_text
from chemassay.models import run as run_pipeline
from chemassay.models.identity import model_ref
from chemassay.models.request_stats import request_summary
from chemassay.runtime.files import atomic_writer
from chemassay.suites.mechanism.prompts import PROMPT_STYLES, build_prompt
from chemassay.suites.mechanism.protocol import MECHANISM_PREDICTOR, record_prompt
from chemassay.suites.mechanism.records import Reaction

CHUNK = 32
"""Reactions sent to the model per call (rows are written after each call); at least four
times a spec's ``concurrency``, so a chunk keeps every request slot busy."""


def chunk_size(model: Any, default: int = CHUNK) -> int:
    """Reactions per call for ``model``: ``default``, or 4 × its spec's ``concurrency`` if larger."""
    spec = getattr(model, "spec", None)
    try:
        concurrency = int(spec.options.get("concurrency", 0)) if spec is not None else 0
    except (TypeError, ValueError):
        concurrency = 0
    return max(default, 4 * concurrency)


@dataclass
class PromptJob:
    """One reaction to ask about: its prompt and the exemplars shown."""

    reaction: Reaction
    prompt: str
    exemplars: list[str]

    def record(self, style: str) -> dict[str, Any]:
        """The mechanism-predictor record of this job (see the module docstring)."""
        reaction = self.reaction
        return {
            "reaction_id": reaction.reaction_id,
            "reactants": ".".join(reaction.reactants),
            "products": ".".join(reaction.products),
            "reactants_smiles": list(reaction.reactants),
            "products_smiles": list(reaction.products),
            "conditions": reaction.conditions,
            "prompt": self.prompt,
            "prompt_style": style,
        }


def prepare_jobs(
    reactions: Sequence[Reaction],
    style: str,
    *,
    k: int = 3,
    pool_index=None,
    exclude_family: bool = True,
) -> list[PromptJob]:
    """Prompts for every reaction; for ``kshot`` the exemplars are retrieved by DRFP from
    ``pool_index`` (a :class:`~chemassay.suites.mechanism.retrieval.ReactionIndex`)."""
    if style not in PROMPT_STYLES:
        raise UserInputError(f"unknown --prompt {style!r}; choose from {', '.join(PROMPT_STYLES)}")
    if style != "kshot":
        return [PromptJob(r, build_prompt(style, r), []) for r in reactions]
    if k < 1:
        raise UserInputError(f"--k {k}: k-shot prompting needs at least 1 exemplar")
    if pool_index is None or len(pool_index) == 0:
        raise UserInputError("--prompt kshot needs a non-empty --pool of exemplar reactions")
    neighbours = pool_index.nearest(reactions, k, exclude_family=exclude_family)
    jobs = []
    for reaction, found in zip(reactions, neighbours, strict=True):
        exemplars = [pool_index.pool[n.index] for n in found]
        jobs.append(PromptJob(reaction, build_prompt("kshot", reaction, exemplars), [e.reaction_id for e in exemplars]))
    return jobs


def model_label(model: Any) -> str:
    """``KIND:ARG`` of a model (the identity a resumed file must share), else its name."""
    spec = getattr(model, "spec", None)
    if spec is not None:
        return f"{spec.kind}:{spec.arg}" if spec.arg else spec.kind
    return str(getattr(model, "name", None) or type(model).__name__)


def _answered(row: Any) -> bool:
    return isinstance(row, dict) and (isinstance(row.get("response"), str) or isinstance(row.get("mechanism"), list))


def read_answered(path: Path, *, model: str, prompt_style: str) -> dict[str, dict[str, Any]]:
    """Rows already answered in ``path`` by id; rewrites it without failed or truncated lines.

    Raises :class:`UserInputError` when the file holds answers of another model or prompt
    style (mixing them would make the file meaningless), or cannot be read as text.
    """
    if not path.exists():
        return {}
    kept: list[str] = []
    answered: dict[str, dict[str, Any]] = {}
    dropped = 0
    with open_text(path) as handle:
        for line in handle:
            try:
                row = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                dropped += 1
                continue
            if not _answered(row):
                dropped += 1
                continue
            if row.get("model") != model or row.get("prompt_style") != prompt_style:
                raise UserInputError(
                    f"{path}: holds answers of {row.get('model')!r} with prompt {row.get('prompt_style')!r}, "
                    f"not of {model!r} with {prompt_style!r}; use another --out, or --overwrite to start again"
                )
            rid = str(row.get("reaction_id"))
            if rid in answered:
                dropped += 1
                continue
            answered[rid] = row
            kept.append(line if line.endswith("\n") else line + "\n")
    if dropped:
        with atomic_writer(path) as handle:
            handle.writelines(kept)
    return answered


class LineAppender:
    """Appends JSON lines to a file; opens the file at the first row (a run that fails before
    any answer leaves no file behind). Safe to call from threads.

    Each row is handed to the operating system at once (a killed process loses nothing written);
    the file is synced to the disk at most every ``SYNC_SECONDS`` and at the end, since a sync
    per row would cost more than the request it records at high concurrency."""

    SYNC_SECONDS = 1.0

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle = None
        self._lock = threading.Lock()
        self._synced = 0.0
        self.written = 0

    def write(self, row: dict[str, Any]) -> None:
        text = json.dumps(row, ensure_ascii=False) + "\n"
        with self._lock:
            if self._handle is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._handle = open(self.path, "a", encoding="utf-8")
            self._handle.write(text)
            self._handle.flush()
            now = time.monotonic()
            if now - self._synced >= self.SYNC_SECONDS:
                os.fsync(self._handle.fileno())
                self._synced = now
            self.written += 1

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.flush()
                os.fsync(self._handle.fileno())
                self._handle.close()
                self._handle = None


@dataclass
class PredictionRun:
    """What :func:`run_model` did: every row (in reaction order, resumed ones included) and counts."""

    rows: list[dict[str, Any]]
    asked: int
    answered: int
    failed: int
    already_done: int
    errors: list[dict[str, Any]] = field(default_factory=list)
    model: str = ""
    prompt_style: str = "default"
    out: Path | None = None
    model_object: Any = field(default=None, repr=False)
    """The predictor that answered (for the result's ``model`` field)."""
    requests: RequestSummary | None = None
    """Requests to a model behind an endpoint: new, from cache, failed, tokens (else ``None``)."""
    run: Run | None = field(default=None, repr=False)
    """The run as the run pipeline records one: the records of the reactions with a row (asked
    now or resumed), their answers, the failed ones with their reason, the model's identity and
    request counts, the calls, cached and repeated records of the chunks asked."""

    def as_dict(self) -> dict[str, Any]:
        """Counts and where the rows went (for logs and results' ``config``)."""
        return {"model": self.model, "prompt_style": self.prompt_style, "asked": self.asked, "answered": self.answered,
                "failed": self.failed, "already_done": self.already_done,
                "out": str(self.out) if self.out is not None else None}


def _answer_row(base: dict[str, Any], answer: Any, failure: str | None, details: dict[str, Any]) -> tuple[dict, str | None]:
    if failure is not None:
        return {**base, "error": failure}, failure
    if isinstance(answer, str):
        return {**base, "response": answer, **details}, None
    if isinstance(answer, list):
        try:
            json.dumps(answer)
        except (TypeError, ValueError, RecursionError) as exc:
            reason = f"the model's step list cannot be stored as JSON ({type(exc).__name__})"
            return {**base, "error": reason}, reason
        return {**base, "mechanism": answer, **details}, None
    reason = f"the model returned a {type(answer).__name__}, not text or a list of steps"
    return {**base, "error": reason}, reason


def _ask_chunk(model: Any, batch: Sequence[PromptJob], style: str, cache: bool) -> tuple[Run, list[dict[str, Any]]]:
    """Ask ``model`` about one chunk through the run pipeline (:func:`chemassay.models.run`),
    with the per-row details the model reports (``details``: the nearest neighbour's id),
    which line up with the chunk when it was asked in one call without cached or repeated
    records."""
    done = run_pipeline(model, MECHANISM_PREDICTOR, [job.record(style) for job in batch], cache=cache)
    details = getattr(done.model_object, "details", None)
    if (done.calls != 1 or done.cached or done.duplicates or not isinstance(details, list)
            or len(details) != len(batch)):
        return done, [{} for _ in batch]
    return done, [extra if isinstance(extra, dict) else {} for extra in details]


def _as_run(run: PredictionRun, jobs: Sequence[PromptJob], model: Any, counts: dict[str, int], started: float) -> Run:
    """The rows of a finished run as a :class:`~chemassay.contract.Run` (see ``PredictionRun.run``)."""
    records = {job.reaction.reaction_id: job.record(run.prompt_style) for job in jobs}
    rows = [row for row in run.rows if row.get("reaction_id") in records]
    outputs = [row["response"] if "response" in row else row.get("mechanism", MECHANISM_PREDICTOR.missing)
               for row in rows]
    return Run(protocol=MECHANISM_PREDICTOR.name, items=[records[row["reaction_id"]] for row in rows], outputs=outputs,
               failures={i: str(row["error"]) for i, row in enumerate(rows) if "error" in row}, model=model_ref(model),
               requests=run.requests, elapsed_s=time.perf_counter() - started, model_object=model, **counts)


def streaming_client(model: Any):
    """The OpenAI-compatible client and system prompt of a chat model that can stream
    answers one by one (a :class:`~chemassay.models.text_model.TextModel` on an
    ``OpenAIBackend``), else ``None``."""
    backend = getattr(model, "backend", None)
    client = getattr(backend, "client", None)
    if client is None or not callable(getattr(client, "complete_many", None)):
        return None
    if not hasattr(model, "predict_mechanisms"):
        return None
    return backend


def _stream(model: Any, backend: Any, batch: Sequence[PromptJob], style: str,
            emit: Callable[[int, Any, str | None, dict[str, Any]], None]) -> None:
    """Ask every job at once on the client's worker pool; ``emit(index, answer, failure,
    details)`` runs (serialized) as each answer arrives (``details``: the reply's reasoning,
    ``reasoning_content`` and ``<think>`` blocks, where it had any)."""
    conversations = []
    for job in batch:
        record = job.record(style)
        prompt = record_prompt(record)
        system = getattr(backend, "system_prompt", None)
        conversations.append(([{"role": "system", "content": system}] if system else [])
                             + [{"role": "user", "content": prompt}])

    def on_result(index: int, outcome: Any) -> None:
        if isinstance(outcome, Exception):
            emit(index, "", f"request failed: {outcome}", {})
        else:  # the answer is parsed; its reasoning is kept beside it
            reasoning = outcome.all_reasoning
            emit(index, outcome.answer, None, {"reasoning": reasoning} if reasoning else {})

    backend.client.complete_many(conversations, concurrency=getattr(backend, "concurrency", 4), on_result=on_result)


def run_model(
    model: Any,
    jobs: Sequence[PromptJob],
    *,
    style: str,
    out: Path | None = None,
    overwrite: bool = False,
    chunk: int | None = None,
    progress: Callable[[int], None] | None = None,
    stream: bool | None = None,
    cache: bool = False,
) -> PredictionRun:
    """Ask ``model`` (a mechanism predictor) about every job; see the module docstring.

    With ``out`` the rows are appended to that JSON Lines file and a rerun resumes it
    (``overwrite`` starts again). Chat models on an OpenAI-compatible server stream
    (``stream``: ``None`` = when the model can, ``False`` = in chunks); other models get
    ``chunk`` reactions per call (default: :func:`chunk_size`) through the run pipeline
    (``cache``: its response cache). Returns every row, including those already in ``out``,
    and the run as a :class:`~chemassay.contract.Run`.
    """
    started = time.perf_counter()
    label = model_label(model)
    spec = getattr(model, "spec", None)
    spec_text = spec.text if spec is not None else label
    done: dict[str, dict[str, Any]] = {}
    if out is not None:
        if overwrite and out.exists():
            out.unlink()
        done = read_answered(out, model=label, prompt_style=style)
    pending = [job for job in jobs if job.reaction.reaction_id not in done]
    run = PredictionRun([], len(pending), 0, 0, len([j for j in jobs if j.reaction.reaction_id in done]),
                        model=label, prompt_style=style, out=out, model_object=model)
    fresh: dict[str, dict[str, Any]] = {}
    chunk = chunk or chunk_size(model)
    appender = LineAppender(out) if out is not None else None
    backend = streaming_client(model) if stream is not False else None
    counts = {"calls": 0, "cached": 0, "duplicates": 0}

    def keep(job: PromptJob, answer: Any, failure: str | None, extra: dict[str, Any]) -> None:
        base = {"reaction_id": job.reaction.reaction_id, "model": label, "spec": spec_text,
                "prompt_style": style, "exemplars": job.exemplars}
        row, failure = _answer_row(base, answer, failure, extra)
        if failure is None:
            run.answered += 1
        else:
            run.failed += 1
            run.errors.append({"item": job.reaction.reaction_id, "reason": failure})
        fresh[job.reaction.reaction_id] = row
        if appender is not None:
            appender.write(row)

    try:
        if backend is not None and pending:
            queued = list(pending)

            def emit(index: int, answer: Any, failure: str | None, details: dict[str, Any]) -> None:
                keep(queued[index], answer, failure, details)
                if progress is not None:
                    progress(1)

            _stream(model, backend, queued, style, emit)
            counts["calls"] += 1
            pending = []
        for start in range(0, len(pending), max(1, chunk)):
            batch = pending[start:start + chunk]
            asked, details = _ask_chunk(model, batch, style, cache)
            for key in counts:
                counts[key] += getattr(asked, key)
            for index, job in enumerate(batch):
                keep(job, asked.outputs[index], asked.failures.get(index), details[index])
            if progress is not None:
                progress(len(batch))
    finally:
        if appender is not None:
            appender.close()
    for job in jobs:
        rid = job.reaction.reaction_id
        row = fresh.get(rid) or done.get(rid)
        if row is not None:
            run.rows.append(row)

    run.requests = request_summary(model)
    run.run = _as_run(run, jobs, model, counts, started)
    return run
