"""The :class:`Protocol` object: everything a model kind needs to answer one suite's question.

A protocol is owned by the suite that asks it (``suites/<name>/protocol.py``) and declared in
its :class:`~chemassay.suites.Suite` (``model_protocols``). No shared layer knows any protocol:
the model kinds, the run pipeline, the predictions-file kind and ``check_model`` only call the
hooks below, so a new protocol is answerable by every existing kind.

What a protocol says:

* ``method`` and ``signature``: the Python method a ``python:`` object implements, and how a
  list of *items* plus *options* maps onto a call of it (:meth:`Protocol.call`) and back
  (:meth:`Protocol.items_of_call`, used by the kinds that answer item by item);
* ``answered_by``: the capabilities of model kinds that can answer it (``python`` and
  ``predictions`` always; ``text`` for chat/completion models; ``embeddings``);
* for text models: :meth:`Protocol.prompt` (items → :class:`Request`), :meth:`Protocol.parse`
  (one answer → one output), ``max_tokens`` and ``stop``; a protocol whose answers are not one
  per item (a generator) overrides :meth:`Protocol.answer_text`;
* for the predictions-file kind: :meth:`Protocol.read_predictions` (one documented layout);
* for ``check_model``: :meth:`Protocol.checks` (a name and a test per check);
* ``missing``: the output that stands for an item the model gave no answer for, which the
  suite scores as it scores a missing answer.

An answer in which :meth:`Protocol.parse` finds nothing it can read (it raises
:class:`Unreadable`, or returns ``missing`` for a non-empty answer) is *unreadable*: its item
gets ``missing`` and :meth:`Protocol.answer_text` records it in
:attr:`TextOutcome.unreadable` (index → why), so that it is counted rather than scored as a
wrong answer unnoticed. Parsers read the answer the way a chemist would unless the model's
``settings`` say ``extract=strict`` (:func:`strict_extraction`).

This module imports nothing of chemassay: it is part of the leaf ``contract`` package.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CAPABILITIES = ("python", "predictions", "text", "embeddings")
"""What a model kind can do: run a Python object, read a predictions file, answer prompts
with text, return embeddings."""


@dataclass(frozen=True)
class Request:
    """One text request: the prompt and request parameters (seed, temperature...) that the
    backend sends with it; ``max_tokens`` and ``stop`` come from the protocol."""

    prompt: str
    params: Mapping[str, Any] = field(default_factory=dict)


EXTRACT_MODES = ("lenient", "strict")
"""How a text model's answers are read (the ``extract`` setting of the text model kinds):
``lenient`` (the default) as a chemist reads them (Markdown, JSON, reaction SMILES,
equations...), ``strict`` as the papers' protocols read them (bare lines only)."""


def strict_extraction(settings: Mapping[str, Any]) -> bool:
    """Whether a text model's ``settings`` ask for the papers' strict reading of answers."""
    return str(settings.get("extract") or "lenient") == "strict"


class Unreadable(ValueError):
    """Raised by :meth:`Protocol.parse` for an answer it can read nothing from; the message
    says why (it becomes the item's entry in :attr:`TextOutcome.unreadable`)."""


