"""A memif client waits for its server's socket (nsb.vnfs.memif_servers)."""

from __future__ import annotations

import logging

from nsb.executors.base import CommandResult
from nsb.vnfs import memif_servers


class SocketsAppear:
    """Executor double: each socket exists from its ``after``-th check on."""

    def __init__(self, after: dict[str, int]):
        self.after, self.checks = after, {path: 0 for path in after}

    def run(self, argv, check=True, **_):
        assert argv[:2] == ["test", "-S"] and not check
        path = argv[2]
        self.checks[path] += 1
        return CommandResult(argv, 0 if self.checks[path] > self.after[path] else 1, "", "")


def test_the_client_starts_once_every_socket_it_connects_to_exists(monkeypatch):
    monkeypatch.setattr(memif_servers, "POLL_S", 0.001)
    node = SocketsAppear({"/run/a.sock": 3, "/run/b.sock": 0})
    memif_servers.wait_for_servers(node, ["/run/a.sock", "/run/b.sock"], 30.0, "tg0")
    assert node.checks == {"/run/a.sock": 4, "/run/b.sock": 1}  # a found once, then left


def test_a_socket_that_never_comes_is_a_warning_and_the_client_starts(monkeypatch, caplog):
    monkeypatch.setattr(memif_servers, "POLL_S", 0.001)
    node = SocketsAppear({"/run/a.sock": 10**9})
    with caplog.at_level(logging.WARNING):
        memif_servers.wait_for_servers(node, ["/run/a.sock"], 0.05, "tg0")
    assert node.checks["/run/a.sock"] > 1
    assert "tg0: no memif server created /run/a.sock in 0.05 s" in caplog.text


def test_no_socket_to_wait_for_checks_nothing():
    node = SocketsAppear({})
    memif_servers.wait_for_servers(node, [], 30.0, "tg0")
    assert node.checks == {}
