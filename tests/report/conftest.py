"""Fixtures of the report tests: metric cards for the keys the tests use (declared for a test,
only where the suites do not declare them yet), a results store in a temporary home, and a
headless Chromium driven over the DevTools protocol on a pipe (no network, no extra package)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from chemassay.report.cards import MetricCard, all_cards, card_for, register_cards, unregister_cards

# (suite, an example key, the card to register when no card declares the example)
_TEST_CARDS = [
    ("stoichiometry", "EM", MetricCard("EM", "stoichiometry", "exact match of the product bag", "higher", paper_name="EM", paper_table="Table 4", interval="bootstrap")),
    ("stoichiometry", "JAC", MetricCard("JAC", "stoichiometry", "Jaccard of the product bag", "higher", paper_name="JAC", paper_table="Table 4", interval="bootstrap")),
    ("stoichiometry", "F1", MetricCard("F1", "stoichiometry", "F1 of the product bag", "higher", paper_name="F1", paper_table="Table 4", interval="bootstrap")),
    ("stoichiometry", "ACC", MetricCard("ACC", "stoichiometry", "top-1 accuracy", "higher", paper_name="ACC", paper_table="Table 2", interval="bootstrap")),
    ("reaction-ood", "top1_accuracy", MetricCard("top{k}_accuracy", "reaction-ood", "top-k accuracy", "higher", paper_name="top-k", paper_table="Table S2.2", interval="bootstrap")),
    ("generation", "FCD/Test", MetricCard("FCD/{test}", "generation", "Fréchet ChemNet Distance", "lower", range=(0.0, None), paper_name="FCD", paper_table="Table 3")),
    ("generation", "valid", MetricCard("valid", "generation", "share of valid SMILES", "higher", paper_name="Valid", paper_table="Table 1", interval="bootstrap")),
    ("robustness", "canonical/o2a_acc@1", MetricCard("{augmentation}/{direction}_acc@{k}", "robustness", "retrieval accuracy", "higher", paper_name="Acc@k", paper_table="Table 1", interval="bootstrap")),
    ("robustness", "canonical/o2a_mrr", MetricCard("{augmentation}/{direction}_mrr", "robustness", "mean reciprocal rank", "higher", paper_name="MRR", paper_table="Table 1", interval="bootstrap")),
    ("mechanism", "S_total", MetricCard("S_total", "mechanism", "oMeS total", "higher", paper_name="S_tot", paper_table="Table 3", interval="bootstrap")),
    ("mechanism", "S_partial", MetricCard("S_partial", "mechanism", "oMeS partial", "higher", paper_name="S_part", paper_table="Table 3", interval="bootstrap")),
    ("mechanism", "V", MetricCard("V", "mechanism", "SMILES validity", "higher", paper_name="V", paper_table="Table 3", interval="bootstrap")),
    ("mechanism", "L", MetricCard("L", "mechanism", "logical fidelity", "higher", paper_name="L", paper_table="Table 3", interval="bootstrap")),
]


@pytest.fixture
def test_cards():
    """Cards for the keys the report tests use, declared for the test only and only where the
    suites do not declare them yet (a partial set left behind would make every other test of
    that suite fail the strict-card check)."""
    declared = {(c.suite, c.key) for c in all_cards()}
    missing = [card for suite, example, card in _TEST_CARDS
               if card_for(suite, example) is None and (card.suite, card.key) not in declared]
    register_cards(missing)
    try:
        yield missing
    finally:
        unregister_cards(missing)


@pytest.fixture
def store_home(tmp_path, monkeypatch):
    """An empty ``$CHEMASSAY_HOME`` with the results store switched on."""
    home = tmp_path / "home"
    monkeypatch.setenv("CHEMASSAY_HOME", str(home))
    monkeypatch.delenv("CHEMASSAY_NO_STORE", raising=False)
    monkeypatch.delenv("CHEMASSAY_STORE", raising=False)
    from chemassay.report.store import set_recording

    set_recording(True)
    return home


# --- headless Chromium over the DevTools protocol (--remote-debugging-pipe) -----------------
def chromium_binary() -> str | None:
    """The Chromium executable, or ``None``."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """A headless Chromium speaking the DevTools protocol on file descriptors 3 and 4."""

    def __init__(self, binary: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="chemassay-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire() -> None:
            # the child reads commands on fd 3 and writes replies on fd 4; move both pipe ends
            # above 10 first so that neither dup2 overwrites the other
            import fcntl

            reader = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            writer = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(reader, 3)
            os.dup2(writer, 4)

        self.process = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
             "--disable-default-apps", "--mute-audio", f"--user-data-dir={self.profile}", "--remote-debugging-pipe",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=wire, pass_fds=(3, 4),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30.0) -> dict:
        """Send a command and wait for its reply (events seen meanwhile are kept)."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode("utf-8") + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _read(self, deadline: float) -> dict:
        import select

        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self._from_browser], [], [], remaining)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def wait_for(self, method: str, session: str, timeout: float = 30.0) -> dict:
        """Wait for an event of ``session`` (returns it)."""
        deadline = time.monotonic() + timeout
        for event in self.events:
            if event.get("method") == method and event.get("sessionId") == session:
                return event
        while True:
            event = self._read(deadline)
            self.events.append(event)
            if event.get("method") == method and event.get("sessionId") == session:
                return event

    def open_page(self, url: str) -> str:
        """Open ``url`` in a new tab with console and log capture on; returns the session id
        once the page's load event fired."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.send(domain, session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        return session

    def evaluate(self, session: str, expression: str):
        """The JSON value of a JavaScript expression in the page."""
        reply = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                          session=session)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"page script failed: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def console_errors(self, session: str) -> list[str]:
        """Console errors, uncaught exceptions and error log entries (failed loads, CSP) of a page."""
        errors = []
        for event in self.events:
            if event.get("sessionId") != session:
                continue
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                errors.append(f"{details.get('text')} {details.get('exception', {}).get('description', '')}".strip())
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                errors.append(str(params["entry"].get("text")) + " " + str(params["entry"].get("url", "")))
        return errors

    def close(self) -> None:
        """Close the browser and remove its profile."""
        try:
            self.send("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass  # already gone: the process is waited for / killed below
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=15)
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass  # closed already
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture
def browser():
    """A headless Chromium (the test is skipped, saying why, where none is installed)."""
    binary = chromium_binary()
    if binary is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium); "
                    "the report's browser test needs it")
    instance = Browser(binary)
    try:
        yield instance
    finally:
        instance.close()


def write_json(path: Path, data: dict) -> Path:
    """Write ``data`` as JSON (for hand-made result files)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path
