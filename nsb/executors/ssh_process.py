"""A detached process on an SSH node, and the shell snippets that manage it.

The process runs under ``setsid`` in its own process group behind a small
``sh`` wrapper that reports its pid and records its exit status in the
executor's run directory; polling, waiting and signalling are one remote
command each, so they survive a reconnect.
"""

from __future__ import annotations

import logging
import queue
import re
import signal
import subprocess
import time
from typing import TYPE_CHECKING

from nsb.executors.base import Process

if TYPE_CHECKING:
    from nsb.executors.ssh import SshExecutor

LOG = logging.getLogger(__name__)

# $1 status file, then the command. "nsb-pid PID" (or "nsb-missing") goes to fd 3,
# which is then closed; signals stop the command, and the shell still records its
# status (its own messages, such as "Terminated", stay out of the log).
WRAPPER = ('status=$1; shift; '
            'command -v "$1" >/dev/null 2>&1 || { echo nsb-missing >&3; exit 127; }; '
            'echo "nsb-pid $$" >&3; exec 3>&- 4>&2 2>/dev/null; '
            'trap : HUP INT QUIT TERM USR1 USR2 ALRM; '
            "sh -c 'exec 2>&4 4>&-; exec \"$@\"' sh \"$@\"; echo \"$?\" > \"$status\"")
# $1 status file, $2 pid: prints the exit status, "running" or "gone" (zombies are gone)
_ALIVE = 's=$(cat /proc/"$2"/stat 2>/dev/null) && s=${s##*) } && [ "${s%% *}" != Z ]'
_POLL = f'if [ -s "$1" ]; then cat "$1"; elif {_ALIVE}; then echo running; else echo gone; fi'
_WAIT = f'while [ ! -s "$1" ] && {_ALIVE}; do sleep 0.05; done'
_SIGNAL = 'kill -s "$1" -- "-$2" 2>/dev/null; :'


class Dropped(Exception):
    """The transport died under an operation."""


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:40]


class SshProcess(Process):
    """A process on the node, in its own session and process group (pgid == pid)."""

    def __init__(self, executor: SshExecutor, argv: list[str], log_path: str | None,
                 pid: int, status_path: str, channel=None, lines=None):
        self.executor = executor
        self.argv = argv
        self.log_path = log_path
        self.pid = pid
        self.status_path = status_path
        self.returncode: int | None = None
        self._channel = channel
        self._lines = lines
        self._killed = False
        self._stopped = False

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        out = self.executor.run(["sh", "-c", _POLL, "sh", self.status_path, str(self.pid)],
                                check=False, timeout=30).stdout.strip()
        if out == "running":
            return None
        if out.isdigit():
            code = int(out)
            self.returncode = -(code - 128) if 128 < code <= 128 + 64 else code
        else:  # killed with SIGKILL before its shell could record a status
            self.returncode = -signal.SIGKILL if self._killed else 255
        self.executor._sync_log(self.log_path)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            code = self.poll()
            if code is not None:
                return code
            left = 30.0 if deadline is None else min(30.0, deadline - time.monotonic())
            if left <= 0.0:
                raise subprocess.TimeoutExpired(self.argv, timeout)
            self.executor.run(["timeout", f"{max(left, 0.01):.3f}", "sh", "-c", _WAIT, "sh",
                               self.status_path, str(self.pid)], check=False, timeout=left + 30)

    def signal(self, signum: int) -> None:
        if self.returncode is not None:
            return  # its pid may belong to someone else by now
        if signum == signal.SIGKILL:
            self._killed = True
        name = signal.Signals(signum).name.removeprefix("SIG")
        self.executor.run(["sh", "-c", _SIGNAL, "sh", name, str(self.pid)], check=False,
                          timeout=30)

    def stop(self, grace_s: float = 5.0) -> int | None:
        if self._stopped:
            return self.returncode
        if self.poll() is None:
            self.signal(signal.SIGTERM)
            try:
                self.wait(grace_s)
            except subprocess.TimeoutExpired:
                LOG.warning("%s: %s ignored SIGTERM for %.1f s; killing it",
                            self.executor.name, self.argv[0], grace_s)
                self.signal(signal.SIGKILL)
                self.wait(10)
        if not self._killed:  # the group may still hold children
            self._killed = True
            self.executor.run(["sh", "-c", _SIGNAL, "sh", "KILL", str(self.pid)],
                              check=False, timeout=30)
        self._stopped = True
        if self._channel is not None:
            self._channel.close()
        self.executor._sync_log(self.log_path)
        return self.returncode

    # pipes

    def write_line(self, line: str) -> None:
        try:
            self._channel.sendall((line + "\n").encode())
        except OSError as exc:
            raise BrokenPipeError(f"{self.executor.name}: {self.argv[0]}: {exc}") from None

    def _next(self, timeout: float) -> str:
        try:
            line = self._lines.get(timeout=max(0.0, timeout))
        except queue.Empty:
            raise subprocess.TimeoutExpired(self.argv, timeout) from None
        if line is None:
            self._lines.put(None)
            raise EOFError(f"{self.argv[0]} closed its output")
        return line

    def read_line(self, timeout: float) -> str:
        return self._next(timeout).rstrip("\n")

    def read_all(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        chunks = []
        while True:
            try:
                chunks.append(self._next(deadline - time.monotonic()))
            except EOFError:
                return "".join(chunks)
            except subprocess.TimeoutExpired:
                raise subprocess.TimeoutExpired(self.argv, timeout) from None


def tagged_pid(lines) -> str:
    """The wrapper's answer among ``lines``: a pid, "nsb-missing" or ''."""
    for line in lines:
        word = (line or "").strip()
        if word == "nsb-missing" or word.startswith("nsb-pid "):
            return word.removeprefix("nsb-pid ")
    return ""


def pump_lines(channel, lines: queue.Queue) -> None:
    buffer = b""
    try:
        while data := channel.recv(65536):
            buffer += data
            *complete, buffer = buffer.split(b"\n")
            for line in complete:
                lines.put(line.decode(errors="replace") + "\n")
    except OSError:
        pass
    if buffer:
        lines.put(buffer.decode(errors="replace"))
    lines.put(None)
