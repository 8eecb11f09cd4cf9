"""SshExecutor without root: connection errors against in-process paramiko servers."""

import contextlib
import socket
import threading

import paramiko
import pytest

from nsb.errors import PrerequisiteError
from nsb.executors.ssh import SshExecutor


class _RejectEveryone(paramiko.ServerInterface):
    def get_allowed_auths(self, username):
        return "password,publickey"

    def check_auth_password(self, username, password):
        return paramiko.AUTH_FAILED

    def check_auth_publickey(self, username, key):
        return paramiko.AUTH_FAILED


@contextlib.contextmanager
def rejecting_server(drop_first: bool = False):
    """A real SSH server (paramiko's) on 127.0.0.1 that refuses every credential;
    ``drop_first``: it closes its first connection before greeting, as a busy sshd may."""
    listener = socket.create_server(("127.0.0.1", 0))
    key = paramiko.RSAKey.generate(2048)
    transports = []

    def serve():
        with contextlib.suppress(OSError):
            if drop_first:
                listener.accept()[0].close()
            conn, _ = listener.accept()
            transport = paramiko.Transport(conn)
            transports.append(transport)
            transport.add_server_key(key)
            transport.start_server(server=_RejectEveryone())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
        for transport in transports:
            transport.close()
        thread.join(5)


def test_nothing_connects_before_use_and_repr_hides_secrets():
    executor = SshExecutor("vnf_0", "192.0.2.1", password="s3cret-pw", run_id="abc123")
    assert "s3cret-pw" not in repr(executor) and "vnf_0" in repr(executor)
    assert executor.run_dir == "/tmp/nsb-abc123-ssh-vnf_0"
    other = SshExecutor("vnf_0", "192.0.2.1")
    assert other.run_dir.startswith("/tmp/nsb-ssh-vnf_0-")
    assert other.run_dir != SshExecutor("vnf_0", "192.0.2.1").run_dir


def test_missing_key_file_is_named_without_connecting(tmp_path):
    executor = SshExecutor("vnf_0", "192.0.2.1", key_filename=str(tmp_path / "nope"),
                           connect_timeout=30)
    with pytest.raises(PrerequisiteError, match=r"^node vnf_0 \(root@192.0.2.1:22\): key "
                       r"file .*/nope not found$"):
        executor.connect()


def test_refused_port_names_node_host_port_and_reason():
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    executor = SshExecutor("tg_0", "127.0.0.1", port=port, user="nsb", connect_timeout=3)
    with pytest.raises(PrerequisiteError) as failed:
        executor.run(["true"])
    message = str(failed.value)
    assert message.startswith(f"node tg_0 (nsb@127.0.0.1:{port}): cannot connect: ")
    assert "Unable to connect" in message or "refused" in message


def test_silent_port_times_out_with_a_clear_reason():
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never speaks SSH
        port = silent.getsockname()[1]
        executor = SshExecutor("tg_0", "127.0.0.1", port=port, connect_timeout=0.5)
        with pytest.raises(PrerequisiteError, match=rf"^node tg_0 \(root@127.0.0.1:{port}\): "
                           r"cannot connect: "):
            executor.connect()


def test_a_handshake_dropped_once_is_tried_again():
    """A busy node's sshd that drops the first connection during the handshake: the next
    attempt gets through to the server (which here refuses the credentials)."""
    with rejecting_server(drop_first=True) as port:
        executor = SshExecutor("vnf_0", "127.0.0.1", port=port, user="nsb", password="pw",
                               connect_timeout=5)
        with pytest.raises(PrerequisiteError, match="authentication failed"):
            executor.connect()


def test_rejected_password_never_appears_in_the_error():
    with rejecting_server() as port:
        executor = SshExecutor("vnf_0", "127.0.0.1", port=port, user="nsb",
                               password="pw-very-secret", connect_timeout=5)
        with pytest.raises(PrerequisiteError) as failed:
            executor.connect()
    message = str(failed.value)
    assert message.startswith(f"node vnf_0 (nsb@127.0.0.1:{port}): authentication failed "
                              "with password")
    assert "pw-very-secret" not in message


def test_a_refused_forwarded_channel_is_not_shown_as_an_error(caplog):
    """paramiko logs 'Secsh channel N open FAILED' at ERROR while nsb waits for PROX's
    socket on a node; the console shows WARNING and above."""
    import logging

    import nsb.executors.ssh  # noqa: F401 - installs the filter

    with caplog.at_level(logging.DEBUG, logger="paramiko.transport"):
        logging.getLogger("paramiko.transport").error(
            "Secsh channel 26 open FAILED: Connection refused: Connect failed")
        logging.getLogger("paramiko.transport").error("Authentication failed.")
    levels = {r.getMessage().split(":")[0]: r.levelname for r in caplog.records
              if r.name == "paramiko.transport"}  # not a thread of another test's logging
    assert levels == {"Secsh channel 26 open FAILED": "DEBUG",
                      "Authentication failed.": "ERROR"}
