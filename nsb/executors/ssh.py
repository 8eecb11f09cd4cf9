"""Run commands on a lab node over SSH (paramiko).

Commands are argument lists quoted with ``shlex.join`` for the remote POSIX
shell. Long-running processes run detached under ``setsid`` in their own
process group, behind a small ``sh`` wrapper that reports the pid and records
the exit status in the executor's run directory on the node; their output
goes to a log there, which is copied to the local ``log_path`` (appended, as
it grows: on ``read_file(log_path)``, on exit, on stop). A dropped connection
is re-established once per operation, with a warning.

The pieces: ``ssh_connection`` (the paramiko client, reconnects),
``ssh_channel`` (what runs on one transport), ``ssh_shell`` (the wrapper
snippets), ``ssh_files`` (SFTP reads and log copies), ``ssh_process``.
"""

from __future__ import annotations

import logging
import os
import secrets
import shlex
import signal
import threading
from pathlib import Path

import paramiko

from nsb.errors import NsbError, PrerequisiteError, RunError
from nsb.executors.base import CommandResult, Executor, tail
from nsb.executors.ssh_channel import (
    Launched,
    exec_command,
    launch_detached,
    launch_piped,
    open_tcp,
)
from nsb.executors.ssh_connection import SshConnection
from nsb.executors.ssh_files import RemoteLogs, read_text
from nsb.executors.ssh_process import SshProcess
from nsb.executors.ssh_shell import KILL_GROUPS, launch_command, slug

LOG = logging.getLogger(__name__)


