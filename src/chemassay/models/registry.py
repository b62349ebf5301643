"""One registry of model kinds, shared by every suite.

A *kind* is a name (``openai``, ``hf``, ``python``, ``predictions``, ``ngram``,
``nearest-neighbour``...), what its models can answer, and a factory named by a dotted path
(``"package.module:function"``) that is imported only when a model of that kind is loaded:
listing kinds never imports torch or transformers.

What a kind answers is either a list of protocol names (a suite's baseline declares the
protocols of its suite) or *capabilities* (``python``, ``predictions``, ``text``,
``embeddings``, ``translation``): a general kind then answers every protocol that lists one
of its capabilities in ``answered_by``, including the protocols of a suite registered later.

A factory is called as ``factory(spec, protocol, context)``: the parsed
:class:`~chemassay.models.spec.ModelSpec`, the name of the protocol the caller needs and a
dict of settings the calling command supplies (``device``, ``n_jobs``, ``base_url``, a
training set...). It returns an object that implements the protocol.

Kinds come from :mod:`chemassay.models.catalog` (the general adapters), from every registered
suite's ``Suite.model_kinds`` (its baselines), asked of the suite registry each time, and from
:func:`register_kind` at run time. Registering a name (or alias) twice is an error.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chemassay.contract.errors import ChemassayError, UserInputError
from chemassay.models.protocols import all_protocols, conforms, from_callable, get_protocol
from chemassay.models.spec import ModelSpec, parse_spec
from chemassay.suites import all_suites


class DuplicateKindError(ChemassayError):
    """A model kind (or alias) registered twice."""


EXTRA_INSTALL = {
    # the pretrained encoders ship inside these wheels; their own pins (transformers<5,
    # simpletransformers) are not needed by chemassay, which loads only the model folders
    "pretrained": "pip install --no-deps rxnmapper rxnfp",
}
"""Extras that are installed another way than ``pip install 'chemassay[EXTRA]'``."""


@dataclass(frozen=True)
class ModelKind:
    """Everything chemassay knows about one kind of model (see the module docstring)."""

    name: str
    protocols: tuple[str, ...]
    """The protocols its models implement, by name (a suite's baselines; ``()`` for a general
    kind that answers through its capabilities)."""
    factory: str
    description: str
    capabilities: tuple[str, ...] = ()
    """What its models can do (``python``, ``predictions``, ``text``, ``embeddings``,
    ``translation``): it answers every protocol whose ``answered_by`` lists one of them."""
    arg: str = ""
    """What ARG names (``PATH``, ``MODEL``, ``MODULE:CALLABLE``...); empty if it takes none."""
    arg_required: bool = False
    options: dict[str, str] = field(default_factory=dict)
    """Option name → one-line meaning (``temperature`` → "sampling temperature")."""
    extra: str | None = None
    """The pip extra its heavy imports come from (``torch``, ``hf``, ``llm``...)."""
    suite: str | None = None
    """The suite whose built-in baseline this is (``None``: a general adapter)."""
    aliases: tuple[str, ...] = ()
    example: str = ""

    def __post_init__(self) -> None:
        if ":" not in self.factory:
            raise ValueError(f"model kind {self.name!r}: factory must be 'module:function', got {self.factory!r}")
        if not self.protocols and not self.capabilities:
            raise ValueError(f"model kind {self.name!r}: declare the protocols or capabilities it answers")

    def implements(self, protocol: str) -> bool:
        """Whether models of this kind serve ``protocol`` (a registered protocol's name)."""
        if protocol in self.protocols:
            return True
        found = all_protocols().get(protocol)
        return found is not None and any(c in found.answered_by for c in self.capabilities)

    @property
    def protocol_names(self) -> tuple[str, ...]:
        """The protocols it serves: its own, and every registered one its capabilities answer."""
        return tuple(dict.fromkeys([*self.protocols, *(p for p in all_protocols() if self.implements(p))]))

    def needs(self) -> str:
        """What using this kind needs, in words (the command that installs its extra, if any)."""
        if not self.extra:
            return "core install"
        return EXTRA_INSTALL.get(self.extra, f"pip install 'chemassay[{self.extra}]'")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready description (for ``chemassay models list --json``)."""
        return {
            "name": self.name, "protocols": list(self.protocol_names), "description": self.description,
            "arg": self.arg, "arg_required": self.arg_required, "options": dict(self.options),
            "extra": self.extra, "needs": self.needs(), "suite": self.suite, "aliases": list(self.aliases),
            "example": self.example,
        }


_RUNTIME: dict[str, ModelKind] = {}
"""Kinds added with :func:`register_kind` (the others are asked of the catalog and the suites)."""
_lock = threading.RLock()


def _declared() -> list[ModelKind]:
    from chemassay.models.catalog import BUILTIN_KINDS

    kinds = list(BUILTIN_KINDS)
    for suite in all_suites():
        kinds.extend(suite.load("model_kinds") or ())
    return kinds


def _all_kinds() -> dict[str, ModelKind]:
    """Every kind by name: the catalog's, the suites' (first one wins), the run-time ones."""
    with _lock:
        found: dict[str, ModelKind] = {}
        for kind in (*_declared(), *_RUNTIME.values()):
            found.setdefault(kind.name, kind)
        return found


def _aliases(kinds: dict[str, ModelKind]) -> dict[str, str]:
    return {alias: kind.name for kind in kinds.values() for alias in kind.aliases}


def register_kind(kind: ModelKind) -> ModelKind:
    """Add a model kind; a name or alias that is already taken raises :class:`DuplicateKindError`."""
    with _lock:
        kinds = _all_kinds()
        aliases = _aliases(kinds)
        for name in (kind.name, *kind.aliases):
            if name in kinds or name in aliases:
                raise DuplicateKindError(f"model kind {name!r} is already registered (by kind {aliases.get(name, name)!r})")
        _RUNTIME[kind.name] = kind
    return kind


def unregister_kind(name: str) -> None:
    """Remove a kind added with :func:`register_kind` (tests, plugins being reloaded)."""
    with _lock:
        _RUNTIME.pop(name, None)


def list_kinds(protocol: str | None = None, suite: str | None = None) -> list[ModelKind]:
    """Registered kinds, sorted by name; optionally only those implementing ``protocol``
    or belonging to ``suite`` (general adapters are listed for every suite)."""
    if protocol is not None:
        get_protocol(protocol)
    kinds = sorted(_all_kinds().values(), key=lambda k: k.name)
    if protocol is not None:
        kinds = [k for k in kinds if k.implements(protocol)]
    if suite is not None:
        kinds = [k for k in kinds if k.suite in (None, suite)]
    return kinds


def get_kind(name: str) -> ModelKind:
    """The kind called ``name`` (or one of its aliases); a clear error lists the known ones."""
    kinds = _all_kinds()
    key = name.lower()
    key = _aliases(kinds).get(key, key)
    if key not in kinds:
        known = ", ".join(sorted(kinds))
        raise UserInputError(f"unknown model kind {name!r}; known kinds: {known} (see 'chemassay models list')")
    return kinds[key]


def _resolve_factory(kind: ModelKind) -> Callable[..., Any]:
    module_name, _, attribute = kind.factory.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or module_name
        if kind.extra and not missing.startswith("chemassay"):
            raise UserInputError(
                f"model kind {kind.name!r} needs the optional dependency {missing!r}: {kind.needs()}"
            ) from None
        raise
    return getattr(module, attribute)


def load_model(
    spec: str | ModelSpec,
    protocol: str,
    context: dict[str, Any] | None = None,
) -> Any:
    """The model a spec names, as an object implementing ``protocol``.

    The spec's kind must declare ``protocol``; the returned object is checked structurally
    against the protocol and carries ``spec`` (the parsed spec) so that results can name it
    (:func:`chemassay.models.identity.model_ref`).
    """
    parsed = parse_spec(spec)
    protocol = get_protocol(protocol).name
    kind = get_kind(parsed.kind)
    if not kind.implements(protocol):
        able = [k.name for k in list_kinds(protocol)]
        raise UserInputError(
            f"--model {parsed.text}: a {kind.name} model is not a {protocol} "
            f"(it implements {', '.join(kind.protocol_names)}); kinds that are: {', '.join(able)}"
        )
    if kind.arg_required and not parsed.arg:
        raise UserInputError(
            f"--model {parsed.text}: {kind.name} needs an argument, {kind.name}:{kind.arg or 'ARG'}"
            + (f" (e.g. {kind.example})" if kind.example else "")
        )
    if not kind.arg and parsed.arg:
        raise UserInputError(
            f"--model {parsed.text}: {kind.name} takes no argument, only options key=value"
            + (f" (e.g. {kind.example})" if kind.example else "")
        )
    canonical = ModelSpec(kind.name, parsed.arg, parsed.options)
    factory = _resolve_factory(kind)
    model = factory(canonical, protocol, dict(context or {}))
    if not conforms(model, protocol):
        raise UserInputError(f"--model {canonical.text}: the {kind.name} factory returned an object that is not a {protocol}")
    try:
        model.spec = canonical
    except AttributeError:
        pass  # an object that forbids new attributes (slots): identity falls back to its type
    return model


def resolve_model(model: Any, protocol: str, context: dict[str, Any] | None = None) -> Any:
    """A model object as given, or the model a spec string names (the Python API's entry)."""
    if isinstance(model, (str, ModelSpec)):
        return load_model(model, protocol, context)
    if not conforms(model, protocol):
        method = get_protocol(protocol).method
        if callable(model) and not hasattr(model, method):
            return from_callable(model, protocol)
        raise UserInputError(
            f"{type(model).__name__} is not a {protocol}: it needs a method {method}() (or pass a spec string)"
        )
    return model
