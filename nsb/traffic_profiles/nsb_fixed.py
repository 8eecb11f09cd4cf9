"""NSB's FixedProfile: traffic at one rate, which NSB's ``fixed.yaml`` gives in pps.

NSB's FixedProfile (``fixed.py``) starts one UDP stream per port at
``frame_rate`` pps (NSB's ``TrafficProfileConfig``: a number is fps, ``25%``
is % of line rate) of ``frame_size`` bytes, and lets it run while the runner
lasts; it judges nothing. nsb runs one trial of ``duration`` (the Duration
runner's, when the profile sets none) and judges it by ``allowed_drop_rate``,
so that it has a result like every profile. A FixedProfile file may also
define its frames as RFC2544Profile files do (``uplink_0``, ...).
"""

from __future__ import annotations

from nsb import frames, units
from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles.measurer import LIMITED_BY, PASS, Measurer, SearchPoint
from nsb.traffic_profiles.nsb_trex_base import (
    DEFINITIONS,
    RATE,
    SCHEMA_PIECES,
    NsbTrexProfile,
    drop_judge,
    drop_pct,
)


class FixedProfile(NsbTrexProfile):
    """NSB's FixedProfile: one trial at frame_rate pps (or %) of frame_size frames."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "frame_rate": {"description": "frames per second, or N% of line rate",
                           "anyOf": [{"type": "number", "exclusiveMinimum": 0},
                                     {"type": "string", "pattern": RATE.pattern}],
                           "default": 100},
            "frame_size": {"description": "frame size in bytes (or the packet definitions' "
                                          "framesize)",
                           "type": "integer", "minimum": frames.MIN_FRAME,
                           "maximum": frames.MAX_FRAME},
            "flow_number": {"description": "flows per direction",
                            "type": "integer", "minimum": 1},
            "resolution": {"description": "the task's rfc2544 resolution; accepted",
                           "type": "number", "exclusiveMinimum": 0},
            **SCHEMA_PIECES,
        },
        "patternProperties": DEFINITIONS,
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        if "frame_size" in options and self.packet_profile.sizes:
            raise spec.options_where.error(
                "give the frame size once: frame_size, or the framesize of the packet "
                "definitions", "frame_size")
        self.rate_value, self.rate_unit = self.parse_rate("fps")
        if self.rate_unit == "%" and self.rate_value > 100:
            raise spec.options_where.error(
                f"frame_rate {self.rate_value:g}% is above 100 % of line rate", "frame_rate")

    @property
    def frame(self) -> Frame:
        if "frame_size" in self.options:
            return int(self.options["frame_size"])
        return self.packet_profile.frame

    def execute(self, measurer: Measurer) -> None:
        if measurer.should_stop():
            return
        ports = measurer.ports
        if self.rate_unit == "%":
            pct = self.rate_value
            pps = units.pct_to_pps(pct, self.frame, self.speed_gbps, ports)
        else:
            pps = self.rate_value
            pct = units.pps_to_pct(pps, self.frame, self.speed_gbps, ports)
        trial = self.trial(pps, self.offered_packets(ports), self.options.get("flow_number"))
        done = measurer.measure(trial, SearchPoint.single(pct, trials_left=1),
                                drop_judge(self.drop_high_pct))
        measurer.result_ready(self.frame, done.result if done.verdict == PASS else None,
                              self.speed_gbps, LIMITED_BY.get(done.verdict, LimitedBy.NONE),
                              1, self.spec.type,
                              extra={"offered_pps": pps, "drop_pct": drop_pct(done.result)})
