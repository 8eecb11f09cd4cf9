"""One trial per frame size at a fixed rate: a soak or a sanity check."""

from __future__ import annotations

from nsb import units
from nsb.events import LimitedBy
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import LIMITED_BY, PASS, Session, TrafficProfile, judge
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
            "tolerated_loss": common.TOLERATED_LOSS,
            "rate_pct": {"type": "number", "exclusiveMinimum": 0, "maximum": 100},
            "rate_pps": {"type": "number", "exclusiveMinimum": 0},
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
        },
        "oneOf": [{"required": ["rate_pct"]}, {"required": ["rate_pps"]}],
    }

    def execute(self, tg, session: Session) -> None:
        o = self.options
        ports = tg.tx_port_count
        for frame in self.frame_sizes:
            if session.should_stop():
                return
            if "rate_pps" in o:
                pps = float(o["rate_pps"])
                pct = units.pps_to_pct(pps, frame, self.speed_gbps, ports)
            else:
                pct = float(o["rate_pct"])
                pps = units.pct_to_pps(pct, frame, self.speed_gbps, ports)
            trial = Trial(frame_size=frame, rate_pps=pps, duration_s=float(o["duration"]),
                          flows=o.get("flows"))
            index, result = session.run_trial(tg, trial, pct, pct, pct, 1)
            verdict, reason = judge(result, o["tolerated_loss"])
            session.trial_done(index, result, verdict, pct, pct, pct, reason)
            limited_by = LIMITED_BY.get(verdict, LimitedBy.NONE)
            session.result_ready(frame, result if verdict == PASS else None, self.speed_gbps,
                                 ports, limited_by, 1, self.spec.type,
                                 extra={"offered_pps": pps, "measured_loss_pct": result.loss_pct})
