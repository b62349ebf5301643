"""Models: the protocols each suite needs, one registry of model kinds, one spec grammar
(``KIND:ARG[,key=value...]``), the adapters (OpenAI-compatible HTTP, Hugging Face, Python,
prediction files), and :func:`check_model`.

>>> from chemassay.models import parse_spec
>>> parse_spec("openai:gpt-4o-mini,base_url=http://localhost:8000/v1,temperature=0").options["temperature"]
'0'
"""

from chemassay.models.check import CheckReport, check_model
from chemassay.models.identity import in_memory_ref, model_ref, predictions_ref
from chemassay.models.protocols import (
    PROTOCOLS,
    BagPredictor,
    Encoder,
    MechanismPredictor,
    MoleculeGenerator,
    PropertyPredictor,
    ReactionPredictor,
    conforms,
    from_callable,
)
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
from chemassay.models.spec import ModelSpec, parse_spec

__all__ = [
    "PROTOCOLS", "BagPredictor", "CheckReport", "DuplicateKindError", "Encoder", "MechanismPredictor",
    "ModelKind", "ModelSpec", "MoleculeGenerator", "PropertyPredictor", "ReactionPredictor", "check_model",
    "conforms", "from_callable", "get_kind", "in_memory_ref", "list_kinds", "load_model", "model_ref",
    "parse_spec", "predictions_ref", "register_kind", "resolve_model", "unregister_kind",
]
