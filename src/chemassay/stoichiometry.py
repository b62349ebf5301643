"""The stoichiometry suite's Python API (re-exported from :mod:`chemassay.suites.stoichiometry.api`)."""

from chemassay.suites.stoichiometry.api import *  # noqa: F401,F403
from chemassay.suites.stoichiometry.api import __all__  # noqa: F401
