"""Turning model output into a list of predicted steps, recording every repair made.

Two modes:

``lenient`` (default)
    Finds the step list in raw text whatever surrounds it: ``[ANSWER]...[/ANSWER]`` tags
    (the paper's prompts ask for them), Markdown code fences, prose before and after,
    trailing commas, comments, missing commas between objects, Python-style literals, a
    dict wrapping the list (``{"mechanism": [...]}``), a single step object. Steps are then
    normalized: ``intermediate``/``smiles`` keys accepted for ``intermediate_smiles``,
    label spelling mapped onto the taxonomy (``"Nucleophilic Addition"`` →
    ``nucleophilic_addition``), a missing subtype inferred from a type that has only one,
    a subtype written in the ``type`` field recognized, a missing type filled in from the
    subtype. Each such change is counted in :attr:`ParsedMechanism.repairs`.

``strict``
    What the published oMeBench pipeline does (``scripts/run.py``): the same three text
    clean-ups it applies, then ``json.loads``; the result must be a list (or a dict whose
    ``mechanism`` is one) of objects that all have ``subtype`` and a string
    ``intermediate_smiles``. Anything else makes the whole reaction score 0, as it does
    there. No label is changed.

Any text is accepted and never raises: an answer nested deeper than Python's recursion
limit, one that Python's literal parser rejects with an unexpected exception (``{{`` is a
set of dicts), one over :data:`MAX_RESPONSE_CHARS` characters or with more than
:data:`MAX_STEPS` steps gives no steps and the reason (the reaction then scores 0). These
two limits are far above anything the published pipeline meets; past them it would take
minutes or run out of memory.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from chemassay.suites.mechanism.taxonomy import (
    SUBTYPE_TO_TYPE,
    canonical_subtype,
    canonical_type,
    only_subtype,
)

MAX_RESPONSE_CHARS = 1_000_000
"""Answers longer than this are not parsed (scored 0 with the reason): no model writes a
mechanism that long, and the repairs would take minutes on such text."""
MAX_STEPS = 1_000
"""Step lists longer than this are not scored (the alignment is quadratic in the steps;
the longest oMe-Gold mechanism has 11). Like an unparseable answer, they score 0."""
MAX_LITERAL_CHARS = 100_000
MAX_SPANS = 1_000

SMILES_KEYS = ("intermediate_smiles", "intermediate", "smiles", "intermediate_SMILES", "SMILES", "product_smiles")
WRAPPER_KEYS = ("mechanism", "steps", "mechanism_steps", "answer", "reaction_mechanism")


@dataclass(frozen=True)
class PredStep:
    """A predicted step as scored: subtype label, type label and intermediate SMILES.

    ``smiles`` is ``None`` when the step has no usable SMILES string (it then counts as an
    invalid intermediate).
    """

    subtype: str | None
    type: str | None
    smiles: str | None


@dataclass
class ParsedMechanism:
    """Outcome of parsing one prediction: steps, or the reason there are none."""

    steps: list[PredStep] | None
    repairs: Counter = field(default_factory=Counter)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.steps is not None


class _ParseFailure(ValueError):
    """A response from which no step list could be recovered (its message is the reason)."""


# ----------------------------------------------------------------------------- strict


def _reference_clean(text: str) -> str:
    """The text clean-up of oMeBench's ``run.py`` (answer tags, one code fence, ``is :``)."""
    if "[ANSWER]" in text:
        if "[/ANSWER]" in text:
            text = text.split("[ANSWER]")[1].split("[/ANSWER]")[0].strip()
        else:
            text = text.split("[ANSWER]")[1].strip()
    if text.startswith("```"):
        text = text.strip("`").replace("json\n", "").replace("JSON\n", "").strip()
    if "is :" in text:
        text = text.split("is :")[1].strip()
    return text


