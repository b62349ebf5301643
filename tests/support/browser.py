"""Headless Chromium for tests that render a page (Debian's ``chromium``), driven over the
DevTools protocol: open a page, evaluate a script in it, read its console errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time


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

    def open_page(self, url: str, width: int | None = None, height: int = 900) -> str:
        """Open ``url`` in a new tab with console and log capture on (in a window ``width``
        pixels wide when given); returns the session id once the page's load event fired."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            self.send(domain, session=session)
        if width is not None:
            self.send("Emulation.setDeviceMetricsOverride",
                      {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
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


