"""A memif client starts once its servers accept clients (nsb.vnfs.memif_servers): a
DPDK server from its port's start on, as its telemetry shows; anything else once its
socket exists."""

from __future__ import annotations

import logging
import time

from nsb.executors.base import CommandResult
from nsb.nodes.node import Interface
from nsb.vnfs import memif_servers
from nsb.vnfs.dpdk import app
from nsb.vnfs.dpdk import testpmd as testpmd_vnf


def memif(name: str, socket: str, serves: bool) -> Interface:
    iface = Interface(name, kind="memif")
    iface.socket, iface.serves_socket = socket, serves
    return iface


class Node:
    executor = None

    def __init__(self, *interfaces: Interface):
        self.interfaces = {i.name: i for i in interfaces}


class Server:
    """A started VNF that accepts clients from its ``after``-th question on."""

    def __init__(self, name: str, node: Node, after: int = 0):
        self.name, self.node, self.after, self.asked = name, node, after, []

    def wait_serving(self, sockets, deadline):
        self.asked.append(sockets)
        return memif_servers.poll_until(lambda: len(self.asked) > self.after, deadline)


class Client:
    def __init__(self, node: Node):
        self.name, self.node = "tg0", node


def test_a_client_waits_for_each_server_of_the_sockets_it_connects_to():
    sut = Server("testpmd0", Node(memif("xe0", "/run/a.sock", True),
                                  memif("xe1", "/run/b.sock", True)))
    other = Server("testpmd1", Node(memif("xe0", "/run/c.sock", True)))
    tg = Client(Node(memif("xe0", "/run/a.sock", False), memif("xe1", "/run/b.sock", False)))
    memif_servers.wait_for_servers(tg, [sut, other], 30.0)
    assert sut.asked == [["/run/a.sock", "/run/b.sock"]]
    assert other.asked == []  # it serves nothing the client connects to


def test_a_server_that_never_accepts_is_a_warning_and_the_client_starts(monkeypatch, caplog):
    monkeypatch.setattr(memif_servers, "POLL_S", 0.001)
    sut = Server("testpmd0", Node(memif("xe0", "/run/a.sock", True)), after=10**9)
    tg = Client(Node(memif("xe0", "/run/a.sock", False)))
    with caplog.at_level(logging.WARNING):
        memif_servers.wait_for_servers(tg, [sut], 0.05)
    assert "tg0: testpmd0 does not accept memif clients on /run/a.sock after 0.05 s" \
        in caplog.text


def test_a_server_itself_asks_nothing():
    sut = Server("testpmd0", Node(memif("xe0", "/run/a.sock", True)))
    memif_servers.wait_for_servers(Client(sut.node), [], 30.0)
    assert sut.asked == []


class SocketsAppear:
    """Executor double: each socket exists from its ``after``-th check on."""

    def __init__(self, after: dict[str, int]):
        self.after, self.checks = after, {path: 0 for path in after}

    def run(self, argv, check=True, **_):
        assert argv[:2] == ["test", "-S"] and not check
        self.checks[argv[2]] += 1
        return CommandResult(argv, 0 if self.checks[argv[2]] > self.after[argv[2]] else 1,
                             "", "")


def test_by_default_a_socket_accepts_once_it_exists(monkeypatch):
    monkeypatch.setattr(memif_servers, "POLL_S", 0.001)
    node = SocketsAppear({"/run/a.sock": 3})
    assert memif_servers.poll_until(
        lambda: memif_servers.sockets_exist(node, ["/run/a.sock"]), time.monotonic() + 30)
    assert node.checks == {"/run/a.sock": 4}


class Running:
    def poll(self):
        return None


def dpdk_server_answering(replies: list[dict], monkeypatch) -> testpmd_vnf.TestpmdVnf:
    vnf = object.__new__(testpmd_vnf.TestpmdVnf)
    vnf.name, vnf.node, vnf.file_prefix = "testpmd0", Node(), "nsb-t-testpmd0"
    vnf.interfaces = [memif("xe0", "/run/a.sock", True), memif("xe1", "/run/b.sock", True)]
    vnf.process, vnf.asked = Running(), []

    def query(executor, prefix, commands, timeout_s):
        vnf.asked.append(commands)
        reply = replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    monkeypatch.setattr(app.dpdk_telemetry, "query", query)
    monkeypatch.setattr(memif_servers, "POLL_S", 0.001)
    return vnf


def test_a_dpdk_server_accepts_once_telemetry_shows_its_ports_started(monkeypatch):
    # the EAL probed the device (socket there) long before the app starts its ports
    replies = [app.RunError("no telemetry socket yet"),
               {"/ethdev/info,1": {"dev_started": 0}},
               {"/ethdev/info,1": {"dev_started": 1}}]
    vnf = dpdk_server_answering(replies, monkeypatch)
    assert vnf.wait_serving(["/run/b.sock"], time.monotonic() + 30)
    assert vnf.asked == [["/ethdev/info,1"]] * 3 and not replies


def test_a_dpdk_server_whose_ports_never_start_says_so(monkeypatch):
    vnf = dpdk_server_answering([{"/ethdev/info,0": {"dev_started": 0}}] * 10**4, monkeypatch)
    assert not vnf.wait_serving(["/run/a.sock"], time.monotonic() + 0.05)
