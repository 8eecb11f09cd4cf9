"""Stepped rates (NSB's ProxRampProfile): lower_bound, + step_value, ... up to upper_bound.

As NSB's profile does, each frame size starts at ``lower_bound`` % of line rate and
steps up by ``step_value`` while the rate is at most ``upper_bound``; the first
trial that loses more than ``tolerated_loss_pct`` ends that frame size. The result is
the highest step that passed (0 when even the first failed). ``step_interval`` and
``test_precision`` are accepted as NSB's sample files write them; NSB's profile
reads neither.
"""

from __future__ import annotations

from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import LIMITED_BY, PASS, Measurer, SearchPoint, loss_judge


class RampProfile(TrafficProfile):
    """Ramp: trials at lower_bound, lower_bound + step_value, ... until one loses frames."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "imix": common.IMIX,
            "duration": {**common.DURATION, "default": 5},
            "tolerated_loss_pct": common.TOLERATED_LOSS,
            "lower_bound": {"description": "the first rate, in % of line rate",
                            "type": "number", "minimum": 0, "maximum": 100, "default": 10.0},
            "upper_bound": common.UPPER_BOUND,
            "step_value": {"description": "each next rate is this many % of line rate higher",
                           "type": "number", "exclusiveMinimum": 0, "maximum": 100,
                           "default": 10.0},
            "step_interval": {"description": "NSB's; accepted as its sample files write it",
                              "type": "number"},
            "test_precision": {"description": "NSB's; accepted as its sample files write it",
                               "type": "number"},
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
        },
    }

    def steps(self) -> list[float]:
        o = self.options
        rates, rate = [], float(o["lower_bound"])
        while rate <= o["upper_bound"] + 1e-9:
            rates.append(rate)
            rate += o["step_value"]
        return rates

    def execute(self, measurer: Measurer) -> None:
        for frame in self.frame_sizes:
            if measurer.should_stop():
                return
            self._ramp(measurer, frame)

    def _ramp(self, measurer: Measurer, frame: Frame) -> None:
        judge = loss_judge(self.options["tolerated_loss_pct"])
        steps = self.steps()
        best, limited_by, before = None, LimitedBy.UPPER_BOUND, measurer.trial_count
        for position, pct in enumerate(steps):
            if measurer.should_stop():
                return  # an interrupted ramp has trials but no answer
            trial = self.trial_at_pct(frame, pct, measurer.ports)
            done = measurer.measure(
                trial, SearchPoint(pct, steps[0], steps[-1], len(steps) - position - 1), judge,
                why=f"step {position + 1}/{len(steps)}")
            if done.verdict != PASS:
                limited_by = LIMITED_BY[done.verdict]
                break
            best = done.result
        measurer.result_ready(frame, best, self.speed_gbps, limited_by,
                              measurer.trial_count - before, self.spec.type)
