"""A text model (chat endpoint or local checkpoint) answering any protocol.

:func:`text_model` turns anything that answers prompts with text — a :class:`TextBackend` —
into a model of any protocol that text can answer: the protocol (each suite's
``protocol.py``) writes the prompts and parses the answers
(:meth:`~chemassay.contract.Protocol.answer_text`); this module only asks. A request that fails
for good gives the protocol's missing output and is recorded in ``failures`` (index →
``request failed: REASON``) so that suites count it as a failed item rather than lose it; an
answer the protocol reads nothing from is recorded in ``unreadable`` (index → why) and counted
in ``request_stats``; an answer that reads as an invalid molecule is the model's answer (the
suite scores it as invalid). ``extract`` says how answers are read: ``lenient`` (as a chemist
reads them) or ``strict`` (the papers' reading). A model on
an endpoint exposes the client's :class:`~chemassay.models.request_stats.RequestStats` as
``request_stats``.

Two backends ship: :class:`OpenAIBackend` (any OpenAI-compatible server, concurrent, with
retries, a response cache and resume, :mod:`chemassay.models.openai_chat`) and the local
Hugging Face backend of :mod:`chemassay.models.hf`. An embeddings endpoint answers the
protocols that list the ``embeddings`` capability (:func:`embeddings_model`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from chemassay.contract import EXTRACT_MODES, Protocol, Request, TextAsker
from chemassay.contract.errors import UserInputError
from chemassay.models.adapters import ProtocolModel, protocol_model
from chemassay.models.openai_batch import DEFAULT_POLL_INTERVAL, BatchChatClient, batch_state_dir
from chemassay.models.openai_chat import (
    DEFAULT_MAX_ANSWER_BYTES,
    DEFAULT_MAX_DIMENSION,
    DEFAULT_SECONDS_PER_TOKEN,
    DEFAULT_TIMEOUT,
    POOLINGS,
)
from chemassay.models.protocols import get_protocol
from chemassay.models.spec import ModelSpec, check_options, option_bool, option_float, option_int
from chemassay.runtime.cache import KeyValueStore
from chemassay.runtime.progress import settings, warn

SYSTEM_PROMPT = "You are an expert organic chemist. Answer exactly in the format asked for, without explanations."
"""The system prompt chat models get unless the spec (``system=none``) or the suite says otherwise."""


class TextBackend:
    """Something that answers prompts with text (see :class:`OpenAIBackend`)."""

    name: str = "text"

    def answer(self, prompts: Sequence[str], params: Sequence[Mapping[str, Any]] | None = None) -> list[str | Exception]:
        """One answer (or the exception that ended its request) per prompt, in order."""
        raise NotImplementedError

    def sample_raw(self, n: int, seed: int) -> list[str]:
        """``n`` unprompted samples (a language model trained on SMILES); chat backends cannot."""
        raise UserInputError(f"{self.name}: cannot sample without a prompt; use prompting=chat")

    def answer_ranked(self, prompt: str, k: int) -> list[str] | None:
        """``k`` ranked raw continuations of one prompt (beam search), or ``None`` when the
        backend cannot rank (a chat endpoint: the ranking is asked for in the prompt)."""
        return None

    def describe(self) -> dict[str, Any]:
        """Settings that determine the answers."""
        return {}


class BackendAsker(TextAsker):
    """A :class:`TextBackend` as the protocols' :class:`~chemassay.contract.TextAsker`."""

    def __init__(self, backend: TextBackend, *, prompting: str, settings: Mapping[str, Any],
                 budget: Mapping[str, Any] | None = None) -> None:
        self.backend = backend
        self.prompting = prompting
        self.settings = dict(settings)
        self.budget = dict(budget or {})

    def ask(self, requests: Sequence[Request], parse: Callable[[str], Any] | None = None) -> list[Any]:
        """The answers (or the exception that ended each request), each passed through
        ``parse`` as it arrives on a backend that reports answers one by one, so the parsing
        overlaps the wait for the others."""
        prompts = [request.prompt for request in requests]
        params = [{**self.budget, **request.params} for request in requests]
        parsed: dict[int, Any] = {}

        def on_answer(index: int, outcome: str | Exception) -> None:
            if parse is not None and not isinstance(outcome, Exception):
                parsed[index] = parse(outcome)

        answer_each = getattr(self.backend, "answer_each", None)
        if callable(answer_each):
            outcomes = answer_each(prompts, params, on_answer)
        else:
            outcomes = self.backend.answer(prompts, params)
        results: list[Any] = []
        for index, outcome in enumerate(outcomes):
            if isinstance(outcome, Exception) or parse is None:
                results.append(outcome)
            else:
                results.append(parsed[index] if index in parsed else parse(outcome))
        return results

    def answer_ranked(self, prompt: str, k: int) -> list[str] | None:
        return self.backend.answer_ranked(prompt, k)

    def sample_raw(self, n: int, seed: int) -> list[str]:
        return self.backend.sample_raw(n, seed)


