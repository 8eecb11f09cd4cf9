"""Host ends of the lab's wires for VMs: bridges that act as wires, taps for VM NICs,
veths into lab namespaces, all named after the run and removed together. The host
is this machine or, through its executor, the libvirt host of a standalone context."""

from __future__ import annotations

from nsb.contexts.netns import move_into, veth_pair
from nsb.executors.base import Executor
from nsb.executors.local import LocalExecutor


class HostWires:
    """The bridges, taps and veths one run made on a host."""

    def __init__(self, tag: str, executor: Executor | None = None):
        self.tag = tag  # in every name: nsb<tag>...
        self.executor = executor or LocalExecutor()
        self.bridges: list[str] = []
        self.taps: list[str] = []
        self.veths: list[str] = []

    def ip(self, *args: str) -> None:
        self.executor.run(["ip", *args], timeout=30)

    def bridge(self, suffix: str) -> str:
        """A host bridge that acts as a wire: it learns no MACs (ageing 0), so a frame a
        VNF sends back out of the port it came in by is still delivered."""
        name = f"nsb{self.tag}{suffix}"
        self.ip("link", "add", name, "type", "bridge", "ageing_time", "0")
        self.bridges.append(name)
        self.quiet(name)
        self.ip("link", "set", name, "up")
        return name

    def tap(self, bridge: str) -> str:
        """A VM NIC's host end, made here so that the host sends nothing on it."""
        name = f"nsb{self.tag}t{len(self.taps)}"
        self.ip("tuntap", "add", "mode", "tap", "name", name)
        self.taps.append(name)
        self.quiet(name)
        self.ip("link", "set", name, "master", bridge, "up")
        return name

    def veth_pair(self, index: int, ends: list[tuple[str, object]]) -> None:
        """A veth between two namespaces: ``ends`` are (namespace, interface) pairs."""
        self.veths.append(f"nsb{self.tag}v{index}")  # removed with its peer
        veth_pair(f"nsb{self.tag}v{index}", f"nsb{self.tag}w{index}", ends)

    def veth_into(self, bridge: str, index: int, netns: str, iface) -> None:
        """A veth from ``bridge`` that becomes ``iface`` in namespace ``netns``."""
        outside = f"nsb{self.tag}v{index}"
        self.cable(outside, index, netns, iface)
        self.ip("link", "set", outside, "master", bridge)

    def cable(self, outside: str, index: int, netns: str, iface) -> None:
        """A veth whose host end is ``outside`` and whose other end becomes ``iface`` in
        namespace ``netns``: the lab's cable to a host port."""
        inside = f"nsb{self.tag}w{index}"
        self.ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        self.veths.append(outside)
        self.quiet(outside)
        self.ip("link", "set", outside, "up")
        move_into(inside, netns, iface)

    def quiet(self, ifname: str) -> None:
        """No IPv6 on a host end of a lab wire: its router solicitations would cross the
        VNF and be counted as received test frames."""
        self.executor.run(["sysctl", "-q", "-w", f"net.ipv6.conf.{ifname}.disable_ipv6=1"])

    def remove(self) -> None:
        for name in self.taps + self.veths + list(reversed(self.bridges)):
            self.executor.run(["ip", "link", "delete", name], check=False, timeout=30)
        for names in (self.taps, self.veths, self.bridges):
            names.clear()
