"""A traffic profile written from the plugin author's page alone: a rate ladder."""

from __future__ import annotations

from nsb.events import LimitedBy, Verdict
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import Measurer, SearchPoint, loss_judge


class LadderProfile(TrafficProfile):
    """Example profile: climbs a ladder of rates; the answer is the last step that passed."""

    # its own options only: packet_sizes, imix, interface_speed_gbps, flows and
    # duration come from TrafficProfile (frame_sizes, speed_gbps, trial_at_pct read them)
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "steps_pct": {"description": "% of line rate of each step, climbed in order",
                          "type": "array", "minItems": 1,
                          "items": {"type": "number", "exclusiveMinimum": 0, "maximum": 100},
                          "default": [1, 2, 5, 10, 20, 50, 100]},
        },
    }

    def execute(self, measurer: Measurer) -> None:
        steps = self.options["steps_pct"]
        for frame in self.frame_sizes:
            best, limited_by = None, LimitedBy.UPPER_BOUND
            for pct in steps:
                if measurer.should_stop():
                    return
                done = measurer.measure(self.trial_at_pct(frame, pct, measurer.ports),
                                        SearchPoint.single(pct), loss_judge(0.0))
                if done.verdict != Verdict.PASS:
                    limited_by = LimitedBy.DUT if done.verdict == Verdict.FAIL \
                        else LimitedBy.GENERATOR
                    break
                best = done
            measurer.result_ready(frame, best, self.speed_gbps, limited_by)
