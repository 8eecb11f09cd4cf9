"""NSB's scenario options that fill its traffic profile template, read as Yardstick
reads them.

Yardstick renders an NSPerf scenario's traffic profile file with the values of
``vnf_generic.py`` (``_fill_traffic_profile``): ``imix`` is ``{imix: <framesize
option>}`` (``get(imix, 'imix.uplink.64B', '0')``), ``flow`` is ``{flow: {src_ip_0,
dst_ip_0, public_ip_0, src_port_0, dst_port_0, count, ...}}`` (``_get_traffic_flow``;
an address entry ``{tg__0: xe0}`` is that interface's subnet without its first
two and its last address, ``_get_ip_flow_range``), ``duration`` the scenario's
``duration`` option (30 s unless set), ``extra_args`` the scenario's. The
``rfc2544`` option is read by NSB's TRex generator (``Rfc2544ResourceHelper``:
``allowed_drop_rate``, ``resolution``, ``correlated_traffic``, ``latency``); nsb
gives it to the traffic profile. ``traffic_config`` replaces keys of the rendered
profile's ``traffic_profile`` section.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from nsb.task import framesize_mix, packet_fields
from nsb.task.documents import Where
from nsb.task.yaml_lines import LocatedDocument

# scenario-wide options this module reads, and what each does in nsb
OPTIONS = {
    "framesize": "frame-size weights per direction: the traffic profile's imix values",
    "flow": "addresses, ports and flow count: the traffic profile's flow values",
    "duration": "the traffic profile's {{ duration }} (30 s unless set)",
    "rfc2544": "allowed_drop_rate, resolution, correlated_traffic and latency of NSB's "
               "RFC 2544 search",
    "traffic_config": "keys that replace those of the traffic profile's traffic_profile",
}
DEFAULT_DURATION_S = 30  # NSB's TrafficProfileConfig.DEFAULT_DURATION
DEFAULT_DROP_RATE = "0.0001 - 0.0001"  # NSB's Rfc2544ResourceHelper.DEFAULT_TOLERANCE
RFC2544_KEYS = ("allowed_drop_rate", "correlated_traffic", "latency", "resolution",
                "queues_per_port")
LOG = logging.getLogger(__name__)
_FLOW_LISTS = ("src_ip", "dst_ip", "public_ip", "src_port", "dst_port")
_FLOW_VALUES = ("count", "seed", "srcseed", "dstseed")
_DIRECTIONS = ("uplink", "downlink")


@dataclass(frozen=True)
class TrafficOptions:
    """What the scenario's options give its traffic profile."""

    values: dict  # the template values Yardstick renders the profile file with
    inherited: dict = field(default_factory=dict)  # profile options from ``rfc2544``
    traffic_config: dict = field(default_factory=dict)
    # per direction the frame sizes asked for (weight above 0), by the key the task wrote
    framesize: dict = field(default_factory=dict)


def drop_rate(value: object) -> tuple[float, float]:
    """``allowed_drop_rate``: ``"low - high"`` % (NSB sorts the two; one number is
    both), or a number."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValueError(f"expected 'low - high' in % (e.g. '0.0001 - 0.001'), got {value!r}")
    parts = str(value).split("-")
    try:
        numbers = sorted(float(part.strip()) for part in parts)
    except ValueError:
        raise ValueError(f"{value!r} is not 'low - high' in % (e.g. '0.0001 - 0.001')") from None
    if len(numbers) > 2 or not all(0 <= n <= 100 for n in numbers):
        raise ValueError(f"{value!r}: expected one or two numbers 0-100 (% of frames "
                         "dropped), 'low - high'")
    return numbers[0], numbers[-1]


def read(doc: LocatedDocument, at: tuple, options: Mapping, bindings: Mapping,
         pod_nodes: Mapping) -> TrafficOptions:
    """The scenario's traffic options (``options`` at ``at + ('options',)``)."""
    where = Where(doc, at + ("options",))
    framesize = _framesize(options["framesize"], _at(where, "framesize")) \
        if options.get("framesize") is not None else {}
    flow = _flow(options["flow"], _at(where, "flow"), bindings, pod_nodes) \
        if options.get("flow") is not None else {}
    duration = options.get("duration", DEFAULT_DURATION_S)
    if isinstance(duration, bool) or not isinstance(duration, (int, float)) or duration <= 0:
        raise where.error(f"expected a positive number of seconds, got {duration!r}",
                          "duration")
    traffic_config = options.get("traffic_config") or {}
    if not isinstance(traffic_config, Mapping):
        raise where.error("expected keys of the traffic profile's traffic_profile section, "
                          f"got {type(traffic_config).__name__}", "traffic_config")
    for key in ("traffic_type", "type"):
        if key in traffic_config:
            raise where.error("not supported yet: changing the profile's traffic_type "
                              "through traffic_config", "traffic_config", key)
    values = template_values(options.get("framesize"), flow, duration)
    return TrafficOptions(values, _rfc2544(options.get("rfc2544"), _at(where, "rfc2544")),
                          dict(traffic_config), framesize)


