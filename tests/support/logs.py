"""The library's messages (the ``chemassay`` logger), collected for a test whatever the
logger's propagation: the CLI prints them, the library itself only logs them."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator


@contextlib.contextmanager
def chemassay_messages(level: int = logging.INFO) -> Iterator[list[str]]:
    """``with chemassay_messages() as messages: ...`` collects every message logged meanwhile."""
    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage())

    logger = logging.getLogger("chemassay")
    handler, before = Collect(level), logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before)


@contextlib.contextmanager
def expect_message(pattern: str, level: int = logging.WARNING) -> Iterator[list[str]]:
    """Like ``pytest.warns``: the block must log a message (at ``level`` or above) matching ``pattern``."""
    with chemassay_messages(level) as messages:
        yield messages
    assert any(re.search(pattern, message) for message in messages), (pattern, messages)
