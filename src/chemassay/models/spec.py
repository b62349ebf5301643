"""The one model-spec grammar: ``KIND:ARG[,key=value...]``.

Every command that runs a live model takes ``--model SPEC`` and every Python entry point
takes the same string (or a model object). Examples::

    openai:gpt-4o-mini,base_url=http://localhost:8000/v1,temperature=0
    hf:./my-checkpoint,layers=all
    python:my_package.models:make_predictor
    predictions:preds.csv
    fingerprint:radius=3,bits=4096        (a built-in baseline, options only)
    nearest-neighbour                      (a built-in baseline, no argument)

Rules: ``KIND`` is everything before the first ``:`` (letters, digits, ``-``, ``_`` and
``.``). After it comes a comma-separated list; its first element is ``ARG`` unless it has the
form ``key=value``, and every other element must be ``key=value``. ``ARG`` keeps any ``:``
it contains (``python:module:function``, ``openai:org/model:tag``). A value may contain
``=`` and ``:`` (URLs); a comma inside a value or ARG is written ``\\,``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from chemassay.contract.errors import UserInputError

_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-]*$")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


@dataclass(frozen=True)
class ModelSpec:
    """A parsed ``--model`` value: the kind, its argument and its options (all strings)."""

    kind: str
    arg: str = ""
    options: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The canonical spec string (options in the order given)."""
        parts = [_escape(self.arg)] if self.arg else []
        parts += [f"{key}={_escape(value)}" for key, value in self.options.items()]
        return self.kind + (":" + ",".join(parts) if parts else "")

    def __str__(self) -> str:
        return self.text

    def with_options(self, **options: object) -> ModelSpec:
        """A copy with ``options`` added (``None`` values are left out)."""
        merged = dict(self.options)
        merged.update({k: str(v) for k, v in options.items() if v is not None})
        return ModelSpec(self.kind, self.arg, merged)


def _escape(text: str) -> str:
    return text.replace(",", "\\,")


def _split(text: str) -> list[str]:
    parts, current, index = [], [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] == ",":
            current.append(",")
            index += 2
            continue
        if char == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    parts.append("".join(current))
    return parts


def parse_spec(text: str | ModelSpec) -> ModelSpec:
    """Parse a model spec string; a :class:`UserInputError` says what is wrong and why."""
    if isinstance(text, ModelSpec):
        return text
    if not isinstance(text, str):
        raise UserInputError(f"--model: expected a spec string KIND:ARG[,key=value...], got {type(text).__name__}")
    raw = text.strip()
    if not raw:
        raise UserInputError("--model: empty spec; expected KIND:ARG[,key=value...] (see 'chemassay models list')")
    kind, sep, rest = raw.partition(":")
    kind = kind.strip()
    if not _KIND.match(kind):
        raise UserInputError(
            f"--model {text!r}: {kind!r} is not a model kind; expected KIND:ARG[,key=value...] "
            "(see 'chemassay models list')"
        )
    arg = ""
    options: dict[str, str] = {}
    if sep:
        items = _split(rest)
        first = items[0]
        key, eq, _ = first.partition("=")
        if eq and _KEY.match(key.strip()):
            start = 0
        else:
            arg = first.strip()
            start = 1
        for item in items[start:]:
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or not _KEY.match(key):
                raise UserInputError(
                    f"--model {text!r}: option {item!r} is not key=value (a comma inside a value is written \\,)"
                )
            if key in options:
                raise UserInputError(f"--model {text!r}: option {key!r} given twice")
            options[key] = value.strip()
    return ModelSpec(kind.lower(), arg, options)


def option_int(spec: ModelSpec, key: str, default: int | None, *, minimum: int | None = None) -> int | None:
    """Integer option ``key`` of ``spec`` (``default`` when absent); clear error otherwise."""
    if key not in spec.options:
        return default
    try:
        value = int(spec.options[key])
    except ValueError:
        raise UserInputError(f"--model {spec.text}: {key} must be an integer, got {spec.options[key]!r}") from None
    if minimum is not None and value < minimum:
        raise UserInputError(f"--model {spec.text}: {key} must be at least {minimum}, got {value}")
    return value


def option_float(spec: ModelSpec, key: str, default: float | None) -> float | None:
    """Float option ``key`` of ``spec`` (``default`` when absent); clear error otherwise."""
    if key not in spec.options:
        return default
    try:
        return float(spec.options[key])
    except ValueError:
        raise UserInputError(f"--model {spec.text}: {key} must be a number, got {spec.options[key]!r}") from None


def option_bool(spec: ModelSpec, key: str, default: bool) -> bool:
    """Boolean option ``key`` (1/0, true/false, yes/no, on/off)."""
    if key not in spec.options:
        return default
    value = spec.options[key].strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise UserInputError(f"--model {spec.text}: {key} must be true or false, got {spec.options[key]!r}")


def check_options(spec: ModelSpec, allowed: set[str] | frozenset[str]) -> None:
    """Refuse options a kind does not know (a typo must not be silently ignored)."""
    unknown = sorted(set(spec.options) - set(allowed))
    if unknown:
        known = ", ".join(sorted(allowed)) or "none"
        raise UserInputError(f"--model {spec.text}: unknown option(s) {', '.join(unknown)}; {spec.kind} takes: {known}")