@dataclass
class TextOutcome:
    """What a text path gives back: one output per item, the items that failed (index →
    reason: the request failed) and the items whose answer was unreadable (index → why: the
    model answered, but nothing in the answer could be read). Both kinds of item have the
    protocol's ``missing`` as output."""

    outputs: list[Any]
    failures: dict[int, str] = field(default_factory=dict)
    unreadable: dict[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class _UnreadableAnswer:
    """What :meth:`Protocol.reader` gives for an unreadable answer (never an output)."""

    reason: str


def answer_excerpt(text: str, limit: int = 80) -> str:
    """The start of an answer on one line, quoted, for an unreadable item's reason."""
    flat = " ".join(str(text).split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")


class TextAsker:
    """What a text backend offers a protocol (implemented in ``chemassay.models``):
    ``ask(requests) -> list[str | Exception]`` (one answer or the error that ended its
    request), plus the raw-prompting helpers of local language models."""

    prompting: str = "chat"
    """``chat`` (instructions) or ``raw`` (the input itself is the prompt)."""
    settings: Mapping[str, Any] = {}
    """The model's own settings a protocol may read (``encoding``, ``batch``, ``temperature``,
    ``extract``: ``lenient`` or ``strict``, see :data:`EXTRACT_MODES`)."""

    def ask(self, requests: Sequence[Request], parse: Callable[[str], Any] | None = None) -> list[Any]:
        raise NotImplementedError

    def answer_ranked(self, prompt: str, k: int) -> list[str] | None:
        """``k`` ranked raw continuations (beam search), or ``None`` where the backend cannot."""
        return None

    def sample_raw(self, n: int, seed: int) -> list[str]:
        """``n`` unprompted samples of a language model trained on the items' language."""
        raise NotImplementedError


def _is_missing(output: Any, missing: Any) -> bool:
    try:
        return bool(output == missing) and type(output) is type(missing)
    except Exception:  # noqa: BLE001 - an output that cannot be compared (an array) is not missing
        return False


Check = tuple[str, Callable[[Any], "str | None"]]
"""One conformance check: its name and a test of the model returning ``None`` (passed) or what
was wrong."""


class Protocol:
    """A protocol (see the module docstring). Subclass it in a suite's ``protocol.py`` and
    override what differs from the defaults; the defaults describe a method that takes a list
    of items and returns one output per item."""

    name: str = ""
    """Registry name (``bag-predictor``), also what ``--model`` errors and ``models list`` show."""
    method: str = ""
    """The Python method a model implements (``predict_bags``)."""
    signature: str = ""
    """The method's signature as documentation (``predict_bags(sources: list[str]) -> list[str]``)."""
    summary: str = ""
    """What it asks, in a few words."""
    answered_by: tuple[str, ...] = ("python", "predictions")
    """Capabilities of the model kinds that can answer it."""
    max_tokens: int | None = None
    """The answer budget a text model gets unless the model's spec sets its own."""
    stop: tuple[str, ...] = ()
    """Stop sequences sent with every text request."""
    missing: Any = None
    """The output of an item the model did not answer."""
    needs_name: bool = False
    """Whether a model must carry a ``name`` attribute (str)."""
    itemwise: bool = True
    """Whether outputs are one per item, so that identical items are asked once and cached
    one by one (a generator's call is not)."""
    predictions_layout: str = ""
    """The layout of its predictions file, in words (docs and errors)."""

    # ------------------------------------------------------------------ calling convention
    def call(self, model: Any, items: Sequence[Any], options: Mapping[str, Any]) -> list[Any]:
        """Ask ``model`` for the outputs of ``items``: ``model.<method>(items, **options)``."""
        return list(getattr(model, self.method)(list(items), **dict(options)))

    def items_of_call(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """The items and options of a call of :attr:`method` (the inverse of :meth:`call`)."""
        if not args:
            raise TypeError(f"{self.method}() needs its items as the first argument")
        return list(args[0]), {**dict(zip(self.option_names(), args[1:], strict=False)), **dict(kwargs)}

    def option_names(self) -> tuple[str, ...]:
        """The method's positional options after the items, in order (``("k",)``)."""
        return ()

    def join(self, outputs: list[Any], options: Mapping[str, Any]) -> Any:
        """What the method returns for per-item ``outputs`` (a list by default)."""
        return list(outputs)

    def split(self, returned: Any, count: int, options: Mapping[str, Any]) -> list[Any]:
        """Per-item outputs of what the method returned for ``count`` items; a wrong shape
        raises :class:`ValueError` saying what was expected."""
        if not isinstance(returned, (list, tuple)) or len(returned) != count:
            got = len(returned) if isinstance(returned, (list, tuple)) else type(returned).__name__
            raise ValueError(f"{self.method}() returned {got} answers for {count} inputs; "
                             "it must return one answer per input")
        return list(returned)

    def key(self, item: Any) -> str | None:
        """The identity of an item for de-duplication and the response cache (``None``: the
        item is never merged with another)."""
        return item if isinstance(item, str) else None

    def encode_output(self, output: Any) -> Any:
        """The JSON form of one output for the response cache."""
        return output

    def decode_output(self, stored: Any) -> Any:
        """An output back from its JSON form."""
        return stored

    # ------------------------------------------------------------------------- text models
    def prompt(self, items: Sequence[Any], options: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Request]:
        """One request per item (text models)."""
        raise NotImplementedError(f"protocol {self.name} has no prompt for text models")

    def parse(self, answer: str, options: Mapping[str, Any], settings: Mapping[str, Any]) -> Any:
        """The output one answer gives (text models)."""
        raise NotImplementedError(f"protocol {self.name} has no parser for text answers")

    def parse_raw(self, answer: str, options: Mapping[str, Any], settings: Mapping[str, Any]) -> Any:
        """The output of a raw-prompted answer (a model trained on bare inputs): its first line."""
        text = answer.strip()
        return text.splitlines()[0].strip() if text else self.missing

    def answer_text(self, asker: TextAsker, items: Sequence[Any], options: Mapping[str, Any]) -> TextOutcome:
        """Answer ``items`` with a text model: prompt → ask → parse (raw prompting: the item
        itself is the prompt and :meth:`parse_raw` reads the answer). An answer the parser
        reads nothing from is recorded in ``unreadable`` (see the module docstring)."""
        settings = asker.settings
        if asker.prompting == "raw":
            requests = [Request(str(item)) for item in items]
            return self._collect(asker.ask(requests, self.reader(lambda text: self.parse_raw(text, options, settings))))
        requests = self.prompt(items, options, settings)
        return self._collect(asker.ask(requests, self.reader(lambda text: self.parse(text, options, settings))))

    def reader(self, parse: Callable[[str], Any]) -> Callable[[str], Any]:
        """``parse`` for :meth:`TextAsker.ask`, marking an unreadable answer (``parse`` raised
        :class:`Unreadable`, or gave ``missing`` for a non-empty answer) for :meth:`_collect`
        instead of raising (an asker may parse on its own threads)."""

        def read(text: str) -> Any:
            try:
                output = parse(text)
            except Unreadable as exc:
                return _UnreadableAnswer(str(exc) or f"nothing readable in the answer {answer_excerpt(text)}")
            if str(text or "").strip() and _is_missing(output, self.missing):
                return _UnreadableAnswer(f"nothing readable in the answer {answer_excerpt(text)}")
            return output

        return read

    def _collect(self, answers: Sequence[Any]) -> TextOutcome:
        outputs: list[Any] = []
        failures: dict[int, str] = {}
        unreadable: dict[int, str] = {}
        for index, answer in enumerate(answers):
            if isinstance(answer, Exception):
                failures[index] = f"request failed: {answer}"
                outputs.append(self.missing)
            elif isinstance(answer, _UnreadableAnswer):
                unreadable[index] = answer.reason
                outputs.append(self.missing)
            else:
                outputs.append(answer)
        return TextOutcome(outputs, failures, unreadable)

    # ------------------------------------------------------------------ predictions files
    def read_predictions(self, path: Path) -> Callable[[Sequence[Any], Mapping[str, Any]], TextOutcome]:
        """Read a predictions file (its layout: :attr:`predictions_layout`) into a function
        ``answer(items, options) -> TextOutcome``; :meth:`lookup_answers` builds one from a
        per-item lookup."""
        raise NotImplementedError(f"protocol {self.name} has no predictions-file layout")

    def lookup_answers(self, lookup: Callable[[Any, Mapping[str, Any]], Any],
                       path: Path) -> Callable[[Sequence[Any], Mapping[str, Any]], TextOutcome]:
        """An ``answer(items, options)`` over a per-item ``lookup(item, options)`` that raises
        ``KeyError`` where the file has no answer: such an item fails with its reason."""

        def answer(items: Sequence[Any], options: Mapping[str, Any]) -> TextOutcome:
            outputs, failures = [], {}
            for index, item in enumerate(items):
                try:
                    outputs.append(lookup(item, options))
                except KeyError:
                    failures[index] = f"{path.name} has no prediction for {self.describe_item(item)}"
                    outputs.append(self.missing)
            return TextOutcome(outputs, failures)

        return answer

    def describe_item(self, item: Any) -> str:
        """An item in a few words, for a 'no prediction for ...' reason."""
        return repr(item)[:60]

    # ---------------------------------------------------------------------- check_model
    def checks(self) -> list[Check]:
        """The conformance checks ``check_model`` runs on a model of this protocol."""
        return []

    def __repr__(self) -> str:
        return f"<protocol {self.name}: {self.signature or self.method}>"
