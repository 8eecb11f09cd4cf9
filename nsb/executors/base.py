"""The executor interface every VNF and generator uses."""

from __future__ import annotations

import abc
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass
class CommandResult:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str


class Process(abc.ABC):
    """A long-running process started by an executor."""

    argv: list[str]
    log_path: str | None

    @abc.abstractmethod
    def poll(self) -> int | None: ...

    @abc.abstractmethod
    def wait(self, timeout: float | None = None) -> int:
        """Exit code; raises subprocess.TimeoutExpired when still running."""

    @abc.abstractmethod
    def signal(self, signum: int) -> None:
        """Send ``signum`` to the process group."""

    @abc.abstractmethod
    def stop(self, grace_s: float = 5.0) -> int | None:
        """SIGTERM the group, SIGKILL it after ``grace_s``; returns the exit code."""

    # pipes, when started with pipes=True
    def write_line(self, line: str) -> None:
        raise NotImplementedError

    def read_line(self, timeout: float) -> str:
        raise NotImplementedError

    def read_all(self, timeout: float) -> str:
        raise NotImplementedError


class Executor(abc.ABC):
    """Runs argument lists on one node."""

    name: str
    # MB of hugepages the node's environment was handed (a pod's resources): a program
    # there takes its pages from them and must not grow the machine's pool; None where
    # the node's pool is nsb's to grow and give back
    hugepages_given_mb: int | None = None

    @abc.abstractmethod
    def run(self, argv: list[str], *, timeout: float = 60.0, check: bool = True,
            input: str | None = None) -> CommandResult: ...

    @abc.abstractmethod
    def start(self, argv: list[str], *, log_path: str | None = None,
              pipes: bool = False) -> Process: ...

    @abc.abstractmethod
    def write_file(self, path: str, content: str) -> None: ...

    @abc.abstractmethod
    def read_file(self, path: str) -> str: ...

    def which(self, binary: str) -> str | None:
        """Absolute path of ``binary`` on the node, or None."""
        result = self.run(["sh", "-c", 'command -v "$1"', "sh", binary], check=False)
        path = result.stdout.strip()
        return path or None

    def connect_tcp(self, port: int, host: str = "127.0.0.1", timeout: float = 5.0):
        """A connected socket(-like object) to ``host:port`` as seen from the node.

        Control sockets (PROX's port 8474) live on the node; raises OSError
        (ConnectionRefusedError while nothing listens yet).
        """
        raise NotImplementedError(f"{type(self).__name__} cannot open TCP connections")

    @property
    def service_host(self) -> str:
        """The address at which nsb reaches TCP services on the node (a TRex server's
        RPC port): itself for this machine and its namespaces, the SSH host otherwise."""
        return "127.0.0.1"

    def in_network(self, call: Callable[[], T]) -> T:
        """``call()`` where connections to ``service_host`` reach the node: inside its
        network namespace for a namespace node. A client library that opens its own
        sockets (TRex's ZMQ client) connects inside this."""
        return call()

    def stop_all(self) -> None:  # noqa: B027 - optional hook
        """Stop every process this executor started that is still running."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


def tail(text: str, lines: int = 10) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


TimeoutExpired = subprocess.TimeoutExpired
