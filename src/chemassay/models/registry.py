"""One registry of model kinds, shared by every suite.

A *kind* is a name (``openai``, ``hf``, ``python``, ``predictions``, ``ngram``,
``nearest-neighbour``...), the protocols its models implement, and a factory named by a
dotted path (``"package.module:function"``) that is imported only when a model of that kind
is loaded: listing kinds never imports torch or transformers.

A factory is called as ``factory(spec, protocol, context)``: the parsed
:class:`~chemassay.models.spec.ModelSpec`, the protocol the caller needs (one of
:data:`~chemassay.models.protocols.PROTOCOLS`) and a dict of settings the calling command
supplies (``device``, ``n_jobs``, ``base_url``, a training set...). It returns an object that
implements the protocol.

Kinds come from :mod:`chemassay.models.catalog` (the adapters) and from every registered
suite's ``Suite.model_kinds`` (its baselines); :func:`register_kind` adds more at run time. A
kind whose protocols are ``("*",)`` serves every registered protocol (``python:``,
``predictions:``), including the protocols a later suite declares.
Registering a name (or alias) twice is an error.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chemassay.errors import ChemassayError, UserInputError
from chemassay.models.protocols import PROTOCOLS, conforms
from chemassay.models.spec import ModelSpec, parse_spec


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
    factory: str
    description: str
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
        unknown = [p for p in self.protocols if p not in PROTOCOLS and p != "*"]
        if unknown:
            raise ValueError(f"model kind {self.name!r}: unknown protocol(s) {unknown}; known: {sorted(PROTOCOLS)}")
        if ":" not in self.factory:
            raise ValueError(f"model kind {self.name!r}: factory must be 'module:function', got {self.factory!r}")

    def implements(self, protocol: str) -> bool:
        """Whether models of this kind serve ``protocol``."""
        return protocol in self.protocols or ("*" in self.protocols and protocol in PROTOCOLS)

    @property
    def protocol_names(self) -> tuple[str, ...]:
        """The protocols it serves, ``*`` expanded to every registered protocol."""
        if "*" in self.protocols:
            return tuple(PROTOCOLS)
        return self.protocols

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


_KINDS: dict[str, ModelKind] = {}
_ALIASES: dict[str, str] = {}
_lock = threading.RLock()
_catalog_state = {"loaded": False, "loading": False}


def register_kind(kind: ModelKind) -> ModelKind:
    """Add a model kind; a name or alias that is already taken raises :class:`DuplicateKindError`."""
    with _lock:
        if not _catalog_state["loaded"] and not _catalog_state["loading"]:
            _load_catalog()
        names = (kind.name, *kind.aliases)
        for name in names:
            if name in _KINDS or name in _ALIASES:
                owner = _ALIASES.get(name, name)
                raise DuplicateKindError(f"model kind {name!r} is already registered (by kind {owner!r})")
        _KINDS[kind.name] = kind
        for alias in kind.aliases:
            _ALIASES[alias] = kind.name
    return kind


def unregister_kind(name: str) -> None:
    """Remove a kind added with :func:`register_kind` (tests, plugins being reloaded)."""
    with _lock:
        kind = _KINDS.pop(name, None)
        if kind is not None:
            for alias in kind.aliases:
                _ALIASES.pop(alias, None)


def _load_catalog() -> None:
    """Register the built-in kinds: the adapters, then every suite's ``MODEL_KINDS``."""
    if _catalog_state["loaded"] or _catalog_state["loading"]:
        return
    _catalog_state["loading"] = True
    try:
        from chemassay.models.catalog import BUILTIN_KINDS
        from chemassay.suites import all_suites, on_register

        declared = list(BUILTIN_KINDS)
        for suite in all_suites():
            _register_protocols(suite)
            declared.extend(suite.load("model_kinds") or ())
        for kind in declared:
            register_kind(kind)
        on_register(_suite_registered)
        _catalog_state["loaded"] = True
    finally:
        _catalog_state["loading"] = False


def _register_protocols(suite: Any) -> None:
    from chemassay.models.protocols import register_protocol

    for info in suite.load("model_protocols") or ():
        register_protocol(info)


def _suite_registered(suite: Any) -> None:
    """Add (or withdraw) the protocols and kinds of a suite registered after the catalog."""
    from chemassay.models.protocols import unregister_protocol
    from chemassay.suites import find_suite

    present = find_suite(suite.name) is suite
    kinds = suite.load("model_kinds") or ()
    if present:
        _register_protocols(suite)
        for kind in kinds:
            if kind.name not in _KINDS:
                register_kind(kind)
    else:
        for kind in kinds:
            if _KINDS.get(kind.name) is kind:
                unregister_kind(kind.name)
        for info in suite.load("model_protocols") or ():
            unregister_protocol(info.name)


def _ensure_catalog() -> None:
    with _lock:
        if not _catalog_state["loaded"]:
            _load_catalog()


def list_kinds(protocol: str | None = None, suite: str | None = None) -> list[ModelKind]:
    """Registered kinds, sorted by name; optionally only those implementing ``protocol``
    or belonging to ``suite`` (general adapters are listed for every suite)."""
    _ensure_catalog()
    if protocol is not None and protocol not in PROTOCOLS:
        raise UserInputError(f"unknown protocol {protocol!r}; known: {', '.join(sorted(PROTOCOLS))}")
    kinds = sorted(_KINDS.values(), key=lambda k: k.name)
    if protocol is not None:
        kinds = [k for k in kinds if k.implements(protocol)]
    if suite is not None:
        kinds = [k for k in kinds if k.suite in (None, suite)]
    return kinds


def get_kind(name: str) -> ModelKind:
    """The kind called ``name`` (or one of its aliases); a clear error lists the known ones."""
    _ensure_catalog()
    key = name.lower()
    key = _ALIASES.get(key, key)
    if key not in _KINDS:
        known = ", ".join(sorted(_KINDS))
        raise UserInputError(f"unknown model kind {name!r}; known kinds: {known} (see 'chemassay models list')")
    return _KINDS[key]


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
    if protocol not in PROTOCOLS:
        raise UserInputError(f"unknown protocol {protocol!r}; known: {', '.join(sorted(PROTOCOLS))}")
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
        method = PROTOCOLS[protocol].method
        if callable(model) and not hasattr(model, method):
            from chemassay.models.protocols import from_callable

            return from_callable(model, protocol)
        raise UserInputError(
            f"{type(model).__name__} is not a {protocol}: it needs a method {method}() (or pass a spec string)"
        )
    return model
