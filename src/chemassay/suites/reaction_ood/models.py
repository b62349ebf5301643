"""Live reaction predictors for ``predict`` and ``iterate``: the baseline, Python objects, HTTP.

A model is named by a spec string:

``baseline:PATH`` (or a path ending in ``.npz``)
    a template-kNN model trained with ``chemassay reaction-ood train-baseline``.
``python:MODULE:ATTRIBUTE``
    an object with ``predict(reactants, k) -> list[list[str]]`` (the
    :class:`~chemassay.models.ReactionPredictor` protocol), a zero-argument factory
    returning one, or a plain function ``f(reactants, k)``.
``http://HOST:PORT/PATH`` (or ``https://``)
    a served model: chemassay POSTs ``{"reactants": [...], "k": k}`` as JSON and expects
    ``{"predictions": [[...], ...]}`` (one ranked list per query, same order) back.
"""

from __future__ import annotations

import importlib
import inspect
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path

from chemassay.errors import UserInputError
from chemassay.models.protocols import ReactionPredictor


class CallablePredictor:
    """Adapts ``f(reactants, k)`` to the :class:`ReactionPredictor` protocol."""

    def __init__(self, fn: Callable[[Sequence[str], int], list[list[str]]], name: str) -> None:
        self.fn = fn
        self.name = name

    def predict(self, reactants: Sequence[str], k: int = 10) -> list[list[str]]:
        return self.fn(reactants, k)


class HttpPredictor:
    """A reaction predictor served over HTTP (JSON in, JSON out), queried in batches."""

    def __init__(self, url: str, *, batch_size: int = 64, timeout: float = 300.0) -> None:
        self.url = url
        self.name = url
        self.batch_size = batch_size
        self.timeout = timeout

    def predict(self, reactants: Sequence[str], k: int = 10) -> list[list[str]]:
        out: list[list[str]] = []
        for start in range(0, len(reactants), self.batch_size):
            batch = list(reactants[start:start + self.batch_size])
            out.extend(self._post(batch, k))
        return out

    def _post(self, batch: list[str], k: int) -> list[list[str]]:
        body = json.dumps({"reactants": batch, "k": k}).encode("utf-8")
        request = urllib.request.Request(
            self.url, data=body, headers={"Content-Type": "application/json"}, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise UserInputError(f"{self.url}: the model server answered HTTP {exc.code}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise UserInputError(f"{self.url}: cannot reach the model server ({exc})") from None
        except json.JSONDecodeError:
            raise UserInputError(f"{self.url}: the model server did not answer with JSON") from None
        predictions = payload.get("predictions") if isinstance(payload, dict) else None
        if not isinstance(predictions, list) or len(predictions) != len(batch):
            raise UserInputError(
                f"{self.url}: expected {{'predictions': [...]}} with {len(batch)} lists, got {str(payload)[:120]}"
            )
        return [[str(p) for p in (item or [])][:k] for item in predictions]


def load_predictor(spec: str) -> ReactionPredictor:
    """The live model a spec string names (see the module docstring)."""
    if spec.startswith(("http://", "https://")):
        return HttpPredictor(spec)
    if spec.startswith("python:"):
        return _python_predictor(spec[len("python:"):])
    path = spec[len("baseline:"):] if spec.startswith("baseline:") else spec
    if spec.startswith("baseline:") or path.endswith(".npz"):
        from chemassay.suites.reaction_ood.baseline import TemplateKnnModel

        return TemplateKnnModel.load(Path(path))
    raise UserInputError(
        f"--model {spec!r}: use baseline:PATH, python:MODULE:ATTRIBUTE or an http(s):// URL"
    )


def _takes_no_arguments(obj) -> bool:
    try:
        parameters = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)


def _python_predictor(target: str) -> ReactionPredictor:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise UserInputError(f"--model python:{target}: expected python:MODULE:ATTRIBUTE")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserInputError(f"--model python:{target}: cannot import {module_name!r} ({exc})") from None
    obj = getattr(module, attribute, None)
    if obj is None:
        raise UserInputError(f"--model python:{target}: {module_name!r} has no attribute {attribute!r}")
    if hasattr(obj, "predict") and not isinstance(obj, type):
        return obj
    if callable(obj) and _takes_no_arguments(obj):
        made = obj()
        if hasattr(made, "predict"):
            return made
        raise UserInputError(f"--model python:{target}: the factory returned no object with predict()")
    if callable(obj) and not isinstance(obj, type):
        return CallablePredictor(obj, f"{module_name}.{attribute}")
    raise UserInputError(f"--model python:{target}: not a predictor, factory or function")
