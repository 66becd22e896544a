"""A headless Chromium driven over the DevTools protocol on a pipe, with the standard library.

Chromium's ``--remote-debugging-pipe`` reads JSON commands on fd 3 and writes replies and events
on fd 4, each message ended by a NUL byte. That needs no WebDriver, no chromedriver matching the
browser's version and no package from PyPI: a page is opened, its DOM read with
``Runtime.evaluate``, keys pressed with ``Input.dispatchKeyEvent``, and screenshots taken with
``Page.captureScreenshot``. Every network request the page makes is recorded.

A missing Chromium fails the test with the command that installs it (tests never skip).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

INSTALL = "apt-get update && apt-get install -y chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
]
TIMEOUT = 30.0


def chromium_path() -> str:
    """The Chromium binary; fails the test, naming the install command, if there is none."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"Chromium is not installed (the browser tests need it); run as root: {INSTALL}")


def _above_4(fd: int) -> int:
    """The same pipe end on a descriptor number of 10 or more (the original is closed)."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class BrowserError(Exception):
    """The browser replied with an error, died, or did not answer in time."""


class Browser:
    """One Chromium process in its own process group, with a fresh profile directory."""

    def __init__(self) -> None:
        binary = chromium_path()
        self.profile = Path(tempfile.mkdtemp(prefix="gin-view-chromium-"))
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        # bash moves the browser's ends to fds 3 and 4 (and execs the browser); lift them above
        # both first, or a pipe that happens to be fd 3 or 4 would be overwritten before it is
        # moved (dash cannot redirect descriptors above 9, so bash it is).
        to_browser, from_browser = (_above_4(to_browser), _above_4(from_browser))
        self.proc = subprocess.Popen(
            ["bash", "-c", 'exec "$@" 3<&"$CDP_IN" 4>&"$CDP_OUT"', "bash", binary, *FLAGS,
             f"--user-data-dir={self.profile}", "about:blank"],
            pass_fds=(to_browser, from_browser),
            env={**os.environ, "CDP_IN": str(to_browser), "CDP_OUT": str(from_browser)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, *,
             session: str | None = None) -> dict[str, Any]:  # fmt: skip
        """Send one command and wait for its reply (events meanwhile are kept in ``events``)."""
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == ident:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str, session: str | None) -> dict[str, Any]:
        """Wait for (and consume) the first event ``method`` of ``session``."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            for event in self.events:
                if event["method"] == method and event.get("sessionId") == session:
                    self.events.remove(event)
                    return event
            self.events.append(self._receive(deadline))

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._read], [], [], max(0.0, left))
            if not ready:
                raise BrowserError("Chromium did not answer in time")
            chunk = os.read(self._read, 1 << 20)
            if not chunk:
                raise BrowserError(f"Chromium exited (code {self.proc.poll()})")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\0", 1)
        value: dict[str, Any] = json.loads(line)
        return value

    def open(self, url: str, *, width: int = 1280, height: int = 800, mobile: bool = False) -> Page:
        """A new tab of the given viewport showing ``url``, once its load event has fired."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
            session=session,
        )
        page.goto(url)
        return page

    def close(self) -> None:
        """Ask the browser to quit, then make sure its whole process group is gone."""
        try:
            if self.proc.poll() is None:
                self.send("Browser.close")
                self.proc.wait(timeout=10)
        except (BrowserError, OSError, subprocess.TimeoutExpired):
            pass
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
            os.close(self._read)
            os.close(self._write)
            shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One tab: evaluate script, press keys, take screenshots."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """A command in this tab's session."""
        return self.browser.send(method, params, session=self.session)

    def goto(self, url: str) -> None:
        """Navigate and wait for the load event."""
        reply = self.send("Page.navigate", {"url": url})
        if reply.get("errorText"):
            raise BrowserError(f"cannot load {url}: {reply['errorText']}")
        self.browser.wait_event("Page.loadEventFired", self.session)

    def eval(self, expression: str) -> Any:
        """The JSON value of ``expression`` (awaited if it is a promise); page errors raise."""
        reply = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in reply:
            raise BrowserError(f"{expression!r} threw: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def text(self, selector: str) -> str:
        """The rendered text (``innerText``) of the first element matching ``selector``."""
        value = self.eval(f"document.querySelector({json.dumps(selector)}).innerText")
        return str(value)

    def key(self, key: str) -> None:
        """Press and release one key (``ArrowRight``, ``End``, ``n``...) on the page."""
        codes = {"ArrowLeft": 37, "ArrowRight": 39, "Home": 36, "End": 35, "PageUp": 33,
                 "PageDown": 34}  # fmt: skip
        params: dict[str, Any] = {"key": key, "windowsVirtualKeyCode": codes.get(key, 0)}
        if len(key) == 1:
            params["text"] = key
        self.send("Input.dispatchKeyEvent", {"type": "keyDown", **params})
        self.send("Input.dispatchKeyEvent", {"type": "keyUp", **params})

    def screenshot(self, path: Path, *, full_page: bool = True) -> Path:
        """Save a PNG of the page (the whole page, not only the viewport, by default)."""
        reply = self.send(
            "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": full_page}
        )
        path.write_bytes(base64.b64decode(reply["data"]))
        print(f"screenshot: {path}")
        return path

    def requested_urls(self) -> list[str]:
        """Every URL this tab has requested so far."""
        return [
            e["params"]["request"]["url"]
            for e in self.browser.events
            if e["method"] == "Network.requestWillBeSent" and e.get("sessionId") == self.session
        ]

    def errors(self) -> list[str]:
        """Uncaught script exceptions and console errors so far."""
        found = []
        for e in self.browser.events:
            if e.get("sessionId") != self.session:
                continue
            if e["method"] == "Runtime.exceptionThrown":
                found.append(json.dumps(e["params"]["exceptionDetails"])[:500])
            elif e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] == "error":
                found.append(json.dumps(e["params"]["args"])[:500])
        return found
