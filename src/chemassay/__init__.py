"""chemassay: a test bench for chemistry machine-learning models.

Five suites ask whether a model understands chemistry or only pattern-matches:
``stoichiometry`` (ChemAlgebra), ``reaction-ood`` (Bradshaw et al.), ``generation``
(MOSES), ``robustness`` (AMORE) and ``mechanism`` (oMeBench). Each is a module with an
``evaluate(...)`` that returns a :class:`Result`::

    import chemassay.generation
    result = chemassay.generation.evaluate(list_of_smiles)   # every MOSES metric

``chemassay.assay(model)`` runs one model through every suite it can answer and writes one
scorecard. ``chemassay.load_dataset(name)`` loads any registered dataset; ``chemassay.models``
holds the model registry and protocols. Every suite of the suite registry
(:mod:`chemassay.suites`) is reachable as ``chemassay.<alias>`` (its api module), imported on
first use, so ``import chemassay`` is cheap.
"""

import importlib.abc
import importlib.util
import sys
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
    "assay": ("chemassay.assay", "assay"),
}
_SUBMODULES = ("models", "chem", "data", "report", "runtime", "suites")

__all__ = ["__version__", *sorted(_LAZY), *_SUBMODULES]


def _suite_api(alias: str) -> str | None:
    """The api module of the suite whose alias is ``alias`` (``None``: no such suite)."""
    from chemassay.suites import all_suites

    for suite in all_suites():
        if suite.alias == alias:
            return suite.api
    return None


class _SuiteAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import chemassay.<alias>`` gives the suite's api module (``chemassay.reaction_ood`` is
    ``chemassay.suites.reaction_ood.api``), for every suite in the registry."""

    def __init__(self) -> None:
        self._originals: dict[int, tuple] = {}

    def find_spec(self, fullname, path=None, target=None):  # noqa: D102 - importlib protocol
        prefix, _, alias = fullname.partition(".")
        if prefix != __name__ or not alias or "." in alias or alias in _SUBMODULES:
            return None
        api = _suite_api(alias)
        if api is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):  # noqa: D102 - importlib protocol
        module = import_module(_suite_api(spec.name.partition(".")[2]))
        # the import system stamps the alias's spec on the module it gets back: remember the
        # module's own so exec_module can put it back (pickling, importlib.resources need it)
        self._originals[id(module)] = (module.__spec__, getattr(module, "__loader__", None))
        return module

    def exec_module(self, module) -> None:  # noqa: D102 - the api module is already executed
        spec, loader = self._originals.pop(id(module), (None, None))
        if spec is not None:
            module.__spec__ = spec
            module.__loader__ = loader


sys.meta_path.append(_SuiteAliasFinder())


def __getattr__(name: str):
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(import_module(module), attribute)
    if name in _SUBMODULES:
        return import_module(f"chemassay.{name}")
    if not name.startswith("_") and _suite_api(name) is not None:
        return import_module(f"chemassay.{name}")
    raise AttributeError(f"module 'chemassay' has no attribute {name!r}")
