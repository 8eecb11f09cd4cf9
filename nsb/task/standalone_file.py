"""NSB's standalone context files as they name nodes: the host file (found where
Yardstick finds it) and each VM of ``servers`` as a pod node (its guest PCI
addresses, MACs, addresses and DPDK port numbers), read while a task loads."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from nsb.nodes.node import stable_mac
from nsb.task import input_file


def server_pod(kind: str, index: int, name: str, server: dict, networks: dict) -> dict:
    """A VM of ``servers`` as NSB's standalone contexts describe it to VNF descriptors:
    per port its guest PCI address (``vpci`` with the slot NSB gives it), MAC, address,
    netmask and DPDK port number."""
    ports = server["network_ports"]
    interfaces = {}
    for position, (port, names) in enumerate(ports.items()):
        if port == "mgmt" or names[0] not in networks:
            continue
        network = networks[names[0]]
        address = ipaddress.ip_interface(network["cidr"])
        slot = index + (network.get("port_num", 0) if kind == "StandaloneOvsDpdk"
                        else position) + 10
        interfaces[port] = {
            "vpci": _with_slot(network["vpci"], slot),
            "local_mac": stable_mac(name, port), "local_ip": str(address.ip),
            "netmask": str(address.netmask), "prefixlen": address.network.prefixlen,
            "dpdk_port_num": len(interfaces),
            "driver": "virtio-pci" if kind == "StandaloneOvsDpdk" else "vf"}
    mgmt = ipaddress.ip_interface(ports["mgmt"]["cidr"])
    return {"name": name, "role": name, "ip": str(mgmt.ip), "netmask": str(mgmt.netmask),
            "interfaces": interfaces}


def host_file(path: str, task_file: Path) -> Path:
    """A context's file (a pod or a host file) as given, next to the task file when
    relative; one that is not there is looked up under the task file's directories
    too, as Yardstick retries it relative to its own tree (NSB's samples name
    /etc/yardstick/nodes/... and etc/yardstick/nodes/...)."""
    given = Path(path)
    first = given if given.is_absolute() else task_file.parent / given
    if first.exists():
        return input_file.resolve(first)
    relative = given.relative_to("/") if given.is_absolute() else given
    for parent in task_file.resolve().parents:
        candidate = parent / relative
        if candidate.is_file():
            return input_file.resolve(candidate)
    return input_file.resolve(first)


def _with_slot(pci: str, slot: int) -> str:
    """``vpci`` with its device (slot) number replaced, as NSB places guest NICs."""
    domain, bus, rest = pci.split(":")
    return f"{domain}:{bus}:{slot:02x}.{rest.split('.')[1]}"
