"""NDR with short trials to find it and one full-length trial to prove it.

1. Two short trials at the upper bound (1x and 2x the short duration) measure the
   forwarding rate under overload. A DUT with a buffer forwards more in the
   shorter one; the difference separates capacity from buffer:
   capacity = 2 * rx(2d) - rx(d).
2. Short trials bracket the answer around that estimate (steps growing from the
   target width), then bisect (geometric) until the interval is within the width.
3. The short trial at the failing rate is repeated, EDGE_SAMPLES in all. Under
   overload a DUT forwards its capacity (less if it livelocks), so these are
   samples of it. A noiseless DUT forwards the same every time; on a noisy one a
   lucky short pass, and then a lucky full-length pass, can sit above the
   capacity. So the answer is no higher than the second lowest sample: above the
   median capacity only with probability (n + 1) / 2**n (13/4096), whatever the
   noise, and one loss spike does not move it. Their spread (the noise) decides
   whether the max-load pair shows a buffer or only noise, and whether a failed
   final trial is retried. If most repeats pass, the failure that bounded the
   search was a transient (a loss spike): the search goes on above it.
4. The answer is proven by full-length trials with no more than the tolerated
   loss: ``min_loss_free_s`` seconds of them in a row at the reported rate (one
   trial of ``final_trial_duration`` by default, as RFC 2544 asks). A trial
   that loses frames sends the proof lower: to what that trial forwarded, and
   at least the width down, so a falling or drifting capacity is followed
   and no rate is tried again after it lost frames (unless ``loss_retries``
   allows it: then a pass after a loss counts, and the evidence says so). The
   proof goes on while ``max_final_trials`` allows and the rate is above the
   lower bound; if nothing passed, the result says so with the rates tried.
   The reported rate is always one that passed; with ``prove: false`` (short
   trials only, as CSIT does for quick checks) the results say
   ``backed_by_full_trial: false``.

A buffer is trusted only when a second max-load pair shows it too: one stall in
a short trial looks like a buffer, and must not override the edge samples.
"""

from __future__ import annotations

import math

from nsb import units
from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles import common, latency_trials
from nsb.traffic_profiles.base import TrafficProfile, step_below
from nsb.traffic_profiles.measurer import (
    FAIL,
    GENERATOR_LIMITED,
    PASS,
    Measurer,
    SearchPoint,
    SearchStopped,
    loss_judge,
)
from nsb.trial import Trial, TrialResult

EDGE_SAMPLES = 12  # short trials at the failing rate (one of them from the bisection)
EDGE_ROUNDS = 3  # times the search may go on above a bound that was a transient
TYPICAL_SHORT_TRIALS = 20  # what a search usually spends before the proof
BUFFER_Z = 3.0  # a buffer counts only if it is this many times larger than the noise


