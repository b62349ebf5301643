"""chemassay: a test bench for chemistry machine-learning models.

Five suites ask whether a model understands chemistry or only pattern-matches:
``stoichiometry`` (ChemAlgebra), ``reaction-ood`` (Bradshaw et al.), ``generation``
(MOSES), ``robustness`` (AMORE) and ``mechanism`` (oMeBench). Each is a module with an
``evaluate(...)`` that returns a :class:`Result`::

    import chemassay.generation
    result = chemassay.generation.evaluate(list_of_smiles)   # every MOSES metric

``chemassay.load_dataset(name)`` loads any registered dataset; ``chemassay.models`` holds the
model registry and protocols. Suites are imported on first use, so ``import chemassay`` is
cheap.
"""

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chemassay")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.1.0"

_LAZY = {
    "Result": ("chemassay.report.result", "Result"),
    "read_result": ("chemassay.report.result", "read_result"),
    "load_dataset": ("chemassay.data.registry", "load_dataset"),
    "list_datasets": ("chemassay.data.registry", "list_specs"),
    "load_model": ("chemassay.models.registry", "load_model"),
    "check_model": ("chemassay.models.check", "check_model"),
}
_SUBMODULES = ("stoichiometry", "reaction_ood", "generation", "robustness", "mechanism", "models", "chem", "data",
               "report", "runtime")

__all__ = ["__version__", *sorted(_LAZY), *_SUBMODULES]


def __getattr__(name: str):
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(import_module(module), attribute)
    if name in _SUBMODULES:
        return import_module(f"chemassay.{name}")
    raise AttributeError(f"module 'chemassay' has no attribute {name!r}")