def template_values(framesize: object = None, flow: dict | None = None,
                    duration: float = DEFAULT_DURATION_S) -> dict:
    """``_fill_traffic_profile``'s values (without ``extra_args``); the defaults are
    a scenario without traffic options."""
    return {"imix": {"imix": framesize} if framesize is not None else {},
            "flow": {"flow": flow or {}}, "duration": duration, "uplink": {}, "downlink": {},
            "page_object": {"page_object": {}}, "simulated_users": {"simulated_users": {}}}


def _at(where: Where, *keys) -> Where:
    return Where(where.doc, where.path + keys)


def _framesize(raw: object, where: Where) -> dict:
    """``{uplink: {64B: 100}, downlink: {...}}``, each direction checked as NSB reads it."""
    if not isinstance(raw, Mapping):
        raise where.error(f"expected {{uplink: {{64B: 100}}, downlink: {{64B: 100}}}}, got "
                          f"{type(raw).__name__}")
    asked = {}
    for direction, sizes in raw.items():
        if direction not in _DIRECTIONS:
            raise where.error(f"unknown direction '{direction}'; NSB's framesize has "
                              f"{' and '.join(_DIRECTIONS)}", direction)
        if isinstance(sizes, str):
            raise where.error(f"expected frame sizes with their weights, got the text "
                              f"{sizes!r} (a task argument that is a mapping is given as a "
                              "JSON object: --task-args '{\"framesize\": {\"64B\": 100}}')",
                              direction)
        weights = framesize_mix.parse_weights(sizes or {}, _at(where, direction).error)
        keys = list(sizes or {})
        asked[direction] = {key: size for key, (size, weight) in zip(keys, weights.items(),
                                                                     strict=True) if weight}
    return asked


def _flow(raw: object, where: Where, bindings: Mapping, pod_nodes: Mapping) -> dict:
    """``_get_traffic_flow``: list entries become ``src_ip_0``, ``src_ip_1``..."""
    if not isinstance(raw, Mapping):
        raise where.error(f"expected a mapping of {', '.join(_FLOW_LISTS + _FLOW_VALUES)}, "
                          f"got {type(raw).__name__}")
    flow: dict = {}
    for key, value in raw.items():
        if key in _FLOW_VALUES:
            if key == "count":
                _checked(where, (key,), packet_fields.count, value)
            flow[key] = value
            continue
        if key not in _FLOW_LISTS:
            raise where.error(f"unknown key '{key}'; NSB's flow has "
                              f"{', '.join(_FLOW_LISTS + _FLOW_VALUES)}", key)
        if not isinstance(value, list):
            raise where.error(f"expected a list (one entry per port pair), got "
                              f"{type(value).__name__}", key)
        for index, item in enumerate(value):
            flow[f"{key}_{index}"] = _flow_item(key, item, _at(where, key, index), bindings,
                                                pod_nodes)
    return flow


