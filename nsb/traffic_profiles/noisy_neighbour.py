"""Noisy neighbour (VSPerf's stress tests): MRR trials, or NDR searches, with and without
a neighbour (stress-ng pinned where the task says), alternating, N of each; the drop of
the mean receive rate (or NDR) with the runs' own spread, and the change in p99 latency.
A drop within the runs' own spread (the two sets' standard deviations added) is
reported as none."""

from __future__ import annotations

import statistics
from dataclasses import replace

from nsb import neighbours
from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles.bisection import search
from nsb.traffic_profiles.judges import loss_judge
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
            "measure": {"description": "mrr: trials at rate_pct (VSPerf's stress tests); "
                                       "ndr: a binary search for the NDR each time, between "
                                       "lower_pct and rate_pct, with and without",
                        "enum": ["mrr", "ndr"], "default": "mrr"},
            "lower_pct": {"description": "measure ndr: the search's lower bound, in % of "
                                         "line rate",
                          "type": "number", "exclusiveMinimum": 0, "maximum": 100,
                          "default": 1},
            "precision_pct": {"description": "measure ndr: a search ends when the rate that "
                                             "failed is within this % of the one that passed",
                              "type": "number", "exclusiveMinimum": 0, "maximum": 50,
                              "default": 5},
            "tolerated_loss_pct": {"description": "measure ndr: the loss a passing trial may "
                                                  "have, in %",
                                   "type": "number", "minimum": 0, "maximum": 100,
                                   "default": 0},
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
            self._generator_short = False
            quiet: list[TrialResult | None] = []
            loud: list[TrialResult | None] = []
            ran: dict = {}
            for index in range(o["trials"]):
                if measurer.should_stop():
                    break
                quiet.append(self._trial(measurer, frame, index, "without the neighbour"))
                with measurer.hooks.neighbour(o["neighbour"]) as neighbour:
                    loud.append(self._trial(measurer, frame, index, "with the neighbour"))
                    ran = neighbour.ran
            if None in quiet + loud:
                short = self._generator_short
                measurer.result_ready(
                    frame, None, self.speed_gbps,
                    LimitedBy.GENERATOR if short else LimitedBy.DUT, len(quiet) + len(loud),
                    self.spec.type, reason="no drop to compare: " + (
                        "the generator could not send a rate an NDR search asked" if short
                        else f"an NDR search lost frames even at {o['lower_pct']:g} %"))
            elif quiet and loud:
                self._answer(measurer, frame, quiet, loud, ran)

    def _trial(self, measurer: Measurer, frame: Frame, index: int,
               why: str) -> TrialResult | None:
        """One MRR trial, or one NDR search's passing trial (None: none passed)."""
        o = self.options
        if o["measure"] == "ndr":
            return self._ndr(measurer, frame, f"{why}, {index + 1} of {o['trials']}")
        trial = replace(self.trial_at_pct(frame, o["rate_pct"], measurer.ports),
                        latency=o["latency"])
        return measurer.measure(trial, SearchPoint.single(o["rate_pct"], o["trials"] - index),
                                _receive_rate,
                                why=f"{why}, {index + 1} of {o['trials']}").result

    def _ndr(self, measurer: Measurer, frame: Frame, why: str) -> TrialResult | None:
        """A binary search between lower_pct and rate_pct; its highest passing trial
        (its receive rate is the NDR), None when even the lower bound lost frames or the
        generator could not send a rate."""
        o = self.options
        judge = loss_judge(o["tolerated_loss_pct"])
        bounds = {"low": o["lower_pct"], "high": o["rate_pct"]}

        def at(pct: float):
            trial = replace(self.trial_at_pct(frame, pct, measurer.ports), latency=o["latency"])
            return measurer.measure(trial, SearchPoint(pct, bounds["low"], bounds["high"]),
                                    judge, why=f"{why}: NDR search at {pct:.2f} %")

        passed, _, short = search(at, o["lower_pct"], o["rate_pct"],
                                  lambda lo, hi: hi - lo <= hi * o["precision_pct"] / 100,
                                  lambda lo, hi: (lo + hi) / 2, measurer.should_stop)
        self._generator_short = self._generator_short or short is not None
        return None if passed is None or short is not None else passed[1].result

    def _answer(self, measurer: Measurer, frame: Frame, quiet: list[TrialResult],
                loud: list[TrialResult], ran: dict) -> None:
        effect = neighbour_effect(quiet, loud, self.options["rate_pct"])
        effect.update(ran=ran, measure=self.options["measure"])
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
