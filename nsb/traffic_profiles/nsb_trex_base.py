"""What NSB's TRex traffic profiles (RFC2544Profile, FixedProfile) share: the packet
definitions of their file, NSB's ``frame_rate`` and ``allowed_drop_rate``, and
how a trial of theirs is judged.

The packet definitions (``uplink_0``, ``downlink_0``...) were read and checked
when the task was loaded (``nsb.task.packet_profile``); they reach the profile
among its options and every trial carries them to the generator as
``Trial.packets``, with the frame size or byte-weighted mix they define.
"""

from __future__ import annotations

import logging
import re

from nsb import frames
from nsb.events import Verdict
from nsb.frames import Frame, FrameMix
from nsb.packets import Direction, PacketSpec
from nsb.runinfo import RunInfo
from nsb.task import packet_profile, traffic_options
from nsb.task.model import PluginSpec
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import (
    FAIL,
    GENERATOR_LIMITED,
    PASS,
    Judge,
    receive_side_loss,
)
from nsb.trial import Trial, TrialResult

LOG = logging.getLogger(__name__)

# NSB's TrafficProfileConfig rate: a number, with fps (the default) or %
RATE = re.compile(r"^\s*([0-9]*\.[0-9]+|[0-9]+)\s*(fps|%)?\s*$")
DEFAULT_DURATION_S = traffic_options.DEFAULT_DURATION_S
# keys NSB's TrafficProfileConfig reads for every profile and its TRex profiles ignore
IGNORED = ("test_precision", "packet_sizes", "lower_bound", "upper_bound", "step_interval")

SCHEMA_PIECES = {
    "duration": {"description": "seconds per trial",
                 "type": "number", "exclusiveMinimum": 0, "default": DEFAULT_DURATION_S},
    "enable_latency": {"description": "latency streams in every trial (NSB's; without it, "
                                      "as in NSB, the trials measure throughput only)",
                       "type": "boolean", "default": False},
    "allowed_drop_rate": {"description": "\"low - high\" % of frames a trial may drop (the "
                                         "scenario's rfc2544); a trial passes at most high",
                          "type": ["string", "number"],
                          "default": traffic_options.DEFAULT_DROP_RATE},
    "correlated_traffic": {"description": "only the uplinks are sent; a reflector sends them back",
                           "type": "boolean", "default": False},
    "latency": {"description": "NSB's; accepted, changes nothing here",
                "type": "boolean", "default": False},
    "interface_speed_gbps": common.INTERFACE_SPEED,
    **{key: {"description": "NSB's; its TRex profiles ignore it"} for key in IGNORED},
}
# the packet definitions, as the profile file names them
DEFINITIONS = {packet_profile.DEFINITION.pattern: {"type": "object"}}


def drop_pct(result: TrialResult) -> float:
    """NSB's drop percentage: ``|out - in| / out`` in %, 100 when nothing went out."""
    if result.tx_packets <= 0:
        return 100.0
    return round(100.0 * abs(result.tx_packets - result.rx_packets) / result.tx_packets, 5)


def drop_judge(allowed_pct: float) -> Judge:
    """A trial passes when it dropped at most ``allowed_pct`` % (NSB's allowed high)."""
    def judge(result: TrialResult) -> tuple[Verdict, str]:
        drop = drop_pct(result)
        if drop > allowed_pct and result.dut_loss_pct <= allowed_pct:
            return GENERATOR_LIMITED, receive_side_loss(result, f"drop {drop:.5g}%")
        if drop > allowed_pct:
            return FAIL, f"drop {drop:.5g}% > allowed {allowed_pct:g}%"
        if result.generator_limited:
            why = f"; {result.generator_note}" if result.generator_note else ""
            return GENERATOR_LIMITED, (f"generator could not send the rate asked (sent "
                                       f"{result.tx_rate_pps:,.0f} of "
                                       f"{result.trial.rate_pps:,.0f} pps){why}")
        return PASS, f"drop {drop:.5g}% <= allowed {allowed_pct:g}%"
    return judge


