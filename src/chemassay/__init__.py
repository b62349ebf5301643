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

import sys
from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chemassay")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.1.0"

from chemassay.suites import all_suites as _all_suites  # noqa: E402 - the version first

_LAZY = {
    "Result": ("chemassay.report.result", "Result"),
    "read_result": ("chemassay.report.result", "read_result"),
    "load_dataset": ("chemassay.data.registry", "load_dataset"),
    "list_datasets": ("chemassay.data.registry", "list_specs"),
    "load_model": ("chemassay.models.registry", "load_model"),
    "check_model": ("chemassay.models.check", "check_model"),
    "assay": ("chemassay.assaying", "assay"),
}
_SUBMODULES = ("models", "chem", "data", "report", "runtime", "suites", "contract", "leakage")

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


# Registering the suites (last, so that a plugin's declaration may use the names above) places
# each suite's api module, not yet executed, in sys.modules as ``chemassay.<alias>``: ``import chemassay.generation`` is then a
# plain import with no import hook (the registry's _expose_api says how).
_all_suites()