class TextModel(ProtocolModel):
    """A protocol's model answered by a :class:`TextBackend` (built by :func:`text_model`)."""

    backend: TextBackend
    prompting: str

    @property
    def request_stats(self) -> Any:
        """The backend's request accounting (``None`` for a local backend)."""
        return getattr(self.backend, "request_stats", None)


def text_model(backend: TextBackend, protocol: str | Protocol, *, name: str, prompting: str = "chat",
               encoding: str = "smiles", batch: int = 50, temperature: float | None = None,
               budget: Mapping[str, Any] | None = None, extract: str = "lenient") -> Any:
    """A model of ``protocol`` whose answers come from ``backend``.

    ``prompting`` is ``chat`` (the protocol's instructions) or ``raw`` (the input itself is the
    prompt, for models trained on bare SMILES: the protocol decides, e.g. ranked answers from
    beam search, samples from an empty prompt). ``encoding``, ``batch``, ``temperature`` and
    ``extract`` (``lenient``: answers read as a chemist reads them, Markdown, JSON, reaction
    SMILES and equations included; ``strict``: the papers' reading of bare lines) are settings
    the protocols may read. ``budget`` holds request fields sent with every
    request (the protocol's ``max_tokens`` and ``stop`` where the spec sets none).
    """
    if prompting not in {"chat", "raw"}:
        raise UserInputError(f"prompting must be chat or raw, got {prompting!r}")
    if extract not in EXTRACT_MODES:
        raise UserInputError(f"extract must be {' or '.join(EXTRACT_MODES)}, got {extract!r}")
    found = get_protocol(protocol)
    batch = max(1, int(batch))
    asker = BackendAsker(backend, prompting=prompting, budget=budget,
                         settings={"encoding": encoding, "batch": batch, "temperature": temperature, "extract": extract})

    def answer(items: Sequence[Any], options: Mapping[str, Any]):
        return found.answer_text(asker, items, options)

    describe = {**backend.describe(), "prompting": prompting, "encoding": encoding, "batch": batch, "extract": extract,
                **({"budget": dict(budget)} if budget else {})}
    return protocol_model(found, answer, name=name, describe=describe, base=TextModel, backend=backend,
                          prompting=prompting, encoding=encoding, batch=batch, temperature=temperature, extract=extract)


class OpenAIBackend(TextBackend):
    """Chat completions of one model on an OpenAI-compatible server (see openai_chat)."""

    def __init__(self, client, *, concurrency: int = 4, system_prompt: str | None = SYSTEM_PROMPT) -> None:
        self.client = client
        self.concurrency = max(1, concurrency)
        self.system_prompt = system_prompt
        self.name = client.model

    @property
    def request_stats(self) -> Any:
        """The client's request accounting."""
        return self.client.stats

    def describe(self) -> dict[str, Any]:
        return {"model": self.client.model, "base_url": self.client.endpoint_label, **self.client.params}

    def answer(self, prompts: Sequence[str], params: Sequence[Mapping[str, Any]] | None = None) -> list[str | Exception]:
        return self.answer_each(prompts, params)

    def answer_each(self, prompts: Sequence[str], params: Sequence[Mapping[str, Any]] | None = None,
                    on_answer: Callable[[int, str | Exception], None] | None = None) -> list[str | Exception]:
        """:meth:`answer`, calling ``on_answer(index, text or error)`` as each outcome arrives.
        The text is the reply's answer without its reasoning (``reasoning_content`` and
        ``<think>`` blocks), which the response cache keeps with the whole reply."""
        conversations = [
            ([{"role": "system", "content": self.system_prompt}] if self.system_prompt else [])
            + [{"role": "user", "content": prompt}]
            for prompt in prompts
        ]

        def on_result(index: int, outcome: Any) -> None:
            if on_answer is not None:
                on_answer(index, outcome if isinstance(outcome, Exception) else outcome.answer)

        outcomes = self.client.complete_many(conversations, concurrency=self.concurrency, params=params,
                                             on_result=on_result)
        return [o if isinstance(o, Exception) else o.answer for o in outcomes]


class EmbeddingsModel(ProtocolModel):
    """A protocol's model answered by an embeddings endpoint (built by :func:`embeddings_model`)."""

    client: Any

    @property
    def request_stats(self) -> Any:
        """The client's request accounting."""
        return self.client.stats


