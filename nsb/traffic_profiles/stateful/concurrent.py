"""Concurrent sessions: the most sessions open at once that the DUT keeps, every one.

A trial for S sessions opens them at ``open_cps`` (S / open_cps seconds) and holds each
until all are open and ``hold_s`` more, so that all S are open together; it passes when
none of them was lost (or no more than tolerated) and the DUT's own count (its
witness, sampled while they were held) reached S: a DUT that drops a session it had
let through, or never tracked it, fails the trial even if the generator's connections
came up. The search is over S, from ``upper_sessions`` down."""

from __future__ import annotations

from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import Measurer, SearchPoint
from nsb.traffic_profiles.stateful import answer, common, search
from nsb.traffic_profiles.stateful.judge import SessionJudge
from nsb.trial import Trial


class ConcurrentSessionsProfile(TrafficProfile):
    """Concurrent sessions: the most sessions held at once that none fails and the DUT keeps."""

    BASE_OPTIONS = ("interface_speed_gbps",)
    NEEDS_SESSIONS = True
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            **{k: v for k, v in common.OPTIONS.items() if k not in ("program", "duration")},
            "open_cps": {"description": "the rate sessions are opened at (kept below the "
                                        "DUT's connection rate: this test is of how many it "
                                        "holds, not how fast it opens them)",
                         "type": "number", "exclusiveMinimum": 0, "default": 2000},
            "hold_s": {"description": "seconds every session stays open once all are",
                       "type": "number", "minimum": 0, "default": 1.0},
            "lower_sessions": {"description": "the fewest sessions tried",
                               "type": "integer", "minimum": 1, "default": 100},
            "upper_sessions": {"description": "the most sessions tried (first)",
                               "type": "integer", "minimum": 2, "default": 20000},
            "precision_pct": common.PRECISION,
            "dut_keeps_pct": common.OPTIONS_DUT_KEEPS,
        },
    }

    def __init__(self, spec, options, run):
        super().__init__(spec, options, run)
        if options["lower_sessions"] >= options["upper_sessions"]:
            raise spec.options_where.error(
                f"lower_sessions {options['lower_sessions']} must be below upper_sessions "
                f"{options['upper_sessions']}", "lower_sessions")
        self.options = {**options, "program": "long_lived", "tunables": options["tunables"]}

    @property
    def judge(self) -> SessionJudge:
        o = self.options
        return SessionJudge(o["tolerated_loss_pct"], o["strict_retransmissions"],
                            dut_keeps_pct=o["dut_keeps_pct"])

    def measure(self, measurer: Measurer, sessions: float, lower: float, upper: float,
                _seconds: float = 0.0):
        o = self.options
        count = max(1, round(sessions))
        opening_s = count / o["open_cps"]
        load = common.session_load(self, o["open_cps"], hold_s=opening_s + o["hold_s"])
        trial = Trial(frame_size=answer.FRAME, rate_pps=0.0, duration_s=opening_s,
                      latency=False, sessions=load)
        top = o["upper_sessions"]
        return measurer.measure(trial, SearchPoint(100.0 * count / top, 100.0 * lower / top,
                                                   100.0 * upper / top), self.judge,
                                why=f"{count:,} sessions held")

    def execute(self, measurer: Measurer) -> None:
        o = self.options
        before = measurer.trial_count
        found = search.bisect(lambda n, lo, hi, _s: self.measure(measurer, n, lo, hi),
                              o["lower_sessions"], o["upper_sessions"],
                              o["precision_pct"] / 100.0, 0.0, measurer.should_stop)
        if found is None:
            return
        answer.report(measurer, self, "concurrent_sessions", found.best, found.limited_by,
                      measurer.trial_count - before)
