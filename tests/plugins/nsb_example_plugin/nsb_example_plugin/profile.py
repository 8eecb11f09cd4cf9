"""A traffic profile: rates from high to low until one passes."""

from __future__ import annotations

from nsb.events import LimitedBy, Verdict
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import Measurer, SearchPoint, loss_judge


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
        "examples": [{"rates_pct": [100, 50, 10]}],
    }

    def execute(self, measurer: Measurer) -> None:
        rates = sorted(self.options["rates_pct"], reverse=True)
        judge = loss_judge(self.options["tolerated_loss"])
        for frame in self.frame_sizes:
            best, tried = None, 0
            for pct in rates:
                if measurer.should_stop():
                    return
                trial = self.trial_at_pct(frame, pct, measurer.ports)
                tried += 1
                done = measurer.measure(
                    trial, SearchPoint(pct, rates[-1], rates[0], len(rates) - tried), judge)
                if done.verdict == Verdict.PASS:
                    best = done.result
                    break
            limited_by = LimitedBy.UPPER_BOUND if best is not None and tried == 1 else (
                LimitedBy.DUT)
            measurer.result_ready(frame, best, self.speed_gbps, limited_by, tried,
                                  self.spec.type)
