"""What a text model would be sent, counted before anything is sent (``chemassay assay --dry-run``).

:func:`prompt_budget` builds the very requests a model kind that answers with text would send
for a list of items — the protocol's own ``prompt(items, options, settings)`` with the settings
and system prompt the kind would use — and counts them: requests, prompt tokens and the bound on
answer tokens (requests × the answer budget each request carries: the spec's ``max_tokens``
(``max_new_tokens`` for ``hf:``), else the protocol's). Tokens are counted with the model's own
tokenizer where one is at hand (an ``hf:`` checkpoint's, with its chat template); for an
``openai:`` model, whose tokenizer is on the server, they are estimated at 4 characters a token
of the messages' text. Identical items are asked once, as the run pipeline asks them. An
embeddings model is sent the texts themselves (a text an earlier call sent is answered by the
response cache: :func:`embedding_calls`) and answers with no tokens.

A model kind that sends no text (a Python object, a predictions file, the built-in baselines)
has no prompt budget (``None``).

>>> from chemassay.contract import Protocol, Request
>>> class Echo(Protocol):
...     name, answered_by, max_tokens = "echo", ("text",), 16
...     def prompt(self, items, options, settings):
...         return [Request(f"Repeat {item}.") for item in items]
>>> budget = prompt_budget("openai:m,system=none", Echo(), ["CCO", "c1ccccc1"], {})
>>> budget.requests, budget.characters, budget.prompt_tokens, budget.answer_tokens, budget.counted_by
(2, 27, 7, 32, 'estimate (4 chars/token)')
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from chemassay.contract import Protocol
from chemassay.contract.errors import require
from chemassay.models.hf import _local_or_hub
from chemassay.models.protocols import get_protocol
from chemassay.models.spec import option_float, option_int, parse_spec
from chemassay.models.text_model import SYSTEM_PROMPT

CHARS_PER_TOKEN = 4
"""Characters per token of the estimate for models whose tokenizer is not at hand."""
ESTIMATE = f"estimate ({CHARS_PER_TOKEN} chars/token)"
HF_DEFAULT_ANSWER = 512
"""``max_new_tokens`` of an ``hf:`` text model whose spec and protocol set none."""


@dataclass(frozen=True)
class PromptBudget:
    """Requests and tokens one model would be sent for a list of items."""

    requests: int
    prompt_tokens: int
    answer_tokens: int | None
    """At most this many answer tokens: requests × the answer budget (``None``: no budget set)."""
    counted_by: str
    """``tokenizer of hf:PATH`` or ``estimate (4 chars/token)``."""
    characters: int = 0
    """Characters of the messages' text (the system prompt included)."""


def _estimate(texts: Sequence[str]) -> int:
    return sum(math.ceil(len(text) / CHARS_PER_TOKEN) for text in texts)


def chunk_requests(count: int, batch: int, *, probe: bool = False) -> int:
    """Requests that send ``count`` texts in chunks of ``batch``; with ``probe`` (an embeddings
    client that does not yet know the endpoint sends one vector per input) the first text goes
    alone when there is more than one to send.

    >>> chunk_requests(4, 2), chunk_requests(4, 2, probe=True), chunk_requests(1, 2, probe=True)
    (2, 3, 1)
    """
    alone = int(probe and count > 1 and batch > 1)
    return alone + math.ceil((count - alone) / batch)


def embedding_calls(texts: Sequence[Sequence[str]] | None, items: Sequence[Any], *, batch: int,
                    cache: bool = True, probe: bool = False) -> tuple[int, list[str]]:
    """The requests an embeddings client sends and the texts it sends in them, for ``texts``
    given per item and per call (call ``c`` embeds ``texts[i][c]`` of every item ``i``; default:
    one call of the items): each call sends, in chunks of ``batch``, the texts no earlier call
    sent (the response cache answers those, when on). With ``probe`` (an endpoint client
    without ``pooling=``) the first call's first text goes alone, then the rest in chunks.

    >>> embedding_calls(None, list("abcd"), batch=2)
    (2, ['a', 'b', 'c', 'd'])
    >>> embedding_calls(None, list("abcd"), batch=2, probe=True)[0]
    3
    """
    groups = [[str(t) for t in group] for group in texts] if texts is not None else [[str(i)] for i in items]
    calls = [list(call) for call in zip(*groups, strict=True)] if groups else []
    seen: set[str] = set()
    requests, sent = 0, []
    for number, call in enumerate(calls):
        todo = [text for text in call if not (cache and text in seen)]
        requests += chunk_requests(len(todo), batch, probe=probe and number == 0)
        sent += todo
        seen.update(call)
    return requests, sent


