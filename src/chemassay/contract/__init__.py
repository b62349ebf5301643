"""The contract: the types every layer of chemassay may import, which import nothing of
chemassay outside this package (``tests/test_layers.py`` checks it).

* :mod:`.protocol`: the :class:`Protocol` object a suite declares for what it asks a model,
  :class:`Request`, :class:`TextAsker`, :class:`TextOutcome`, :class:`Unreadable`;
* :mod:`.run`: the :class:`Run` (what running one model over a suite's items gave);
* :mod:`.options`: the common evaluation :class:`Options`;
* :mod:`.result`: :class:`Result` and its parts (:class:`ModelRef`, :class:`DatasetRef`,
  :class:`InputRef`, :class:`Interval`, :class:`RequestSummary`, :class:`SkippedItem`,
  :class:`SubsetRef`, :class:`ResultDetails`), :func:`make_result` and :func:`read_result`;
* :mod:`.assay`: a suite's part in ``chemassay assay`` (:class:`SuiteAssay`,
  :class:`AssayTask`, :class:`AssayContext`, :class:`TaskItems`, :func:`metric_text`);
* :mod:`.errors`: the errors chemassay raises on purpose (:class:`UserInputError`...);
* :mod:`.hooks`: what the layers above hand down (how a result finds its suite's details
  class; the checks every result passes);
* :mod:`.version` and :mod:`.files`: the version and the file primitives a result needs
  (public in :mod:`chemassay.runtime.files`).

Every public name is importable from here (``from chemassay.contract import Result``). The
names of :mod:`.result`, :mod:`.assay` and :mod:`.errors` are resolved on first use: the suite
registry imports the contract at ``import chemassay``, and an eager import of the result
schema would load pydantic with it.
"""

from __future__ import annotations

from importlib import import_module

from chemassay.contract.options import Options
from chemassay.contract.protocol import (
    CAPABILITIES,
    EXTRACT_MODES,
    Check,
    Protocol,
    Request,
    TextAsker,
    TextOutcome,
    Unreadable,
    answer_excerpt,
    strict_extraction,
)
from chemassay.contract.run import Run
from chemassay.contract.version import __version__

_LAZY: dict[str, tuple[str, ...]] = {
    "errors": ("ChecksumError", "ChemassayError", "MissingDependencyError", "UserInputError", "describe_os_error",
               "require"),
    "result": ("DatasetRef", "InputRef", "Interval", "ModelRef", "RequestSummary", "Result", "ResultDetails",
               "SkippedItem", "SubsetRef", "Timer", "current_versions", "describe_validation_error", "input_ref",
               "make_result", "read_result"),
    "assay": ("ENDPOINT_KINDS", "AssayContext", "AssayTask", "SuiteAssay", "TaskItems", "metric_text"),
    "hooks": ("add_result_check", "check_result", "details_class", "remove_result_check", "set_details_lookup"),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}

__all__ = [  # noqa: PLE0604 - the lazy names are listed too
    "CAPABILITIES", "EXTRACT_MODES", "Check", "Options", "Protocol", "Request", "Run", "TextAsker", "TextOutcome",
    "Unreadable", "__version__", "answer_excerpt", "strict_extraction", *sorted(_WHERE),
]


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'chemassay.contract' has no attribute {name!r}")
    return getattr(import_module(f"chemassay.contract.{module}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
