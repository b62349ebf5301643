"""The ``model`` field of a result: which model produced the outputs being scored.

:func:`model_ref` describes a live model (loaded from a spec or passed as an object);
:func:`predictions_ref` describes a file of predictions scored as it is. Both return a
:class:`~chemassay.contract.result.ModelRef` whose checksum identifies the model: the sha256
of its checkpoint or predictions file when it has one, else of its kind and parameters.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from chemassay.contract.result import ModelRef
from chemassay.models.spec import ModelSpec, parse_spec
from chemassay.runtime.files import sha256_file


def settings_checksum(kind: str, parameters: dict[str, Any]) -> str:
    """sha256 of a kind and its parameters (canonical JSON): the identity of a file-less model."""
    text = json.dumps({"kind": kind, "parameters": parameters}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _describe(model: Any) -> dict[str, Any]:
    describe = getattr(model, "describe", None)
    if callable(describe):
        try:
            described = describe()
        except Exception:  # noqa: BLE001 - a broken describe() must not lose the result
            described = None
        if isinstance(described, dict):
            return described
    return {}


def model_ref(model: Any, spec: str | ModelSpec | None = None, *, name: str | None = None) -> ModelRef:
    """A :class:`ModelRef` for a model object (``spec`` defaults to ``model.spec``).

    The display name is ``name``, else the model's ``display_name`` or ``name`` attribute,
    else the spec. The checksum is ``model.checksum()`` when the model defines it (trained
    models hash their checkpoint), else :func:`settings_checksum` of kind and parameters.
    """
    parsed = parse_spec(spec) if spec is not None else getattr(model, "spec", None)
    if parsed is None:
        module = type(model).__module__
        parsed = ModelSpec("python", f"{module}:{type(model).__qualname__}")
    parameters = _describe(model) or dict(parsed.options)
    checksum = None
    checksum_fn = getattr(model, "checksum", None)
    if callable(checksum_fn):
        checksum = checksum_fn()
    elif isinstance(checksum_fn, str):
        checksum = checksum_fn
    if checksum is None:
        checksum = settings_checksum(parsed.kind, {"arg": parsed.arg, **parameters})
    display = name or getattr(model, "display_name", None) or getattr(model, "name", None) or parsed.text
    return ModelRef(spec=parsed.text, name=str(display), kind=parsed.kind, parameters=parameters, checksum=checksum)


def predictions_ref(path: str | os.PathLike, *, name: str | None = None, **parameters: Any) -> ModelRef:
    """A :class:`ModelRef` for a predictions file scored as it is (checksum: the file's sha256)."""
    target = Path(path)
    return ModelRef(
        spec=ModelSpec("predictions", str(target)).text,
        name=name or target.stem,
        kind="predictions",
        parameters={k: v for k, v in parameters.items() if v is not None},
        checksum=sha256_file(target) if target.is_file() else None,
    )


def in_memory_ref(items: Any, *, name: str = "in-memory predictions", **parameters: Any) -> ModelRef:
    """A :class:`ModelRef` for predictions handed to the Python API as objects (no file).

    The checksum is the sha256 of their JSON form, so the same predictions get the same id.
    """
    try:
        text = json.dumps(items, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(items)
    return ModelRef(
        spec="predictions:<memory>", name=name, kind="predictions",
        parameters={k: v for k, v in parameters.items() if v is not None},
        checksum=hashlib.sha256(text.encode("utf-8")).hexdigest(),
    )