class SshExecutor(Executor):
    """Commands on a node reached over SSH; keys preferred, secrets never logged."""

    def __init__(self, name: str, host: str, port: int = 22, user: str = "root",
                 password: str | None = None, key_filename: str | None = None,
                 connect_timeout: float = 10.0, run_id: str | None = None,
                 run_dir: str | None = None):
        self.name = name
        suffix = f"{slug(run_id)}-ssh-{slug(name)}" if run_id else \
            f"ssh-{slug(name)}-{secrets.token_hex(4)}"
        self.run_dir = run_dir or f"/tmp/nsb-{suffix}"
        self._connection = SshConnection(name, host, port, user, password, key_filename,
                                         connect_timeout)
        self._logs = RemoteLogs(self._connection, self.run_dir)
        self._lock = threading.Lock()
        self._processes: list[SshProcess] = []
        self._count = 0
        self._used_run_dir = False

    def __repr__(self) -> str:
        c = self._connection
        return f"SshExecutor({self.name!r}, {c.user}@{c.host}:{c.port})"

    @property
    def where(self) -> str:
        """How messages name the node: ``node NAME (USER@HOST:PORT)``."""
        return self._connection.where

    @property
    def service_host(self) -> str:
        return self._connection.host

    def connect(self) -> None:
        """Connect now (otherwise the first operation does); raises PrerequisiteError."""
        self._connection.connect()

    # commands

    def run(self, argv, *, timeout=60.0, check=True, input=None) -> CommandResult:
        argv = [str(arg) for arg in argv]
        # the node kills what outlives the timeout, so nothing is left running there
        guard = [] if timeout is None else ["timeout", "-k", "2", f"{timeout + 2:g}"]
        command = shlex.join(guard + argv)
        LOG.debug("%s: %s", self.name, shlex.join(argv))
        open_timeout = self._connection.connect_timeout
        try:
            code, out, err = self._connection.call(
                f"running {argv[0]}",
                lambda t: exec_command(t, command, timeout, input, open_timeout))
        except TimeoutError:
            raise RunError(f"{self.name}: {argv[0]} did not finish within {timeout:g} s") \
                from None
        if code == -1:
            code = -signal.SIGKILL  # died from a signal (SSH reports no number then)
        if code == 127 and ("failed to run command" in err or err.rstrip().endswith("not found")):
            raise PrerequisiteError(f"{self.name}: command not found: {argv[0]}")
        if check and code != 0:
            raise RunError(f"{self.name}: {' '.join(argv)} failed (exit {code}): "
                           f"{tail(err or out, 3)}")
        return CommandResult(argv, code, out, err)

    def start(self, argv, *, log_path=None, pipes=False) -> SshProcess:
        argv = [str(arg) for arg in argv]
        with self._lock:
            self._count += 1
            number = self._count
            remote_log = self._logs.remote_path(log_path, number, argv[0])
            self._used_run_dir = True
        status = f"{self.run_dir}/{number}.status"
        command = launch_command(self.run_dir, status, argv, remote_log, pipes)
        LOG.debug("%s: starting %s", self.name, shlex.join(argv))

        open_timeout = self._connection.connect_timeout

        def launch(transport: paramiko.Transport) -> Launched:
            if pipes:
                return launch_piped(transport, command, open_timeout,
                                    f"ssh-{self.name}-{number}")
            return launch_detached(transport, command, open_timeout)

        launched = self._connection.call(f"starting {argv[0]}", launch)
        if launched.answer == "nsb-missing":
            raise PrerequisiteError(f"{self.name}: command not found: {argv[0]}")
        if not launched.answer.isdigit():
            if launched.channel is not None:
                launched.channel.close()
            raise RunError(f"{self.name}: could not start {argv[0]}: "
                           f"{tail(launched.err or self._remote_tail(remote_log), 3) or 'no pid'}")
        process = SshProcess(self, self._logs, argv, log_path, int(launched.answer), status,
                             launched.channel, launched.lines)
        self._processes.append(process)
        LOG.debug("%s: started pid %d: %s", self.name, process.pid, shlex.join(argv))
        return process

    def _remote_tail(self, remote: str) -> str:
        try:
            return read_text(self._connection, remote)
        except (OSError, NsbError):
            return ""

    # files

    def read_file(self, path: str) -> str:
        """A file on the node; a process's ``log_path`` is copied first, then read locally."""
        if path in self._logs:
            try:
                self._logs.sync(path)
            except NsbError as exc:
                LOG.debug("%s: log %s not refreshed: %s", self.name, path, exc)
            return Path(path).read_text(errors="replace") if os.path.exists(path) else ""
        return read_text(self._connection, path)

    def write_file(self, path: str, content: str) -> None:
        self.run(["mkdir", "-p", os.path.dirname(path) or "."])

        def write(sftp: paramiko.SFTPClient) -> None:
            with sftp.open(path, "wb") as handle:
                handle.write(content.encode())
        self._connection.sftp_call(f"writing {path}", write)

    def put(self, local: str, remote: str) -> None:
        """Copy the local file ``local`` to ``remote`` on the node."""
        self.run(["mkdir", "-p", os.path.dirname(remote) or "."])
        self._connection.sftp_call(f"copying {local} to the node",
                                   lambda sftp: sftp.put(local, remote))

    def get(self, remote: str, local: str) -> None:
        """Copy ``remote`` on the node to the local file ``local``."""
        Path(local).parent.mkdir(parents=True, exist_ok=True)
        self._connection.sftp_call(f"copying {remote} from the node",
                                   lambda sftp: sftp.get(remote, local))

    def connect_tcp(self, port, host="127.0.0.1", timeout=10.0) -> paramiko.Channel:
        """A ``direct-tcpip`` channel to ``host:port`` as seen from the node (socket-like)."""
        return self._connection.call(f"connecting to {host}:{port}",
                                     lambda t: open_tcp(t, self.name, host, port, timeout))

    # teardown

    def stop_all(self) -> None:
        """Stop what still runs, kill what is left in every group, copy the logs, clean up."""
        errors = []
        for process in reversed(self._processes):
            if process.returncode is None and not process.stopped:
                try:
                    process.stop(grace_s=3.0)
                except NsbError as exc:
                    errors.append(str(exc))
        # processes that exited by themselves may have left children in their group
        exited = [process for process in self._processes if not process.stopped]
        try:
            if exited:
                self.run(["sh", "-c", KILL_GROUPS, "sh", *(str(process.pid) for process in exited)],
                         timeout=30)
            for process in exited:
                process.stop_after_group_killed()  # only closes its channel, copies its log
            self._logs.sync_all()
            if self._used_run_dir:
                self.run(["rm", "-rf", self.run_dir], timeout=30)
        except NsbError as exc:
            errors.append(str(exc))
        self._processes.clear()
        self._logs.forget()  # the local copies are final now
        self._used_run_dir = False
        if errors:
            raise RunError(f"{self.where}: teardown incomplete: {'; '.join(errors)}")

    def close(self) -> None:
        for process in self._processes:
            process.close_channel()
        self._connection.close()
