"""One trial per frame size at a fixed rate: a soak or a sanity check."""

from __future__ import annotations

from nsb import units
from nsb.events import LimitedBy
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import LIMITED_BY, PASS, Measurer, SearchPoint, loss_judge
from nsb.trial import Trial


class FixedRateProfile(TrafficProfile):
    """Fixed rate: one trial per frame size at rate_pct of line rate (or rate_pps)."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "imix": common.IMIX,
            "duration": common.DURATION,
            "tolerated_loss_pct": common.TOLERATED_LOSS,
            "rate_pct": {"description": "the rate, in % of line rate (or rate_pps)",
                         "type": "number", "exclusiveMinimum": 0, "maximum": 100},
            "rate_pps": {"description": "the rate, in frames per second (or rate_pct)",
                         "type": "number", "exclusiveMinimum": 0},
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
            "latency_only": {"description": "every frame a latency frame (latency at no load, "
                                            "or a generator's own floor with its ports "
                                            "cabled to each other)",
                             "type": "boolean", "default": False},
        },
        "oneOf": [{"required": ["rate_pct"]}, {"required": ["rate_pps"]}],
    }

    def execute(self, measurer: Measurer) -> None:
        o = self.options
        ports = measurer.ports
        for frame in self.frame_sizes:
            if measurer.should_stop():
                return
            if "rate_pps" in o:
                pps = float(o["rate_pps"])
                pct = units.pps_to_pct(pps, frame, self.speed_gbps, ports)
            else:
                pct = float(o["rate_pct"])
                pps = units.pct_to_pps(pct, frame, self.speed_gbps, ports)
            trial = Trial(frame_size=frame, rate_pps=pps, duration_s=float(o["duration"]),
                          flows=o.get("flows"), latency_only=o["latency_only"])
            done = measurer.measure(trial, SearchPoint.single(pct, trials_left=1),
                                    loss_judge(o["tolerated_loss_pct"]))
            limited_by = LIMITED_BY.get(done.verdict, LimitedBy.NONE)
            measurer.result_ready(frame, done.result if done.verdict == PASS else None,
                                  self.speed_gbps, limited_by, 1, self.spec.type,
                                  extra={"offered_pps": pps,
                                         "measured_loss_pct": done.result.loss_pct})
