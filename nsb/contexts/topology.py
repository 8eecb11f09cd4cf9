"""Nodes and links declared in the task itself, with deterministic addressing.

A link ``via`` a bridge is cabled to the node that provides the bridge: in the
lab by two switch ports made for it, on a pod's node by the NICs cabled to its
ends (the pod's ``peer``); an end that is a vhost-user interface gets a made port
either way (a socket, not a cable).
"""

from __future__ import annotations

from nsb.contexts.base import Endpoint, Interface, Link, Node
from nsb.errors import raise_all
from nsb.nodes.node import BRIDGE_NAME, stable_mac
from nsb.task.model import Where

INTERFACE_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "mac": {"type": "string", "format": "nsb-mac"},  # unicast (nsb.task.values)
        "ip": {"type": "string", "format": "nsb-ip-prefix"},  # IPv4 or IPv6 /prefix
        "mtu": {"type": "integer", "minimum": 68, "maximum": 9216},
        "type": {"description": "vhostuser: no veth; the node's VNF and the switch share a "
                                "vhost-user socket memif: no veth; the DPDK programs at the link's"
                                " two ends share a memif socket",
                 "enum": ["veth", "vhostuser", "memif"]},
    },
}

NODES_SCHEMA = {
    "description": "the nodes by name, each with its role and interfaces (mac, ip, "
                   "mtu, type) or the bridges a vSwitch provides",
    "type": "object",
    "minProperties": 1,
    "propertyNames": {"pattern": "^[A-Za-z][A-Za-z0-9_-]{0,31}$"},
    "additionalProperties": {
        "type": "object",
        "additionalProperties": False,
        "anyOf": [{"required": ["interfaces"]}, {"required": ["bridges"]}],
        "properties": {
            "role": {"type": "string"},
            "bridges": {"type": "array", "minItems": 1, "uniqueItems": True,
                        "items": {"type": "string", "pattern": BRIDGE_NAME}},
            "interfaces": {
                "type": "object",
                "minProperties": 1,
                "propertyNames": {"pattern": "^[A-Za-z][A-Za-z0-9_.-]*$",
                                  "format": "nsb-ifname"},
                "additionalProperties": {"anyOf": [INTERFACE_SCHEMA, {"type": "null"}]},
            },
        },
    },
}

_ENDS = {
    "type": "array", "minItems": 2, "maxItems": 2,
    "items": {"type": "string", "pattern": "^[^:]+:[^:]+$"},
}
LINKS_SCHEMA = {
    "description": "cables between node:interface ends: [a:if, b:if], or "
                   "{ends: [a:if, b:if], via: bridge}; shared: true puts the link on one "
                   "network with the other shared links via its bridge (an end in several "
                   "of them has one switch port)",
    "type": "array",
    "items": {"anyOf": [_ENDS, {
        "type": "object", "required": ["ends", "via"], "additionalProperties": False,
        "properties": {"ends": _ENDS, "via": {"type": "string", "minLength": 1},
                       "shared": {"type": "boolean"}},
    }]},
}


def build_nodes(raw_nodes: dict, default_kind: str = "veth") -> dict[str, Node]:
    """Nodes from their raw entries; an interface without ``type`` is ``default_kind``."""
    nodes = {}
    for name, raw in raw_nodes.items():
        interfaces = {}
        for if_name, if_raw in (raw.get("interfaces") or {}).items():
            if_raw = if_raw or {}
            interfaces[if_name] = Interface(
                name=if_name, mac=(if_raw.get("mac") or stable_mac(name, if_name)).lower(),
                ip=if_raw.get("ip", ""), mtu=if_raw.get("mtu", 1500),
                kind=if_raw.get("type", default_kind))
        nodes[name] = Node(name=name, role=raw.get("role", ""), interfaces=interfaces,
                           bridges=tuple(raw.get("bridges", ())))
    return nodes