def _flow_item(key: str, item: object, where: Where, bindings: Mapping,
               pod_nodes: Mapping) -> object:
    if key.endswith("_port"):
        _checked(where, (), packet_fields.port_range, item)
        return item
    if isinstance(item, Mapping) and key != "public_ip":
        return _subnet_range(item, where, bindings, pod_nodes)
    if not isinstance(item, str):
        raise where.error(f"expected an address, a range 'first-last' or {{tg__0: xe0}}, "
                          f"got {type(item).__name__}")
    version = 6 if ":" in item else 4
    _checked(where, (), lambda v: packet_fields.ip_range(v, version), item)
    return item


def _checked(where: Where, path: tuple, parse, value) -> None:
    try:
        parse(value)
    except ValueError as exc:
        raise where.error(str(exc), *path) from None


def _subnet_range(item: Mapping, where: Where, bindings: Mapping, pod_nodes: Mapping) -> str:
    """``{tg__0: xe0}``: the addresses of that interface's subnet from its third to
    the one before the last (``_get_ip_flow_range``); a /31 or /32 is the address."""
    if len(item) != 1:
        raise where.error(f"expected one {{vnf: interface}} entry, got {len(item)}")
    vnf, iface = next(iter(item.items()))
    if vnf not in bindings:
        raise where.error(f"'{vnf}' is not one of the scenario's nodes "
                          f"({', '.join(bindings)})", vnf)
    node = pod_nodes.get(bindings[vnf])
    if node is None:
        raise where.error(f"the addresses of {vnf} (node {bindings[vnf]}) are not known "
                          "when the task is loaded (no pod file names it)", vnf)
    interface = node.interfaces.get(iface) if isinstance(iface, str) else None
    if interface is None:
        raise where.error(f"node {node.name} ({vnf}) has no interface {iface!r}; it has: "
                          f"{', '.join(node.interfaces)}", vnf)
    if not interface.ip:
        raise where.error(f"interface {iface} of node {node.name} has no local_ip in the "
                          "pod", vnf)
    network = ipaddress.ip_network(interface.ip, strict=False)
    if network.prefixlen + 2 < network.max_prefixlen:
        return f"{network[2]}-{network[-2]}"
    return interface.address


def _rfc2544(raw: object, where: Where) -> dict:
    """The ``rfc2544`` option as profile options, checked where the task gives them."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise where.error(f"expected a mapping of {', '.join(RFC2544_KEYS)}, got "
                          f"{type(raw).__name__}")
    for key, value in raw.items():
        if key not in RFC2544_KEYS:
            raise where.error(f"unknown key '{key}'; NSB's rfc2544 has "
                              f"{', '.join(RFC2544_KEYS)}", key)
        if key == "allowed_drop_rate":
            _checked(where, (key,), drop_rate, value)
        elif key == "resolution" and (isinstance(value, bool) or
                                      not isinstance(value, (int, float)) or value <= 0):
            raise where.error(f"expected a positive number (% of line rate), got {value!r}",
                              key)
        elif key in ("correlated_traffic", "latency") and not isinstance(value, bool):
            raise where.error(f"expected true or false, got {value!r}", key)
        elif key == "queues_per_port":
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise where.error(f"expected a whole number of queues, got {value!r}", key)
            LOG.info("%s: rfc2544.queues_per_port is not read (NSB's TRex takes its queues "
                     "from the generator's options, tg__0: {queues_per_port: N})",
                     where.doc.file)
    return {k: v for k, v in raw.items() if k != "queues_per_port"}


def check_framesize(options: TrafficOptions, sizes: Mapping, profile_file: str,
                    where: Where) -> None:
    """A frame size the task asks for that the profile file has no entry for would be
    dropped without a word (NSB's template only looks up the sizes it lists)."""
    for direction, asked in options.framesize.items():
        listed = {size for d, given in sizes.items() if d == direction for size in given}
        for key, size in asked.items():
            if size not in listed:
                shown = ", ".join(f"{s}B" for s in sorted(listed)) or "none"
                raise where.error(f"{size}B would not be sent: {profile_file} gives "
                                  f"{direction} frames of {shown}", direction, key)
