"""NSB pod files (``nodes:`` with SSH access and NIC details) read unchanged.

A pod describes lab servers: how to reach them and, per interface, the PCI
address, MAC, IP and DPDK port number. nsb's own keys say what a switch node
offers: ``bridges`` a vSwitch on it provides, and per interface the ``peer`` its
cable goes to (``node:interface`` of the pod; written at either end or both), so
that a task link ``via`` a bridge takes the switch's NIC cabled to each of its
ends. The baremetal context uses all of it;
the embedded lab can take the same pod and build its namespaces with the
pod's MACs and IPs, so a lab task can be tried on one machine first.
"""

from __future__ import annotations

import copy
import ipaddress
from dataclasses import replace
from pathlib import Path

from nsb.errors import raise_all
from nsb.nodes.node import (
    BINDABLE_DRIVERS,
    BRIDGE_NAME,
    DPDK_DRIVERS,
    Endpoint,
    Interface,
    Node,
    SshAccess,
)
from nsb.task import input_file, pod_checks, schema
from nsb.task.documents import Where, read_document
from nsb.task.yaml_lines import LocatedDocument, format_path

_INTERFACE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "vpci": {"type": "string"},
        "local_mac": {"type": "string"},  # a unicast MAC, checked by pod_checks
        "driver": {"type": "string"},
        # nsb: may bind the NIC to this driver for a run (given back afterwards)
        "dpdk_driver": {"enum": list(BINDABLE_DRIVERS)},
        "local_ip": {"type": "string"},  # IPv4 or IPv6, checked by pod_checks
        "netmask": {"type": ["string", "integer"]},
        "dpdk_port_num": {"type": "integer", "minimum": 0},
        # nsb: the interface at the other end of this NIC's cable, node:interface
        "peer": {"type": "string", "minLength": 1},
        # NSB's, read by NSB's own VNFs or written by its contexts; nsb reads none
        **{key: {} for key in ("dst_mac", "dst_ip", "vld_id", "ifname", "ifindex",
                               "local_iface_name", "bandwidth", "speed", "numa_node")},
    },
}

_ROUTES = {
    "type": "array",
    "items": {"type": "object", "required": ["network", "netmask", "gateway", "if"]},
}

POD_SCHEMA = {
    "type": "object",
    "required": ["nodes"],
    "properties": {
        "nodes": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9_-]{0,31}$"},
                    "role": {"type": "string"},
                    "ip": {"type": "string", "minLength": 1},
                    "user": {"type": "string"},
                    "password": {"type": "string"},
                    "key_filename": {"type": "string"},
                    "host": {"type": "string"},  # NSB's standalone compute host
                    "ssh_port": {"type": ["string", "integer"], "pattern": "^[0-9]+$"},
                    "dpdk_driver": {"enum": list(BINDABLE_DRIVERS)},
                    # nsb: bridges a vSwitch on this node provides for links via them
                    "bridges": {"type": "array", "uniqueItems": True,
                                "items": {"type": "string", "pattern": BRIDGE_NAME}},
                    "interfaces": {
                        "type": "object",
                        # length: pod_checks (Linux's 15 characters, one line per name)
                        "propertyNames": {"pattern": "^[A-Za-z][A-Za-z0-9_.-]*$"},
                        "additionalProperties": _INTERFACE,
                    },
                    "routing_table": _ROUTES,
                    "nd_route_tbl": _ROUTES,
                },
            },
        },
    },
}


def load_pod(path: Path, where: Where | None = None) -> dict[str, Node]:
    """Nodes of the pod at ``path``; errors point into the pod file.

    A missing pod is reported at ``where`` (the task key naming it) when given.
    """
    doc = _pod_document(Path(path), replace(where, path=where.path + ("file",))
                        if where is not None else None)
    nodes: dict[str, Node] = {}
    for index, raw in enumerate(doc.data["nodes"]):
        name = raw["name"]
        if name in nodes:
            raise doc.error(("nodes", index, "name"), f"duplicate node name {name!r}")
        interfaces = {}
        for if_name, if_raw in (raw.get("interfaces") or {}).items():
            interfaces[if_name] = Interface(
                name=if_name, mac=(if_raw.get("local_mac") or "").lower(),
                ip=_with_prefix(if_raw, doc, ("nodes", index, "interfaces", if_name)),
                pci=if_raw.get("vpci", ""), driver=if_raw.get("driver", ""),
                dpdk_driver=_dpdk_driver(if_raw, raw), dpdk_port=if_raw.get("dpdk_port_num"))
        ssh = None
        if raw.get("ip"):
            key = raw.get("key_filename")
            if key:
                key = _key_path(path, key, doc, ("nodes", index, "key_filename"))
            port = int(raw.get("ssh_port", 22))
            if not 0 < port < 65536:
                raise doc.error(("nodes", index, "ssh_port"), f"{port} is not a TCP port "
                                "(1-65535)")
            ssh = SshAccess(host=raw["ip"], user=raw.get("user", "root"),
                            port=port, password=raw.get("password"),
                            key_filename=key)
        nodes[name] = Node(name=name, role=raw.get("role", ""), interfaces=interfaces,
                           ssh=ssh, bridges=tuple(raw.get("bridges") or ()), cabled=True,
                           pod=copy.deepcopy(raw))
    _cable(nodes, doc)
    return nodes


