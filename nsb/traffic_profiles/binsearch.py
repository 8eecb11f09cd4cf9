"""RFC 2544 throughput by binary search over % of line rate (NSB's ProxBinSearchProfile)."""

from __future__ import annotations

import math
from dataclasses import replace

from nsb.events import LimitedBy, Verdict
from nsb.frames import Frame
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import TrafficProfile, latency_at_rate, latency_sweep
from nsb.traffic_profiles.measurer import (
    LIMITED_BY,
    PASS,
    Measurement,
    Measurer,
    SearchPoint,
    loss_judge,
)


class BinSearchProfile(TrafficProfile):
    """RFC 2544 throughput: binary search for the highest rate with loss <= tolerated."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "imix": common.IMIX,
            "duration": common.DURATION,
            "tolerated_loss_pct": common.TOLERATED_LOSS,
            "test_precision": {"description": "the search stops when its interval is this narrow, "
                                              "in % of line rate",
                               "type": "number", "exclusiveMinimum": 0, "default": 0.1},
            "lower_bound": {"description": "lowest rate tried, in % of line rate",
                            "type": "number", "minimum": 0, "maximum": 100, "default": 0.0},
            "upper_bound": common.UPPER_BOUND,
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
            "confirmation": {"description": "a passing rate must pass this many more times",
                             "type": "integer", "minimum": 0, "default": 0},
            "verification_trials": {"description": "after the search the answer must pass this "
                                                   "many more full trials, stepping down by "
                                                   "test_precision until it does",
                                    "type": "integer", "minimum": 0, "default": 0},
            "latency_at": common.LATENCY_AT,
            "search_latency": {"description": "false: the search's trials measure throughput only "
                                              "and latency is measured after it, in one trial at "
                                              "the throughput found (RFC 2544 section 26.2)",
                               "type": "boolean", "default": True},
        },
    }

    def trials_per_frame(self, lower: float | None = None, upper: float | None = None) -> int:
        """Upper bound first, then halvings until the interval is within the precision."""
        lower = self.options["lower_bound"] if lower is None else lower
        upper = self.options["upper_bound"] if upper is None else upper
        width = upper - lower
        precision = self.options["test_precision"]
        return (0 if width <= precision else math.ceil(math.log2(width / precision))) + 1

    def execute(self, measurer: Measurer) -> None:
        sizes = self.frame_sizes
        for position, frame in enumerate(sizes):
            if measurer.should_stop():
                return
            later = self.trials_per_frame() * (len(sizes) - position - 1)
            self._search(measurer, frame, later)

    def _try(self, measurer: Measurer, frame: Frame, at: SearchPoint) -> Measurement:
        """A rate passes when its trial and ``confirmation`` repeats all pass; the
        verdict that decides moves the interval (TrialDone shows where it went)."""
        trial = replace(self.trial_at_pct(frame, at.rate_pct, measurer.ports),
                        latency=self.options["search_latency"])
        judge = loss_judge(self.options["tolerated_loss_pct"])
        repeats = self.options["confirmation"]
        why = ""
        for repeat in range(repeats + 1):
            done = measurer.measure(trial, at, judge, why=why,
                                    after=_narrowed(at, final=repeat == repeats))
            if done.verdict != PASS:
                break
            why = f"confirmation {repeat + 1}/{repeats}"
        return done

    def _search(self, measurer: Measurer, frame: Frame, later_trials: int) -> None:
        o = self.options
        lower, upper = o["lower_bound"], o["upper_bound"]
        rate = upper
        best, best_pct = None, 0.0
        limited_by = LimitedBy.NONE
        trials_before = measurer.trial_count
        completed = False
        while not measurer.should_stop():
            left = self.trials_per_frame(lower, upper) + later_trials
            done = self._try(measurer, frame, SearchPoint(rate, lower, upper, left))
            if done.verdict == PASS:
                lower, best, best_pct = rate, done.result, rate
            else:
                upper = rate
                limited_by = LIMITED_BY[done.verdict]
            if done.verdict == PASS and rate >= o["upper_bound"]:
                limited_by = LimitedBy.UPPER_BOUND
                completed = True
                break
            if upper - lower <= o["test_precision"]:
                completed = True
                break
            rate = (lower + upper) / 2.0
        if not completed:  # an interrupted search has trials but no answer
            return
        extra = {}
        if o["verification_trials"] and best is not None:
            best, best_pct, extra = self._verify(measurer, frame, best, best_pct)
        answer = measurer.answer(frame, best, limited_by)
        if not o["search_latency"] and answer is not None:
            best = replace(answer, latency=latency_at_rate(
                measurer, frame, answer.tx_rate_pps, float(o["duration"]), o.get("flows"),
                self.speed_gbps))
        if o["latency_at"] and best is not None:
            extra["latency_at_ndr_pct"] = latency_sweep(
                measurer, frame, best.tx_rate_pps, o["latency_at"], float(o["duration"]),
                o.get("flows"), self.speed_gbps)
        measurer.result_ready(frame, best, self.speed_gbps, limited_by,
                              measurer.trial_count - trials_before, self.spec.type, extra=extra)

    def _verify(self, measurer: Measurer, frame: Frame, best, rate: float):
        """TST009-style: the answer must pass ``verification_trials`` more full trials;
        each failure steps down by test_precision and verifies again."""
        o = self.options
        judge = loss_judge(o["tolerated_loss_pct"])
        steps = 0
        while rate > o["lower_bound"] and not measurer.should_stop():
            passed = True
            trial = replace(self.trial_at_pct(frame, rate, measurer.ports),
                            latency=o["search_latency"])
            for attempt in range(o["verification_trials"]):
                done = measurer.measure(
                    trial, SearchPoint.single(rate), judge,
                    why=f"verification {attempt + 1}/{o['verification_trials']}")
                if done.verdict != PASS:
                    passed = False
                    break
                best = done.result
            if passed:
                return best, rate, {"verified_rate_pct": rate, "verification_steps": steps}
            steps += 1
            rate = max(o["lower_bound"], rate - o["test_precision"])
        return None, 0.0, {"verified_rate_pct": None, "verification_steps": steps}


def _narrowed(at: SearchPoint, final: bool):
    """Where the interval stands after a verdict at ``at``: a failure lowers the upper
    bound to the rate, a pass raises the lower one only once it is ``final``."""
    def after(verdict: Verdict) -> SearchPoint:
        if verdict != PASS:
            return replace(at, upper_pct=at.rate_pct)
        return replace(at, lower_pct=at.rate_pct) if final else at
    return after
