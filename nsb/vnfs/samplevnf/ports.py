"""A SampleVNF's ports as NSB pairs them, numbered as its EAL numbers them.

NSB pairs a VNF's ports by the topology's links: the port on ``uplink_N`` with
the port on ``downlink_N`` (the uplink side is the private one, where the
generator's uplink traffic enters). Ports on no uplink/downlink link are not
the VNF's. A topology whose links are named otherwise (nsb's own) pairs the
linked ports in port order, two by two. DPDK numbers the ports in the order the
EAL finds them: NICs (taken by PCI address) in PCI order, then the af_packet
vdevs of kernel interfaces in the order given.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass

from nsb.nodes.node import Interface, Node

UPLINK, DOWNLINK = "uplink", "downlink"


@dataclass(frozen=True)
class Port:
    """One port of the VNF: its interface, DPDK port number and NSB link (vld)."""

    number: int
    iface: Interface
    vld: str = ""

    @property
    def name(self) -> str:
        return self.iface.name

    @property
    def address(self) -> ipaddress.IPv4Interface | None:
        """Its address/prefix (None when the interface has none)."""
        return ipaddress.IPv4Interface(self.iface.ip) if self.iface.ip else None

    @property
    def peer_address(self) -> str:
        """The address of the interface at the other end of its link ('' if none)."""
        return self.iface.peer_ip.split("/")[0]


@dataclass(frozen=True)
class PortLayout:
    ports: tuple[Port, ...]  # in DPDK port order
    pairs: tuple[tuple[Port, Port], ...]  # (uplink, downlink)

    def port(self, name: str) -> Port:
        return next(p for p in self.ports if p.name == name)

    @property
    def mask(self) -> str:
        """The application's ``-p`` port mask."""
        return hex(sum(1 << p.number for p in self.ports))


def eal_order(interfaces: list[Interface]) -> list[Interface]:
    """NICs first, by PCI address (the EAL probes the bus before vdevs), then the rest."""
    nics = sorted((i for i in interfaces if i.is_dpdk_port), key=lambda i: i.pci)
    return nics + [i for i in interfaces if not i.is_dpdk_port]


def layout(node: Node, networks: Mapping[str, str]) -> PortLayout:
    """The VNF's ports and pairs on ``node``; ``networks`` maps interface -> the
    topology's link (vld) id, as NSB's topology files name them (may be empty)."""
    named = {name: vld for name, vld in networks.items()
             if vld.startswith((UPLINK, DOWNLINK)) and name in node.interfaces}
    in_order = list(node.dpdk_ports().values())
    if named:
        used = [i for i in in_order if i.name in named]
    else:
        used = [i for i in in_order if i.peer is not None]
    ports = tuple(Port(n, i, named.get(i.name, "")) for n, i in enumerate(eal_order(used)))
    if named:
        return PortLayout(ports, _vld_pairs(ports, networks))
    by_order = [(ports[k], ports[k + 1]) for k in range(0, len(ports) - 1, 2)]
    return PortLayout(ports, tuple(by_order))


def _vld_pairs(ports: tuple[Port, ...], networks: Mapping[str, str]) -> tuple:
    """uplink_N with downlink_N, uplinks in the order the topology names them."""
    by_vld: dict[str, list[Port]] = {}
    for name, vld in networks.items():
        port = next((p for p in ports if p.name == name), None)
        if port is not None:
            by_vld.setdefault(vld, []).append(port)
    pairs = []
    for vld, uplinks in by_vld.items():
        if not vld.startswith(UPLINK):
            continue
        downlinks = by_vld.get(DOWNLINK + vld[len(UPLINK):], [])
        pairs += [(up, down) for up in uplinks for down in downlinks]
    return tuple(pairs)


def netmask_hex(port: Port) -> str:
    """The port's netmask as 8 hex digits (``routeadd``'s form)."""
    address = port.address
    return f"{int(address.netmask):08x}" if address else "ffffff00"
