"""A traffic profile: rates from high to low until one passes."""

from __future__ import annotations

from nsb.events import LimitedBy, Verdict
from nsb.traffic_profiles.base import Session, TrafficProfile, judge


class StepDownProfile(TrafficProfile):
    """Example profile: tries rates_pct from the highest down; the first that passes."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "required": ["rates_pct"],
        "properties": {
            "packet_sizes": {"type": "array", "items": {"type": "integer"}, "default": [64]},
            "rates_pct": {"type": "array", "minItems": 1,
                          "items": {"type": "number", "exclusiveMinimum": 0, "maximum": 100}},
            "duration": {"type": "number", "exclusiveMinimum": 0, "default": 1},
            "tolerated_loss": {"type": "number", "minimum": 0, "default": 0},
            "interface_speed_gbps": {"type": "number", "exclusiveMinimum": 0, "default": 10},
        },
    }

    def execute(self, tg, session: Session) -> None:
        ports = tg.tx_port_count
        rates = sorted(self.options["rates_pct"], reverse=True)
        for frame in self.frame_sizes:
            best, tried = None, 0
            for pct in rates:
                if session.should_stop():
                    return
                trial = self.trial_at_pct(frame, pct, ports)
                tried += 1
                index, result = session.run_trial(tg, trial, pct, rates[-1], rates[0],
                                                  trials_left=len(rates) - tried)
                verdict, reason = judge(result, self.options["tolerated_loss"])
                session.trial_done(index, result, verdict, pct, rates[-1], rates[0], reason)
                if verdict == Verdict.PASS:
                    best = result
                    break
            limited_by = LimitedBy.UPPER_BOUND if best is not None and tried == 1 else (
                LimitedBy.DUT)
            session.result_ready(frame, best, self.speed_gbps, ports, limited_by, tried,
                                 self.spec.type)
