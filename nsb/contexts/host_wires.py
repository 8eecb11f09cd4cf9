"""Host ends of the lab's wires for VMs: bridges that act as wires, taps for VM NICs,
veths into lab namespaces, all named after the run and removed together."""

from __future__ import annotations

import subprocess
from pathlib import Path

from nsb.contexts.netns import ip, move_into, veth_pair


class HostWires:
    """The bridges, taps and veths one run made on this host."""

    def __init__(self, tag: str):
        self.tag = tag  # in every name: nsb<tag>...
        self.bridges: list[str] = []
        self.taps: list[str] = []
        self.veths: list[str] = []

    def bridge(self, suffix: str) -> str:
        """A host bridge that acts as a wire: it learns no MACs (ageing 0), so a frame a
        VNF sends back out of the port it came in by is still delivered."""
        name = f"nsb{self.tag}{suffix}"
        ip("link", "add", name, "type", "bridge", "ageing_time", "0")
        self.bridges.append(name)
        quiet(name)
        ip("link", "set", name, "up")
        return name

    def tap(self, bridge: str) -> str:
        """A VM NIC's host end, made here so that the host sends nothing on it."""
        name = f"nsb{self.tag}t{len(self.taps)}"
        ip("tuntap", "add", "mode", "tap", "name", name)
        self.taps.append(name)
        quiet(name)
        ip("link", "set", name, "master", bridge, "up")
        return name

    def veth_pair(self, index: int, ends: list[tuple[str, object]]) -> None:
        """A veth between two namespaces: ``ends`` are (namespace, interface) pairs."""
        self.veths.append(f"nsb{self.tag}v{index}")  # removed with its peer
        veth_pair(f"nsb{self.tag}v{index}", f"nsb{self.tag}w{index}", ends)

    def veth_into(self, bridge: str, index: int, netns: str, iface) -> None:
        """A veth from ``bridge`` that becomes ``iface`` in namespace ``netns``."""
        outside, inside = f"nsb{self.tag}v{index}", f"nsb{self.tag}w{index}"
        ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        self.veths.append(outside)
        quiet(outside)
        ip("link", "set", outside, "master", bridge, "up")
        move_into(inside, netns, iface)

    def remove(self) -> None:
        for name in self.taps + self.veths + list(reversed(self.bridges)):
            subprocess.run(["ip", "link", "delete", name], capture_output=True)
        for names in (self.taps, self.veths, self.bridges):
            names.clear()


def quiet(ifname: str) -> None:
    """No IPv6 on a host end of a lab wire: its router solicitations would cross the
    VNF and be counted as received test frames."""
    Path(f"/proc/sys/net/ipv6/conf/{ifname}/disable_ipv6").write_text("1")