def _cable(nodes: dict[str, Node], doc: LocatedDocument) -> None:
    """Every interface's ``peer`` as a cable, known at both of its ends; an interface
    has one cable (two ``peer`` naming the same end, or disagreeing ends, are an error)."""
    cables: dict[Endpoint, tuple[Endpoint, tuple]] = {}  # end -> (other end, declared at)
    for index, raw in enumerate(doc.data["nodes"]):
        for if_name, if_raw in (raw.get("interfaces") or {}).items():
            if not if_raw.get("peer"):
                continue
            at = ("nodes", index, "interfaces", if_name, "peer")
            here = Endpoint(raw["name"], if_name)
            there = _peer_end(if_raw["peer"], here, nodes, doc, at)
            for end, other in ((here, there), (there, here)):
                known = cables.get(end)
                if known and known[0] != other:
                    raise doc.error(at, f"{end} is cabled to {known[0]} already (line "
                                    f"{doc.line_of(known[1])}, {format_path(known[1])}); an "
                                    "interface has one cable: name each far end in one 'peer'")
                cables[end] = (other, at)
    for end, (other, _) in cables.items():
        nodes[end.node].interfaces[end.interface].cabled_to = other


def _peer_end(text: str, here: Endpoint, nodes: dict[str, Node], doc, at: tuple) -> Endpoint:
    node, _, interface = text.partition(":")
    if not (node and interface) or ":" in interface:
        raise doc.error(at, f"{text!r} is not node:interface (the interface of the pod this "
                        "NIC is cabled to, e.g. trafficgen_1:xe0)")
    if node not in nodes:
        raise doc.error(at, f"no node {node!r} in the pod; nodes: {', '.join(nodes)}")
    if interface not in nodes[node].interfaces:
        raise doc.error(at, f"node {node} has no interface {interface!r}; it has: "
                        f"{', '.join(nodes[node].interfaces) or 'none'}")
    if Endpoint(node, interface) == here:
        raise doc.error(at, f"{here} is cabled to itself; name the interface at the other "
                        "end of its cable")
    if node == here.node:
        raise doc.error(at, f"{here} is cabled to {text}, on its own node: a cable goes to "
                        "another node of the pod (name the far end's node:interface)")
    return Endpoint(node, interface)


def _dpdk_driver(if_raw: dict, node_raw: dict) -> str:
    """The driver nsb may bind the NIC to: the interface's or the node's ``dpdk_driver``,
    else the pod's ``driver`` when that names a DPDK driver (the NIC is meant to be on
    it); '' when the pod gives no permission to rebind."""
    asked = if_raw.get("dpdk_driver") or node_raw.get("dpdk_driver")
    if asked:
        return asked
    driver = if_raw.get("driver", "")
    return driver if driver in DPDK_DRIVERS and driver in BINDABLE_DRIVERS else ""


# pods read and checked, by (path, mtime, size): a task's pod is read once, when the
# task loads, and its context builds its nodes from the same document
_READ: dict[tuple, LocatedDocument] = {}


def _pod_document(path: Path, where: Where | None) -> LocatedDocument:
    try:
        stat = path.stat()
    except OSError:  # read_document says why, at ``where``
        return read_document(path, where=where, what="pod file")
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _READ:
        doc = read_document(path, where=where, what="pod file")
        found = schema.violations(doc.data, POD_SCHEMA, doc)
        raise_all(found or pod_checks.problems(doc))  # values once the form holds
        _READ[key] = doc
    return _READ[key]


def _key_path(pod_path: Path, key: str, doc, at: tuple) -> str:
    input_file.check_path_text(key, lambda message: doc.error(at, message))
    try:
        expanded = Path(key).expanduser()
    except RuntimeError:  # ~user of a user this machine does not have
        raise doc.error(at, f"cannot expand {key.split('/')[0]!r}: no such user on this "
                        "machine") from None
    return str(input_file.resolve(pod_path.parent / expanded))


def _with_prefix(if_raw: dict, doc, path: tuple) -> str:
    """``local_ip`` + ``netmask`` as address/prefix (the form the rest of nsb uses)."""
    address = if_raw.get("local_ip")
    if not address:
        return ""
    if ipaddress.ip_address(address).version == 6:  # checked by pod_checks
        return f"{address}/{if_raw.get('netmask', 64)}"
    netmask = if_raw.get("netmask", "255.255.255.0")
    try:
        network = ipaddress.IPv4Network(f"0.0.0.0/{netmask}")
    except ValueError:
        raise doc.error(path + ("netmask",), f"{netmask!r} is not an IPv4 netmask") from None
    return f"{address}/{network.prefixlen}"
