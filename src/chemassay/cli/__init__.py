"""The ``chemassay`` command line.

``main`` is the console script's entry point (``chemassay = "chemassay.cli:main"``, and
``python -m chemassay``) and ``app`` the root Typer app; both live in :mod:`.root`, which
mounts the shared command groups (one module each: :mod:`.data`, :mod:`.models`,
:mod:`.report`, :mod:`.assay`, :mod:`.demo`) and every registered suite's own ``cli`` app.
:mod:`.tools` holds what every CLI module shares, the suites' included.

They are looked up on first use: a suite's CLI module imports :mod:`.tools`, and
:mod:`.root` mounts the suites' apps, so importing this package must not import
:mod:`.root` (a suite's CLI imported first would be mounted half-built).
"""

from __future__ import annotations

from typing import Any

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from chemassay.cli import root

        return getattr(root, name)
    raise AttributeError(f"module 'chemassay.cli' has no attribute {name!r}")
