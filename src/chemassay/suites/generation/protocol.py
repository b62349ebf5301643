"""The generation suite's protocol: a molecule generator (``sample(n, seed)``, MOSES's task).

Everything a model kind needs to answer it: the Python method, the prompt and answer parser for
chat models (every answer line is a sample, valid or not, as MOSES counts them; read as a
chemist reads them unless ``extract=strict``: a JSON list's items are the lines, Markdown is
unwrapped, an introduction or a sentence is no sample), unprompted
sampling for language models trained on SMILES, the predictions-file layout (a SMILES file)
and the conformance checks. A generator's items are the sample slots ``0..n-1``: its outputs
are not one answer per distinct input, so identical items are never merged.

>>> generation_prompt(2).splitlines()[0][:38]
'Write 2 different, new, drug-like mole'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chemassay.chem.answers import smiles_lines
from chemassay.contract import (
    Check,
    Protocol,
    Request,
    TextAsker,
    TextOutcome,
    answer_excerpt,
    strict_extraction,
)
from chemassay.contract.errors import UserInputError
from chemassay.data.readers import read_smiles_file
from chemassay.models.check import str_list_problem


def generation_prompt(n: int) -> str:
    """Ask for ``n`` new drug-like molecules as SMILES."""
    return (
        f"Write {n} different, new, drug-like molecules as SMILES strings: molecular weight 250 to 350, "
        "only the elements C, N, S, O, F, Cl, Br and H, no charged atoms, no rings larger than 8 atoms. "
        "One SMILES per line, no numbering, nothing else."
    )


def _round_requests(left: int, batch: int, seed: int, first: int, temperature: float) -> list[Request]:
    """One round of requests for ``left`` more samples, ``batch`` a request, seeded from the
    request number ``first`` on (so a rerun asks the same seeds)."""
    wanted = min(batch, left)
    return [Request(generation_prompt(wanted), {"seed": seed * 1_000_003 + first + i, "temperature": temperature})
            for i in range(-(-left // batch))]


def _complete_lines(answer: Any) -> str | None:
    """The complete lines of an answer cut off at the length limit (a failed request that
    kept what the model wrote before the cut: ``partial``), without the last line, which the
    cut may have ended mid-SMILES; ``None`` for anything else.

    >>> class CutOff(Exception):
    ...     cut_off, partial = True, "CCO\\nc1ccccc1\\nCC(=O"
    >>> _complete_lines(CutOff("answer cut off"))
    'CCO\\nc1ccccc1'
    >>> _complete_lines("CCO") is None
    True
    """
    if not isinstance(answer, Exception) or not getattr(answer, "cut_off", False):
        return None
    partial = getattr(answer, "partial", None)
    if not isinstance(partial, str) or "\n" not in partial:
        return None
    return partial.rsplit("\n", 1)[0]


def _count(n: Any) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        raise UserInputError(f"n must be a whole number of molecules, got {n!r}")
    if n < 0:
        raise UserInputError(f"cannot sample {n} molecules; n must be 0 or more")
    return n


class GeneratorProtocol(Protocol):
    """draw ``n`` SMILES strings (valid or not) with a seed."""

    name = "generator"
    method = "sample"
    signature = "sample(n: int, seed: int = 0) -> list[str]"
    summary = "sample(n, seed) -> SMILES"
    answered_by = ("python", "predictions", "text")
    max_tokens = 4096
    missing = ""
    itemwise = False
    predictions_layout = "a SMILES file (one per line, or a table with a SMILES column); sample(n) takes its first n"

    def call(self, model: Any, items: Sequence[Any], options: Mapping[str, Any]) -> list[Any]:
        return model.sample(len(items), int(options.get("seed", 0)))

    def items_of_call(self, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        values = dict(zip(("n", "seed"), args, strict=False)) | dict(kwargs)
        if "n" not in values:
            raise TypeError("sample() needs n, the number of molecules")
        return list(range(_count(values["n"]))), {"seed": int(values.get("seed", 0))}

    def key(self, item: Any) -> str | None:
        return None

    def prompt(self, items: Sequence[Any], options: Mapping[str, Any], settings: Mapping[str, Any]) -> list[Request]:
        """The requests of the first round for ``len(items)`` samples: one per ``batch``
        molecules (a model that answers with fewer lines is asked again, up to three times as many)."""
        temperature = settings.get("temperature")
        return _round_requests(len(items), max(1, int(settings.get("batch") or 50)), int(options.get("seed", 0)), 0,
                               1.0 if temperature is None else temperature)

    def answer_text(self, asker: TextAsker, items: Sequence[Any], options: Mapping[str, Any]) -> TextOutcome:
        n, seed = len(items), int(options.get("seed", 0))
        if asker.prompting == "raw":
            return TextOutcome(list(asker.sample_raw(n, seed))[:n])
        strict = strict_extraction(asker.settings)
        batch = max(1, int(asker.settings.get("batch") or 50))
        temperature = asker.settings.get("temperature")
        temperature = 1.0 if temperature is None else temperature  # sampling needs randomness
        samples: list[str] = []
        failures: dict[int, str] = {}
        unread: list[str] = []  # answers without a single sample line
        request = 0
        max_requests = 3 * (-(-n // batch)) + 3
        while len(samples) < n and request < max_requests:
            wanted = min(batch, n - len(samples))
            requests = _round_requests(n - len(samples), batch, seed, request, temperature)
            request += len(requests)
            for answer in asker.ask(requests):
                if isinstance(answer, Exception):
                    # A failed request is a failed item, not asked again under another seed (a rerun
                    # asks the same seed, so the samples stay reproducible): its slots stay empty.
                    # An answer cut off at the length limit keeps its complete lines (the last
                    # line may end mid-SMILES and is dropped): samples the model wrote.
                    first = len(samples)
                    kept = _complete_lines(answer)
                    samples.extend(smiles_lines(kept, strict=strict)[:min(wanted, n - first)] if kept else [])
                    start = len(samples)
                    samples.extend([""] * min(wanted - (start - first), n - start))
                    failures.update({i: f"request failed: {answer}" for i in range(start, len(samples))})
                else:
                    lines = smiles_lines(answer, strict=strict)[:wanted]
                    if not lines and answer.strip():
                        unread.append(answer)
                    samples.extend(lines)
        unreadable: dict[int, str] = {}
        if len(samples) < n:
            # The model kept answering with fewer lines than asked: the rest are empty (invalid)
            # samples, unreadable where some answers held no sample at all.
            if unread:
                reason = (f"{len(unread)} answers held no SMILES line (first: {answer_excerpt(unread[0])})"
                          if len(unread) > 1 else f"the answer held no SMILES line: {answer_excerpt(unread[0])}")
                unreadable = {i: reason for i in range(len(samples), n)}
            samples.extend([""] * (n - len(samples)))
        return TextOutcome(samples[:n], failures, unreadable)

    def read_predictions(self, path: Path):
        smiles = read_smiles_file(path).smiles

        def answer(items: Sequence[Any], options: Mapping[str, Any]) -> TextOutcome:
            if len(items) > len(smiles):
                raise UserInputError(f"{path}: holds {len(smiles)} SMILES, {len(items)} were asked for")
            return TextOutcome(list(smiles[: len(items)]))  # the seed cannot change a file

        return answer

    def checks(self) -> list[Check]:
        outputs: dict[str, Any] = {}

        def shape(model: Any) -> str | None:
            outputs["first"] = model.sample(5, seed=0)
            return str_list_problem(outputs["first"], 5)

        def seeded(model: Any) -> str | None:
            if "first" not in outputs:
                return "no first sample to compare with"
            return None if model.sample(5, seed=0) == outputs["first"] else "the same seed gave a different sample"

        def zero(model: Any) -> str | None:
            return None if model.sample(0, seed=0) == [] else "sample(0) did not return an empty list"

        def negative(model: Any) -> str | None:
            try:
                model.sample(-1, seed=0)
            except (UserInputError, ValueError):
                return None
            return "sample(-1) did not raise an error"

        return [("sample(n) returns n strings", shape), ("the same seed gives the same sample", seeded),
                ("sample(0) returns nothing", zero), ("a negative n is a clear error", negative)]


GENERATOR = GeneratorProtocol()

PROTOCOLS = (GENERATOR,)
"""The protocols this suite defines."""
