"""Files on an SSH node over SFTP, and the local copies of remote process logs.

A process started with a local ``log_path`` writes its log on the node; the
local file grows by what the remote one gained whenever ``RemoteLogs.sync``
runs (on ``read_file``, on exit, on stop), so nothing is copied twice.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import paramiko

from nsb.executors.ssh_connection import SshConnection
from nsb.executors.ssh_shell import slug


def read_text(connection: SshConnection, path: str) -> str:
    """The file ``path`` on the node, decoded leniently."""
    def read(sftp: paramiko.SFTPClient) -> bytes:
        with sftp.open(path, "rb") as handle:
            return handle.read()
    return connection.sftp_call(f"reading {path}", read).decode(errors="replace")


@dataclass
class _Mirror:
    remote: str
    copied: int = 0  # bytes of ``remote`` already in the local file


class RemoteLogs:
    """Remote log files in a run directory, each mirrored to a local ``log_path``."""

    def __init__(self, connection: SshConnection, run_dir: str):
        self.connection = connection
        self.run_dir = run_dir
        self._mirrors: dict[str, _Mirror] = {}  # local log_path -> its remote log
        self._lock = threading.Lock()

    def __contains__(self, log_path: object) -> bool:
        return log_path in self._mirrors

    def remote_path(self, log_path: str | None, number: int, program: str) -> str:
        """Where process ``number`` logs on the node; processes sharing a ``log_path``
        share the remote log too (callers serialize this)."""
        if log_path is None:
            return f"{self.run_dir}/{number}-{slug(Path(program).name)}.log"
        if log_path not in self._mirrors:
            remote = f"{self.run_dir}/{number}-{slug(Path(log_path).name)}"
            self._mirrors[log_path] = _Mirror(remote)
        return self._mirrors[log_path].remote

    def sync(self, log_path: str | None) -> None:
        """Append what the remote log gained since the last copy to the local log."""
        if log_path is None or log_path not in self._mirrors:
            return
        with self._lock:
            mirror = self._mirrors[log_path]
            remote, copied = mirror.remote, mirror.copied

            def fetch(sftp: paramiko.SFTPClient) -> bytes:
                with sftp.open(remote, "rb") as handle:
                    handle.seek(copied)
                    return handle.read()

            try:
                data = self.connection.sftp_call("copying a log", fetch)
            except FileNotFoundError:
                return
            Path(log_path).parent.mkdir(parents=True, exist_ok=True)
            with open(log_path, "ab") as local:
                local.write(data)
            mirror.copied = copied + len(data)

    def sync_all(self) -> None:
        for log_path in list(self._mirrors):
            self.sync(log_path)

    def forget(self) -> None:
        """Drop every mirror: the local copies are final."""
        self._mirrors.clear()
