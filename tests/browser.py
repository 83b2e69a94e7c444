"""A real headless Chromium for the tests, driven over the DevTools protocol with the standard
library only: ``--remote-debugging-pipe`` makes the browser read commands from its fd 3 and
write answers and events to its fd 4, each a JSON message ended by a NUL byte. No websocket, no
browser download: Debian's ``chromium`` (``tests/ensure-chromium`` installs it; the environment
variable ``CANASTA_TEST_CHROMIUM`` names another binary).

Every wait is for a message (an answer to our command, or an event such as the page's load),
with a generous timeout; nothing sleeps. A command's answer arrives after the browser has done
it (a key pressed has been handled by the page's listeners), so reading the page afterwards
reads what the key did.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import select
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

CHROMIUM = os.environ.get("CANASTA_TEST_CHROMIUM", "/usr/bin/chromium")
TIMEOUT = 60.0
"""Seconds any one answer or event may take (a shared machine under load is slow)."""
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--hide-scrollbars",
    "--mute-audio",
    "--remote-debugging-pipe",
)

_KEY_CODES = {
    "ArrowLeft": 37,
    "ArrowRight": 39,
    "Home": 36,
    "End": 35,
    "PageUp": 33,
    "PageDown": 34,
}


class BrowserError(RuntimeError):
    """The browser answered a command with an error, died, or did not answer in time."""


class Browser:
    """One headless Chromium with one page (a tab) attached, for ``with`` blocks."""

    def __init__(self, profile_dir: Path) -> None:
        profile_dir.mkdir(parents=True, exist_ok=True)
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        self._log = (profile_dir / "chromium.log").open("wb")
        # The browser wants its pipe on fds 3 and 4: a shell puts them there and becomes it
        # (bash: a POSIX sh need not take a file descriptor above 9 in a redirection).
        self._process = subprocess.Popen(
            [
                "/bin/bash",
                "-c",
                f'exec "$@" 3<&{to_browser} 4>&{from_browser}',
                "sh",
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={profile_dir / 'profile'}",
                "about:blank",
            ],
            pass_fds=(to_browser, from_browser),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._ids = itertools.count(1)
        self.events: list[tuple[str, dict[str, Any]]] = []
        """Every event of the page's session so far: ``(method, params)``."""
        self._session = ""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        attached = self.call("Target.attachToTarget", targetId=target, flatten=True)
        self._session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")

    def __enter__(self) -> Browser:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        try:
            if self._process.poll() is None:
                self._session = ""
                self.call("Browser.close", timeout=10)
        except (BrowserError, OSError):
            pass
        finally:
            try:
                self._process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=20)
            for fd in (self._read, self._write):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._log.close()

    # -- the protocol ----------------------------------------------------------------------

    def call(self, method: str, timeout: float = TIMEOUT, **params: Any) -> dict[str, Any]:
        """Send a command (to the page's session once attached) and return its result."""
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if self._session:
            message["sessionId"] = self._session
        data = json.dumps(message).encode() + b"\0"
        while data:
            data = data[os.write(self._write, data) :]
        deadline = time.monotonic() + timeout
        while True:
            answer = self._next(deadline, method)
            if answer.get("id") == number:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result

    def wait_for(self, event: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The params of the next event ``event`` not yet waited for (kept in ``events``)."""
        deadline = time.monotonic() + timeout
        seen = len(self.events)
        while True:
            for method, params in self.events[seen:]:
                if method == event:
                    return params
            seen = len(self.events)
            self._next(deadline, event)

    def _next(self, deadline: float, waiting_for: str) -> dict[str, Any]:
        """The next message; events are recorded on the way."""
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError(f"no answer to {waiting_for} in time")
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise BrowserError(f"the browser closed its pipe (waiting for {waiting_for})")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        if "method" in message:
            self.events.append((message["method"], message.get("params", {})))
        return message

    # -- what the tests do -----------------------------------------------------------------

    def open(self, path: Path) -> None:
        """Load a local file and wait until it has loaded (its scripts have run)."""
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-like values only)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def press(self, key: str) -> None:
        """Press and release a key; returns once the page has handled it."""
        code = _KEY_CODES[key]
        for kind in ("keyDown", "keyUp"):
            self.call(
                "Input.dispatchKeyEvent",
                type=kind,
                key=key,
                code=key,
                windowsVirtualKeyCode=code,
                nativeVirtualKeyCode=code,
            )

    def click(self, selector: str) -> None:
        """Click the element ``selector`` names, as a mouse would, at its centre."""
        box = self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
            ".getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                type=kind,
                x=box[0],
                y=box[1],
                button="left",
                clickCount=1,
            )

    def screen(self, width: int, height: int, *, mobile: bool) -> None:
        """Size the page's window as a phone (``mobile``) or a desktop screen."""
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=2 if mobile else 1,
            mobile=mobile,
        )

    def screenshot(self, path: Path, *, whole: bool = True) -> bytes:
        """A PNG of the whole page (beyond the window), or of the window only, written to
        ``path``."""
        shot = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=whole)
        data = base64.b64decode(shot["data"])
        path.write_bytes(data)
        return data

    def problems(self, since: int = 0) -> list[str]:
        """Every console error or warning, uncaught exception and error log entry among the
        events from ``since`` on (a refused script or style, a blocked request, a failed load
        among them)."""
        found = []
        for method, params in self.events[since:]:
            if method == "Runtime.exceptionThrown":
                found.append(f"exception: {params['exceptionDetails']}")
            elif method == "Runtime.consoleAPICalled" and params["type"] in (
                "error",
                "warning",
                "assert",
            ):
                found.append(f"console.{params['type']}: {params['args']}")
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                found.append(f"log: {params['entry']}")
            elif method == "Network.loadingFailed":
                found.append(f"failed request: {params}")
        return found

    def requests(self, since: int = 0) -> list[str]:
        """The URL of every request among the events from ``since`` on."""
        return [
            p["request"]["url"] for m, p in self.events[since:] if m == "Network.requestWillBeSent"
        ]