def _strict_steps(obj: Any) -> ParsedMechanism:
    if isinstance(obj, dict):
        obj = obj.get("mechanism", obj)
    if not isinstance(obj, list):
        return ParsedMechanism(None, error=f"output is a {type(obj).__name__}, not a list of steps")
    steps = []
    for number, item in enumerate(obj, start=1):
        if not isinstance(item, Mapping):
            return ParsedMechanism(None, error=f"step {number} is not an object")
        if "subtype" not in item:
            return ParsedMechanism(None, error=f"step {number} has no 'subtype'")
        if "intermediate_smiles" not in item:
            return ParsedMechanism(None, error=f"step {number} has no 'intermediate_smiles'")
        smiles = item["intermediate_smiles"]
        if not isinstance(smiles, str):
            return ParsedMechanism(None, error=f"step {number}: intermediate_smiles is not a string")
        subtype = item["subtype"]
        steps.append(PredStep(subtype if isinstance(subtype, str) else repr(subtype), item.get("type"), smiles))
    return ParsedMechanism(steps)


# ---------------------------------------------------------------------------- lenient

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)
_ANSWER = re.compile(r"\[ANSWER\](.*?)(?:\[/ANSWER\]|$)", re.DOTALL | re.IGNORECASE)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def _balanced_spans(text: str, opener: str, closer: str) -> list[str]:
    """Every top-level balanced ``opener...closer`` span of ``text`` (strings respected)."""
    spans = []
    depth = 0
    start = -1
    in_string = False
    quote = ""
    escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                in_string = False
            continue
        if char == '"' and depth > 0:
            in_string = True
            quote = char
        elif char == opener:
            if depth == 0:
                start = index
            depth += 1
        elif char == closer and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start:index + 1])
    if depth > 0 and start >= 0:
        spans.append(text[start:])  # unterminated: let the repairs try to close it
    return spans


def _strip_comments(text: str) -> str:
    out = []
    in_string = False
    escaped = False
    index = 0
    while index < len(text):
        char = text[index]
        if in_string:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            index += 1
            continue
        if char == '"':
            in_string = True
        elif text.startswith("//", index):
            newline = text.find("\n", index)
            index = len(text) if newline < 0 else newline
            continue
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            index = len(text) if end < 0 else end + 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def open_brackets(text: str) -> tuple[list[str], bool]:
    """The closers of the ``[``/``{`` left open outside JSON strings (innermost last), and
    whether the text ends inside a string."""
    stack: list[str] = []
    in_string = False
    escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            stack.append("]" if char == "[" else "}")
        elif char in "]}" and stack:
            stack.pop()
    return stack, in_string


def _close_brackets(text: str) -> str:
    stack, in_string = open_brackets(text)
    tail = text.rstrip()
    if in_string:
        tail += '"'
    # A member cut after its key ("key" or "key":) cannot be completed: drop it.
    tail = re.sub(r'(,|\{)\s*"[^"\\]*"\s*(:\s*)?$', lambda m: "" if m.group(1) == "," else "{", tail)
    tail = tail.rstrip().rstrip(",")
    return tail + "".join(reversed(stack))


_REPAIRS = (
    ("comments", _strip_comments),
    ("trailing_commas", lambda s: re.sub(r",\s*([\]}])", r"\1", s)),
    ("missing_commas", lambda s: re.sub(r'("|\d|true|false|null|\]|\})(\s+)(")', r"\1,\2\3", re.sub(r"\}\s*\{", "}, {", s))),
    ("unterminated", _close_brackets),
)


