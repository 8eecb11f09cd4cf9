"""Run commands on a lab node over SSH (paramiko).

Commands are argument lists quoted with ``shlex.join`` for the remote POSIX
shell. Long-running processes run detached under ``setsid`` in their own
process group, behind a small ``sh`` wrapper that reports the pid and records
the exit status in the executor's run directory on the node; their output
goes to a log there, which is copied to the local ``log_path`` (appended, as
it grows: on ``read_file(log_path)``, on exit, on stop). A dropped connection
is re-established once per operation, with a warning.
"""

from __future__ import annotations

import errno
import logging
import os
import queue
import secrets
import shlex
import signal
import threading
import time
from pathlib import Path

import paramiko

from nsb.errors import NsbError, PrerequisiteError, RunError
from nsb.executors.base import CommandResult, Executor, tail
from nsb.executors.ssh_process import WRAPPER, Dropped, SshProcess, pump_lines, slug, tagged_pid

LOG = logging.getLogger(__name__)


class _RefusedChannelIsDebug(logging.Filter):
    """paramiko logs a refused direct-tcpip channel as an ERROR; nsb waits for the
    service on the node (PROX starting) and says so itself if it never listens."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "open FAILED" in record.getMessage():
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


logging.getLogger("paramiko.transport").addFilter(_RefusedChannelIsDebug())


class SshExecutor(Executor):
    """Commands on a node reached over SSH; keys preferred, secrets never logged."""

    def __init__(self, name: str, host: str, port: int = 22, user: str = "root",
                 password: str | None = None, key_filename: str | None = None,
                 connect_timeout: float = 10.0, run_id: str | None = None,
                 run_dir: str | None = None):
        self.name = name
        self.host = host
        self.port = int(port)
        self.user = user
        self.__password = password
        self.key_filename = key_filename
        self.connect_timeout = connect_timeout
        suffix = f"{slug(run_id)}-ssh-{slug(name)}" if run_id else \
            f"ssh-{slug(name)}-{secrets.token_hex(4)}"
        self.run_dir = run_dir or f"/tmp/nsb-{suffix}"
        self.where = f"node {name} ({user}@{host}:{self.port})"
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._host_key: paramiko.PKey | None = None
        self._lock = threading.RLock()
        self._sftp_lock = threading.Lock()
        self._log_lock = threading.Lock()
        self._processes: list[SshProcess] = []
        self._count = 0
        self._logs: dict[str, list] = {}  # local log_path -> [remote path, bytes copied]
        self._used_run_dir = False

    def __repr__(self) -> str:
        return f"SshExecutor({self.name!r}, {self.user}@{self.host}:{self.port})"

    # connection

    def _credentials(self) -> str:
        if self.key_filename:
            return f"key {self.key_filename}" + (" or password" if self.__password else "")
        return "password" if self.__password else "the default keys and agent"

    def connect(self) -> None:
        """Connect now (otherwise the first operation does); raises PrerequisiteError."""
        with self._lock:
            if self._client is None or not self._active(self._client.get_transport()):
                self._open()

    def _open(self) -> None:
        if self.key_filename and not os.path.isfile(self.key_filename):
            raise PrerequisiteError(f"{self.where}: key file {self.key_filename} not found")
        client = paramiko.SSHClient()
        if self._host_key is None:  # pods carry no host keys: trust the first one seen
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        else:  # a reconnect must reach the same host
            known = self.host if self.port == 22 else f"[{self.host}]:{self.port}"
            client.get_host_keys().add(known, self._host_key.get_name(), self._host_key)
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        bare = not self.key_filename and not self.__password
        try:
            client.connect(self.host, port=self.port, username=self.user,
                           password=self.__password, key_filename=self.key_filename,
                           timeout=self.connect_timeout, banner_timeout=self.connect_timeout,
                           auth_timeout=self.connect_timeout, allow_agent=bare,
                           look_for_keys=bare)
        except paramiko.AuthenticationException as exc:
            client.close()
            raise PrerequisiteError(f"{self.where}: authentication failed with "
                                    f"{self._credentials()} ({exc})") from None
        except paramiko.BadHostKeyException:
            client.close()
            raise PrerequisiteError(f"{self.where}: host key changed since the first "
                                    "connection of this run") from None
        except (paramiko.SSHException, OSError, EOFError) as exc:
            client.close()
            reason = (f"no answer within {self.connect_timeout:g} s"
                      if isinstance(exc, TimeoutError) else str(exc) or type(exc).__name__)
            raise PrerequisiteError(f"{self.where}: cannot connect: {reason}") from None
        transport = client.get_transport()
        transport.set_keepalive(15)
        self._host_key = transport.get_remote_server_key()
        self._client, self._sftp = client, None
        LOG.debug("%s: connected", self.where)

    @staticmethod
    def _active(transport) -> bool:
        return transport is not None and transport.is_active()

    def _reconnect(self, dead, what: str, exc: object) -> None:
        with self._lock:
            if self._client is not None and self._client.get_transport() is not dead \
                    and self._active(self._client.get_transport()):
                return  # another thread reconnected already
            self._drop_client()
            try:
                self._open()
            except NsbError as error:
                raise RunError(f"{self.where}: ssh connection dropped while {what} "
                               f"({exc}); reconnecting failed: {error}") from None
        LOG.warning("ssh to node %s (%s@%s:%d) dropped while %s; reconnected",
                    self.name, self.user, self.host, self.port, what)

    def _call(self, what: str, operation):
        """``operation(transport)``, reconnecting and retrying once if the connection died."""
        reconnected = False
        while True:
            with self._lock:
                if self._client is None:
                    self._open()
                transport = self._client.get_transport()
            if not self._active(transport):
                if reconnected:
                    raise RunError(f"{self.where}: ssh connection dropped again while {what}")
                self._reconnect(transport, what, "connection lost")
                reconnected = True
                continue
            try:
                return operation(transport)
            except (Dropped, paramiko.SSHException, EOFError, OSError) as exc:
                if not isinstance(exc, Dropped) and not self._died(transport, exc):
                    if isinstance(exc, paramiko.SSHException):
                        raise RunError(f"{self.where}: ssh error while {what}: {exc}") from None
                    raise
                if reconnected:
                    raise RunError(f"{self.where}: ssh connection dropped again while "
                                   f"{what}: {exc or type(exc).__name__}") from None
                self._reconnect(transport, what, exc or type(exc).__name__)
                reconnected = True

    def _died(self, transport, exc: BaseException) -> bool:
        """Whether ``exc`` came from a dead connection (paramiko marks it dead a bit late)."""
        if isinstance(exc, (TimeoutError, ConnectionRefusedError)) or (
                getattr(exc, "errno", None) is not None and not isinstance(exc, ConnectionError)):
            return False  # a timeout, a refused TCP port, a file error reported by SFTP
        for _ in range(20):
            if not self._active(transport):
                return True
            time.sleep(0.05)
        return False

    def _sftp_call(self, what: str, operation):
        def with_sftp(transport):
            with self._sftp_lock:
                if self._sftp is None or self._sftp.get_channel().get_transport() is not transport:
                    self._sftp = paramiko.SFTPClient.from_transport(transport)
                return operation(self._sftp)
        return self._call(what, with_sftp)

    def _drop_client(self) -> None:
        if self._sftp is not None:
            try:
                self._sftp.close()
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass
        if self._client is not None:
            self._client.close()
        self._client, self._sftp = None, None

    # commands

    def _exec(self, transport, command: str, timeout: float | None, input: str | None):
        deadline = None if timeout is None else time.monotonic() + timeout
        channel = transport.open_session(timeout=self.connect_timeout)
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

    def run(self, argv, *, timeout=60.0, check=True, input=None) -> CommandResult:
        argv = [str(arg) for arg in argv]
        # the node kills what outlives the timeout, so nothing is left running there
        guard = [] if timeout is None else ["timeout", "-k", "2", f"{timeout + 2:g}"]
        command = shlex.join(guard + argv)
        LOG.debug("%s: %s", self.name, shlex.join(argv))
        try:
            code, out, err = self._call(f"running {argv[0]}",
                                        lambda t: self._exec(t, command, timeout, input))
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
            remote_log = self._remote_log(log_path, number, argv[0])
            self._used_run_dir = True
        status = f"{self.run_dir}/{number}.status"
        wrapped = shlex.join(["setsid", "-w" if pipes else "-f", "sh", "-c", WRAPPER, "nsb",
                              status, *argv])
        quoted_log = shlex.quote(remote_log)
        redirect = f"3>&1 2>>{quoted_log}" if pipes else f"3>&1 </dev/null >>{quoted_log} 2>&1"
        command = f"mkdir -p -m 700 {shlex.quote(self.run_dir)} && {wrapped} {redirect}"
        LOG.debug("%s: starting %s", self.name, shlex.join(argv))

        def launch(transport):
            if not pipes:
                _, out, err = self._exec(transport, command, self.connect_timeout + 30, None)
                return tagged_pid(out.splitlines()), err, None, None
            lines: queue.Queue[str | None] = queue.Queue()
            channel = transport.open_session(timeout=self.connect_timeout)
            channel.exec_command(command)
            threading.Thread(target=pump_lines, args=(channel, lines), daemon=True,
                             name=f"ssh-{self.name}-{number}").start()
            deadline = time.monotonic() + self.connect_timeout + 30
            first, seen = "", []  # a chatty login script may print before the wrapper
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
            return first, "".join(seen), channel, lines

        first, err, channel, lines = self._call(f"starting {argv[0]}", launch)
        if first == "nsb-missing":
            raise PrerequisiteError(f"{self.name}: command not found: {argv[0]}")
        if not first.isdigit():
            if channel is not None:
                channel.close()
            raise RunError(f"{self.name}: could not start {argv[0]}: "
                           f"{tail(err or self._remote_tail(remote_log), 3) or 'no pid'}")
        process = SshProcess(self, argv, log_path, int(first), status, channel, lines)
        self._processes.append(process)
        LOG.debug("%s: started pid %d: %s", self.name, process.pid, shlex.join(argv))
        return process

    def _remote_log(self, log_path: str | None, number: int, program: str) -> str:
        if log_path is None:
            return f"{self.run_dir}/{number}-{slug(Path(program).name)}.log"
        if log_path not in self._logs:
            remote = f"{self.run_dir}/{number}-{slug(Path(log_path).name)}"
            self._logs[log_path] = [remote, 0]
        return self._logs[log_path][0]

    def _remote_tail(self, remote: str) -> str:
        try:
            return self._read_remote(remote)
        except (OSError, NsbError):
            return ""

    def _sync_log(self, log_path: str | None) -> None:
        """Append what the remote log gained since the last copy to the local log."""
        if log_path is None or log_path not in self._logs:
            return
        with self._log_lock:
            entry = self._logs[log_path]
            remote, copied = entry

            def fetch(sftp):
                with sftp.open(remote, "rb") as handle:
                    handle.seek(copied)
                    return handle.read()

            try:
                data = self._sftp_call("copying a log", fetch)
            except FileNotFoundError:
                return
            Path(log_path).parent.mkdir(parents=True, exist_ok=True)
            with open(log_path, "ab") as local:
                local.write(data)
            entry[1] = copied + len(data)

    # files

    def _read_remote(self, path: str) -> str:
        def read(sftp):
            with sftp.open(path, "rb") as handle:
                return handle.read()
        return self._sftp_call(f"reading {path}", read).decode(errors="replace")

    def read_file(self, path: str) -> str:
        """A file on the node; a process's ``log_path`` is copied first, then read locally."""
        if path in self._logs:
            try:
                self._sync_log(path)
            except NsbError as exc:
                LOG.debug("%s: log %s not refreshed: %s", self.name, path, exc)
            return Path(path).read_text(errors="replace") if os.path.exists(path) else ""
        return self._read_remote(path)

    def write_file(self, path: str, content: str) -> None:
        self.run(["mkdir", "-p", os.path.dirname(path) or "."])

        def write(sftp):
            with sftp.open(path, "wb") as handle:
                handle.write(content.encode())
        self._sftp_call(f"writing {path}", write)

    def put(self, local: str, remote: str) -> None:
        """Copy the local file ``local`` to ``remote`` on the node."""
        self.run(["mkdir", "-p", os.path.dirname(remote) or "."])
        self._sftp_call(f"copying {local} to the node", lambda sftp: sftp.put(local, remote))

    def get(self, remote: str, local: str) -> None:
        """Copy ``remote`` on the node to the local file ``local``."""
        Path(local).parent.mkdir(parents=True, exist_ok=True)
        self._sftp_call(f"copying {remote} from the node", lambda sftp: sftp.get(remote, local))

    def connect_tcp(self, port, host="127.0.0.1", timeout=10.0) -> paramiko.Channel:
        """A ``direct-tcpip`` channel to ``host:port`` as seen from the node (socket-like)."""
        def open_channel(transport):
            try:
                channel = transport.open_channel("direct-tcpip", (host, int(port)),
                                                 ("127.0.0.1", 0), timeout=timeout)
            except paramiko.ChannelException as exc:
                raise ConnectionRefusedError(
                    errno.ECONNREFUSED, f"{self.name}: {host}:{port} refused on the node "
                    f"({exc})") from None
            except paramiko.SSHException as exc:
                if not self._active(transport):
                    raise
                raise OSError(errno.EHOSTUNREACH, f"{self.name}: cannot reach {host}:{port} "
                              f"on the node ({exc})") from None
            channel.settimeout(timeout)
            return channel
        return self._call(f"connecting to {host}:{port}", open_channel)

    # teardown

    def stop_all(self) -> None:
        """Stop what still runs, kill what is left in every group, copy the logs, clean up."""
        errors = []
        for process in reversed(self._processes):
            if process.returncode is None and not process._stopped:
                try:
                    process.stop(grace_s=3.0)
                except NsbError as exc:
                    errors.append(str(exc))
        # processes that exited by themselves may have left children in their group
        exited = [process for process in self._processes if not process._stopped]
        try:
            if exited:
                self.run(["sh", "-c", 'for g; do kill -s KILL -- "-$g" 2>/dev/null; done; :',
                          "sh", *(str(process.pid) for process in exited)], timeout=30)
            for process in exited:
                process._killed = True
                process.stop()  # only closes its channel and copies its log now
            for log_path in list(self._logs):
                self._sync_log(log_path)
            if self._used_run_dir:
                self.run(["rm", "-rf", self.run_dir], timeout=30)
        except NsbError as exc:
            errors.append(str(exc))
        self._processes.clear()
        self._logs.clear()  # the local copies are final now
        self._used_run_dir = False
        if errors:
            raise RunError(f"{self.where}: teardown incomplete: {'; '.join(errors)}")

    def close(self) -> None:
        for process in self._processes:
            if process._channel is not None:
                process._channel.close()
        with self._lock:
            self._drop_client()

