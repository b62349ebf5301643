"""chemassay: a test bench for chemistry machine-learning models.

Five suites ask whether a model understands chemistry or only pattern-matches:
``stoichiometry`` (ChemAlgebra), ``reaction-ood`` (Bradshaw et al.), ``generation``
(MOSES), ``robustness`` (AMORE) and ``mechanism`` (oMeBench). Each is a module with an
``evaluate(...)`` that returns a :class:`Result`::

    import chemassay.generation
    result = chemassay.generation.evaluate(list_of_smiles)   # every MOSES metric

``chemassay.assay(model)`` runs one model through every suite it can answer and writes one
scorecard. ``chemassay.leakage(train_files)`` checks every suite's headline test items against a
model's training data (exact and near duplicates). ``chemassay.load_dataset(name)`` loads any
registered dataset; ``chemassay.models``
holds the model registry and protocols. Every suite of the suite registry
(:mod:`chemassay.suites`) is reachable as ``chemassay.<alias>`` (its api module), executed on
first use, so ``import chemassay`` is cheap.
"""

import os
import sys
from importlib import import_module

from chemassay.contract.hooks import add_result_check as _add_result_check
from chemassay.contract.version import __version__
from chemassay.suites import all_suites as _all_suites

_LAZY = {
    "Result": ("chemassay.contract.result", "Result"),
    "read_result": ("chemassay.contract.result", "read_result"),
    "load_dataset": ("chemassay.data.registry", "load_dataset"),
    "list_datasets": ("chemassay.data.registry", "list_specs"),
    "load_model": ("chemassay.models.registry", "load_model"),
    "check_model": ("chemassay.models.check", "check_model"),
    "assay": ("chemassay.assaying", "assay"),
    "leakage": ("chemassay.leaks", "leakage"),
}
_SUBMODULES = ("models", "chem", "data", "report", "runtime", "suites", "contract", "leaks")

__all__ = ["__version__", *sorted(_LAZY), *_SUBMODULES]


def __getattr__(name: str):
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(import_module(module), attribute)
    if name in _SUBMODULES:
        return import_module(f"chemassay.{name}")
    # a suite's api, which the registry placed in sys.modules as chemassay.<alias>: an import
    # statement finds it there, attribute access (chemassay.generation) here
    api = sys.modules.get(f"chemassay.{name}") if not name.startswith("_") else None
    if api is not None:
        return api
    raise AttributeError(f"module 'chemassay' has no attribute {name!r}")


def _strict_cards(result) -> None:
    """With ``CHEMASSAY_STRICT_CARDS=1`` (the test suite sets it) a result whose suite declares
    metric cards may carry no undeclared metric key (the contract runs the checks the layers
    above install; this one asks the report's metric cards)."""
    if os.environ.get("CHEMASSAY_STRICT_CARDS") != "1":
        return
    from chemassay.report.cards import all_cards, undeclared_keys

    try:
        declared = all_cards(result.suite)
    except KeyError:  # an unknown suite: the loaders report it, naming the field
        declared = []
    missing = undeclared_keys(result.suite, result.metrics) if declared else []
    if missing:
        raise ValueError(f"{result.suite}/{result.task} result carries metric keys no card declares: {missing[:10]}")


_add_result_check(_strict_cards)

# Registering the suites (last, so that a plugin's declaration may use the names above) places
# each suite's api module, not yet executed, in sys.modules as ``chemassay.<alias>``: ``import chemassay.generation`` is then a
# plain import with no import hook (the registry's _expose_api says how).
_all_suites()

