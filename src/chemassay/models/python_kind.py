"""The ``python`` model kind: ``python:MODULE:CALLABLE`` or ``python:path/to/file.py:CALLABLE``.

The named object may be

* an object that already implements the protocol (it has the protocol's method);
* a class or a factory function (every parameter has a default, or it takes only the
  spec's options as keywords): it is called with the spec's options as keyword arguments
  (string values) and must return such an object (or a plain function, adapted below);
* a plain function with the protocol method's signature (``f(reactants, k)``,
  ``f(smiles)``, ``f(n, seed)``...): it is adapted with
  :func:`~chemassay.models.protocols.from_callable`.

A ``name`` attribute is optional (a model without one is named by its spec). Whatever keeps
the spec from giving a model (a module that cannot be imported or fails on import, a missing
attribute, a factory that raises, an object without the protocol's method) is a one-line
:class:`~chemassay.contract.errors.UserInputError` naming it. :func:`python_protocols` says which
protocols the object implements (``chemassay assay`` asks it once, before it plans), and
:func:`object_spec` lends a model object a spec (``chemassay.assay(model_object)``).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError
from chemassay.models.protocols import all_protocols, conforms, from_callable, get_protocol
from chemassay.models.spec import ModelSpec
from chemassay.runtime.files import sha256_file


def _import_module(location: str) -> Any:
    """Import ``location`` as ``python -m`` would: the working folder is searched too (a
    console script such as ``chemassay`` does not put it on ``sys.path``), after the
    installed packages so it cannot shadow them."""
    try:
        return importlib.import_module(location)
    except ModuleNotFoundError as exc:
        top = location.split(".")[0]
        here = os.getcwd()
        if exc.name != top or here in sys.path or "" in sys.path:
            raise
        candidates = (Path(here) / f"{top}.py", Path(here) / top / "__init__.py", Path(here) / top)
        if not any(c.exists() for c in candidates):
            raise
        sys.path.append(here)
        return importlib.import_module(location)


def import_target(target: str, what: str = "--model python") -> Any:
    """The object ``MODULE:NAME`` or ``file.py:NAME`` names; a user error says what is wrong."""
    location, _, attribute = target.rpartition(":")
    if not location or not attribute:
        raise UserInputError(f"{what}:{target}: expected MODULE:CALLABLE or path/to/file.py:CALLABLE")
    try:
        if location.endswith(".py"):
            file = Path(location).expanduser()
            if not file.is_file():
                raise UserInputError(f"{what}:{target}: {file}: no such Python file")
            name = f"chemassay_user_{file.stem}"
            module_spec = importlib.util.spec_from_file_location(name, file)
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        else:
            module = _import_module(location)
    except ImportError as exc:
        raise UserInputError(f"{what}:{target}: cannot import {location!r} ({exc})") from None
    except SyntaxError as exc:
        raise UserInputError(f"{what}:{target}: {location} has a syntax error (line {exc.lineno}: {exc.msg})") from None
    except UserInputError:
        raise
    except Exception as exc:  # noqa: BLE001 - the module's own error at import, in one line
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise UserInputError(f"{what}:{target}: importing {location!r} failed ({why})") from exc
    found = getattr(module, attribute, None)
    if found is None:
        raise UserInputError(f"{what}:{target}: {location!r} has no attribute {attribute!r}")
    return found


def _is_factory(obj: Any, options: dict[str, str]) -> bool:
    if isinstance(obj, type):
        return True
    try:
        parameters = list(inspect.signature(obj).parameters.values())
    except (TypeError, ValueError):
        return False
    required = [p for p in parameters if p.default is inspect.Parameter.empty
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return all(p.name in options for p in required) and (bool(options) or not required)


def _methods() -> dict[str, str]:
    """Every registered protocol's method, by protocol name."""
    return {name: protocol.method for name, protocol in all_protocols().items()}


def _answers(obj: Any) -> list[str]:
    """The registered protocols whose method ``obj`` has (none for a class: it is a factory)."""
    if isinstance(obj, type):
        return []
    return [name for name, method in _methods().items() if callable(getattr(obj, method, None))]


_OBJECTS: dict[str, Any] = {}
"""Objects handed to the Python API (``chemassay.assay(model_object)``), by the ``MODULE:NAME``
their spec names, while :func:`object_spec` holds them."""
_objects_lock = threading.Lock()


@contextlib.contextmanager
def object_spec(obj: Any) -> Iterator[str]:
    """A ``python:`` spec that names ``obj`` itself (a model object or a function) while the
    ``with`` block runs: ``python:MODULE:QUALNAME`` of its class (of the function itself), as
    a result names a model object; ``#2``... is added when another object holds that name."""
    named = obj if inspect.isroutine(obj) or isinstance(obj, type) else type(obj)
    base = f"{getattr(named, '__module__', None) or 'builtins'}:{getattr(named, '__qualname__', type(obj).__name__)}"
    base = base.replace(",", "_")  # a comma would split the spec
    with _objects_lock:
        key, count = base, 1
        while key in _OBJECTS and _OBJECTS[key] is not obj:
            count += 1
            key = f"{base}#{count}"
        owned = key not in _OBJECTS
        _OBJECTS[key] = obj
    try:
        yield f"python:{key}"
    finally:
        if owned:
            with _objects_lock:
                _OBJECTS.pop(key, None)


