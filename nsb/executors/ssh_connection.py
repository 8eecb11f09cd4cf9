"""One paramiko connection to a node, re-established once per operation if it drops.

Operations are callables on the live transport (or its SFTP client); the
connection pins the host key it first saw, so a reconnect must reach the same
host, and the password stays in here, out of every message and repr.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import paramiko

from nsb.errors import NsbError, PrerequisiteError, RunError
from nsb.executors.ssh_channel import Dropped, is_active

# the executor's logger: "ssh to node ... reconnected" has always been logged under it
LOG = logging.getLogger("nsb.executors.ssh")

T = TypeVar("T")


class _HandshakeFailed(Exception):
    """The node's sshd accepted the TCP connection but the SSH handshake failed."""


class SshConnection:
    """A lazily opened, self-healing SSH client (and SFTP session) for one node."""

    def __init__(self, name: str, host: str, port: int, user: str, password: str | None,
                 key_filename: str | None, connect_timeout: float):
        self.name = name
        self.host = host
        self.port = int(port)
        self.user = user
        self.__password = password
        self.key_filename = key_filename
        self.connect_timeout = connect_timeout
        self.where = f"node {name} ({user}@{host}:{self.port})"
        self._client: paramiko.SSHClient | None = None
        self._sftp: paramiko.SFTPClient | None = None
        self._host_key: paramiko.PKey | None = None
        self._lock = threading.RLock()
        self._sftp_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"SshConnection({self.name!r}, {self.user}@{self.host}:{self.port})"

    def _credentials(self) -> str:
        if self.key_filename:
            return f"key {self.key_filename}" + (" or password" if self.__password else "")
        return "password" if self.__password else "the default keys and agent"

    def connect(self) -> None:
        """Connect now unless connected; raises PrerequisiteError."""
        with self._lock:
            if self._client is None or not is_active(self._client.get_transport()):
                self._open()

    def _new_client(self) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        if self._host_key is None:  # pods carry no host keys: trust the first one seen
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        else:  # a reconnect must reach the same host
            known = self.host if self.port == 22 else f"[{self.host}]:{self.port}"
            client.get_host_keys().add(known, self._host_key.get_name(), self._host_key)
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
        return client

    # a node whose CPUs are busy (a killed run's DPDK program polling them until the next
    # run stops it) may drop a connection during the handshake: tried this many times
    HANDSHAKE_ATTEMPTS = 3

    def _open(self) -> None:
        for attempt in range(1, self.HANDSHAKE_ATTEMPTS + 1):
            try:
                return self._open_once()
            except _HandshakeFailed as failed:
                if attempt == self.HANDSHAKE_ATTEMPTS:
                    raise PrerequisiteError(f"{self.where}: cannot connect: {failed}") from None
                LOG.warning("%s: SSH handshake failed (%s); trying again", self.where, failed)
                time.sleep(1.0)

    def _open_once(self) -> None:
        if self.key_filename and not os.path.isfile(self.key_filename):
            raise PrerequisiteError(f"{self.where}: key file {self.key_filename} not found")
        client = self._new_client()
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
        except (paramiko.SSHException, EOFError) as exc:  # TCP was up: the handshake failed
            client.close()
            raise _HandshakeFailed(str(exc) or type(exc).__name__) from None
        except OSError as exc:
            client.close()
            reason = (f"no answer within {self.connect_timeout:g} s"
                      if isinstance(exc, TimeoutError) else str(exc) or type(exc).__name__)
            raise PrerequisiteError(f"{self.where}: cannot connect: {reason}") from None
        transport = client.get_transport()
        transport.set_keepalive(15)
        self._host_key = transport.get_remote_server_key()
        self._client, self._sftp = client, None
        LOG.debug("%s: connected", self.where)

    def _reconnect(self, dead: paramiko.Transport | None, what: str, exc: object) -> None:
        with self._lock:
            if self._client is not None and self._client.get_transport() is not dead \
                    and is_active(self._client.get_transport()):
                return  # another thread reconnected already
            self._drop_client()
            try:
                self._open()
            except NsbError as error:
                raise RunError(f"{self.where}: ssh connection dropped while {what} "
                               f"({exc}); reconnecting failed: {error}") from None
        LOG.warning("ssh to node %s (%s@%s:%d) dropped while %s; reconnected",
                    self.name, self.user, self.host, self.port, what)

    def call(self, what: str, operation: Callable[[paramiko.Transport], T]) -> T:
        """``operation(transport)``, reconnecting and retrying once if the connection died.

        ``what`` completes "while ..." in the errors; an SSH error on a live
        connection is a RunError, an OS error (a timeout, an SFTP file error)
        is raised as it is.
        """
        reconnected = False
        while True:
            with self._lock:
                if self._client is None:
                    self._open()
                transport = self._client.get_transport()
            if not is_active(transport):
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

    @staticmethod
    def _died(transport: paramiko.Transport, exc: BaseException) -> bool:
        """Whether ``exc`` came from a dead connection (paramiko marks it dead a bit late)."""
        if isinstance(exc, (TimeoutError, ConnectionRefusedError)) or (
                getattr(exc, "errno", None) is not None and not isinstance(exc, ConnectionError)):
            return False  # a timeout, a refused TCP port, a file error reported by SFTP
        for _ in range(20):
            if not is_active(transport):
                return True
            time.sleep(0.05)
        return False

    def sftp_call(self, what: str, operation: Callable[[paramiko.SFTPClient], T]) -> T:
        """``operation(sftp)`` on the connection's SFTP session, as ``call`` does."""
        def with_sftp(transport: paramiko.Transport) -> T:
            with self._sftp_lock:
                if self._sftp is None or self._sftp.get_channel().get_transport() is not transport:
                    self._sftp = paramiko.SFTPClient.from_transport(transport)
                return operation(self._sftp)
        return self.call(what, with_sftp)

    def _drop_client(self) -> None:
        if self._sftp is not None:
            try:
                self._sftp.close()
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass
        if self._client is not None:
            self._client.close()
        self._client, self._sftp = None, None

    def close(self) -> None:
        """Close the client and its SFTP session; the next operation connects again."""
        with self._lock:
            self._drop_client()
