"""RFC 2544 throughput by binary search over % of line rate (NSB's ProxBinSearchProfile)."""

from __future__ import annotations

import math
from dataclasses import replace

from nsb import chains, units
from nsb.events import LimitedBy, Verdict
from nsb.frames import Frame
from nsb.traffic_profiles import common, latency_trials
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import (
    FAIL,
    GENERATOR_LIMITED,
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
            "no_load_pps": common.NO_LOAD,
            "search_latency": {"description": "false: the search's trials measure throughput only "
                                              "and latency is measured after it, in one trial at "
                                              "the throughput found (RFC 2544 section 26.2), "
                                              "judged as the search's trials are",
                               "type": "boolean", "default": True},
            "max_confirmations": {"description": "times a confirmation at the answer's rate may "
                                                 "lose frames and send the search below it, "
                                                 "or be sent short by the generator and be "
                                                 "tried again; after that the answer carries "
                                                 "a warning",
                                  "type": "integer", "minimum": 0, "default": 3},
        },
    }

    @property
    def judge(self):
        return loss_judge(self.options["tolerated_loss_pct"])

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
        judge = self.judge
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
        """Bisect, then confirm the answer at its rate (with latency, when the search's
        trials went without): a confirmation that loses more than tolerated fails the
        rate, and the search goes on below it, ``max_confirmations`` times at most."""
        o = self.options
        trials_before = measurer.trial_count
        passed: dict[float, object] = {}  # rate (% of line rate) -> the trial that passed
        lower, upper, rate = o["lower_bound"], o["upper_bound"], o["upper_bound"]
        warnings: list[str] = []
        failed_confirmations = 0
        # the rates (% of line) the generator really sent: the slowest that lost frames,
        # the fastest that did not; kept over the searches below failed confirmations
        sent = {PASS: 0.0, FAIL: float("inf"), GENERATOR_LIMITED: 0.0}
        while True:
            found = self._bisect(measurer, frame, lower, upper, rate, later_trials, passed, sent)
            if found is None:  # an interrupted search has trials but no answer
                return
            best, best_pct, limited_by, pinned = found
            if failed_confirmations and limited_by == LimitedBy.NONE:
                limited_by = LimitedBy.DUT  # the confirmation above lost frames
            if best is None and passed:  # below a failed confirmation: the last pass stands
                best_pct = max(passed)
                best = passed[best_pct]
            extra = {}
            if o["verification_trials"] and best is not None:
                best, best_pct, extra = self._verify(measurer, frame, best, best_pct)
            best, reason = measurer.answer(frame, best, limited_by)  # generator: its fastest
            if pinned:
                limited_by = LimitedBy.DUT
            if o["search_latency"] or best is None or measurer.should_stop():
                break
            done = latency_trials.confirm(measurer, best, self.judge, self.speed_gbps,
                                          retries=o["max_confirmations"])
            if done.verdict != FAIL:
                extra["latency_measured_at_pps"] = done.result.tx_rate_pps
                best, unconfirmed = latency_trials.confirmed(best, done)
                if unconfirmed:  # of the latency only: the rate stands as measured
                    extra["latency_warnings"] = list(unconfirmed)
                break
            failed_confirmations += 1
            measurer.overruled(frame, done.result.trial.rate_pps)
            sent[FAIL] = min(sent[FAIL], self._pct(done.result.tx_rate_pps, frame, measurer))
            if failed_confirmations > o["max_confirmations"]:  # the answer is what it did
                warnings.append(latency_trials.lossy_confirmation(
                    done, o["tolerated_loss_pct"]))
                best = done.result
                break
            upper = self._pct(done.result.trial.rate_pps, frame, measurer) * (1 - 1e-9)
            passed = {pct: r for pct, r in passed.items() if pct < upper}
            lower = max(passed, default=o["lower_bound"])
            rate = (lower + upper) / 2.0
        if o["latency_at"] and best is not None:
            warnings += self._latency_at(measurer, frame, best, extra)
        if failed_confirmations:
            extra["failed_confirmations"] = failed_confirmations
        measurer.result_ready(frame, best, self.speed_gbps, limited_by,
                              measurer.trial_count - trials_before, self.spec.type, extra=extra,
                              warnings=tuple(warnings),  # the answer chosen stands
                              reason=reason if limited_by == LimitedBy.GENERATOR else "")

    def _latency_at(self, measurer: Measurer, frame: Frame, best, extra: dict) -> tuple:
        """Latency at fractions of the answer into ``extra``; the sweep's warnings."""
        o = self.options
        swept = latency_trials.sweep(measurer, frame, best.tx_rate_pps, o["latency_at"],
                                     float(o["duration"]), o.get("flows"), self.speed_gbps,
                                     o["no_load_pps"])
        extra["latency_at_ndr_pct"] = swept.points
        return swept.warnings

    def _pct(self, pps: float, frame: Frame, measurer: Measurer) -> float:
        return units.pps_to_pct(pps, frame, self.speed_gbps, measurer.ports)

    def _bisect(self, measurer: Measurer, frame: Frame, lower: float, upper: float,
                rate: float, later_trials: int, passed: dict, sent: dict):
        """Bisection between ``lower`` and ``upper`` from ``rate``: (the fastest
        trial that passed, its rate in %, what limited it, whether the DUT's loss pinned
        a generator-limited search), None when stopped."""
        o = self.options
        best, best_pct = None, 0.0
        limited_by = LimitedBy.NONE
        while not measurer.should_stop():
            left = self.trials_per_frame(lower, upper) + later_trials
            done = self._try(measurer, frame, SearchPoint(rate, lower, upper, left))
            sent_pps = done.result.tx_rate_pps if done.verdict == FAIL else \
                chains.even_tx_rate_pps(done.result)  # what its chains got alike
            pct = units.pps_to_pct(sent_pps, frame, self.speed_gbps, measurer.ports)
            if done.verdict in sent:
                pick = min if done.verdict == FAIL else max
                sent[done.verdict] = pick(sent[done.verdict], pct)
            if done.verdict == PASS:
                lower, best, best_pct = rate, done.result, rate
                passed[rate] = done.result
            else:
                upper = rate
                limited_by = LIMITED_BY[done.verdict]
            if done.verdict == PASS and rate >= o["upper_bound"]:
                return best, best_pct, LimitedBy.UPPER_BOUND, False
            if upper - lower <= o["test_precision"]:
                return best, best_pct, limited_by, self._pinned(limited_by, sent)
            rate = (lower + upper) / 2.0
        return None

    def _pinned(self, limited_by: LimitedBy, sent: dict) -> bool:
        """The generator fell short of a rate asked, yet the DUT lost frames at a rate
        the generator did send, within test_precision of the fastest loss-free one: the
        DUT's limit is pinned down all the same, between the two (a DUT that stalls its
        link, memif or virtio, makes the generator lag just below where it drops)."""
        clean = max(sent[PASS], sent[GENERATOR_LIMITED])
        return limited_by == LimitedBy.GENERATOR and \
            sent[FAIL] - clean <= self.options["test_precision"]

    def _verify(self, measurer: Measurer, frame: Frame, best, rate: float):
        """TST009-style: the answer must pass ``verification_trials`` more full trials;
        each failure steps down by test_precision and verifies again."""
        o = self.options
        judge = self.judge
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
