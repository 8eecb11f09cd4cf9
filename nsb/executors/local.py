"""Run commands on this machine, optionally behind a prefix such as ``ip netns exec``."""

from __future__ import annotations

import ctypes
import logging
import os
import queue
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from nsb.errors import PrerequisiteError, RunError
from nsb.executors.base import CommandResult, Executor, Process, tail

LOG = logging.getLogger(__name__)

CLONE_NEWNET = 0x40000000


class LocalProcess(Process):
    def __init__(self, popen: subprocess.Popen, argv: list[str], log_path: str | None):
        self.popen = popen
        self.argv = argv
        self.log_path = log_path
        self.pid = popen.pid
        self._lines: queue.Queue[str | None] | None = None
        if popen.stdout is not None:
            self._lines = queue.Queue()
            threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        try:
            for line in self.popen.stdout:
                self._lines.put(line)
        except (ValueError, OSError):  # the pipe was closed under the reader (stop)
            pass
        self._lines.put(None)

    def poll(self) -> int | None:
        return self.popen.poll()

    def wait(self, timeout: float | None = None) -> int:
        return self.popen.wait(timeout)

    def signal(self, signum: int) -> None:
        try:
            os.killpg(self.pid, signum)
        except ProcessLookupError:
            pass

    def stop(self, grace_s: float = 5.0) -> int | None:
        if self.popen.poll() is None:
            self.signal(signal.SIGTERM)
            try:
                self.popen.wait(grace_s)
            except subprocess.TimeoutExpired:
                LOG.warning("%s ignored SIGTERM for %.1f s; killing it", self.argv[0], grace_s)
                self.signal(signal.SIGKILL)
                self.popen.wait(5)
        # the group may still hold children
        self.signal(signal.SIGKILL)
        for stream in (self.popen.stdin, self.popen.stdout):
            if stream:
                try:
                    stream.close()
                except OSError:
                    pass
        return self.popen.returncode

    def write_line(self, line: str) -> None:
        self.popen.stdin.write(line + "\n")
        self.popen.stdin.flush()

    def read_line(self, timeout: float) -> str:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise subprocess.TimeoutExpired(self.argv, timeout) from None
        if line is None:
            self._lines.put(None)
            raise EOFError(f"{self.argv[0]} closed its output")
        return line.rstrip("\n")

    def read_all(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        chunks = []
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise subprocess.TimeoutExpired(self.argv, timeout) from None
            if line is None:
                self._lines.put(None)
                return "".join(chunks)
            chunks.append(line)


class LocalExecutor(Executor):
    """Commands run on this machine, each behind ``prefix`` (empty: run directly)."""

    def __init__(self, name: str = "local", prefix: list[str] | None = None):
        self.name = name
        self.prefix = list(prefix or [])
        self._processes: list[LocalProcess] = []

    def run(self, argv, *, timeout=60.0, check=True, input=None) -> CommandResult:
        full = self.prefix + list(argv)
        try:
            stdin = None if input is not None else subprocess.DEVNULL
            done = subprocess.run(full, capture_output=True, text=True, timeout=timeout,
                                  input=input, stdin=stdin)
        except FileNotFoundError:
            raise PrerequisiteError(f"{self.name}: command not found: {full[0]}") from None
        except subprocess.TimeoutExpired:
            raise RunError(f"{self.name}: {argv[0]} did not finish within {timeout:g} s") from None
        result = CommandResult(full, done.returncode, done.stdout, done.stderr)
        if check and done.returncode != 0:
            raise RunError(f"{self.name}: {' '.join(argv)} failed (exit {done.returncode}): "
                           f"{tail(done.stderr or done.stdout, 3)}")
        return result

    def start(self, argv, *, log_path=None, pipes=False) -> LocalProcess:
        full = self.prefix + list(argv)
        log = open(log_path, "ab") if log_path else subprocess.DEVNULL  # noqa: SIM115
        try:
            popen = subprocess.Popen(
                full, start_new_session=True,
                stdin=subprocess.PIPE if pipes else subprocess.DEVNULL,
                stdout=subprocess.PIPE if pipes else log,
                stderr=log,
                text=pipes, bufsize=1 if pipes else -1)
        except FileNotFoundError:
            raise PrerequisiteError(f"{self.name}: command not found: {full[0]}") from None
        finally:
            if log_path:
                log.close()
        process = LocalProcess(popen, full, log_path)
        self._processes.append(process)
        LOG.debug("%s: started pid %d: %s", self.name, process.pid, " ".join(full))
        return process

    def write_file(self, path: str, content: str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(content)

    def read_file(self, path: str) -> str:
        return Path(path).read_text()

    def connect_tcp(self, port, host="127.0.0.1", timeout=5.0) -> socket.socket:
        return socket.create_connection((host, port), timeout=timeout)

    def stop_all(self) -> None:
        for process in reversed(self._processes):
            process.stop(grace_s=3.0)
        self._processes.clear()


class NetnsExecutor(LocalExecutor):
    """Commands run inside network namespace ``netns`` on this machine."""

    def __init__(self, netns: str):
        super().__init__(name=netns, prefix=["ip", "netns", "exec", netns])
        self.netns = netns

    def connect_tcp(self, port, host="127.0.0.1", timeout=5.0) -> socket.socket:
        return connect_in_netns(f"/run/netns/{self.netns}", host, port, timeout)

    def in_network(self, call):
        return call_in_netns(f"/run/netns/{self.netns}", call)


def connect_in_netns(netns_path: str, host: str, port: int, timeout: float) -> socket.socket:
    """A TCP connection made inside the network namespace at ``netns_path``."""
    return call_in_netns(netns_path,
                         lambda: socket.create_connection((host, port), timeout=timeout))


def call_in_netns(netns_path: str, call):
    """``call()`` in a short-lived thread that entered the namespace at ``netns_path``.

    setns(2) switches only the calling thread; sockets keep the namespace they
    were created in (so do threads started from there, such as a ZMQ context's
    I/O threads), and the rest of the process stays where it was.
    """
    outcome: dict = {}

    def enter_and_call() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            with open(netns_path) as handle:
                if libc.setns(handle.fileno(), CLONE_NEWNET) != 0:
                    errno = ctypes.get_errno()
                    raise OSError(errno, f"setns({netns_path}): {os.strerror(errno)}")
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=enter_and_call, name=f"netns-{netns_path}")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