def check_macs(nodes: dict[str, Node], where: Where, section: str = "nodes") -> None:
    """A MAC given twice on one node is an error at the second (each port needs its
    own address; a switch would learn one of them only)."""
    errors = []
    for node in nodes.values():
        seen: dict[str, str] = {}
        for iface in node.interfaces.values():
            first = seen.setdefault(iface.mac, iface.name)
            if first != iface.name:
                errors.append(where.error(f"{iface.mac} is also {first}'s MAC on this node; "
                                          "each interface needs its own", section,
                                          node.name, "interfaces", iface.name, "mac"))
    raise_all(errors)


def _is_generator(node: Node) -> bool:
    """A traffic generator's node (role TrafficGen): its ports may be cabled to each
    other (a loopback, for the generator's own floor)."""
    return node.role.lower() in GENERATOR_ROLES


def build_links(raw_links: list, nodes: dict[str, Node], where: Where) -> list[Link]:
    """Parse ``[node:if, node:if]`` pairs and ``{ends: [...], via: bridge}`` links.

    Each interface joins at most one link; a link through a bridge gets a switch
    port per end on the bridge's node: the NIC cabled to the end on a pod's node,
    else a new port named ``<bridge>-<k>a`` / ``<bridge>-<k>b``.
    """
    links = []
    used: dict[Endpoint, int] = {}
    shared_ports: dict[tuple[Endpoint, str], Endpoint] = {}  # (end, via) -> its switch port
    for index, entry in enumerate(raw_links):
        pair, via = (entry["ends"], entry["via"]) if isinstance(entry, dict) else (entry, "")
        shared = isinstance(entry, dict) and entry.get("shared", False)
        at = ("links", index, "ends") if via else ("links", index)
        ends = []
        for side, text in enumerate(pair):
            end = _end(text, nodes, where, at + (side,))
            if end in used and not (shared and (end, via) in shared_ports):
                raise where.error(f"interface '{text}' is already in link {used[end]}"
                                  + (" (an interface is in several links only where all "
                                     "are shared: true via the same bridge)" if shared
                                     else ""), *at, side)
            used.setdefault(end, index)
            ends.append(end)
        if ends[0] == ends[1]:
            raise where.error("a link needs two different interfaces", *at[:2])
        if ends[0].node == ends[1].node and not via and \
                not _is_generator(nodes[ends[0].node]):
            raise where.error(f"both ends are on node {ends[0].node}: a direct link cables "
                              "one node to another (a node's traffic to itself crosses no "
                              "device under test; through a switch, give 'via'; a traffic "
                              "generator's ports may be cabled to each other, to measure "
                              "it without a DUT)", *at[:2])
        if not via:
            links.append(Link(ends[0], ends[1]))
            continue
        host, bridge = _bridge_node(via, nodes, where, ("links", index, "via"))
        ports = []
        for side, end in enumerate(ends):
            if (end, via) in shared_ports:  # the shared network's port of this end
                ports.append(shared_ports[(end, via)])
                continue
            port = _switch_port(nodes, host, bridge, end, index, "ab"[side], where)
            if port in used:
                raise where.error(f"{end} is cabled to {port}, which link {used[port]} "
                                  "uses already", *at, side)
            used[port] = index
            if shared:
                shared_ports[(end, via)] = port
            ports.append(port)
        links.append(Link(ends[0], ends[1], via=bridge, switch_a=ports[0], switch_b=ports[1],
                          shared=shared))
    return links


def _end(text: str, nodes: dict[str, Node], where: Where, at: tuple) -> Endpoint:
    node_name, if_name = text.split(":", 1)
    if node_name not in nodes:
        raise where.error(f"link to undefined node '{node_name}'; nodes: "
                          f"{', '.join(nodes)}", *at)
    if if_name not in nodes[node_name].interfaces:
        raise where.error(f"link to undefined interface '{text}'; {node_name} has: "
                          f"{', '.join(nodes[node_name].interfaces)}", *at)
    return Endpoint(node_name, if_name)


