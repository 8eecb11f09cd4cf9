"""Context, Node, Interface and Link: the topology VNFs are bound to."""

from __future__ import annotations

import abc
from dataclasses import dataclass

from nsb.executors.base import Executor
from nsb.runinfo import RunInfo
from nsb.task.model import PluginSpec


@dataclass(frozen=True)
class Endpoint:
    node: str
    interface: str

    def __str__(self) -> str:
        return f"{self.node}:{self.interface}"


@dataclass(frozen=True)
class Link:
    a: Endpoint
    b: Endpoint

    def other(self, end: Endpoint) -> Endpoint:
        return self.b if end == self.a else self.a


@dataclass
class Interface:
    name: str
    mac: str = ""
    ip: str = ""  # address/prefix
    mtu: int = 1500
    peer: Endpoint | None = None
    peer_mac: str = ""
    peer_ip: str = ""

    @property
    def address(self) -> str:
        """The IP without its prefix length."""
        return self.ip.split("/")[0]


@dataclass
class Node:
    name: str
    role: str
    interfaces: dict[str, Interface]
    executor: Executor | None = None


class Context(abc.ABC):
    """Provides nodes and the links between their interfaces."""

    OPTIONS_SCHEMA: dict | None = None

    def __init__(self, spec: PluginSpec, options: dict, run: RunInfo):
        self.spec = spec
        self.options = options
        self.run = run
        self.nodes: dict[str, Node] = {}
        self.links: list[Link] = []

    @abc.abstractmethod
    def deploy(self) -> None:
        """Create or reach the nodes; after this every node has an executor."""

    @abc.abstractmethod
    def undeploy(self) -> None:
        """Remove everything deploy created; safe to call after a partial deploy."""

    def describe(self) -> dict:
        return {
            "type": self.spec.type,
            "nodes": {n.name: {"role": n.role, "interfaces": {
                i.name: {"mac": i.mac, "ip": i.ip, "peer": str(i.peer) if i.peer else None}
                for i in n.interfaces.values()}} for n in self.nodes.values()},
            "links": [f"{link.a} <-> {link.b}" for link in self.links],
        }

    def connect_peers(self) -> None:
        """Fill each interface's peer, peer MAC and peer IP from the links."""
        for link in self.links:
            for end in (link.a, link.b):
                other = link.other(end)
                iface = self.nodes[end.node].interfaces[end.interface]
                peer = self.nodes[other.node].interfaces[other.interface]
                iface.peer = other
                iface.peer_mac = peer.mac
                iface.peer_ip = peer.ip