def prompt_budget(spec: Any, protocol: str | Protocol, items: Sequence[Any], options: Mapping[str, Any],
                  context: Mapping[str, Any] | None = None, *,
                  texts: Sequence[Sequence[str]] | None = None) -> PromptBudget | None:
    """The requests and tokens ``spec`` would be sent for ``items`` (see the module docstring);
    ``texts`` are the strings an embeddings model would embed per item (default: the items);
    ``None`` for a kind that sends no text."""
    parsed = parse_spec(spec)
    found = get_protocol(protocol)
    context = dict(context or {})
    if "text" in found.answered_by:
        items = _distinct(found, items)
    if parsed.kind == "openai":
        return _openai(parsed, found, items, options, context, texts)
    if parsed.kind == "hf":
        return _hf(parsed, found, items, options, context, texts)
    return None


def _distinct(protocol: Protocol, items: Sequence[Any]) -> list[Any]:
    """The items the run pipeline asks: identical items (the protocol's ``key``) once."""
    if not protocol.itemwise:
        return list(items)
    seen: set[str] = set()
    kept = []
    for item in items:
        key = protocol.key(item)
        if key is not None:
            if key in seen:
                continue
            seen.add(key)
        kept.append(item)
    return kept


def _text_settings(spec: Any, context: Mapping[str, Any]) -> dict[str, Any]:
    """The settings a text model offers the protocol's ``prompt`` (as ``text_model`` sets them)."""
    return {"encoding": spec.options.get("encoding", context.get("encoding") or "smiles"),
            "batch": option_int(spec, "batch", 50, minimum=1),
            "temperature": option_float(spec, "temperature", None)}


def _openai(spec: Any, protocol: Protocol, items: Sequence[Any], options: Mapping[str, Any],
            context: Mapping[str, Any], texts: Sequence[Sequence[str]] | None) -> PromptBudget:
    from chemassay.models.spec import option_bool, option_int

    if "text" not in protocol.answered_by:  # the embeddings endpoint
        requests, sent = embedding_calls(texts, items, batch=option_int(spec, "batch", 64, minimum=1),
                                         cache=option_bool(spec, "cache", bool(context.get("cache", True))),
                                         probe=not spec.options.get("pooling"))
        return PromptBudget(requests, _estimate(sent), 0, ESTIMATE, sum(map(len, sent)))
    requests = protocol.prompt(items, options, _text_settings(spec, context))
    system = spec.options.get("system", context.get("system", "default"))
    prefix = "" if system == "none" else SYSTEM_PROMPT
    messages = [prefix + request.prompt for request in requests]
    per_answer = option_int(spec, "max_tokens", None) or protocol.max_tokens
    return PromptBudget(len(requests), _estimate(messages), per_answer * len(requests) if per_answer else None,
                        ESTIMATE, sum(map(len, messages)))


def _hf(spec: Any, protocol: Protocol, items: Sequence[Any], options: Mapping[str, Any],
        context: Mapping[str, Any], texts: Sequence[Sequence[str]] | None) -> PromptBudget:
    from chemassay.models.spec import option_int

    transformers = require("transformers", "hf", "local Hugging Face models")
    tokenizer = transformers.AutoTokenizer.from_pretrained(_local_or_hub(spec.arg), local_files_only=True)
    counted_by = f"tokenizer of hf:{spec.arg}"

    def count(strings: Sequence[str]) -> int:
        return sum(len(ids) for ids in tokenizer(list(strings))["input_ids"]) if strings else 0

    if "text" not in protocol.answered_by:  # a local encoder embeds every text it is given
        requests, sent = embedding_calls(texts, items, batch=option_int(spec, "batch_size", 32, minimum=1),
                                         cache=False)
        return PromptBudget(requests, count(sent), 0, counted_by, sum(map(len, sent)))
    chat = spec.options.get("prompting", "chat" if getattr(tokenizer, "chat_template", None) else "raw") == "chat"
    if chat:
        prompts = [request.prompt for request in protocol.prompt(items, options, _text_settings(spec, context))]
        if getattr(tokenizer, "chat_template", None):
            prompts = [tokenizer.apply_chat_template([{"role": "user", "content": p}], tokenize=False,
                                                     add_generation_prompt=True) for p in prompts]
    else:  # raw prompting: the item itself is the prompt
        prompts = [str(item) for item in items]
    per_answer = option_int(spec, "max_new_tokens", None) or protocol.max_tokens or HF_DEFAULT_ANSWER
    return PromptBudget(len(prompts), count(prompts), per_answer * len(prompts), counted_by, sum(map(len, prompts)))
