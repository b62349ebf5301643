"""The reaction-ood suite's Python API (re-exported from :mod:`chemassay.suites.reaction_ood.api`)."""

from chemassay.suites.reaction_ood.api import *  # noqa: F401,F403
from chemassay.suites.reaction_ood.api import __all__  # noqa: F401
