"""MRR, CSIT's maximum receive rate: a few short trials at the maximum rate, the receive
rate of each, their mean and standard deviation. The metric daily trending uses: cheap,
and it moves when the DUT's speed moves, even though it is not a loss-free rate.
"""

from __future__ import annotations

import statistics

from nsb import units
from nsb.events import LimitedBy
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import PASS, Measurer, SearchPoint
from nsb.trial import TrialResult


class MrrProfile(TrafficProfile):
    """MRR: N trials at the maximum rate, the mean and stdev of their receive rates."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "imix": common.IMIX,
            "duration": {**common.DURATION, "default": 1.0},
            "trials": {"description": "trials per frame size (CSIT: 10)", "type": "integer",
                       "minimum": 1, "maximum": 1000, "default": 10},
            "rate_pct": {"description": "the load, in % of line rate (the maximum: 100)",
                         "type": "number", "exclusiveMinimum": 0, "maximum": 100,
                         "default": 100},
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
        },
    }

    def execute(self, measurer: Measurer) -> None:
        o = self.options
        for frame in self.frame_sizes:
            done: list[TrialResult] = []
            for index in range(o["trials"]):
                if measurer.should_stop():
                    break
                trial = self.trial_at_pct(frame, o["rate_pct"], measurer.ports)
                measured = measurer.measure(
                    trial, SearchPoint.single(o["rate_pct"], o["trials"] - index),
                    _receive_rate, why=f"MRR trial {index + 1}/{o['trials']}")
                done.append(measured.result)
            if done:
                self._result(measurer, frame, done)

    def _result(self, measurer: Measurer, frame, done: list[TrialResult]) -> None:
        summary = mrr_summary(done, self.options["rate_pct"])
        # the generator set the number when it could not send the load and the DUT
        # forwarded all it got
        short = [r for r in done if r.generator_limited and r.loss_pct <= 0.0]
        limited_by = LimitedBy.GENERATOR if short else LimitedBy.DUT
        reason = (f"{len(short)} of {len(done)} trials sent less than the load asked and "
                  "lost nothing: the receive rate is the generator's" if short else
                  "the receive rate at the maximum load")
        if notes := [r.generator_note for r in short if r.generator_note]:
            reason += f" ({notes[-1]})"  # the generator's words: on memif, the DUT may be why
        sent = sum(r.tx_packets for r in done)
        lost = sum(max(0, r.tx_packets - r.rx_packets) for r in done)
        measurer.result_ready(frame, done[-1], self.speed_gbps, limited_by, len(done),
                              self.spec.type, extra={"mrr": summary}, reason=reason,
                              answer_pps=summary["mean_pps"],
                              loss_pct=100.0 * lost / sent if sent else 0.0)


def _receive_rate(result: TrialResult):
    """Every MRR trial counts: its verdict only records it."""
    return PASS, f"received {result.rx_rate_pps:,.0f} pps of {result.tx_rate_pps:,.0f} sent"


def mrr_summary(done: list[TrialResult], rate_pct: float) -> dict:
    """Each trial's receive rate (frames received over the seconds it sent them), their
    mean and sample standard deviation (0 for one trial)."""
    rates = [r.rx_rate_pps for r in done]
    return {"trials": len(rates), "duration_s": done[0].trial.duration_s,
            "rate_pct": rate_pct, "receive_rates_pps": rates,
            "mean_pps": statistics.fmean(rates),
            "stdev_pps": statistics.stdev(rates) if len(rates) > 1 else 0.0,
            "mean_mbps": units.pps_to_mbps(statistics.fmean(rates), done[0].trial.frame_size)}
