"""Headless Chromium (Debian's ``chromium``) driven with the DevTools protocol over a
pipe (``--remote-debugging-pipe``: fd 3 in, fd 4 out, NUL-separated JSON), so no
port, no websocket library and no network are involved: the browser the report and
site tests open pages in.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path


class Chromium:
    """One headless browser and one page, driven over the DevTools pipe."""

    def __init__(self, profile: Path):
        binary = shutil.which("chromium")
        assert binary, "Debian's chromium is not installed (apt-get install chromium)"
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        keep = (os.dup(to_browser_r), os.dup(from_browser_w))  # above fd 4: safe to dup2

        def as_fd3_fd4():
            os.dup2(keep[0], 3)
            os.dup2(keep[1], 4)

        args = [binary, "--headless", "--remote-debugging-pipe", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--hide-scrollbars",
                f"--user-data-dir={profile}", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")
        self.process = subprocess.Popen(args, pass_fds=(3, 4), preexec_fn=as_fd3_fd4,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (to_browser_r, from_browser_w, *keep):
            os.close(fd)
        self._next_id = 0
        self._replies: dict[int, queue.Queue] = {}
        self._lock = threading.Lock()
        self.events: list[dict] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message:
                    with self._lock:
                        waiting = self._replies.get(message["id"])
                    if waiting is not None:
                        waiting.put(message)
                else:
                    self.events.append(message)

    def send(self, method: str, session: str | None = None, timeout: float = 60,
             **params) -> dict:
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            self._replies[ident] = queue.Queue()
        message = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        reply = self._replies[ident].get(timeout=timeout)
        assert "error" not in reply, f"{method}: {reply['error']}"
        return reply["result"]

    def page(self, method: str, **params) -> dict:
        return self.send(method, session=self.session, **params)

    def wait_for_event(self, method: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for event in self.events:
                if event.get("method") == method and event.get("sessionId") == self.session:
                    return event
            time.sleep(0.05)
        raise AssertionError(f"no {method} within {timeout} s")

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except Exception:  # already gone: the wait below tells
            pass
        try:
            self.process.wait(timeout=15)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            os.close(self._to_browser)
            os.close(self._from_browser)
