"""Models: one registry of model kinds, one spec grammar (``KIND:ARG[,key=value...]``), the
adapters (OpenAI-compatible HTTP, Hugging Face, Python, prediction files), the run pipeline
every model goes through (:func:`run`), and :func:`check_model`. The protocols themselves
belong to the suites that ask them (``suites/<name>/protocol.py``); this package names none.

>>> from chemassay.models import parse_spec
>>> parse_spec("openai:gpt-4o-mini,base_url=http://localhost:8000/v1,temperature=0").options["temperature"]
'0'
"""

from chemassay.models.check import CheckReport, check_model
from chemassay.models.identity import in_memory_ref, model_ref, predictions_ref
from chemassay.models.protocols import all_protocols, conforms, from_callable, get_protocol
from chemassay.models.registry import (
    DuplicateKindError,
    ModelKind,
    get_kind,
    list_kinds,
    load_model,
    register_kind,
    resolve_model,
    unregister_kind,
)
from chemassay.models.run import run
from chemassay.models.spec import ModelSpec, parse_spec

__all__ = [
    "CheckReport", "DuplicateKindError", "ModelKind", "ModelSpec", "all_protocols", "check_model", "conforms",
    "from_callable", "get_kind", "get_protocol", "in_memory_ref", "list_kinds", "load_model", "model_ref",
    "parse_spec", "predictions_ref", "register_kind", "resolve_model", "run", "unregister_kind",
]
