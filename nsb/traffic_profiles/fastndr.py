"""NDR with short trials to find it and one full-length trial to prove it.

1. Two short trials at the upper bound (1x and 2x the short duration) measure the
   forwarding rate under overload. A DUT with a buffer forwards more in the
   shorter one; the difference separates capacity from buffer:
   capacity = 2 * rx(2d) - rx(d).
2. Short trials bracket the answer around that estimate (steps doubling from the
   target width), then bisect (geometric) until the interval is within the width.
3. The answer is proven by a full-length trial with no more than the tolerated
   loss. If that trial loses frames, its own forwarding rate gives the next,
   lower candidate (one retry at the same rate first when the loss was tiny, as
   a rare stall would cause). The reported rate is always one that passed a
   full-length trial; with ``prove: false`` (short trials only, as CSIT does for
   quick checks) the results say ``backed_by_full_trial: false``.
"""

from __future__ import annotations

import math

from nsb import units
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import (
    GENERATOR_LIMITED,
    PASS,
    Session,
    TrafficProfile,
    judge,
    latency_sweep,
)
from nsb.trial import Trial, TrialResult


class FastNdrProfile(TrafficProfile):
    """Fast NDR: short trials find the rate, one full-length zero-loss trial proves it."""

    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "packet_sizes": common.PACKET_SIZES,
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "tolerated_loss": common.TOLERATED_LOSS,
            "lower_bound": common.positive_lower_bound(1.0),
            "upper_bound": common.UPPER_BOUND,
            "final_trial_duration": {"type": "number", "exclusiveMinimum": 0, "default": 60.0},
            "short_trial_duration": {"type": "number", "exclusiveMinimum": 0, "default": 1.0},
            "relative_width": {"type": "number", "exclusiveMinimum": 0, "maximum": 0.5,
                               "default": 0.005},
            "max_final_trials": {"type": "integer", "minimum": 1, "default": 4},
            "prove": {"type": "boolean", "default": True},
            "flows": common.FLOWS,
            "latency_at": common.LATENCY_AT,
        },
    }

    def execute(self, tg, session: Session) -> None:
        for frame in self.frame_sizes:
            if session.should_stop():
                return
            _FrameSearch(self, tg, session, frame).run()


