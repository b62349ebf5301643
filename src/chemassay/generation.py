"""The generation suite's Python API (re-exported from :mod:`chemassay.suites.generation.api`)."""

from chemassay.suites.generation.api import *  # noqa: F401,F403
from chemassay.suites.generation.api import __all__  # noqa: F401