class FastNdrProfile(TrafficProfile):
    """Fast NDR: short trials find the rate, one full-length zero-loss trial proves it."""

    # trials of lengths of its own: no "duration" option
    BASE_OPTIONS = ("packet_sizes", "imix", "interface_speed_gbps", "flows")

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "imix": common.IMIX,
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "tolerated_loss_pct": common.TOLERATED_LOSS,
            "lower_bound": common.positive_lower_bound(1.0),
            "upper_bound": common.UPPER_BOUND,
            "final_trial_duration": {"description": "seconds of a full-length trial",
                                     "type": "number", "exclusiveMinimum": 0, "default": 60.0},
            "short_trial_duration": {"description": "seconds of a short trial",
                                     "type": "number", "exclusiveMinimum": 0, "default": 1.0},
            "relative_width": {"description": "the search stops when its interval is this narrow, "
                                              "relative to its upper end",
                               "type": "number", "exclusiveMinimum": 0, "maximum": 0.5,
                               "default": 0.005},
            "max_final_trials": {"description": "full-length trials per frame size at most",
                                 "type": "integer", "minimum": 1, "default": 60},
            "min_loss_free_s": {"description": "the answer must pass this many seconds of "
                                               "full-length trials in a row (default: one final "
                                               "trial)",
                                "type": "number", "exclusiveMinimum": 0},
            "loss_retries": {"description": "times a rate that lost frames is tried again",
                             "type": "integer", "minimum": 0, "default": 0},
            "prove": {"description": "false: answer from short trials only (backed_by_full_trial: "
                                     "false)",
                      "type": "boolean", "default": True},
            "flows": common.FLOWS,
            "latency_at": common.LATENCY_AT,
            "no_load_pps": common.NO_LOAD,
        },
    }

    def execute(self, measurer: Measurer) -> None:
        frames = self.frame_sizes
        for index, frame in enumerate(frames):
            if measurer.should_stop():
                return
            _FrameSearch(self, measurer, frame, len(frames) - index - 1).run()

    def typical_search_s(self) -> float:
        """Traffic seconds a search usually takes: the live line's time left."""
        o = self.options
        return TYPICAL_SHORT_TRIALS * o["short_trial_duration"] + \
            self.final_trials_needed() * o["final_trial_duration"]

    def final_trials_needed(self) -> int:
        o = self.options
        if not o["prove"]:
            return 1
        wanted = o.get("min_loss_free_s") or o["final_trial_duration"]
        return max(1, math.ceil(wanted / o["final_trial_duration"] - 1e-9))