def embeddings_model(client, protocol: str | Protocol, *, batch_size: int = 64, concurrency: int = 4) -> Any:
    """An embeddings endpoint (``/v1/embeddings``) as a model of ``protocol`` (one that lists the
    ``embeddings`` capability and says how vectors answer it: ``answer_embeddings``).

    Batches of ``batch_size`` texts go ``concurrency`` at a time; a text whose request failed
    for good is recorded in ``failures`` (index → reason)."""
    found = get_protocol(protocol)
    concurrency = max(1, concurrency)

    def embed(texts: list[str]) -> list[Any]:
        return client.embed(texts, batch_size=batch_size, concurrency=concurrency)

    def answer(items: Sequence[Any], options: Mapping[str, Any]):
        return found.answer_embeddings(embed, items, options)

    describe = {"model": client.model, "base_url": client.endpoint_label, "endpoint": "embeddings"}
    return protocol_model(found, answer, name=f"openai:{client.model}", describe=describe, base=EmbeddingsModel,
                          client=client, batch_size=batch_size, concurrency=concurrency)


OPENAI_OPTIONS = {
    "base_url": "server URL, e.g. http://localhost:8000/v1, or several replicas joined by | "
                "(else --base-url or $OPENAI_BASE_URL)",
    "api_key_env": "name of the environment variable holding the API key (default OPENAI_API_KEY)",
    "temperature": "sampling temperature (default 0; generation default 1)",
    "max_tokens": "answer length limit (default: the protocol's answer budget, e.g. 256 tokens for a bag)", "top_p": "nucleus sampling", "seed": "request seed",
    "concurrency": "requests in flight (default 4)",
    "timeout": f"longest silence of a request, in seconds: connecting, waiting for an answer while the server makes "
               f"no progress, between two pieces of a streamed answer (default {DEFAULT_TIMEOUT:g})",
    "seconds_per_token": "time allowed per token of the answer budget and input, on top of timeout: the cap on one "
                         f"attempt (default {DEFAULT_SECONDS_PER_TOKEN:g})",
    "retries": "retries of transient errors (default 5)", "cache": "reuse stored answers (default true)",
    "refresh": "ask again even when the cache holds an answer, and overwrite it (default false)",
    "revision": "model revision for the cache key (default: the server's /models root, if it reports one)",
    "max_answer_bytes": f"largest answer taken, in UTF-8 bytes (default {DEFAULT_MAX_ANSWER_BYTES})",
    "stream": "stream chat replies where the server does, so a request given up stops its generation (default true)",
    "pooling": f"pool an embeddings reply of one vector per token: {' or '.join(POOLINGS)} (default: refuse it)",
    "max_dimension": f"longest embedding taken; bounds an embeddings reply (default {DEFAULT_MAX_DIMENSION})",
    "batch": "molecules asked for per generation request (default 50); texts per embeddings request (64)",
    "encoding": "bag notation of the stoichiometry prompt: smiles or formula",
    "extract": "how answers are read: lenient (default: Markdown, JSON, reaction SMILES, equations, as a chemist "
               "reads them) or strict (the papers' exact reading of bare lines)",
    "system": "system prompt: default or none (a suite may choose the default, e.g. mechanism sends the paper's prompt alone)",
    "backoff": "seconds before the first retry, doubled each time (default 1)",
    "batch_api": "send the chat requests through the server's Batch API (POST /v1/batches): answered within "
                 "24 h, at about half the price on providers that offer one; a rerun resumes the batch "
                 "(default false)",
    "batch_poll": "with batch_api: seconds between two looks at a running batch (default 30)",
}


def _settings():
    return settings


def openai_client(spec: ModelSpec, context: Mapping[str, Any]):
    """An :class:`~chemassay.models.openai_chat.OpenAIChatClient` for an ``openai:MODEL`` spec."""
    from chemassay.models.openai_chat import OpenAIChatClient, split_base_urls

    check_options(spec, set(OPENAI_OPTIONS))
    base_url = spec.options.get("base_url") or context.get("base_url") or os.environ.get("OPENAI_BASE_URL")
    if not base_url:
        raise UserInputError(
            f"--model {spec.text}: no server URL; add base_url=URL to the spec, pass --base-url, "
            "or set OPENAI_BASE_URL (e.g. http://localhost:8000/v1 for vLLM, https://api.openai.com/v1)"
        )
    key_env = spec.options.get("api_key_env", "OPENAI_API_KEY")
    params: dict[str, Any] = {}
    for key in ("temperature", "top_p"):
        value = option_float(spec, key, None)
        if value is not None:
            params[key] = value
    for key in ("max_tokens", "seed"):
        value = option_int(spec, key, None)
        if value is not None:
            params[key] = value
    if "temperature" not in params:
        params["temperature"] = 0.0
    use_cache = option_bool(spec, "cache", bool(context.get("cache", True)))
    timeout = option_float(spec, "timeout", float(context.get("timeout", DEFAULT_TIMEOUT)))
    backoff = option_float(spec, "backoff", float(context.get("backoff", 1.0)))
    seconds_per_token = option_float(spec, "seconds_per_token", DEFAULT_SECONDS_PER_TOKEN)
    if timeout <= 0 or backoff < 0 or seconds_per_token < 0:
        raise UserInputError(f"--model {spec.text}: timeout must be above 0, backoff and seconds_per_token at least 0")
    return OpenAIChatClient(
        base_url=split_base_urls(base_url), model=spec.arg, api_key=os.environ.get(key_env) or None,
        timeout=timeout, max_retries=option_int(spec, "retries", 5, minimum=0), params=params, backoff=backoff,
        max_answer_bytes=option_int(spec, "max_answer_bytes", DEFAULT_MAX_ANSWER_BYTES, minimum=1),
        cache=KeyValueStore("llm-responses") if use_cache else None,
        refresh=option_bool(spec, "refresh", bool(context.get("refresh", _settings().refresh))),
        revision=spec.options.get("revision") or None, stream=option_bool(spec, "stream", True),
        pooling=_pooling(spec), max_dimension=option_int(spec, "max_dimension", DEFAULT_MAX_DIMENSION, minimum=1),
        seconds_per_token=seconds_per_token,
    )


