"""Context, Node, Interface and Link: the topology VNFs are bound to."""

from __future__ import annotations

import abc
from dataclasses import dataclass

# a context's vocabulary, re-used by every context
from nsb.nodes import link_counters
from nsb.nodes.node import Endpoint, Interface, Node, SshAccess  # noqa: F401
from nsb.plugin import Plugin
from nsb.port_counts import PortCount
from nsb.runinfo import RunInfo
from nsb.task.model import PluginSpec


@dataclass(frozen=True)
class Link:
    """Two interfaces joined directly, or through a switch's bridge (``via``).

    A link through a bridge is cabled as two wires, a to the switch's port
    ``switch_a`` and ``switch_b`` to b; a and b are still each other's peers.
    """

    a: Endpoint
    b: Endpoint
    via: str = ""  # bridge name
    switch_a: Endpoint | None = None
    switch_b: Endpoint | None = None
    # one of several links of a shared network: an end in more than one of them has one
    # switch port, which the links share (service chains on one network)
    shared: bool = False

    def other(self, end: Endpoint) -> Endpoint:
        return self.b if end == self.a else self.a

    def wires(self) -> list[tuple[Endpoint, Endpoint]]:
        if self.via:
            return [(self.a, self.switch_a), (self.switch_b, self.b)]
        return [(self.a, self.b)]

    def __str__(self) -> str:
        return f"{self.a} <-> {self.b}" + (f" via {self.switch_a.node}:{self.via}"
                                            if self.via else "")


def vhost_dir(task_id: str) -> str:
    """Where the task's vhost-user sockets are, in its directory on the machine."""
    return f"/tmp/nsb-{task_id}/vhost"


def vhost_socket(task_id: str, end: Endpoint) -> str:
    """The vhost-user socket of a VNF's interface ``end`` (the VNF serves it, the
    switch port cabled to it connects)."""
    return f"{vhost_dir(task_id)}/{end.node}-{end.interface}.sock"


@dataclass(frozen=True)
class ContextKpis:
    source: str  # as a VNF's name in KPI samples, e.g. "ovs_dpdk"
    node: str
    kpis: dict[str, float]


class Context(Plugin):
    """Provides nodes and the links between their interfaces."""

    def __init__(self, spec: PluginSpec, options: dict, run: RunInfo):
        super().__init__(spec, options, run)
        self.nodes: dict[str, Node] = {}
        self.links: list[Link] = []

    @abc.abstractmethod
    def deploy(self) -> None:
        """Create or reach the nodes; after this every node has an executor."""

    def pending_nodes(self) -> list[str]:
        """Nodes deploy left down: they come up only once the VNFs on the other nodes run
        (a VM whose vhost-user NICs need their switch to connect before QEMU starts)."""
        return []

    def deploy_pending(self) -> None:
        """Bring up the pending nodes; after this every node has an executor."""
        return None  # none pending, unless a context says otherwise

    @abc.abstractmethod
    def undeploy(self) -> None:
        """Remove everything deploy created; safe to call after a partial deploy."""

    def collect_kpi(self) -> list[ContextKpis]:
        """KPIs of what the context runs itself (the standalone host's OVS-DPDK), read
        after every trial as the VNFs' are; none by default."""
        return []

    def port_counts(self, nodes: list[str]) -> dict[Endpoint, PortCount]:
        """The kernel's cumulative counters of the linked kernel interfaces (veths, taps,
        a NIC on its kernel driver known by its name) of ``nodes``: the wires' own
        counts at both their ends; one ``ip -s -j link`` per node."""
        counts: dict[Endpoint, PortCount] = {}
        for name in nodes:
            node = self.nodes.get(name)
            if node is None or node.executor is None:
                continue
            kernel = [i.name for i in node.interfaces.values()
                      if (i.peer or i.cabled_to) and i.kind == "veth" and not i.pci]
            if kernel:
                counted = link_counters.port_counts(node.executor, kernel)
                counts.update({Endpoint(name, iface): c for iface, c in counted.items()})
        return counts

    def describe(self) -> dict:
        return {
            "type": self.spec.type,
            "nodes": {n.name: self._describe_node(n) for n in self.nodes.values()},
            "links": [str(link) for link in self.links],
        }

    @staticmethod
    def _describe_node(node: Node) -> dict:
        described = {"role": node.role}
        if node.ssh:
            described["ssh"] = node.ssh.describe()
        interfaces = {}
        for iface in node.interfaces.values():
            entry = {"mac": iface.mac, "ip": iface.ip,
                     "peer": str(iface.peer) if iface.peer else None}
            if iface.peer:
                entry["peer_mac"] = iface.peer_mac
            shown = (("pci", iface.pci), ("driver", iface.driver),
                     ("dpdk_port", iface.dpdk_port), ("socket", iface.socket))
            entry.update({k: v for k, v in shown if v not in ("", None)})
            if iface.kind != "veth":
                entry["type"] = iface.kind
            interfaces[iface.name] = entry
        described["interfaces"] = interfaces
        return described

    def connect_peers(self, nodes: dict[str, Node] | None = None) -> None:
        """Fill each interface's peer, peer MAC and peer IP from the links; ``nodes``
        when the links reach nodes of other contexts too."""
        nodes = self.nodes if nodes is None else nodes
        # wires first: a link's two ends are each other's peers even through a switch
        pairs = [wire for link in self.links if link.via for wire in link.wires()]
        pairs += [(link.a, link.b) for link in self.links]
        for left, right in pairs:
            for end, other in ((left, right), (right, left)):
                iface = nodes[end.node].interfaces[end.interface]
                peer = nodes[other.node].interfaces[other.interface]
                iface.peer = other
                iface.peer_mac = peer.mac
                iface.peer_ip = peer.ip