class NsbTrexProfile(TrafficProfile):
    """Base of NSB's TRex profiles: packet definitions, frame, drop rate, rate parsing."""

    BASE_OPTIONS = ()  # NSB's profile files: their packet definitions give the frames

    def __init__(self, spec: PluginSpec, options: dict, run: RunInfo):
        self.packet_profile = packet_profile.read(options, spec.options_where)
        super().__init__(spec, options, run)
        try:
            self.drop_low_pct, self.drop_high_pct = traffic_options.drop_rate(
                options["allowed_drop_rate"])
        except ValueError as exc:
            raise spec.options_where.error(str(exc), "allowed_drop_rate") from None
        for key in IGNORED:
            if key in spec.options:
                LOG.info("%s: '%s' is ignored, as NSB's TRex profiles ignore it",
                            spec.type, key)

    @property
    def frame(self) -> Frame:
        """The frame size (or byte-weighted mix) of the packet definitions."""
        return self.packet_profile.frame

    def _mix(self, options: dict) -> FrameMix | None:
        frame = self.packet_profile.frame
        return frame if isinstance(frame, FrameMix) else None

    def parse_rate(self, default_unit: str) -> tuple[float, str]:
        """``frame_rate`` as (number, ``fps`` or ``%``); null is 100 % of line rate."""
        value = self.options.get("frame_rate")
        if value is None:
            return 100.0, "%"
        match = RATE.match(str(value)) if not isinstance(value, bool) else None
        if not match or float(match.group(1)) <= 0:
            raise self.spec.options_where.error(
                f"{value!r} is not a rate: a positive number, with % (of line rate) or fps",
                "frame_rate")
        return float(match.group(1)), match.group(2) or default_unit

    def offered_packets(self, ports: int) -> tuple[PacketSpec, ...]:
        """The definitions of the generator's port pairs (NSB skips those its topology
        has no link for); with ``correlated_traffic`` only the uplinks, which a
        reflector sends back (NSB skips the downlinks then)."""
        pairs = max(1, ports // 2)
        return tuple(p for p in self.packet_profile.packets if p.pair < pairs and not (
            self.options.get("correlated_traffic") and p.direction == Direction.DOWNLINK))

    def trial(self, rate_pps: float, packets: tuple[PacketSpec, ...],
              flows: int | None = None) -> Trial:
        """A trial of this profile's frame, duration and packets at ``rate_pps``."""
        if flows is None:
            flows = max((p.flows for p in packets if p.flows), default=None)
        return Trial(frame_size=self.frame, rate_pps=rate_pps,
                     duration_s=float(self.options["duration"]), flows=flows,
                     packets=packets, reflected=bool(self.options.get("correlated_traffic")),
                     latency=bool(self.options["enable_latency"]))

    def describe(self) -> dict:
        """The options, with the packet definitions as read (one line each) and the
        frame size or mix they send."""
        frame = self.frame
        shown = frame.describe() if isinstance(frame, FrameMix) else frames.json_value(frame)
        options = {k: v for k, v in super().describe().items()
                   if not packet_profile.DEFINITION.match(k)}
        described = {**options, "frame_size": shown}
        if self.packet_profile.sizes:
            described["nsb_framesize_pct"] = {f"{size}B": round(share, 4) for size, share
                                              in self.packet_profile.weights.items()}
        if self.packet_profile.packets:
            described["packets"] = {p.name: packet_text(p) for p in self.packet_profile.packets}
        return described


def packet_text(spec: PacketSpec) -> str:
    """``udp 10.0.2.1-10.0.2.255:1234-4321 > 10.0.3.1:2001, ttl 32, 1 flow``: one line."""
    def ends(ip, port) -> str:
        address = "port" if ip is None else (
            ip.first if ip.first == ip.last else f"{ip.first}-{ip.last}")
        if port is None:
            return address
        return f"{address}:{port.first}" + ("" if port.first == port.last else f"-{port.last}")
    parts = [f"{spec.proto} {ends(spec.src_ip, spec.src_port)} > "
             f"{ends(spec.dst_ip, spec.dst_port)}", f"ttl {spec.ttl}", f"dscp {spec.dscp}",
             "flows from the ranges" if spec.flows is None else f"{spec.flows} flow(s)"]
    if spec.vlans:
        parts.append("vlans " + "/".join(map(str, spec.vlans)))
    if spec.src_mac or spec.dst_mac:
        parts.append(f"mac {spec.src_mac or 'port'} > {spec.dst_mac or 'peer'}")
    return ", ".join(parts)
