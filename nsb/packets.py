"""What the frames of one stream carry, when a profile says more than size and flows.

NSB's traffic profiles define each direction's frames (``uplink_0``,
``downlink_0``: MACs, VLAN/QinQ, IP version, addresses and ranges, TTL, DSCP,
L4 ports and how many distinct flows the ranges make). A profile hands them to
the generator in ``Trial.packets``; a generator fills what a spec leaves empty
from its ports (own MAC, peer MAC, port addresses). A leaf module: loading and
profiles build these, generators read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Direction(StrEnum):
    UPLINK = "uplink"  # out of the generator's port 2k, back on 2k+1
    DOWNLINK = "downlink"  # out of port 2k+1, back on 2k


@dataclass(frozen=True)
class IpRange:
    """Addresses ``first`` to ``last`` inclusive (one address: both the same)."""

    first: str
    last: str


@dataclass(frozen=True)
class PortRange:
    """L4 ports ``first`` to ``last`` inclusive."""

    first: int
    last: int


VXLAN_UDP_PORT = 4789  # IANA's
VXLAN_OVERHEAD_B = 50  # outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8 (the inner FCS is not sent)
# the tunnel end points' defaults: the DUT's (its MAC, on OVS's br-phy) and the generator's
VXLAN_DUT_IP, VXLAN_DUT_MAC, VXLAN_GENERATOR_IP = "172.31.255.1", "02:00:00:00:12:b5", \
    "172.31.255.2"


@dataclass(frozen=True)
class Vxlan:
    """The frames travel inside VXLAN (RFC 7348) between two tunnel end points: outer
    Ethernet/IPv4/UDP/VXLAN around each, ``VXLAN_OVERHEAD_B`` more on the wire."""

    vni: int
    src_ip: str = VXLAN_GENERATOR_IP  # the sender's end point
    dst_ip: str = VXLAN_DUT_IP  # the DUT's end point
    dst_mac: str = VXLAN_DUT_MAC  # the DUT's end point's MAC
    udp_port: int = VXLAN_UDP_PORT


@dataclass(frozen=True)
class PacketSpec:
    """The frames one direction of port pair ``pair`` sends (NSB's ``uplink_<pair>``)."""

    name: str  # as the profile names it: "uplink_0"
    pair: int
    direction: Direction
    src_mac: str = ""  # "" = the sending port's own MAC
    dst_mac: str = ""  # "" = the MAC of what the sending port is cabled to
    vlans: tuple[int, ...] = ()  # outer first; two tags are QinQ
    ip_version: int = 4
    proto: str = "udp"  # udp or tcp
    src_ip: IpRange | None = None  # None = the sending port's address
    dst_ip: IpRange | None = None  # None = the receiving port's address
    ttl: int = 32
    dscp: int = 0
    src_port: PortRange | None = None  # None = the generator's default ports
    dst_port: PortRange | None = None
    flows: int | None = None  # distinct flows the ranges make (NSB's ``count``); None: ranges'
    vxlan: Vxlan | None = None  # sent inside VXLAN; the sizes asked are the inner frames'
