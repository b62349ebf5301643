"""``check_model``: run a protocol's contract on small bundled inputs.

A model that passes returns outputs of the promised shapes and types for every input, gives
the same outputs for the same inputs (and, for generators, the same sample for the same
seed), and fails with a clear error on bad arguments. The inputs are small textbook
chemistry: three reactions (an acylation of an alcohol, a Suzuki coupling, an amide
formation), three reactant bags in ChemAlgebra notation, five molecules and one mechanism
record.

::

    >>> from chemassay.models import check_model
    >>> report = check_model("fingerprint", "encoder")
    >>> report.passed
    True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chemassay.errors import ChemassayError, UserInputError
from chemassay.models.protocols import PROTOCOLS
from chemassay.models.registry import resolve_model

# Three textbook reactions (reactants, major product).
MICRO_REACTIONS = (
    ("CC(C)(C)OC(=O)N1CCC(CO)CC1.O=C(Cl)c1ccccc1", "CC(C)(C)OC(=O)N1CCC(COC(=O)c2ccccc2)CC1"),
    ("Brc1ccccc1.OB(O)c1ccccc1", "c1ccc(-c2ccccc2)cc1"),
    ("CC(=O)Cl.NCc1ccccc1", "CC(=O)NCc1ccccc1"),
)
MICRO_BAGS = ("{1}CC(=O)Cl.{1}NCc1ccccc1", "{2}O=O.{1}C=C", "{1}CCO.{1}CC(=O)O")
MICRO_MOLECULES = ("CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "OC[C@H]1OC(O)[C@H](O)[C@@H](O)[C@@H]1O", "C1CCNCC1")
MICRO_MECHANISM = {
    "reaction_id": "check-1",
    "reactants": "CC(=O)Cl.NCc1ccccc1",
    "products": "CC(=O)NCc1ccccc1.Cl",
    "conditions": "",
}


@dataclass
class Check:
    """One contract check: its name, whether it passed and what was seen."""

    name: str
    passed: bool
    message: str = ""


@dataclass
class CheckReport:
    """Every check run for one model and protocol."""

    model: str
    protocol: str
    checks: list[Check] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Whether every check passed."""
        return bool(self.checks) and all(c.passed for c in self.checks)

    def failures(self) -> list[Check]:
        """The checks that failed."""
        return [c for c in self.checks if not c.passed]

    def summary(self) -> str:
        """One line per check."""
        lines = [f"{self.model} as {self.protocol}: {'PASS' if self.passed else 'FAIL'}"]
        lines += [f"  [{'ok' if c.passed else 'FAIL'}] {c.name}" + (f": {c.message}" if c.message else "") for c in self.checks]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"model": self.model, "protocol": self.protocol, "passed": self.passed,
                "checks": [{"name": c.name, "passed": c.passed, "message": c.message} for c in self.checks]}


def _run(report: CheckReport, name: str, test: Callable[[], str | None]) -> Any:
    try:
        problem = test()
    except (ChemassayError, ValueError, TypeError, RuntimeError, KeyError, IndexError, AttributeError) as exc:
        report.checks.append(Check(name, False, f"raised {type(exc).__name__}: {str(exc)[:200]}"))
        return
    report.checks.append(Check(name, problem is None, problem or ""))


def _is_str_list(value: Any, length: int | None = None) -> str | None:
    if not isinstance(value, list):
        return f"expected a list, got {type(value).__name__}"
    if length is not None and len(value) != length:
        return f"expected {length} items, got {len(value)}"
    wrong = [type(v).__name__ for v in value if not isinstance(v, str)]
    return f"items must be strings, got {wrong[0]}" if wrong else None


def _check_reaction(model: Any, report: CheckReport) -> None:
    reactants = [r for r, _ in MICRO_REACTIONS]
    outputs: dict[str, Any] = {}

    def shape() -> str | None:
        outputs["first"] = model.predict(reactants, k=3)
        ranked = outputs["first"]
        if not isinstance(ranked, list) or len(ranked) != len(reactants):
            return f"expected {len(reactants)} ranked lists, got {type(ranked).__name__} of length {len(ranked) if isinstance(ranked, list) else '?'}"
        for row in ranked:
            problem = _is_str_list(row)
            if problem:
                return problem
            if len(row) > 3:
                return f"k=3 but a list has {len(row)} predictions"
        return None

    def deterministic() -> str | None:
        if "first" not in outputs:
            return "no first output to compare with"
        again = model.predict(reactants, k=3)
        return None if again == outputs["first"] else "the same inputs gave different predictions"

    def k_one() -> str | None:
        ranked = model.predict(reactants[:1], k=1)
        return None if isinstance(ranked, list) and len(ranked) == 1 and len(ranked[0]) <= 1 else "k=1 gave more than one prediction"

    _run(report, "returns up to k ranked SMILES per reaction", shape)
    _run(report, "deterministic for the same inputs", deterministic)
    _run(report, "k=1 gives at most one prediction", k_one)


def _check_bags(model: Any, report: CheckReport) -> None:
    outputs: dict[str, Any] = {}

    def shape() -> str | None:
        outputs["first"] = model.predict_bags(list(MICRO_BAGS))
        return _is_str_list(outputs["first"], len(MICRO_BAGS))

    def deterministic() -> str | None:
        if "first" not in outputs:
            return "no first output to compare with"
        return None if model.predict_bags(list(MICRO_BAGS)) == outputs["first"] else "the same inputs gave different bags"

    _run(report, "returns one bag string per input", shape)
    _run(report, "deterministic for the same inputs", deterministic)


