"""Running a language model over oMeBench reactions into a prediction file.

``--model openai:NAME`` talks to any OpenAI-compatible chat endpoint
(:class:`chemassay.models.openai_chat.OpenAIChatClient`, concurrent, with retries);
``--model hf:PATH`` runs a local Hugging Face checkpoint
(:class:`chemassay.models.hf_text.HFTextGenerator`).

The prediction file is JSON Lines, one object per reaction:
``{"reaction_id", "response", "model", "prompt_style", "exemplars", ...}`` or, when the
request failed for good, ``{"reaction_id", "error", ...}``. Each line is appended (and
flushed to disk) as soon as its answer arrives, so an interrupted run loses nothing:
running the same command again **resumes**, asking only for reactions without a
``response`` line (failed ones are asked again; a line cut short by a crash is dropped).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemassay.errors import UserInputError
from chemassay.runtime.files import atomic_writer
from chemassay.suites.mechanism.prompts import PROMPT_STYLES, build_prompt
from chemassay.suites.mechanism.records import Reaction
from chemassay.suites.mechanism.retrieval import ReactionIndex


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``--model`` value: ``openai:NAME`` or ``hf:PATH``."""

    kind: str
    name: str

    @property
    def label(self) -> str:
        return f"{self.kind}:{self.name}"


def parse_model_spec(text: str) -> ModelSpec:
    """Parse ``openai:NAME`` / ``hf:PATH``; a clear error for anything else."""
    kind, sep, name = text.partition(":")
    if not sep or kind not in ("openai", "hf") or not name:
        raise UserInputError(
            f"--model {text!r}: expected openai:MODEL_NAME (any OpenAI-compatible endpoint) or hf:PATH (local checkpoint)"
        )
    return ModelSpec(kind, name)


@dataclass
class PromptJob:
    """One reaction to ask about: its prompt and the exemplars shown."""

    reaction: Reaction
    prompt: str
    exemplars: list[str]


def prepare_jobs(
    reactions: Sequence[Reaction],
    style: str,
    *,
    k: int = 3,
    pool_index: ReactionIndex | None = None,
    exclude_family: bool = True,
) -> list[PromptJob]:
    """Prompts for every reaction; for ``kshot`` the exemplars are retrieved by DRFP."""
    if style not in PROMPT_STYLES:
        raise UserInputError(f"unknown --prompt {style!r}; choose from {', '.join(PROMPT_STYLES)}")
    if style != "kshot":
        return [PromptJob(r, build_prompt(style, r), []) for r in reactions]
    if pool_index is None or len(pool_index) == 0:
        raise UserInputError("--prompt kshot needs a non-empty --pool of exemplar reactions")
    neighbours = pool_index.nearest(reactions, k, exclude_family=exclude_family)
    jobs = []
    for reaction, found in zip(reactions, neighbours, strict=True):
        exemplars = [pool_index.pool[n.index] for n in found]
        jobs.append(PromptJob(reaction, build_prompt("kshot", reaction, exemplars), [e.reaction_id for e in exemplars]))
    return jobs


def read_answered(path: Path, *, model: str, prompt_style: str) -> set[str]:
    """Ids already answered in ``path``; rewrites it without failed or truncated lines.

    Raises :class:`UserInputError` when the file holds answers of another model or prompt
    style (mixing them would make the file meaningless).
    """
    if not path.exists():
        return set()
    kept: list[str] = []
    answered: set[str] = set()
    dropped = 0
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                dropped += 1
                continue
            if not isinstance(row, dict) or not isinstance(row.get("response"), str):
                dropped += 1
                continue
            if row.get("model") != model or row.get("prompt_style") != prompt_style:
                raise UserInputError(
                    f"{path}: holds answers of {row.get('model')!r} with prompt {row.get('prompt_style')!r}; "
                    f"use another --out, or --overwrite to start again"
                )
            if row.get("reaction_id") in answered:
                dropped += 1
                continue
            answered.add(row.get("reaction_id"))
            kept.append(line if line.endswith("\n") else line + "\n")
    if dropped:
        with atomic_writer(path) as handle:
            handle.writelines(kept)
    return answered


