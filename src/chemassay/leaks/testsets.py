"""The test sets a leakage audit checks, as each suite declares them.

A suite lists its headline test sets in its own package (``leakage.py``) and names the
function in its :class:`~chemassay.suites.Suite` declaration (``leakage="module:function"``);
the function takes ``quick`` (a small subset, for smoke tests) and ``n_jobs`` and returns
:class:`TestSet` objects, loaded with the suite's own loaders. This module asks the suite
registry for them and never names a suite.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from chemassay.contract.errors import UserInputError
from chemassay.leaks.keys import KINDS


@dataclass
class TestSet:
    """One task's test items: ``ids`` (as the suite's results name them) and ``items``
    (SMILES or reaction SMILES, one per id).

    ``kind`` is ``molecule`` or ``reaction``; ``products`` asks for the products-alone key too
    (for tasks that ask a model for products); ``scaffolds`` asks for shared Bemis-Murcko
    scaffolds (for generative tasks); ``dataset`` and ``note`` say where the items come from
    and anything the reader of the audit should know (a set left out, a conversion made).
    """

    __test__ = False  # not a pytest test class

    suite: str
    task: str
    kind: str
    ids: list[str]
    items: list[str]
    products: bool = False
    scaffolds: bool = False
    dataset: str = ""
    note: str = ""
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"test set {self.suite}/{self.task}: kind must be one of {KINDS}, got {self.kind!r}")
        if len(self.ids) != len(self.items):
            raise ValueError(f"test set {self.suite}/{self.task}: {len(self.ids)} ids for {len(self.items)} items")
        if len(set(self.ids)) != len(self.ids):
            raise ValueError(f"test set {self.suite}/{self.task}: ids are not unique")


def ids_sha256(ids: Sequence[str]) -> str:
    """sha256 of the ids joined by newlines: what ties a stored audit to a task's id list."""
    return hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()


def suite_test_sets(suites: Sequence[str] | None = None, *, quick: bool = False, n_jobs: int = 1) -> list[TestSet]:
    """The declared test sets of ``suites`` (CLI names; default: every suite that declares
    some), in registry order. A named suite without a declaration is a one-line error."""
    from chemassay.suites import all_suites, get_suite

    chosen = [get_suite(name) for name in suites] if suites else [s for s in all_suites() if s.leakage]
    sets: list[TestSet] = []
    for suite in chosen:
        if not suite.leakage:
            raise UserInputError(f"suite {suite.name!r} declares no test sets for a leakage audit")
        declared = suite.load("leakage")(quick=quick, n_jobs=n_jobs)
        for test_set in declared:
            if not isinstance(test_set, TestSet):
                raise TypeError(f"{suite.leakage} returned {type(test_set).__name__}, not a TestSet")
        sets.extend(declared)
    return sets
