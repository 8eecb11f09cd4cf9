"""A chain template laid out in NSB's StandaloneOvsDpdk context: chain k is one VM
(``servers``) whose two NICs are on networks of their own (``uplink_k``,
``downlink_k``), each the host NIC the generator's port of that chain is cabled to
(the template's ``phy_ports``, two per chain in order), as NSB's multi-VM standalone
tasks write them out by hand. NSB's standalone networks always end at a host NIC, so
a chain here has one NF (PVP); the VM's size is the context's ``flavor``.
"""

from __future__ import annotations

import ipaddress

from nsb.task.documents import Where

TYPES = ("StandaloneOvsDpdk",)
DEFAULT_MGMT = "10.253.7.5/24"
NODE_KEYS = ("mgmt_cidr",)  # what an NF's ``node`` may give a VM here


def check(template: dict, deployed: int, where: Where) -> None:
    """What a template must say for this context, before anything is laid out."""
    if len(template["nfs"]) != 1:
        raise where.error(f"a StandaloneOvsDpdk chain is one VM (PVP), not "
                          f"{len(template['nfs'])} NFs: NSB's standalone networks each end "
                          "at a host NIC", "nfs")
    if "cores" in template:
        raise where.error("a VM's NF runs on the guest's CPUs: leave cores out (the "
                          "context's flavor sizes the VMs)", "cores")
    ports = template.get("phy_ports")
    if not ports or len(ports) < 2 * deployed:
        raise where.error(f"{deployed} chain(s) need {2 * deployed} phy_ports (the host NICs "
                          f"cabled to the generator, two per chain in order); the template "
                          f"gives {len(ports or [])}", *(("phy_ports",) if ports else ()))
    node = template["nfs"][0].get("node", {})
    extra = sorted(set(node) - set(NODE_KEYS))
    if extra:
        raise where.error(f"a StandaloneOvsDpdk VM takes only {', '.join(NODE_KEYS)} from its "
                          f"node keys, not {', '.join(extra)}", "nfs", 0, "node")
    try:
        mgmt = first_mgmt(template)
        last = mgmt.ip + (deployed - 1)
    except ValueError as e:
        raise where.error(f"not an address/prefix: {e}", "nfs", 0, "node", "mgmt_cidr") from e
    if last not in mgmt.network or last == mgmt.network.broadcast_address:
        raise where.error(f"{deployed} VMs from {mgmt} need addresses up to {last}, beyond "
                          f"{mgmt.network}", "nfs", 0, "node", "mgmt_cidr")


def first_mgmt(template: dict) -> ipaddress.IPv4Interface | ipaddress.IPv6Interface:
    """Chain 0's VM management address and prefix; chain k's is k addresses on."""
    node = template["nfs"][0].get("node", {})
    return ipaddress.ip_interface(str(node.get("mgmt_cidr", DEFAULT_MGMT)))


def lay_out(context: dict, template: dict, gen_node: str, k: int, where: Where) -> list[str]:
    """Chain ``k``'s server, its two networks and the links to the generator's ports
    xe{2k} and xe{2k+1}; returns the names nsb added (for the template's line)."""
    nf = template["nfs"][0]
    name = f"{nf['name']}{k}"
    servers = context.setdefault("servers", {})
    networks = context.setdefault("networks", {})
    up, down = f"uplink_{k}", f"downlink_{k}"
    for taken, kind in ((name, "server"), (up, "network"), (down, "network")):
        if taken in (servers if kind == "server" else networks):
            raise where.error(f"{kind} {taken!r} (chain {k}'s) is declared already: the "
                              "template lays out chain k's VM and networks itself")
    mgmt = first_mgmt(template)
    address = f"{mgmt.ip + k}/{mgmt.network.prefixlen}"
    servers[name] = {"network_ports": {"mgmt": {"cidr": address}, "xe0": [up], "xe1": [down]}}
    ports = template["phy_ports"]
    networks[up] = {"port_num": 2 * k, "phy_port": ports[2 * k], "vpci": "0000:00:07.0",
                    "cidr": f"152.16.{100 + k}.10/24", "gateway_ip": f"152.16.{100 + k}.20"}
    networks[down] = {"port_num": 2 * k + 1, "phy_port": ports[2 * k + 1],
                      "vpci": "0000:00:08.0", "cidr": f"152.17.{40 + k}.10/24",
                      "gateway_ip": f"152.17.{40 + k}.20"}
    links = context.setdefault("links", [])
    links += [[f"{gen_node}:xe{2 * k}", f"{name}:xe0"],
              [f"{name}:xe1", f"{gen_node}:xe{2 * k + 1}"]]
    return [name, up, down]