class _FrameSearch:
    def __init__(self, profile: FastNdrProfile, measurer: Measurer, frame: Frame,
                 frames_after: int):
        self.o = profile.options
        self.frames_after = frames_after
        self.short_trials = 0
        self.final_passes_left = profile.final_trials_needed()
        self.proving = False
        self.profile = profile
        self.measurer = measurer
        self.judge = loss_judge(self.o["tolerated_loss_pct"])
        self.frame = frame
        ports = measurer.ports
        speed = profile.speed_gbps
        self.min_pps = units.pct_to_pps(self.o["lower_bound"], frame, speed, ports)
        self.max_pps = units.pct_to_pps(self.o["upper_bound"], frame, speed, ports)
        self.width = self.o["relative_width"]
        self.trials_before = measurer.trial_count
        self.lo, self.hi = 0.0, math.inf
        self.hi_verdict = ""
        self.hi_result: TrialResult | None = None

    def trial(self, rate: float, duration: float, why: str) -> tuple[str, TrialResult]:
        self.measurer.check_stop()
        speed, ports = self.profile.speed_gbps, self.measurer.ports
        trial = Trial(self.frame, rate, duration, flows=self.o.get("flows"))
        pct = units.pps_to_pct(rate, self.frame, speed, ports)
        lo_pct = units.pps_to_pct(self.lo, self.frame, speed, ports)
        hi_pct = units.pps_to_pct(min(self.hi, self.max_pps), self.frame, speed, ports)
        if not self.proving:
            self.short_trials += 1
        done = self.measurer.measure(
            trial, SearchPoint(pct, lo_pct, hi_pct, seconds_left=self.seconds_left(duration)),
            self.judge, why=why)
        return done.verdict, done.result

    def seconds_left(self, duration: float) -> float:
        """The usual traffic seconds still to come, this trial included (an estimate)."""
        o = self.o
        final = o["final_trial_duration"] if o["prove"] else o["short_trial_duration"]
        if self.proving:
            now = max(self.final_passes_left, 1) * final
        else:
            shorts = max(1, TYPICAL_SHORT_TRIALS - self.short_trials + 1)
            now = shorts * o["short_trial_duration"] + self.final_passes_left * final
        return max(now, duration) + self.frames_after * self.profile.typical_search_s()

    def short(self, rate: float, why: str) -> bool:
        verdict, result = self.trial(rate, self.o["short_trial_duration"], why)
        if verdict == PASS:
            self.lo = max(self.lo, rate)
        elif rate < self.hi:
            self.hi, self.hi_verdict, self.hi_result = rate, verdict, result
        return verdict == PASS

    def run(self) -> None:
        try:
            best, limited_by, extra = self.search()
        except SearchStopped:
            return
        warnings = ()
        if self.o["latency_at"] and best is not None:
            swept = latency_trials.sweep(
                self.measurer, self.frame, best.tx_rate_pps, self.o["latency_at"],
                self.o["final_trial_duration"], self.o.get("flows"), self.profile.speed_gbps,
                self.o["no_load_pps"])
            extra["latency_at_ndr_pct"], warnings = swept.points, swept.warnings
        self.measurer.result_ready(self.frame, best, self.profile.speed_gbps, limited_by,
                                   self.measurer.trial_count - self.trials_before,
                                   self.profile.spec.type, extra=extra, warnings=warnings)

    def search(self):
        d = self.o["short_trial_duration"]
        verdict, first = self.trial(self.max_pps, d, "max load")
        second = None
        if verdict == PASS:
            self.lo = self.max_pps
            verdict, full = self.trial(self.max_pps, self.o["final_trial_duration"],
                                       "final, at the upper bound")
            if verdict == PASS:
                return full, LimitedBy.UPPER_BOUND, {"estimate_pps": None}
            self.hi, self.hi_verdict = self.max_pps, verdict
            estimate = full.rx_rate_pps
        else:
            self.hi, self.hi_verdict = self.max_pps, verdict
            _, second = self.trial(self.max_pps, 2 * d, "max load, double length")
            estimate = 2 * second.rx_rate_pps - first.rx_rate_pps
        if not self.min_pps <= estimate < self.max_pps:
            estimate, second = math.sqrt(self.min_pps * self.max_pps), None
        # start just below the estimate: exactly at the capacity, rounding can lose a frame
        self.bracket(estimate * (1 - self.width / 4))
        self.bisect()
        edge, noise = self.sample_edge()
        if self.lo <= 0:
            return None, self._limit(), {"estimate_pps": estimate}
        candidate = min(self.lo, edge)
        buffered = False
        # a max-load pair measures a buffer only if it forwarded what the edge did (a
        # livelocked DUT forwards far less under overload, and its noise is amplified)
        reference = edge if edge < math.inf else self.lo
        if second is not None and first.rx_rate_pps >= reference * (
                1 - self.width - BUFFER_Z * noise):
            buffered, estimate = self.buffer(first, second, noise)
        if buffered:  # short trials see the buffer as capacity: trust the estimate
            candidate = min(candidate, estimate * (1 - self.width / 2))
        best = self.prove(candidate)
        extra = {"estimate_pps": estimate, "buffer_detected": buffered,
                 "min_loss_free_s": self.profile.final_trials_needed() * (
                     self.o["final_trial_duration"] if self.o["prove"]
                     else self.o["short_trial_duration"]),
                 "edge_pps": edge if edge < math.inf else None, "noise": noise,
                 "final_trial_duration_s": self.o["final_trial_duration"],
                 "backed_by_full_trial": best is not None and self.o["prove"]}
        return best, self._limit(), extra

    def buffer(self, first: TrialResult, second: TrialResult, noise: float):
        """Is there a buffer, and the capacity without it. The two max-load trials
        differ by noise too: a buffer counts only if it shows above it, and only if
        a second pair shows it as well (a stall in one short trial looks like a
        buffer). The capacity is the higher of the pairs' estimates: a stall can
        only lower one."""
        def signature(short, long):
            return short.rx_rate_pps / long.rx_rate_pps - 1 > \
                self.width / 4 + BUFFER_Z * noise

        def capacity(short, long):
            return 2 * long.rx_rate_pps - short.rx_rate_pps

        if not signature(first, second):
            return False, capacity(first, second)
        d = first.trial.duration_s
        _, first_again = self.trial(self.max_pps, d, "max load, again")
        _, second_again = self.trial(self.max_pps, 2 * d, "max load, double length, again")
        if not signature(first_again, second_again):
            return False, capacity(first, second)
        return True, max(capacity(first, second), capacity(first_again, second_again))

    def bracket(self, start: float) -> None:
        """Find a passing and a failing short trial around ``start``."""
        rate, step = start, self.width
        if self.short(rate, "bracket"):
            self.gallop_up(rate)
        else:
            while self.lo == 0.0:
                if rate <= self.min_pps:
                    return
                rate = max(self.min_pps, rate * (1 - step))
                if self.short(rate, "bracket down"):
                    break
                step *= 2

    def gallop_up(self, rate: float) -> None:
        """Steps growing from the width, never past the middle of the bracket."""
        step = self.width
        while self.hi / self.lo - 1 > self.width:
            rate = min(math.sqrt(self.lo * self.hi), rate * (1 + step))
            if not self.short(rate, "bracket up"):
                return
            step *= 4

    def bisect(self) -> None:
        while self.lo > 0 and self.hi / self.lo - 1 > self.width:
            self.short(math.sqrt(self.lo * self.hi), "bisect")

    def sample_edge(self) -> tuple[float, float]:
        """The highest rate the edge samples support (their second lowest) and the
        noise (their median relative to it); (inf, 0) if there is no failing edge."""
        for _ in range(EDGE_ROUNDS):
            if self.lo <= 0 or self.hi_verdict != FAIL or self.hi_result is None:
                return math.inf, 0.0
            rate, results = self.hi, [(FAIL, self.hi_result)]
            while len(results) < EDGE_SAMPLES:
                results.append(self.trial(rate, self.o["short_trial_duration"], "edge sample"))
            if 2 * sum(verdict == FAIL for verdict, _ in results) > len(results):
                # the highest rate that would pass at each forwarding rate, less a frame
                # per trial: a forwarding rate is known to a frame, rounding can lose one
                frame = 1 / self.o["short_trial_duration"]
                tolerated = 1 - self.o["tolerated_loss_pct"] / 100
                samples = sorted(min(rate, r.rx_rate_pps / tolerated) - frame
                                 for _, r in results)
                return samples[1], samples[len(samples) // 2] / samples[1] - 1
            # most passed: the failure that set the bound was a transient, search on above
            self.lo, self.hi, self.hi_result = rate, self.max_pps, None
            self.gallop_up(rate)
            self.bisect()
        return math.inf, 0.0

    def prove(self, candidate: float) -> TrialResult | None:
        """Full-length trials from ``candidate`` down (short ones if ``prove: false``)
        until one rate has passed ``final_trials_needed`` in a row. A rate that lost
        frames is left for a lower one (``loss_retries`` allows that many reruns)."""
        o = self.o
        duration, why = o["final_trial_duration"], "final"
        if not o["prove"]:  # CSIT-style short-trial answer: said plainly in the results
            duration, why = o["short_trial_duration"], "answer (short trial only, not proven)"
        self.proving = True
        needed = self.profile.final_trials_needed()
        retries, passes, floor_tried = o["loss_retries"], 0, False
        for _ in range(o["max_final_trials"]):
            self.final_passes_left = needed - passes
            verdict, result = self.trial(candidate, duration,
                                         why if needed == 1 else f"{why} {passes + 1}/{needed}")
            if verdict == PASS:
                passes += 1
                if passes >= needed:
                    return result
                continue
            passes = 0
            if verdict == GENERATOR_LIMITED:  # it cannot keep this rate up: go to what it sent
                self.hi_verdict = verdict
                candidate = step_below(candidate, result.tx_rate_pps, self.width)
            elif retries > 0:
                retries -= 1  # the user tolerates a rerun after a loss at the same rate
                continue
            else:  # at least the width down: a rare loss near capacity is left behind
                candidate = step_below(candidate, result.rx_rate_pps, self.width)
            if candidate < self.min_pps:
                if floor_tried:
                    return None
                candidate, floor_tried = self.min_pps, True  # the lower bound gets its chance
        return None

    def _limit(self) -> str:
        return LimitedBy.GENERATOR if self.hi_verdict == GENERATOR_LIMITED else LimitedBy.DUT