@dataclass
class _Loaded:
    """What a ``python:`` spec names, made ready to be asked: ``model`` answers the protocols
    whose methods it has; ``function`` (when it is a plain function) is adapted to any."""

    target: Any
    what: str
    """How errors name it: ``Retro()`` (what calling the factory returned), ``retro`` (the object)."""
    model: Any = None
    function: Any = None


def _load(spec: ModelSpec) -> _Loaded:
    """Import what ``spec`` names and make the object its protocol methods are looked up on (a
    factory is called once); every failure is a :class:`UserInputError` naming what is wrong."""
    registered = None if spec.options else _OBJECTS.get(spec.arg)
    target = registered if registered is not None else import_target(spec.arg)
    name = spec.arg.rpartition(":")[2]
    if _answers(target):
        return _Loaded(target, name, model=target)
    if callable(target) and _is_factory(target, spec.options):
        try:
            made = target(**spec.options)
        except Exception as exc:  # noqa: BLE001 - the model's own error, in one line
            why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            raise UserInputError(f"--model {spec.text}: calling {name}() failed ({why})") from exc
        if _answers(made) or not callable(made):
            return _Loaded(target, f"{name}()", model=made)
        return _Loaded(target, f"{name}()", function=made)
    if callable(target):
        if spec.options:
            raise UserInputError(f"--model {spec.text}: {name} is a plain function; it takes no options")
        return _Loaded(target, name, function=target)
    methods = ", ".join(f"{method}()" for method in dict.fromkeys(_methods().values()))
    kind = "a module" if inspect.ismodule(target) else f"an object of class {type(target).__name__}"
    raise UserInputError(f"--model {spec.text}: {name} ({kind}) is not a model (an object with one of the methods "
                         f"{methods}), a class or factory, or a function")


def _missing(spec: ModelSpec, loaded: _Loaded, protocol: str | None) -> str:
    """Why the loaded object is not a ``protocol`` (``None``: not any): the method it lacks, and
    the ones it has."""
    found = get_protocol(protocol) if protocol is not None else None
    has = _answers(loaded.model)
    if has and found is not None:
        other = ", ".join(f"{_methods()[p]}() ({p})" for p in has)
        return (f"--model {spec.text}: {loaded.what} has no {found.method}() method, which a {protocol} needs "
                f"({found.signature or found.method}); it has {other}")
    methods = ", ".join(f"{method}()" for method in dict.fromkeys(_methods().values()))
    what = (f"{loaded.what} returned an object ({type(loaded.model).__name__}) that" if loaded.what.endswith("()")
            else loaded.what)
    needs = f"; a {protocol} needs {found.method}()" if found is not None else ""
    return f"--model {spec.text}: {what} has none of the model methods ({methods}){needs}"


def python_protocols(spec: ModelSpec, asked: Sequence[str] | None = None) -> list[str]:
    """The protocols among ``asked`` (default: every registered one) that the object ``spec``
    names implements: every one for a plain function (it is adapted to any). A spec that
    cannot load (an import, an attribute, a factory that raises) or an object with none of the
    protocols' methods is a :class:`UserInputError` saying what is missing."""
    loaded = _load(spec)
    names = list(asked) if asked is not None else list(all_protocols())
    if loaded.function is not None:
        return names
    if not _answers(loaded.model):
        raise UserInputError(_missing(spec, loaded, names[0] if len(names) == 1 else None))
    has = set(_answers(loaded.model))
    return [name for name in names if name in has]


def create_python(spec: ModelSpec, protocol: str, context: dict[str, Any]):
    """Factory of the ``python`` kind (see the module docstring)."""
    loaded = _load(spec)
    if loaded.function is not None:
        model = from_callable(loaded.function, protocol)
    elif conforms(loaded.model, protocol):
        model = loaded.model
    else:
        raise UserInputError(_missing(spec, loaded, protocol))
    if get_protocol(protocol).needs_name and not isinstance(getattr(model, "name", None), str):
        # the name is optional: one without gets the spec's (as a result names such a model)
        with contextlib.suppress(AttributeError, TypeError):
            model.name = f"python:{spec.arg}"
    source = _source_file(loaded.target)
    if source is not None:
        # the response cache of the run pipeline keys a python model by its code too
        with contextlib.suppress(AttributeError, TypeError):
            model.source_sha256 = sha256_file(source)
    return model


def _source_file(target: Any) -> Path | None:
    module = sys.modules.get(getattr(target, "__module__", "") or "")
    found = getattr(module, "__file__", None)
    return Path(found) if found and Path(found).is_file() else None
