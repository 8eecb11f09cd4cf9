"""A node of a context: its interfaces, how to reach it, and stable names for both.

A leaf module: task loading builds nodes from pod files without importing any
context or executor.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nsb.executors.base import Executor


# drivers with which a NIC is a DPDK port (mlx's stay on their kernel driver: bifurcated)
DPDK_DRIVERS = frozenset({"vfio-pci", "igb_uio", "uio_pci_generic", "mlx5_core", "mlx4_core"})
# drivers nsb binds a NIC to for a run (``dpdk_driver``); ``auto`` picks vfio-pci where
# the machine has an IOMMU, else vfio's no-IOMMU mode or uio_pci_generic
BINDABLE_DRIVERS = ("auto", "vfio-pci", "uio_pci_generic", "igb_uio")
# a bridge a vSwitch on a node provides (``bridges``: lab nodes, pod nodes)
BRIDGE_NAME = "^[A-Za-z][A-Za-z0-9_]{0,9}$"


@dataclass(frozen=True)
class Endpoint:
    node: str
    interface: str

    def __str__(self) -> str:
        return f"{self.node}:{self.interface}"


@dataclass
class Interface:
    name: str
    mac: str = ""
    ip: str = ""  # address/prefix
    mtu: int = 1500
    peer: Endpoint | None = None
    peer_mac: str = ""
    peer_ip: str = ""
    pci: str = ""  # a NIC DPDK programs take by PCI address (pod ``vpci``); empty for veth
    driver: str = ""  # the driver the pod names (NSB: the NIC's kernel driver)
    # the driver nsb may bind the NIC to for the run and give back afterwards ('' = not
    # allowed: a NIC found on a kernel driver is then a pre-flight failure)
    dpdk_driver: str = ""
    dpdk_port: int | None = None  # pod ``dpdk_port_num``
    # the interface at the other end of its cable (pod ``peer``): a link via a bridge of
    # this node takes this NIC as the switch port of that end
    cabled_to: Endpoint | None = None
    kind: str = "veth"  # or "vhostuser" / "memif": a socket instead of a wire
    # memif: the socket the link's two DPDK programs share, and whether this end serves it
    socket: str = ""
    serves_socket: bool = False

    @property
    def is_vhostuser(self) -> bool:
        return self.kind == "vhostuser"

    @property
    def is_memif(self) -> bool:
        return self.kind == "memif"

    @property
    def is_dpdk_port(self) -> bool:
        """A NIC by PCI address: DPDK programs take it with ``-a <pci>`` on a DPDK
        driver (it is bound, or nsb binds it); a kernel interface, by contrast, is an
        af_packet port."""
        return bool(self.pci) and not (self.is_vhostuser or self.is_memif)

    @property
    def address(self) -> str:
        """The IP without its prefix length."""
        return self.ip.split("/")[0]


@dataclass
class SshAccess:
    """How to reach a lab node; the password never appears in describe() or logs."""

    host: str
    user: str = "root"
    port: int = 22
    password: str | None = field(default=None, repr=False)
    key_filename: str | None = None
    # how long to wait for the TCP connection, the server's greeting and the login; a VM
    # under TCG (nested, more so) takes longer than a server to do each
    connect_timeout: float = 10.0

    def describe(self) -> dict:
        auth = "key " + self.key_filename if self.key_filename else (
            "password" if self.password else "ssh agent/default keys")
        return {"host": self.host, "user": self.user, "port": self.port, "auth": auth}


@dataclass
class Node:
    name: str
    role: str
    interfaces: dict[str, Interface]
    executor: Executor | None = None
    ssh: SshAccess | None = None
    bridges: tuple[str, ...] = ()  # bridges a vSwitch on this node provides for links
    # a pod's node: its NICs are cabled (``cabled_to``), a link via one of its bridges takes
    # the NIC cabled to each end; a lab node gets two new switch ports per link instead
    cabled: bool = False
    pod: dict = field(default_factory=dict, repr=False)  # the pod entry, for VNF descriptors

    def dpdk_ports(self) -> dict[int, Interface]:
        """DPDK port number -> interface, as the EAL numbers them: NICs in PCI address
        order (as NSB renumbers ``dpdk_port_num``), then the other interfaces by
        ``dpdk_port_num`` from the pod, else in declaration order."""
        nics = sorted((i for i in self.interfaces.values() if i.pci), key=lambda i: i.pci)
        others = [i for i in self.interfaces.values() if not i.pci]
        if not nics:
            ports = {}
            for index, iface in enumerate(others):
                ports[iface.dpdk_port if iface.dpdk_port is not None else index] = iface
            return dict(sorted(ports.items()))
        return dict(enumerate(nics + others))


def stable_mac(*parts: str) -> str:
    """A locally administered unicast MAC derived from names: same task, same MACs."""
    digest = hashlib.sha1(":".join(parts).encode()).digest()
    return "02:" + ":".join(f"{b:02x}" for b in digest[:5])
