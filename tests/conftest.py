"""Shared test fixtures: a CLI runner that goes through ``main`` (exit codes included), an
isolated ``$CHEMASSAY_HOME``, a real OpenAI-compatible server, a headless browser, the toy sixth
suite and the library's logged messages."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

# The environment variables the tests run with are set in the root conftest.py (the docstring
# examples of src run with them too).
# tests/support holds helpers shared by every suite's tests (a real OpenAI-compatible server).
sys.path.insert(0, str(Path(__file__).resolve().parent))


@dataclass
class CliOutcome:
    """Exit code and captured output of one ``chemassay`` invocation."""

    code: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(capsys):
    """Run ``chemassay ARGS...`` in-process: ``cli("data", "list").code == 0``."""
    from chemassay.cli import main
    from chemassay.runtime.progress import settings

    def run(*args: str) -> CliOutcome:
        code = 0
        try:
            main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            settings.quiet = False
            settings.refresh = False
            settings.debug = False
        captured = capsys.readouterr()
        return CliOutcome(code, captured.out, captured.err)

    return run


@pytest.fixture
def isolated_home(tmp_path, monkeypatch):
    """Point ``$CHEMASSAY_HOME`` at an empty temporary folder for this test."""
    home = tmp_path / "chemassay-home"
    monkeypatch.setenv("CHEMASSAY_HOME", str(home))
    return home


@pytest.fixture
def openai_server():
    """A real OpenAI-compatible server on 127.0.0.1 (chat completions and embeddings)."""
    from support.openai_server import OpenAIServer

    server = OpenAIServer()
    yield server
    server.close()


@pytest.fixture
def browser():
    """A headless Chromium (the test is skipped, saying why, where none is installed)."""
    from support.browser import Browser, chromium_binary

    binary = chromium_binary()
    if binary is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium); "
                    "the report's browser test needs it")
    instance = Browser(binary)
    try:
        yield instance
    finally:
        instance.close()


@pytest.fixture
def toy_suite():
    """Register the toy sixth suite ``formula`` (tests/support/toy_suite) for one test."""
    from chemassay.suites import register_suite, unregister_suite
    from support.toy_suite import SUITE

    register_suite(SUITE)
    yield SUITE
    unregister_suite(SUITE.name)


class _Logged:
    """The ``chemassay`` logger's messages, read like ``capsys``: ``read()`` returns what was
    logged since the last read, one message a line."""

    def __init__(self) -> None:
        import logging

        self.messages: list[str] = []
        outer = self

        class Collect(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                outer.messages.append(record.getMessage())

        self.handler = Collect(logging.INFO)

    def read(self) -> str:
        text = "\n".join(self.messages)
        self.messages.clear()
        return text


@pytest.fixture
def logged():
    """What the library said meanwhile (its messages go to the ``chemassay`` logger)."""
    import logging

    collector = _Logged()
    logger = logging.getLogger("chemassay")
    before = logger.level
    logger.addHandler(collector.handler)
    logger.setLevel(logging.INFO)
    yield collector
    logger.removeHandler(collector.handler)
    logger.setLevel(before)