def _json_or_none(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is JSON, else ``(False, None)``; JSON nested deeper
    than Python's recursion limit counts as undecodable rather than crashing."""
    try:
        return True, json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False, None


def _literal(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is a Python literal (single quotes, ``True``...).

    ``ast.literal_eval`` raises more than its documentation says on adversarial text: a set
    of dicts (``{{}}``) is a ``TypeError`` (unhashable), deep nesting a ``RecursionError`` or
    ``MemoryError``; all of them mean "not a literal". Long texts are not tried (the parser
    is slow and memory-hungry on them, and a real answer is JSON long before that size).
    """
    if len(text) > MAX_LITERAL_CHARS:
        return False, None
    try:
        with warnings.catch_warnings():
            # compiling model text warns about its escapes ("\T"): not the user's business
            warnings.simplefilter("ignore")
            return True, ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _loads_with_repairs(candidate: str) -> tuple[Any, list[str]]:
    """Decode JSON, applying the repairs one after another until it decodes."""
    ok, value = _json_or_none(candidate)
    if ok:
        return value, []
    text = candidate
    applied: list[str] = []
    for name, repair in _REPAIRS:
        fixed = repair(text)
        if fixed == text:
            continue
        text = fixed
        applied.append(name)
        ok, value = _json_or_none(text)
        if ok:
            return value, applied
    ok, value = _literal(text)
    if not ok:
        raise _ParseFailure("no decodable JSON list of steps found")
    return value, applied + ["python_literal"]


def _looks_like_step(item: Any) -> bool:
    return isinstance(item, Mapping) and any(
        key in item for key in (*SMILES_KEYS, "subtype", "type")
    )


def _unwrap(value: Any) -> tuple[list | None, str | None]:
    """The step list inside a decoded value, with the repair needed to reach it."""
    if isinstance(value, list):
        if value and all(isinstance(item, list) for item in value) and len(value) == 1:
            return value[0], "nested_list"
        return value, None
    if isinstance(value, Mapping):
        for key in WRAPPER_KEYS:
            if isinstance(value.get(key), list):
                return value[key], "unwrapped_dict"
        lists = [item for item in value.values() if isinstance(item, list)]
        if len(lists) == 1 and all(isinstance(x, Mapping) for x in lists[0]):
            return lists[0], "unwrapped_dict"
        if _looks_like_step(value):
            return [value], "single_step_object"
    return None, None


def _candidates(text: str) -> list[tuple[str, list[str]]]:
    """Text regions that may hold the answer, most specific first, with their repair tags."""
    found: list[tuple[str, list[str]]] = []
    cleaned = _THINK.sub("", text)
    tags = ["reasoning_removed"] if cleaned != text else []
    answers = [m.group(1) for m in _ANSWER.finditer(cleaned)]
    for block in reversed(answers):
        found.append((block.strip(), tags + ["answer_tags"]))
    fences = [m.group(2) for m in _FENCE.finditer(cleaned)]
    for block in reversed(fences):
        found.append((block.strip(), tags + ["code_fence"]))
    stripped = cleaned.strip()
    found.append((stripped, tags))
    # The last spans first (an answer ends with its result); only the last MAX_SPANS of each
    # kind are tried, so text made of countless tiny spans cannot take minutes.
    for span in reversed(_balanced_spans(cleaned, "[", "]")[-MAX_SPANS:]):
        found.append((span, tags + ["prose_around_json"]))
    for span in reversed(_balanced_spans(cleaned, "{", "}")[-MAX_SPANS:]):
        found.append((span, tags + ["prose_around_json"]))
    return found


def _steps_from_text(text: str) -> tuple[list, Counter]:
    last_error = "no JSON list of steps found in the response"
    for candidate, tags in _candidates(text):
        if not candidate:
            continue
        try:
            value, applied = _loads_with_repairs(candidate)
        except _ParseFailure:
            continue
        steps, wrap = _unwrap(value)
        if steps is None or (steps and not any(_looks_like_step(item) for item in steps)):
            last_error = f"decoded a {type(value).__name__}, not a list of steps"
            continue
        repairs = Counter(tags + applied)
        if wrap:
            repairs[wrap] += 1
        return steps, repairs
    raise _ParseFailure(last_error)


def _smiles_of(item: Mapping, repairs: Counter) -> str | None:
    for key in SMILES_KEYS:
        if key in item:
            value = item[key]
            if key != "intermediate_smiles":
                repairs[f"smiles_key:{key}"] += 1
            if isinstance(value, str):
                return value
            if isinstance(value, list) and value and all(isinstance(x, str) for x in value):
                repairs["smiles_list_joined"] += 1
                return ".".join(value)
            repairs["smiles_not_a_string"] += 1
            return None
    repairs["smiles_missing"] += 1
    return None


def normalize_step(item: Any, repairs: Counter) -> PredStep:
    """Lenient normalization of one decoded step (see the module docstring)."""
    if not isinstance(item, Mapping):
        repairs["non_object_step"] += 1
        return PredStep(None, None, None)
    smiles = _smiles_of(item, repairs)
    raw_type = item.get("type") if isinstance(item.get("type"), str) else None
    raw_subtype = item.get("subtype") if isinstance(item.get("subtype"), str) else None
    subtype = None
    if raw_subtype is not None:
        subtype = canonical_subtype(raw_subtype)
        if subtype is None:
            subtype = raw_subtype.strip()  # unknown label: kept, it simply never matches
        elif subtype != raw_subtype:
            repairs["subtype_spelling"] += 1
    kind = canonical_type(raw_type) if raw_type is not None else None
    if raw_type is not None and kind is not None and kind != raw_type:
        repairs["type_spelling"] += 1
    if subtype is None and raw_type is not None:
        as_subtype = canonical_subtype(raw_type)
        if as_subtype is not None and kind is None:
            subtype = as_subtype
            kind = SUBTYPE_TO_TYPE[as_subtype]
            repairs["subtype_from_type_field"] += 1
        elif kind is not None and only_subtype(kind) is not None:
            subtype = only_subtype(kind)
            repairs["subtype_inferred_from_type"] += 1
        else:
            repairs["subtype_missing"] += 1
    elif subtype is None:
        repairs["subtype_missing"] += 1
    if kind is None and subtype in SUBTYPE_TO_TYPE:
        kind = SUBTYPE_TO_TYPE[subtype]
        if raw_type is None:
            repairs["type_inferred_from_subtype"] += 1
    if kind is None and raw_type is not None:
        kind = raw_type.strip()
    return PredStep(subtype, kind, smiles)


def parse_steps(obj: Any, *, strict: bool = False) -> ParsedMechanism:
    """Parse an already decoded prediction (a step list or a dict wrapping one)."""
    if strict:
        return _checked(_strict_steps(obj))
    repairs: Counter = Counter()
    steps, wrap = _unwrap(obj)
    if steps is None:
        return ParsedMechanism(None, repairs, f"a {type(obj).__name__} is not a list of steps")
    if wrap:
        repairs[wrap] += 1
    if len(steps) > MAX_STEPS:
        return _checked(ParsedMechanism([PredStep(None, None, None)] * len(steps), repairs))
    return ParsedMechanism([normalize_step(item, repairs) for item in steps], repairs)


def parse_response(text: Any, *, strict: bool = False) -> ParsedMechanism:
    """Parse raw model text into predicted steps (see the module docstring for the modes)."""
    if not isinstance(text, str):
        return ParsedMechanism(None, error=f"response is a {type(text).__name__}, not text")
    if len(text) > MAX_RESPONSE_CHARS:
        return ParsedMechanism(
            None, error=f"response of {len(text):,} characters; answers over {MAX_RESPONSE_CHARS:,} are not parsed"
        )
    if strict:
        try:
            value = json.loads(_reference_clean(text))
        except json.JSONDecodeError as exc:
            return ParsedMechanism(None, error=f"not valid JSON after the reference clean-up ({exc.msg})")
        except RecursionError:
            return ParsedMechanism(None, error="not valid JSON after the reference clean-up (nested too deeply)")
        return _checked(_strict_steps(value))
    if not text.strip():
        return ParsedMechanism(None, error="empty response")
    try:
        steps, repairs = _steps_from_text(text)
    except _ParseFailure as exc:
        return ParsedMechanism(None, error=str(exc))
    return _checked(ParsedMechanism([normalize_step(item, repairs) for item in steps], repairs))


def _checked(parsed: ParsedMechanism) -> ParsedMechanism:
    """Refuse step lists longer than :data:`MAX_STEPS` (see the module docstring)."""
    if parsed.steps is not None and len(parsed.steps) > MAX_STEPS:
        return ParsedMechanism(
            None, parsed.repairs, f"{len(parsed.steps):,} steps; mechanisms over {MAX_STEPS:,} steps are not scored"
        )
    return parsed


def parse_prediction(record: Mapping[str, Any], *, strict: bool = False) -> ParsedMechanism:
    """Parse one prediction record: ``mechanism`` (steps), ``response`` (raw text) or the
    oMeBench ``run.py`` output field ``output`` (decoded JSON, or the raw text it could not
    decode)."""
    if "mechanism" in record:
        return parse_steps(record["mechanism"], strict=strict)
    if "response" in record:
        return parse_response(record["response"], strict=strict)
    if "output" in record:
        output = record["output"]
        if isinstance(output, str):
            if strict:
                return ParsedMechanism(None, error="output is text the reference pipeline could not decode")
            return parse_response(output)
        return parse_steps(output, strict=strict)
    if "error" in record:
        return ParsedMechanism(None, error=f"no response: {record['error']}")
    return ParsedMechanism(None, error="record has neither 'mechanism' nor 'response'")
