"""A detached process on an SSH node.

The process runs under ``setsid`` in its own process group behind the
``ssh_shell.WRAPPER`` that reports its pid and records its exit status in the
executor's run directory; polling, waiting and signalling are one remote
command each, through the executor, so they survive a reconnect.
"""

from __future__ import annotations

import logging
import queue
import signal
import subprocess
import time

import paramiko

from nsb.executors.base import Executor, Process
from nsb.executors.ssh_channel import Lines
from nsb.executors.ssh_files import RemoteLogs
from nsb.executors.ssh_shell import POLL, SIGNAL, WAIT, polled_returncode

LOG = logging.getLogger(__name__)


class SshProcess(Process):
    """A process on the node, in its own session and process group (pgid == pid)."""

    def __init__(self, executor: Executor, logs: RemoteLogs, argv: list[str],
                 log_path: str | None, pid: int, status_path: str,
                 channel: paramiko.Channel | None = None,
                 lines: Lines | None = None):
        self.executor = executor
        self.argv = argv
        self.log_path = log_path
        self.pid = pid
        self.status_path = status_path
        self.returncode: int | None = None
        self._logs = logs
        self._channel = channel
        self._lines = lines
        self._killed = False
        self._stopped = False

    @property
    def stopped(self) -> bool:
        """Whether ``stop`` finished: its group is killed and its log copied."""
        return self._stopped

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        out = self.executor.run(["sh", "-c", POLL, "sh", self.status_path, str(self.pid)],
                                check=False, timeout=30).stdout.strip()
        code = polled_returncode(out, self._killed)
        if code is None:
            return None
        self.returncode = code
        self._logs.sync(self.log_path)
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
            self.executor.run(["timeout", f"{max(left, 0.01):.3f}", "sh", "-c", WAIT, "sh",
                               self.status_path, str(self.pid)], check=False, timeout=left + 30)

    def signal(self, signum: int) -> None:
        if self.returncode is not None:
            return  # its pid may belong to someone else by now
        if signum == signal.SIGKILL:
            self._killed = True
        name = signal.Signals(signum).name.removeprefix("SIG")
        self.executor.run(["sh", "-c", SIGNAL, "sh", name, str(self.pid)], check=False,
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
            self.executor.run(["sh", "-c", SIGNAL, "sh", "KILL", str(self.pid)],
                              check=False, timeout=30)
        self._stopped = True
        self.close_channel()
        self._logs.sync(self.log_path)
        return self.returncode

    def stop_after_group_killed(self) -> int | None:
        """``stop`` once the executor SIGKILLed the whole group itself (many at once):
        only the exit code, the channel and the log are left to settle."""
        self._killed = True
        return self.stop()

    def close_channel(self) -> None:
        """Close the pipes' channel, if any (the process itself is not signalled)."""
        if self._channel is not None:
            self._channel.close()

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
