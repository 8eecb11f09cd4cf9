"""OVS-DPDK as a VXLAN tunnel end point (OVS's userspace tunnelling; Intel ONP's
PHY-OVS-VM-OVS-PHY overlay, VSPerf's op2p).

The switch's ports facing the generator go on a second bridge, ``br-phy``, whose own
(LOCAL) port carries the tunnel end point's address and MAC. Frames from the
generator are sent to LOCAL, where OVS strips VXLAN; the inner frames come out of
the ``vxlan0`` port of the main bridge, which forwards them to the VM's port. What
the VM sends back goes into ``vxlan0``: OVS adds the outer headers (route and
neighbour set with ovs-appctl, nothing learnt) and sends the result out of
br-phy's LOCAL port towards the generator.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from nsb.contexts.topology import GENERATOR_ROLES
from nsb.packets import (
    VXLAN_DUT_IP,
    VXLAN_DUT_MAC,
    VXLAN_GENERATOR_IP,
    VXLAN_OVERHEAD_B,
    VXLAN_UDP_PORT,
)

PORT = "vxlan0"
MAC = r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$"
IPV4 = r"((25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])"

SCHEMA = {
    "description": "terminate VXLAN on the switch (userspace tunnelling): vni, local_ip (this "
                   f"end point, address/prefix on phy_bridge, default {VXLAN_DUT_IP}/24), "
                   f"local_mac (default {VXLAN_DUT_MAC}), remote_ip (the generator's, default "
                   f"{VXLAN_GENERATOR_IP}), remote_mac (default: the MAC of the generator's "
                   "port the frames go back to), phy_bridge (default br-phy), udp_port",
    "type": "object",
    "additionalProperties": False,
    "required": ["vni"],
    "properties": {
        "vni": {"type": "integer", "minimum": 0, "maximum": 16_777_215},
        "local_ip": {"type": "string", "pattern": f"^{IPV4}/([0-9]|[12][0-9]|3[0-2])$",
                     "default": f"{VXLAN_DUT_IP}/24"},
        "local_mac": {"type": "string", "pattern": MAC, "default": VXLAN_DUT_MAC},
        "remote_ip": {"type": "string", "pattern": f"^{IPV4}$", "default": VXLAN_GENERATOR_IP},
        "remote_mac": {"type": "string", "pattern": MAC},
        "phy_bridge": {"type": "string", "minLength": 1, "default": "br-phy"},
        "udp_port": {"type": "integer", "minimum": 1, "maximum": 65535,
                     "default": VXLAN_UDP_PORT},
    },
}


@dataclass(frozen=True)
class Overlay:
    """The tunnel and which switch port plays which part."""

    vni: int
    local_ip: str  # address/prefix
    local_mac: str
    remote_ip: str
    remote_mac: str
    phy_bridge: str
    udp_port: int
    phy_in: str  # the generator's frames (encapsulated) come in here
    phy_out: str  # and leave here, re-encapsulated
    vm_in: str  # the inner frames go to the VM here
    vm_out: str  # and come back from it here

    @property
    def phy_ports(self) -> tuple[str, str]:
        return self.phy_in, self.phy_out


def overlay(options: dict, links, nodes, where) -> Overlay:
    """The overlay of the ``vxlan`` option over ``links``: one link from a generator to
    the VM, one back (``where`` locates what is wrong)."""
    def is_generator(end) -> bool:
        return nodes[end.node].role.lower() in GENERATOR_ROLES

    into = [link for link in links if is_generator(link.a) and not is_generator(link.b)]
    back = [link for link in links if is_generator(link.b) and not is_generator(link.a)]
    if len(into) != 1 or len(back) != 1 or len(links) != 2:
        raise where.error(f"{len(links)} links go via the bridge ({len(into)} from a generator "
                          f"node, {len(back)} to one): a VXLAN overlay needs exactly one from "
                          "the generator (role TrafficGen) to the VM and one back", "vxlan")
    remote_mac = options.get("remote_mac") or nodes[back[0].b.node].interfaces[
        back[0].b.interface].mac
    if not remote_mac:
        raise where.error(f"{back[0].b} has no MAC: give the generator's as remote_mac",
                          "vxlan")
    local_ip = options.get("local_ip", f"{VXLAN_DUT_IP}/24")
    remote_ip = options.get("remote_ip", VXLAN_GENERATOR_IP)
    if ipaddress.ip_address(remote_ip) not in ipaddress.ip_interface(local_ip).network:
        raise where.error(f"remote_ip {remote_ip} is not in local_ip {local_ip}'s network: the "
                          "generator's end point must be on the tunnel's subnet", "vxlan")
    return Overlay(vni=options["vni"], local_ip=local_ip,
                   local_mac=options.get("local_mac", VXLAN_DUT_MAC), remote_ip=remote_ip,
                   remote_mac=remote_mac, phy_bridge=options.get("phy_bridge", "br-phy"),
                   udp_port=options.get("udp_port", VXLAN_UDP_PORT),
                   phy_in=into[0].switch_a.interface, vm_in=into[0].switch_b.interface,
                   vm_out=back[0].switch_a.interface, phy_out=back[0].switch_b.interface)


def bridge_commands(tunnel: Overlay, datapath: str) -> list[list[str]]:
    """The ovs-vsctl commands making br-phy with the end point's MAC (the address is
    set once its LOCAL port exists)."""
    return [["add-br", tunnel.phy_bridge],
            ["set", "bridge", tunnel.phy_bridge, f"datapath_type={datapath}",
             "fail_mode=secure", f"other_config:hwaddr={tunnel.local_mac}"]]


def port_commands(tunnel: Overlay, bridge: str) -> list[list[str]]:
    """The ovs-vsctl commands adding the VXLAN port to the main ``bridge``."""
    options = {"remote_ip": tunnel.remote_ip, "local_ip": tunnel.local_ip.split("/")[0],
               "key": tunnel.vni, "dst_port": tunnel.udp_port}
    return [["add-port", bridge, PORT],
            ["set", "Interface", PORT, "type=vxlan",
             *[f"options:{key}={value}" for key, value in options.items()]]]


def bridge_of(tunnel: Overlay | None, port: str, bridge: str) -> str:
    return tunnel.phy_bridge if tunnel and port in tunnel.phy_ports else bridge


def address_commands(tunnel: Overlay) -> list[list[str]]:
    """The end point's address on br-phy's LOCAL port (a tap in the switch's network
    namespace, gone with the bridge), then its route and the generator's MAC in OVS's
    own tables (ovs-appctl), so nothing is learnt during a trial."""
    return [["ip", "addr", "add", tunnel.local_ip, "dev", tunnel.phy_bridge],
            ["ip", "link", "set", tunnel.phy_bridge, "up"]]


def appctl_commands(tunnel: Overlay) -> list[list[str]]:
    network = ipaddress.ip_interface(tunnel.local_ip).network
    return [["ovs/route/add", str(network), tunnel.phy_bridge],
            ["tnl/arp/set", tunnel.phy_bridge, tunnel.remote_ip, tunnel.remote_mac]]


def flows(tunnel: Overlay) -> dict[str, list[str]]:
    """Per bridge its OpenFlow rules: br-phy hands the generator's VXLAN frames to
    LOCAL (decapsulation) and LOCAL's VXLAN frames to the generator; the main bridge
    joins the tunnel and the VM's ports."""
    vxlan = f"udp,tp_dst={tunnel.udp_port}"  # not the tap's own chatter (IPv6 ND...)
    return {tunnel.phy_bridge: [f"priority=100,in_port={tunnel.phy_in},{vxlan},actions=LOCAL",
                                f"priority=100,in_port=LOCAL,{vxlan},"
                                f"actions=output:{tunnel.phy_out}"],
            "": [f"priority=100,in_port={PORT},actions=output:{tunnel.vm_in}",
                 f"priority=100,in_port={tunnel.vm_out},actions=output:{PORT}"]}


def describe(tunnel: Overlay) -> dict:
    return {"vni": tunnel.vni, "local_ip": tunnel.local_ip, "local_mac": tunnel.local_mac,
            "remote_ip": tunnel.remote_ip, "remote_mac": tunnel.remote_mac,
            "phy_bridge": tunnel.phy_bridge, "decapsulated": f"{tunnel.phy_in} -> {tunnel.vm_in}",
            "encapsulated": f"{tunnel.vm_out} -> {tunnel.phy_out}",
            "ovs_appctl": [" ".join(c) for c in appctl_commands(tunnel)],
            "ip": [" ".join(c) for c in address_commands(tunnel)]}


def frame_sizes(frame_size) -> dict:
    """The result's inner and outer frame sizes (one size; a mix has no single one)."""
    if not isinstance(frame_size, int):
        return {}
    return {"inner_frame_size": frame_size, "outer_frame_size": frame_size + VXLAN_OVERHEAD_B}
