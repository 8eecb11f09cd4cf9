"""Noisy neighbour (VSPerf's stress tests): MRR trials with and without a neighbour
(stress-ng pinned where the task says), alternating, N of each; the drop of the mean
receive rate with the runs' own spread, and the change in p99 latency. A drop within the
runs' own spread (the two sets' standard deviations added) is reported as none."""

from __future__ import annotations

import statistics
from dataclasses import replace

from nsb import neighbours
from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles.measurer import Measurer, SearchPoint
from nsb.traffic_profiles.mrr import MrrProfile, _receive_rate, mrr_summary
from nsb.trial import TrialResult


class NoisyNeighbourProfile(MrrProfile):
    """MRR with and without a neighbour, the drop and its spread."""

    OPTIONS_SCHEMA = {
        **MrrProfile.OPTIONS_SCHEMA,
        "required": ["neighbour"],
        "properties": {
            **MrrProfile.OPTIONS_SCHEMA["properties"],
            "trials": {"description": "trials per frame size with the neighbour, and as many "
                                      "without (alternating)",
                       "type": "integer", "minimum": 2, "maximum": 100, "default": 3},
            "latency": {"description": "false: no latency stream (no p99 change)",
                        "type": "boolean", "default": True},
            "neighbour": neighbours.SCHEMA,
        },
    }

    def execute(self, measurer: Measurer) -> None:
        o = self.options
        missing = measurer.hooks.missing_cpus(o["neighbour"])
        if missing:
            raise self.spec.options_where.error(
                f"neighbour.cpus {o['neighbour']['cpus']} names CPU(s) "
                f"{', '.join(map(str, missing))} that its node does not have", "neighbour")
        for frame in self.frame_sizes:
            quiet: list[TrialResult] = []
            loud: list[TrialResult] = []
            ran: dict = {}
            for index in range(o["trials"]):
                if measurer.should_stop():
                    break
                quiet.append(self._trial(measurer, frame, index, "without the neighbour"))
                with measurer.hooks.neighbour(o["neighbour"]) as neighbour:
                    loud.append(self._trial(measurer, frame, index, "with the neighbour"))
                    ran = neighbour.ran
            if quiet and loud:
                self._answer(measurer, frame, quiet, loud, ran)

    def _trial(self, measurer: Measurer, frame: Frame, index: int, why: str) -> TrialResult:
        o = self.options
        trial = replace(self.trial_at_pct(frame, o["rate_pct"], measurer.ports),
                        latency=o["latency"])
        return measurer.measure(trial, SearchPoint.single(o["rate_pct"], o["trials"] - index),
                                _receive_rate,
                                why=f"{why}, {index + 1} of {o['trials']}").result

    def _answer(self, measurer: Measurer, frame: Frame, quiet: list[TrialResult],
                loud: list[TrialResult], ran: dict) -> None:
        effect = neighbour_effect(quiet, loud, self.options["rate_pct"])
        effect["ran"] = ran
        measurer.result_ready(frame, loud[-1], self.speed_gbps, LimitedBy.DUT,
                              len(quiet) + len(loud), self.spec.type,
                              extra={"mrr": effect["without"], "neighbour": effect},
                              reason="the receive rate with the neighbour",
                              answer_pps=effect["with"]["mean_pps"])


def neighbour_effect(quiet: list[TrialResult], loud: list[TrialResult],
                     rate_pct: float) -> dict:
    """The drop of the mean receive rate (in % of the rate without), the runs' own spread
    (both sets' standard deviations, in % of the same), the drop reported (0 when within
    that spread) and the p99 latency of each set (the mean of its trials')."""
    without, with_ = mrr_summary(quiet, rate_pct), mrr_summary(loud, rate_pct)
    base = without["mean_pps"]
    drop = 100.0 * (base - with_["mean_pps"]) / base if base else 0.0
    spread = 100.0 * (without["stdev_pps"] + with_["stdev_pps"]) / base if base else 0.0
    p99 = [_p99(quiet), _p99(loud)]
    return {"without": without, "with": with_, "drop_pct": drop, "spread_pct": spread,
            "reported_drop_pct": 0.0 if abs(drop) <= spread else drop,
            "within_spread": abs(drop) <= spread,
            "p99_us_without": p99[0], "p99_us_with": p99[1],
            "p99_change_us": p99[1] - p99[0] if None not in p99 else None}


def _p99(done: list[TrialResult]) -> float | None:
    values = [r.latency.percentiles_us["p99"] for r in done
              if r.latency is not None and "p99" in r.latency.percentiles_us]
    return statistics.fmean(values) if values else None
