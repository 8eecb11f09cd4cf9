"""TRex as a VXLAN tunnel end point: each frame a trial asks for (the inner frame, at
the trial's size) is sent inside outer Ethernet/IPv4/UDP/VXLAN, 50 B more on the
wire, to a DUT that decapsulates it (OVS-DPDK's userspace tunnelling) and
encapsulates what comes back. TRex counts the outer frames either way.
"""

from __future__ import annotations

import dataclasses

from nsb.errors import RunError
from nsb.packets import (
    VXLAN_DUT_IP,
    VXLAN_DUT_MAC,
    VXLAN_GENERATOR_IP,
    VXLAN_OVERHEAD_B,
    VXLAN_UDP_PORT,
    PacketSpec,
    Vxlan,
)

IPV4 = r"^((25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])$"
MAC = r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$"
OUTER_SRC_PORT = 49152  # the outer UDP source port (RFC 7348: from the dynamic range)

SCHEMA = {
    "description": "send every frame inside VXLAN (outer Ethernet/IPv4/UDP/VXLAN, 50 B more "
                   "than the frame size asked, which is the inner frame's): vni, local_ip (this "
                   f"end point, default {VXLAN_GENERATOR_IP}), remote_ip and remote_mac (the "
                   f"DUT's, default {VXLAN_DUT_IP} and {VXLAN_DUT_MAC}), udp_port",
    "type": "object",
    "additionalProperties": False,
    "required": ["vni"],
    "properties": {
        "vni": {"type": "integer", "minimum": 0, "maximum": 16_777_215},
        "local_ip": {"type": "string", "pattern": IPV4, "default": VXLAN_GENERATOR_IP},
        "remote_ip": {"type": "string", "pattern": IPV4, "default": VXLAN_DUT_IP},
        "remote_mac": {"type": "string", "pattern": MAC, "default": VXLAN_DUT_MAC},
        "udp_port": {"type": "integer", "minimum": 1, "maximum": 65535,
                     "default": VXLAN_UDP_PORT},
    },
}


def from_options(options: dict | None) -> Vxlan | None:
    """The generator's ``vxlan`` option as the tunnel its frames travel in."""
    if not options:
        return None
    return Vxlan(vni=options["vni"], src_ip=options.get("local_ip", VXLAN_GENERATOR_IP),
                 dst_ip=options.get("remote_ip", VXLAN_DUT_IP),
                 dst_mac=options.get("remote_mac", VXLAN_DUT_MAC),
                 udp_port=options.get("udp_port", VXLAN_UDP_PORT))


def tunnelled(spec: PacketSpec | None, vxlan: Vxlan | None) -> PacketSpec | None:
    """``spec`` sent inside ``vxlan`` (a profile's own tunnel wins)."""
    if spec is None or vxlan is None or spec.vxlan is not None:
        return spec
    return dataclasses.replace(spec, vxlan=vxlan)


def overhead(spec: PacketSpec) -> int:
    """Bytes the outer headers add to each frame of ``spec``."""
    return VXLAN_OVERHEAD_B if spec.vxlan else 0


def inner(spec: PacketSpec, layer: str) -> str:
    """The field engine's name of ``layer`` of the inner frame: the second of its kind
    when the frame is tunnelled."""
    return f"{layer}:1" if spec.vxlan else layer


def encapsulated(api, spec: PacketSpec, src_mac: str, frame):
    """``frame`` inside ``spec``'s VXLAN tunnel from the port with ``src_mac``; as it is
    without one. The outer UDP checksum is 0 (allowed for VXLAN over IPv4)."""
    tunnel = spec.vxlan
    if tunnel is None:
        return frame
    return (api.Ether(src=src_mac, dst=tunnel.dst_mac)
            / api.IP(src=tunnel.src_ip, dst=tunnel.dst_ip, ttl=64, flags="DF")
            / api.UDP(sport=OUTER_SRC_PORT, dport=tunnel.udp_port, chksum=0)
            / api.VXLAN(vni=tunnel.vni) / frame)


def check_single_size(spec: PacketSpec, name: str, mixed: bool) -> None:
    """A tunnelled stream has one frame size per trial: the field engine does not resize
    the outer headers."""
    if spec.vxlan and mixed:
        raise RunError(f"{name}: frames inside VXLAN are sent at one size per trial, not as a "
                       "frame mix; give packet_sizes as sizes")


def describe(tunnel: Vxlan) -> dict:
    """The tunnel as the plan shows it, with what it adds to every frame."""
    return {"vni": tunnel.vni, "local_ip": tunnel.src_ip, "remote_ip": tunnel.dst_ip,
            "remote_mac": tunnel.dst_mac, "udp_port": tunnel.udp_port,
            "frame_sizes": f"the sizes asked are the inner frames'; on the wire each is "
                           f"{VXLAN_OVERHEAD_B} B more (64 B inner: "
                           f"{64 + VXLAN_OVERHEAD_B} B outer)"}