def _switch_port(nodes: dict[str, Node], host: str, bridge: str, end: Endpoint, index: int,
                 side: str, where: Where) -> Endpoint:
    """The port of ``bridge`` on ``host`` that ``end`` (link ``index``) is cabled to."""
    switch = nodes[host]
    cabled = [i.name for i in switch.interfaces.values() if i.cabled_to == end]
    if cabled:
        return Endpoint(host, cabled[0])
    kind = nodes[end.node].interfaces[end.interface].kind  # as the end it cables
    if switch.cabled and kind != "vhostuser":
        nics = ", ".join(f"{i.name} -> {i.cabled_to}" if i.cabled_to else f"{i.name} (no peer)"
                         for i in switch.interfaces.values()) or "none"
        raise where.error(
            f"no NIC of {host} (bridge {bridge}) is cabled to {end}: give the pod's "
            f"{host} interface cabled to it 'peer: {end}' (a vhost-user end needs none); "
            f"{host} has: {nics}", "links", index, "ends", "ab".index(side))
    port = f"{bridge}-{index}{side}"
    while port in switch.interfaces:  # another context's link took the name first
        port += side
    switch.interfaces[port] = Interface(name=port, mac=stable_mac(host, port), kind=kind)
    return Endpoint(host, port)


def _bridge_node(via: str, nodes: dict[str, Node], where: Where,
                 at: tuple) -> tuple[str, str]:
    """(node, bridge) for ``via``: a bridge name, or ``node:bridge`` to be explicit."""
    if ":" in via:
        node, bridge = via.split(":", 1)
        if node in nodes and bridge in nodes[node].bridges:
            return node, bridge
        raise where.error(f"no node '{node}' with bridge '{bridge}'", *at)
    hosts = [n.name for n in nodes.values() if via in n.bridges]
    if len(hosts) != 1:
        known = [f"{n.name}:{b}" for n in nodes.values() for b in n.bridges]
        raise where.error(f"bridge '{via}' is provided by {len(hosts)} nodes (declare it in "
                          f"one node's 'bridges'); known: {', '.join(known) or 'none'}", *at)
    return hosts[0], via


GENERATOR_ROLES = ("trafficgen", "tg")


def assign_memif_sockets(links: list[Link], nodes: dict[str, Node], socket_dir: str,
                         where: Where) -> None:
    """A memif link is one socket file: the end on a traffic generator's node connects
    to it, the other end (or, between two non-generators or two ports of one node, the
    link's first, which a program on that node brings up first) serves it."""
    for index, link in enumerate(links):
        ends = [(end, nodes[end.node].interfaces[end.interface]) for end in (link.a, link.b)]
        memif = [iface.is_memif for _, iface in ends]
        if not any(memif):
            continue
        if not all(memif) or link.via:
            raise where.error("a memif interface links directly to another memif interface "
                              f"(link {link})", "links", index)
        first_is_generator = nodes[link.a.node].role.lower() in GENERATOR_ROLES
        server = 1 if first_is_generator and link.a.node != link.b.node else 0
        for side, (_, iface) in enumerate(ends):
            iface.socket = f"{socket_dir}/{link.a.node}-{link.a.interface}.sock"
            iface.serves_socket = side == server


def assign_addresses(nodes: dict[str, Node], links: list[Link], first: int = 1) -> None:
    """Give each linked interface without an IP 10.<k/256>.<k%256>.1|2/24 for link k,
    counting from ``first`` (another context's links count from further on); a shared
    network is one subnet, its first link's, each further end the next host in it."""
    networks: dict[Endpoint, list[int]] = {}  # a shared end -> [its subnet, next host]
    for index, link in enumerate(links, start=first):
        hub = next((end for end in (link.a, link.b) if end in networks), None) \
            if link.shared else None
        for host, end in ((1, link.a), (2, link.b)):
            iface = nodes[end.node].interfaces[end.interface]
            if hub is not None and end != hub and not iface.ip:
                subnet, networks[hub][1] = networks[hub][0], networks[hub][1] + 1
                host = networks[hub][1] - 1
                iface.ip = f"10.{subnet // 256}.{subnet % 256}.{host}/24"
            elif not iface.ip:
                iface.ip = f"10.{index // 256}.{index % 256}.{host}/24"
        if link.shared and hub is None:
            network = [index, 3]  # one counter for the network, whichever end it is met by
            networks[link.a] = networks[link.b] = network