class _FrameSearch:
    def __init__(self, profile: FastNdrProfile, tg, session: Session, frame: int):
        self.o = profile.options
        self.profile = profile
        self.tg = tg
        self.session = session
        self.frame = frame
        ports = tg.tx_port_count
        speed = profile.speed_gbps
        self.min_pps = units.pct_to_pps(self.o["lower_bound"], frame, speed, ports)
        self.max_pps = units.pct_to_pps(self.o["upper_bound"], frame, speed, ports)
        self.width = self.o["relative_width"]
        self.trials_before = session.trial_count
        self.lo, self.hi = 0.0, math.inf
        self.hi_verdict = ""
        self.passes: list[TrialResult] = []

    def trial(self, rate: float, duration: float, why: str) -> tuple[str, TrialResult]:
        if self.session.should_stop():
            raise _Stop()
        speed, ports = self.profile.speed_gbps, self.tg.tx_port_count
        trial = Trial(self.frame, rate, duration, flows=self.o.get("flows"))
        pct = units.pps_to_pct(rate, self.frame, speed, ports)
        lo_pct = units.pps_to_pct(self.lo, self.frame, speed, ports)
        hi_pct = units.pps_to_pct(min(self.hi, self.max_pps), self.frame, speed, ports)
        index, result = self.session.run_trial(self.tg, trial, pct, lo_pct, hi_pct, 0)
        verdict, reason = judge(result, self.o["tolerated_loss"])
        self.session.trial_done(index, result, verdict, pct, lo_pct, hi_pct, f"{why}: {reason}")
        return verdict, result

    def short(self, rate: float, why: str) -> bool:
        verdict, result = self.trial(rate, self.o["short_trial_duration"], why)
        if verdict == PASS:
            self.passes.append(result)
            self.lo = max(self.lo, rate)
        else:
            if rate < self.hi:
                self.hi, self.hi_verdict = rate, verdict
        return verdict == PASS

    def run(self) -> None:
        try:
            best, limited_by, extra = self.search()
        except _Stop:
            return
        if self.o["latency_at"] and best is not None:
            extra["latency_at_ndr_pct"] = latency_sweep(
                self.tg, self.session, self.frame, best.tx_rate_pps, self.o["latency_at"],
                self.o["final_trial_duration"], self.o.get("flows"), self.profile.speed_gbps)
        self.session.result_ready(self.frame, best, self.profile.speed_gbps,
                                  self.tg.tx_port_count, limited_by,
                                  self.session.trial_count - self.trials_before,
                                  self.profile.spec.type, extra=extra)

    def search(self):
        d = self.o["short_trial_duration"]
        verdict, first = self.trial(self.max_pps, d, "max load")
        if verdict == PASS:
            self.lo = self.max_pps
            verdict, full = self.trial(self.max_pps, self.o["final_trial_duration"],
                                       "final, at the upper bound")
            if verdict == PASS:
                return full, "upper_bound", {"estimate_pps": None}
            self.hi, self.hi_verdict = self.max_pps, verdict
            estimate = full.rx_rate_pps
        else:
            self.hi, self.hi_verdict = self.max_pps, verdict
            _, second = self.trial(self.max_pps, 2 * d, "max load, double length")
            estimate = 2 * second.rx_rate_pps - first.rx_rate_pps
            buffered = first.rx_rate_pps > second.rx_rate_pps * (1 + self.width / 4)
        if not self.min_pps <= estimate < self.max_pps:
            estimate = math.sqrt(self.min_pps * self.max_pps)
            buffered = False
        # start just below the estimate: exactly at the capacity, rounding can lose a frame
        self.bracket(estimate * (1 - self.width / 4))
        self.bisect()
        if self.lo <= 0:
            return None, self._limit(), {"estimate_pps": estimate}
        candidate = self.lo
        if buffered:  # short trials see the buffer as capacity: trust the estimate
            candidate = min(self.lo, estimate * (1 - self.width / 2))
        if self.o["prove"]:
            best = self.prove(candidate)
        else:  # CSIT-style short-trial answer: said plainly in the results
            verdict, best = self.trial(candidate, self.o["short_trial_duration"],
                                       "answer (short trial only, not proven)")
            if verdict != PASS:
                below = [r for r in self.passes if r.trial.rate_pps <= candidate]
                best = max(below, key=lambda r: r.trial.rate_pps, default=None)
        extra = {"estimate_pps": estimate, "buffer_detected": buffered,
                 "final_trial_duration_s": self.o["final_trial_duration"],
                 "backed_by_full_trial": best is not None and self.o["prove"]}
        return best, self._limit(), extra

    def bracket(self, start: float) -> None:
        """Find a passing and a failing short trial around ``start``."""
        rate, step = start, self.width
        if self.short(rate, "bracket"):
            while self.hi == math.inf or self.hi > self.max_pps:
                rate = min(self.max_pps, rate * (1 + step))
                if rate >= self.hi or not self.short(rate, "bracket up"):
                    break
                step *= 2
        else:
            while self.lo == 0.0:
                if rate <= self.min_pps:
                    return
                rate = max(self.min_pps, rate * (1 - step))
                if self.short(rate, "bracket down"):
                    break
                step *= 2

    def bisect(self) -> None:
        while self.lo > 0 and self.hi / self.lo - 1 > self.width:
            self.short(math.sqrt(self.lo * self.hi), "bisect")

    def prove(self, candidate: float) -> TrialResult | None:
        retried = False
        for _ in range(self.o["max_final_trials"]):
            verdict, result = self.trial(candidate, self.o["final_trial_duration"], "final")
            if verdict == PASS:
                return result
            if verdict == GENERATOR_LIMITED:  # it cannot keep this rate up: go to what it sent
                self.hi_verdict = verdict
                candidate = min(candidate * (1 - self.width),
                                result.tx_rate_pps * (1 - self.width / 2))
                continue
            tiny = result.lost_packets <= max(1, 1e-4 * result.tx_packets)
            if tiny and not retried:
                retried = True  # a rare stall: the same rate once more
                continue
            candidate = min(candidate * (1 - self.width), result.rx_rate_pps
                            * (1 - self.width / 2))
            if candidate < self.min_pps:
                return None
        return None

    def _limit(self) -> str:
        return "generator" if self.hi_verdict == GENERATOR_LIMITED else "dut"


class _Stop(Exception):
    """The runner asked to stop between trials."""
