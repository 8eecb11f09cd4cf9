"""A soak at a fixed connection rate: consecutive trials of ``interval_s`` at ``cps`` for
``duration`` seconds in all, the DUT reset before the first only, so each interval
meets what the earlier ones left (conntrack's closed entries, a NAT's bindings ageing
out) as a long run does. Each interval is a trial of its own (TRex reloads its profile
between them, about half a second without new connections), judged as a CPS trial;
the soak passes when every interval did, and its answer says which failed first."""

from __future__ import annotations

import math

from nsb.events import LimitedBy, Verdict
from nsb.traffic_profiles.base import TrafficProfile
from nsb.traffic_profiles.measurer import LIMITED_BY, Measurer, SearchPoint
from nsb.traffic_profiles.stateful import answer, common
from nsb.traffic_profiles.stateful.judge import SessionJudge
from nsb.trial import Trial


class CpsSoakProfile(TrafficProfile):
    """A soak at a fixed connection rate: intervals in a row, the DUT keeping its state."""

    BASE_OPTIONS = ("interface_speed_gbps",)
    NEEDS_SESSIONS = True
    OPTIONS_SCHEMA = {
        "type": "object",
        "additionalProperties": False,
        "required": ["cps"],
        "properties": {
            **{k: v for k, v in common.OPTIONS.items() if k != "duration"},
            "cps": {"description": "the connection rate of the whole soak",
                    "type": "number", "exclusiveMinimum": 0},
            "duration": {"description": "seconds of the soak in all",
                         "type": "number", "exclusiveMinimum": 0, "default": 60},
            "interval_s": {"description": "seconds per interval (a trial each)",
                           "type": "number", "minimum": 0.5, "default": 10},
        },
    }

    @property
    def judge(self) -> SessionJudge:
        return SessionJudge(self.options["tolerated_loss_pct"],
                            self.options["strict_retransmissions"])

    def execute(self, measurer: Measurer) -> None:
        o = self.options
        count = max(1, math.ceil(o["duration"] / o["interval_s"] - 1e-9))
        done = []
        for index in range(count):
            if measurer.should_stop():
                break
            load = common.session_load(self, o["cps"], fresh=index == 0)
            trial = Trial(frame_size=answer.FRAME, rate_pps=0.0, duration_s=o["interval_s"],
                          latency=False, sessions=load)
            left = SearchPoint.single(100.0, count - index - 1)
            done.append(measurer.measure(trial, left, self.judge,
                                         why=f"interval {index + 1} of {count}"))
        if not done:
            return
        failed = next((d for d in done if d.verdict != Verdict.PASS), None)
        best = done[-1] if failed is None else None
        limited_by = LimitedBy.NONE if failed is None else LIMITED_BY[failed.verdict]
        reason = "" if failed is None else (
            f"interval {done.index(failed) + 1} of {len(done)} {failed.verdict.value}: "
            f"{failed.reason}")
        worst = max(d.result.sessions.loss_pct for d in done)
        answer.report(measurer, self, "cps", best, limited_by, len(done),
                      extra={"soak": {"intervals": len(done), "cps": o["cps"],
                                      "worst_loss_pct": worst,
                                      "failed_interval": None if failed is None
                                      else done.index(failed) + 1}},
                      reason=reason)