def _check_generator(model: Any, report: CheckReport) -> None:
    outputs: dict[str, Any] = {}

    def shape() -> str | None:
        outputs["first"] = model.sample(5, seed=0)
        return _is_str_list(outputs["first"], 5)

    def seeded() -> str | None:
        if "first" not in outputs:
            return "no first sample to compare with"
        return None if model.sample(5, seed=0) == outputs["first"] else "the same seed gave a different sample"

    def zero() -> str | None:
        return None if model.sample(0, seed=0) == [] else "sample(0) did not return an empty list"

    def negative() -> str | None:
        try:
            model.sample(-1, seed=0)
        except (UserInputError, ValueError):
            return None
        return "sample(-1) did not raise an error"

    _run(report, "sample(n) returns n strings", shape)
    _run(report, "the same seed gives the same sample", seeded)
    _run(report, "sample(0) returns nothing", zero)
    _run(report, "a negative n is a clear error", negative)


def _as_matrix(value: Any) -> np.ndarray:
    if hasattr(value, "toarray"):
        value = value.toarray()
    return np.asarray(value, dtype=np.float64)


def _check_encoder(model: Any, report: CheckReport) -> None:
    molecules = list(MICRO_MOLECULES)
    outputs: dict[str, Any] = {}

    def shape() -> str | None:
        matrix = _as_matrix(model.encode(molecules, layers="last"))
        outputs["first"] = matrix
        if matrix.ndim != 2 or matrix.shape[0] != len(molecules) or matrix.shape[1] < 1:
            return f"expected ({len(molecules)}, d), got {matrix.shape}"
        if not np.isfinite(matrix).all():
            return "embeddings contain NaN or infinite values"
        return None

    def deterministic() -> str | None:
        if "first" not in outputs:
            return "no first output to compare with"
        again = _as_matrix(model.encode(molecules, layers="last"))
        return None if np.allclose(again, outputs["first"], rtol=1e-5, atol=1e-6) else "the same SMILES gave different embeddings"

    def order() -> str | None:
        if "first" not in outputs:
            return "no first output to compare with"
        reversed_rows = _as_matrix(model.encode(molecules[::-1], layers="last"))[::-1]
        return None if np.allclose(reversed_rows, outputs["first"], rtol=1e-4, atol=1e-5) else "a row's embedding depends on the other rows of the batch"

    def layers() -> str | None:
        every = model.encode(molecules[:2], layers="all")
        if not isinstance(every, list) or not every:
            return f"layers='all' must give a non-empty list, got {type(every).__name__}"
        last = _as_matrix(every[-1])
        if last.shape[0] != 2:
            return f"layers='all': each layer must have one row per SMILES, got {last.shape}"
        return None

    _run(report, "returns an (n, d) finite matrix", shape)
    _run(report, "deterministic for the same inputs", deterministic)
    _run(report, "independent of batch order", order)
    _run(report, "layers='all' returns a list of layers", layers)


def _check_mechanism(model: Any, report: CheckReport) -> None:
    record = dict(MICRO_MECHANISM)

    def shape() -> str | None:
        answers = model.predict_mechanisms([record])
        if not isinstance(answers, list) or len(answers) != 1:
            return f"expected one answer, got {answers!r}"[:200]
        if not isinstance(answers[0], (str, list)):
            return f"an answer must be text or a list of steps, got {type(answers[0]).__name__}"
        return None

    _run(report, "returns one answer per reaction", shape)


def _check_property(model: Any, report: CheckReport) -> None:
    def shape() -> str | None:
        values = np.asarray(model.predict_properties(list(MICRO_MOLECULES)), dtype=np.float64)
        if values.ndim not in (1, 2) or values.shape[0] != len(MICRO_MOLECULES):
            return f"expected ({len(MICRO_MOLECULES)},) or ({len(MICRO_MOLECULES)}, t), got {values.shape}"
        return None

    _run(report, "returns one value (row) per SMILES", shape)


_CHECKS = {
    "reaction-predictor": _check_reaction,
    "bag-predictor": _check_bags,
    "generator": _check_generator,
    "encoder": _check_encoder,
    "mechanism-predictor": _check_mechanism,
    "property-predictor": _check_property,
}


def check_model(model: Any, protocol: str, context: dict[str, Any] | None = None) -> CheckReport:
    """Run ``protocol``'s contract on ``model`` (an object or a spec string); never raises
    for a failing model: the report says what failed (a spec that cannot be loaded is one
    failed check)."""
    if protocol not in PROTOCOLS:
        raise UserInputError(f"unknown protocol {protocol!r}; known: {', '.join(sorted(PROTOCOLS))}")
    label = model if isinstance(model, str) else getattr(model, "name", type(model).__name__)
    report = CheckReport(str(label), protocol)
    try:
        loaded = resolve_model(model, protocol, context)
    except ChemassayError as exc:
        report.checks.append(Check("loads", False, str(exc)))
        return report
    report.checks.append(Check("loads", True))
    _CHECKS[protocol](loaded, report)
    return report

