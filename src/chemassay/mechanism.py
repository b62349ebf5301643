"""The mechanism suite's Python API (re-exported from :mod:`chemassay.suites.mechanism.api`)."""

from chemassay.suites.mechanism.api import *  # noqa: F401,F403
from chemassay.suites.mechanism.api import __all__  # noqa: F401
