"""A text model (chat endpoint or local checkpoint) as every suite's protocol.

:class:`TextModel` turns anything that answers prompts with text — a
:class:`TextBackend` — into a reaction predictor, a bag predictor, a molecule generator and
a mechanism predictor, with the prompts and answer parsers of
:mod:`chemassay.models.prompts`. A request that fails for good gives an empty prediction and
is recorded in :attr:`TextModel.failures` (index → ``request failed: REASON``) so that suites
count it as a failed item rather than lose it; an answer that does not parse is the model's
answer (the suite scores it as invalid). A model on an endpoint exposes the client's
:class:`~chemassay.models.request_stats.RequestStats` as ``request_stats``.

Two backends ship: :class:`OpenAIBackend` (any OpenAI-compatible server, concurrent, with
retries, a response cache and resume, :mod:`chemassay.models.openai_chat`) and the local
Hugging Face backend of :mod:`chemassay.models.hf`.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from chemassay.errors import UserInputError
from chemassay.models import prompts as P
from chemassay.models.openai_chat import DEFAULT_MAX_ANSWER_BYTES, DEFAULT_TIMEOUT
from chemassay.models.spec import ModelSpec, check_options, option_bool, option_float, option_int


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


class TextModel:
    """Every text protocol on top of a :class:`TextBackend` (see the module docstring).

    ``prompting`` is ``chat`` (instructions from :mod:`.prompts`) or ``raw`` (the input
    itself is the prompt, for models trained on bare SMILES: ranked answers come from beam
    search, samples from an empty prompt).
    """

    def __init__(self, backend: TextBackend, *, name: str, prompting: str = "chat", encoding: str = "smiles",
                 batch: int = 50, temperature: float | None = None) -> None:
        if prompting not in {"chat", "raw"}:
            raise UserInputError(f"prompting must be chat or raw, got {prompting!r}")
        self.backend = backend
        self.name = name
        self.prompting = prompting
        self.encoding = encoding
        self.batch = max(1, int(batch))
        self.temperature = temperature
        self.failures: dict[int, str] = {}

    def describe(self) -> dict[str, Any]:
        """Settings that determine the outputs (backend settings, prompting, batch size)."""
        return {**self.backend.describe(), "prompting": self.prompting, "encoding": self.encoding,
                "batch": self.batch}

    @property
    def request_stats(self) -> Any:
        """The backend's request accounting (``None`` for a local backend)."""
        return getattr(self.backend, "request_stats", None)

    def _answers(self, prompts: Sequence[str], params: Sequence[Mapping[str, Any]] | None = None,
                 parse: Callable[[str], Any] | None = None) -> list[Any]:
        """The answers (``""`` for a failed request, recorded in ``failures``), each passed
        through ``parse`` when given: as it arrives on a backend that reports answers one by
        one, so the parsing overlaps the wait for the others."""
        self.failures = {}
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
            if isinstance(outcome, Exception):
                self.failures[index] = f"request failed: {outcome}"
                outcome = ""
            if parse is None:
                results.append(outcome)
            else:
                results.append(parsed[index] if index in parsed else parse(outcome))
        return results

    # reaction-predictor
    def predict(self, reactants: Sequence[str], k: int = 10) -> list[list[str]]:
        """Up to ``k`` ranked product SMILES per reaction (empty list: nothing usable)."""
        queries = [P.reactants_text(r) for r in reactants]
        if self.prompting == "raw":
            self.failures = {}
            ranked = []
            for index, query in enumerate(queries):
                try:
                    outputs = self.backend.answer_ranked(query, k) or []
                except Exception as exc:  # noqa: BLE001 - one failing input must not stop the run
                    self.failures[index] = f"generation failed: {exc}"
                    outputs = []
                ranked.append(P.parse_ranked_smiles("\n".join(outputs), k) if outputs else [])
            return ranked
        return self._answers([P.reaction_prompt(q, k) for q in queries], parse=lambda text: P.parse_ranked_smiles(text, k))

    # bag-predictor
    def predict_bags(self, sources: Sequence[str]) -> list[str]:
        """The product bag predicted for each reactant bag (empty string: no answer)."""
        if self.prompting == "raw":
            answers = self._answers(list(sources))
            return [text.strip().splitlines()[0].strip() if text.strip() else "" for text in answers]
        return self._answers([P.bag_prompt(s, self.encoding) for s in sources], parse=P.parse_bag_answer)

    # generator
    def sample(self, n: int, seed: int = 0) -> list[str]:
        """``n`` SMILES; every answer line is a sample, valid or not; seeded per request."""
        if n < 0:
            raise UserInputError(f"cannot sample {n} molecules; n must be 0 or more")
        if self.prompting == "raw":
            return list(self.backend.sample_raw(n, seed))[:n]
        samples: list[str] = []
        failures: dict[int, str] = {}
        request = 0
        max_requests = 3 * (-(-n // self.batch)) + 3
        while len(samples) < n and request < max_requests:
            wanted = min(self.batch, n - len(samples))
            missing = -(-(n - len(samples)) // self.batch)
            prompts = [P.generation_prompt(wanted) for _ in range(missing)]
            params = [{"seed": seed * 1_000_003 + request + i,
                       **({"temperature": self.temperature} if self.temperature is not None else {})}
                      for i in range(missing)]
            request += missing
            for index, text in enumerate(self._answers(prompts, params)):
                if index in self.failures:
                    # A failed request is a failed item, not asked again under another seed (a rerun
                    # asks the same seed, so the samples stay reproducible): its slots stay empty.
                    start = len(samples)
                    samples.extend([""] * min(wanted, n - start))
                    failures.update({i: self.failures[index] for i in range(start, len(samples))})
                else:
                    samples.extend(P.parse_smiles_lines(text)[:wanted])
        if len(samples) < n:
            # The model kept answering with fewer lines than asked: the rest are empty (invalid) samples.
            samples.extend([""] * (n - len(samples)))
        self.failures = failures
        return samples[:n]

    # mechanism-predictor
    def predict_mechanisms(self, reactions: Sequence[dict[str, Any]]) -> list[str]:
        """The raw answer for each reaction record (its ``prompt``, else the default prompt)."""
        prompts = [r.get("prompt") or P.mechanism_prompt(r) for r in reactions]
        return self._answers(prompts)


class OpenAIBackend(TextBackend):
    """Chat completions of one model on an OpenAI-compatible server (see openai_chat)."""

    def __init__(self, client, *, concurrency: int = 4, system_prompt: str | None = P.SYSTEM_PROMPT) -> None:
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
        """:meth:`answer`, calling ``on_answer(index, text or error)`` as each outcome arrives."""
        conversations = [
            ([{"role": "system", "content": self.system_prompt}] if self.system_prompt else [])
            + [{"role": "user", "content": prompt}]
            for prompt in prompts
        ]

        def on_result(index: int, outcome: Any) -> None:
            if on_answer is not None:
                on_answer(index, outcome if isinstance(outcome, Exception) else outcome.text)

        outcomes = self.client.complete_many(conversations, concurrency=self.concurrency, params=params,
                                             on_result=on_result)
        return [o if isinstance(o, Exception) else o.text for o in outcomes]


class OpenAIEncoder:
    """robustness: an embeddings endpoint (``/v1/embeddings``) as an encoder (one layer).

    Batches of ``batch_size`` texts go ``concurrency`` at a time. A text whose request failed
    for good (or whose vector has another length than the others) gets a row of NaN and is
    recorded in ``failures`` (index → reason): the suite leaves it out and lists it.
    """

    def __init__(self, client, *, batch_size: int = 64, concurrency: int = 4) -> None:
        self.client = client
        self.batch_size = batch_size
        self.concurrency = max(1, concurrency)
        self.name = f"openai:{client.model}"
        self.failures: dict[int, str] = {}

    @property
    def request_stats(self) -> Any:
        """The client's request accounting."""
        return self.client.stats

    def describe(self) -> dict[str, Any]:
        return {"model": self.client.model, "base_url": self.client.endpoint_label, "endpoint": "embeddings"}

    def encode(self, smiles: Sequence[str], layers: str = "last") -> np.ndarray | list[np.ndarray]:
        """Embeddings ``(n, d)``; ``layers='all'`` gives a one-element list (the endpoint has one layer)."""
        if layers not in ("last", "all"):
            raise UserInputError(f"layers must be 'last' or 'all', got {layers!r}")
        outcomes = self.client.embed(list(smiles), batch_size=self.batch_size, concurrency=self.concurrency)
        self.failures = {i: f"request failed: {o}" for i, o in enumerate(outcomes) if isinstance(o, Exception)}
        lengths = Counter(len(o) for o in outcomes if not isinstance(o, Exception))
        dim = lengths.most_common(1)[0][0] if lengths else 0
        matrix = np.full((len(outcomes), dim), np.nan, dtype=np.float32)
        for index, outcome in enumerate(outcomes):
            if isinstance(outcome, Exception):
                continue
            if len(outcome) != dim:
                self.failures[index] = f"request failed: embedding of length {len(outcome)}, the others have {dim}"
                continue
            matrix[index] = outcome
        return [matrix] if layers == "all" else matrix


OPENAI_OPTIONS = {
    "base_url": "server URL, e.g. http://localhost:8000/v1, or several replicas joined by | "
                "(else --base-url or $OPENAI_BASE_URL)",
    "api_key_env": "name of the environment variable holding the API key (default OPENAI_API_KEY)",
    "temperature": "sampling temperature (default 0; generation default 1)",
    "max_tokens": "answer length limit", "top_p": "nucleus sampling", "seed": "request seed",
    "concurrency": "requests in flight (default 4)",
    "timeout": f"seconds per attempt: connect and the whole reply (default {DEFAULT_TIMEOUT:g})",
    "retries": "retries of transient errors (default 5)", "cache": "reuse stored answers (default true)",
    "refresh": "ask again even when the cache holds an answer, and overwrite it (default false)",
    "revision": "model revision for the cache key (default: the server's /models root, if it reports one)",
    "max_answer_bytes": f"largest answer taken, in UTF-8 bytes (default {DEFAULT_MAX_ANSWER_BYTES})",
    "batch": "molecules asked for per generation request (default 50); texts per embeddings request (64)",
    "encoding": "bag notation of the stoichiometry prompt: smiles or formula",
    "system": "system prompt: default or none (a suite may choose the default, e.g. mechanism sends the paper's prompt alone)",
    "backoff": "seconds before the first retry, doubled each time (default 1)",
}


def _settings():
    from chemassay.runtime.progress import settings

    return settings


def openai_client(spec: ModelSpec, context: Mapping[str, Any]):
    """An :class:`~chemassay.models.openai_chat.OpenAIChatClient` for an ``openai:MODEL`` spec."""
    from chemassay.models.openai_chat import OpenAIChatClient, split_base_urls
    from chemassay.runtime.cache import KeyValueStore

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
    if timeout <= 0 or backoff < 0:
        raise UserInputError(f"--model {spec.text}: timeout must be above 0 and backoff at least 0")
    return OpenAIChatClient(
        base_url=split_base_urls(base_url), model=spec.arg, api_key=os.environ.get(key_env) or None,
        timeout=timeout, max_retries=option_int(spec, "retries", 5, minimum=0), params=params, backoff=backoff,
        max_answer_bytes=option_int(spec, "max_answer_bytes", DEFAULT_MAX_ANSWER_BYTES, minimum=1),
        cache=KeyValueStore("llm-responses") if use_cache else None,
        refresh=option_bool(spec, "refresh", bool(context.get("refresh", _settings().refresh))),
        revision=spec.options.get("revision") or None,
    )


def create_openai(spec: ModelSpec, protocol: str, context: dict[str, Any]):
    """Factory of the ``openai`` kind (registered in :mod:`chemassay.models.catalog`)."""
    client = openai_client(spec, context)
    concurrency = option_int(spec, "concurrency", int(context.get("concurrency", 4)), minimum=1)
    if protocol == "encoder":
        return OpenAIEncoder(client, batch_size=option_int(spec, "batch", 64, minimum=1), concurrency=concurrency)
    system = spec.options.get("system", context.get("system", "default"))
    backend = OpenAIBackend(client, concurrency=concurrency, system_prompt=None if system == "none" else P.SYSTEM_PROMPT)
    temperature = None
    if protocol == "generator" and "temperature" not in spec.options:
        temperature = 1.0  # sampling needs randomness; each request carries its own seed
    encoding = spec.options.get("encoding", context.get("encoding") or "smiles")
    return TextModel(backend, name=f"openai:{spec.arg}", encoding=encoding,
                     batch=option_int(spec, "batch", 50, minimum=1), temperature=temperature)
