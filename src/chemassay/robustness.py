"""The robustness suite's Python API (re-exported from :mod:`chemassay.suites.robustness.api`)."""

from chemassay.suites.robustness.api import *  # noqa: F401,F403
from chemassay.suites.robustness.api import __all__  # noqa: F401
