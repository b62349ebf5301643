"""chemassay's version: the installed distribution's, or ``0.1.0`` in a source tree that was
never installed. ``chemassay.__version__`` is this value."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("chemassay")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.1.0"

__all__ = ["__version__"]
