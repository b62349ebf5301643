"""Child processes that take Ctrl-C as a terminal user's program does."""

from __future__ import annotations

import signal


def sigint_by_default() -> None:
    """``Popen(preexec_fn=...)``: the child starts with SIGINT's default action, so Python turns
    it into ``KeyboardInterrupt``. A test run started as a background job of a non-interactive
    shell inherits SIGINT *ignored*, and Python keeps an inherited ignore, so without this the
    Ctrl-C tests would send a signal the program was told to ignore."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
