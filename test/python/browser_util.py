"""Headless Chromium driven over the DevTools protocol, for testing pages as a user sees them:
load a file, evaluate script, move and click the mouse, collect console errors and uncaught
exceptions, take a screenshot. Talks over --remote-debugging-pipe (file descriptors 3 and 4,
messages ended by NUL), so it needs nothing beyond the standard library and Debian's chromium."""
import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    def __init__(self, width=1200, height=1600):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The browser reads fd 3 and writes fd 4: a shell moves the pipe's ends there, from
        # numbers above 9 so that neither move overwrites the other end.
        to_browser_r, from_browser_w = (self._above_nine(fd) for fd in (to_browser_r, from_browser_w))
        # A profile of its own: a second browser on the same one would hand its work to the first.
        self._profile = tempfile.mkdtemp(prefix="gpuprobe-chromium-")
        command = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                   "--remote-debugging-pipe", "--user-data-dir=" + self._profile, "about:blank"]
        self._proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w} '
             f'{to_browser_r}<&- {from_browser_w}>&-', *command],
            pass_fds=(to_browser_r, from_browser_w), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []  # every event message received, in order
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.call("Target.attachToTarget", targetId=target,
                                  flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width,
                  height=height, deviceScaleFactor=1, mobile=False)

    @staticmethod
    def _above_nine(fd):
        high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
        os.close(fd)
        return high


    def _send(self, message):
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")

    def _receive(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, session=False, timeout=60, **params):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        self._send(message)
        while True:
            reply = self._receive(timeout)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, timeout=60):
        for e in self.events:
            if e.get("method") == method:
                return e
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            e = self._receive(deadline - time.monotonic())
            self.events.append(e)
            if e.get("method") == method:
                return e
        raise TimeoutError(method)

    def open(self, url, timeout=60):
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired", timeout)

    def eval(self, expression):
        result = self.call("Runtime.evaluate", session=True, expression=expression,
                           returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def mouse(self, kind, x, y, **extra):
        """kind: mouseMoved, mousePressed or mouseReleased, at page coordinates (x, y)."""
        self.call("Input.dispatchMouseEvent", session=True, type=kind, x=x, y=y, **extra)

    def click(self, x, y):
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, button="left", clickCount=1)
        self.mouse("mouseReleased", x, y, button="left", clickCount=1)

    def drag(self, x0, y, x1, steps=8):
        self.mouse("mouseMoved", x0, y)
        self.mouse("mousePressed", x0, y, button="left", clickCount=1)
        for s in range(1, steps + 1):
            self.mouse("mouseMoved", x0 + (x1 - x0) * s / steps, y, button="left", buttons=1)
        self.mouse("mouseReleased", x1, y, button="left", clickCount=1)

    def screenshot(self, path, whole_page=True):
        data = self.call("Page.captureScreenshot", session=True, format="png",
                         captureBeyondViewport=whole_page)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def errors(self):
        """Console errors and warnings, uncaught exceptions and failed loads, as text."""
        found = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(json.dumps(params["exceptionDetails"])[:500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                found.append(json.dumps(params.get("args"))[:500])
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                found.append(params["entry"].get("text", "")[:500])
        return found

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:  # noqa: BLE001 (it may go before it answers)
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
