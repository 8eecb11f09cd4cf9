"""RFC 2544 throughput by binary search over % of line rate (NSB's ProxBinSearchProfile)."""

from __future__ import annotations

import math

from nsb.events import LimitedBy
from nsb.frames import Frame
from nsb.traffic_profiles import common
from nsb.traffic_profiles.base import (
    LIMITED_BY,
    PASS,
    Session,
    TrafficProfile,
    judge,
    latency_sweep,
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
            "tolerated_loss": common.TOLERATED_LOSS,
            "test_precision": {"type": "number", "exclusiveMinimum": 0, "default": 0.1},
            "lower_bound": {"type": "number", "minimum": 0, "maximum": 100, "default": 0.0},
            "upper_bound": common.UPPER_BOUND,
            "interface_speed_gbps": common.INTERFACE_SPEED,
            "flows": common.FLOWS,
            "confirmation": {"type": "integer", "minimum": 0, "default": 0},
            "verification_trials": {"type": "integer", "minimum": 0, "default": 0},
            "latency_at": common.LATENCY_AT,
        },
    }

    def trials_per_frame(self, lower: float | None = None, upper: float | None = None) -> int:
        """Upper bound first, then halvings until the interval is within the precision."""
        lower = self.options["lower_bound"] if lower is None else lower
        upper = self.options["upper_bound"] if upper is None else upper
        width = upper - lower
        precision = self.options["test_precision"]
        return (0 if width <= precision else math.ceil(math.log2(width / precision))) + 1

    def execute(self, tg, session: Session) -> None:
        sizes = self.frame_sizes
        for position, frame in enumerate(sizes):
            if session.should_stop():
                return
            later = self.trials_per_frame() * (len(sizes) - position - 1)
            self._search(tg, session, frame, later)

    def _run(self, tg, session: Session, frame: Frame, rate: float, lower: float, upper: float,
             left: int, why: str = ""):
        """One trial at ``rate`` % of line rate, judged and recorded."""
        trial = self.trial_at_pct(frame, rate, tg.tx_port_count)
        index, result = session.run_trial(tg, trial, rate, lower, upper, left)
        verdict, reason = judge(result, self.options["tolerated_loss"])
        return index, result, verdict, (f"{why}: {reason}" if why else reason)

    def _try(self, tg, session, frame, rate, lower, upper, left):
        """A rate passes when its trial and ``confirmation`` repeats all pass."""
        index, result, verdict, reason = self._run(tg, session, frame, rate, lower, upper, left)
        repeats = self.options["confirmation"]
        for repeat in range(repeats):
            if verdict != PASS:
                break
            session.trial_done(index, result, verdict, rate, lower, upper, reason)
            index, result, verdict, reason = self._run(
                tg, session, frame, rate, lower, upper, left,
                why=f"confirmation {repeat + 1}/{repeats}")
        return index, result, verdict, reason

    def _search(self, tg, session: Session, frame: Frame, later_trials: int) -> None:
        o = self.options
        lower, upper = o["lower_bound"], o["upper_bound"]
        rate = upper
        best, best_pct = None, 0.0
        limited_by = LimitedBy.NONE
        trials_before = session.trial_count
        completed = False
        while not session.should_stop():
            left = self.trials_per_frame(lower, upper) + later_trials
            index, result, verdict, reason = self._try(tg, session, frame, rate, lower, upper,
                                                       left)
            if verdict == PASS:
                lower, best, best_pct = rate, result, rate
            else:
                upper = rate
                limited_by = LIMITED_BY[verdict]
            session.trial_done(index, result, verdict, rate, lower, upper, reason)
            if verdict == PASS and rate >= o["upper_bound"]:
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
            best, best_pct, extra = self._verify(tg, session, frame, best, best_pct)
        if o["latency_at"] and best is not None:
            extra["latency_at_ndr_pct"] = latency_sweep(
                tg, session, frame, best.tx_rate_pps, o["latency_at"], float(o["duration"]),
                o.get("flows"), self.speed_gbps)
        session.result_ready(frame, best, self.speed_gbps, tg.tx_port_count, limited_by,
                             session.trial_count - trials_before, self.spec.type, extra=extra)

    def _verify(self, tg, session, frame, best, rate):
        """TST009-style: the answer must pass ``verification_trials`` more full trials;
        each failure steps down by test_precision and verifies again."""
        o = self.options
        steps = 0
        while rate > o["lower_bound"] and not session.should_stop():
            passed = True
            for attempt in range(o["verification_trials"]):
                index, result, verdict, reason = self._run(
                    tg, session, frame, rate, rate, rate, 0,
                    why=f"verification {attempt + 1}/{o['verification_trials']}")
                session.trial_done(index, result, verdict, rate, rate, rate, reason)
                if verdict != PASS:
                    passed = False
                    break
                best = result
            if passed:
                return best, rate, {"verified_rate_pct": rate, "verification_steps": steps}
            steps += 1
            rate = max(o["lower_bound"], rate - o["test_precision"])
        return None, 0.0, {"verified_rate_pct": None, "verification_steps": steps}
