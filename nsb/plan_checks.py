"""Checks of a scenario that need its plugins bound to nodes: a rate above what the
generator's ports carry, frames larger than a link's MTU, a DUT on the generator's
own ports. Each is a located line at plan time (exit 2), all of a scenario at once,
instead of a run that measures nothing meaningful.
"""

from __future__ import annotations

import logging

from nsb import address_checks, frames, session_checks, units, vnf_events
from nsb.errors import TaskError, raise_all
from nsb.task import values

LOG = logging.getLogger(__name__)

ETHERNET_OVERHEAD_B = 18  # header and FCS: a frame of MTU + 18 bytes fits


def check_scenario(scenario, generator, vnfs: list, profile) -> None:
    """Every mistake of one planned scenario, raised together; links between subnets
    (legal, but usually a typo) are warnings."""
    _warn_subnets(generator.context.nodes)
    raise_all([*_rate(generator, profile), *_mtu(generator, profile),
               *_shared_ports(scenario, generator, vnfs),
               *session_checks.problems(scenario, generator, vnfs, profile),
               *vnf_events.problems(scenario, vnfs, profile),
               *address_checks.problems(scenario, generator, vnfs, profile)])


def _rate(generator, profile) -> list[TaskError]:
    """A fixed packet rate above line rate for some frame size cannot be offered."""
    rate = (profile.options or {}).get("rate_pps")
    if not isinstance(rate, (int, float)) or not hasattr(profile, "speed_gbps"):
        return []
    ports, speed = generator.tx_port_count, profile.speed_gbps
    for frame in profile.frame_sizes:
        line = units.line_rate_pps(frame, speed, ports)
        if rate > line * 1.000001:
            return [profile.spec.options_where.error(
                f"{units.pps_text(rate)} (rate_pps, or --rate) is above line rate at "
                f"{frames.shown(frame)}: "
                f"{ports} transmitting port(s) of {speed:g} Gb/s carry at most "
                f"{units.pps_text(line)} (allowed: up to that, or set "
                "interface_speed_gbps to the ports' speed)", "rate_pps")]
    return []


def _mtu(generator, profile) -> list[TaskError]:
    """The largest frame must fit every link the generator sends on (both ends)."""
    largest = max((frames.largest(f) for f in getattr(profile, "frame_sizes", [])),
                  default=0)
    node, nodes = generator.node, generator.context.nodes
    for iface in node.interfaces.values():
        if iface.peer is None:
            continue
        far = nodes.get(iface.peer.node)
        far_iface = far.interfaces.get(iface.peer.interface) if far else None
        mtu = min(iface.mtu, far_iface.mtu if far_iface else iface.mtu)
        if largest - ETHERNET_OVERHEAD_B > mtu:
            return [profile.spec.options_where.error(
                f"frame size {largest} B does not fit the MTU {mtu} of the link "
                f"{node.name}:{iface.name} - {iface.peer} (allowed: at most "
                f"{mtu + ETHERNET_OVERHEAD_B} B, or raise the interfaces' mtu)",
                "packet_sizes")]
    return []


def _shared_ports(scenario, generator, vnfs: list) -> list[TaskError]:
    """A DUT on the generator's node would take the generator's own ports."""
    return [vnf.spec.where.error(
        f"the DUT '{vnf.name}' is on node {vnf.node.name}, the traffic generator's node: "
        "they would share its ports (allowed: a DUT on a node of its own, linked to the "
        "generator's)", "node")
        for vnf in vnfs if vnf.node is generator.node]


_WARNED: set = set()


def _warn_subnets(nodes: dict) -> None:
    """Linked interfaces whose addresses are on different subnets, once per link."""
    for node in nodes.values():
        for iface in node.interfaces.values():
            far = nodes.get(iface.peer.node) if iface.peer else None
            other = far.interfaces.get(iface.peer.interface) if far else None
            if not (other and iface.ip and other.ip) or values.same_subnet(iface.ip, other.ip):
                continue
            key = frozenset([(node.name, iface.name, iface.ip), (far.name, other.name, other.ip)])
            if key not in _WARNED:
                _WARNED.add(key)
                LOG.warning("%s:%s (%s) and its peer %s (%s) are on different subnets: "
                            "traffic between them needs a router", node.name, iface.name,
                            iface.ip, iface.peer, other.ip)
