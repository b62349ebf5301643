"""One pipeline runs every model: :func:`run` asks a model of any kind for a protocol's outputs.

It does the shared work once, whatever the kind (a ``python:`` object, a predictions file, a
chat endpoint, a local checkpoint, a built-in baseline):

* resolves the model (a spec string or an object) for the protocol and names it
  (:func:`~chemassay.models.identity.model_ref`);
* asks identical items once (the protocol's :meth:`~chemassay.contract.Protocol.key`);
* with ``cache=True``, answers the items it has answered before from the response cache
  (``cache/model-outputs.sqlite``), keyed by the model's identity (spec, checksum, settings
  and, for a ``python:`` model, the sha256 of its source file), the protocol, the options
  and the item; a failed item is never cached, an unreadable one is (as unreadable, with why);
* asks the rest in batches of ``batch_size`` (all at once by default), checks the shape of
  what comes back, and keeps every failed item with its reason and every item whose answer
  was unreadable with why (``Run.unreadable``);
* counts the calls, the cached and the duplicate items, and the requests of a model behind
  an endpoint.

It returns a :class:`~chemassay.contract.Run`, which a suite scores and hands to
``make_result(run=...)``.

>>> from chemassay.models import from_callable, run
>>> calls = []
>>> def upper(sources):
...     calls.append(list(sources))
...     return [s.upper() for s in sources]
>>> done = run(from_callable(upper, "bag-predictor"), "bag-predictor", ["{1}co", "{1}co", "{1}o"])
>>> done.outputs, done.duplicates, calls
(['{1}CO', '{1}CO', '{1}O'], 1, [['{1}co', '{1}o']])
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from chemassay.contract import Protocol, Run
from chemassay.contract.errors import UserInputError
from chemassay.models.identity import model_ref
from chemassay.models.protocols import get_protocol
from chemassay.models.registry import resolve_model
from chemassay.models.request_stats import request_summary
from chemassay.runtime.cache import KeyValueStore, key_digest

CACHE_NAMESPACE = "model-outputs"


UNREADABLE_KEY = "unreadable answer"
"""The key of a response-cache entry that stores an unreadable item (its value: why)."""


def _ask(protocol: Protocol, model: Any, items: list[Any], options: Mapping[str, Any],
         spec: str) -> tuple[list[Any], dict[int, str], dict[int, str]]:
    """One call of the model for ``items``: per-item outputs, failures (index → reason) and
    unreadable answers (index → why)."""
    answer_items = getattr(model, "answer_items", None)
    unreadable: dict[int, str] = {}
    if callable(answer_items) and getattr(model, "protocol", None) is protocol:
        outcome = answer_items(items, options)
        outputs, failures = list(outcome.outputs), dict(outcome.failures)
        unreadable = {int(i): str(r) for i, r in (getattr(outcome, "unreadable", None) or {}).items()}
    else:
        returned = protocol.call(model, items, options)
        try:
            outputs = protocol.split(returned, len(items), options)
        except ValueError as exc:
            raise UserInputError(f"model {spec}: {exc}") from None
        failures = {int(i): str(r) for i, r in (getattr(model, "failures", None) or {}).items()}
        unreadable = {int(i): str(r) for i, r in (getattr(model, "unreadable", None) or {}).items()}
    if len(outputs) != len(items):
        raise UserInputError(f"model {spec}: {len(outputs)} answers for {len(items)} inputs")
    for index in failures:
        if 0 <= index < len(outputs) and outputs[index] is None:
            outputs[index] = protocol.missing
    return outputs, failures, {i: r for i, r in unreadable.items() if i not in failures and 0 <= i < len(outputs)}


def _stored(protocol: Protocol, value: Any) -> tuple[Any, str | None]:
    """An output from its response-cache entry, and why its answer was unreadable (else ``None``)."""
    if isinstance(value, dict) and set(value) == {UNREADABLE_KEY}:
        return protocol.missing, str(value[UNREADABLE_KEY])
    return protocol.decode_output(value), None


def _cache_key(ref: Any, model: Any, protocol: Protocol, options: Mapping[str, Any], item_key: Any) -> str:
    return key_digest({"spec": ref.spec, "checksum": ref.checksum, "parameters": ref.parameters,
                       "source": getattr(model, "source_sha256", None), "protocol": protocol.name,
                       "options": dict(options), "item": item_key})


def run(model: Any, protocol: str | Protocol, items: Sequence[Any], options: Mapping[str, Any] | None = None, *,
        context: Mapping[str, Any] | None = None, cache: bool = False, batch_size: int | None = None) -> Run:
    """Run ``model`` over ``items`` for ``protocol`` (see the module docstring).

    ``model`` is a spec string or a model object; ``options`` are the protocol's call options
    (``{"k": 10}``, ``{"seed": 0}``, ``{"layers": "all"}``); ``context`` the settings a model
    kind reads when loading (``device``, ``n_jobs``...); ``cache`` turns the response cache on;
    ``batch_size`` caps the items per call.
    """
    started = time.perf_counter()
    found = get_protocol(protocol)
    options = dict(options or {})
    resolved = resolve_model(model, found.name, dict(context or {}))
    ref = model_ref(resolved)
    items = list(items)
    if batch_size is not None and batch_size < 1:
        raise UserInputError(f"batch_size must be at least 1, got {batch_size}")
    outputs: list[Any] = [found.missing] * len(items)
    failures: dict[int, str] = {}
    unreadable: dict[int, str] = {}
    calls = cached = duplicates = 0
    if not found.itemwise:
        outputs, failures, unreadable = _ask(found, resolved, items, options, ref.spec)
        calls = 1
    else:
        # identical items are asked once: ``first[key]`` is the index that answers for them all
        first: dict[Any, int] = {}
        owner: list[int] = []
        for index, item in enumerate(items):
            key = found.key(item)
            if key is None:
                owner.append(index)
                continue
            owner.append(first.setdefault(key, index))
        unique = [i for i in range(len(items)) if owner[i] == i]
        duplicates = len(items) - len(unique)
        store = KeyValueStore(CACHE_NAMESPACE) if cache else None
        digests: dict[int, str] = {}
        if store is not None:
            digests = {i: _cache_key(ref, resolved, found, options, found.key(items[i])) for i in unique
                       if found.key(items[i]) is not None}
            stored = store.get_many(list(set(digests.values())))
            for index, digest in digests.items():
                if digest in stored:
                    outputs[index], why = _stored(found, stored[digest])
                    if why is not None:
                        unreadable[index] = why
                    cached += 1
            pending = [i for i in unique if digests.get(i) not in stored]
        else:
            pending = unique
        step = batch_size or max(1, len(pending))
        for start in range(0, len(pending), step):
            chunk = pending[start:start + step]
            answers, failed, unread = _ask(found, resolved, [items[i] for i in chunk], options, ref.spec)
            calls += 1
            fresh = {}
            for position, index in enumerate(chunk):
                outputs[index] = answers[position]
                if position in failed:
                    failures[index] = failed[position]
                    continue
                if position in unread:
                    unreadable[index] = unread[position]
                if index in digests:
                    fresh[digests[index]] = ({UNREADABLE_KEY: unread[position]} if position in unread
                                             else found.encode_output(answers[position]))
            if store is not None and fresh:
                store.put_many(list(fresh.items()))
        for index, source in enumerate(owner):
            if source != index:
                outputs[index] = outputs[source]
                if source in failures:
                    failures[index] = failures[source]
                if source in unreadable:
                    unreadable[index] = unreadable[source]
    return Run(protocol=found.name, items=items, outputs=outputs, failures=dict(sorted(failures.items())),
               unreadable=dict(sorted(unreadable.items())), model=ref,
               requests=request_summary(resolved), calls=calls, cached=cached, duplicates=duplicates,
               elapsed_s=time.perf_counter() - started, options=options, model_object=resolved)
