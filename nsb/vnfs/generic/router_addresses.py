"""How a Linux router port reaches the generator's addresses behind it.

The generator does not answer ARP for the addresses it sends from and to (and
its receiving ports have no address at all), so the router must know where each
one is: an address in the port's subnet gets a permanent neighbour entry with the
peer's MAC (as NSB's RouterVNF adds for its flows), an address outside it is
reached by a route via the peer's address (``onlink``: the peer's own neighbour
entry resolves it). A leaf module: plain values in, plain values out.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

# permanent neighbour entries per port: beyond this, give a smaller range or
# addresses outside the port's subnet (one route for the lot)
MAX_NEIGHBOURS = 4096


@dataclass(frozen=True)
class PortPlan:
    """What the router puts on one port."""

    port: str  # the interface name in the topology
    address: str  # address/prefix
    peer_mac: str
    peer_ip: str  # '' when the peer has none
    neighbours: tuple[str, ...]  # addresses -> peer_mac, permanent
    routes: tuple[str, ...]  # networks via peer_ip onlink

    def described(self) -> dict:
        shown = {"address": self.address, "peer_mac": self.peer_mac}
        if self.peer_ip:
            shown["peer_ip"] = self.peer_ip
        if len(self.neighbours) > 8:
            shown["neighbours"] = (f"{len(self.neighbours)} addresses, {self.neighbours[0]} "
                                   f"... {self.neighbours[-1]}")
        else:
            shown["neighbours"] = list(self.neighbours)
        shown["routes"] = [f"{net} via {self.peer_ip}" for net in self.routes]
        return shown


def address_range(text: str) -> tuple[int, int, int]:
    """``a``, ``a-b`` or ``net/len`` as (IP version, first, last) integers."""
    text = str(text).strip()
    try:
        if "/" in text:
            net = ipaddress.ip_network(text, strict=False)
            return net.version, int(net[0]), int(net[-1])
        first, _, last = text.partition("-")
        low = ipaddress.ip_address(first.strip())
        high = ipaddress.ip_address(last.strip()) if last else low
    except ValueError:
        raise ValueError(f"'{text}' is not an address, a range 'first-last' or a network "
                         "'address/prefix'") from None
    if low.version != high.version:
        raise ValueError(f"'{text}' mixes IPv4 and IPv6")
    if int(high) < int(low):
        raise ValueError(f"'{text}' runs backwards")
    return low.version, int(low), int(high)


def flow_addresses(flow: dict, ports: list[str]) -> dict[str, list[str]]:
    """NSB's scenario flow (``src_ip_<k>``, ``dst_ip_<k>``) per port, as NSB's
    RouterVNF reads it: pair k's sources are behind port 2k, its destinations
    behind port 2k+1 (ports in the router's order)."""
    behind: dict[str, list[str]] = {}
    for key, value in flow.items():
        side, _, pair = key.rpartition("_ip_")
        if side not in ("src", "dst") or not pair.isdigit():
            continue
        index = 2 * int(pair) + (side == "dst")
        if index < len(ports):
            behind.setdefault(ports[index], []).append(str(value))
    return behind


def port_plan(iface, wanted: list[str]) -> PortPlan:
    """The neighbours and routes of port ``iface`` (a topology Interface) for the
    generator addresses ``wanted`` behind it; ValueError says what is wrong."""
    if not iface.ip:
        raise ValueError(f"interface {iface.name} has no IP address in the topology (a "
                         "router port needs one: 'ip' of a netns node, local_ip/netmask in a "
                         "pod)")
    if not iface.peer_mac:
        raise ValueError(f"interface {iface.name} is not linked to anything (no peer MAC)")
    own = ipaddress.ip_interface(iface.ip)
    network = own.network
    inside: set[int] = set()
    outside: list[tuple[int, int]] = []
    peer = [iface.peer_ip.split("/")[0]] if iface.peer_ip else []
    for text in peer + list(wanted):
        version, first, last = address_range(text)
        if version != network.version:
            raise ValueError(f"{text}: IPv{version}, but {iface.name} has the IPv"
                             f"{network.version} address {iface.ip}")
        low, high = _inside(first, last, network)
        if low <= high:
            if len(inside) + high - low + 1 > MAX_NEIGHBOURS + 3:
                raise ValueError(_too_many(iface.name, text, network))
            inside.update(range(low, high + 1))
        outside += _outside(first, last, network)
    inside -= {int(own.ip)}
    if network.num_addresses > 2:  # no neighbour for the subnet's own broadcast
        inside -= {int(network.network_address), int(network.broadcast_address)}
    if len(inside) > MAX_NEIGHBOURS:
        raise ValueError(_too_many(iface.name, ", ".join(wanted), network))
    if peer:  # the peer resolves the routes too, wherever its address is
        inside.add(int(ipaddress.ip_address(peer[0])))
    routes = _networks(outside, network.version)
    if routes and not iface.peer_ip:
        raise ValueError(f"{routes[0]} is outside {iface.name}'s subnet {network}: it is "
                         f"routed via the peer's address, and the peer of {iface.name} has "
                         "none")
    return PortPlan(iface.name, iface.ip, iface.peer_mac, iface.peer_ip.split("/")[0],
                    tuple(str(ipaddress.ip_address(a)) for a in sorted(inside)), routes)


def _too_many(port: str, text: str, network) -> str:
    return (f"{text}: more than {MAX_NEIGHBOURS} addresses in {port}'s subnet {network} "
            "(one neighbour entry each); give fewer, or addresses outside the subnet (one "
            "route via the peer)")


def _inside(first: int, last: int, network) -> tuple[int, int]:
    return max(first, int(network[0])), min(last, int(network[-1]))


def _outside(first: int, last: int, network) -> list[tuple[int, int]]:
    pieces = []
    if first < int(network[0]):
        pieces.append((first, min(last, int(network[0]) - 1)))
    if last > int(network[-1]):
        pieces.append((max(first, int(network[-1]) + 1), last))
    return pieces


def _networks(pieces: list[tuple[int, int]], version: int) -> tuple[str, ...]:
    """The fewest networks covering ``pieces`` (address ranges)."""
    make = ipaddress.IPv4Address if version == 4 else ipaddress.IPv6Address
    nets = [net for low, high in pieces
            for net in ipaddress.summarize_address_range(make(low), make(high))]
    return tuple(str(net) for net in ipaddress.collapse_addresses(nets))
