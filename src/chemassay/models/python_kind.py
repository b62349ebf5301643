"""The ``python`` model kind: ``python:MODULE:CALLABLE`` or ``python:path/to/file.py:CALLABLE``.

The named object may be

* an object that already implements the protocol (it has the protocol's method);
* a class or a factory function (every parameter has a default, or it takes only the
  spec's options as keywords): it is called with the spec's options as keyword arguments
  (string values) and must return such an object (or a plain function, adapted below);
* a plain function with the protocol method's signature (``f(reactants, k)``,
  ``f(smiles)``, ``f(n, seed)``...): it is adapted with
  :func:`~chemassay.models.protocols.from_callable`.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import Any

from chemassay.contract.errors import UserInputError
from chemassay.models.protocols import conforms, from_callable, get_protocol
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


def create_python(spec: ModelSpec, protocol: str, context: dict[str, Any]):
    """Factory of the ``python`` kind (see the module docstring)."""
    target = import_target(spec.arg)
    name = spec.arg.rpartition(":")[2]
    if conforms(target, protocol) and not isinstance(target, type):
        model = target
    elif callable(target) and _is_factory(target, spec.options):
        try:
            model = target(**spec.options)
        except TypeError as exc:
            raise UserInputError(f"--model {spec.text}: calling {name} failed ({exc})") from None
        if not conforms(model, protocol):
            if callable(model):
                model = from_callable(model, protocol)
            else:
                method = get_protocol(protocol).method
                raise UserInputError(f"--model {spec.text}: {name}() returned an object without {method}()")
    elif callable(target):
        if spec.options:
            raise UserInputError(f"--model {spec.text}: {name} is a plain function; it takes no options")
        model = from_callable(target, protocol)
    else:
        raise UserInputError(f"--model {spec.text}: {name} is not a model, a factory or a function")
    if get_protocol(protocol).needs_name and not isinstance(getattr(model, "name", None), str):
        try:
            model.name = f"python:{spec.arg}"
        except AttributeError:
            raise UserInputError(f"--model {spec.text}: a {protocol} needs a 'name' attribute") from None
    source = _source_file(target)
    if source is not None:
        # the response cache of the run pipeline keys a python model by its code too
        with contextlib.suppress(AttributeError, TypeError):
            model.source_sha256 = sha256_file(source)
    return model


def _source_file(target: Any) -> Path | None:
    module = sys.modules.get(getattr(target, "__module__", "") or "")
    found = getattr(module, "__file__", None)
    return Path(found) if found and Path(found).is_file() else None
