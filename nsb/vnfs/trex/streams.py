"""The STL streams of one trial: per direction the data frames (one stream per size
of a mix) at their share of the rate, a field engine for the flows, and a latency
stream (``STLFlowLatencyStats``) that TRex timestamps.

``api`` is TRex's own ``trex.stl.api`` (scapy layers included), loaded from the
TRex install; nothing here imports it.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

from nsb import frames
from nsb.frames import Frame
from nsb.nodes.node import Interface
from nsb.packets import Direction, IpRange, PacketSpec
from nsb.trial import Trial
from nsb.vnfs.trex import vxlan as trex_vxlan

FCS_B = 4
LATENCY_MIN_PAYLOAD_B = 16  # TRex's latency header rides in the payload
DEFAULT_SRC_PORT, DEFAULT_DST_PORT = 1024, 1234
MAX_LATENCY_SHARE = 0.1
# up to this many distinct frames TRex pre-builds them: the field engine then costs
# nothing per frame (with it running per frame TRex sends about a third less)
MAX_CACHED_FRAMES = 10_000  # the latency stream takes at most this share of a direction's rate


@dataclass(frozen=True)
class Path:
    """Frames leave TRex port ``tx`` and come back on ``rx`` after crossing the DUT."""

    tx: int
    rx: int
    tx_iface: Interface
    rx_iface: Interface
    pair: int
    direction: Direction


def default_spec(path: Path, flows: int) -> PacketSpec:
    """UDP from the sending port's address to the receiving port's, ``flows`` source
    addresses counted up from it."""
    src = path.tx_iface.address or f"10.{path.pair}.0.1"
    dst = path.rx_iface.address or f"10.{path.pair}.1.1"
    last = str(ipaddress.ip_address(src) + max(0, flows - 1))
    return PacketSpec(name=f"{path.direction}_{path.pair}", pair=path.pair,
                      direction=path.direction, src_ip=IpRange(src, last),
                      dst_ip=IpRange(dst, dst), flows=flows)


def spec_for(path: Path, trial: Trial, default_flows: int) -> PacketSpec | None:
    """The frames ``path`` sends in ``trial``: the profile's definition for it, or nsb's
    UDP frames when the profile defines none; None when the profile defines other
    directions only (NSB's correlated traffic sends uplinks only)."""
    for spec in trial.packets:
        if spec.pair == path.pair and spec.direction == path.direction:
            return spec
    return None if trial.packets else default_spec(path, trial.flows or default_flows)


def headers(api, spec: PacketSpec, path: Path):
    """Ethernet (+ VLAN/QinQ) / IP / UDP or TCP of ``spec``, empty fields from the ports."""
    src_mac = spec.src_mac or path.tx_iface.mac
    dst_mac = spec.dst_mac or path.tx_iface.peer_mac or path.rx_iface.mac
    packet = api.Ether(src=src_mac, dst=dst_mac)
    for vlan in spec.vlans:  # QinQ as NSB sends it: both tags 0x8100
        packet = packet / api.Dot1Q(vlan=vlan)
    src_ip = spec.src_ip.first if spec.src_ip else path.tx_iface.address or "10.0.0.1"
    dst_ip = spec.dst_ip.first if spec.dst_ip else path.rx_iface.address or "10.0.0.2"
    if spec.ip_version == 6:
        packet = packet / api.IPv6(src=src_ip, dst=dst_ip, hlim=spec.ttl, tc=spec.dscp << 2)
    else:
        packet = packet / api.IP(src=src_ip, dst=dst_ip, ttl=spec.ttl, tos=spec.dscp << 2)
    sport = spec.src_port.first if spec.src_port else DEFAULT_SRC_PORT
    dport = spec.dst_port.first if spec.dst_port else DEFAULT_DST_PORT
    layer = api.TCP if spec.proto == "tcp" else api.UDP
    l4 = layer(sport=sport, dport=dport)
    if layer is api.UDP and spec.ip_version == 4:
        l4.chksum = 0  # valid for UDP over IPv4; TRex need not recompute it per frame
    return trex_vxlan.encapsulated(api, spec, src_mac, packet / l4)


def _count(first: int, last: int, flows: int | None) -> int:
    size = abs(last - first) + 1
    return min(size, flows) if flows else size


def field_engine(api, spec: PacketSpec, base, frame: Frame):
    """Each range of ``spec`` counts up in step (so the flows are the longest range,
    capped at ``spec.flows``); a mix's frames are ``base`` cut to each size of its
    sequence in turn, with the IP and UDP lengths set to match; checksums are fixed
    per frame, or once per distinct frame when few enough to cache. None when
    nothing varies."""
    vm = api.STLVM()
    counts = []
    l3 = trex_vxlan.inner(spec, "IPv6" if spec.ip_version == 6 else "IP")
    for name, ip_range in (("src", spec.src_ip), ("dst", spec.dst_ip)):
        if ip_range is None:
            continue
        first, last = (int(ipaddress.ip_address(a)) & 0xFFFFFFFF
                       for a in (ip_range.first, ip_range.last))
        count = _count(first, last, spec.flows)
        if count > 1:  # an IPv6 range counts in the address's last 32 bits
            vm.var(name=f"ip_{name}", min_value=0, max_value=count - 1, size=4, op="inc")
            vm.write(fv_name=f"ip_{name}", pkt_offset=f"{l3}.{name}",
                     offset_fixup=12 if spec.ip_version == 6 else 0,
                     add_val=_signed32(min(first, last)))
            counts.append(count)
    l4 = trex_vxlan.inner(spec, "TCP" if spec.proto == "tcp" else "UDP")
    for name, port_range in (("sport", spec.src_port), ("dport", spec.dst_port)):
        if port_range is None:
            continue
        count = _count(port_range.first, port_range.last, spec.flows)
        if count > 1:
            vm.var(name=name, min_value=0, max_value=count - 1, size=2, op="inc")
            vm.write(fv_name=name, pkt_offset=f"{l4}.{name}",
                     add_val=min(port_range.first, port_range.last))
            counts.append(count)
    if isinstance(frame, frames.FrameMix):
        _sizes(vm, base, frame, l3, l4)
        counts.append(len(frame.sequence))
    if not counts:
        return None
    if spec.ip_version == 4:
        vm.fix_chksum(offset=l3)
    if spec.ip_version == 6 or spec.proto == "tcp":
        vm.fix_chksum_hw(l3_offset=l3, l4_offset=l4,
                         l4_type=api.CTRexVmInsFixHwCs.L4_TYPE_TCP if l4.startswith("TCP")
                         else api.CTRexVmInsFixHwCs.L4_TYPE_UDP)
    cycle = math.lcm(*counts)
    if cycle <= MAX_CACHED_FRAMES:  # TRex builds each distinct frame once, then replays
        vm.set_cached(cycle)
    return vm


def _signed32(value: int) -> int:
    """TRex takes add_val as a signed 32-bit number; the 4-byte write wraps around."""
    return value - (1 << 32) if value >= 1 << 31 else value


def _sizes(vm, base, frame: frames.FrameMix, l3: str, l4: str) -> None:
    """One stream sends the whole mix, in its order: TRex's memif ports mishandle
    several streams of different sizes on one port (frames counted that were never
    sent), and one stream keeps the mix's sequence as nsb defines it."""
    wire = [size - FCS_B for size in frame.sequence]
    vm.var(name="frame_len", min_value=min(wire), max_value=max(wire), size=2, op="inc",
           value_list=wire)
    vm.trim(fv_name="frame_len")
    l3_at = len(base) - len(base[l3])  # bytes before the IP header
    l4_at = len(base) - len(base[l4])
    length_field = "IPv6.plen" if l3 == "IPv6" else "IP.len"
    vm.write(fv_name="frame_len", pkt_offset=length_field,
             add_val=-(l4_at if l3 == "IPv6" else l3_at))
    if l4 == "UDP":
        vm.write(fv_name="frame_len", pkt_offset="UDP.len", add_val=-l4_at)


def padded(api, base, frame_size: int):
    """``base`` padded to ``frame_size`` bytes on the wire (FCS included)."""
    pad = max(0, frame_size - FCS_B - len(base))
    return base / api.Raw(b"\x00" * pad) if pad else base


def data_streams(api, path: Path, spec: PacketSpec, frame: Frame, pps: float,
                 burst: int | None = None, pg_id: int | None = None) -> list:
    """One continuous stream of ``frame`` (a size, or a whole mix) at ``pps``; with
    ``burst``, exactly that many frames at ``pps`` (TRex's single burst), then none;
    with ``pg_id``, counted apart by TRex's flow statistics."""
    trex_vxlan.check_single_size(spec, spec.name, isinstance(frame, frames.FrameMix))
    base = headers(api, spec, path)
    packet = padded(api, base, frames.largest(frame) + trex_vxlan.overhead(spec))
    vm = field_engine(api, spec, packet, frame)
    builder = api.STLPktBuilder(pkt=packet, vm=vm)
    mode = api.STLTXCont(pps=pps) if burst is None else \
        api.STLTXSingleBurst(total_pkts=burst, pps=pps)
    counted = api.STLFlowStats(pg_id=pg_id) if pg_id is not None else None
    return [api.STLStream(packet=builder, mode=mode, name=spec.name, flow_stats=counted)]


def latency_stream(api, path: Path, spec: PacketSpec, frame: Frame, pps: float, pg_id: int):
    """A single-flow stream TRex timestamps and counts by ``pg_id``."""
    size = frame.most_common if isinstance(frame, frames.FrameMix) else frame
    base = headers(api, spec, path)
    size = max(size, len(base) + FCS_B + LATENCY_MIN_PAYLOAD_B)
    return api.STLStream(packet=api.STLPktBuilder(pkt=padded(api, base, size)),
                         mode=api.STLTXCont(pps=pps), name=f"{spec.name}_latency",
                         flow_stats=api.STLFlowLatencyStats(pg_id=pg_id))


def split_rate(direction_pps: float, latency_pps: float) -> tuple[float, float]:
    """(data pps, latency pps) of one direction: the latency stream is part of the rate
    asked (at most a tenth of it), so a trial offers exactly its rate."""
    latency = min(latency_pps, direction_pps * MAX_LATENCY_SHARE)
    return direction_pps - latency, latency


def path_rate(trial: Trial, path, sending: list) -> float:
    """The rate of one sending ``path``: the trial's spread evenly over the ``sending``
    paths, or its port pair's own rate (``pair_rates_pps``) spread over that pair's."""
    if not trial.pair_rates_pps:
        return trial.rate_pps / len(sending)
    return trial.pair_rate_pps(path.pair) / sum(1 for p in sending if p.pair == path.pair)