def _pooling(spec: ModelSpec) -> str | None:
    """The spec's ``pooling`` (``mean`` or ``last``), else ``None``."""
    value = spec.options.get("pooling") or None
    if value is not None and value not in POOLINGS:
        raise UserInputError(f"--model {spec.text}: pooling must be {' or '.join(POOLINGS)}, got {value!r}")
    return value


def create_openai(spec: ModelSpec, protocol: str, context: dict[str, Any]):
    """Factory of the ``openai`` kind (registered in :mod:`chemassay.models.catalog`): chat
    completions for a protocol text answers, the embeddings endpoint for one only vectors do."""
    found = get_protocol(protocol)
    client = openai_client(spec, context)
    concurrency = option_int(spec, "concurrency", int(context.get("concurrency", 4)), minimum=1)
    if "text" not in found.answered_by:
        if option_bool(spec, "batch_api", False):
            warn(f"--model {spec.text}: batch_api sends chat requests only; the {found.name} protocol is answered "
                 "by the embeddings endpoint, asked directly")
        return embeddings_model(client, found, batch_size=option_int(spec, "batch", 64, minimum=1),
                                concurrency=concurrency)
    system = spec.options.get("system", context.get("system", "default"))
    if option_bool(spec, "batch_api", bool(context.get("batch_api", False))):
        client = batch_client(spec, client, context)
    backend = OpenAIBackend(client, concurrency=concurrency, system_prompt=None if system == "none" else SYSTEM_PROMPT)
    temperature = option_float(spec, "temperature", None)
    encoding = spec.options.get("encoding", context.get("encoding") or "smiles")
    return text_model(backend, found, name=f"openai:{spec.arg}", encoding=encoding,
                      batch=option_int(spec, "batch", 50, minimum=1), temperature=temperature,
                      budget=answer_budget(spec, found), extract=extract_option(spec, context))


def extract_option(spec: ModelSpec, context: Mapping[str, Any]) -> str:
    """The ``extract`` setting of a text model's spec (else the context's, else ``lenient``),
    checked: a value other than ``lenient`` or ``strict`` is a clear error."""
    value = str(spec.options.get("extract") or context.get("extract") or "lenient")
    if value not in EXTRACT_MODES:
        raise UserInputError(f"--model {spec.text}: extract must be {' or '.join(EXTRACT_MODES)}, got {value!r}")
    return value


def batch_client(spec: ModelSpec, client: Any, context: Mapping[str, Any]) -> Any:
    """``client`` behind the server's Batch API (:mod:`chemassay.models.openai_batch`): the
    resume state goes under the run's output folder (``context["out_dir"]``) when it has one."""
    poll = option_float(spec, "batch_poll", float(context.get("batch_poll", DEFAULT_POLL_INTERVAL)))
    if poll < 0:
        raise UserInputError(f"--model {spec.text}: batch_poll must be 0 or more seconds")
    return BatchChatClient(client, poll_interval=poll, state_dir=batch_state_dir(context.get("out_dir")))


def answer_budget(spec: ModelSpec, protocol: Protocol) -> dict[str, Any]:
    """The answer budget sent with every request: the protocol's ``max_tokens`` unless the
    spec sets its own (``max_tokens=N``), and its stop sequences unless the spec sets ``stop``."""
    budget: dict[str, Any] = {}
    if "max_tokens" not in spec.options and protocol.max_tokens:
        budget["max_tokens"] = protocol.max_tokens
    if protocol.stop:
        budget["stop"] = list(protocol.stop)
    return budget
