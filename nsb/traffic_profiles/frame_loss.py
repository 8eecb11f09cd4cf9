"""RFC 2544 frame loss rate (section 26.3): the loss curve from the maximum rate down.

Per frame size, one trial at ``upper_bound`` % of line rate (100: the maximum rate
of the medium), then ``step_pct`` lower each time (RFC 2544: steps of at most 10 %
of the maximum rate), until ``zero_loss_steps`` (the RFC's two) successive trials
lose no frame. Each step's loss, ``(sent - received) * 100 / sent``, is recorded
(result ``frame_loss_curve``) and drawn against the offered load in the report.
"""

from __future__ import annotations

from nsb import units
from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import ZERO_LOSS, Measurer, SearchPoint
from nsb.trial import TrialResult


class FrameLossProfile(TrafficProfile):
    """Frame loss rate: loss at 100 %, 90 %, ... of line rate until two steps lose nothing."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "imix": common.IMIX,
            "duration": common.DURATION,
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
            "upper_bound": common.UPPER_BOUND,
            "step_pct": {"description": "each next trial this many % of line rate lower "
                                        "(RFC 2544 26.3: 10 or finer)",
                         "type": "number", "exclusiveMinimum": 0, "maximum": 10,
                         "default": 10.0},
            "zero_loss_steps": {"type": "integer", "minimum": 1, "default": 2},
        },
    }

    def steps(self) -> list[float]:
        """Every rate the curve may visit, highest first, above 0 % of line rate."""
        o = self.options
        rates, rate = [], float(o["upper_bound"])
        while rate > 1e-9:
            rates.append(round(rate, 9))
            rate -= o["step_pct"]
        return rates

    def execute(self, measurer: Measurer) -> None:
        for frame in self.frame_sizes:
            if measurer.should_stop():
                return
            self._curve(measurer, frame)

    def _curve(self, measurer: Measurer, frame: Frame) -> None:
        steps, needed = self.steps(), self.options["zero_loss_steps"]
        curve: list[dict] = []
        best: TrialResult | None = None
        clean, before = 0, measurer.trial_count
        for position, pct in enumerate(steps):
            if measurer.should_stop():
                return  # an interrupted curve has trials but no answer
            left = min(len(steps) - position, needed - clean) - 1
            done = measurer.measure(self.trial_at_pct(frame, pct, measurer.ports),
                                    SearchPoint(pct, steps[-1], steps[0], max(0, left)),
                                    ZERO_LOSS, why=f"step {position + 1}: {pct:g}% of line rate")
            curve.append(self._point(done.result, pct, frame, measurer.ports))
            if done.result.lost_packets > 0:
                clean, best = 0, None
                continue
            clean += 1
            if clean == 1:  # the highest rate of the loss-free run that ends the curve
                best = done.result
            if clean >= needed:
                break
        limited_by, reason = LimitedBy.UPPER_BOUND, "no loss at the maximum rate"
        if any(point["lost_packets"] > 0 for point in curve):
            limited_by, reason = LimitedBy.DUT, "the DUT lost frames at the higher steps"
        elif best is not None and best.generator_limited:  # it sent less than the top step
            limited_by = LimitedBy.GENERATOR
            reason = (f"the generator sent {curve[0]['sent_pct']:.2f} % of line rate at the "
                      f"{curve[0]['rate_pct']:g} % step, without loss: the DUT's limit was "
                      "not reached")
        measurer.result_ready(
            frame, best, self.speed_gbps, limited_by,
            measurer.trial_count - before, self.spec.type,
            extra={"frame_loss_curve": curve, "step_pct": self.options["step_pct"],
                   "curve_complete": clean >= needed}, reason=reason)

    def _point(self, result: TrialResult, pct: float, frame: Frame, ports: int) -> dict:
        """One step of the curve as the results record it."""
        sent_pct = units.pps_to_pct(result.tx_rate_pps, frame, self.speed_gbps, ports)
        return {"rate_pct": pct, "rate_pps": result.trial.rate_pps, "sent_pct": sent_pct,
                "tx_packets": result.tx_packets, "rx_packets": result.rx_packets,
                "lost_packets": max(0, result.lost_packets), "loss_pct": result.loss_pct,
                "dut_loss_pct": result.dut_loss_pct,
                "generator_limited": result.generator_limited}
