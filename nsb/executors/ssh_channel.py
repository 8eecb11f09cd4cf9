"""paramiko channels on a live SSH transport: one command, a launch, a TCP forward.

Everything here works on the transport it is given and never reconnects:
a channel that dies with its transport raises ``Dropped`` (or paramiko's and
the OS's own errors), and ``SshConnection.call`` decides whether to retry.
"""

from __future__ import annotations

import errno
import logging
import queue
import threading
import time
from dataclasses import dataclass

import paramiko

from nsb.executors.ssh_shell import tagged_pid

Lines = queue.Queue[str | None]  # a piped process's stdout, line by line; None at its end


class _RefusedChannelIsDebug(logging.Filter):
    """paramiko logs a refused direct-tcpip channel as an ERROR; nsb waits for the
    service on the node (PROX starting) and says so itself if it never listens."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "open FAILED" in record.getMessage():
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


logging.getLogger("paramiko.transport").addFilter(_RefusedChannelIsDebug())


class Dropped(Exception):
    """The transport died under an operation."""


def is_active(transport: paramiko.Transport | None) -> bool:
    """Whether ``transport`` is still usable (None when never connected)."""
    return transport is not None and transport.is_active()


def exec_command(transport: paramiko.Transport, command: str, timeout: float | None,
                 input: str | None, open_timeout: float) -> tuple[int, str, str]:
    """Run ``command`` to its end: (exit status, stdout, stderr); TimeoutError past ``timeout``.

    The exit status is -1 when a signal ended the command (SSH reports no number then).
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    channel = transport.open_session(timeout=open_timeout)
    out, err = [], []
    try:
        channel.exec_command(command)
        if input:
            channel.settimeout(timeout)
            channel.sendall(input.encode())
        channel.shutdown_write()
        channel.settimeout(0.05)
        while True:
            try:
                data = channel.recv(65536)
            except TimeoutError:
                data = None
            while channel.recv_stderr_ready():
                err.append(channel.recv_stderr(65536))
            if data == b"":
                break
            if data:
                out.append(data)
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError
        while data := channel.recv_stderr(65536):
            err.append(data)
        if not channel.status_event.wait(30 if deadline is None else
                                         max(0.1, deadline - time.monotonic())):
            raise TimeoutError
        code = channel.exit_status
        if code == -1 and not channel.eof_received:
            raise Dropped("connection closed before the command finished")
    finally:
        channel.close()
    return code, b"".join(out).decode(errors="replace"), b"".join(err).decode(errors="replace")


@dataclass
class Launched:
    """What a launch command answered; ``channel`` and ``lines`` only with pipes."""

    answer: str  # a pid, "nsb-missing" or '' (see ssh_shell.tagged_pid)
    err: str
    channel: paramiko.Channel | None = None
    lines: Lines | None = None


def launch_detached(transport: paramiko.Transport, command: str,
                    open_timeout: float) -> Launched:
    """Run a launch command that forks the process off and returns at once."""
    _, out, err = exec_command(transport, command, open_timeout + 30, None, open_timeout)
    return Launched(tagged_pid(out.splitlines()), err)


def launch_piped(transport: paramiko.Transport, command: str, open_timeout: float,
                 thread_name: str) -> Launched:
    """Run a launch command whose channel stays the process's stdin and stdout.

    A thread queues the output lines; the wrapper's pid line is looked for
    among the first of them (a chatty login script may print before it).
    """
    lines: Lines = queue.Queue()
    channel = transport.open_session(timeout=open_timeout)
    channel.exec_command(command)
    threading.Thread(target=pump_lines, args=(channel, lines), daemon=True,
                     name=thread_name).start()
    deadline = time.monotonic() + open_timeout + 30
    first, seen = "", []
    while not first:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        first = tagged_pid([line])
    if not first and channel.closed and not channel.eof_received:
        raise Dropped("connection closed while starting")
    return Launched(first, "".join(seen), channel, lines)


def pump_lines(channel: paramiko.Channel, lines: Lines) -> None:
    """Queue what ``channel`` prints, line by line, then None once it closes."""
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


def open_tcp(transport: paramiko.Transport, node: str, host: str, port: int,
             timeout: float) -> paramiko.Channel:
    """A ``direct-tcpip`` channel to ``host:port`` as the node sees it.

    It fails as a socket would: ConnectionRefusedError while nothing listens
    (callers poll for a service to come up), EHOSTUNREACH for other SSH errors
    on a live transport.
    """
    try:
        channel = transport.open_channel("direct-tcpip", (host, int(port)),
                                         ("127.0.0.1", 0), timeout=timeout)
    except paramiko.ChannelException as exc:
        raise ConnectionRefusedError(
            errno.ECONNREFUSED, f"{node}: {host}:{port} refused on the node "
            f"({exc})") from None
    except paramiko.SSHException as exc:
        if not is_active(transport):
            raise
        raise OSError(errno.EHOSTUNREACH, f"{node}: cannot reach {host}:{port} "
                      f"on the node ({exc})") from None
    channel.settimeout(timeout)
    return channel