class LineAppender:
    """Appends JSON lines to a file, flushing each to disk; safe to call from threads."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(path, "a", encoding="utf-8")
        self._lock = threading.Lock()
        self.written = 0

    def write(self, row: dict[str, Any]) -> None:
        text = json.dumps(row, ensure_ascii=False) + "\n"
        with self._lock:
            self._handle.write(text)
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self.written += 1

    def close(self) -> None:
        self._handle.close()


@dataclass
class RunSummary:
    """Counts of one run."""

    asked: int
    answered: int
    failed: int
    already_done: int
    errors: list[dict[str, Any]]


def _pending(jobs: Sequence[PromptJob], out: Path, model: str, style: str, overwrite: bool) -> tuple[list[PromptJob], int]:
    if overwrite and out.exists():
        out.unlink()
    done = read_answered(out, model=model, prompt_style=style)
    return [job for job in jobs if job.reaction.reaction_id not in done], len(done)


def _row_base(job: PromptJob, spec: ModelSpec, style: str) -> dict[str, Any]:
    """The fields every prediction row starts with, answered or failed."""
    return {"reaction_id": job.reaction.reaction_id, "model": spec.label, "prompt_style": style, "exemplars": job.exemplars}


def _log_outcome(summary: RunSummary, appender, progress, job: PromptJob, row: dict, *, error: str | None = None) -> None:
    """Count one answered (``error`` None) or failed request, append its row, advance progress."""
    if error is None:
        summary.answered += 1
    else:
        summary.failed += 1
        summary.errors.append({"item": job.reaction.reaction_id, "reason": error})
    appender.write(row)
    if progress is not None:
        progress(1)


def run_openai(
    jobs: Sequence[PromptJob],
    out: Path,
    *,
    spec: ModelSpec,
    style: str,
    base_url: str,
    api_key: str | None,
    concurrency: int = 4,
    timeout: float = 120.0,
    retries: int = 5,
    backoff: float = 1.0,
    params: dict[str, Any] | None = None,
    overwrite: bool = False,
    progress=None,
) -> RunSummary:
    """Ask an OpenAI-compatible endpoint about every pending job, appending to ``out``."""
    from chemassay.models.openai_chat import ChatError, OpenAIChatClient

    pending, done = _pending(jobs, out, spec.label, style, overwrite)
    summary = RunSummary(len(pending), 0, 0, done, [])
    if not pending:
        return summary
    client = OpenAIChatClient(
        base_url=base_url, model=spec.name, api_key=api_key, timeout=timeout,
        max_retries=retries, backoff=backoff, params=dict(params or {}),
    )
    appender = LineAppender(out)

    def record(index: int, outcome) -> None:
        job = pending[index]
        base = _row_base(job, spec, style)
        if isinstance(outcome, ChatError):
            row = {**base, "error": str(outcome), "status": outcome.status, "attempts": outcome.attempts}
            _log_outcome(summary, appender, progress, job, row, error=str(outcome))
            return
        row = {
            **base,
            "response": outcome.text,
            "finish_reason": outcome.finish_reason,
            "usage": outcome.usage,
            "attempts": outcome.attempts,
            "elapsed_s": round(outcome.elapsed_s, 3),
        }
        if outcome.reasoning:
            row["reasoning"] = outcome.reasoning
        _log_outcome(summary, appender, progress, job, row)

    try:
        conversations = [[{"role": "user", "content": job.prompt}] for job in pending]
        client.complete_many(conversations, concurrency=concurrency, on_result=record)
    finally:
        client.close()
        appender.close()
    return summary


def run_hf(
    jobs: Sequence[PromptJob],
    out: Path,
    *,
    spec: ModelSpec,
    style: str,
    max_new_tokens: int = 1024,
    temperature: float = 0.0,
    seed: int = 0,
    device: str = "cpu",
    overwrite: bool = False,
    progress=None,
) -> RunSummary:
    """Generate with a local Hugging Face checkpoint for every pending job, appending to ``out``."""
    from chemassay.models.hf_text import HFTextGenerator

    pending, done = _pending(jobs, out, spec.label, style, overwrite)
    summary = RunSummary(len(pending), 0, 0, done, [])
    if not pending:
        return summary
    generator = HFTextGenerator(spec.name, max_new_tokens=max_new_tokens, temperature=temperature, seed=seed, device=device)
    appender = LineAppender(out)

    def record(index: int, outcome) -> None:
        job = pending[index]
        base = _row_base(job, spec, style)
        if isinstance(outcome, Exception):
            reason = f"{type(outcome).__name__}: {outcome}"
            _log_outcome(summary, appender, progress, job, {**base, "error": reason}, error=reason)
        else:
            _log_outcome(summary, appender, progress, job, {**base, "response": outcome.text, "new_tokens": outcome.new_tokens})

    try:
        generator.generate_many([job.prompt for job in pending], on_result=record)
    finally:
        appender.close()
    return summary
