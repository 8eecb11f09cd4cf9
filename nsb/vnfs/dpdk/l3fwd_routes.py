"""l3fwd's route files (``--rule_ipv4``/``--rule_ipv6``) from the topology.

l3fwd's own LPM table routes 198.18.<port>.0/24 (RFC 2544's benchmark addresses)
and 2001:200:0:<port>::/64 to port <port>. A generator sends to the addresses of
its ports, which are the l3fwd ports' peers: when those are elsewhere, each port
gets a route for its own subnet (and its peer's address, if outside it), one
``R<prefix> <port>`` line each. l3fwd reads both files or neither, so the IPv6
file keeps l3fwd's own route for a port without an IPv6 address.
"""

from __future__ import annotations

import ipaddress

DEFAULT_PORTS = 16  # l3fwd's built-in table has a route for ports 0-15


def default_route(port: int, version: int) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    if version == 4:
        return ipaddress.ip_network(f"198.18.{port}.0/24")
    return ipaddress.ip_network(f"2001:200:0:{port:x}::/64")


def destinations(iface) -> list:
    """The networks frames routed out of ``iface`` go to: its subnet, and its peer's
    address when the subnet does not hold it."""
    nets = []
    if iface.ip:
        nets.append(ipaddress.ip_interface(iface.ip).network)
    if iface.peer_ip:
        peer = ipaddress.ip_address(iface.peer_ip.split("/")[0])
        if not any(peer in net for net in nets):
            nets.append(ipaddress.ip_network(peer))
    return nets


def defaults_fit(interfaces: list) -> bool:
    """Every port's destinations are in l3fwd's own route to that port (a port
    without addresses fits any table)."""
    for port, iface in enumerate(interfaces):
        for net in destinations(iface):
            own = default_route(port, net.version) if port < DEFAULT_PORTS else None
            if own is None or not net.subnet_of(own):
                return False
    return True


def clash(interfaces: list) -> str:
    """Why the ports' destinations cannot be routed apart ('' if they can)."""
    seen: dict = {}
    for port, iface in enumerate(interfaces):
        for net in destinations(iface):
            for other, other_port in seen.items():
                if other_port != port and other.version == net.version and net.overlaps(other):
                    wider = other if other.prefixlen <= net.prefixlen else net
                    return (f"ports {other_port} ({interfaces[other_port].name}) and {port} "
                            f"({iface.name}) both lead to {wider}")
            seen.setdefault(net, port)
    return ""


def rule_files(interfaces: list) -> tuple[str, str]:
    """The IPv4 and IPv6 route files, one ``R<prefix> <port>`` line per route."""
    lines: dict[int, list[str]] = {4: ["# nsb: routes to each port's subnet"],
                                   6: ["# nsb: routes to each port's subnet"]}
    for port, iface in enumerate(interfaces):
        nets = destinations(iface)
        if not any(n.version == 6 for n in nets) and port < DEFAULT_PORTS:
            nets.append(default_route(port, 6))  # l3fwd reads both files or neither
        for net in nets:
            lines[net.version].append(f"R{net} {port}")
    return "\n".join(lines[4]) + "\n", "\n".join(lines[6]) + "\n"
