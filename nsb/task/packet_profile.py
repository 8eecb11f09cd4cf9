"""NSB's packet definitions read into what nsb's generators send.

An NSB TRex traffic profile file defines, besides its ``traffic_profile``
section, the frames of each direction of each port pair: ``uplink_0``,
``downlink_0``, ``uplink_1``... each with one block (``ipv4:``/``ipv6:``) of
``outer_l2`` (``framesize`` weights, ``srcmac``, ``dstmac``, ``QinQ``),
``outer_l3v4``/``outer_l3v6`` (``proto``, addresses as ranges, ``count``, TTL,
DSCP) and ``outer_l4`` (port ranges, ``count``). NSB builds TRex streams from
them (``trex_traffic_profile.py``, ``rfc2544.py``); nsb reads them into
``PacketSpec`` values once, at load, so that a bad value is one located line
before anything runs, and every trial carries them to the generator.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from nsb.frames import Frame
from nsb.packets import Direction, IpRange, PacketSpec, PortRange
from nsb.task import framesize_mix, packet_fields
from nsb.task.documents import Where

# traffic_type of the profile files whose uplink_N/downlink_N nsb reads
PACKET_PROFILE_TYPES = ("RFC2544Profile", "FixedProfile")
DEFINITION = re.compile(r"^(uplink|downlink)_([0-9]+)$")
PROTOCOLS = ("udp", "tcp")
SCAPY_TTL = 64  # what NSB's frames carry without a ttl (scapy's IP/IPv6 default)
_BLOCK = ("id", "outer_l2", "outer_l3v4", "outer_l3v6", "outer_l4")
_SEEDS = ("seed", "srcseed", "dstseed")  # NSB's TRex profiles use their own seed
_KEYS = {
    "outer_l2": ("framesize", "srcmac", "dstmac", "QinQ"),
    "outer_l3v4": ("proto", "srcip4", "dstip4", "count", "ttl", "dscp", *_SEEDS),
    "outer_l3v6": ("proto", "srcip6", "dstip6", "count", "ttl", "hlim", "tc", *_SEEDS),
    "outer_l4": ("srcport", "dstport", "count", *_SEEDS),
}
_VLAN = ("id", "priority", "cfi")  # NSB sets the id only


@dataclass(frozen=True)
class PacketProfile:
    """The frames of every direction and the one frame size (or mix) they share."""

    packets: tuple[PacketSpec, ...]
    frame: Frame
    weights: dict[int, float]  # NSB's weights of that mix, normalised to 100 (%)
    sizes: dict[Direction, frozenset[int]]  # per direction the sizes framesize lists


def definitions(data: Mapping) -> dict[str, object]:
    """The ``uplink_N``/``downlink_N`` entries of a profile, in file order."""
    return {key: value for key, value in data.items()
            if isinstance(key, str) and DEFINITION.match(key)}


def read(data: Mapping, where: Where) -> PacketProfile:
    """The packet definitions in ``data`` (which sits at ``where``)."""
    packets, sizes = [], {}
    mix: tuple[str, dict[int, float]] | None = None
    for name, raw in definitions(data).items():
        spec, weights = _definition(name, raw, _at(where, name))
        packets.append(spec)
        if weights is None:
            continue
        sizes.setdefault(spec.direction, set()).update(weights)
        shares = framesize_mix.normalized(weights)
        if mix is not None and not _same(mix[1], shares):
            raise _framesize_at(where, name, raw).error(
                f"not supported yet: frame sizes that differ from {mix[0]}'s "
                f"({_shown(mix[1])} here {_shown(shares)}); nsb sends one mix on every port")
        mix = mix or (name, shares)
    weights = mix[1] if mix else dict(framesize_mix.DEFAULT)
    return PacketProfile(tuple(packets), framesize_mix.frame_of(weights), weights,
                         {d: frozenset(s) for d, s in sizes.items()})


def _at(where: Where, *keys) -> Where:
    return Where(where.doc, where.path + keys)


def _same(a: dict[int, float], b: dict[int, float]) -> bool:
    return a.keys() == b.keys() and all(math.isclose(a[k], b[k]) for k in a)


def _shown(shares: dict[int, float]) -> str:
    return ", ".join(f"{size}B: {share:g}" for size, share in shares.items())


def _framesize_at(where: Where, name: str, raw) -> Where:
    block = next(iter(raw))
    return _at(where, name, block, "outer_l2", "framesize")


def _definition(name: str, raw: object, where: Where
                ) -> tuple[PacketSpec, dict[int, int] | None]:
    """One ``uplink_N`` entry: its one block as a PacketSpec, and its framesize weights."""
    match = DEFINITION.match(name)
    assert match is not None
    if not isinstance(raw, Mapping) or len(raw) != 1:
        shown = ", ".join(map(str, raw)) if isinstance(raw, Mapping) else type(raw).__name__
        raise where.error(f"expected one packet block (e.g. ipv4: {{outer_l2: ..., "
                          f"outer_l3v4: ..., outer_l4: ...}}), got {shown or 'none'}")
    block_name, block = next(iter(raw.items()))
    at = _at(where, block_name)
    if not isinstance(block, Mapping):
        raise at.error(f"expected a mapping of {', '.join(_BLOCK)}, got "
                       f"{type(block).__name__}")
    _known(block, _BLOCK, at)
    if "outer_l3v4" in block and "outer_l3v6" in block:
        raise at.error("a packet is IPv4 or IPv6: give outer_l3v4 or outer_l3v6, not both",
                       "outer_l3v6")
    fields, weights = _l2(_section(block, "outer_l2", at), _at(at, "outer_l2"))
    version = 6 if "outer_l3v6" in block else 4
    l3_key = f"outer_l3v{version}"
    l3_fields, l3_count = _l3(_section(block, l3_key, at), _at(at, l3_key), version)
    l4_fields, l4_count = _l4(_section(block, "outer_l4", at), _at(at, "outer_l4"))
    fields.update(l3_fields)
    fields.update(l4_fields)
    flows = _flows(fields, l3_count, l4_count, at)
    spec = PacketSpec(name=name, pair=int(match.group(2)), direction=Direction(match.group(1)),
                      ip_version=version, flows=flows, **fields)
    return spec, weights


def _section(block: Mapping, key: str, at: Where) -> Mapping:
    value = block.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise at.error(f"expected a mapping, got {type(value).__name__}", key)
    _known(value, _KEYS[key], _at(at, key))
    return value


def _known(section: Mapping, allowed: tuple[str, ...], at: Where) -> None:
    """Keys nsb cannot honour are one located line, not silently ignored."""
    for key in section:
        if key not in allowed:
            unused = [k for k in allowed if k not in section]  # a typo is of a key not given
            hint = difflib.get_close_matches(str(key), unused, n=1)
            did = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise at.error(f"unknown key '{key}'{did}; allowed: {', '.join(allowed)}", key)


def _field(at: Where, key: str, parse, value):
    """``parse(value)``; its ValueError as a located line at ``key``."""
    try:
        return parse(value)
    except ValueError as exc:
        raise at.error(str(exc), key) from None


def _l2(section: Mapping, at: Where) -> tuple[dict, dict[int, int] | None]:
    fields: dict = {}
    for key, name in (("srcmac", "src_mac"), ("dstmac", "dst_mac")):
        if section.get(key) is not None:
            fields[name] = _field(at, key, packet_fields.mac, section[key])
    if section.get("QinQ") is not None:
        fields["vlans"] = _qinq(section["QinQ"], _at(at, "QinQ"))
    weights = None
    if section.get("framesize") is not None:
        framesize_at = _at(at, "framesize")
        weights = framesize_mix.parse_weights(section["framesize"], framesize_at.error)
    return fields, weights


def _qinq(raw: object, at: Where) -> tuple[int, int]:
    """NSB's ``QinQ: {S-VLAN: {id: 128}, C-VLAN: {id: 512}}``: outer tag first. NSB
    picks a random id of an ``"a-b"`` range once; nsb takes its first."""
    if not isinstance(raw, Mapping) or set(raw) != {"S-VLAN", "C-VLAN"}:
        raise at.error("expected QinQ: {S-VLAN: {id: ...}, C-VLAN: {id: ...}}")
    tags = []
    for tag in ("S-VLAN", "C-VLAN"):
        value = raw[tag]
        if not isinstance(value, Mapping) or "id" not in value:
            raise at.error("expected a mapping with the VLAN 'id'", tag)
        _known(value, _VLAN, _at(at, tag))
        first = str(value["id"]).split("-")[0]
        tags.append(_field(_at(at, tag), "id",
                           lambda v: packet_fields.single_int(v, 0, 4095, "a VLAN id"), first))
    return tags[0], tags[1]


def _l3(section: Mapping, at: Where, version: int) -> tuple[dict, int | None]:
    fields: dict = {}
    proto = section.get("proto", "udp")
    if proto not in PROTOCOLS:
        raise at.error(f"not supported yet: protocol {proto!r}; nsb sends "
                       f"{' or '.join(PROTOCOLS)}", "proto")
    fields["proto"] = proto
    for key, name in ((f"srcip{version}", "src_ip"), (f"dstip{version}", "dst_ip")):
        if section.get(key) is not None:
            fields[name] = _field(at, key, lambda v: packet_fields.ip_range(v, version),
                                  section[key])
    ttl_key = "hlim" if "hlim" in section else "ttl"
    fields["ttl"] = _field(at, ttl_key, lambda v: packet_fields.single_int(v, 0, 255, "a TTL"),
                           section.get(ttl_key, SCAPY_TTL))
    tos_key = "dscp" if version == 4 else "tc"
    if section.get(tos_key) is not None:
        fields["dscp"] = _field(at, tos_key, _dscp_of_tos, section[tos_key])
    count = section.get("count")
    return fields, None if count is None else _field(at, "count", packet_fields.count, count)


def _dscp_of_tos(value: object) -> int:
    """NSB writes ``dscp`` (IPv4) and ``tc`` (IPv6) into the whole traffic-class byte
    (scapy's ``IP.tos``): its DSCP is the upper six bits."""
    tos = packet_fields.single_int(value, 0, 255, "a ToS byte")
    if tos & 3:
        raise ValueError(f"{tos} sets ECN bits (NSB writes the value into the ToS byte); "
                         "not supported yet: give a multiple of 4 (DSCP x 4)")
    return tos >> 2


def _l4(section: Mapping, at: Where) -> tuple[dict, int | None]:
    fields: dict = {}
    for key, name in (("srcport", "src_port"), ("dstport", "dst_port")):
        if section.get(key) is not None:
            fields[name] = _field(at, key, packet_fields.port_range, section[key])
    count = section.get("count")
    return fields, None if count is None else _field(at, "count", packet_fields.count, count)


def _flows(fields: dict, l3_count: int | None, l4_count: int | None, at: Where) -> int | None:
    """NSB's ``count``: each range makes at most that many values (fewer when the range
    is narrower), so the flows are the count up to the widest range; no range is one."""
    if l3_count is not None and l4_count is not None and l3_count != l4_count:
        raise at.error(f"not supported yet: outer_l4 count {l4_count} differs from the IP "
                       f"count {l3_count} (nsb makes one set of flows per direction)",
                       "outer_l4", "count")
    ranges = [value for value in (fields.get(k) for k in ("src_ip", "dst_ip", "src_port",
                                                             "dst_port"))
              if isinstance(value, (IpRange, PortRange)) and value.first != value.last]
    if not ranges:
        return 1
    count = l3_count if l3_count is not None else l4_count
    if count is None:
        return None  # NSB requires a count with a range; nsb then uses the ranges whole
    return min(count, max(packet_fields.distinct(value) for value in ranges))
