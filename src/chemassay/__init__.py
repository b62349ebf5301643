"""chemassay: a test bench for chemistry machine-learning models.

Five suites ask whether a model understands chemistry or only pattern-matches:
``stoichiometry`` (ChemAlgebra), ``reaction-ood`` (Bradshaw et al.), ``generation``
(MOSES), ``robustness`` (AMORE) and ``mechanism`` (oMeBench).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chemassay")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.1.0"

__all__ = ["__version__"]
